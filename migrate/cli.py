"""``migrate``: move tf.distribute training code onto MindSpore.

Exit codes follow ruff and black: 0 done and nothing needs a person, 1 changes
(with --check/--diff) or findings that need a person, 2 errors.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
import textwrap
from pathlib import Path

from migrate import __version__
from migrate.config import ConfigError, load_config
from migrate.engine.findings import NEEDS_PERSON
from migrate.engine.runner import FileResult, RuleSelection, atomic_write, discover, rule_index, run_files
from migrate.rules import RuleError

EXIT_OK, EXIT_FOUND, EXIT_ERROR = 0, 1, 2
PROGRESS_MIN_FILES = 50


def _split_ids(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out += [x.strip() for x in v.split(",") if x.strip()]
    return tuple(out)


class Progress:
    """A one-line bar on stderr, only on a terminal and only for long runs."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done = total, 0
        self.enabled = enabled and total >= PROGRESS_MIN_FILES and sys.stderr.isatty()

    def __call__(self) -> None:
        self.done += 1
        if self.enabled and (self.done % 10 == 0 or self.done == self.total):
            width = 30
            filled = width * self.done // self.total
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} files")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 60 + "\r")


def _diff(result: FileResult, label: str) -> str:
    enc_old = result.original.decode("utf-8", "replace").splitlines(keepends=True)
    enc_new = result.converted.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(enc_old, enc_new, f"a/{label}", f"b/{label}"))


def _selection(args, config) -> RuleSelection:
    return RuleSelection(
        select=_split_ids(args.select) or config.select,
        ignore=_split_ids(args.ignore) + config.ignore,
        extra_dirs=config.rules_dirs,
    )


def _out_path(path: str, roots: list[str], out_dir: str) -> Path:
    p = Path(path).resolve()
    for root in roots:
        r = Path(root).resolve()
        base = r if r.is_dir() else r.parent
        if p == r or base in p.parents:
            return Path(out_dir) / p.relative_to(base)
    return Path(out_dir) / p.name


def _copy_tree_rest(roots: list[str], out_dir: str, exclude_files: set[str]) -> None:
    """--out: non-Python files come along, so the converted copy is a whole project."""
    skip = {str(Path(f).resolve()) for f in exclude_files}
    out_resolved = Path(out_dir).resolve()
    for root in roots:
        r = Path(root)
        if not r.is_dir():
            continue
        for dirpath, dirs, names in os.walk(r):
            dirs[:] = [d for d in dirs if d not in {".git", "__pycache__", ".venv"} and (Path(dirpath) / d).resolve() != out_resolved]
            for name in names:
                src = Path(dirpath) / name
                if str(src.resolve()) in skip or src.suffix == ".py":
                    continue
                dest = _out_path(str(src), roots, out_dir)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest, follow_symlinks=False)


