"""Setting aside statements no rule can reach, and resolving names from a file's import
table (migrate.engine.prune): same result, less work.

The property that matters: for every input, converting with statements set aside and
names taken from the import table, and converting the whole file with libcst's scope
analysis, give the same bytes and the same findings. It is checked on
every golden fixture, every program of the equivalence suite, the bundled example and
the inputs below built to hit each reason a statement must stay (tracked objects,
aliases, set-up queries, scopes and tapes, names a rewrite must not reuse); the fuzz
tests check it on generated programs too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from migrate.engine.prune import PLACEHOLDER, analyse, prune
from migrate.engine.results import ConvertOptions
from migrate.engine.runner import RuleSelection, convert_source, rule_index

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    [*ROOT.glob("fixtures/convert/*/input.py"), *ROOT.glob("fixtures/programs/*/original.py"),
     *ROOT.glob("fixtures/programs/*/*.py"), ROOT / "examples" / "train.py"]
)


@pytest.fixture(scope="module")
def index():
    return rule_index(RuleSelection())


def both(data: bytes, index, path: str = "t.py"):
    """The fast way (statements set aside even in short files, names from the import table) and
    the plain one (the whole file, libcst's scope analysis). (Without the fallback the fast way
    cannot reach its answer by failing and converting the whole file.)"""
    pruned = convert_source(data, index, path, ConvertOptions(pruning=0, fallback=False))
    whole = convert_source(data, index, path, ConvertOptions(pruning=False, scope_shortcut=False))
    return pruned, whole


def assert_same(data: bytes, index, path: str = "t.py"):
    pruned, whole = both(data, index, path)
    assert pruned.status == whole.status, (pruned.error, whole.error)
    assert pruned.converted.decode() == whole.converted.decode()
    assert pruned.findings == whole.findings
    return pruned


def cut(text: str, index, min_lines: int = 0):
    return prune(text, ast.parse(text), index, min_lines)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pruned_and_whole_agree_on_every_fixture_and_program(path, index):
    assert_same(path.read_bytes(), index, path.name)


def test_the_fixtures_really_exercise_pruning(index):
    """Not vacuous: many fixtures (dense TF code, mostly) have statements to set aside."""
    cut_files = [p for p in SOURCES if cut(p.read_text(encoding="utf-8"), index) is not None]
    assert len(cut_files) >= len(SOURCES) // 3, f"only {len(cut_files)} of {len(SOURCES)} files were pruned"


LIBRARY = '''\
"""A module docstring that mentions tf."""
import os

import numpy as np
import tensorflow as tf


def load(path):
    """Reads a file."""
    with open(path) as fh:
        data = fh.read()
    rows = [line.split(",") for line in data.splitlines()]
    return np.array(rows)


class Config:
    name = "x"
    size = 3

    def describe(self):
        return f"{self.name}:{self.size}"


def loss(x):
    total = 0
    for i in range(3):
        total += i
    y = tf.reduce_sum(x)
    return y + total
'''


def test_irrelevant_statements_become_placeholders(index):
    pruned = cut(LIBRARY, index)
    assert pruned is not None
    text = pruned.text
    assert "def load" not in text and "class Config" not in text  # wholly irrelevant: one placeholder each run
    assert "import numpy as np" in text and "import os" in text  # imports always stay
    assert '"""A module docstring that mentions tf."""' in text
    assert "y = tf.reduce_sum(x)" in text and "def loss(x):" in text
    assert "for i in range(3)" not in text  # irrelevant statements inside a relevant function go too
    assert f"{PLACEHOLDER}0__(np)" in text  # the placeholder still reads the imports its statements read
    assert pruned.restore(text) == LIBRARY
    assert_same(LIBRARY.encode(), index)


def test_findings_keep_their_original_lines(index):
    text = "import tensorflow as tf\n" + "".join(f"def f{i}():\n    return {i}\n\n" for i in range(60)) + "x = tf.reduce_sum([1.0])\n"
    result = assert_same(text.encode(), index)
    line = text.splitlines().index("x = tf.reduce_sum([1.0])") + 1
    # (the reduction's, and TFT140's for the list it is given, which becomes a tensor)
    assert sorted((f.rule, f.line) for f in result.findings) == [("TFM201", line), ("TFT140", line)]
    assert cut(text, index).text.count("\n") < 10


@pytest.mark.parametrize("snippet", [
    # a tracked strategy used in a statement with no TF name: its escape must be seen
    "strategy = tf.distribute.MirroredStrategy()\n\ndef helper(s):\n    return s\n\nhelper(strategy)\n",
    # an alias of a TF namespace, then used
    "d = tf.distribute\ns = d.MirroredStrategy()\n\ndef use():\n    return s.num_replicas_in_sync\n",
    # a set-up query read by an ordinary statement: it stays
    "cpu = tf.config.list_physical_devices('CPU')[0]\nprint(cpu)\ntf.config.set_visible_devices([cpu], 'CPU')\n",
    # a tape: the function is kept whole; a pruned function defines the closure's default name
    "def forward():\n    return 0\n\ndef step(model, x, opt):\n    a = 1\n    with tf.GradientTape() as tape:\n        y = model(x)\n    print(a)\n"
    "    g = tape.gradient(y, model.trainable_variables)\n    opt.apply_gradients(zip(g, model.trainable_variables))\n    return y\n",
    # a scope unwrapped inside a function: its body moves one level out
    "strategy = tf.distribute.MirroredStrategy()\n\ndef build():\n    x = [\n        1,\n    ]\n    with strategy.scope():\n"
    "        s = '''a\n  b'''\n        m = tf.keras.Sequential()\n    return m, s, x\n",
    # a scope at module level: nothing is set aside
    "strategy = tf.distribute.MirroredStrategy()\nwith strategy.scope():\n    z = 1\n    model = tf.keras.Sequential()\n",
    # statements sharing a line with a relevant one stay with it
    "a = 1; b = tf.reduce_sum([1.0])\nc = 2\n",
    # an import only an irrelevant statement reads stays imported when the rewritten one drops it
    "import numpy as np\nx = tf.reduce_sum(np.ones(3))\ny = np.zeros(2)\n",
    # chains matched on any receiver (TFT130-TFT132), in statements with no TF name, one over
    # two lines, and one whose call takes an argument (not a match)
    "def width(x):\n    return x.shape.as_list()[-1]\n\ndef rank(layer, x):\n    return (layer(x)\n"
    "            .get_shape().ndims)\n\nn = width(1).shape.as_list(2)\n",
    # a decorated function, a class, an elif chain, try/except, match
    "@staticmethod\ndef f():\n    pass\n\nif 1:\n    a = 1\nelif 2:\n    b = tf.reduce_sum([1.0])\nelse:\n    c = 3\n"
    "try:\n    d = 1\nexcept ValueError as e:\n    f = tf.reduce_max([2.0])\nmatch d:\n    case 1:\n        g = 0\n",
])
def test_each_reason_to_keep_a_statement(snippet, index):
    text = "import tensorflow as tf\n\n" + snippet
    assert_same(text.encode(), index)


def test_crlf_files_round_trip(index):
    text = LIBRARY.replace("\n", "\r\n")
    pruned = cut(text, index)
    assert pruned is not None and "\r\n" in pruned.text and "\n" not in pruned.text.replace("\r\n", "")
    assert pruned.restore(pruned.text) == text
    assert_same(text.encode(), index)


def test_what_is_never_pruned(index):
    assert cut(LIBRARY.replace("\n", "\r\n", 3), index) is None  # mixed newlines
    assert cut(LIBRARY + f"{PLACEHOLDER}1__ = 1\n", index) is None  # the placeholder spelling is taken
    assert cut(LIBRARY, index, min_lines=1000) is None  # too short to be worth it


def test_a_placeholder_that_moved_sends_the_file_back_whole(index):
    pruned = cut(LIBRARY, index)
    first = f"{PLACEHOLDER}0__(np)\n"
    assert f"\n{first}" in pruned.text
    moved = pruned.text.replace(f"\n{first}", f"\n    {first}")  # dedented or indented by a rewrite
    assert pruned.restore(moved) is None
    assert pruned.restore(pruned.text.replace(first, "")) is None  # lost
    assert pruned.restore(pruned.text.replace(first, first + first)) is None  # duplicated


NAME_SHAPES = """\
import a.b.c, d.e as f
from g.h import i, j as k
from . import l
from .m.n import o
from p import *
global q
def r(s, *t, u=v.w, **x) -> y.z:
    nonlocal aa
    lambda bb, *cc: dd(ee=ff, **gg)
    class hh(ii, metaclass=jj, kw=kk):
        pass
    try:
        pass
    except (ll.mm, nn) as oo:
        pass
    try:
        pass
    except* pp as qq:
        None, True, False, ...
    match rr:
        case ss.tt(uu, vv=ww, xx=[yy, *zz]) | {"k": aaa, **bbb} | ccc as ddd:
            pass
        case [*_, eee] if (fff := ggg):
            pass
    print(f"{hhh.iii!r:{jjj}}", [kkk for lll in mmm if nnn], {ooo: ppp for qqq, rrr in sss})
    @ttt.uuu(vvv=www)
    async def xxx():
        async with yyy as (zzz, aaaa):
            await bbbb.cccc
        async for dddd in eeee:
            yield ffff[gggg:hhhh, ::iiii]
    del jjjj, kkkk.llll, mmmm[nnnn]
    assert oooo, pppp
    raise qqqq.rrrr from ssss
    tttt: uuuu.vvvv = wwww(*xxxx, yyyy=zzzz, **a1) if b1 else {c1, *d1}
    e1 += f1 @ -g1
    h1 = lambda i1=j1.k1, *, l1: (m1 := n1)
