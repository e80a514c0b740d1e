"""NumPy arrays handed to TF ops that convert to MindSpore's are given as tensors (TFT140).

TF's ops convert arrays; MindSpore's functional ops raise ``TypeError`` on one. The
conversion wraps an argument known to be an array in ``ms.Tensor(...)`` and nothing else:
golden pairs here, and the converted programs run on MindSpore against TF's numbers
(TF in a subprocess, MindSpore in another).
"""

from __future__ import annotations

import importlib.util
import json
import textwrap

import pytest

from migrate.engine.runner import RuleSelection, convert_source, rule_index
from tests.helpers import PLAIN_JSON, assert_converts, convert, python_json

WRAPPED = {
    "an array a module-level function hands to MindSpore's ops, at its calls": (
        """
        import numpy as np
        import tensorflow as tf

        labels = np.array([1, 0, 2])


        def accuracy(y_pred, y_true):
            correct = tf.equal(tf.argmax(y_pred, 1), tf.cast(y_true, tf.int64))
            return tf.reduce_mean(tf.cast(correct, tf.float32))


        print(accuracy(tf.one_hot(labels, 3), labels))
        print(accuracy(y_true=labels[:2], y_pred=tf.ones((2, 3))))
        """,
        """
        import numpy as np
        import mindspore as ms
        from mindspore import ops

        labels = np.array([1, 0, 2])


        def accuracy(y_pred, y_true):
            correct = ops.equal(ops.argmax(y_pred, dim=1), ops.cast(y_true, ms.int64))
            return ops.mean(ops.cast(correct, ms.float32))


        print(accuracy(ops.one_hot(ops.cast(ms.Tensor(labels), ms.int64), 3, 1.0, 0.0), ms.Tensor(labels)))
        print(accuracy(y_true=ms.Tensor(labels[:2]), y_pred=ops.ones((2, 3))))
        """,
    ),
    "an array beside a tensor in an operator, on either side, takes the tensor's dtype": (
        """
        import numpy as np
        import tensorflow as tf

        x = np.linspace(0.0, 1.0, 4)
        w = tf.Variable(0.5)
        y = w * x + 1.0
        z = (x - 0.5) * w
        above = w > x
        """,
        """
        import numpy as np
        import mindspore as ms

        x = np.linspace(0.0, 1.0, 4)
        w = ms.Parameter(0.5)
        y = w * ms.Tensor(x, w.dtype) + 1.0
        z = ms.Tensor(x - 0.5, w.dtype) * w
        above = w > ms.Tensor(x, w.dtype)
        """,
    ),
    "arrays a function puts beside tensors, at its calls": (
        """
        import numpy as np
        import tensorflow as tf

        X = np.array([3.3, 4.4, 5.5])
        Y = np.array([1.7, 2.76, 2.09])
        W = tf.Variable(0.3, name="weight")
        b = tf.Variable(0.1, name="bias")


        def linear_regression(x):
            return W * x + b


        def mean_square(y_pred, y_true):
            return tf.reduce_mean(tf.square(y_pred - y_true))


        pred = linear_regression(X)
        print(mean_square(pred, Y))
        """,
        """
        import numpy as np
        from mindspore import ops
        import mindspore as ms

        X = np.array([3.3, 4.4, 5.5])
        Y = np.array([1.7, 2.76, 2.09])
        W = ms.Parameter(0.3, name="weight")
        b = ms.Parameter(0.1, name="bias")


        def linear_regression(x):
            return W * x + b


        def mean_square(y_pred, y_true):
            return ops.mean(ops.square(y_pred - y_true))


        pred = linear_regression(ms.Tensor(X, W.dtype))
        print(mean_square(pred, ms.Tensor(Y, pred.dtype)))
        """,
    ),
    "a list display given as an op's input: TF's dtype for its literals, its tensors stacked": (
        """
        import tensorflow as tf

        a = tf.constant(2)
        b = tf.constant(3)
        total = tf.reduce_sum([1, 2, 3])
        mean = tf.reduce_mean([a, b])
        scores = tf.nn.softmax([[1.0, 2.0], [3, 4]])
        flags = tf.reduce_any([True, False])
        """,
        """
        import mindspore as ms
        from mindspore import ops

        a = ms.Tensor(2, ms.int32)
        b = ms.Tensor(3, ms.int32)
        total = ops.sum(ms.Tensor([1, 2, 3], ms.int32))
        mean = ops.mean(ops.stack([a, b]))
        scores = ops.softmax(ms.Tensor([[1.0, 2.0], [3, 4]], ms.float32))
        flags = ops.any(ms.Tensor([True, False], ms.bool_))
        """,
    ),
    "an array a function's first statement hands to an op and binds the name to": (
        """
        import numpy as np
        import tensorflow as tf

        x_test = np.zeros((4, 784), np.float32)


        def conv_net(x):
            x = tf.reshape(x, [-1, 28, 28, 1])
            print(x.shape)
            return tf.nn.relu(x)


        pred = conv_net(x_test)
        """,
        """
        import numpy as np
        from mindspore import ops
        import mindspore as ms

        x_test = np.zeros((4, 784), np.float32)


        def conv_net(x):
            x = ops.reshape(x, [-1, 28, 28, 1])
            print(x.shape)
            return ops.relu(x)


        pred = conv_net(ms.Tensor(x_test))
        """,
    ),
    "a .numpy() result and an np call": (
        """
        import numpy as np
        import tensorflow as tf

        logits = tf.constant([[1.0, 2.0]])
        predictions = (logits * 2).numpy()
        p = tf.nn.softmax(predictions)
        z = tf.reduce_max(np.zeros((2, 3)), axis=0)
        """,
        """
        import numpy as np
        import mindspore as ms
        from mindspore import ops

        logits = ms.Tensor([[1.0, 2.0]])
        predictions = (logits * 2).numpy()
        p = ops.softmax(ms.Tensor(predictions))
        z = ops.amax(ms.Tensor(np.zeros((2, 3))), axis=0)
        """,
    ),
    "load_data arrays, arithmetic and indexing, bound twice": (
        """
        import tensorflow as tf

        (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
        x_train, x_test = x_train / 255.0, x_test / 255.0
        first = tf.cast(x_train[:1], tf.float32)
        labels = tf.one_hot(y_train[:4], 10)
        """,
        """
        import mindspore as ms
        from migrate.runtime import keras as mk
        from mindspore import ops

        (x_train, y_train), (x_test, y_test) = mk.datasets.mnist.load_data()
        x_train, x_test = x_train / 255.0, x_test / 255.0
        first = ops.cast(ms.Tensor(x_train[:1]), ms.float32)
        labels = ops.one_hot(ops.cast(ms.Tensor(y_train[:4]), ms.int64), 10, 1.0, 0.0)
        """,
    ),
    "the arrays of a list a concatenation takes, and an array's method": (
        """
        import numpy as np
        import tensorflow as tf

        a = np.arange(6).reshape(2, 3)
        b = a.astype(np.float32)
        both = tf.concat([a, -a], axis=0)
        c = tf.exp(b.T)
        """,
        """
        import numpy as np
        from mindspore import ops
        import mindspore as ms

        a = np.arange(6).reshape(2, 3)
        b = a.astype(np.float32)
        both = ops.concat([ms.Tensor(a), ms.Tensor(-a)], 0)
        c = ops.exp(ms.Tensor(b.T))
        """,
    ),
    "parentheses around the argument, and a line with wide characters before it": (
        """
        import numpy as np
        import tensorflow as tf

        x = np.ones((2, 3), np.uint8)
        y = tf.cast((x / 255.0), tf.float32); label = "größe"; z = tf.exp(x * 1.0)
        """,
        """
        import numpy as np
        import mindspore as ms
        from mindspore import ops

        x = np.ones((2, 3), np.uint8)
        y = ops.cast(ms.Tensor(x / 255.0), ms.float32); label = "größe"; z = ops.exp(ms.Tensor(x * 1.0))
        """,
    ),
    "a line holding a character str.splitlines breaks at": (
        'import numpy as np\nimport tensorflow as tf\n\ns = "\x85"\nx = np.zeros(3)\nb = tf.nn.softmax(np.zeros(3))\n',
        'import numpy as np\nfrom mindspore import ops\nimport mindspore as ms\n\ns = "\x85"\nx = np.zeros(3)\nb = ops.softmax(ms.Tensor(np.zeros(3)))\n',
    ),
}

