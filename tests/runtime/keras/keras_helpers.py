"""Helpers for the Keras equivalence tests: start the TF and MindSpore sides as subprocesses, compare numbers.

Imported by the test modules (pytest puts this directory on sys.path). TensorFlow and
MindSpore never share a process: every side runs in its own subprocess and writes JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests.runtime.runtime_helpers import free_port  # noqa: F401 - one free-port picker for every launch

PROGRAMS = Path(__file__).parent / "programs"
REPO = Path(__file__).resolve().parents[3]
TF_REPLICAS = REPO / "tests" / "equivalence" / "tf_replicas.py"


class Job:
    """A subprocess started now and awaited later, so that the TF and MindSpore sides run concurrently."""

    def __init__(self, command, env=None, timeout=240):
        self.command = [str(c) for c in command]
        self.timeout = timeout
        self.started = time.monotonic()
        self.process = subprocess.Popen(self.command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, env={**os.environ, "PYTHONPATH": str(REPO),
                                                        "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})})
        self._output = None

    def wait(self) -> str:
        if self._output is None:
            try:
                self._output, _ = self.process.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self._output, _ = self.process.communicate()
                raise AssertionError(f"timed out: {' '.join(self.command)}\n{self._output[-4000:]}")
            self.seconds = time.monotonic() - self.started
        assert self.process.returncode == 0, f"{' '.join(self.command)} failed:\n{self._output[-6000:]}"
        return self._output


def single_side(side: str, out: Path) -> Job:
    return Job([sys.executable, PROGRAMS / "single_cases.py", side, out])


def tf_replicas(program: str, *args, replicas: int = 2) -> Job:
    return Job([sys.executable, TF_REPLICAS, "--replicas", str(replicas), PROGRAMS / program, *args])


def launched(program: str, *args, log_dir: Path, nproc: int = 2, env=None) -> Job:
    return Job([sys.executable, "-m", "migrate.runtime.launch", "-n", str(nproc), "--master-port", str(free_port()),
                "--log-dir", log_dir, "--timeout", "200", PROGRAMS / program, *args], env=env, timeout=260)


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def flatten_numbers(value) -> list:
    if isinstance(value, dict):
        return [x for key in sorted(value) for x in flatten_numbers(value[key])]
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in flatten_numbers(item)]
    return [value]


def max_relative_difference(ours, theirs) -> float:
    a = np.asarray(flatten_numbers(ours), dtype=float)
    b = np.asarray(flatten_numbers(theirs), dtype=float)
    if a.shape != b.shape:
        return float("inf")
    if not a.size:
        return 0.0
    return float((np.abs(a - b) / np.maximum(np.abs(b), 1e-6)).max())


def compare_area(ours: dict, theirs: dict, rtol: float, atol_scale: float = 1e-5, keys=None) -> list:
    """Mismatching keys as messages; each key is compared with rtol and an absolute floor relative to its scale.

    The floor (atol_scale times the largest magnitude in the key) absorbs sums whose
    order differs between the two libraries (convolutions, reductions) near zero.
    """
    assert "__error__" not in ours, ours.get("__error__")
    assert "__error__" not in theirs, theirs.get("__error__")
    problems = []
    for key in keys or theirs:
        if key not in ours:
            problems.append(f"{key}: missing on the migrate side")
            continue
        a = np.asarray(flatten_numbers(ours[key]), dtype=float)
        b = np.asarray(flatten_numbers(theirs[key]), dtype=float)
        if a.shape != b.shape:
            problems.append(f"{key}: {a.shape} values vs TF's {b.shape}")
            continue
        scale = float(np.abs(b).max()) if b.size else 0.0
        if not np.allclose(a, b, rtol=rtol, atol=atol_scale * max(scale, 1e-3)):
            problems.append(f"{key}: max relative difference {max_relative_difference(ours[key], theirs[key]):.3g}")
    return problems


# -- one model definition, built by Keras and by `mk` on the same weights -------------------------

# Keras's side of `same_weights_cases`: each case function of `CASES` builds a model (or layer)
# from the Keras module it is given (and the extra arguments named), which is called once to
# build, given seeded random weights, and called again (with `training` when asked); the
# weights it was given, its outputs (nested results flattened) and its weights after the call;
# with `gradients`, also the gradients of the sum of the outputs' squares with respect to the input
# and then the trainable weights, from one more call.
_KERAS_CASES = r"""
import json, sys
import numpy as np
import keras
exec(sys.argv[1])
names, x, options = json.loads(sys.argv[2]), np.asarray(json.loads(sys.argv[3]), np.float32), json.loads(sys.argv[4])
extra = [eval(e) for e in options["extra"]]