from .. import o1
from ..p1.q1 import r1 as s1
import t1 as u1
"""


@pytest.mark.parametrize("path", [*SOURCES, None], ids=lambda p: str(p.relative_to(ROOT)) if p else "every-shape")
def test_names_set_aside_are_the_names_the_conversion_reads(path):
    """A tape's new function takes a name no statement uses; statements set aside are counted
    from CPython's tree as the conversion counts the rest from libcst's (not attribute or
    keyword names): otherwise a pruned file picks another name than the whole file
    (``forward_2`` next to a ``b.forward(...)`` set aside, in tensorflow/probability)."""
    from migrate.ops.tape import _names_in
    from migrate.engine.prune import variable_names

    text = NAME_SHAPES if path is None else path.read_text()
    assert variable_names(ast.parse(text).body) == _names_in(cst.parse_module(text))

def table_of(text: str, index):
    return analyse(text, ast.parse(text), index)[1]


def test_import_table_only_for_plain_imports_bound_once(index):
    plain = "import numpy as np\nimport tensorflow as tf\nfrom tensorflow import keras as k\n\ndef f(x):\n    return tf.reduce_sum(x) + k.backend.epsilon()\n"
    table = table_of(plain, index)
    assert table is not None
    assert table.quals == {"tf": "tensorflow", "k": "tensorflow.keras"}
    assert table.sole_imports == {"np", "tf", "k"}
    for worse in [
        plain + "\ndef g(tf):\n    return tf\n",  # a parameter named tf: names need scopes
        plain + "\nd = tf.distribute\n",  # an alias
        plain + "\ns = tf.distribute.MirroredStrategy()\n",  # a tracked object
        plain + "\nwith tf.GradientTape() as tape:\n    pass\n",  # a tape
        plain + "\ndef h():\n    import tensorflow as tf2\n    return tf2\n",  # an import inside a function
        "import tensorflow.compat\n" + plain,  # a dotted import without `as`
    ]:
        assert not table_of(worse, index).complete, worse
    for text in [plain, *[plain + "\ntf = None\n"]]:
        assert_same(text.encode(), index)


# -- statements whose only matches are flags (TFU901) are set aside too, their findings made on CPython's tree

FLAGGED = '''\
import numpy as np
import tensorflow as tf
from tensorflow import keras


def features(x):
    y = tf.strings.unicode_split(x, separator=",")  # a comment stays
    z = tf.nn.gelu(y) + tf.nn.gelu(-y)
    if tf.debugging.is_numeric_tensor(z):
        print("numeric")
    return keras.utils.model_to_dot("f", "u") + np.sum(z)


class Summaries:
    @tf.custom_gradient
    def write(self, value):
        try:
            tf.summary.audio("v", value, 16000)
        except tf.errors.DataLossError:
            pass


x = tf.signal.dct(tf.sparse.reorder(1))
'''


def test_statements_only_flags_match_are_set_aside_with_their_markers(index):
    pruned = cut(FLAGGED, index)
    assert pruned is not None
    assert "tf.strings.unicode_split" not in pruned.text and "class Summaries" not in pruned.text and "tf.signal" not in pruned.text
    after_imports = pruned.text.split("from tensorflow import keras")[1]
    assert "tf" not in after_imports and "keras" not in after_imports  # no bare `tf`/`keras` in a placeholder
    assert pruned.reads == {"tf", "keras"}  # kept imported instead: statements set aside read them
    found = {(line, col, api) for line, col, rule, api, message in pruned.flagged}
    assert found == {
        (7, 9, "tensorflow.strings.unicode_split"), (8, 9, "tensorflow.nn.gelu"), (8, 25, "tensorflow.nn.gelu"),
        (9, 8, "tensorflow.debugging.is_numeric_tensor"), (11, 12, "tensorflow.keras.utils.model_to_dot"),
        (15, 6, "tensorflow.custom_gradient"), (18, 13, "tensorflow.summary.audio"),
        (19, 16, "tensorflow.errors.DataLossError"), (23, 5, "tensorflow.signal.dct"), (23, 19, "tensorflow.sparse.reorder"),
    }
    result = assert_same(FLAGGED.encode(), index)
    assert {(f.line, f.col, f.api) for f in result.findings} == found
    out = result.converted.decode()
    # one marker line per statement, at its indentation, above it (above the decorator; above
    # `try` for what its handler names); a statement's two uses of one name share the line
    lines = out.splitlines()
    above = {lines[i + 1].strip().split(" ")[0]: line for i, line in enumerate(lines[:-1]) if "# migrate:" in line}
    assert set(above) == {"y", "z", "if", "return", "@tf.custom_gradient", "try:", "tf.summary.audio(\"v\",", "x"}
    assert above["z"].startswith("    # migrate: TFU901 `tf.nn.gelu` is not converted; MindSpore: `mindspore.ops.gelu`")
    assert above["z"].count("tf.nn.gelu") == 1
    assert above["try:"] == "        # migrate: TFU901 `tf.errors.DataLossError` is not converted; MindSpore's API mapping lists no direct counterpart"
    assert above["x"].startswith("# migrate: TFU901 `tf.signal.dct` is not converted; MindSpore's API mapping lists no direct counterpart; `tf.sparse.reorder`")


def test_a_flagged_statement_keeps_its_import_and_a_converted_one_drops_it(index):
    body = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(30))
    only_flags = "import tensorflow as tf\n\n" + body + "def g(x):\n    return tf.nn.gelu(x)\n\nm = tf.keras.Sequential()\n"
    assert "import tensorflow as tf" in assert_same(only_flags.encode(), index).converted.decode()
    converted = "import tensorflow as tf\n\n" + body + 'def g(x):\n    raise TypeError("x must be a tf.keras.Model")\n\nm = tf.keras.Sequential()\n'
    assert "import tensorflow" not in assert_same(converted.encode(), index).converted.decode()  # a word in a message is no use


@pytest.mark.parametrize("snippet, kept", [
    ("if x:\n    pass\nelif tf.debugging.is_numeric_tensor(x):\n    pass\n", "elif tf.debugging.is_numeric_tensor(x)"),  # a marker above an elif
    ("a = tf.nn.gelu(x); b = 2\n", "a = tf.nn.gelu(x); b = 2"),  # shares its line
    ("if x: a = tf.nn.gelu(x)\n", "if x: a = tf.nn.gelu(x)"),  # the marker goes above the `if`
    ("# migrate: TFU901 `tf.nn.gelu` is not converted\ny = tf.nn.gelu(x)\n", "y = tf.nn.gelu(x)"),  # marked already
    ("y = f'{tf.nn.gelu(x)}'\n", "y = f'{tf.nn.gelu(x)}'"),  # inside an f-string
    ("match x:\n    case tf.float32:\n        pass\n", "case tf.float32"),  # a pattern
    ("def g(v: 'tf.Tensor'):\n    return tf.nn.gelu(v)\n", "def g(v: 'tf.Tensor')"),  # a string annotation reads `tf`
    ("y = typing.cast('tf.Tensor', tf.nn.gelu(x))\n", "typing.cast"),  # so does a cast
    ("T = List['tf.Tensor']\n", "T = List['tf.Tensor']"),  # and maybe a subscript
    ("y = tf.function(f)\n", "y = tf.function(f)"),  # a rule that rewrites
    ("y = tf.data.Dataset.range(3)\n", "tf.data.Dataset.range(3)"),
    ("MS = tf.distribute.MirroredStrategy\ns = MS()\n", "s = MS()"),  # calling an alias makes a tracked object
    ("def g():\n    d = tf.distribute\n    return d.get_strategy()\n", "d = tf.distribute"),  # a local alias needs scopes
])
def test_what_keeps_a_flagged_statement_for_the_planner(snippet, kept, index):
    body = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(30))
    text = "import typing\nfrom typing import List\nimport tensorflow as tf\n\nx = 1\n\n" + body + snippet
    pruned = cut(text, index)
    assert pruned is not None and kept in pruned.text
    assert_same(text.encode(), index)


@pytest.mark.parametrize("header, whole", [
    ('with tf.compat.v1.variable_scope("block"):', False),  # only a flag reports it: a comment above, nothing moves
    ('with tf.compat.v1.variable_scope("b"), open("f") as fh:', False),
    ('with tf.compat.v1.variable_scope("block") as scope:', False),  # its `as` name resolves to nothing
    ("with strategy.scope():", True),  # a scope to unwrap: its body moves out
    ("with tf.GradientTape() as tape:", True),  # a tape: becomes a closure
    ('with tf.compat.v1.variable_scope(tf.distribute.get_strategy().extended):', True),  # a chain a rule rewrites
    ('with tf.compat.v1.variable_scope(MS):', True),  # an alias (bound by an assignment) is not a plain import
    ('with tf.compat.v1.variable_scope(os.environ["TF_CONFIG"]):', True),  # a string a rule matches
])
def test_a_with_only_a_flag_reports_does_not_keep_its_function_whole(header, whole, index):
    head = "import tensorflow as tf\n\nstrategy = tf.distribute.MirroredStrategy()\nMS = tf.distribute.MirroredStrategy\n\n"
    text = head + f"def step(x):\n    y = helper(x)\n    {header}\n        z = tf.nn.gelu(y)\n    return z\n"
    pruned = cut(text, index)
    kept = pruned is None or "y = helper(x)" in pruned.text
    assert kept == whole
    assert_same(text.encode(), index)


def test_a_suppressed_flag_has_no_marker_and_no_finding(index):
    body = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(30))
    text = "import tensorflow as tf\n\n" + body + "y = tf.nn.gelu([1.0])  # migrate: ignore[TFU901]\nz = tf.signal.dct(-1.0)\n"
    pruned = cut(text, index)
    assert "tf.nn.gelu" not in pruned.text and [api for *_, api, _ in pruned.flagged] == ["tensorflow.signal.dct"]
    result = assert_same(text.encode(), index)
    assert [f.api for f in result.findings] == ["tensorflow.signal.dct"]
    assert result.converted.decode().count("# migrate: TFU901") == 1


def test_a_partial_import_table_holds_the_plain_imports_bound_once(index):
    text = ("import tensorflow as tf\nfrom tensorflow import keras\n\ns = tf.distribute.MirroredStrategy()\n"
            "d = tf.distribute\n\ndef f(keras):\n    return keras\n")
    table = table_of(text, index)
    assert not table.complete and table.quals == {"tf": "tensorflow"}  # `keras` is bound twice: scopes decide
    assert_same(text.encode(), index)


def test_a_file_left_with_nothing_to_plan_skips_libcst(index, monkeypatch):
    pruned = cut(FLAGGED, index)
    assert pruned.needs_planner is False  # only imports, a docstring-free module and placeholders are left
    import migrate.engine.convert as runner

    whole = convert_source(FLAGGED.encode(), index, "t.py", ConvertOptions(pruning=False, scope_shortcut=False))

    def no_libcst(*args, **kwargs):
        raise AssertionError("libcst was asked to convert a file with nothing left to plan")

    monkeypatch.setattr(runner, "_convert_text", no_libcst)
    fast = convert_source(FLAGGED.encode(), index, "t.py", ConvertOptions(pruning=0))
    assert (fast.converted, fast.findings) == (whole.converted, whole.findings)
    for busy in [FLAGGED + "m = tf.keras.Sequential()\n", FLAGGED + "os.environ['TF_CONFIG'] = '{}'\n",
                 FLAGGED.replace("x = tf.signal.dct", "x = 'TF_CONFIG' 'a'\ny = tf.signal.dct")]:
        assert cut(busy, index).needs_planner, busy


@pytest.mark.parametrize("text, way", [
    # every read of `tf` replaced: removed without RemoveImportsVisitor's analysis
    ("import tensorflow as tf\n\nm = tf.keras.Sequential()\n", "known"),
    ("import numpy as np\nfrom tensorflow import keras\n\nm = keras.Sequential()\nx = np.ones(2)\n", "known"),
    # a replacement keeps an argument that reads `tf` (bound once): in use, nothing to ask
    ("import tensorflow as tf\n\nm = tf.keras.Sequential(tf.keras.layers.Dense(1))\ny = tf.reduce_sum(tf.nn.gelu([1.0]))\n", "kept"),
    # ... and the other import, whose reads all went, is removed without the analysis
    ("import tensorflow as tf\nfrom tensorflow import keras\n\nm = keras.Sequential()\ny = tf.reduce_sum(tf.nn.gelu([1.0]))\n",
     "known"),
    # read as a plain name, not an attribute's object: the module itself as a value stays (TFF341),
    # the call given it stays TensorFlow, and so does the import, with no removal asked
    ("import tensorflow as tf\n\ny = tf.reduce_sum(tf)\n", "kept"),
    # bound twice: which binding the kept argument reads is the visitor's to judge
    # ... unless no read of the module's `tf` is left (an API reference left as it is inside the
    # sum would keep the sum TensorFlow, and the import read)
    ("import tensorflow as tf\n\ny = tf.reduce_sum(x, tf.newaxis)\n\ndef f(tf):\n    return tf\n", "known"),
    # `__all__` may export it
    ("import tensorflow as tf\n\n__all__ = ['m']\nm = tf.keras.Sequential()\n", "full"),
    # another import spelled the same, inside a function, is the visitor's to judge
    ("import tensorflow as tf\n\nm = tf.keras.Sequential()\n\ndef f():\n    import tensorflow as tf\n    return 1\n", "full"),
    # `import os.path` binds `os`, which the replacement still reads: the visitor keeps it
    ("import os.path\nimport tensorflow as tf\n\ny = tf.reduce_sum(os.path.getsize('f'))\n", "full"),
])
def test_imports_left_unused_are_removed_as_removeimportsvisitor_would(text, way, index, monkeypatch):
    """``known``: removed by RemoveImportsVisitor's own code told what is unused; ``kept``: no
    removal asked (every import still read); ``full``: its analysis of the converted module decides
    (``RemoveImports``: the visitor itself, keeping the comments above a line it removes).
    Whichever way, the output is the one the analysis gives (``assert_same`` converts both ways)."""
    from libcst.codemod.visitors import RemoveImportsVisitor

    runs = []
    original = RemoveImportsVisitor.transform_module
    monkeypatch.setattr(RemoveImportsVisitor, "transform_module",
                        lambda self, tree: runs.append(type(self).__name__) or original(self, tree))
    fast = convert_source(text.encode(), index, "t.py", ConvertOptions(pruning=0))
    assert runs == {"known": ["RemoveKnownUnused"], "kept": [], "full": ["RemoveImports"]}[way]
    assert fast.converted == assert_same(text.encode(), index).converted
    if way == "known":
        assert "from tensorflow" not in fast.converted.decode()
    elif way == "kept":
        assert "import tensorflow as tf" in fast.converted.decode()


def test_attribute_objects_are_reads_outside_import_statements():
    from migrate.engine.imports import attribute_objects

    module = cst.parse_module("import tf.a\nfrom tf.b import c\nfrom np import linalg\nx = np.ones(2)\ny = ms.x.y\ndef f(a: jax.Array): pass\n")
    assert attribute_objects(module, {"tf", "np", "ms", "jax", "a"}) == {"np", "ms", "jax"}


ALIASED = '''\
import tensorflow as tf

FLAGS = tf.compat.v1.flags.FLAGS
MS = tf.distribute.MirroredStrategy


def read(path):
    with tf.profiler.experimental.Trace(path) as f:
        data = f.write(b"")
    return data, FLAGS.batch_size


def make():
    return MS()
''' + "".join(f"\ndef f{i}():\n    return {i}\n" for i in range(20))


def test_module_level_aliases_and_with_names_resolve_without_scopes(index):
    table = table_of(ALIASED, index)
    assert table.aliases == {"FLAGS": "tensorflow.compat.v1.flags.FLAGS", "MS": "tensorflow.distribute.MirroredStrategy"}
    assert "f" not in table.relevant  # `f` of `with … as f`: nothing the planner resolves
    pruned = cut(ALIASED, index)
    assert "def read" not in pruned.text  # a flag on the `with`, an alias and a with-name: set aside
    assert "return MS()" in pruned.text  # calling an alias may make a tracked object: the planner decides
    result = assert_same(ALIASED.encode(), index)
    assert "# migrate: TFU901 `tf.profiler.experimental.Trace`" in result.converted.decode()


@pytest.mark.parametrize("variant", ["crlf", "tabs", "form feed", "no final newline", "bom"])
def test_flag_markers_match_the_planner_whatever_the_whitespace(variant, index):
    text = FLAGGED
    if variant == "crlf":
        text = text.replace("\n", "\r\n")
    elif variant == "tabs":
        text = text.replace("        ", "\t\t").replace("    ", "\t")
    elif variant == "form feed":
        text = text.replace("\n    z = ", "\n\f    z = ").replace("\nx = ", "\n\fx = ")
    elif variant == "no final newline":
        text = text.rstrip("\n")
    data = ("\ufeff" + text if variant == "bom" else text).encode()
    pruned = cut(text, index)
    assert pruned is not None and bool(pruned.flagged) is (variant != "form feed")  # form feeds: the planner marks
    result = assert_same(data, index)
    assert result.converted.decode("utf-8-sig").count("# migrate: TFU901") == 8


@pytest.mark.parametrize("rest, kept", [
    ("m = tf.keras.Sequential()\n", False),  # every read replaced: the import goes
    ("m = tf.keras.Sequential()\nprint(tf)\n", True),  # a bare read stays
    ("m = tf.keras.Sequential()\nf(tf=1)\n", False),  # a keyword is no read
    ("m = tf.keras.Sequential()\ndef g(x: 'tf.Tensor'):\n    return x\n", True),  # a string annotation reads it
    ("m = tf.keras.Sequential()\nT = typing.cast('tf.Tensor', m)\n", True),
    ("m = tf.keras.Sequential()\ndoc = 'tf is not read here'\n", False),
])
def test_reads_of_an_import_bound_once_are_listed_without_scope_analysis(rest, kept, index):
    text = "import typing\nimport tensorflow as tf\n\n" + rest
    result = assert_same(text.encode(), index)
    assert ("import tensorflow as tf" in result.converted.decode()) is kept


def test_a_module_level_read_before_the_import_keeps_the_name_out_of_the_table(index):
    """libcst's scope analysis does not tie a read above the import, in the same scope, to it."""
    text = "y = tf.distribute.get_replica_context()\nimport tensorflow as tf\n\nz = tf.nn.gelu(1.0)\nF = tf.flags.FLAGS\n"
    table = table_of(text, index)
    assert "tf" not in table.quals and not table.complete
    assert_same(text.encode(), index)
    late = "import tensorflow as tf\n\nprint(F.x)\nF = tf.flags.FLAGS\n"
    assert "F" not in table_of(late, index).aliases  # read above its assignment
    assert_same(late.encode(), index)