LEFT = {
    "a parameter": """
        import tensorflow as tf

        def scale(x):
            return tf.nn.softmax(x * 2.0)
        """,
    "a name a loop binds again to a tensor": """
        import numpy as np
        import tensorflow as tf

        x = np.ones((2, 2))
        for _ in range(3):
            x = tf.exp(x)
        """,
    "an array beside a tensor whose dtype is not a name read there": """
        import numpy as np
        import tensorflow as tf

        x = np.ones(3)
        t = tf.ones(3)
        y = tf.exp(t) * x
        """,
    "an array put beside a parameter a call leaves to its default": """
        import numpy as np
        import tensorflow as tf

        W = tf.Variable(2.0)
        x = np.ones(3)


        def scaled(v, w=W):
            return w * v


        scaled(x)
        """,
    "a parameter read otherwise too": """
        import numpy as np
        import tensorflow as tf

        w = tf.Variable(2.0)
        x = np.ones(3)


        def scaled(v):
            print(v.shape)
            return w * v


        scaled(x)
        """,
    "a number beside a tensor or cast, a list given where it is not the input, and a list of names": """
        import tensorflow as tf

        e = tf.add(tf.ones(2), 1.0)
        c = tf.cast(5, tf.float32)
        r = tf.reshape(tf.ones(4), [2, 2])
        s = tf.reduce_sum([width, height])
        """,
    "an unknown call's value": """
        import tensorflow as tf
        import pandas as pd

        frame = pd.read_csv("data.csv")
        t = tf.cast(frame.values, tf.float32)
        """,
    "a name a closure binds again, nonlocal": """
        import numpy as np
        import tensorflow as tf

        def run(batches):
            state = np.zeros(3)
            def update(batch):
                nonlocal state
                state = state + tf.reduce_mean(batch, axis=0)
            for batch in batches:
                update(batch)
            return tf.nn.softmax(state)
        """,
    "an except's name and a case's capture over a module array": """
        import numpy as np
        import tensorflow as tf

        x = np.zeros(3)
        y = np.zeros(3)

        def f(t, cfg):
            try:
                t()
            except ValueError as y:
                tf.nn.softmax(y)
            match cfg:
                case {"logits": x}:
                    tf.nn.softmax(x)
        """,
    "np bound by a function's own import, or a parameter": """
        import numpy as np
        import tensorflow as tf

        def g():
            import mindspore.numpy as np
            return tf.nn.softmax(np.zeros(3))

        def h(np):
            return tf.nn.softmax(np.zeros(3))
        """,
    "a generator's method that gives a Python int": """
        import numpy as np
        import tensorflow as tf

        rs = np.random.RandomState(0)
        k = rs.randint(10)
        sq = tf.square(k)
        """,
    "a binding that rests on one that turns out a tensor, whatever is asked first": """
        import numpy as np
        import tensorflow as tf

        t = tf.ones(3)
        x = np.zeros(3)
        for step in range(3):
            y = x * 2.0
            probs = tf.nn.softmax(y)
            x = t + y
        print(tf.nn.softmax(x))
        """,
    "a parameter the function also reads otherwise, binds again, or a function handed on": """
        import numpy as np
        import tensorflow as tf

        labels = np.array([1, 0, 2])


        def counts(y_true):
            return tf.cast(y_true, tf.int64), y_true.sum()


        def rebound(y_true):
            y_true = y_true + 1
            return tf.cast(y_true, tf.int64)


        def handed(y_true):
            return tf.cast(y_true, tf.int64)


        def method_like(self, y_true):
            return tf.cast(y_true, tf.int64)


        def as_float32(fn):
            return lambda x: fn(x.astype(np.float32))


        @as_float32
        def decorated(y_true):
            return tf.cast(y_true, tf.int64)


        decorated(labels)
        counts(labels)
        rebound(labels)
        handed(labels)
        apply = list(map(handed, [labels]))
        method_like(None, *[labels])
        """,
    "a tuple of load_data, not one of its arrays": """
        import tensorflow as tf

        train, test = tf.keras.datasets.mnist.load_data()
        t = tf.cast(train, tf.float32)
        """,
}


