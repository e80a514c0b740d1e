"""TFD701: a GradientTape step converts to a closure and `value_and_grad` that runs and gives TF's numbers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.helpers import convert

# The step as a TF program writes it; `model`, `loss_fn`, `total` and the data come from outside,
# so the same text runs on TF (before) and MindSpore (after conversion).
STEP = textwrap.dedent("""
    import tensorflow as tf

    def train_step(inputs):
        features, targets = inputs
        with tf.GradientTape() as tape:
            logits = model(features)
            per_example = loss_fn(targets, logits)
            loss = total(per_example) / GLOBAL_BATCH
        grads = tape.gradient(loss, model.trainable_variables)
        seen.append(logits)
        return loss, grads
""")

# The same step with `tape.gradient` under the tape (TF allows it; what follows it then runs
# unrecorded): the forward pass is what comes before it.
STEP_INSIDE = textwrap.dedent("""
    import tensorflow as tf

    def train_step(inputs):
        features, targets = inputs
        with tf.GradientTape() as tape:
            logits = model(features)
            per_example = loss_fn(targets, logits)
            loss = total(per_example) / GLOBAL_BATCH
            grads = tape.gradient(loss, model.trainable_variables)
            seen.append(logits)
        return loss, grads
""")

# ... and with a statement between the tape and `tape.gradient` that reads the forward pass's
# results (a metric's update): converted, it runs after the gradient, still after the forward pass.
STEP_BETWEEN = textwrap.dedent("""
    import tensorflow as tf

    def train_step(inputs):
        features, targets = inputs
        with tf.GradientTape() as tape:
            logits = model(features)
            per_example = loss_fn(targets, logits)
            loss = total(per_example) / GLOBAL_BATCH

        # what a metric sees
        seen.append(logits)
        grads = tape.gradient(loss, model.trainable_variables)
        return loss, grads
""")

# ... and with the sources gathered between the tape and `tape.gradient` from a dict of
# variables made once (TF-Examples' raw-variable notebooks): converted, the list is made before
# the forward pass, which neither reads nor changes it.
STEP_SOURCES = textwrap.dedent("""
    import tensorflow as tf

    weights = {"kernel": model.kernel, "bias": model.bias}

    def train_step(inputs):
        features, targets = inputs
        with tf.GradientTape() as tape:
            logits = model(features)
            loss = total(loss_fn(targets, logits)) / GLOBAL_BATCH

        trainable = list(weights.values())
        grads = tape.gradient(loss, trainable)
        seen.append(logits)
        return loss, grads
""")

# ... and differentiated with respect to the step's inputs, which the tape watches (saliency maps,
# adversarial examples): converted, the closure takes them as its parameters (`grad_position`).
STEP_WATCH = textwrap.dedent("""
    import tensorflow as tf

    def train_step(inputs):
        features, targets = inputs
        with tf.GradientTape() as tape:
            tape.watch([features, targets])
            logits = model(features)
            loss = total(loss_fn(targets, logits)) / GLOBAL_BATCH
        grads = tape.gradient(loss, [features, targets])
        seen.append(logits)
        return loss, grads
""")

# ... and with the target assigned on every branch of an `if` under the tape (a loss scaled or
# not: NVIDIA's EfficientDet trainer): the closure returns it, as it returns what always runs.
STEP_BRANCHES = textwrap.dedent("""
    import tensorflow as tf

    def train_step(inputs):
        features, targets = inputs
        with tf.GradientTape() as tape:
            logits = model(features)
            loss = total(loss_fn(targets, logits)) / GLOBAL_BATCH
            if GLOBAL_BATCH > 8:
                scaled = loss * 1024.0
                note = "scaled"
            elif GLOBAL_BATCH == 8:
                scaled = loss * 3.0
            else:
                scaled = loss
        grads = tape.gradient(scaled, model.trainable_variables)
        seen.append(logits)
        return loss, grads
""")

rng = np.random.default_rng(3)
X = rng.normal(size=(6, 4)).astype(np.float32)
Y = rng.normal(size=(6, 2)).astype(np.float32)
W = rng.normal(size=(4, 2)).astype(np.float32)
B = rng.normal(size=(2,)).astype(np.float32)

TF_RUN = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    X, Y, W, B = (np.asarray(a, np.float32) for a in json.loads(sys.stdin.read()))
    model = tf.keras.layers.Dense(2)
    model.build((None, 4))
    model.kernel.assign(W)
    model.bias.assign(B)
    loss_fn = lambda y, p: tf.reduce_sum(tf.square(p - y), axis=1)
    total = tf.reduce_sum
    GLOBAL_BATCH = 8
    seen = []
    exec(sys.argv[1])
    loss, grads = train_step((tf.constant(X), tf.constant(Y)))
    print(json.dumps({"loss": float(loss), "kernel": grads[0].numpy().tolist(), "bias": grads[1].numpy().tolist()}))
""")


def test_step_converts_as_documented():
    out, findings = convert(STEP)
    assert "def forward():" in out
    assert "(loss, logits), grads = mk.value_and_grad(forward, None, model.trainable_variables, has_aux=True)()" in out
    assert "        return loss, logits\n" in out  # per_example is read only under the tape: it stays local
    assert "GradientTape" not in out and "tape.gradient" not in out
    assert [f.status for f in findings if f.rule == "TFD701"] == ["converted"]


@pytest.fixture(scope="module", params=[STEP, STEP_INSIDE, STEP_BETWEEN, STEP_SOURCES, STEP_WATCH, STEP_BRANCHES],
                ids=["after", "inside", "between", "sources-between", "watched-inputs", "target-on-every-branch"])
def step_and_tf_numbers(request):
    return request.param, _tf_numbers(request.param)