def test_rule_templates_filled_as_libcst_fills_them():
    """migrate.ops.base.template_expression gives libcst's parse_template_expression's code,
    holds a placeholder's node itself when it stands once, and a copy of it when it stands twice."""
    from libcst.helpers import parse_template_expression

    from migrate.ops.base import template_expression

    x = cst.parse_expression("batch[0]  # first")
    axis = cst.Integer("1")
    for template, values in [("ops.sum({x}, dim={axis})", {"x": x, "axis": axis}),
                             ("{x} * {x} + ops.mean({x})", {"x": x}),
                             ("ms.Tensor(1)", {}),
                             ("f({x})[{axis}]", {"x": x, "axis": axis})]:
        ours, theirs = template_expression(template, **values), parse_template_expression(template, **values)
        code = cst.Module([]).code_for_node
        assert code(ours) == code(theirs)
        assert template_expression(template, **values).deep_equals(ours)  # the parse is reused, unchanged
    once = template_expression("ops.sum({x}, dim={axis})", x=x, axis=axis)
    assert once.args[0].value is x
    twice = template_expression("{x} * {x}", x=x)
    assert twice.left is not x and twice.right is not x and twice.left is not twice.right
    with pytest.raises(ValueError):
        template_expression("f({x})", y=x)


@pytest.mark.parametrize("literal", ['"TF_CONFIG"', "'TF\\x5fCONFIG'", 'r"TF_CONFIG"', '"TF_" "CONFIG"'])
def test_string_rules_match_every_spelling_of_the_literal(literal, index):
    """A string a rule matches is found however it is spelled (escapes are evaluated); a
    string without an escape that does not hold it is never evaluated."""
    source = f"import json, os\nimport tensorflow as tf\ncluster = json.loads(os.environ[{literal}])\n".encode()
    result = convert_source(source, index, "t.py")
    found = [f.rule for f in result.findings]
    if literal == '"TF_" "CONFIG"':  # two literals, as libcst and the planner see them: neither matches
        assert "TFD501" not in found
    else:
        assert "TFD501" in found