@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_arrays_given_to_mindspore_ops_are_wrapped(name):
    before, after = WRAPPED[name]
    assert_converts(textwrap.dedent(before).lstrip(), textwrap.dedent(after).lstrip())


@pytest.mark.parametrize("name", sorted(LEFT))
def test_what_is_not_known_to_be_an_array_is_left_as_it_is(name):
    code, findings = convert(textwrap.dedent(LEFT[name]).lstrip())
    assert "ms.Tensor(" not in code, code
    assert not [f for f in findings if f.rule == "TFT140"]


def test_each_wrapped_array_is_a_finding_at_its_original_line():
    source = textwrap.dedent("""
        import numpy as np
        import tensorflow as tf

        # scores
        scores = np.ones((2, 10))
        p = tf.nn.softmax(scores)


        q = tf.concat([scores, scores], 0)
        """).lstrip()
    _, findings = convert(source)
    found = [(f.line, f.col, f.status) for f in findings if f.rule == "TFT140"]
    assert found == [(6, 19, "converted"), (9, 16, "converted"), (9, 24, "converted")], found
    message = next(f.message for f in findings if f.rule == "TFT140")
    assert "`scores` is a NumPy array" in message and "ms.Tensor(scores)" in message


def test_a_wrapped_number_or_list_is_said_to_be_one():
    _, findings = convert("import tensorflow as tf\n\ns = tf.square(5)\np = tf.add([1, 2], [3.5, 4])\n")
    messages = [(f.line, f.col, f.message) for f in findings if f.rule == "TFT140"]
    assert [(line, col) for line, col, _ in messages] == [(3, 15), (4, 12), (4, 20)], messages
    assert messages[0][2].startswith("`5` is a Python number, which `ops.square` does not take") \
        and "`ms.Tensor(5, ms.int32)`" in messages[0][2], messages[0][2]
    assert messages[1][2].startswith("`[1, 2]` is a Python list, which `ops.add` does not take") \
        and "`ms.Tensor([3.5, 4], ms.float32)`" in messages[2][2], messages


