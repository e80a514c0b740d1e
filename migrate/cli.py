"""``migrate``: move tf.distribute training code onto MindSpore.

Exit codes follow ruff and black: 0 done and nothing needs a person, 1 changes
(with --check/--diff) or findings that need a person, 2 errors.
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import sys
from pathlib import Path

from migrate import __version__
from migrate.config import NATIVE_RULES, TIERS, ConfigError, load_config
from migrate.docs import explain
from migrate.engine.findings import NEEDS_PERSON
from migrate.engine import cache as result_cache
from migrate.engine.paths import Inputs, OutLayout, check_report_target, walk_inputs
from migrate.engine.results import FileResult, RuleSelection
from migrate.engine.runner import MAX_FILE_BYTES, rule_index, run_files
from migrate.engine.writes import atomic_write, temporary_beside
from migrate.report import FORMATS, ReportBuilder, default_output, format_for, write_report
from migrate.filetypes import convert_file, file_diff
from migrate.safe_io import display, open_regular
from migrate.rules import RuleError, load_rules, rule_directories, selected

EXIT_OK, EXIT_FOUND, EXIT_ERROR = 0, 1, 2
PROGRESS_MIN_FILES = 50


def _split_ids(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out += [x.strip().upper() for x in v.split(",") if x.strip()]
    return tuple(out)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


class Progress:
    """A one-line bar on stderr, only on a terminal and only for long runs (>= 50 files)."""

    def __init__(self, total: int, enabled: bool, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total, self.done = total, 0
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled and total >= PROGRESS_MIN_FILES and bool(isatty and isatty())
        self.shown = 0  # width of the bar on screen, 0 when none is

    def __call__(self) -> None:
        self.done += 1
        if self.enabled and (self.done % 10 == 0 or self.done == self.total):
            width = 30
            filled = width * self.done // self.total
            bar = f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} files"
            self.stream.write("\r" + bar)
            self.stream.flush()
            self.shown = len(bar)

    def clear(self) -> None:
        """Erase the bar before another line is printed (it is redrawn on the next step)."""
        if self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0

    close = clear


def _diff(result: FileResult, label: str) -> str:
    """Unified diff; a notebook's is one per changed code cell, and a missing final newline is marked."""
    return file_diff(label, result.original, result.converted)


def _selection(args, config, known: list[str] | None = None) -> RuleSelection:
    selection = RuleSelection(
        select=_split_ids(args.select) or tuple(c.upper() for c in config.select),
        ignore=_split_ids(args.ignore) + tuple(c.upper() for c in config.ignore)
        + ((NATIVE_RULES,) if (getattr(args, "tier", None) or config.tier) == "shim" else ()),
        extra_dirs=config.rules_dirs,
    )
    # A code that selects nothing is a typo, not a wish to run no rules (ruff does the same).
    if known is None:
        known = [r.id for r in load_rules(selection.extra_dirs)]
    for flag, codes in (("select", selection.select), ("ignore", selection.ignore)):
        for code in codes:
            if not any(rule_id.startswith(code) for rule_id in known):
                raise ConfigError(f"{flag}: {code!r} is not a rule id or id prefix (see `migrate rules`)")
    return selection


def _mode(path: str) -> int | None:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None


def _copy_link(src: str, dest: str) -> None:
    """--out: a symbolic link comes along as a link (the same text, not followed)."""
    target = os.readlink(src)
    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            return
        if stat.S_ISLNK(st.st_mode) and os.readlink(dest) == target:
            return  # a second run: already there
        os.unlink(dest)
    os.symlink(target, dest)


def _copy_others(inputs: Inputs, layout: OutLayout) -> list[tuple[str, OSError]]:
    """--out: everything but the converted files comes along, so the copy is a whole project.

    Non-Python files, excluded Python files and symbolic links (copied as links), each to
    the place the layout gave it. Returns what could not be copied.
    """
    errors: list[tuple[str, OSError]] = []
    for path, kind in inputs.others:
        dest = layout.destination(path)
        try:
            layout.make_parent(dest)
            if kind == "link":
                _copy_link(path, dest)
            else:
                _copy_file(path, dest)
        except OSError as exc:
            errors.append((path, exc))
    return errors


def _copy_file(src: str, dest: str) -> None:
    """``shutil.copy2`` through a temporary file in ``dest``'s directory and a rename: a full
    disk or an interrupt leaves no half-copied file."""
    if _same_file_content(src, dest):
        return
    with temporary_beside(Path(dest)) as (fd, tmp):
        with os.fdopen(fd, "wb") as out, open_regular(src) as inp:
            shutil.copyfileobj(inp, out, 1 << 20)  # a copy beside an untouched source: no fsync
        shutil.copystat(src, tmp)
        os.replace(tmp, dest)


