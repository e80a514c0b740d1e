"""Property tests of the engine on generated and mutated programs.

Inputs:

- programs generated from Python's grammar (``hypothesmith.from_grammar``) and from
  libcst's node types (``hypothesmith.from_node``), as they are and behind a header
  that makes the engine analyse them (a TensorFlow import and a strategy);
- the golden fixtures (``fixtures/convert/*/input.py``) mutated with libcst: a
  tf.distribute call, scope or reduce put at a random place, inside a lambda, a
  decorator, a default argument, a comprehension, a nested function, a class body,
  ``async`` code, ``match``, a walrus, ``except*``, an f-string or after a
  backslash continuation.

Properties, on every input CPython accepts:

- ``convert_source`` never raises and never returns "failed";
- the output parses (CPython; the second conversion below is libcst's view);
- converting the output again changes nothing;
- a file the engine has nothing to say about comes out byte-identical;
- setting aside the statements no rule can reach and taking names from the file's
  import table (``migrate.engine.prune``, forced on for every size of file) give the
  same bytes and findings as converting the whole file with libcst's scope analysis.

Every failure found is kept under ``fixtures/regressions/<name>/input.py`` and checked
here on every run. A ``KNOWN_FAILURE`` file there marks an engine bug not fixed yet
and says where (the case is an expected failure, strict, so the fix shows up); an
``EXPECTED_ERROR`` file holds the start of the clean error an input past a resource
limit must give (it used to crash the process).

Profiles: ``ci`` (default: derandomized, sized for about two minutes on two busy
cores) and ``fuzz`` for long local runs::

    HYPOTHESIS_PROFILE=fuzz .venv/bin/python -m pytest tests/test_fuzz.py -x
"""

from __future__ import annotations

import ast
import os
import random
import warnings
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from migrate.engine.aliases import shadowed_names
from migrate.engine.tfvalues import mixed_calls
from migrate.engine.results import ConvertOptions
from migrate.engine.runner import FileResult, RuleSelection, convert_source, rule_index
from tests.helpers import ReadsBackAsBuilt

# Generated programs hold things like `"a"(1)`; CPython warns while hypothesmith compiles them.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "fixtures" / "convert").glob("*/input.py"))
REGRESSIONS = ROOT / "fixtures" / "regressions"

_COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("fuzz", derandomize=False, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
# Examples per test: the ci numbers keep the module near two minutes; fuzz is for hours.
SCALE = {"ci": 1, "fuzz": 50}.get(os.environ.get("HYPOTHESIS_PROFILE", "ci"), 1)


def _index():
    return rule_index(RuleSelection())


def parses(code: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<fuzz>", "exec", flags=0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def convert(data: bytes, path: str = "fuzz.py") -> FileResult:
    with ReadsBackAsBuilt():  # the output's code means the tree the rewrite built
        return convert_source(data, _index(), path)


def _tree(code: bytes) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)


def check_properties(data: bytes, path: str = "fuzz.py") -> FileResult:
    """Assert every property on one input CPython accepts; returns the first conversion."""
    result = convert(data, path)
    assert result.status != "failed", result.error
    assert result.status in ("changed", "unchanged", "skipped")
    out = result.converted
    if result.status == "unchanged":
        assert out == data
    if not result.findings:
        assert out == data, "nothing was found, yet the file changed"
    assert parses(out), "the output does not parse:\n" + out.decode("utf-8", "replace")
    if result.status == "changed":
        taken = shadowed_names(_tree(data), _tree(out))
        assert not taken, f"an added import takes {sorted(taken)} from the file's own code"
        mixed = mixed_calls(_tree(data), _tree(out))
        assert not mixed, f"a call that stays TensorFlow is given MindSpore: {mixed[0]}"
    again = convert(out, path)
    assert again.status != "failed", again.error
    assert again.converted == out, "a second run changed the output"
    # Setting statements aside (migrate.engine.prune) changes the speed, never the result.
    for pruning, shortcut in ((0, True), (False, False)):
        other = convert_source(data, _index(), path, ConvertOptions(pruning=pruning, scope_shortcut=shortcut))
        assert (other.status, other.converted, other.findings) == (result.status, result.converted, result.findings), \
            f"pruning={pruning!r}, scope_shortcut={shortcut} gives another result"
    return result


# -- generated programs -----------------------------------------------------------------------

HEADER = "import tensorflow as tf\n\nstrategy = tf.distribute.MirroredStrategy()\n"


def _source(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=50 * SCALE)
@given(hypothesmith.from_grammar())
def test_grammar_programs(code):
    data = _source(code)
    assume(parses(data))
    result = check_properties(data)
    if "tensorflow" not in code and "distribute" not in code:
        assert result.converted == data


@settings(max_examples=30 * SCALE)
@given(hypothesmith.from_grammar())
def test_grammar_programs_after_a_strategy(code):
    data = _source(HEADER + code)
    assume(parses(data))
    check_properties(data)


@settings(max_examples=25 * SCALE)
@given(hypothesmith.from_node())
def test_node_programs_after_a_strategy(code):
    data = _source(HEADER + code)
    assume(parses(data))
    check_properties(data)


# -- mutated fixtures -------------------------------------------------------------------------

# What is seeded: expressions (placed through __E__) and statements (through __S__).
EXPRESSIONS = [
    "tf.distribute.MirroredStrategy()",
    "strategy.reduce(tf.distribute.ReduceOp.SUM, value, axis=None)",
    "strategy.reduce('mean', value, axis=0)",
    "strategy.run(step, args=(batch,))",
    "strategy.scope()",
    "strategy.num_replicas_in_sync",
    "strategy.experimental_distribute_dataset(dataset)",
    "tf.distribute.get_strategy()",
    "tf.distribute.get_replica_context()",
    "tf.distribute.ReduceOp.MEAN",
    "tf.distribute.get_replica_context().all_reduce('sum', value)",
    "tf.distribute.OneDeviceStrategy('/cpu:0')",
    "strategy",  # a bare name: a tracked object's use (a parameter's default is a read, not a binding)
    "tf.distribute.experimental.MultiWorkerMirroredStrategy()",
]
STATEMENTS = [
    "strategy = tf.distribute.MirroredStrategy()",
    "with strategy.scope():\n    model = build()",
    "with tf.distribute.MirroredStrategy().scope():\n    pass",
    "loss = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)",
    "per_replica = strategy.run(step, args=(batch,))",
    "n = strategy.num_replicas_in_sync",
    "dist = strategy.experimental_distribute_dataset(dataset)",
    "local = tf.distribute.MirroredStrategy()\nwith local.scope():\n    v = tf.Variable(1.0)\nlocal.reduce('sum', v, axis=None)",
    "ctx = tf.distribute.get_replica_context()\nctx.all_reduce('sum', value)",
    "import tensorflow as tf",
    "from tensorflow import distribute as dist\nd = dist.MirroredStrategy()",
]
# Where it goes: templates holding __E__ (an expression) or __S__ (a statement).
EXPRESSION_PLACES = [
    "x = __E__",
    "f = lambda *a: __E__",
    "f = lambda s=__E__: s",
    "@__E__\ndef decorated():\n    pass",
    "def with_default(a=__E__):\n    return a",
    "values = [__E__ for _ in range(2)]",
    "table = {k: __E__ for k in range(2)}",
    "gen = (__E__ for _ in ())",
    "if (walrus := __E__):\n    pass",
    "s = f'{__E__}'",
    "s = f'{__E__!r:>10}'",
    "x = \\\n    __E__",
    "x = (1 +\n     len([__E__]))",
    "async def coroutine():\n    return await __E__",
    "async def coroutine():\n    async with __E__:\n        pass",
    "async def coroutine():\n    return [__E__ async for _ in aiter()]",
    "class Holder:\n    attribute = __E__",
    "class Holder(__E__.__class__):\n    pass",
    "def outer():\n    def inner(v=__E__):\n        return v\n    return inner",
    "match command:\n    case [x, *rest]:\n        value = __E__\n    case _:\n        pass",
    "try:\n    pass\nexcept* ValueError:\n    y = __E__",
    "assert __E__, 'message'",
    "del __E__.attribute",
    "global_value: int = __E__",
    "for item in __E__:\n    pass",
    "while __E__:\n    break",
    "with open(p) as fh, __E__:\n    pass",
    "x = y = __E__",
    "x, *rest = __E__, 1",
    "print(*__E__, **{})",
    "x = __E__ if cond else None",
    "x = not __E__",
]
STATEMENT_PLACES = [
    "__S__",
    "def nested():\n    __S__",
    "def outer():\n    def inner():\n        __S__\n    return inner",
    "class Body:\n    __S__",
    "async def coroutine():\n    __S__",
    "if cond:\n    __S__\nelse:\n    __S__",
    "match command:\n    case {'k': value}:\n        __S__",
    "try:\n    __S__\nexcept* (KeyError, ValueError) as group:\n    __S__",
    "try:\n    __S__\nfinally:\n    pass",
    "for i in range(2):\n    __S__\nelse:\n    __S__",
    "with ctx:\n    __S__",
    "if (w := 1):\n    __S__",
    "@decorator\nclass Deco:\n    def method(self):\n        __S__",
]


class _Fill(cst.CSTTransformer):
    """Puts a node where the template's placeholder name stands."""

    def __init__(self, expression: cst.BaseExpression | None, statements: list[cst.BaseStatement] | None) -> None:
        self.expression = expression
        self.statements = statements

    def leave_Name(self, original, updated):
        if updated.value == "__E__" and self.expression is not None:
            return self.expression.deep_clone()
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        body = updated.body
        if (
            self.statements is not None
            and len(body) == 1
            and isinstance(body[0], cst.Expr)
            and isinstance(body[0].value, cst.Name)
            and body[0].value.value == "__S__"
        ):
            return cst.FlattenSentinel([s.deep_clone() for s in self.statements])
        return updated


def seeded_statements(rng: random.Random) -> list[cst.BaseStatement]:
    """One piece of tf.distribute code, as statements built from a template."""
    if rng.random() < 0.5:
        return list(cst.parse_module(rng.choice(STATEMENTS) + "\n").body)
    template = cst.parse_module(rng.choice(EXPRESSION_PLACES) + "\n")
    expression = cst.parse_expression(rng.choice(EXPRESSIONS))
    return list(template.visit(_Fill(expression, None)).body)


def placed(rng: random.Random, statements: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """``statements`` inside a randomly chosen surrounding block (or as they are)."""
    template = cst.parse_module(rng.choice(STATEMENT_PLACES) + "\n")
    return list(template.visit(_Fill(None, statements)).body)


class _Insert(cst.CSTTransformer):
    """Inserts statements into the ``target``-th statement body of the module (Module body is 0)."""

    def __init__(self, target: int, statements: list[cst.BaseStatement], rng: random.Random) -> None:
        self.target, self.statements, self.rng = target, statements, rng
        self.seen = 0

    def _maybe(self, body):
        here = self.seen == self.target
        self.seen += 1
        if not here:
            return None
        at = self.rng.randint(0, len(body))
        return [*body[:at], *self.statements, *body[at:]]

    def leave_IndentedBlock(self, original, updated):
        new = self._maybe(list(updated.body))
        return updated if new is None else updated.with_changes(body=new)

    def leave_Module(self, original, updated):
        new = self._maybe(list(updated.body))
        return updated if new is None else updated.with_changes(body=new)


def _count_bodies(module: cst.Module) -> int:
    count = [1]

    class _V(cst.CSTVisitor):
        def visit_IndentedBlock(self, node) -> None:
            count[0] += 1

    module.visit(_V())
    return count[0]


def mutate(source: bytes, seed: int, edits: int = 2) -> bytes:
    """``source`` with ``edits`` pieces of tf.distribute code put at random places, built with libcst."""
    rng = random.Random(seed)
    module = cst.parse_module(source)
    for _ in range(edits):
        statements = placed(rng, seeded_statements(rng))
        bodies = _count_bodies(module)
        target = rng.randrange(bodies)
        # leave_* run bottom-up; the count order differs from a top-down walk, which only changes which body.
        module = module.visit(_Insert(target, statements, rng))
    data = module.bytes
    if rng.random() < 0.3:  # comment and blank lines after the last statement, in shapes libcst never writes
        data += "".join(rng.choice(TRAILERS) for _ in range(rng.randint(1, 4))).encode()
    return data


TRAILERS = ["\n", "  \n", "  # trailing\n", "        # deeper\n", "\t# tab\n", "\f# form feed\n", "# flush\n"]


@settings(max_examples=45 * SCALE)
@given(st.sampled_from(FIXTURES), st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_mutated_fixtures(fixture, seed, edits):
    data = mutate(fixture.read_bytes(), seed, edits)
    assume(parses(data))
    note(data.decode("utf-8", "replace"))
    check_properties(data)


def test_mutations_are_valid_python_and_hold_the_seeded_code():
    """The mutator itself: mutants are mostly valid Python and hold what was seeded (else the test above tests little)."""
    valid = 0
    for seed in range(60):
        source = FIXTURES[seed % len(FIXTURES)].read_bytes()
        data = mutate(source, seed)
        assert len(data) > len(source)
        valid += parses(data)
    assert valid >= 48, valid


# -- regressions found by the fuzzers -------------------------------------------------------------

REGRESSION_CASES = sorted(p.relative_to(REGRESSIONS).as_posix() for p in REGRESSIONS.glob("*/*.py"))


@pytest.mark.parametrize("name", REGRESSION_CASES)
def test_regression(name, request):
    source = REGRESSIONS / name
    case = source.parent
    known = case / "KNOWN_FAILURE"
    if known.exists():
        request.applymarker(pytest.mark.xfail(reason=known.read_text().strip().splitlines()[0], strict=True))
    data = source.read_bytes()
    assert parses(data), "a regression input must be valid Python"
    expected_error = case / "EXPECTED_ERROR"
    if expected_error.exists():
        # Past a resource limit: a clean failed result that says so, never a crash.
        result = convert(data, source.name)
        assert result.status == "failed" and result.error.startswith(expected_error.read_text().strip()), result.error
        assert result.original == data
        return
    check_properties(data, source.name)


# -- --jobs 1 and --jobs 2 give the same tree -----------------------------------------------------


def test_jobs_1_and_jobs_2_give_identical_trees(tmp_path):
    from tests.cli_helpers import pyproject, run_migrate, snapshot

    pyproject(tmp_path)
    src = tmp_path / "src"
    for i, fixture in enumerate(FIXTURES[::4]):
        data = mutate(fixture.read_bytes(), 1000 + i, 1)
        if not parses(data):
            data = fixture.read_bytes()
        (src / f"pkg{i % 3}").mkdir(parents=True, exist_ok=True)
        (src / f"pkg{i % 3}" / f"m{i}.py").write_bytes(data)
    (src / "broken.py").write_bytes(b"import tensorflow as tf\ndef f(:\n")
    (src / "notes.txt").write_text("not python\n")
    one = run_migrate("convert", "src", "--out", "out1", "--jobs", "1", "--no-cache", cwd=tmp_path, timeout=600)
    two = run_migrate("convert", "src", "--out", "out2", "--jobs", "2", "--no-cache", cwd=tmp_path, timeout=600)
    assert one.returncode == two.returncode == 2, one.stderr + two.stderr  # broken.py
    assert snapshot(tmp_path / "out1") == snapshot(tmp_path / "out2")
    assert one.stdout == two.stdout
    assert sorted(one.stderr.splitlines()) == sorted(two.stderr.splitlines())