def test_the_shim_tier_wraps_arrays_too():
    source = "import numpy as np\nimport tensorflow as tf\n\nx = np.ones(3)\ny = tf.exp(x)\n"
    result = convert_source(source.encode(), rule_index(RuleSelection(ignore=("TFL",))), "example.py")
    assert "ops.exp(ms.Tensor(x))" in result.converted.decode()


def test_a_file_binding_ms_to_something_else_wraps_with_its_alias():
    source = "import numpy as np\nimport tensorflow as tf\n\nms = 'milliseconds'\nx = np.ones(3)\ny = tf.exp(x)\n"
    code, _ = convert(source)
    assert "ms = 'milliseconds'" in code
    assert "ops.exp(mindspore.Tensor(x))" in code and "\nimport mindspore\n" in code, code


# -- the numbers ------------------------------------------------------------------------------

PROGRAM = """
import numpy as np
import tensorflow as tf

images = (np.arange(96) * 37 % 256).reshape(6, 4, 4).astype(np.uint8)
scores = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
probabilities = tf.nn.softmax(scores)
pixels = tf.cast(images[..., tf.newaxis] / 255.0, tf.float32)
joined = tf.concat([images[:2], images[2:4]], axis=0)
total = tf.reduce_sum(tf.nn.softmax(scores), axis=1)
again = tf.nn.softmax(tf.nn.softmax(scores).numpy())
"""
NAMES = ["probabilities", "pixels", "joined", "total", "again"]


