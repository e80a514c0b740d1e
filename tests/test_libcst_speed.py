"""libcst's speed-ups (migrate.engine._libcst_speed): libcst's own answers, faster, and only
inside a conversion, on the converting thread, for libcst's visitors and this package's.

Each speed-up is compared with libcst's own code on every fixture. The comparisons run with
the speed-ups on when this libcst is one of ``TESTED_LIBCST`` and ``MIGRATE_LIBCST_SPEEDUPS``
is not ``0``; otherwise the same tests check the fallbacks (libcst's own code, the same
answers), and those that need the speed-ups are skipped. The rest check what is never
affected: a visitor of anyone else's, any other thread, node validation, and libcst itself
before, during and after a run.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

from migrate.engine import _libcst_speed
from migrate.engine.runner import RuleSelection, convert_source, rule_index

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    [*ROOT.glob("fixtures/convert/*/input.py"), *ROOT.glob("fixtures/programs/*/original.py"),
     *ROOT.glob("fixtures/programs/*/*.py"), ROOT / "examples" / "train.py"]
)
# libcst's own, as this module found them (nothing of migrate replaces anything at import).
LIBCST_VISIT = cst.CSTNode.__dict__["visit"]
LIBCST_POST_INIT = cst.CSTNode.__dict__["__post_init__"]

ON = _libcst_speed.available()
needs_speedups = pytest.mark.skipif(not ON, reason="speed-ups off (switched off, or a libcst not in TESTED_LIBCST)")
# A module name the speed-ups take for this package's: the visitors below get them.
PACKAGE_MODULE = "migrate.tests_only"
# The stand-ins' own names: all of _libcst_speed a caller the speed-ups are not for may run
# through (each calls libcst's function straight on).
STAND_INS = {"gather", "get_visitors", "gen_batchable", "visit", "__post_init__", "_parenthesize", "_codegen"}

STRATEGY = '''\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])


def scale(x, factor=(2)):
    return [x * factor for _ in range(3)]
'''


def speedups():
    return _libcst_speed.speedups()


def calls_in(function):
    """``function()``, and (name, file name) of every Python function this thread called meanwhile."""
    seen: set[tuple[str, str]] = set()

    def profile(frame, event, arg):
        if event == "call":
            seen.add((frame.f_code.co_name, Path(frame.f_code.co_filename).name))

    sys.setprofile(profile)
    try:
        result = function()
    finally:
        sys.setprofile(None)
    return result, seen


def libcsts_own_walk(calls) -> bool:
    """Whether the calls are those of libcst's own visit: its children visited through
    ``_visit_and_replace_children``, nothing of the speed-ups but stand-ins passing the call on."""
    ours = {name for name, file in calls if file == "_libcst_speed.py"}
    return ("_visit_and_replace_children" in {name for name, _ in calls}) and ours <= STAND_INS


# -- what is never affected --------------------------------------------------------------------


class _UsersVisitor(cst.CSTVisitor):
    """A visitor of someone else's (this test module's): libcst's own walk, always."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Name(self, node) -> None:
        self.names.append(node.value)


class _UsersTransformer(cst.CSTTransformer):
    def leave_Name(self, original, updated):
        return updated.with_changes(value=updated.value.upper())


class _PackagesVisitor(_UsersVisitor):
    """The same visitor, as if this package's: the speed-ups walk it (on the converting thread)."""

    __module__ = PACKAGE_MODULE


def _what_a_user_sees(module: cst.Module) -> dict:
    """What a visitor, a transformer, node validation and positions of someone else's give on
    this thread, and whether each ran libcst's own code."""
    users = _UsersVisitor()
    _, calls = calls_in(lambda: module.visit(users))
    transformed, transformer_calls = calls_in(lambda: module.visit(_UsersTransformer()))
    try:
        cst.Name("1x")
        validated = False
    except cst.CSTValidationError:
        validated = True
    positions, position_calls = calls_in(lambda: dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)))
    packages = _PackagesVisitor()
    _, package_calls = calls_in(lambda: module.visit(packages))
    return {
        "names": users.names, "libcst's walk": libcsts_own_walk(calls),
        "upper": transformed.code, "libcst's transform": libcsts_own_walk(transformer_calls),
        "validated": validated,
        "positions": positions,
        "libcst's positions": {n for n, f in position_calls if f == "_libcst_speed.py"} <= STAND_INS,
        "package's names": packages.names, "package's walk is libcst's": libcsts_own_walk(package_calls),
    }


