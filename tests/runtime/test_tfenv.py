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


def test_group_returns_none_after_its_inputs_ran_as_tfs_does_eagerly():
    code = r"""
import json
import tensorflow as tf
ran = []
v = tf.Variable(1.0)
result = tf.group(ran.append(1), v.assign_add(2.0), name="updates")
print(json.dumps([result is None, ran, float(v.numpy())]))
"""
    want = json.loads(run_python("-c", code, timeout=120, env={"TF_CPP_MIN_LOG_LEVEL": "3"}).stdout.splitlines()[-1])
    from migrate.runtime import tfenv

    ran, total = [], [1.0]
    result = tfenv.group(ran.append(1), total.append(total[0] + 2.0), name="updates")
    assert [result is None, ran, total[-1]] == want


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


# tf.compat.v1.logging's functions, as a program calls them; the root logger is given a format that
# shows each record's level, file name and line, so the caller's place is compared too.
V1_LOGGING = """
import logging, sys
logging.basicConfig(stream=sys.stdout, format="%(levelname)s|%(filename)s|%(lineno)d|%(message)s")
{setup}
L.info("hidden at the default level %d", 1)
L.warning("warned %s", "once")
L.warn("warned again")
L.set_verbosity(L.INFO)
print("verbosity", L.get_verbosity(), L.DEBUG, L.INFO, L.WARN, L.ERROR, L.FATAL)
L.info("step %d: loss %.4f", 3, 0.25)
L.error("bad %r", "thing")
L.fatal("fatal, and carries on")
L.log(L.INFO, "logged at %s", "INFO")
L.vlog(L.WARN, "vlogged")
L.log_if(L.INFO, "only if true", False)
L.log_if(L.INFO, "only if true", True)
for i in range(5):
    L.log_every_n(L.INFO, "every 2nd: %d", 2, i)
    L.log_first_n(L.INFO, "first 2: %d", 2, i)
L.TaskLevelStatusMessage("status")
L.set_verbosity(L.ERROR)
L.warning("hidden again")
try:
    L.flush()
except NotImplementedError:
    print("flush: NotImplementedError")
"""


def test_v1_logging_writes_what_tfs_writes():
    tf = run_python("-c", V1_LOGGING.format(setup="import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
                                                  "from tensorflow.compat.v1 import logging as L"), timeout=120)
    ours = run_python("-c", V1_LOGGING.format(setup="import os\nfrom migrate.runtime import tflogging as L"))
    assert tf.returncode == ours.returncode == 0, tf.stderr + ours.stderr
    # TF's FATAL record names TF's own file (its caller lookup counts one frame short there); ours the caller's.
    assert "CRITICAL|<string>|13|fatal, and carries on" in ours.stdout.splitlines()
    assert [line for line in ours.stdout.splitlines() if not line.startswith("CRITICAL")] == \
           [line for line in tf.stdout.splitlines() if not line.startswith("CRITICAL")]
    assert "INFO|<string>|11|step 3: loss 0.2500" in ours.stdout.splitlines()


# log_every_n / log_first_n count per place as TF does: called from a module of their own, by two lines
# of a script.
COUNTED = """
import os, sys
sys.path.insert(0, {folder!r})
{setup}
import counted
for i in range(5):
    counted.every(L, i)
    counted.first(L, i)
for i in range(3):
    counted.every(L, 10 + i)
"""


def test_v1_logging_counts_per_place_as_tf(tmp_path):
    (tmp_path / "counted.py").write_text(
        "def every(L, i):\n    L.log_every_n(L.WARN, 'every 2nd: %d', 2, i)\n\n\n"
        "def first(L, i):\n    L.log_first_n(L.WARN, 'first 2: %d', 2, i)\n")
    runs = [run_python("-c", COUNTED.format(folder=str(tmp_path), setup=setup), timeout=120) for setup in (
        "os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\nfrom tensorflow.compat.v1 import logging as L",
        "from migrate.runtime import tflogging as L")]
    lines = [[line for line in run.stderr.splitlines() if line.startswith("WARNING:tensorflow:")] for run in runs]
    assert lines[0] == lines[1] != []


def test_tf_version_is_the_release_the_runtime_reproduces():
    tf = pytest.importorskip("tensorflow")
    from migrate.runtime import tfenv

    assert tfenv.TF_VERSION.split(".")[:2] == tf.__version__.split(".")[:2]


def test_device_lists_are_tfs_on_this_cpu_machine():
    tf = pytest.importorskip("tensorflow")
    from migrate.runtime import tfenv

    for device_type in (None, "CPU", "GPU", "cpu", "TPU"):
        assert tfenv.list_physical_devices(device_type) == tf.config.list_physical_devices(device_type)
        assert tfenv.list_logical_devices(device_type) == tf.config.list_logical_devices(device_type)
        assert tfenv.get_visible_devices(device_type) == tf.config.get_visible_devices(device_type)
    assert repr(tfenv.list_physical_devices()) == repr(tf.config.list_physical_devices())
    assert tfenv.list_physical_devices()[0].device_type == "CPU"


def test_local_devices_are_device_libs_on_this_cpu_machine():
    pytest.importorskip("tensorflow")
    from tensorflow.python.client import device_lib

    from migrate.runtime import tfenv

    theirs = device_lib.list_local_devices()
    ours = tfenv.list_local_devices()
    fields = ("name", "device_type", "memory_limit", "physical_device_desc")
    assert [tuple(getattr(d, f) for f in fields) for d in ours] == [tuple(getattr(d, f) for f in fields) for d in theirs]
    assert sum(1 for d in ours if d.device_type == "GPU") == 0


def test_a_session_config_records_what_the_lines_filling_it_set():
    """Horovod's Keras set-up fills a `ConfigProto` before the session it configures is removed (TFF339)."""
    from migrate.runtime import tfenv

    config = tfenv.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    config.gpu_options.visible_device_list = "1"
    config.intra_op_parallelism_threads = 2
    assert config.allow_soft_placement and config.gpu_options.allow_growth
    assert (config.gpu_options.visible_device_list, config.intra_op_parallelism_threads) == ("1", 2)
    assert "allow_growth=True" in repr(config)
    assert tfenv.GPUOptions(per_process_gpu_memory_fraction=0.5).per_process_gpu_memory_fraction == 0.5
    with pytest.raises(AttributeError):
        config.__missing_dunder__  # noqa: B018 - dunder lookups stay errors (copy, pickle)


def test_graph_keys_are_tfs_strings():
    from migrate.runtime import tfenv

    code = ("import json, tensorflow as tf\nG = tf.compat.v1.GraphKeys\n"
            "print(json.dumps({k: getattr(G, k) for k in dir(G) if k.isupper() and not k.startswith(\"_\")}))\n")
    done = run_python("-c", code, env={"TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stderr[-2000:]
    keys = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(keys) > 30
    assert {k: getattr(tfenv.GraphKeys, k) for k in dir(tfenv.GraphKeys) if k.isupper() and not k.startswith("_")} == keys