def _results(code: str) -> dict:
    script = (f"import json\nimport numpy as np\n{PLAIN_JSON}\n{code}\n"
              f"print(json.dumps({{n: plain(globals()[n]) for n in {NAMES!r}}}))\n")
    return python_json(script)


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None,
                    reason="needs TensorFlow and MindSpore")
def test_the_converted_program_gives_tfs_values_and_dtypes():
    converted, findings = convert(PROGRAM)
    assert "import tensorflow" not in converted, converted
    assert len([f for f in findings if f.rule == "TFT140"]) >= 5
    want, got = _results(PROGRAM), _results(converted)
    for name in NAMES:
        assert got[name]["dtype"] == want[name]["dtype"], (name, got[name]["dtype"], want[name]["dtype"])
        assert got[name]["shape"] == want[name]["shape"], name
        assert json.dumps(got[name]["value"]) == json.dumps(want[name]["value"]) or _close(got[name]["value"], want[name]["value"]), name


def _close(a, b, tol=1e-6) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    return abs(a - b) <= tol * max(1.0, abs(b))


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None,
                    reason="needs TensorFlow and MindSpore")
def test_an_array_handed_through_a_function_gives_tfs_numbers():
    """TensorFlow-Examples' `accuracy(pred, y_test)`: the ops inside the function get a tensor."""
    program = textwrap.dedent("""
        import numpy as np
        import tensorflow as tf

        labels = np.array([1, 0, 2, 2])
        scores = np.eye(3, dtype=np.float32)[[1, 1, 2, 0]]


        def accuracy(y_pred, y_true):
            correct = tf.equal(tf.argmax(y_pred, 1), tf.cast(y_true, tf.int64))
            return tf.reduce_mean(tf.cast(correct, tf.float32))


        value = accuracy(tf.constant(scores), labels)
        """)
    converted, findings = convert(program)
    assert "accuracy(ms.Tensor(scores), ms.Tensor(labels))" in converted, converted
    [note] = [f for f in findings if f.rule == "TFT140" and "labels" in f.message]
    assert "given to `accuracy` as `y_true`, which it hands to `ops.cast`" in note.message
    def script(code):
        return "import json\n" + PLAIN_JSON + "\n" + code + "\nprint(json.dumps(plain(value)))\n"

    want, got = python_json(script(program)), python_json(script(converted))
    assert got["value"] == want["value"] == 0.5 and got["dtype"] == want["dtype"]


LINEAR_REGRESSION = """
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
X = np.array([3.3, 4.4, 5.5, 6.71, 6.93, 4.168, 9.779, 6.182, 7.59, 2.167])
Y = np.array([1.7, 2.76, 2.09, 3.19, 1.694, 1.573, 3.366, 2.596, 2.53, 1.221])
W = tf.Variable(rng.randn(), name="weight")
b = tf.Variable(rng.randn(), name="bias")


def linear_regression(x):
    return W * x + b


def mean_square(y_pred, y_true):
    return tf.reduce_mean(tf.square(y_pred - y_true))


optimizer = tf.optimizers.SGD(0.01)


def run_optimization():
    with tf.GradientTape() as g:
        pred = linear_regression(X)
        loss = mean_square(pred, Y)
    gradients = g.gradient(loss, [W, b])
    optimizer.apply_gradients(zip(gradients, [W, b]))


for step in range(40):
    run_optimization()
losses = [float(mean_square(linear_regression(X), Y)), float(W.numpy()), float(b.numpy())]
fitted = (W * X + b).numpy()
"""


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None,
                    reason="needs TensorFlow and MindSpore")