def test_a_users_visitor_inside_the_speedups_runs_libcsts_code():
    """On the converting thread itself, inside speedups(): a visitor and a transformer defined
    outside libcst and this package walk as libcst walks them (children through
    _visit_and_replace_children), a bad node is refused, and MetadataWrapper's positions are
    libcst's own; this package's kind of visitor, beside them, does get the speed-ups."""
    module = cst.parse_module(STRATEGY)
    before = _what_a_user_sees(module)
    with speedups():
        inside = _what_a_user_sees(module)
    assert before["libcst's walk"] and before["package's walk is libcst's"] and before["validated"]
    for key in ("names", "libcst's walk", "upper", "libcst's transform", "validated", "positions", "libcst's positions"):
        assert inside[key] == before[key], key
    assert inside["package's names"] == before["package's names"]
    assert inside["package's walk is libcst's"] is not ON


def test_another_thread_during_a_conversion_runs_libcsts_code_and_checks_its_nodes(monkeypatch):
    """While a conversion parses (its nodes unchecked, the stand-ins in), another thread gets
    libcst's own walks and positions, and a node it makes with a bad value is refused, even
    for this package's kind of visitor: the speed-ups are the converting thread's alone."""
    module = cst.parse_module(STRATEGY)
    before = _what_a_user_sees(module)
    parsing, checked = threading.Event(), threading.Event()
    converting: dict = {}
    meanwhile: dict = {}
    real_parse = cst.parse_module

    def parse_and_wait(code, *args, **kwargs):
        if not parsing.is_set():
            converting["trusting"] = _libcst_speed._here.trusting
            try:
                cst.Name("1x")
                converting["checked"] = False
            except cst.CSTValidationError:
                converting["checked"] = True
            parsing.set()
            checked.wait(60)
        return real_parse(code, *args, **kwargs)

    def other_thread():
        try:
            assert parsing.wait(60), "the conversion never parsed"
            meanwhile["replaced"] = cst.CSTNode.__dict__["visit"] is not LIBCST_VISIT
            meanwhile.update(_what_a_user_sees(module))
        finally:
            checked.set()

    monkeypatch.setattr(cst, "parse_module", parse_and_wait)
    thread = threading.Thread(target=other_thread)
    thread.start()
    result = convert_source(STRATEGY.encode(), rule_index(RuleSelection()), "t.py")
    thread.join(60)
    assert result.status == "changed", result.error
    assert converting and meanwhile, "the other thread did not run during the conversion"
    assert meanwhile["replaced"] is ON  # the stand-ins were in while the other thread ran
    assert converting["trusting"] is ON and converting["checked"] is not ON
    for key in ("names", "libcst's walk", "upper", "libcst's transform", "validated", "positions", "libcst's positions",
                "package's names", "package's walk is libcst's"):
        assert meanwhile[key] == before[key], key
    assert meanwhile["validated"] and meanwhile["package's walk is libcst's"]


_LIBCST_AS_IT_IS = r'''
import json, sys
import libcst, libcst.codemod, libcst.codemod.visitors, libcst.helpers, libcst.matchers, libcst.metadata

def snapshot():
    """Every attribute of every libcst module and of every class defined there."""
    found = {}
    for name, module in sorted(sys.modules.items()):
        if name != "libcst" and not name.startswith("libcst."):
            continue
        for key, value in list(vars(module).items()):
            found[name, key] = value
            if isinstance(value, type) and value.__module__ == name:
                for attr, held in list(vars(value).items()):
                    found[name, key, attr] = held
    return found

def changed(was):
    """What is not the same object as in ``was``, and what holds something of migrate's now
    (libcst adds caches and imports of its own as it runs)."""
    now = snapshot()
    missing = object()
    return sorted([str(key) for key in was if now.get(key, missing) is not was[key]]
                  + [str(key) for key, value in now.items() if str(getattr(value, "__module__", "")).startswith("migrate")])

first = snapshot()
visit = libcst.CSTNode.visit
from migrate.engine import _libcst_speed, convert, runner
report = {"after import": changed(first)}
with _libcst_speed.speedups():
    report["replaced inside"] = libcst.CSTNode.visit is not visit
report["after leaving"] = changed(first)
data = open(sys.argv[1], "rb").read()
result = runner.convert_source(data, runner.rule_index(runner.RuleSelection()), sys.argv[1])
report["status"] = result.status
report["after a conversion"] = changed(first)
for jobs in (1, 2):
    results = list(runner.run_files(sys.argv[1:], runner.RuleSelection(), jobs=jobs))
    report[f"--jobs {jobs}"] = [r.status for r in results]
    report[f"after a run, --jobs {jobs}"] = changed(first)
report["visit is libcst's"] = libcst.CSTNode.visit is visit
print(json.dumps(report))
'''