def _tf_numbers(step):
    done = subprocess.run([sys.executable, "-c", TF_RUN, step], input=json.dumps([a.tolist() for a in (X, Y, W, B)]),
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_converted_step_runs_in_pynative_and_matches_tf(step_and_tf_numbers):
    step, tf_numbers = step_and_tf_numbers
    import mindspore as ms
    from mindspore import Parameter, Tensor, nn

    class Dense(nn.Cell):  # Keras's layout: kernel (in, out), so TF's gradients compare as they are
        def __init__(self):
            super().__init__()
            self.kernel = Parameter(Tensor(W), name="kernel")
            self.bias = Parameter(Tensor(B), name="bias")

        def construct(self, x):
            return ms.ops.matmul(x, self.kernel) + self.bias

        @property
        def trainable_variables(self):
            return self.trainable_params()

    converted, findings = convert(step)
    assert [f.status for f in findings if f.rule == "TFD701"] == ["converted"]
    seen: list = []
    model = Dense()
    namespace = {"model": model, "loss_fn": lambda y, p: ((p - y) ** 2).sum(axis=1),
                 "total": lambda t: t.sum(), "GLOBAL_BATCH": 8, "seen": seen}
    exec(compile(converted, "converted_step.py", "exec"), namespace)  # noqa: S102 - the test's own program
    loss, grads = namespace["train_step"]((Tensor(X), Tensor(Y)))
    assert float(loss.asnumpy()) == pytest.approx(tf_numbers["loss"], rel=1e-5)
    np.testing.assert_allclose(grads[0].asnumpy(), tf_numbers["kernel"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1].asnumpy(), tf_numbers["bias"], rtol=1e-5, atol=1e-6)
    assert seen[0].shape == (6, 2)  # the aux output reaches the code after the tape


@pytest.mark.parametrize("body,reason", [
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    print(tape)\n    g = tape.gradient(loss, w)\n",
     "the tape is used other than in one"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    grads = tape.gradient(loss, w, output_gradients=s)\n",
     "`output_gradients`"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    loss = log(loss)\n    g = tape.gradient(loss, w)\n",
     "would run before the forward pass"),
    # (one after a statement that moves may stay before the gradient only if the two are independent)
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    n = log(loss)\n    w = c[n]\n    g = tape.gradient(loss, w)\n",
     "would run before the forward pass"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    log(loss, g)\n    g = tape.gradient(loss, w)\n",
     "would run before the forward pass"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    if c:\n        log(loss)\n    g = tape.gradient(loss, w)\n",
     "would run before the forward pass"),
    # a call on what the gradient reads may change it; an attribute assignment too
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    w.append(loss)\n    g = tape.gradient(loss, w)\n",
     "would run before the forward pass"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    c.frozen = loss\n    g = tape.gradient(loss, w)\n",
     "would run before the forward pass"),
    # sources gathered between: from what the program holds, not a layer's list (empty before its first call)
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    v = list(c.trainable_variables)\n    g = tape.gradient(loss, v)\n",
     "would run before the forward pass"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    v = sorted(w.values())\n    g = tape.gradient(loss, v)\n",
     "would run before the forward pass"),
    # ... nor of an iterator the forward pass advances, nor of a dict something fills in place
    ("    with tf.GradientTape() as tape:\n        loss = f(next(c))\n    v = list(c)\n    g = tape.gradient(loss, v)\n",
     "would run before the forward pass"),
    ("    w = {}\n    with tf.GradientTape() as tape:\n        loss = f(x, w)\n    v = list(w.values())\n"
     "    g = tape.gradient(loss, v)\n", "would run before the forward pass"),
    # the gradient inside a larger statement: what reads the results is not moved after it
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    log(loss)\n    c(tape.gradient(loss, w))\n",
     "would run before the forward pass"),
    ("    with tf.GradientTape() as tape:\n        if c:\n            loss = f(x)\n    g = tape.gradient(loss, w)\n",
     "computed only on some paths"),
    # (every branch must bind it: an `elif` chain without `else`, or one branch that does not)
    ("    with tf.GradientTape() as tape:\n        if c:\n            loss = f(x)\n        elif d:\n            loss = g(x)\n"
     "    g = tape.gradient(loss, w)\n", "computed only on some paths"),
    ("    with tf.GradientTape() as tape:\n        if c:\n            loss = f(x)\n        else:\n            other = g(x)\n"
     "    g = tape.gradient(loss, w)\n", "computed only on some paths"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n        return loss\n    g = tape.gradient(loss, w)\n",
     "holds `return`"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n    if c:\n        g = tape.gradient(loss, w)\n",
     "not in the block that holds the `with` statement"),
    ("    with tf.GradientTape() as tape:\n        w = m.weights\n        loss = f(x)\n    g = tape.gradient(loss, w)\n",
     "sources read `w`, which the tape's body computes"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n        if c:\n            g = tape.gradient(loss, w)\n",
     "not in the block that holds the `with` statement"),
    ("    with tf.GradientTape() as tape:\n        loss = f(x)\n        step(tape.gradient(loss, w))\n",
     "under the tape is not assigned on its own line"),
    ("    with tf.GradientTape() as tape:\n        y = f(x)\n    g = tape.gradient([y, y], w)\n",
     "not one name computed under the tape"),
    ("    with tf.GradientTape(watch_accessed_variables=False) as tape:\n        y = f(x)\n    g = tape.gradient(y, w)\n",
     "`watch_accessed_variables`"),
    ("    with tf.GradientTape() as tape, ctx():\n        y = f(x)\n    g = tape.gradient(y, w)\n",
     "other context managers"),
    ("    with tf.GradientTape() as tape:\n        y = f(x)\n    g = [tape.gradient(y, v) for v in w]\n",
     "inside a lambda or comprehension"),
    # watched tensors: the sources must be what is watched, each once, and not assigned under the tape
    ("    with tf.GradientTape() as tape:\n        tape.watch(x)\n        y = f(x)\n    g = tape.gradient(y, [x, w])\n",
     "not the tensors `tape.watch` watches"),
    ("    with tf.GradientTape() as tape:\n        tape.watch(x)\n        x = x * 2\n        y = f(x)\n"
     "    g = tape.gradient(y, x)\n", "watched tensor `x` is assigned under the tape"),
    ("    with tf.GradientTape() as tape:\n        tape.watch(x.values)\n        y = f(x)\n    g = tape.gradient(y, x)\n",
     "watches something other than names"),
    ("    with tf.GradientTape() as tape:\n        y = f(x)\n        if c:\n            tape.watch(x)\n"
     "    g = tape.gradient(y, x)\n", "not a statement of its own in the tape's body"),
])
def test_unsafe_tapes_are_left_with_the_reason(body, reason):
    code = f"import tensorflow as tf\n\ndef step(x, w, c):\n{body}"
    out, findings = convert(code)
    manual = [f for f in findings if f.rule == "TFD701"]
    assert [f.status for f in manual] == ["manual"] and reason in manual[0].message
    assert out.replace(f"    # migrate: TFD701 {manual[0].message}\n", "") == code


