"""The documentation says what the code does: the rules page is generated from the rules,
a rule's explanation is the one `migrate rules ID` prints, links lead somewhere, and the
README's first conversion is real output."""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from migrate.docs import PAGE_COMMAND, anchor, explain, rules_page
from migrate.rules import load_rules
from tests.cli_helpers import ROOT, run_migrate

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]


def _generator():
    """scripts/rules_page.py, imported as the module it is."""
    spec = importlib.util.spec_from_file_location("rules_page", ROOT / "scripts" / "rules_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tokens(path: Path):
    """The page's inline tokens, flattened: links and images in code blocks are not links."""
    for block in MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8")):
        yield block
        yield from block.children or ()


def _targets(path: Path) -> list[str]:
    found = []
    for token in _tokens(path):
        if token.type == "link_open":
            found.append(token.attrs["href"])
        elif token.type == "image":
            found.append(token.attrs["src"])
    return found


def _github_slug(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@functools.lru_cache(maxsize=None)
def _anchors(path: Path) -> frozenset[str]:
    """The heading anchors of a page, as GitHub makes them (read once per page: docs/rules.md
    links to itself hundreds of times)."""
    tokens = list(_tokens(path))
    slugs: set[str] = set()
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[i + 1]
            text = "".join(child.content for child in inline.children if child.type in ("text", "code_inline"))
            slug, n = _github_slug(text), 1
            while slug in slugs:  # GitHub numbers repeated headings
                slug, n = f"{_github_slug(text)}-{n}", n + 1
            slugs.add(slug)
    return frozenset(slugs)


def _section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"README.md has no '## {title}' section"
    return match.group(1)


def test_rules_page_is_current():
    page = DOCS / "rules.md"
    assert page.read_text(encoding="utf-8") == _generator().render(), (
        f"docs/rules.md is not what the rules give; regenerate it: {PAGE_COMMAND}")


def test_rules_page_has_every_rule_and_its_explanation():
    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    anchors = _anchors(DOCS / "rules.md")
    for rule in load_rules():
        assert f"### {rule.id} {rule.name}\n" in text, rule.id
        assert explain(rule) in text, f"{rule.id}: the page does not hold `migrate rules {rule.id}`'s text"
        assert anchor(rule) in anchors, f"{rule.id}: the contents link #{anchor(rule)} leads nowhere"
        assert f"](#{anchor(rule)})" in text, f"{rule.id} is missing from the contents"


def test_explain_is_what_migrate_rules_prints(tmp_path):
    """One process for every rule: `migrate rules A B ...` prints each explanation, then a blank line."""
    rules = load_rules()
    done = run_migrate("rules", *(r.id for r in rules), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "".join(explain(r) + "\n" for r in rules)


@pytest.mark.parametrize("rule_id", ["TFD101", "TFD204", "TFK102", "TFU901"])
def test_explain_matches_one_rule(tmp_path, rule_id):
    rule = next(r for r in load_rules() if r.id == rule_id)
    done = run_migrate("rules", rule_id, cwd=tmp_path)
    assert done.stdout == explain(rule) + "\n"


def test_rules_page_fences_hold_backticks():
    """An example quoting a fenced block must not end the block it is shown in."""

    class Example:
        before, after = "x = '```'\n", None

    class Rule:
        id, name, area, status, summary = "TFX001", "fenced", "area", "info", "s"
        match, match_strings, match_tails, maps_to, difference, links = ("a.b",), (), (), "m", "d", ()
        examples = (Example(),)

    page = rules_page([Rule()])
    assert "\n````text\n" in page and page.rstrip().endswith("````")


def test_quick_start_holds_exactly_the_two_commands():
    quick = _section(README.read_text(encoding="utf-8"), "Quick start")
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", quick, re.S | re.M)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    for script in ("demo.sh", "test.sh"):
        assert (ROOT / "scripts" / script).is_file()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_lead_to_files(page):
    broken = []
    for target in _targets(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
            continue  # https:, mailto: ...
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.relative_to(ROOT)}")
    assert broken == [], f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_report_screenshot_is_a_small_png():
    image = DOCS / "report.png"
    data = image.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "docs/report.png is not a PNG"
    assert len(data) < 300_000, "docs/report.png should stay small: it is fetched with the README"
    assert "](docs/report.png)" in README.read_text(encoding="utf-8")


def test_first_conversion_shows_real_output(tmp_path):
    """The README's before/after is what `migrate convert --diff` prints for its file today."""
    section = _section(README.read_text(encoding="utf-8"), "A first conversion")
    diff = re.search(r"^```diff\n(.*?)^```", section, re.S | re.M).group(1)
    summary = re.search(r"^```text\n(.*?)^```", section, re.S | re.M).group(1)
    # One hunk covering the whole file: its context and removed lines are the file.
    assert len(re.findall(r"^@@ ", diff, re.M)) == 1 and re.search(r"^@@ -1,", diff, re.M)
    body = diff.split("\n", 3)[3]
    source = "".join(line[1:] + "\n" for line in body.splitlines() if line[:1] in (" ", "-"))
    (tmp_path / "train.py").write_text(source, encoding="utf-8")
    done = run_migrate("convert", "--diff", "--no-cache", "train.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout == diff, "README.md's first conversion is out of date: paste the real diff"
    assert done.stderr == summary


def test_generator_prints_the_page(capsys):
    assert _generator().main([]) == 0
    assert capsys.readouterr().out == (DOCS / "rules.md").read_text(encoding="utf-8")