def test_libcst_is_as_it_was_after_import_and_after_a_run():
    """In a fresh interpreter: importing the engine changes no attribute of any libcst module or
    class, entering speedups() puts the stand-ins in (when on), and leaving it, converting a
    file, or a run of files in this process or in worker processes, leaves every one of them
    the object it was before the engine was imported."""
    files = [str(ROOT / "examples" / "train.py"), str(ROOT / "fixtures" / "convert" / "keras_fit_in_scope" / "input.py")]
    done = subprocess.run([sys.executable, "-c", _LIBCST_AS_IT_IS, *files],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["after import"] == []
    assert report["replaced inside"] is ON
    assert report["after leaving"] == []
    assert report["status"] == "changed"
    assert report["after a conversion"] == []
    for jobs in (1, 2):
        assert report[f"--jobs {jobs}"] == ["changed", "changed"]
        assert report[f"after a run, --jobs {jobs}"] == []
    assert report["visit is libcst's"]


def test_a_run_swaps_libcsts_functions_in_once(monkeypatch, tmp_path):
    """A run of many files puts the stand-ins in once, at its first conversion, and takes them
    out at its end (not at every file); between its files the converting thread is not inside
    speedups(), and libcst's visit is still the stand-in, which passes it on to libcst's own."""
    from migrate.engine.runner import run_files

    installs: list[int] = []
    install = _libcst_speed._install
    monkeypatch.setattr(_libcst_speed, "_install", lambda: installs.append(1) or install())
    files = []
    for n in range(4):
        path = tmp_path / f"f{n}.py"
        path.write_text(STRATEGY.replace("scale", f"scale{n}"))
        files.append(str(path))
    between = []
    for result in run_files(files, RuleSelection()):
        assert result.status == "changed", result.error
        between.append((_libcst_speed.active(), cst.CSTNode.__dict__["visit"] is LIBCST_VISIT))
    assert installs == ([1] if ON else [])
    assert between == [(False, not ON)] * 4
    assert cst.CSTNode.__dict__["visit"] is LIBCST_VISIT and _libcst_speed._holders == 0


def test_an_interrupt_while_the_run_takes_the_speedups_ends_it_with_the_interrupt(monkeypatch, tmp_path):
    """Ctrl-C landing inside the run's hold on the speed-ups (while it is being taken) leaves
    the run with nothing to release: the KeyboardInterrupt is what comes out, not an error
    about a half-made hold, and nothing stays swapped in."""
    from migrate.engine.runner import run_files

    def interrupted():
        raise KeyboardInterrupt

    path = tmp_path / "f.py"
    path.write_text(STRATEGY)
    import libcst  # noqa: F401 - loaded, so the run takes its hold

    monkeypatch.setattr(_libcst_speed, "_wanted", interrupted)
    with pytest.raises(KeyboardInterrupt):
        list(run_files([str(path)], RuleSelection()))
    assert _libcst_speed._holders == 0 and cst.CSTNode.__dict__["visit"] is LIBCST_VISIT
    held = _libcst_speed.held()
    held.__exit__(None, None, None)  # never entered: nothing to undo
    assert _libcst_speed._holders == 0


def test_threads_entering_and_leaving_put_libcst_back():
    """Threads entering and leaving speedups() at once (nested too) leave nothing in after the last leaves."""
    module = cst.parse_module(STRATEGY)
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work():
        try:
            start.wait(30)
            for _ in range(25):
                with speedups():
                    with speedups():
                        assert _libcst_speed.active() is ON
                        visitor = _PackagesVisitor()
                        module.visit(visitor)
                        assert visitor.names
                    assert _libcst_speed.active() is ON
                assert not _libcst_speed.active()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert _libcst_speed._holders == 0 and _libcst_speed._installed == []
    assert cst.CSTNode.__dict__["visit"] is LIBCST_VISIT and cst.CSTNode.__dict__["__post_init__"] is LIBCST_POST_INIT
    assert "_codegen" not in cst.SimpleStatementLine.__dict__


def _no_stand_ins():
    raise ImportError("an internal this libcst does not have")


@pytest.mark.parametrize("way", ["untested libcst", "switched off", "an internal moved"])
def test_without_the_speedups_plain_libcst_gives_the_same_output(way, monkeypatch):
    """A libcst not in TESTED_LIBCST, MIGRATE_LIBCST_SPEEDUPS=0, or an internal not where the
    stand-ins expect it: speedups() replaces nothing, and the conversion is the same."""
    index = rule_index(RuleSelection())
    data = (ROOT / "examples" / "train.py").read_bytes()
    expected = convert_source(data, index, "train.py")
    if way == "untested libcst":
        monkeypatch.setattr(_libcst_speed, "TESTED_LIBCST", ("0.0.1",))
    elif way == "switched off":
        monkeypatch.setenv(_libcst_speed.SWITCH, "0")
    else:
        monkeypatch.setattr(_libcst_speed, "_stand_ins", None)
        monkeypatch.setattr(_libcst_speed, "_make_stand_ins", _no_stand_ins)
    assert not _libcst_speed.available()
    with speedups():
        assert not _libcst_speed.active()
        assert cst.CSTNode.__dict__["visit"] is LIBCST_VISIT
        module = _libcst_speed.parse_module(STRATEGY)
        positions = _libcst_speed.positions(module)
        assert not isinstance(positions, _libcst_speed.Positions)
        assert dict(positions) == dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
        assert _libcst_speed.code(module, positions) == STRATEGY
    got = convert_source(data, index, "train.py")
    assert expected.status == got.status == "changed"
    assert (got.converted, got.findings) == (expected.converted, expected.findings)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_converts_the_same_with_the_speedups_off(path, monkeypatch):
    index = rule_index(RuleSelection())
    data = path.read_bytes()
    on = convert_source(data, index, path.name)
    monkeypatch.setenv(_libcst_speed.SWITCH, "0")
    off = convert_source(data, index, path.name)
    assert (on.status, on.converted, on.findings) == (off.status, off.converted, off.findings)


def test_the_tested_versions_are_the_ends_of_the_pinned_range():
    """pyproject.toml allows exactly the libcst releases from the lowest tested to the highest."""
    text = (ROOT / "pyproject.toml").read_text()
    low, high = _libcst_speed.TESTED_LIBCST[0], _libcst_speed.TESTED_LIBCST[-1]
    assert f'"libcst>={low},<={high}"' in text


# -- each speed-up gives libcst's answer -------------------------------------------------------


def test_remembered_libcst_introspection_keeps_decorated_visitors_working():
    """migrate.engine._libcst_speed remembers only *empty* matcher scans: decorated methods still run."""
    seen: list[str] = []

    class Decorated(m.MatcherDecoratableVisitor):
        @m.visit(m.Name("tf"))
        def saw_tf(self, node: cst.Name) -> None:
            seen.append(node.value)

    class Plain(m.MatcherDecoratableVisitor):
        pass

    Decorated.__module__ = Plain.__module__ = PACKAGE_MODULE
    module = cst.parse_module("import tensorflow as tf\nx = tf.constant(1)\n")
    with speedups():
        for _ in range(3):  # the first instance scans; later ones must not lose the decorated method
            module.visit(Decorated())
            module.visit(Plain())
    assert seen == ["tf", "tf"] * 3  # `as tf` and `tf.constant`, on every visit


class _Recorder(cst.CSTVisitor):
    """Every callback of a walk, by node identity; its attribute callbacks are its own code."""

    __module__ = PACKAGE_MODULE

    def __init__(self, skip: type | None = None) -> None:
        self.events: list[tuple] = []
        self.skip = skip

    def on_visit(self, node):
        self.events.append(("visit", id(node)))
        return not (self.skip and isinstance(node, self.skip))

    def on_leave(self, node):
        self.events.append(("leave", id(node)))

    def on_visit_attribute(self, node, attribute):
        self.events.append(("visit", id(node), attribute))

    def on_leave_attribute(self, node, attribute):
        self.events.append(("leave", id(node), attribute))


class _ClassBases(cst.CSTVisitor):
    """A visitor with one attribute method of its own (as libcst's scope analysis has)."""

    __module__ = PACKAGE_MODULE

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def visit_Name(self, node):
        self.events.append(("name", node.value))

    def visit_ClassDef_bases(self, node):
        self.events.append(("bases", id(node)))

    def leave_ClassDef_bases(self, node):
        self.events.append(("/bases", id(node)))


class _MatcherClassBases(m.MatcherDecoratableVisitor):
    """A matcher visitor with attribute methods, one of them decorated."""

    __module__ = PACKAGE_MODULE

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple] = []

    def visit_Name(self, node):
        self.events.append(("name", node.value))

    def visit_ClassDef_bases(self, node):
        self.events.append(("bases", id(node)))

    @m.call_if_inside(m.ClassDef(name=m.Name("K")))
    def leave_Call_args(self, node):
        self.events.append(("/args", id(node)))