# A strategy is bound once in the file, so the planner finds its uses without libcst's scope
# analysis (Planner.static_references): each case places a use where libcst's answer turns on
# its rules (order within a scope, nested functions and classes, headers, comprehensions).
_ONE_STRATEGY = """\
import tensorflow as tf


def train(ds):
{body}
"""
_STRATEGY_USES = {
    "used_after": "    strategy = tf.distribute.MirroredStrategy()\n    with strategy.scope():\n        model = tf.keras.Sequential()\n",
    "read_before_binding": "    print(strategy)\n    strategy = tf.distribute.MirroredStrategy()\n    with strategy.scope():\n        pass\n",
    "in_its_own_value": "    strategy = tf.distribute.MirroredStrategy(strategy)\n",
    "same_line_after_semicolon": "    strategy = tf.distribute.MirroredStrategy(); n = strategy.num_replicas_in_sync\n",
    "nested_function": "    def step(x):\n        return strategy.run(tf.identity, args=(x,))\n    strategy = tf.distribute.MirroredStrategy()\n",
    "nested_class_body": "    strategy = tf.distribute.MirroredStrategy()\n    class Holder:\n        s = strategy\n",
    "method_of_nested_class": "    strategy = tf.distribute.MirroredStrategy()\n    class Holder:\n        def get(self):\n            return strategy.num_replicas_in_sync\n",
    "lambda_body": "    strategy = tf.distribute.MirroredStrategy()\n    f = lambda: strategy.num_replicas_in_sync\n",
    "lambda_default": "    strategy = tf.distribute.MirroredStrategy()\n    f = lambda s=strategy: s\n",
    "decorator": "    strategy = tf.distribute.MirroredStrategy()\n    @strategy.run\n    def g():\n        pass\n",
    "default_argument": "    strategy = tf.distribute.MirroredStrategy()\n    def g(s=strategy):\n        return s\n",
    "comprehension": "    strategy = tf.distribute.MirroredStrategy()\n    n = [strategy.num_replicas_in_sync for _ in range(2)]\n",
    "annotation": "    strategy = tf.distribute.MirroredStrategy()\n    x: strategy = 1\n",
    "string_annotation": "    strategy = tf.distribute.MirroredStrategy()\n    x: 'strategy' = 1\n",
    "import_from_its_name": "    strategy = tf.distribute.MirroredStrategy()\n    from strategy import helpers\n",
    "keyword_and_attribute": "    strategy = tf.distribute.MirroredStrategy()\n    f(strategy=1, x=y.strategy)\n    with strategy.scope():\n        pass\n",
    "f_string": "    strategy = tf.distribute.MirroredStrategy()\n    print(f'{strategy.num_replicas_in_sync}')\n",
    "other_function_reads_it": "    strategy = tf.distribute.MirroredStrategy()\n    with strategy.scope():\n        pass\n\n\ndef other():\n    return strategy.num_replicas_in_sync\n",
    "match_keyword": "    strategy = tf.distribute.MirroredStrategy()\n    match ds:\n        case Point(strategy=1):\n            pass\n",
}