def test_a_name_the_tape_reads_before_it_assigns_it_becomes_the_closures_parameter():
    """`x = x + 1` under the tape: the closure starts from the value `x` has before the `with`,
    passed in, and gives the new one back when it is read after the tape."""
    code = ("import tensorflow as tf\n\ndef step(x, w):\n    with tf.GradientTape() as tape:\n"
            "        x = x + 1\n        loss = f(x)\n    g = tape.gradient(loss, w)\n    return g, x\n")
    out, refusals = converted_once_and_refusals(code)
    assert refusals == []
    assert "    def forward(x):\n        x = x + 1\n        loss = f(x)\n        return loss, x\n" in out
    assert "    (loss, x), g = mk.value_and_grad(forward, None, w, has_aux=True)(x)\n" in out


def test_a_builtin_the_tape_rebinds_at_module_level_stays():
    code = "import tensorflow as tf\n\nwith tf.GradientTape() as tape:\n    max = max(w)\n    loss = f(max)\ng = tape.gradient(loss, w)\n"
    _, refusals = converted_once_and_refusals(code)
    assert [r.message for r in refusals] == ["not converted: `max` is read under the tape before the tape assigns it"]


def converted_once_and_refusals(code: str):
    """The conversion of ``code`` (a second run must change nothing) and its tape refusals."""
    once, findings = convert(code)
    twice, _ = convert(once)
    assert twice == once
    return once, [f for f in findings if f.rule == "TFD701" and f.status == "manual"]


@pytest.mark.parametrize("again,converts", [
    ("import tensorflow as tf", True),  # the module's own import, once more: nothing new
    ("from tensorflow import keras", False),  # the module never imports `keras`: a new binding
    ("import numpy as tf", False),  # another module under the same name
])
def test_an_import_under_the_tape_of_what_the_module_imports_binds_nothing_new(again, converts):
    """`import tensorflow as tf` repeated under a tape (whose rewrites may leave it unused and
    removed) neither stops the tape nor makes a second run convert what the first left."""
    name = again.split()[-1]
    code = (f"import tensorflow as tf\n\ndef step(x, w):\n    with tf.GradientTape() as tape:\n"
            f"        loss = f(x)\n        try:\n            {again}\n        except ImportError:\n            pass\n"
            f"    g = tape.gradient(loss, w)\n    print({name})\n    return g\n")
    once, refused = converted_once_and_refusals(code)
    if converts:
        assert not refused and "def forward():" in once and "mk.value_and_grad(forward, None, w)()" in once
    else:
        assert refused and f"`{name}` is imported under the tape and read after it: import it before the `with`" in refused[0].message


def test_an_import_under_the_tape_read_after_it_is_named_as_an_import():
    """Not "computed only on some paths": an import on the body's every path is refused for what it is."""
    code = ("import tensorflow as tf\n\ndef step(x, w):\n    with tf.GradientTape() as tape:\n"
            "        import numpy as np\n        loss = f(x)\n    g = tape.gradient(loss, w)\n    return g, np.ones(2)\n")
    once, refused = converted_once_and_refusals(code)
    assert "tape.gradient(loss, w)" in once and len(refused) == 1
    assert refused[0].message.endswith("`np` is imported under the tape and read after it: import it before the `with`")


@pytest.mark.parametrize("strategy_escapes", [False, True])
def test_a_scope_the_run_dissolves_under_the_tape_counts_as_its_body(strategy_escapes):
    """`with strategy.scope():` under a tape, which the same run unwraps, leaves what it
    binds computed on every path: the tape converts on the first run (a second changes
    nothing). A scope that stays (the strategy escapes) still refuses it."""
    escape = "    keep(strategy)\n" if strategy_escapes else ""
    code = ("import tensorflow as tf\n\nstrategy = tf.distribute.MirroredStrategy()\n" + escape.strip() + "\n\n"
            "def step(x, w):\n    with tf.GradientTape() as tape:\n        with strategy.scope():\n"
            "            model = build()\n        loss = model(x)\n    g = tape.gradient(loss, w)\n"
            "    return g, model\n")
    once, refused = converted_once_and_refusals(code)
    if strategy_escapes:
        assert refused and "`model` is read after the tape but computed only on some paths" in refused[0].message
    else:
        assert not refused and "        model = build()\n" in once and "has_aux=True" in once


def test_names_read_after_the_tape_are_returned_in_the_order_computed():
    code = textwrap.dedent("""
        import tensorflow as tf

        def step(x):
            with tf.GradientTape() as tape:
                hidden = encoder(x)  # features
                scratch = hidden * 2
                logits = head(hidden)
                loss = loss_fn(logits) + scratch.mean()
            grads = tape.gradient(loss, weights)
            metric.update(logits, hidden)
            return grads
    """)
    out, _ = convert(code)
    assert "        return loss, hidden, logits\n" in out
    assert "    (loss, hidden, logits), grads = mk.value_and_grad(forward, None, weights, has_aux=True)()\n" in out
    assert "        hidden = encoder(x)  # features\n" in out