class _ModuleOnly(cst.CSTVisitor):
    """Callbacks for the module alone: the walk does not go below it."""

    __module__ = PACKAGE_MODULE

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def visit_Module(self, node):
        self.events.append(("module", len(node.body)))

    def leave_Module(self, node):
        self.events.append(("/module", id(node)))


class _MatcherModuleOnly(m.MatcherDecoratableVisitor):
    """A matcher visitor whose own methods are the module's, and one decorated for names:
    the decorated one is called below the module, so this one is walked whole."""

    __module__ = PACKAGE_MODULE

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple] = []

    def leave_Module(self, node):
        self.events.append(("/module", id(node)))

    @m.visit(m.Name())
    def any_name(self, node):
        self.events.append(("name", node.value))


EXTRA_SYNTAX = """
from . import *
from .a import (b as c, d)
class K(Base, metaclass=M):
    x: int = 1
    def f[T: int = str, *Ts, **P](self, /, a, *args, b=2, **kw) -> "T":
        print(f"{a!r:>{b}} {a=}", t"{a}" if False else 0, lambda q=1: q)
        match a:
            case [1, *rest] | {"k": _} if rest: pass
            case K(x=1): pass
        async def g():
            async with a as (b, c): await b
        try: pass
        except* ValueError as e: raise
        return [i for i in range(3) if i], {k: v for k, v in {}.items()}, (yield a)
type Alias[T] = list[T]
"""