@pytest.mark.parametrize("tier", ["native", "shim"])
def test_arrays_beside_variables_train_to_tfs_numbers(tier):
    """TensorFlow-Examples' linear regression: `W * x + b` and `y_pred - y_true` with NumPy data.
    MindSpore's operators raise TypeError on an array; converted, the arrays become tensors of
    the variables' dtype where the functions are called, and the fit is TF's."""
    selection = RuleSelection(ignore=("TFL",)) if tier == "shim" else RuleSelection()
    result = convert_source(LINEAR_REGRESSION.encode(), rule_index(selection), "linear_regression.py")
    converted = result.converted.decode()
    assert "linear_regression(ms.Tensor(X, W.dtype))" in converted, converted
    assert "mean_square(pred, ms.Tensor(Y, pred.dtype))" in converted, converted
    assert ("ms.Parameter(" in converted) is (tier == "native"), converted
    notes = [f.message for f in result.findings if f.rule == "TFT140"]
    assert "`Y` is a NumPy array given to `mean_square` as `y_true`, which it puts beside a MindSpore tensor in `-`; " \
        "MindSpore's operator does not take it (TF's converts it to the tensor's dtype): it is given as " \
        "`ms.Tensor(Y, pred.dtype)`" in notes, notes
    assert "`X` is a NumPy array beside a MindSpore tensor in `*`, which MindSpore's operator does not take (TF's " \
        "converts it to the tensor's dtype): it is given as `ms.Tensor(X, W.dtype)`" in notes, notes

    def script(code):
        return "import json\n" + PLAIN_JSON + "\n" + code + "\nprint(json.dumps([losses, plain(fitted)]))\n"

    (want, want_fit), (got, got_fit) = python_json(script(LINEAR_REGRESSION)), python_json(script(converted))
    assert _close(got, want, 1e-5), (got, want)
    assert got_fit["dtype"] == want_fit["dtype"] == "float32" and _close(got_fit["value"], want_fit["value"], 1e-5)


LISTS = """
import tensorflow as tf

a = tf.constant(2)
b = tf.constant(3)
c = tf.constant(5)
mean = tf.reduce_mean([a, b, c])
total = tf.reduce_sum([a, b, c])
ints = tf.reduce_sum([1, 2, 3])
floats = tf.reduce_mean([1.0, 2, 4])
probabilities = tf.nn.softmax([[1.0, 2.0], [3, 4]])
# (the customization basics tutorial's first lines: numbers and lists as ops' inputs)
pair = tf.math.add([1, 2], [3, 4])
squares = tf.math.square(2) + tf.math.square(3)
root = tf.sqrt(2.0)
product = tf.linalg.matmul([[1]], [[2, 3]])
shifted = tf.add(product, 1)
"""


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("tensorflow") is None,
                    reason="needs TensorFlow and MindSpore")
def test_lists_given_to_ops_give_tfs_values_and_dtypes():
    """TensorFlow-Examples' basic operations: `tf.reduce_mean([a, b, c])` of int32 tensors is
    int32 3 (TF's integer mean); MindSpore's ops raise TypeError on a list, and an elementwise
    op on a Python number (`ops.square(2)`); TF's tensors are int32 and float32."""
    converted, _ = convert(LISTS)
    names = ["mean", "total", "ints", "floats", "probabilities", "pair", "squares", "root", "product", "shifted"]

    def script(code):
        return (f"import json\nimport numpy as np\n{PLAIN_JSON}\n{code}\n"
                f"print(json.dumps({{n: plain(globals()[n]) for n in {names!r}}}))\n")

    want, got = python_json(script(LISTS)), python_json(script(converted))
    for name in names:
        # (an int32 sum is int64 in MindSpore: TFM201's own, known difference)
        widened = ("int32", "int64") if name in ("total", "ints") else None
        dtypes = (want[name]["dtype"], got[name]["dtype"])
        assert dtypes == widened if widened else dtypes[0] == dtypes[1], (name, got[name], want[name])
        assert _close(got[name]["value"], want[name]["value"]), (name, got[name], want[name])
    assert want["mean"]["value"] == got["mean"]["value"] == 3 and got["mean"]["dtype"] == "int32"