def test_free_closure_name_and_module_level_tape():
    code = "import tensorflow as tf\n\nforward = 1\nfor x in data:\n    with tf.GradientTape() as tape:\n        loss = f(x)\n    g = tape.gradient(loss, w)\n"
    out, _ = convert(code)
    assert "    def forward_2():\n" in out and "    loss, g = mk.value_and_grad(forward_2, None, w)()\n" in out


# -- one name, several tapes (a notebook computes a gradient per cell) ---------------------------

SEVERAL_TAPES = """import tensorflow as tf

with tf.GradientTape() as tape:
    loss = f(w)
grads = tape.gradient(loss, [w])
print(grads)

with tf.GradientTape() as tape:
    z = g(w)
dz = tape.gradient(z, [w])
print(dz, loss)
"""


def test_tapes_that_rebind_one_name_in_one_block_convert_each():
    out, findings = convert(SEVERAL_TAPES)
    assert not [f for f in findings if f.status == "manual"]
    assert "loss, grads = mk.value_and_grad(forward, None, [w])()\nprint(grads)\n" in out
    assert "z, dz = mk.value_and_grad(forward, None, [w])()\nprint(dz, loss)\n" in out
    assert "tape" not in out


@pytest.mark.parametrize("code, reason", [
    # a closure reads the name: which tape it sees depends on when it runs
    (SEVERAL_TAPES + "show = lambda: tape\n", "bound more than once"),
    # a read before the first tape binds the name
    ("import tensorflow as tf\n\ntape = None\n" + SEVERAL_TAPES.split("\n", 2)[2], "bound more than once"),
    # the second `tape` is bound by a plain assignment, not a tape's `with`
    (SEVERAL_TAPES + "tape = None\n", "bound more than once"),
    # one of the tapes reads its name twice
    (SEVERAL_TAPES.replace("print(grads)", "print(tape)"), "used other than in one"),
])
def test_tapes_that_rebind_one_name_are_left_where_the_flow_is_not_plain(code, reason):
    out, findings = convert(code)
    manual = [f for f in findings if f.rule == "TFD701" and f.status == "manual"]
    assert manual and any(reason in f.message for f in manual), [f.message for f in manual]


LOOPED_TAPES = """import tensorflow as tf

with tf.GradientTape() as tape:
    z = f(w)
dz = tape.gradient(z, [w])

for step in range(3):
    with tf.GradientTape() as tape:
        loss = model(x)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

with tf.GradientTape() as tape:
    y = g(w)
dy = [tape.gradient(y, [w]) for _ in range(1)]
"""


def test_tapes_of_one_name_in_a_loop_and_in_cells_convert_each():
    """A notebook's training loop binds `tape` in the loop's body, other cells at the top level;
    a read in a comprehension runs where it stands (its own tape stays, for its own reason)."""
    out, findings = convert(LOOPED_TAPES)
    manual = [f.message for f in findings if f.status == "manual"]
    assert manual == ["not converted: `tape.gradient` is called inside a lambda or comprehension"], manual
    assert "z, dz = mk.value_and_grad(forward, None, [w])()\n" in out
    assert "    loss, grads = mk.value_and_grad(forward, None, model.trainable_variables)()\n" in out


@pytest.mark.parametrize("code", [
    # a read after the loop: it sees the last iteration's tape
    LOOPED_TAPES.replace("    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
                         "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\nprint(tape)\n"),
    # a read in the loop before its tape: the first iteration sees the cell's tape above
    LOOPED_TAPES.replace("for step in range(3):\n", "for step in range(3):\n    print(tape)\n"),
    # two tapes in one loop
    LOOPED_TAPES.replace("    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n",
                         "    with tf.GradientTape() as tape:\n        again = model(x)\n"
                         "    more = tape.gradient(again, [w])\n"),
])
def test_tapes_of_one_name_in_a_loop_are_left_where_the_flow_is_not_plain(code):
    out, findings = convert(code)
    manual = [f for f in findings if f.rule == "TFD701" and f.status == "manual"]
    assert any("bound more than once" in f.message for f in manual), [f.message for f in manual]


# -- the scope analysis a tape is examined with -----------------------------------------------

def _sources_with_functions():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    return sorted([*root.glob("fixtures/convert/*/input.py"), *root.glob("fixtures/programs/*/*.py"), root / "examples" / "train.py"])


# Files whose imports change how libcst reads a function's own names (a function analysed
# alone would differ): the planner gives their tapes the whole module's analysis.
SHAPING_IMPORTS = {
    # a read of `os.path` is tied to `import os.path`, not to the local `os`
    "dotted_read": "import os.path\nimport tensorflow as tf\n\n\ndef train(model, w, data):\n"
                   "    with tf.GradientTape() as tape:\n        os = model(data)\n        loss = tf.reduce_sum(os)\n"
                   "    grads = tape.gradient(loss, w)\n    print(os.path)\n    return grads\n",
    "dotted_read_under_tape": "import os.path\nimport tensorflow as tf\n\n\ndef train(model, data, w):\n    os = None\n"
                              "    with tf.GradientTape() as tape:\n        os = model(data)\n        loss = tf.reduce_sum(os.path)\n"
                              "    grads = tape.gradient(loss, w)\n    return grads\n",
    # `cast("h", …)`'s string is a type hint that reads `h`
    "typing_cast": "from typing import cast\nimport tensorflow as tf\n\n\ndef train(model, data, w):\n"
                   "    with tf.GradientTape() as tape:\n        h = model(data)\n        loss = tf.reduce_sum(h)\n"
                   "    grads = tape.gradient(loss, w)\n    return cast(\"h\", grads)\n",
    # a `Literal[...]` string is not
    "typing_literal": "from typing import Literal\nimport tensorflow as tf\n\n\ndef train(model, data, w):\n"
                      "    with tf.GradientTape() as tape:\n        train = model(data)\n        loss = tf.reduce_sum(train)\n"
                      "    grads = tape.gradient(loss, w)\n    mode: Literal[\"train\"] = \"train\"\n    return grads, mode\n",
}