EACH_SOURCE = pytest.mark.parametrize("source", SOURCES + ["EXTRA_SYNTAX"],
                                      ids=lambda p: p if isinstance(p, str) else f"{p.parent.name}/{p.name}")


def parsed(source) -> tuple[str, cst.Module]:
    """A source's text and libcst's tree of it (the test skipped for syntax libcst cannot parse)."""
    text = EXTRA_SYNTAX if source == "EXTRA_SYNTAX" else source.read_text()
    try:
        return text, cst.parse_module(text)
    except cst.ParserSyntaxError:
        pytest.skip("syntax this libcst cannot parse")


def test_the_speedups_walk_this_packages_visitors_and_libcsts_only(monkeypatch):
    """Inside speedups(), a visitor of this package (or of libcst) is walked by the speed-ups;
    one from anywhere else, and any visitor outside speedups(), by libcst."""
    walks: list[str] = []
    walk = _libcst_speed._walk

    def counted(node, visitor, *rest):
        if isinstance(node, cst.Module):
            walks.append(type(visitor).__name__)
        return walk(node, visitor, *rest)

    monkeypatch.setattr(_libcst_speed, "_walk", counted)
    module = cst.parse_module(STRATEGY)
    module.visit(_PackagesVisitor())
    with speedups():
        module.visit(_UsersVisitor())
        module.visit(_PackagesVisitor())
        module.visit(_Recorder())
    assert walks == (["_PackagesVisitor", "_Recorder"] if ON else [])


@needs_speedups
@EACH_SOURCE
def test_read_only_walk_calls_what_libcst_calls(source):
    """migrate.engine._libcst_speed walks a tree for a CSTVisitor without rebuilding it: the
    same callbacks, on the same nodes, in the same order as libcst's own visit."""
    text, module = parsed(source)
    for make in (_Recorder, lambda: _Recorder(skip=cst.Call), _ClassBases, _MatcherClassBases, _ModuleOnly,
                 _MatcherModuleOnly):
        theirs, ours = make(), make()
        module.visit(theirs)  # libcst's own, all the way down
        with speedups():
            assert module.visit(ours) is module
        assert ours.events == theirs.events