@pytest.mark.parametrize("case", sorted(_STRATEGY_USES))
def test_static_references_agree_with_libcsts_scope_analysis(case, index):
    source = _ONE_STRATEGY.format(body=_STRATEGY_USES[case])
    assert_same(source.encode(), index)
    module_level = source.replace("\ndef train(ds):\n", "\n").replace("\n    ", "\n").lstrip()
    try:
        ast.parse(module_level)
    except SyntaxError:
        return
    assert_same(module_level.encode(), index)


def test_static_references_answer_without_scope_analysis():
    """Not vacuous: a strategy bound once in a function is decided without libcst's scope analysis."""
    from migrate.engine import planner as codemod

    source = _ONE_STRATEGY.format(body=_STRATEGY_USES["used_after"]).encode()
    asked = []
    original = codemod.Planner.scopes.fget
    codemod.Planner.scopes = property(lambda self: asked.append(1) or original(self))
    try:
        result = convert_source(source, rule_index(RuleSelection()), "t.py", ConvertOptions(pruning=0))
    finally:
        codemod.Planner.scopes = property(original)
    assert result.status == "changed" and b"MirroredStrategy" not in result.converted
    assert asked == []


@pytest.mark.parametrize("default", ["Dense", "layers.Dense"])
def test_a_parameter_default_is_a_read_not_a_binding(default, index):
    """`def f(layer=Dense)` reads `Dense` where the function is defined: converted there, with
    or without pruning and the import table (the name alone used to be taken for the parameter)."""
    text = ("from tensorflow.keras import layers\nfrom tensorflow.keras.layers import Dense\n\n\n"
            f"def make(units, layer={default}):\n    return layer(units)\n")
    result = assert_same(text.encode(), index)
    assert f"layer={default})" not in result.converted.decode()
    assert [f.line for f in result.findings] == [5]


def test_an_unread_tensorflow_import_goes_unless_the_file_has_an_export_list(index):
    body = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(30))
    source = "import tensorflow as tf\nimport tensorflow.keras as k\n\n" + body + "m = k.Sequential()\n"
    assert "import tensorflow" not in assert_same(source.encode(), index).converted.decode()
    exported = source + '__all__ = ["tf", "m"]\n'
    assert "import tensorflow as tf\n" in assert_same(exported.encode(), index).converted.decode()


@pytest.mark.parametrize("body", [
    # the only work left for libcst is a chain matched on any receiver
    "def summarize(x):\n    width = x.shape.as_list()[-1]\n    tf.summary.audio('a', x, 16000)\n    return width\n",
    # a definition of a chain's name, set aside alone, decides as the whole file does
    "class Box:\n    def get_shape(self):\n        return (1, 2)\n\nb = Box().get_shape()\n",
])
def test_chains_on_any_receiver_agree_pruned_and_whole(body, index):
    text = "import tensorflow as tf\n\n" + body + "".join(f"v{i} = {i}\n" for i in range(45))
    assert_same(text.encode(), index)
