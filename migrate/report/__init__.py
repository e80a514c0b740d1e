"""Reports of a run: the model, and its HTML, JSON and SARIF renderings."""

from __future__ import annotations

from migrate.report.model import FileReport, Report, ReportBuilder, Summary, build_report

FORMATS = ("html", "json", "sarif")


def render(report: Report, fmt: str = "html", root: str | None = None) -> str:
    """The report as text in ``fmt`` (html, json or sarif)."""
    if fmt == "html":
        from migrate.report.html import render_html

        return render_html(report)
    if fmt == "json":
        from migrate.report.json_report import render_json

        return render_json(report)
    if fmt == "sarif":
        from migrate.report.sarif import render_sarif

        return render_sarif(report, root)
    raise ValueError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")


def default_output(fmt: str) -> str:
    return {"html": "migrate-report.html", "json": "migrate-report.json", "sarif": "migrate-report.sarif"}[fmt]


def write_report(report: Report, path: str, fmt: str, root: str | None = None) -> None:
    """Render and write the report (making its directory); ``-`` is standard output.

    The file appears whole or not at all.
    """
    import os
    import sys

    from migrate.engine.writes import atomic_write

    text = render(report, fmt, root)
    # Every path in it is shown as text already (migrate.engine.display); the error handler
    # keeps any other stray surrogate visible rather than failing the report.
    data = text.encode("utf-8", "backslashreplace")
    if path == "-":
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:
            sys.stdout.write(data.decode("utf-8"))
        else:
            buffer.write(data)
            buffer.flush()
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    atomic_write(path, data)


def format_for(path: str, explicit: str | None = None) -> str:
    """The format named, else the one the output file's suffix says, else HTML."""
    if explicit:
        return explicit
    lowered = path.lower()
    if lowered.endswith(".sarif") or lowered.endswith(".sarif.json"):
        return "sarif"
    if lowered.endswith(".json"):
        return "json"
    return "html"


__all__ = ["FORMATS", "FileReport", "Report", "ReportBuilder", "Summary", "build_report", "default_output", "format_for", "render", "write_report"]