class _Reshape(cst.CSTTransformer):
    """Moves statements: every `with` body one level out, every `if` body's first statement
    into its `else`, and renames `tf`: what the final code must not copy from the positions pass."""

    def leave_With(self, original, updated):
        return cst.FlattenSentinel(updated.body.body) if isinstance(updated.body, cst.IndentedBlock) else updated

    def leave_If(self, original, updated):
        if isinstance(updated.body, cst.IndentedBlock) and len(updated.body.body) > 1 and updated.orelse is None:
            first, *rest = updated.body.body
            return updated.with_changes(body=updated.body.with_changes(body=rest),
                                        orelse=cst.Else(body=cst.IndentedBlock(body=[first])))
        return updated

    def leave_Name(self, original, updated):
        return updated.with_changes(value="ms") if updated.value == "tf" else updated

    def on_visit(self, node):
        if isinstance(node, cst.SimpleStatementLine):  # the others stay the same objects
            return bool(m.findall(node, m.Name("tf")))
        return super().on_visit(node)


@EACH_SOURCE
def test_final_code_copies_only_what_stayed_where_it_was(source):
    """The final code copies the tokens of statements left as they were (the positions pass
    generated them): the same text as libcst's own codegen, after rewrites that move
    statements to other indentations and into other blocks."""
    text, module = parsed(source)
    with speedups():
        positions = _libcst_speed.positions(module)
        assert _libcst_speed.code(module, positions) == module.code == text
        new = module.visit(_Reshape())
        assert _libcst_speed.code(new, positions) == new.code
        if ON and len(m.findall(module, m.SimpleStatementLine())) > 3:
            assert any(line in positions._texts for line in m.findall(new, m.SimpleStatementLine())), "nothing copied"
        tabbed = new.with_changes(default_indent="\t")  # another default: nothing is copied
        assert _libcst_speed.code(tabbed, positions) == tabbed.code
    assert _libcst_speed.code(new, positions) == new.code  # (outside: libcst's codegen)


@EACH_SOURCE
def test_the_trusting_parse_is_libcsts_parse(source):
    """The parse that skips node validation makes the same tree, and validation is on again after it."""
    text, theirs = parsed(source)
    with speedups():
        ours = _libcst_speed.parse_module(text)
        with pytest.raises(cst.CSTValidationError):
            cst.Name("not an identifier")
    assert ours.deep_equals(theirs) and ours.code == text


def test_the_trusting_parse_validates_again_after_a_syntax_error():
    with speedups():
        with pytest.raises(cst.ParserSyntaxError):
            _libcst_speed.parse_module("def f(:\n")
        assert not _libcst_speed._here.trusting
        with pytest.raises(cst.CSTValidationError):
            cst.Name("1x")
    assert cst.CSTNode.__dict__["__post_init__"] is LIBCST_POST_INIT


class _LateCallbacks(cst.CSTVisitor):
    """Callbacks for the module only in the class; names set on the instance, and methods
    replaced on the class after a first walk."""

    __module__ = PACKAGE_MODULE

    def __init__(self, on_instance: bool) -> None:
        self.events: list[str] = []
        if on_instance:
            self.visit_Name = lambda node: self.events.append(node.value)

    def leave_Module(self, node):
        self.events.append("/module")

    def visit_Call(self, node):
        self.events.append("call")


def test_callbacks_are_found_as_libcst_finds_them(monkeypatch):
    """A callback set on the instance is called (the walk does not stop at the module), and a
    method replaced on the class after a first walk is the one called."""
    module = cst.parse_module("f(a, b)\n")
    with speedups():
        ours = _LateCallbacks(on_instance=True)
        module.visit(ours)
        assert ours.events == ["call", "f", "a", "b", "/module"]
        first = _LateCallbacks(on_instance=False)
        module.visit(first)
        assert first.events == ["call", "/module"]
        monkeypatch.setattr(_LateCallbacks, "visit_Call", lambda self, node: self.events.append("replaced") or False)
        later = _LateCallbacks(on_instance=False)
        module.visit(later)
        assert later.events == ["replaced", "/module"]


