"""`tfenv` answers TF's process-level queries as TensorFlow does (checked against real TF)."""

import json

import pytest
from runtime_helpers import run_python

# What a program sees of the logger it gets: its name and level, and the handlers set up.
PROBE = """
import json, logging, sys
{setup}
logger = get_logger()
again = get_logger()
print(json.dumps({{
    "name": logger.name, "level": logger.level, "same": logger is again,
    "handlers": [[type(h).__name__, h.stream.name if hasattr(h, "stream") else None,
                  h.formatter._fmt if h.formatter else None] for h in logger.handlers],
}}))
logger.warning("shown %d", 7)
"""


@pytest.mark.parametrize("root_configured", [False, True])
def test_get_logger_is_tfs_logger(root_configured):
    setup = "logging.basicConfig()\n" if root_configured else ""
    tf = run_python("-c", PROBE.format(setup=setup + "import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
                                                  "from tensorflow import get_logger"), timeout=120)
    ours = run_python("-c", PROBE.format(setup=setup + "from migrate.runtime.tfenv import get_logger"))
    assert json.loads(ours.stdout.splitlines()[-1]) == json.loads(tf.stdout.splitlines()[-1])
    assert [line for line in ours.stderr.splitlines() if "shown" in line] == \
           [line for line in tf.stderr.splitlines() if "shown" in line] != []


def test_executing_eagerly_follows_mindsporess_mode():
    code = ("import mindspore as ms; from migrate.runtime.tfenv import executing_eagerly; a = executing_eagerly(); "
            "ms.set_context(mode=ms.GRAPH_MODE); print(a, executing_eagerly())")
    assert run_python("-c", code, timeout=120).stdout.split()[-2:] == ["True", "False"]


# The same prints, through tf.print on TF tensors and through tfenv.tf_print on MindSpore tensors.
PRINTS = """
import sys
import numpy as np
{setup}
t = lambda a: T(np.asarray(a))
p = lambda *args, **kwargs: PRINT(*args, output_stream=sys.stdout, **kwargs)
p("step", 3, t(np.float32(0.1)), t(np.array([1.0, 2.5, 3.0], np.float32)), t(np.array([[1, 2], [3, 4]], np.int32)))
p(t(np.arange(10, dtype=np.int32)))
p(t(np.arange(20.0, dtype=np.float32).reshape(4, 5)), summarize=2, sep="|", end="!\\n")
p(t(np.arange(60, dtype=np.int64).reshape(3, 4, 5)), summarize=1)
p(t(np.arange(12.0, dtype=np.float32)), summarize=-1)
p(t(np.array(True)), t(np.array([True, False])), [1, t(np.int32(2))], {{"a": t(np.float32(1.5))}}, sep=", ")
p(t(np.float32(1e-9)), t(np.float32(123456789.0)), t(np.float32(1.0 / 3)), t(np.float64(1.0 / 3)), t(np.float32(-0.0)))
p(t(np.array([np.inf, -np.inf, np.nan], np.float32)), t(np.float16(0.1)), t(np.array(7, np.uint8)))
"""


def test_tf_print_prints_what_tf_prints():
    tf = run_python("-c", PRINTS.format(setup="import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
                                               "import tensorflow as tf; T = tf.constant; PRINT = tf.print"),
                    timeout=120)
    ours = run_python("-c", PRINTS.format(setup="import mindspore as ms; from migrate.runtime import tfenv\n"
                                                 "T = ms.Tensor; PRINT = tfenv.tf_print"))
    assert tf.returncode == 0 and ours.returncode == 0, tf.stderr[-2000:] + ours.stderr[-2000:]
    assert ours.stdout == tf.stdout
