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