def _same_file_content(src: str, dest: str) -> bool:
    """A copy already in place (a second run into the same --out): nothing to write."""
    try:
        a, b = os.stat(src), os.lstat(dest)
    except OSError:
        return False
    if a.st_size != b.st_size or stat.S_IMODE(a.st_mode) != stat.S_IMODE(b.st_mode) or not stat.S_ISREG(b.st_mode):
        return False
    return a.st_mtime_ns == b.st_mtime_ns  # rsync's quick check: copystat gave the copy the source's mtime


def _write_copy(dest: str, data: bytes, mode: int | None) -> None:
    """--out: write ``data`` unless ``dest`` already holds exactly that (a second run rewrites nothing)."""
    try:
        st = os.lstat(dest)
        if stat.S_ISREG(st.st_mode) and st.st_size == len(data) and (mode is None or stat.S_IMODE(st.st_mode) == mode):
            with open_regular(dest) as handle:
                if handle.read() == data:
                    return
    except OSError:
        pass
    atomic_write(dest, data, mode=mode, durable=False)  # the source stays as it was


def _error_text(exc: OSError) -> str:
    if exc.strerror:
        return f"cannot write: {exc.strerror}" + (f" ({display(str(exc.filename))})" if exc.filename else "")
    return str(exc)


def _report_target(path: str | None, fmt: str | None) -> tuple[str, str]:
    """(output path, format): the format named, else the path's suffix says, else HTML."""
    if path is None:
        fmt = fmt or "html"
        return default_output(fmt), fmt
    return path, format_for(path, fmt)


def _one_per_place(findings):
    """For `check`: one line per use; a conversion's notes (status info) at the same place are not uses."""
    primary = {}
    for f in findings:
        key = (f.path, f.line, f.col, f.rule)
        if key not in primary or (primary[key].status == "info" and f.status != "info"):
            primary[key] = f
    return sorted(primary.values())


