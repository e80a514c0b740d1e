"""A rule's explanation as text, and the rules page built from it.

``migrate rules ID`` prints :func:`explain`; ``docs/rules.md`` is :func:`rules_page`, which
embeds the same text, so the terminal and the page cannot drift apart.

Rules are taken as arguments and nothing of the package is imported: this module sits below
every layer that has rules to give it (the command line; ``scripts/rules_page.py``, which
writes the page).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

PAGE_COMMAND = ".venv/bin/python scripts/rules_page.py --write"


def explain(rule) -> str:
    """What ``migrate rules ID`` prints for ``rule`` (a :class:`migrate.rules.Rule`), ending in a
    newline; the command prints a blank line after each rule."""
    lines = [f"{rule.id} {rule.name} ({rule.area}, {rule.status})", "", f"  {rule.summary}", "", "  Matches:"]
    lines += [f"    {m}" for m in rule.match + rule.match_strings]
    lines += [f"    <any expression>{t}" for t in rule.match_tails]
    for fact, names in getattr(rule, "facts", {}).items():  # what the engine may know of these APIs
        lines += ["", f"  Declares {fact}:", *(f"    {n}" for n in names)]
    lines += ["", f"  MindSpore: {rule.maps_to}", "", "  Difference:", textwrap.indent(rule.difference, "    ")]
    for i, ex in enumerate(rule.examples, 1):
        if ex.after is None:
            lines += ["", f"  Example {i} (left unchanged):", textwrap.indent(ex.before.rstrip(), "    ")]
        else:
            lines += ["", f"  Example {i}, before:", textwrap.indent(ex.before.rstrip(), "    "),
                      "  after:", textwrap.indent(ex.after.rstrip(), "    ")]
    if rule.links:
        lines += ["", "  Links:", *(f"    {link}" for link in rule.links)]
    return "\n".join(lines) + "\n"


def anchor(rule) -> str:
    """The fragment GitHub gives the rule's heading on the page (``TFD101 mirrored-strategy``)."""
    return f"{rule.id} {rule.name}".lower().replace(" ", "-")


def _fence(text: str) -> str:
    # Longer than any run of backticks inside, so an example holding a fence cannot close it.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def rules_page(rules: Iterable) -> str:
    """``docs/rules.md``: a contents list grouped by area, then each rule's :func:`explain` text."""
    by_area: dict[str, list] = {}
    for rule in sorted(rules, key=lambda r: r.id):
        by_area.setdefault(rule.area, []).append(rule)
    areas = sorted(by_area)
    total = sum(len(group) for group in by_area.values())
    out = [
        "# Rules",
        "",
        f"<!-- Generated from rules/ by scripts/rules_page.py. Edit the rule files, then run: {PAGE_COMMAND} -->",
        "",
        f"The {total} bundled rules in {len(areas)} areas, each as `migrate rules ID` prints it. A rule is one",
        "file, `rules/<area>/<ID>-<slug>.yaml`; its examples run as tests. Its status says what a",
        "match becomes: *converted* (rewritten statically), *runtime* (handed to `migrate.runtime`),",
        "*manual* (a person must act) or *info* (a note on behaviour that differs).",
        "",
        "## Contents",
        "",
    ]
    for area in areas:
        out.append(f"- [{area}](#{area})")
        out += [f"  - [{r.id}](#{anchor(r)}) `{r.name}` ({r.status}): {r.summary}" for r in by_area[area]]
    for area in areas:
        out += ["", f"## {area}"]
        for rule in by_area[area]:
            text = explain(rule)
            fence = _fence(text)
            out += ["", f"### {rule.id} {rule.name}", "", f"{fence}text", text.rstrip("\n"), fence]
    return "\n".join(out) + "\n"
