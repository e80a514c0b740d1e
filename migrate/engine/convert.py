"""Converting one file's text: CPython's parser first, then pruning, then the libcst codemod.

Kept apart from :mod:`migrate.engine.runner` so that importing the runner (discovery,
the cache, writes) does not import libcst: a run whose every file comes from the
cache never loads it.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from migrate.engine import _libcst_speed  # (first: it imports libcst.matchers, which libcst.codemod needs)

import libcst as cst
from libcst import ParserSyntaxError
from libcst.codemod import CodemodContext, SkipFile, SkipReason, TransformFailure, TransformSkip, TransformSuccess

from migrate.engine.aliases import import_aliases
from migrate.engine.codemod import MigrateCommand
from migrate.engine.index import RuleIndex, mentions_any
from migrate.engine.facts import LazyFacts
from migrate.engine.tfvalues import KeptCalls
from migrate.engine.findings import Finding, one_line
from migrate.engine.lowering import lower_text
from migrate.engine.prune import MIN_LINES, ImportTable, Pruned, analyse
from migrate.engine.results import ConvertOptions, FileResult
from migrate.engine import source
from migrate.engine.source import DANGLING_CONTINUATION, detect_encoding, python_ast
from migrate.engine.suppression import is_suppressed, suppressed_lines


def _transform(command: MigrateCommand, code: str):
    """libcst's ``transform_module``, less two of its ways to lose a file or an interrupt.

    A first indented line that starts with a form feed (legal, and reset by CPython's
    tokenizer) becomes the module's ``default_indent``, which libcst then refuses to
    re-parse with when imports are added: existing blocks get that indent spelled
    out and only *new* blocks use it without the form feed. And Ctrl-C is not turned
    into a result: it stops the run.

    libcst's speed-ups (:mod:`migrate.engine._libcst_speed`) are on while it runs, for the
    thread it runs on (the deep-stack one) and for nothing else.
    """
    with _libcst_speed.speedups():
        try:
            tree = _libcst_speed.parse_module(code)
            if "\f" in tree.default_indent:
                tree = _without_form_feed_indent(tree)
            else:
                command.source = code  # the module's own code: no need to generate it again
            new = command.transform_module(tree)
            return TransformSuccess(code=_libcst_speed.code(new, command.positions), warning_messages=command.context.warnings)
        except SkipFile as exc:
            return TransformSkip(skip_reason=SkipReason.OTHER, skip_description=str(exc), warning_messages=command.context.warnings)
        except Exception as exc:  # noqa: BLE001 - a result, as libcst gives it
            return TransformFailure(error=exc, traceback_str="", warning_messages=command.context.warnings)


class _SpellOutIndent(cst.CSTTransformer):
    """Blocks that use the module's default indent get it written out, so changing the default moves nothing."""

    def __init__(self, indent: str) -> None:
        self.indent = indent

    def leave_IndentedBlock(self, original, updated):
        return updated.with_changes(indent=self.indent) if updated.indent is None else updated


def _without_form_feed_indent(tree: cst.Module) -> cst.Module:
    old = tree.default_indent
    tree = tree.visit(_SpellOutIndent(old))
    return tree.with_changes(default_indent=old.replace("\f", "") or "    ")


def _set_aside_tail(text: str) -> tuple[str, str]:
    """(the text libcst converts, the end of the file put back as it is after the conversion).

    Two ends of a file libcst cannot give back: a last line that is only a backslash before
    CRLF (its tokenizer rejects it; CPython reads it as nothing), and comment and blank lines
    after the last statement of the module when one of them is indented: libcst's module
    footer drops the lines before the last indented one (``x = 1\n  # a\n\n  # b\n`` comes
    back as ``x = 1\n  # b\n``). Neither holds anything a rule converts.
    """
    # (The pattern ends at the end of the text; searched only there, not tried at every position.)
    dangling = DANGLING_CONTINUATION.search(text) if text.endswith("\\\r\n") else None
    body, tail = (text[: dangling.start()], dangling.group()) if dangling else (text, "")
    # Walk back from the end over comment and blank lines (only the end of the file is read).
    cut, indented = len(body), False
    while cut:
        stop = cut - (2 if body.endswith("\r\n", 0, cut) else 1 if body[cut - 1] in "\r\n" else 0)
        start = max(body.rfind("\n", 0, stop), body.rfind("\r", 0, stop)) + 1
        content = body[start:stop].lstrip(" \t\f")
        if content and not content.startswith("#"):
            break  # the module's last line of code
        indented |= body[start:start + 1] in (" ", "\t", "\f")
        cut = start
    if indented:
        body, tail = body[:cut], body[cut:] + tail
    return body, tail