def cmd_convert(args, *, check_only: bool = False, report_only: bool = False) -> int:
    """convert, check (``check_only``: list every finding, write nothing) and report (``report_only``)."""
    config = load_config(args.paths, args.config)
    caching = not (getattr(args, "no_cache", False) or result_cache.disabled_by_environment())
    manifest = None
    if caching:
        # The rules' ids and digests, parsed only when a rule file changed: a run served
        # wholly from the cache loads neither the rules nor libcst.
        manifest = result_cache.rule_manifest(config.cache_dir, rule_directories(config.rules_dirs), lambda: load_rules(config.rules_dirs))
    selection = _selection(args, config, [rule_id for rule_id, _ in manifest] if manifest is not None else None)
    if manifest is None:
        rule_index(selection)  # a bad rule set fails here, once
    base = os.path.dirname(config.source) if config.source else None
    write = not (args.diff or args.check or check_only or report_only)
    copying = bool(args.out and write)
    # Every path is resolved and every destination checked before anything is written: a run
    # that would write over an input, or two inputs to one place, or outside --out, writes nothing.
    inputs = walk_inputs(args.paths, config.exclude, base=base, prune=[args.out] if args.out else [], others=copying)
    layout = OutLayout.plan(args.paths, args.out, inputs) if copying else None
    report_path = getattr(args, "report", None)
    if report_path or report_only:
        check_report_target(_report_target(report_path, getattr(args, "report_format", None))[0], inputs, layout)
    files, passed_over = inputs.files, inputs.passed_over
    jobs = args.jobs or config.jobs or 1
    max_bytes = config.max_file_size or MAX_FILE_BYTES
    cache = None
    if caching:
        digests = [d for rule_id, d in manifest if selected(rule_id, selection.select, selection.ignore)]
        cache = result_cache.Cache.open(config.cache_dir, None, options=f"max_bytes={max_bytes}", digests=digests)
    builder = ReportBuilder(rule_index(selection).rules, written=write) if report_path or report_only else None
    progress = Progress(len(files), not args.quiet)
    counts = {"changed": 0, "unchanged": 0, "skipped": 0, "failed": 0}
    needs_person = 0
    lines_changed = 0
    engine_errors = 0  # conversions that recovered from a bug of the engine (see ConvertOptions.fallback)
    out = sys.stdout
    for result in passed_over:
        if builder:
            builder.add(result)
        counts[result.status] += 1
        label = "error" if result.status == "failed" else result.status
        print(f"{display(result.path)}: {label}: {result.error}", file=sys.stderr)
    for result in run_files(files, selection, jobs, progress, cache=cache, max_bytes=max_bytes, converter=convert_file):
        status = result.status
        if builder:
            builder.add(result)
        if status == "failed":
            progress.clear()
            print(f"{display(result.path)}: error: {result.error}", file=sys.stderr)
        if write:
            try:
                if layout is not None:
                    # A file that failed is copied as it is (the copy stays a whole project); one
                    # that could not be read is not, and is reported once, above.
                    if status != "failed" or result.original:
                        dest = layout.destination(result.path)
                        layout.make_parent(dest)
                        data = result.converted if result.changed else result.original
                        _write_copy(dest, data, _mode(result.path))
                elif result.changed:
                    atomic_write(result.path, result.converted, expected=result.original)
            except OSError as exc:
                if status != "failed":
                    status = "failed"
                    progress.clear()
                    print(f"{display(result.path)}: error: {_error_text(exc)}", file=sys.stderr)
                    if builder:
                        builder.mark_failed(result.path, _error_text(exc))
        counts[status] += 1
        if result.engine_error:
            engine_errors += 1
            progress.clear()
            print(f"{display(result.path)}: engine error: {result.engine_error} (a bug of migrate's: please report it "
                  "with this file)", file=sys.stderr)
        if status == "failed":
            continue
        if result.changed:
            lines_changed += result.lines_changed
            if args.diff:
                out.write(_diff(result, display(result.path)))
        if report_only:
            continue
        for f in _one_per_place(result.findings) if check_only else result.findings:
            if check_only or f.status in NEEDS_PERSON or (f.status == "runtime" and not args.quiet):
                progress.clear()
                print(f.format(), file=out)
            needs_person += f.status in NEEDS_PERSON or check_only
        out.flush()
    progress.close()
    if layout is not None:
        for path, exc in _copy_others(inputs, layout):
            print(f"{display(path)}: error: {_error_text(exc)}", file=sys.stderr)
            counts["failed"] += 1
    if builder:
        target, fmt = _report_target(report_path, getattr(args, "report_format", None))
        report = builder.finish()
        try:
            write_report(report, target, fmt, root=os.getcwd())
        except OSError as exc:
            print(f"error: cannot write the report {display(target)}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_ERROR
        if not args.quiet and target != "-":
            totals = report.summary
            print(
                f"wrote {display(target)} ({fmt}): {totals.apis_found} TF API use(s) in {totals.files_with_findings} file(s): "
                f"{totals.converted} converted, {totals.runtime} at run time, {totals.manual} manual",
                file=sys.stderr,
            )
        if report_only:
            return EXIT_ERROR if counts["failed"] else EXIT_OK
    if not args.quiet:
        verb = "would change" if not write else "changed"
        summary = (
            f"{counts['changed']} file(s) {verb}, {counts['unchanged']} unchanged, "
            f"{counts['skipped']} skipped, {counts['failed']} failed; {lines_changed} line(s) changed; "
            + (f"{needs_person} TF API use(s) found" if check_only else f"{needs_person} finding(s) need a person")
            + (f"; {engine_errors} engine error(s), reported above" if engine_errors else "")
        )
        print(summary, file=sys.stderr)
    if counts["failed"]:
        return EXIT_ERROR
    if (args.check or args.diff) and counts["changed"]:
        return EXIT_FOUND
    return EXIT_FOUND if needs_person else EXIT_OK


def cmd_rules(args) -> int:
    config = load_config([], args.config)
    rules = rule_index(RuleSelection(extra_dirs=config.rules_dirs)).rules
    if not args.id:
        width = max(len(r.name) for r in rules)
        for r in sorted(rules, key=lambda r: r.id):
            print(f"{r.id}  {r.name:<{width}}  {r.status:<9}  {r.summary}")
        return EXIT_OK
    wanted = {i.upper() for i in args.id}
    found = [r for r in rules if r.id in wanted or r.name in args.id]
    missing = wanted - {r.id for r in found} - {r.name.upper() for r in found}
    if missing:
        print(f"error: no rule named {', '.join(sorted(missing))} (see `migrate rules`)", file=sys.stderr)
        return EXIT_ERROR
    for r in found:
        print(explain(r))
    return EXIT_OK


def cmd_run(args) -> int:
    from migrate.runtime import launch

    return launch.run(args)


def build_parser(with_launcher: bool = True) -> argparse.ArgumentParser:
    """The command line; ``with_launcher=False`` leaves the runtime (numpy, MindSpore) unimported."""
    parser = argparse.ArgumentParser(
        prog="migrate",
        description="Move TensorFlow tf.distribute training code onto MindSpore data parallelism.",
        epilog="Exit codes: 0 done and nothing needs a person; 1 changes found (--check/--diff) or findings "
        "that need a person; 2 errors. Configuration: [tool.migrate] in pyproject.toml.",
    )
    parser.add_argument("--version", action="version", version=f"migrate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def selection_flags(p):
        p.add_argument("--select", action="append", metavar="IDS", help="only these rule ids or id prefixes (comma-separated)")
        p.add_argument("--ignore", action="append", metavar="IDS", help="skip these rule ids or id prefixes (comma-separated)")
        p.add_argument("--tier", choices=TIERS, help="native (default): MindSpore's own cells, optimizers and ms.jit where "
                       "proven equal to TF (the TFL rules), the migrate.runtime shim elsewhere; shim: migrate.runtime "
                       "throughout (the same as --ignore TFL)")
        p.add_argument("--config", metavar="PYPROJECT", help="read [tool.migrate] from this file instead of the nearest pyproject.toml")
        p.add_argument("--jobs", "-j", type=_positive_int, metavar="N", help="convert N files at a time (output is the same as with 1)")
        p.add_argument("--quiet", "-q", action="store_true", help="print only errors and findings that need a person")
        p.add_argument("--no-cache", action="store_true", help="convert every file again instead of reusing cached results")

    def report_flags(p):
        p.add_argument("--report", metavar="FILE", help="also write a report of this run (HTML; JSON or SARIF for a .json or .sarif name)")
        p.add_argument("--report-format", choices=FORMATS, help="the report's format, whatever its name")

    conv = sub.add_parser(
        "convert",
        help="rewrite TF code to MindSpore (in place by default)",
        description="Rewrite tf.distribute code under PATH to MindSpore. In place unless --out, --diff or --check.",
    )
    conv.add_argument("paths", nargs="+", metavar="PATH", help="files, directories or notebooks (.ipynb)")
    mode = conv.add_mutually_exclusive_group()
    mode.add_argument(
        "--out",
        metavar="DIR",
        help="write a converted copy of the tree here; other files, and files that fail, are copied as they are",
    )
    mode.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    selection_flags(conv)
    report_flags(conv)
    conv.set_defaults(func=cmd_convert)

    check = sub.add_parser(
        "check",
        help="report TF distribute APIs still in the code (for CI and pre-commit)",
        description="Print `path:line:col: ID message` for every use a rule matches; exit 1 if there is any.",
    )
    check.add_argument("paths", nargs="+", metavar="PATH")
    selection_flags(check)
    report_flags(check)
    check.set_defaults(func=lambda a: cmd_convert(_check_args(a), check_only=True))

    report = sub.add_parser(
        "report",
        help="write a report of what convert finds and would change (HTML, JSON or SARIF)",
        description="Find every TF API use under PATH and write one report: a self-contained HTML page, "
        "JSON (schema: migrate/report/schema/report.schema.json) or SARIF 2.1.0. Writes no source file. "
        "Exit 0 when the report is written, 2 on errors (files that fail are in the report too).",
    )
    report.add_argument("paths", nargs="+", metavar="PATH")
    report.add_argument("-o", "--output", metavar="FILE", help="where to write it; - for standard output (default: migrate-report.html/.json/.sarif)")
    report.add_argument("--format", choices=FORMATS, help="html, json or sarif (default: from the output's suffix, else html)")
    selection_flags(report)
    report.set_defaults(func=lambda a: cmd_convert(_report_args(a), report_only=True))

    rules = sub.add_parser("rules", help="list the rules, or explain one", description="List every rule, or explain the given ones.")
    rules.add_argument("id", nargs="*", metavar="ID", help="rule id (e.g. TFD101) or name")
    rules.add_argument("--config", metavar="PYPROJECT")
    rules.set_defaults(func=cmd_rules)

    run = sub.add_parser(
        "run",
        help="launch a converted program on N processes (msrun)",
        description="Launch SCRIPT as N MindSpore processes, one per device, through msrun.",
    )
    launch = None
    if with_launcher:
        try:
            from migrate.runtime import launch
        except ImportError:  # the runtime package is optional at conversion time
            launch = None
    if launch is not None:
        launch.add_arguments(run)
    else:
        run.add_argument("rest", nargs=argparse.REMAINDER)
    run.set_defaults(func=cmd_run)
    return parser


def _check_args(args):
    args.out = None
    args.diff = False
    args.check = True
    return args


def _report_args(args):
    args = _check_args(args)
    args.report, args.report_format = _report_target(args.output, args.format)
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # Converting must not pay for importing the runtime; only `migrate run` needs it.
    parser = build_parser(with_launcher="run" in argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_ERROR
    try:
        return args.func(args)
    except (ConfigError, RuleError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (`migrate check . | head`): stop quietly, as other filters do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FOUND
    except OSError as exc:  # e.g. an --out directory that cannot be made
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted; files already written are complete, the rest are untouched", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
