"""`keras.utils.timeseries_dataset_from_array` in `mk`, against Keras's windows and batches."""

import json

import numpy as np
import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

CASES = {
    "plain": dict(targets=None, sequence_length=5, batch_size=4),
    "targets_strided": dict(targets="t", sequence_length=4, sequence_stride=3, sampling_rate=2, batch_size=3),
    "window_slice": dict(targets="t", sequence_length=3, start_index=4, end_index=30, batch_size=None),
    "shuffled": dict(targets="t", sequence_length=6, shuffle=True, seed=5, batch_size=5),
}
DATA = np.arange(40 * 3, dtype=np.float32).reshape(40, 3)
TARGETS = np.arange(100, 140).astype(np.int64)

KERAS_SIDE = r"""
import json, sys
import numpy as np
import keras
cases = json.loads(sys.argv[1])
data = np.arange(40 * 3, dtype=np.float32).reshape(40, 3)
targets = np.arange(100, 140).astype(np.int64)
out = {}
for name, kwargs in cases.items():
    kwargs = dict(kwargs, targets=targets if kwargs["targets"] else None)
    batches = []
    for element in keras.utils.timeseries_dataset_from_array(data, **kwargs):
        parts = element if isinstance(element, tuple) else (element,)
        batches.append([np.asarray(p).tolist() for p in parts] + [str(np.asarray(parts[0]).dtype)])
    out[name] = batches
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def keras_batches():
    return python_json(KERAS_SIDE, json.dumps(CASES))


def _ours(name):
    kwargs = dict(CASES[name], targets=TARGETS if CASES[name]["targets"] else None)
    batches = []
    for element in mk.utils.timeseries_dataset_from_array(DATA, **kwargs):
        parts = element if isinstance(element, tuple) else (element,)
        batches.append([np.asarray(p.asnumpy()).tolist() for p in parts] + [str(parts[0].asnumpy().dtype)])
    return batches


@pytest.mark.parametrize("name", ["plain", "targets_strided", "window_slice"])
def test_windows_and_batches_are_kerass(name, keras_batches):
    assert _ours(name) == keras_batches[name]


def test_a_shuffled_series_gives_kerass_windows_in_batches_of_the_same_size(keras_batches):
    ours, theirs = _ours("shuffled"), keras_batches["shuffled"]
    assert [len(b[0]) for b in ours] == [len(b[0]) for b in theirs]

    def pairs(batches):
        return sorted((json.dumps(w), t) for b in batches for w, t in zip(b[0], b[1]))

    assert pairs(ours) == pairs(theirs)
    assert _ours("shuffled") == ours  # the seed makes the order reproducible


def test_bad_arguments_get_kerass_errors():
    with pytest.raises(ValueError, match="`sequence_stride` must be higher than 0"):
        mk.utils.timeseries_dataset_from_array(DATA, None, 3, sequence_stride=0)
    with pytest.raises(ValueError, match="`end_index` must be higher than `start_index`"):
        mk.utils.timeseries_dataset_from_array(DATA, None, 3, start_index=5, end_index=4)
    with pytest.raises(ValueError, match="`sampling_rate` must be lower than the length of the data"):
        mk.utils.timeseries_dataset_from_array(DATA, None, 3, sampling_rate=40)
