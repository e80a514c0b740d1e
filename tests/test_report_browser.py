"""The HTML report in a real headless Chromium, driven over the DevTools protocol.

The browser is started with ``--remote-debugging-pipe`` (commands on fd 3, replies
on fd 4, NUL-separated JSON), so no network port and no client package is needed.
Skipped, saying why, where no Chromium is installed; an error under CI=true, where
it is installed (Debian's ``chromium``) and a skip would hide a broken install.

A screenshot of the page after filtering is kept as ``artifacts/report-browser.png``.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from migrate.engine.runner import RuleSelection, convert_source, rule_index
from migrate.notebook import convert_notebook
from migrate.report import build_report, render
from migrate.rules import load_rules

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    explicit = os.environ.get("MIGRATE_CHROMIUM")
    if explicit:
        return explicit
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


CHROMIUM = find_chromium()
NO_CHROMIUM = "no Chromium found (apt-get install chromium, or set MIGRATE_CHROMIUM)"
if CHROMIUM is None and os.environ.get("CI") == "true":
    # CI installs Chromium: a skip there would hide a broken install step.
    pytest.fail(NO_CHROMIUM + " on CI", pytrace=False)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


class CDPError(RuntimeError):
    pass


class Browser:
    """Just enough of the Chrome DevTools Protocol: one page, commands, and the events seen."""

    def __init__(self, binary: str, width: int = 1400, height: int = 1000) -> None:
        self.profile = tempfile.mkdtemp(prefix="migrate-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()

        def wire_pipes() -> None:  # the child's fd 3 reads commands, fd 4 writes replies
            os.dup2(cmd_r, 3)
            os.dup2(res_w, 4)

        self.proc = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--disable-extensions",
                "--disable-default-apps",
                "--mute-audio",
                f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=wire_pipes,
        )
        os.close(cmd_r)
        os.close(res_w)
        self._next_id = 0
        self._replies: dict[int, dict] = {}
        self._inbox: queue.Queue = queue.Queue()
        self.events: list[dict] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = None
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._res_r, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self._inbox.put(None)
                return
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                self._inbox.put(json.loads(message))

    def _pump(self, deadline: float) -> bool:
        try:
            message = self._inbox.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            return False
        if message is None:
            raise CDPError("the browser closed the pipe")
        if "id" in message:
            self._replies[message["id"]] = message
        else:
            self.events.append(message)
        return True

    def send(self, method: str, timeout: float = 30, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while self._next_id not in self._replies:
            if time.monotonic() > deadline:
                raise CDPError(f"{method}: no reply in {timeout}s")
            self._pump(deadline)
        reply = self._replies.pop(self._next_id)
        if "error" in reply:
            raise CDPError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_event(self, method: str, timeout: float = 30, since: int = 0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events[since:]:
                if event["method"] == method:
                    return event
            if time.monotonic() > deadline:
                raise CDPError(f"no {method} event in {timeout}s")
            self._pump(deadline)

    def settle(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._pump(deadline)

    def open(self, url: str) -> None:
        mark = len(self.events)
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", since=mark)

    def js(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise CDPError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def type_into(self, selector: str, text: str) -> None:
        self.js(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", text=text)

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element."""
        box = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def problems(self, since: int = 0) -> list[str]:
        """Console errors and warnings, uncaught exceptions, log errors (CSP violations) and dialogs."""
        out = []
        for e in self.events[since:]:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append(f"console.{p['type']}: {[a.get('value', a.get('description')) for a in p.get('args', [])]}")
            elif m == "Runtime.exceptionThrown":
                out.append(f"exception: {p['exceptionDetails'].get('exception', {}).get('description') or p['exceptionDetails'].get('text')}")
            elif m == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
                out.append(f"log {p['entry'].get('source')}: {p['entry'].get('text')}")
            elif m == "Page.javascriptDialogOpening":
                out.append(f"dialog: {p.get('message')}")
        return out

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except CDPError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._res_r)
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    b = Browser(CHROMIUM)
    try:
        yield b
    finally:
        b.close()


# -- a scanned tree full of hostile text ----------------------------------------------------------