@pytest.mark.parametrize("name", sorted(SHAPING_IMPORTS))
def test_a_tape_in_a_file_whose_imports_shape_scopes_converts_as_with_the_whole_analysis(name):
    from migrate.engine.results import ConvertOptions
    from migrate.engine.runner import RuleSelection, convert_source, rule_index

    index = rule_index(RuleSelection())
    data = SHAPING_IMPORTS[name].encode()
    fast = convert_source(data, index, "t.py", ConvertOptions(pruning=0))
    plain = convert_source(data, index, "t.py", ConvertOptions(pruning=False, scope_shortcut=False))
    assert (fast.status, fast.converted, fast.findings) == (plain.status, plain.converted, plain.findings)


@pytest.mark.parametrize("path", _sources_with_functions() + sorted(SHAPING_IMPORTS),
                         ids=lambda p: p if isinstance(p, str) else f"{p.parent.name}/{p.name}")
def test_a_functions_own_scope_analysis_ties_what_the_modules_does(path):
    """The tape conversion reads the scope analysis of the outermost function around it (a
    module of its own, the same nodes): for every name a function scope in it binds, the
    same bindings and the same reads as the analysis of the whole module, unless the
    file's imports shape the analysis (then the planner does not use it)."""
    import libcst as cst
    from libcst.metadata import FunctionScope, MetadataWrapper, ScopeProvider

    from migrate.engine import passes, planner as codemod

    text = SHAPING_IMPORTS[path] if isinstance(path, str) else path.read_text(encoding="utf-8")
    module = cst.parse_module(text)
    planner = codemod.Planner.__new__(codemod.Planner)
    planner.imports = [n for s in module.body if isinstance(s, cst.SimpleStatementLine) for n in s.body
                       if isinstance(n, (cst.Import, cst.ImportFrom))]
    if planner._imports_shape_scopes():
        assert isinstance(path, str) or "typing" in text or "import os." in text
        return
    assert not isinstance(path, str), "the planner would analyse this function alone"
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    functions = [s for s in module.body if isinstance(s, cst.FunctionDef)]
    functions += [s for c in module.body if isinstance(c, cst.ClassDef) for s in c.body.body if isinstance(s, cst.FunctionDef)]
    compared = 0
    for function in functions:
        declares = passes.Declares()
        function.visit(declares)
        if declares.found:
            continue  # such functions get the whole module's analysis
        alone = MetadataWrapper(cst.Module([function]), unsafe_skip_copy=True).resolve(ScopeProvider)
        for node, scope in alone.items():
            if not isinstance(scope, FunctionScope) or not isinstance(node, cst.Name):
                continue
            for name in {a.name for a in scope.assignments}:
                ours = {(a.node, frozenset(r.node for r in a.references)) for a in scope.assignments[name]}
                theirs = {(a.node, frozenset(r.node for r in a.references)) for a in whole[node].assignments[name]}
                assert ours == theirs, (path.name, function.name.value, name)
                compared += 1
    if functions:
        assert compared, "nothing compared"


@pytest.mark.parametrize("declaration", ["global total", "nonlocal total"])
def test_a_function_that_declares_a_name_is_examined_with_the_modules_analysis(declaration):
    """`global`/`nonlocal` bind a name outside the function: the whole module's analysis decides."""
    from migrate.engine import planner as codemod

    source = STEP.replace("    features, targets = inputs\n", f"    features, targets = inputs\n    {declaration}\n")
    if declaration.startswith("nonlocal"):
        source = source.replace("def train_step(inputs):", "def outer():\n  total = 0\n  def train_step(inputs):")
        source = source.replace("\n    ", "\n      ")
    asked = []
    real = codemod.Planner.scopes_around

    def spy(self, node):
        found = real(self, node)
        asked.append(found[1])
        return found

    codemod.Planner.scopes_around = spy
    try:
        convert(source)
    finally:
        codemod.Planner.scopes_around = real
    assert asked == [False]
    plain, _ = convert(STEP)
    codemod.Planner.scopes_around = spy
    try:
        asked.clear()
        again, _ = convert(STEP)
    finally:
        codemod.Planner.scopes_around = real
    assert asked == [True] and again == plain


@pytest.mark.parametrize("also_read,converts", [
    ("", True),  # every read of `dist` is rewritten: its imports go, and bind nothing under the tape
    ("    print(dist)\n", False),  # a read that stays keeps the imports, and reads one of them
])
def test_an_import_the_run_removes_binds_nothing_under_the_tape(also_read, converts):
    """A name imported under the tape and again after it, each read a tf.distribute API the
    run rewrites: the imports go with their reads, so the first run converts the tape (the
    second used to, once they were gone). A read left as it is still refuses it, for the
    reason a second run gives too: the rewritten reads are not counted as reads."""
    code = ("import tensorflow as tf\n\ndef step(x, w, c):\n    with tf.GradientTape() as tape:\n"
            "        from tensorflow import distribute as dist\n        d = dist.MirroredStrategy()\n"
            "        loss = f(x)\n    g = tape.gradient(loss, w)\n    if c:\n"
            "        from tensorflow import distribute as dist\n        d = dist.MirroredStrategy()\n"
            f"{also_read}    return g\n")
    once, refused = converted_once_and_refusals(code)
    if converts:
        assert not refused and "def forward():" in once and "dist" not in once
    else:
        assert refused and "`dist` is imported under the tape and read after it" in refused[0].message