def test_parentheses_context_keeps_libcsts_error_behaviour():
    """An error in an expression's codegen leaves its closing parentheses out and goes on;
    one the position's context swallows stays swallowed and the parentheses close."""
    from libcst._nodes.expression import _BaseParenthesizedNode
    from libcst._nodes.internal import CodegenState

    class Swallowing(CodegenState):
        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return _Swallow()

    class _Swallow:
        def __enter__(self):
            return None

        def __exit__(self, *exc):
            return True

    node = cst.parse_expression("((x))")
    ours, theirs = _libcst_speed._Parenthesized, _BaseParenthesizedNode._parenthesize
    for state_class in (CodegenState, Swallowing):
        outcomes = []
        for parenthesize in (ours, theirs):
            state = state_class(default_indent="    ", default_newline="\n")
            try:
                with parenthesize(node, state):
                    state.add_token("x")
                    raise ValueError("codegen")
            except ValueError:
                outcomes.append(("raised", "".join(state.tokens)))
            else:
                outcomes.append(("swallowed", "".join(state.tokens)))
        assert outcomes[0] == outcomes[1], state_class


@needs_speedups
def test_the_parentheses_stand_in_is_for_plain_codegen_on_this_thread_only():
    """libcst's plain codegen state and this module's get the plain context manager; a state
    of anyone else's (libcst's positions' too) gets libcst's own, as does another thread."""
    from libcst._nodes.expression import _BaseParenthesizedNode
    from libcst._nodes.internal import CodegenState
    from libcst.metadata.position_provider import PositionProvidingCodegenState

    class Someones(CodegenState):
        pass

    node = cst.parse_expression("(x)")
    kinds = {}
    with speedups():
        parenthesize = _BaseParenthesizedNode._parenthesize
        for state_class in (CodegenState, Someones):
            kinds[state_class.__name__] = type(parenthesize(node, state_class(default_indent="    ", default_newline="\n")))
        positions_state = PositionProvidingCodegenState(default_indent="    ", default_newline="\n", provider=None)
        kinds["positions"] = type(parenthesize(node, positions_state))
        elsewhere = threading.Thread(target=lambda: kinds.__setitem__("other thread", type(
            parenthesize(node, CodegenState(default_indent="    ", default_newline="\n")))))
        elsewhere.start()
        elsewhere.join(30)
    assert kinds.pop("CodegenState") is _libcst_speed._Parenthesized
    assert _libcst_speed._Parenthesized not in kinds.values(), kinds


def test_the_rewriter_dispatches_every_method_it_has():
    """The Rewriter calls its visit_/leave_ methods from tables and ignores attribute callbacks:
    the tables hold every one of its methods, and it has no visit_<Node>_<field> method."""
    from migrate.engine import rewriter as codemod

    names = {n for klass in codemod.Rewriter.__mro__ if klass.__module__.startswith("migrate.") for n in vars(klass)}
    callbacks = {n for n in names if n.startswith(("visit_", "leave_"))}
    assert callbacks, "the Rewriter has callbacks"
    assert not any(_libcst_speed._ATTRIBUTE_METHOD.match(n) for n in callbacks)
    tabled = {*codemod._REWRITER_VISITS.values(), *codemod._REWRITER_LEAVES.values()}
    assert tabled == callbacks


@needs_speedups
def test_a_visitor_of_the_module_alone_is_not_walked_below_it(monkeypatch):
    """AddImportsVisitor's gatherer of the imports at the top reads them in its leave_Module:
    same answer, and no node below the module is visited."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors._add_imports import _GatherTopImportsBeforeStatements

    module = cst.parse_module("from tensorflow import keras as k, distribute\nimport a.b\n" + STRATEGY)
    theirs = _GatherTopImportsBeforeStatements(CodemodContext())
    module.visit(theirs)

    def no_walk(*args):
        raise AssertionError("walked below the module")

    monkeypatch.setattr(_libcst_speed, "_walk", no_walk)
    with speedups():
        ours = _GatherTopImportsBeforeStatements(CodemodContext())
        assert module.visit(ours) is module
        with pytest.raises(AssertionError, match="walked below"):
            module.visit(_MatcherModuleOnly())  # a decorated method for names: walked
    assert [cst.Module([]).code_for_node(i) for i in ours.all_imports] == [cst.Module([]).code_for_node(i) for i in theirs.all_imports]
    assert len(ours.all_imports) == 3  # (the two above and STRATEGY's own)
    for name in ("module_imports", "module_aliases", "object_mapping", "alias_mapping"):
        assert getattr(ours, name) == getattr(theirs, name), name


@EACH_SOURCE
def test_positions_are_libcsts(source):
    """migrate.engine._libcst_speed.positions gives every node libcst's own position (libcst's
    computed outside speedups(): its own codegen, its own parentheses' context manager)."""
    text, module = parsed(source)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert module.code == text
    with speedups():
        ours = _libcst_speed.positions(module)
        assert isinstance(ours, _libcst_speed.Positions) is ON
        assert module.code == text
    assert len(ours) == len(theirs) > 0
    assert dict(ours) == dict(theirs)