PAYLOAD = "</script><script>window.__pwned = 1; alert(1)</script>"

HOSTILE_SOURCE = f'''\
import tensorflow as tf

label = "{PAYLOAD}"  # '" onmouseover="window.__pwned=4
# {PAYLOAD} </textarea><img src=x onerror="window.__pwned=2"> {{{{ 7*7 }}}} {{% raw %}}
strategy = tf.distribute.MirroredStrategy()
"""</style><svg onload="window.__pwned=3"> \u2028 \u2029 <!-- --> ]]>"""
with strategy.scope():
    model = build("<b>bold</b>", '{{{{ config }}}}')
resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
server = tf.distribute.experimental.ParameterServerStrategy(resolver)
'''

CLEANISH_SOURCE = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
loss = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
"""


def _notebook_bytes() -> bytes:
    nb = {
        "cells": [
            {"cell_type": "markdown", "id": "a", "metadata": {}, "source": [f"# {PAYLOAD}"]},
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "b",
                "metadata": {},
                "outputs": [],
                "source": ["import tensorflow as tf\n", f"# {PAYLOAD}\n", "strategy = tf.distribute.MirroredStrategy()\n", "n = strategy.num_replicas_in_sync"],
            },
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(nb, indent=1) + "\n").encode()


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    index = rule_index(RuleSelection())
    results = [
        convert_source(HOSTILE_SOURCE.encode(), index, f"src/{PAYLOAD}<x onclick=alert(1)>.py"),
        convert_source(CLEANISH_SOURCE.encode(), index, "src/train's \"quoted\".py"),
        convert_notebook(_notebook_bytes(), index, "notebooks/explore </textarea>.ipynb"),
        convert_source(b"import tensorflow as tf\ndef broken(:\n", index, "src/broken <script>.py"),
    ]
    report = build_report(results, load_rules())
    html_path = out / "report.html"
    html_path.write_text(render(report, "html"), encoding="utf-8")
    data = json.loads(render(report, "json"))
    return html_path, data


def _open_all_files(browser: Browser) -> int:
    return browser.js(
        "(() => { const ds = document.querySelectorAll('details.file'); ds.forEach(d => { d.open = true; });"
        " return ds.length; })()"
    )


def test_page_opens_without_errors_and_runs_no_scanned_script(browser, hostile_report):
    html_path, data = hostile_report
    mark = len(browser.events)
    browser.open(html_path.as_uri())
    assert browser.js("document.documentElement.getAttribute('data-ready')") == "1"
    opened = _open_all_files(browser)
    assert opened == 4  # three with findings or changes, one that failed
    browser.settle(0.5)
    assert browser.problems(since=mark) == []
    assert browser.js("typeof window.__pwned") == "undefined"
    assert browser.js("document.scripts.length") == 2  # the data blob and the page's own script
    assert browser.js("document.querySelectorAll('img, svg, iframe, object, embed, textarea').length") == 0
    # The payload is on the page, as text.
    text = browser.js("document.body.innerText")
    assert "window.__pwned = 1; alert(1)" in text
    for literal in ("{{ 7*7 }}", "{% raw %}", "{{ config }}", "</textarea><img src=x", '<svg onload="window.__pwned=3">', "<b>bold</b>"):
        assert literal in text, literal


def test_counts_in_the_page_equal_the_json_report(browser, hostile_report):
    html_path, data = hostile_report
    browser.open(html_path.as_uri())
    summary = data["summary"]
    shown = browser.js(
        "Object.fromEntries(Array.from(document.querySelectorAll('[id^=n-]')).map(e => [e.id.slice(2), Number(e.textContent)]))"
    )
    for key, value in shown.items():
        assert value == summary[key], key
    assert {"files_scanned", "apis_found", "converted", "runtime", "manual", "lines_changed"} <= set(shown)
    total = sum(len(f["findings"]) for f in data["files"])
    assert browser.js("Number(document.getElementById('f-count').dataset.shown)") == total
    assert browser.js("document.querySelectorAll('#finding-rows tr').length") == total
    api_rows = browser.js("Array.from(document.querySelectorAll('tr.api-row')).map(r => [r.dataset.api, r.dataset.rule, Number(r.dataset.count)])")
    assert sorted(map(tuple, api_rows)) == sorted((a["api"], a["rule"], a["occurrences"]) for a in data["apis"])


def test_filters_narrow_findings_and_files(browser, hostile_report):
    html_path, data = hostile_report
    browser.open(html_path.as_uri())
    findings = [(f["path"], x) for f in data["files"] for x in f["findings"]]

    # Status: only what needs a person.
    for status in ("runtime", "converted", "info"):
        browser.click(f"#f-status-{status}")
    manual = [x for x in findings if x[1]["status"] == "manual"]
    assert manual, "the hostile file has a manual finding"
    assert browser.js("Number(document.getElementById('f-count').dataset.shown)") == len(manual)
    assert browser.js("document.querySelectorAll('#finding-rows tr').length") == len(manual)
    assert browser.js("Number(document.getElementById('file-count').dataset.shown)") == len({p for p, _ in manual})
    browser.click("#f-clear")
    assert browser.js("Number(document.getElementById('f-count').dataset.shown)") == len(findings)

    # File: typed into the search box (debounced).
    browser.type_into("#f-file", "notebooks/")
    browser.settle(0.4)
    in_notebook = [x for x in findings if x[0].startswith("notebooks/")]
    assert browser.js("Number(document.getElementById('f-count').dataset.shown)") == len(in_notebook) > 0
    cells = browser.js("Array.from(document.querySelectorAll('#finding-rows td.file')).map(td => td.textContent)")
    assert all(":cell 2" in c for c in cells)
    browser.click("#f-clear")

    # API: a click on its row in the TF API table.
    browser.click('tr.api-row[data-api="tensorflow.distribute.MirroredStrategy"][data-rule="TFD101"] td:first-child')
    wanted = [x for x in findings if x[1]["api"] == "tensorflow.distribute.MirroredStrategy" and x[1]["rule"] == "TFD101"]
    assert browser.js("Number(document.getElementById('f-count').dataset.shown)") == len(wanted) > 0
    assert browser.js("document.getElementById('f-api').value") == "tensorflow.distribute.MirroredStrategy"

    # A finding row opens its file at the finding, with the line marked in the excerpt.
    browser.click("#finding-rows tr")
    opened = browser.js("Array.from(document.querySelectorAll('details.file[open]')).map(d => d.querySelector('summary code').textContent)")
    assert len(opened) == 1
    assert browser.js("document.querySelectorAll('details.file[open] pre.code .line.hit').length") >= 1
    browser.settle(0.2)
    shot = browser.screenshot(ARTIFACTS / "report-browser.png")
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000
    assert browser.problems() == []


def test_ten_thousand_findings_load_fast_and_filter(browser, tmp_path):
    from tests.test_report import FINDINGS_AT_SCALE, results_at_scale

    report = build_report(results_at_scale(rule_index(RuleSelection())), load_rules())
    page = tmp_path / "big.html"
    page.write_text(render(report, "html"), encoding="utf-8")
    mark = len(browser.events)
    start = time.perf_counter()
    browser.open(page.as_uri())
    loaded = time.perf_counter() - start
    assert browser.js("document.documentElement.getAttribute('data-ready')") == "1"
    print(f"\n{FINDINGS_AT_SCALE} findings ({page.stat().st_size / 1e6:.2f} MB): loaded and drawn in {loaded:.2f} s")
    assert loaded < 5
    assert browser.js("Number(document.getElementById('f-count').dataset.shown)") == FINDINGS_AT_SCALE
    assert browser.js("document.querySelectorAll('#finding-rows tr').length") == 100  # a page at a time
    start = time.perf_counter()
    browser.click("#f-status-converted")
    filtered = time.perf_counter() - start
    expected = FINDINGS_AT_SCALE - report.summary.converted
    assert browser.js("Number(document.getElementById('f-count').dataset.shown)") == expected
    assert filtered < 2
    browser.click("#finding-pager button:last-child")
    assert browser.js("document.querySelector('#finding-pager .page').textContent") == f"page 2 of {-(-expected // 100)}"
    assert browser.problems(since=mark) == []