def test_a_gradient_under_the_tape_splits_the_body_where_the_rewritten_gradient_stands():
    """Rules that add or remove statements before `tape.gradient` in the tape's body (a dissolved
    scope, a removed set-up call) do not move the split: the forward pass is all before it."""
    code = ("import tensorflow as tf\n\nstrategy = tf.distribute.MirroredStrategy()\n\n\ndef step(x, w):\n"
            "    with tf.GradientTape() as tape:\n        tf.debugging.set_log_device_placement(True)\n"
            "        with strategy.scope():\n            model = build()\n            loss = model(x)\n"
            "        g = tape.gradient(loss, w)\n        log(g)\n    return g\n")
    out, findings = convert(code)
    assert [f.status for f in findings if f.rule == "TFD701"] == ["converted"]
    assert ("        model = build()\n        loss = model(x)\n        return loss\n"
            "    loss, g = mk.value_and_grad(forward, None, w)()\n    log(g)\n    return g\n") in out


GATHERED = """import tensorflow as tf

weights = {{"h1": w1}}
lazy = {{}}


def fill_and_run(x):
    lazy["w"] = tf.Variable(1.0)  # filled on the first call, under the tape
    return x * lazy["w"]


def step(x):
    with tf.GradientTape() as g:
        loss = fill_and_run(x)
    trainable = list({source}.values())
    return g.gradient(loss, trainable)
"""


@pytest.mark.parametrize("source,converts", [("weights", True), ("lazy", False)])
def test_sources_gathered_between_from_a_dict_that_something_fills_are_refused(source, converts):
    """Converted, the list is made before the forward pass: from a dict made once it is TF's; from
    one a function fills in place (on its first call, under the tape) it would be empty."""
    _, findings = convert(GATHERED.format(source=source))
    assert [f.status for f in findings if f.rule == "TFD701"] == ["converted" if converts else "manual"]


# -- several gradients of one forward pass: two tapes in one `with`, a persistent tape asked again --

TWO_TAPES = ("    with tf.GradientTape() as a, tf.GradientTape() as b:\n        l1 = f(x)\n        l2 = g(l1)\n"
             "{between}    g1 = a.gradient(l1, w)\n{apart}    g2 = b.gradient(l2, v)\n")


@pytest.mark.parametrize("body, reason", [
    (TWO_TAPES.format(between="", apart="    log(1)\n"), "not one after the other"),
    (TWO_TAPES.format(between="", apart="").replace("g2 = b.gradient(l2, v)", "g2 = b.gradient(l2, g1)"),
     "reads `g1`, which another one assigns"),
    (TWO_TAPES.format(between="", apart="").replace("    g2 = b.gradient(l2, v)\n", "    c(b.gradient(l2, v))\n"),
     "not assigned on a line of its own"),
    ("    with tf.GradientTape() as a, tf.GradientTape() as b:\n        l1 = f(x)\n        l2 = g(l1)\n"
     "        g2 = b.gradient(l2, v)\n    g1 = a.gradient(l1, w)\n", "under the tape, with several gradients"),
    (TWO_TAPES.format(between="    del b\n", apart=""), "`del` of a tape is not in the block"),
    (TWO_TAPES.format(between="", apart="").replace("as b:", "as a:").replace("b.gradient", "a.gradient"),
     "one name"),
    (TWO_TAPES.format(between="", apart="").replace("        l1 = f(x)\n", "        b.watch(x)\n        l1 = f(x)\n"),
     "`tape.watch` with several gradients"),
    ("    with tf.GradientTape() as t:\n        l1 = f(x)\n    g1 = t.gradient(l1, w)\n    g2 = t.gradient(l1, v)\n",
     "more than once on a tape that is not persistent"),
    ("    with tf.GradientTape(persistent=True) as t:\n        l1 = f(x)\n    g1 = t.gradient(l1, w)\n    show(t)\n",
     "other than in `t.gradient(...)` calls"),
])
def test_several_gradients_that_do_not_fit_are_left_with_the_reason(body, reason):
    code = f"import tensorflow as tf\n\ndef step(x, w, v, c):\n{body}"
    out, findings = convert(code)
    manual = [f for f in findings if f.rule == "TFD701"]
    assert manual and {f.status for f in manual} == {"manual"} and reason in manual[0].message, [f.message for f in manual]
    assert "value_and_grads" not in out


def test_several_gradients_become_one_call_where_the_lines_stood_keeping_their_comments():
    """The gradients are computed together where the last line stood; the first line's blank line and
    every line's comments stay above the call; a metric's update between the tape and the gradients
    (it reads the forward pass) runs after them, as in TF after the forward pass."""
    code = ("import tensorflow as tf\n\ndef step(x, w, v):\n"
            "    with tf.GradientTape() as a, tf.GradientTape() as b:\n"
            "        l1 = f(x)\n        l2 = g(l1)\n"
            "    metric.update_state(l2)\n"
            "\n    # the first model\n    g1 = a.gradient(l1, w)\n\n    # the second\n    g2 = b.gradient(l2, v)  # done\n"
            "    return g1, g2\n")
    out, refusals = converted_once_and_refusals(code)
    assert refusals == []
    assert out.endswith(
        "    def forward():\n        l1 = f(x)\n        l2 = g(l1)\n        return l1, l2\n"
        "\n    # the first model\n    # the second\n"
        "    (l1, l2), (g1, g2) = mk.value_and_grads(forward, [w, v])()  # done\n"
        "    metric.update_state(l2)\n"
        "    return g1, g2\n"), out


def test_a_persistent_tapes_gradients_of_one_target_take_one_pass_and_its_del_goes():
    code = ("import tensorflow as tf\n\ndef step(x, w, v):\n"
            "    with tf.GradientTape(persistent=True) as tape:\n        loss = f(x)\n        aux = h(loss)\n"
            "    gw = tape.gradient(loss, w)\n    (gv, gu) = tape.gradient(loss, [v, u])\n    del tape\n"
            "    return gw, gv, gu, aux\n")
    out, refusals = converted_once_and_refusals(code)
    assert refusals == []
    assert ("    (loss, aux), (gw, (gv, gu)) = mk.value_and_grads(forward, [w, [v, u]], targets=[0, 0], has_aux=True)()\n"
            "    return gw, gv, gu, aux\n") in out
    assert "tape" not in out


