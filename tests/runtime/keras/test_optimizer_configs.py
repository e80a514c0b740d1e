"""`mk.optimizers.serialize`/`deserialize` against Keras's: the configs Keras writes build the
same optimizers here, and ours read back as Keras's do."""

import json

import pytest

from tests.helpers import python_json

pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402

pytestmark = pytest.mark.tf

OPTIMIZERS = {
    "adam": "tf.keras.optimizers.Adam(0.01, beta_1=0.8)",
    "sgd": "tf.keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True)",
    "rmsprop": "tf.keras.optimizers.RMSprop(0.002, rho=0.8, clipnorm=1.0)",
    "ftrl": "tf.keras.optimizers.Ftrl(0.05, learning_rate_power=-0.6, l1_regularization_strength=0.01, beta=0.1)",
    "loss_scale": "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5), initial_scale=64.0)",
}
# what Keras 3 writes that this runtime does not have: each at the value that leaves Keras's update as it is
KERAS_ONLY = {"use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None, "loss_scale_factor": None,
              "gradient_accumulation_steps": None}

KERAS_SIDE = r"""
import json, sys
import tensorflow as tf
configs = {name: tf.keras.optimizers.serialize(eval(code)) for name, code in json.loads(sys.argv[1]).items()}
print(json.dumps(configs))
"""


@pytest.fixture(scope="module")
def keras_configs():
    return python_json(KERAS_SIDE, json.dumps(OPTIMIZERS))


def _without_keras_only(config: dict) -> dict:
    out = {}
    for key, value in config.items():
        if key in KERAS_ONLY:
            assert value == KERAS_ONLY[key], key
        elif key == "inner_optimizer":
            out[key] = {**value, "config": _without_keras_only(value["config"])}
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_keras_config_builds_the_same_optimizer(name, keras_configs):
    config = keras_configs[name]
    optimizer = mk.optimizers.deserialize(config)
    assert type(optimizer).__name__ == config["class_name"]
    ours = mk.optimizers.serialize(optimizer)
    assert ours == {**config, "config": _without_keras_only(config["config"])}


def test_class_names_in_any_case_and_errors():
    optimizer = mk.optimizers.deserialize({"class_name": "adam", "config": {"learning_rate": 0.5}})
    assert isinstance(optimizer, mk.optimizers.Adam) and float(optimizer.learning_rate.asnumpy()) == 0.5
    assert isinstance(mk.optimizers.get({"class_name": "SGD", "config": {"momentum": 0.5}}), mk.optimizers.SGD)

    class Mine(mk.optimizers.SGD):
        pass

    assert isinstance(mk.optimizers.deserialize({"class_name": "Mine", "config": {}}, custom_objects={"Mine": Mine}), Mine)
    with pytest.raises(ValueError, match="Could not locate class 'Lion'"):
        mk.optimizers.deserialize({"class_name": "Lion", "config": {}})
