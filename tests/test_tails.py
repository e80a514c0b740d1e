"""Chains a rule matches on any receiver (`x.shape.as_list()`, `x.get_shape()`, `x.shape.ndims`):
what they become, where they are left alone, and what a rule file may say about them."""

from __future__ import annotations

import textwrap

import pytest

from migrate.rules import RuleError, parse_rule
from tests.helpers import convert


def converted(code: str) -> str:
    return convert(textwrap.dedent(code))[0]


def test_every_receiver_is_rewritten_and_converted_inside():
    out = converted("""\
        import tensorflow as tf

        def f(x, layer, self):
            a = x.shape.as_list()
            b = layer(x).get_shape().as_list()[-1]
            c = tf.reshape(x, [-1]).shape.ndims
            d = self.kernel.get_shape()[0]
            return a, b, c, d
        """)
    assert "a = list(x.shape)" in out
    assert "b = list(layer(x).shape)[-1]" in out
    assert "c = len(ops.reshape(x, [-1]).shape)" in out
    assert "d = self.kernel.shape[0]" in out
    assert "tensorflow" not in out


@pytest.mark.parametrize("code", [
    "import tensorflow as tf\nn = x.shape.as_list(1)\n",  # a call with an argument: not TF's method
    "import tensorflow as tf\nn = x.shape.as_list\n",  # not called
    "import tensorflow as tf\nn = x.shape_as_list()\n",
    "import numpy as np\nn = x.shape.as_list()\n",  # a file that does not use TensorFlow
])
def test_what_is_left_alone(code):
    assert converted(code) == code


def test_the_argument_of_a_call_that_stays_tensorflow_stays_as_written():
    out = converted("""\
        import tensorflow as tf

        v = tf.Variable(x.shape.as_list(), constraint=clip)
        """)
    assert "x.shape.as_list()" in out


def _rule(tmp_path, **fields):
    data = {"id": "TFT999", "name": "tail", "summary": "s", "operation": "tail_call_template",
            "params": {"template": "list({receiver}.shape)"}, "difference": "d", "maps_to": "m",
            "status": "converted", "examples": [{"before": "a", "after": "b"}], **fields}
    return parse_rule(data, tmp_path / "TFT999-tail.yaml", "tensors")


def test_a_rule_file_says_its_chains_plainly(tmp_path):
    assert _rule(tmp_path, match_tails=[".shape.as_list()"]).match_tails == (".shape.as_list()",)
    with pytest.raises(RuleError, match="attribute chain of two names or more"):
        _rule(tmp_path, match_tails=[".as_list"])
    with pytest.raises(RuleError, match="attribute chain"):
        _rule(tmp_path, match_tails=["shape.as_list()"])
    with pytest.raises(RuleError, match="takes chains that end in a call, every one"):
        _rule(tmp_path, match_tails=[".shape.as_list()", ".shape.ndims"])
    with pytest.raises(RuleError, match="go with a tail operation"):
        _rule(tmp_path, match_tails=[".shape.as_list()"], operation="rename", params={"to": "x"})
    with pytest.raises(RuleError, match="go with a tail operation"):
        _rule(tmp_path, match=["tensorflow.shape"])


@pytest.mark.parametrize("code", [
    "import tensorflow as tf\nx.shape.ndims = 3\n",  # written to, not read
    "import tensorflow as tf\ndel y.shape.rank\n",
    "import tensorflow as tf\nz.shape.ndims += 1\n",
    "import tensorflow as tf\nfor m.shape.ndims in range(2):\n    pass\n",
    "import tensorflow as tf\na, b.shape.rank = 1, 2\n",
    "import tensorflow as tf\nr: int = 0\n[0 for q.shape.ndims in range(2)]\n",
    "# a port of a tensorflow model\nimport torch\nrank = grid.shape.ndims\n",  # no TF import
    # a file whose own objects answer the chain
    "import tensorflow as tf\n\nclass Box:\n    def get_shape(self):\n        return (1, 2)\n\nb = Box().get_shape()\n",
])
def test_what_is_written_or_defined_here_is_left_alone(code):
    assert converted(code) == code


def test_code_that_would_not_parse_is_never_written(monkeypatch):
    """The last check of every conversion: a rewrite whose output Python cannot read (here a
    tail rewritten where it is written to, as the check for it was missing once) fails the
    file, which stays as it was."""
    from migrate.engine import passes
    from migrate.engine.runner import RuleSelection, convert_source, rule_index

    monkeypatch.setattr(passes, "_stored", lambda node, parent: False)
    data = b"import tensorflow as tf\nx.shape.ndims = 3\n"
    result = convert_source(data, rule_index(RuleSelection()), "t.py")
    assert result.status == "failed"
    assert result.error.startswith("engine error: the converted code does not parse (line 1, column 1: cannot assign")
    assert result.error.endswith("; file left as it was")
    assert result.converted in (None, b"", data)  # (nothing to write)
