"""Run a TF program on N logical CPU devices, as if the machine had N accelerators.

    python tests/equivalence/tf_replicas.py --replicas 2 program.py [args...]

The program itself stays as users write it (no device set-up inside): this
wrapper splits the CPU into logical devices, then runs it as ``__main__``.
"""

import argparse
import os
import runpy
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Deterministic kernels, so the reference numbers do not drift between runs.
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")

import tensorflow as tf  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--replicas", type=int, default=2)
parser.add_argument("program")
parser.add_argument("args", nargs=argparse.REMAINDER)
opts = parser.parse_args()

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * opts.replicas)
sys.argv = [opts.program, *opts.args]
runpy.run_path(opts.program, run_name="__main__")