def test_an_augmented_assignment_under_the_tape_takes_the_value_from_before_it():
    """`loss += f(x)` reads `loss`: the closure takes it as its parameter (without it, the closure's
    `loss` would be a local read before assignment), and a target accumulated in a loop is defined
    on every path, the one it came in with."""
    code = ("import tensorflow as tf\n\ndef step(x, w, steps):\n    loss = 0\n    with tf.GradientTape() as tape:\n"
            "        for t in range(steps):\n            loss += f(x, t)\n    g = tape.gradient(loss, w)\n    return g\n")
    out, refusals = converted_once_and_refusals(code)
    assert refusals == []
    assert ("    def forward(loss):\n        for t in range(steps):\n            loss += f(x, t)\n        return loss\n"
            "    loss, g = mk.value_and_grad(forward, None, w)(loss)\n") in out


def test_a_statement_independent_of_the_moved_ones_stays_before_the_gradient():
    """TF's translation tutorial: `batch_loss = loss / n` reads the forward pass (it moves after the
    gradient), `variables = enc.trainable_variables + dec.trainable_variables` does not (it stays:
    the sum of two models' weights stays live until their first call builds them)."""
    code = ("import tensorflow as tf\n\ndef step(x, enc, dec):\n    with tf.GradientTape() as tape:\n"
            "        loss = dec(enc(x))\n    batch_loss = loss / 4\n"
            "    variables = enc.trainable_variables + dec.trainable_variables\n"
            "    gradients = tape.gradient(loss, variables)\n    return batch_loss, gradients\n")
    out, refusals = converted_once_and_refusals(code)
    assert refusals == []
    assert ("    variables = enc.trainable_variables + dec.trainable_variables\n"
            "    loss, gradients = mk.value_and_grad(forward, None, variables)()\n"
            "    batch_loss = loss / 4\n") in out
    # one that reads what a moved statement binds cannot stay before it
    _, findings = convert(code.replace("dec.trainable_variables\n", "dec.trainable_variables + [batch_loss]\n"))
    assert [f.status for f in findings if f.rule == "TFD701"] == ["manual"]


def test_a_name_the_body_assigns_before_its_augmented_assignment_is_no_parameter():
    """`loss = f(x)` then `loss += g(x)` under the tape: the `+=` reads the body's own value, so the
    closure takes nothing (a parameter would read a `loss` not assigned yet: an UnboundLocalError)."""
    code = ("import tensorflow as tf\n\ndef step(x, w):\n    with tf.GradientTape() as tape:\n"
            "        loss = f(x)\n        loss += g(x)\n    grads = tape.gradient(loss, w)\n    loss = loss * 2\n"
            "    return grads, loss\n")
    out, refusals = converted_once_and_refusals(code)
    assert refusals == []
    assert "    def forward():\n" in out and "mk.value_and_grad(forward, None, w)()\n" in out


def test_a_body_that_changes_state_is_not_run_once_per_gradient():
    code = ("import tensorflow as tf\n\ndef step(x, w, v):\n    with tf.GradientTape() as a, tf.GradientTape() as b:\n"
            "        count.assign_add(1.0)\n        l1 = f(x) * count\n        l2 = g(l1)\n"
            "    g1 = a.gradient(l1, w)\n    g2 = b.gradient(l2, v)\n    return g1, g2\n")
    out, findings = convert(code)
    manual = [f for f in findings if f.rule == "TFD701"]
    assert manual and {f.status for f in manual} == {"manual"}
    assert "changes state (`count.assign_add(1.0)`)" in manual[0].message
    # one gradient of it runs the body once, as TF's tape does: converted
    _, findings = convert(code.replace(", tf.GradientTape() as b", "").replace("    g2 = b.gradient(l2, v)\n", "")
                          .replace("return g1, g2", "return g1"))
    assert [f.status for f in findings if f.rule == "TFD701"] == ["converted"]


def test_comments_in_and_after_the_merged_gradient_lines_and_del_stay():
    code = ("import tensorflow as tf\n\ndef step(x, w, v):\n    with tf.GradientTape() as a, tf.GradientTape() as b:\n"
            "        l1 = f(x)\n        l2 = g(l1)\n"
            "    g1 = a.gradient(\n        l1,  # the first loss\n        w,\n    )  # first\n"
            "    g2 = b.gradient(l2, v)  # second\n    del a  # done\n    return g1, g2\n")
    out, refusals = converted_once_and_refusals(code)
    assert refusals == []
    for comment in ("# the first loss", "# first", "# second", "# done"):
        assert out.count(comment) == 1, (comment, out)
    assert "del a" not in out


METRICS_BETWEEN = ("import tensorflow as tf\n\nclass M(tf.keras.Model):\n    def train_step(self, data):\n"
                   "        x, y = data\n        with tf.GradientTape() as tape:\n"
                   "            y_pred = self(x, training=True)\n            loss = self.compiled_loss(y, y_pred)\n"
                   "        {between}\n        gradients = tape.gradient(loss, self.trainable_variables)\n"
                   "        return gradients\n")


@pytest.mark.parametrize("between, converts", [
    ("self.compiled_metrics.update_state(y, y_pred)", True),  # the metric's state only: after the gradient
    ("self.loss_tracker.reset_state()", True),
    ("self.extend(y_pred)", False),  # any other call on what the gradient reads may change its sources
    ("self.compiled_metrics.update_state(y, self.head(y_pred))", False),  # `self` read outside the receiver
])
def test_a_metric_update_on_an_object_the_gradient_reads_moves_after_the_gradient(between, converts):
    """NVIDIA's ConvNets runner: `self.compiled_metrics.update_state(y, y_pred)` between the tape and
    `tape.gradient(loss, self.trainable_variables)`. A metric's update changes the metric's own
    state, not the model's weights the gradient is taken for, so it runs after the gradient (still
    after the forward pass, whose result it reads)."""
    code = METRICS_BETWEEN.format(between=between)
    out, findings = convert(code)
    assert [f.status for f in findings if f.rule == "TFD701"] == ["converted" if converts else "manual"]
    if converts:
        assert ("        (loss, y_pred), gradients = mk.value_and_grad(forward, None, self.trainable_variables, "
                f"has_aux=True)()\n        {between}\n        return gradients\n") in out or \
               (f"        loss, gradients = mk.value_and_grad(forward, None, self.trainable_variables)()\n"
                f"        {between}\n        return gradients\n") in out, out