def cmd_convert(args, *, check_only: bool = False) -> int:
    config = load_config(args.paths, args.config)
    selection = _selection(args, config)
    rule_index(selection)
    files, passed_over = discover(args.paths, config.exclude)
    jobs = args.jobs or config.jobs or 1
    write = not (args.diff or args.check or check_only)
    progress = Progress(len(files), not args.quiet)
    counts = {"changed": 0, "unchanged": 0, "skipped": 0, "failed": 0}
    needs_person = 0
    lines_changed = 0
    out = sys.stdout
    for result in passed_over:
        counts[result.status] += 1
        print(f"{result.path}: {result.status}: {result.error}", file=sys.stderr)
    for result in run_files(files, selection, jobs, progress):
        if result.status == "failed":
            counts["failed"] += 1
            progress.close()
            print(f"{result.path}: error: {result.error}", file=sys.stderr)
            continue
        if result.changed and write:
            try:
                if args.out:
                    dest = _out_path(result.path, args.paths, args.out)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write(str(dest), result.converted)
                else:
                    if not os.access(result.path, os.W_OK):
                        raise OSError(f"{result.path} is not writable; left as it was")
                    atomic_write(result.path, result.converted, expected=result.original)
            except OSError as exc:
                counts["failed"] += 1
                print(f"{result.path}: error: {exc}", file=sys.stderr)
                continue
        elif args.out and write:
            dest = _out_path(result.path, args.paths, args.out)
            dest.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(str(dest), result.original)
        counts[result.status] += 1
        if result.changed:
            diff = _diff(result, result.path)
            lines_changed += sum(1 for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))
            if args.diff:
                out.write(diff)
        for f in result.findings:
            if check_only or f.status in NEEDS_PERSON or (f.status == "runtime" and not args.quiet):
                print(f.format(), file=out)
            needs_person += f.status in NEEDS_PERSON or check_only
    progress.close()
    if args.out and write:
        _copy_tree_rest(args.paths, args.out, set(files))
    if not args.quiet:
        verb = "would change" if not write else "changed"
        summary = (
            f"{counts['changed']} file(s) {verb}, {counts['unchanged']} unchanged, "
            f"{counts['skipped']} skipped, {counts['failed']} failed; {lines_changed} line(s) changed; "
            f"{needs_person} finding(s) need a person"
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
        print(f"{r.id} {r.name} ({r.area}, {r.status})\n")
        print(f"  {r.summary}\n")
        print("  Matches:")
        for m in r.match + r.match_strings:
            print(f"    {m}")
        print(f"\n  MindSpore: {r.maps_to}\n\n  Difference:")
        print(textwrap.indent(r.difference, "    "))
        for i, ex in enumerate(r.examples, 1):
            if ex.after is None:
                print(f"\n  Example {i} (left unchanged):\n" + textwrap.indent(ex.before.rstrip(), "    "))
            else:
                print(f"\n  Example {i}, before:\n" + textwrap.indent(ex.before.rstrip(), "    "))
                print("  after:\n" + textwrap.indent(ex.after.rstrip(), "    "))
        if r.links:
            print("\n  Links:\n" + "\n".join(f"    {link}" for link in r.links))
        print()
    return EXIT_OK


def cmd_run(args) -> int:
    from migrate.runtime import launch

    return launch.run(args)


def build_parser() -> argparse.ArgumentParser:
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
        p.add_argument("--config", metavar="PYPROJECT", help="read [tool.migrate] from this file instead of the nearest pyproject.toml")
        p.add_argument("--jobs", "-j", type=int, metavar="N", help="convert N files at a time (output is the same as with 1)")
        p.add_argument("--quiet", "-q", action="store_true", help="print only errors and findings that need a person")

    conv = sub.add_parser(
        "convert",
        help="rewrite TF code to MindSpore (in place by default)",
        description="Rewrite tf.distribute code under PATH to MindSpore. In place unless --out, --diff or --check.",
    )
    conv.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    mode = conv.add_mutually_exclusive_group()
    mode.add_argument("--out", metavar="DIR", help="write a converted copy of the tree here (other files are copied)")
    mode.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    selection_flags(conv)
    conv.set_defaults(func=cmd_convert)

    check = sub.add_parser(
        "check",
        help="report TF distribute APIs still in the code (for CI and pre-commit)",
        description="Print `path:line:col: ID message` for every use a rule matches; exit 1 if there is any.",
    )
    check.add_argument("paths", nargs="+", metavar="PATH")
    selection_flags(check)
    check.set_defaults(func=lambda a: cmd_convert(_check_args(a), check_only=True))

    rules = sub.add_parser("rules", help="list the rules, or explain one", description="List every rule, or explain the given ones.")
    rules.add_argument("id", nargs="*", metavar="ID", help="rule id (e.g. TFD101) or name")
    rules.add_argument("--config", metavar="PYPROJECT")
    rules.set_defaults(func=cmd_rules)

    run = sub.add_parser(
        "run",
        help="launch a converted program on N processes (msrun)",
        description="Launch SCRIPT as N MindSpore processes, one per device, through msrun.",
    )
    try:
        from migrate.runtime import launch

        launch.add_arguments(run)
    except ImportError:  # the runtime package is optional at conversion time
        run.add_argument("rest", nargs=argparse.REMAINDER)
    run.set_defaults(func=cmd_run)
    return parser


def _check_args(args):
    args.out = None
    args.diff = False
    args.check = True
    return args


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_ERROR
    try:
        return args.func(args)
    except (ConfigError, RuleError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted; files already written are complete, the rest are untouched", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