def _failure_message(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "too deeply nested to convert (recursion limit); file left as it was"
    if isinstance(exc, MemoryError):
        return "out of memory while converting; file left as it was"
    return f"internal error in a rule ({type(exc).__name__}: {exc}); file left as it was"


def _unsuppressed(findings: list[Finding], text: str) -> list[Finding]:
    """Findings minus those a ``# migrate: ignore`` comment on their line silences."""
    quiet = suppressed_lines(text)
    if not quiet:
        return findings
    return [f for f in findings if not is_suppressed(quiet, f.line, f.rule)]


def convert_source(data: bytes, index: RuleIndex, path: str = "<string>", options: ConvertOptions | None = None,
                   max_nodes: int | None = None) -> FileResult:
    """Convert one file's bytes. Output bytes keep the input's encoding, BOM and newlines.

    Never raises for any input: every outcome is a result. CPython's own parser sees
    the text first, so input it rejects (including nesting that would crash libcst's
    parser) never reaches libcst.

    ``options`` (:class:`~migrate.engine.results.ConvertOptions`) choose how; the output is
    the same every way. Converting the pruned module can fail where the whole file would not
    (an engine error in the handling of the statements set aside): with ``fallback`` the whole
    file is then converted and the result says so (``engine_error``), else the file fails.
    Library callers get :data:`DEFAULT_OPTIONS` (the test suite makes it strict).
    """
    try:
        encoding = detect_encoding(data)
        text = data.decode(encoding)
    except (SyntaxError, LookupError) as exc:
        return FileResult(path, "failed", error=f"cannot read source encoding: {exc}", original=data)
    except UnicodeDecodeError as exc:
        return FileResult(path, "failed", error=f"not valid {exc.encoding} text (byte {exc.start}); file left as it was", original=data)
    # A file that is not Python 3 is an error whether or not a rule could match, as with any linter.
    tree, error = python_ast(text, path)
    if error:
        return FileResult(path, "failed", error=error, original=data)
    if not mentions_any(text, index):
        return FileResult(path, "unchanged", original=data, converted=data)
    body, tail = _set_aside_tail(text)
    options = options or DEFAULT_OPTIONS
    pruning, scope_shortcut = options.pruning, options.scope_shortcut
    engine_error = ""
    if pruning is False:
        min_lines = None
    else:
        min_lines = MIN_LINES if pruning is True else max(pruning, 0)
    try:
        pruned, table, facts, kept = analyse(body, tree, index, min_lines)
    except RecursionError:  # a tree too deep to walk here is converted whole (and fails cleanly there)
        pruned = table = facts = kept = None
    # A file cannot hold many more syntax nodes than characters: most are never counted.
    if max_nodes is not None and len(body) > max_nodes // 2 and (pruned is None or pruned.needs_planner):
        nodes = _libcst_nodes(tree, pruned)
        if nodes > max_nodes:
            return FileResult(path, "failed", original=data, error=(
                f"too large to convert: {nodes:,} syntax nodes to rewrite, past the {max_nodes:,} that max-file-size "
                f"allows (libcst holds about 6 KB a node); file left as it was"))
    aliases = import_aliases(body, tree, index.added_imports, table.bindings if table is not None else None)
    if not scope_shortcut:
        table = None
    original_tree = tree if index.lowerings else None  # (the native lowering reports at its lines)
    del tree
    if pruned is not None and not pruned.needs_planner:
        # Nothing left for the planner: the conversion is the flags' comment lines, put back
        # with the statements set aside (libcst would give the rest back as it is).
        result, command = TransformSuccess(code=pruned.text, warning_messages=[]), None
    else:
        result, command = _convert_text(body, index, path, pruned, table, scope_shortcut, aliases, facts, kept)
    if pruned is not None:
        restored = pruned.restore(result.code) if isinstance(result, TransformSuccess) else None
        if restored is not None:
            result = TransformSuccess(code=restored, warning_messages=result.warning_messages)
        else:
            # A placeholder moved, or the pruned module failed. The whole file decides: if it
            # converts, that was an engine error, which the run reports (strict, the tests: the
            # file fails with it); if it fails too, that failure is the file's.
            why = (_failure_message(result.error) if isinstance(result, TransformFailure)
                   else "a statement set aside did not come back in its place")
            pruned = None
            result, command = _convert_text(body, index, path, None, table, scope_shortcut, aliases, facts, kept)
            if isinstance(result, TransformSuccess):
                engine_error = f"converting the file with statements set aside failed ({why}); converted whole instead"
                if not options.fallback:
                    return FileResult(path, "failed", error=f"engine error: {engine_error}", original=data)
    if isinstance(result, TransformFailure):
        exc = result.error
        if isinstance(exc, ParserSyntaxError):
            # CPython compiled the file: this is a limit of libcst's own parser (one is known: an
            # expression of more than 3,000 string literals joined implicitly, "a" "b" ...).
            message = (f"cannot parse with libcst, though Python can: line {exc.editor_line}, column "
                       f"{exc.editor_column}: {one_line(exc.message)} (libcst's parser has limits of its own, such as "
                       "at most 3,000 strings joined implicitly in one expression); file left as it was")
        else:
            message = _failure_message(exc)
        return FileResult(path, "failed", error=message, original=data)
    if isinstance(result, TransformSkip):
        return FileResult(path, "skipped", error=result.skip_description, original=data, converted=data)
    findings = command.findings if command is not None else []
    if pruned is not None:
        findings = [replace(f, line=pruned.original_line(f.line)) for f in findings]
        findings += [Finding(path, line, col, rule.id, rule.status, message, api, rule.maps_to)
                     for line, col, rule, api, message in pruned.flagged]
        findings.sort()
    # Only what this run converted is lowered: a file already on the shim keeps its tier.
    if (original_tree is not None and command is not None and result.code != body
            and index.lowered_words is not None and index.lowered_words.search(result.code)):
        try:
            code, notes = lower_text(result.code, original_tree, index.lowerings, path, findings, aliases,
                                     lambda c, code: source.on_deep_stack(_transform, c, code), body)
        except Exception as exc:  # noqa: BLE001 - the shim tier's output stands; the run reports the error
            if not options.fallback:
                return FileResult(path, "failed", error=f"engine error: the native lowering failed: {exc!r}", original=data)
            engine_error = f"the native lowering failed ({exc!r}); the file keeps the shim tier"
        else:
            result = TransformSuccess(code=code, warning_messages=result.warning_messages)
            findings = sorted(findings + notes)
    if result.code != body:
        # The last check before anything is written: a rewrite that gave code Python cannot
        # read (an engine error) leaves the file as it was, and the run says so.
        _, unreadable = python_ast(result.code + tail, path)
        if unreadable is not None:
            return FileResult(path, "failed", original=data, error=(
                f"engine error: the converted code does not parse ({unreadable.removeprefix('cannot parse: ')}); "
                "file left as it was"))
    try:
        converted = (result.code + tail).encode(encoding)
    except UnicodeEncodeError as exc:
        return FileResult(path, "failed", error=f"the converted code cannot be written as {encoding} ({exc.reason}); file left as it was", original=data)
    status = "changed" if converted != data else "unchanged"
    return FileResult(path, status, findings=_unsuppressed(findings, text), original=data, converted=converted,
                      engine_error=engine_error)


def _libcst_nodes(tree: ast.Module, pruned: Pruned | None) -> int:
    """Syntax nodes (less expression contexts) of the statements libcst will see: all but those set aside."""
    skip = {id(stmt) for stmt in pruned.set_aside} if pruned is not None else set()
    count, stack = 0, [tree]
    while stack:
        node = stack.pop()
        if id(node) in skip or isinstance(node, ast.expr_context):
            continue
        count += 1
        stack.extend(ast.iter_child_nodes(node))
    return count


# What library callers get; the run's own options come from its caller. The test suite sets
# fallback off here (tests/conftest.py), so an engine error is a failure there, never hidden.
DEFAULT_OPTIONS = ConvertOptions()


def _convert_text(body: str, index: RuleIndex, path: str, pruned: Pruned | None, table: ImportTable | None = None,
                  shortcuts: bool = True, aliases: dict[str, str] | None = None, facts: LazyFacts | None = None, kept: KeptCalls | None = None):
    command = MigrateCommand(CodemodContext(filename=path, full_module_name=None), index, path, pruned, table,
                             exports="__all__" in body, shortcuts=shortcuts, aliases=aliases, facts=facts, kept=kept)
    try:
        result = source.on_deep_stack(_transform, command, pruned.text if pruned is not None else body)
    except Exception as exc:  # noqa: BLE001 - libcst reports most errors as TransformFailure, not all
        result = TransformFailure(error=exc, traceback_str="")
    return result, command