HOISTED = ("import tensorflow as tf\n\nclass M(tf.keras.Model):\n    def call(self, x):\n"
           "        with tf.GradientTape() as tape:\n{body}"
           "            grads = tape.gradient(loss, ws)\n            self.optimizer.apply_gradients(zip(grads, ws))\n"
           "        return loss\n")


@pytest.mark.parametrize("body, converts", [
    # the model's live weights, read after the forward pass: read before it
    ("            loss = self.net(x).mean()\n            ws = self.net.trainable_weights\n", True),
    ("            loss = self.net(x).mean()\n            ws = self.net.head.trainable_weights\n"
     "            print([w.name for w in ws])\n", True),
    # `trainable_variables` is a `tf.Module`'s too, which has no live view
    ("            loss = self.net(x).mean()\n            ws = self.net.trainable_variables\n", False),
    # a list made from them is no live view
    ("            loss = self.net(x).mean()\n            ws = list(self.net.trainable_weights)\n", False),
    # all weights (non-trainable too) are not a live view either
    ("            loss = self.net(x).mean()\n            ws = self.net.weights\n", False),
    # the body replaces the model it reads the weights of
    ("            self.net = make()\n            loss = self.net(x).mean()\n            ws = self.net.trainable_weights\n",
     False),
    # the name is read under the tape before the line binds it
    ("            loss = self.net(x).mean() + len(ws)\n            ws = self.net.trainable_weights\n", False),
    # bound twice under the tape
    ("            ws = []\n            loss = self.net(x).mean()\n            ws = self.net.trainable_weights\n", False),
    # the chain starts at a name the body computes
    ("            net = pick(x)\n            loss = net(x).mean()\n            ws = net.trainable_weights\n", False),
])
def test_sources_read_off_a_models_weights_under_the_tape_move_before_the_gradient(body, converts):
    out, findings = convert(HOISTED.format(body=body))
    _check_hoisting(out, findings, converts)


@pytest.mark.parametrize("sources", ["ws[:2]", "[w for w in ws if w.trainable]", "ws + extra"])
def test_sources_made_from_the_weights_under_the_tape_are_not_moved(sources):
    """A slice or a list made from the live view before the first call is a plain empty list."""
    body = "            loss = self.net(x).mean()\n            ws = self.net.trainable_weights\n"
    out, findings = convert(HOISTED.format(body=body).replace("tape.gradient(loss, ws)", f"tape.gradient(loss, {sources})"))
    _check_hoisting(out, findings, False)


def _check_hoisting(out, findings, converts):
    manual = [f for f in findings if f.rule == "TFD701" and f.status == "manual"]
    assert (not manual) == converts, [f.message for f in manual]
    if converts:
        hoisted = next(line for line in out.splitlines() if line.strip().startswith("ws = "))
        assert out.index("def forward():") < out.index(hoisted) < out.index("mk.value_and_grad(forward")
        compile(out, "converted.py", "exec")


@pytest.mark.parametrize("wrap, converts", [
    ("    if hvd.size() > 1:\n        tape = hvd.DistributedGradientTape(tape)\n", True),
    ("    if wrap:\n        tape = hvd.DistributedGradientTape(tape, op=hvd.Sum)\n", True),
    # an `else`, other statements under the `if`, or a condition that reads the tape
    ("    if wrap:\n        tape = hvd.DistributedGradientTape(tape)\n    else:\n        pass\n", False),
    ("    if wrap:\n        log()\n        tape = hvd.DistributedGradientTape(tape)\n", False),
    ("    if tape is not None:\n        tape = hvd.DistributedGradientTape(tape)\n", False),
    # the condition reads what the forward pass, a statement between or the gradient line binds:
    # run after the gradient, it would see another value
    ("    big = loss > 1.0\n    if big:\n        tape = hvd.DistributedGradientTape(tape)\n", False),
    ("    if wrap:\n        tape = hvd.DistributedGradientTape(tape)\n    wrap = False\n", False),
    ("    if grads is None:\n        tape = hvd.DistributedGradientTape(tape)\n", False),
    ("    if loss > 1.0:\n        tape = hvd.DistributedGradientTape(tape)\n", False),
    # a statement between the `with` and the wrap that may not run before the forward pass
    ("    x.flag = check()\n    tape = hvd.DistributedGradientTape(tape, compression=c if x.flag else d)\n", False),
])
def test_a_wrap_alone_under_an_if_reduces_under_that_if(wrap, converts):
    code = ("import horovod.tensorflow as hvd\nimport tensorflow as tf\n\ndef step(x, wrap):\n"
            "    with tf.GradientTape() as tape:\n        loss = net(x).mean()\n"
            f"{wrap}    grads = tape.gradient(loss, net.trainable_variables)\n    return grads\n")
    out, findings = convert(code)
    manual = [f for f in findings if f.rule in ("TFD701", "HVD005") and f.status == "manual"]
    assert (not manual) == converts, [f.message for f in manual]
    if converts:
        gradient = out.index("grads = mk.value_and_grad(forward")
        condition = out.index("    if ")
        assert gradient < condition < out.index("grads = hvd.allreduce_gradients(grads")
    else:  # (a second run, which finds the runtime's wrap of the tape left TensorFlow, says nothing new)
        assert convert(out)[0] == out