def _scope_summary(module: cst.Module):
    """libcst's scope analysis of ``module`` by node identity: each node's scope kind, and
    each scope's bindings with what reads them."""
    scopes = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    own = _Recorder()
    module.visit(own)
    ids = {event[1] for event in own.events}

    def key(node) -> int | str:  # nodes the analysis parsed from string annotations are new each time
        return id(node) if id(node) in ids else type(node).__name__

    nodes = sorted((key(node), type(scope).__name__) for node, scope in scopes.items() if scope is not None and id(node) in ids)
    bindings = sorted({(type(scope).__name__, a.name, str(key(getattr(a, "node", None))), tuple(sorted(str(key(r.node)) for r in a.references)))
                       for scope in {s for s in scopes.values() if s is not None} for a in scope.assignments})
    return nodes, bindings


@EACH_SOURCE
def test_scope_analysis_is_libcsts(source):
    """With the read-only walk (and no second walk after the scope analysis's own), libcst's
    scope analysis finds the same scopes, bindings and reads as with libcst's own visit."""
    text, module = parsed(source)
    theirs = _scope_summary(module)
    with speedups():
        assert _scope_summary(module) == theirs
    assert theirs[1]


def test_read_only_walk_knows_every_node_class():
    """Every node class's visited fields are read from libcst's source (none falls back to rebuilding)."""
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    concrete = {c for c in subclasses(cst.CSTNode) if not inspect.isabstract(c) and c.__module__.startswith("libcst.")}
    assert len(concrete) > 150
    assert [c.__name__ for c in concrete if _libcst_speed.fields_of(c) is None] == []
    assert _libcst_speed.fields_of(cst.Attribute) == (("lpar", False), ("value", False), ("dot", False), ("attr", False), ("rpar", False))


def test_method_source_is_read_as_inspect_reads_it():
    """The visited fields come from each method's lines as its code spans them (not inspect's
    tokenizing of the file): the same tree as inspect.getsource gives, for every node class."""
    methods = [c._visit_and_replace_children for c in vars(cst).values() if isinstance(c, type) and issubclass(c, cst.CSTNode)]
    assert len(methods) > 150
    for method in methods:
        assert ast.dump(_libcst_speed._parsed(method)) == ast.dump(ast.parse(textwrap.dedent(inspect.getsource(method)))), method


def test_method_source_that_does_not_parse_alone_is_read_by_inspect(tmp_path, monkeypatch):
    """A function whose last lines carry no instruction (a docstring alone compiles to none)
    cut short would not parse: it is read again as inspect reads it."""
    import importlib.util

    path = tmp_path / "shaped.py"
    path.write_text('def f(x):\n    """A docstring\n    on two lines."""\n')
    spec = importlib.util.spec_from_file_location("shaped", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    read = []
    getsource = inspect.getsource
    monkeypatch.setattr(_libcst_speed.inspect, "getsource", lambda f: read.append(f) or getsource(f))
    tree = _libcst_speed._parsed(module.f)
    assert ast.dump(tree) == ast.dump(ast.parse(path.read_text()))
    assert read == [module.f]


@pytest.mark.parametrize("switch", ["", "0"])
def test_libcst_matchers_are_imported_without_rendering_signatures(switch):
    """libcst.matchers' ~175 dataclasses are made without Python rendering each signature into a
    docstring (a tenth of a one-file run), and dataclasses is itself again afterwards; with the
    speed-ups switched off, they are rendered as always."""
    code = (
        "import dataclasses, inspect, sys\n"
        "import migrate.engine.convert\n"
        "import libcst.matchers as m\n"
        "quick = sys.argv[1] != '0'\n"
        "assert (m.Name.__doc__ == 'Name') is quick, m.Name.__doc__\n"
        "assert dataclasses.inspect is inspect\n"
        "@dataclasses.dataclass\n"
        "class A:\n"
        "    x: int\n"
        "assert A.__doc__ == 'A(x: int)', A.__doc__\n"
        "assert m.matches(__import__('libcst').Name('x'), m.Name('x'))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), _libcst_speed.SWITCH: switch}
    done = subprocess.run([sys.executable, "-c", code, switch], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
