"""``tfdistributions.Beta`` and ``tfrandom.gamma`` against TF: shapes, dtypes and formulas equal to
TF's, samples with the distribution's moments (the draws are MindSpore's generator's, not TF's)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

PROGRAM = r'''
import json, sys
import numpy as np
if sys.argv[1] == "tf":
    import tensorflow as tf
    Beta, gamma = tf.compat.v1.distributions.Beta, tf.random.gamma
    tf.random.set_seed(1)
    num = lambda t: np.asarray(t).tolist()
    dtype = lambda t: t.dtype.name
else:
    import mindspore as ms
    from migrate.runtime import tfdistributions, tfrandom
    Beta, gamma = tfdistributions.Beta, tfrandom.gamma
    ms.set_seed(1)
    num = lambda t: t.asnumpy().tolist()
    dtype = lambda t: str(t.dtype).lower()
out = {}
b = Beta(0.2, 0.2)
out["scalar"] = [list(np.shape(num(b.sample()))), dtype(b.sample())]
out["float64"] = dtype(Beta(np.float64(0.5), np.float64(0.5)).sample(3))
out["shapes"] = [list(np.shape(num(b.sample(s)))) for s in ([8, 1], 5, (2, 3))]
draws = np.asarray(num(Beta(2.0, 5.0).sample(200000)))
out["draws"] = [float(draws.mean()), float(draws.var()), bool(draws.min() > 0), bool(draws.max() < 1)]
c = Beta([0.5, 2.0, 3.0], [1.5, 2.0, 4.0])
out["batch"] = list(np.shape(num(c.sample(4))))
for f in ("mean", "variance", "stddev", "mode", "entropy"):
    out[f] = num(getattr(c, f)())
out["log_prob"] = num(c.log_prob([0.25, 0.5, 0.75]))
out["prob"] = num(c.prob([0.25, 0.5, 0.75]))
out["boundary"] = num(Beta([1.0, 2.0], [2.0, 1.0]).log_prob([0.0, 1.0]))  # (TF: finite, then NaN)
out["float16"] = dtype(Beta(np.float16(0.5), np.float16(0.5)).sample(3))
small = np.asarray(num(gamma([20000], 0.05)))
out["gamma_positive"] = bool((small > 0).all())
try:
    Beta([0.5], [2.0], allow_nan_stats=False).mode()
    out["undefined_mode"] = "none"
except Exception as error:
    out["undefined_mode"] = "raises"
g = np.asarray(num(gamma([100000], [0.5, 3.0], beta=[1.0, 2.0])))
out["gamma"] = [list(g.shape), g.mean(axis=0).tolist(), g.var(axis=0).tolist()]
print(json.dumps(out))
'''

FORMULAS = ("mean", "variance", "stddev", "entropy", "log_prob", "prob")


def test_beta_and_gamma_as_tf():
    tf_side = python_json(PROGRAM, "tf")
    ours = python_json(PROGRAM, "ms")
    for key in ("scalar", "float64", "float16", "shapes", "batch", "undefined_mode", "gamma_positive"):
        assert ours[key] == tf_side[key], key
    for key in FORMULAS:
        np.testing.assert_allclose(ours[key], tf_side[key], rtol=1e-5, err_msg=key)
    np.testing.assert_allclose(ours["mode"], tf_side["mode"], rtol=1e-6)  # (NaN where undefined, in both)
    np.testing.assert_allclose(ours["boundary"], tf_side["boundary"], rtol=1e-6)
    # Beta(2, 5): mean 2/7, variance 10/392; 200,000 draws put both within a few standard errors
    for side in (tf_side, ours):
        mean, var, above, below = side["draws"]
        assert abs(mean - 2 / 7) < 2e-3 and abs(var - 10 / 392) < 1e-3 and above and below
        shape, means, variances = side["gamma"]
        assert shape == [100000, 2]
        np.testing.assert_allclose(means, [0.5, 1.5], rtol=2e-2)  # alpha / beta
        np.testing.assert_allclose(variances, [0.5, 0.75], rtol=4e-2)  # alpha / beta**2


def test_seeded_draws_repeat():
    code = ("import json, mindspore as ms\nfrom migrate.runtime import tfdistributions\n"
            "out = []\nfor _ in range(2):\n    ms.set_seed(5)\n"
            "    out.append(tfdistributions.Beta(0.4, 0.4).sample([4], seed=3).asnumpy().tolist())\n"
            "print(json.dumps(out))\n")
    first, second = python_json(code)
    assert first == second and len(set(first)) == 4