def flat(result):
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in flat(item)]
    return [result]


out = {}
for name in names:
    model = globals()[name](keras, *extra)
    model(x)
    rng = np.random.default_rng(11)
    weights = [rng.normal(scale=0.5, size=w.shape).astype(np.float32) for w in model.get_weights()]
    model.set_weights(weights)
    kwargs = {} if options["training"] is None else {"training": options["training"]}
    out[name] = {"weights": [w.tolist() for w in weights], "outputs": [np.asarray(r).tolist() for r in flat(model(x, **kwargs))],
                 "after": [w.tolist() for w in model.get_weights()]}
    if options["gradients"]:
        import tensorflow as tf

        inputs = tf.constant(x)
        sources = [inputs] + list(model.trainable_weights)
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            loss = sum(tf.reduce_sum(tf.square(tf.cast(r, tf.float32))) for r in flat(model(inputs, **kwargs)))
        out[name]["gradients"] = [np.zeros(s.shape, np.float32).tolist() if g is None else
                                  np.asarray(tf.convert_to_tensor(g)).tolist()
                                  for s, g in zip(sources, tape.gradient(loss, sources))]
print(json.dumps(out))
"""


def _flat(result) -> list:
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in _flat(item)]
    return [result]


def keras_cases(cases: str, names: list[str], x: np.ndarray, extra: tuple[str, ...] = (), training=None,
                gradients: bool = False) -> dict:
    """Keras's weights, outputs and weights after the call of each case (see `_KERAS_CASES`); `extra`:
    expressions on Keras's side for the case functions' arguments after the module; `gradients`: also
    the gradients of the sum of the outputs' squares (input first, then the trainable weights)."""
    from tests.helpers import python_json

    return python_json(_KERAS_CASES, cases, json.dumps(names), json.dumps(x.tolist()),
                       json.dumps({"extra": list(extra), "training": training, "gradients": gradients}))


def assert_case_is_kerass(cases: str, name: str, keras: dict, x: np.ndarray, *extra, training=None,
                          rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """The case built with `mk` (and `extra`) on Keras's weights gives Keras's outputs and weights after
    (and its gradients, when `keras_cases` was asked for them)."""
    from migrate.runtime import keras as mk

    scope: dict = {}
    exec(cases, scope)  # noqa: S102 - the test's own model code, shared with Keras's side
    model = scope[name](mk, *extra)
    model(x)
    expected = keras[name]
    assert [w.shape for w in model.get_weights()] == [np.shape(w) for w in expected["weights"]]
    model.set_weights([np.asarray(w, np.float32) for w in expected["weights"]])
    results = _flat(model(x) if training is None else model(x, training=training))
    assert len(results) == len(expected["outputs"])
    for ours, theirs in zip(results, expected["outputs"]):
        np.testing.assert_allclose(ours.asnumpy(), np.asarray(theirs, np.float32), rtol=rtol, atol=atol)
    for ours, theirs in zip(model.get_weights(), expected["after"]):
        np.testing.assert_allclose(ours, np.asarray(theirs, np.float32), rtol=rtol, atol=atol)
    if "gradients" in expected:
        import mindspore as ms

        def loss(inputs):
            results = _flat(model(inputs) if training is None else model(inputs, training=training))
            return sum((r.astype(ms.float32) ** 2).sum() for r in results)

        weights = list(model.trainable_weights)
        grads = ms.grad(loss, grad_position=0, weights=weights or None)(ms.Tensor(x))
        grads = [grads[0], *grads[1]] if weights else [grads]
        assert len(grads) == len(expected["gradients"])
        for index, (ours, theirs) in enumerate(zip(grads, expected["gradients"])):
            what = "the input's gradient" if index == 0 else f"weight {index - 1}'s gradient"
            np.testing.assert_allclose(ours.asnumpy(), np.asarray(theirs, np.float32), rtol=rtol, atol=atol,
                                       err_msg=what)
