"""Whole models saved and rebuilt on their own (one process, no TensorFlow): every layer's config
round trip, `model.save`/`load_model` paths and their errors. (Against Keras: test_keras_equivalence's
`saving` case.)"""

import inspect
import json
import os

import numpy as np
import pytest

ms = pytest.importorskip("mindspore")

from migrate.runtime import keras as mk  # noqa: E402
from migrate.runtime.keras import serialization  # noqa: E402

X = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)

# One instance of every public layer class, built with arguments that differ from the defaults
# where it has them (shapes fit a (batch, 4) input, or a (batch, 6, 6, 2) image / (batch, 5, 3) sequence).
LAYERS = {
    "Dense": lambda L: L.Dense(3, activation="tanh", use_bias=False, kernel_initializer="he_normal",
                               kernel_regularizer=mk.regularizers.l2(0.02)),
    "Activation": lambda L: L.Activation("sigmoid"),
    "Dropout": lambda L: L.Dropout(0.25, seed=3),
    "AlphaDropout": lambda L: L.AlphaDropout(0.1),
    "Rescaling": lambda L: L.Rescaling(1 / 255.0, offset=0.5),
    "Resizing": lambda L: L.Resizing(4, 3),
    "ZeroPadding2D": lambda L: L.ZeroPadding2D(((1, 0), (2, 1))),
    "SpatialDropout1D": lambda L: L.SpatialDropout1D(0.2),
    "SpatialDropout2D": lambda L: L.SpatialDropout2D(0.2),
    "Flatten": lambda L: L.Flatten(),
    "Reshape": lambda L: L.Reshape((2, 2)),
    "Permute": lambda L: L.Permute((2, 1)),
    "RepeatVector": lambda L: L.RepeatVector(3),
    "Embedding": lambda L: L.Embedding(10, 4, embeddings_initializer="uniform"),
    "Identity": lambda L: L.Identity(),
    "ReLU": lambda L: L.ReLU(max_value=6.0, negative_slope=0.1),
    "LeakyReLU": lambda L: L.LeakyReLU(negative_slope=0.2),
    "PReLU": lambda L: L.PReLU(alpha_initializer="ones"),
    "Softmax": lambda L: L.Softmax(axis=-1),
    "Conv1D": lambda L: L.Conv1D(4, 2, padding="same", activation="relu"),
    "Conv2D": lambda L: L.Conv2D(3, (3, 2), strides=(2, 1), padding="same", dilation_rate=1),
    "Conv2DTranspose": lambda L: L.Conv2DTranspose(2, 3, strides=2, padding="same"),
    "DepthwiseConv2D": lambda L: L.DepthwiseConv2D(3, depth_multiplier=2),
    "SeparableConv2D": lambda L: L.SeparableConv2D(4, 3, depth_multiplier=2, padding="same"),
    "UpSampling1D": lambda L: L.UpSampling1D(3),
    "UpSampling2D": lambda L: L.UpSampling2D((2, 3)),
    "UpSampling3D": lambda L: L.UpSampling3D((1, 2, 2)),
    "MaxPooling1D": lambda L: L.MaxPooling1D(2, padding="same"),
    "MaxPooling2D": lambda L: L.MaxPooling2D((2, 2), strides=1),
    "AveragePooling1D": lambda L: L.AveragePooling1D(2),
    "AveragePooling2D": lambda L: L.AveragePooling2D(3, padding="same"),
    "GlobalAveragePooling1D": lambda L: L.GlobalAveragePooling1D(),
    "GlobalAveragePooling2D": lambda L: L.GlobalAveragePooling2D(keepdims=True),
    "GlobalMaxPooling1D": lambda L: L.GlobalMaxPooling1D(),
    "GlobalMaxPooling2D": lambda L: L.GlobalMaxPooling2D(),
    "BatchNormalization": lambda L: L.BatchNormalization(momentum=0.9, epsilon=1e-5, center=False),
    "SyncBatchNormalization": lambda L: L.SyncBatchNormalization(momentum=0.9),
    "LayerNormalization": lambda L: L.LayerNormalization(epsilon=1e-4),
    "Normalization": lambda L: L.Normalization(mean=[1.0, 2.0, 3.0, 4.0], variance=[1.0, 4.0, 9.0, 16.0]),
    "Concatenate": lambda L: L.Concatenate(axis=1),
    "Add": lambda L: L.Add(),
    "Subtract": lambda L: L.Subtract(),
    "Multiply": lambda L: L.Multiply(),
    "Attention": lambda L: L.Attention(use_scale=True, score_mode="concat", dropout=0.1),
    "AdditiveAttention": lambda L: L.AdditiveAttention(use_scale=False),
    "Average": lambda L: L.Average(),
    "Maximum": lambda L: L.Maximum(),
    "Minimum": lambda L: L.Minimum(),
    "SimpleRNN": lambda L: L.SimpleRNN(3, return_sequences=True),
    "GRU": lambda L: L.GRU(3, reset_after=False),
    "LSTM": lambda L: L.LSTM(3, unit_forget_bias=False, return_state=True),
    "Bidirectional": lambda L: L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="ave"),
    "RNN": lambda L: L.RNN(L.LSTMCell(2), return_sequences=True, go_backwards=True),
    "LSTMCell": lambda L: L.LSTMCell(3, unit_forget_bias=False),
    "GRUCell": lambda L: L.GRUCell(2, reset_after=False),
    "SimpleRNNCell": lambda L: L.SimpleRNNCell(2, activation="relu"),
    "StackedRNNCells": lambda L: L.StackedRNNCells([L.SimpleRNNCell(2), L.GRUCell(3)]),
    "Conv3D": lambda L: L.Conv3D(2, (1, 3, 3), strides=(1, 2, 2), padding="same", groups=1),
    "MaxPooling3D": lambda L: L.MaxPooling3D((1, 2, 2), padding="same"),
    "AveragePooling3D": lambda L: L.AveragePooling3D(2, strides=1),
    "GlobalAveragePooling3D": lambda L: L.GlobalAveragePooling3D(keepdims=True),
    "GlobalMaxPooling3D": lambda L: L.GlobalMaxPooling3D(),
    "TimeDistributed": lambda L: L.TimeDistributed(L.Dense(2, activation="relu")),
    "Conv3DTranspose": lambda L: L.Conv3DTranspose(2, 3, strides=2, padding="same"),
    "Masking": lambda L: L.Masking(mask_value=-1.0),
    "TensorOperation": lambda L: L.TensorOperation("getitem", (slice(None), slice(0, 2))),
    "Lambda": lambda L: L.Lambda(np.negative),
    "StringLookup": lambda L: L.StringLookup(vocabulary=["b", "a"], mask_token="", output_mode="multi_hot"),
    "IntegerLookup": lambda L: L.IntegerLookup(vocabulary=[3, 5], invert=True),
    "CategoryEncoding": lambda L: L.CategoryEncoding(5, output_mode="count"),
    "RandomFlip": lambda L: L.RandomFlip("vertical"),
    "RandomRotation": lambda L: L.RandomRotation((-0.1, 0.2), fill_mode="wrap", interpolation="nearest", seed=3),
    "RandomZoom": lambda L: L.RandomZoom(0.2, (-0.1, 0.3), fill_mode="constant", fill_value=1.5),
    "TextVectorization": lambda L: L.TextVectorization(vocabulary=["the", "cat"], output_sequence_length=4,
                                                       ngrams=2),
}
ALIASES = {"Convolution1D", "Convolution2D", "Convolution2DTranspose", "SeparableConvolution2D", "MaxPool1D",
           "MaxPool2D", "AvgPool1D", "AvgPool2D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D",
           "GlobalMaxPool2D", "Layer", "InputLayer", "Convolution3D", "MaxPool3D", "AvgPool3D", "GlobalAvgPool3D",
           "GlobalMaxPool3D", "Convolution3DTranspose"}


def test_every_public_layer_class_is_covered():
    public = {name for name, value in vars(mk.layers).items()
              if inspect.isclass(value) and issubclass(value, mk.layers.Layer)}
    assert public - ALIASES == set(LAYERS)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_layers_config_rebuilds_the_same_layer_through_json(name):
    layer = LAYERS[name](mk.layers)
    config = layer.get_config()
    written = json.loads(json.dumps(serialization.serialize_object(layer)))
    rebuilt = serialization.deserialize_object(written)
    assert type(rebuilt) is type(layer)
    again = rebuilt.get_config()
    assert json.dumps(serialization.serialize_value(again), sort_keys=True) == \
        json.dumps(serialization.serialize_value(config), sort_keys=True)


def test_auto_config_holds_the_arguments_given_and_keras_names():
    config = mk.layers.Dense(3, activation="tanh", use_bias=False, kernel_initializer="he_normal",
                             name="head").get_config()
    assert config["units"] == 3 and config["activation"] == "tanh" and config["use_bias"] is False
    assert config["kernel_initializer"] == "he_normal" and config["name"] == "head"
    assert config["trainable"] is True and config["dtype"] == "float32"
    # initializer objects are written as Keras 3 writes them
    config = mk.layers.Dense(2, kernel_initializer=mk.initializers.HeNormal(seed=4)).get_config()
    assert config["kernel_initializer"] == {"module": "keras.initializers", "class_name": "HeNormal",
                                            "config": {"seed": 4, "input_axes": None, "output_axes": None},
                                            "registered_name": None}


def _classifier():
    model = mk.Sequential([mk.Input(shape=(4,)), mk.layers.Dense(6, activation="relu"), mk.layers.Dense(3)])
    model.compile(optimizer=mk.optimizers.RMSprop(0.01), loss="sparse_categorical_crossentropy",
                  metrics=[mk.metrics.SparseCategoricalAccuracy(name="acc")])
    return model


def test_save_to_a_directory_path_and_load_back(tmp_path):
    model = _classifier()
    target = tmp_path / "saved_model" / "my_model"
    target.mkdir(parents=True)  # TF's SavedModel form: a directory
    model.save(str(target))
    assert sorted(os.listdir(target)) == ["model.ckpt"]
    loaded = mk.models.load_model(str(target))
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))
    assert isinstance(loaded.optimizer, mk.optimizers.RMSprop)
    assert loaded.optimizer.get_config()["learning_rate"] == pytest.approx(0.01)
    assert [m.name for m in loaded._metric_specs] == ["acc"]
    # compile=False gives the architecture and weights only
    assert mk.models.load_model(str(target), compile=False).optimizer is None


def test_a_schedule_and_a_loss_scale_optimizer_come_back(tmp_path):
    model = _classifier()
    schedule = mk.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    model.compile(optimizer=mk.optimizers.LossScaleOptimizer(mk.optimizers.SGD(schedule, momentum=0.9)),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.save(tmp_path / "m.keras")
    loaded = mk.models.load_model(tmp_path / "m.keras")
    inner = loaded.optimizer.inner_optimizer
    assert isinstance(inner, mk.optimizers.SGD) and inner.get_config()["momentum"] == 0.9
    assert inner.get_config()["learning_rate"]["config"]["decay_steps"] == 10
    assert loaded.loss.get_config()["from_logits"] is True


def test_tensorflow_files_and_weights_only_files_are_refused_with_what_to_do(tmp_path):
    hdf5 = tmp_path / "model.h5"
    hdf5.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 64)
    with pytest.raises(ValueError, match="a Keras HDF5 file, written by TensorFlow.*get_weights"):
        mk.models.load_model(hdf5)
    archive = tmp_path / "model.keras"
    archive.write_bytes(b"PK\x03\x04" + b"\0" * 64)
    with pytest.raises(ValueError, match="a Keras `.keras` archive"):
        mk.models.load_model(archive)
    saved = tmp_path / "exported"
    saved.mkdir()
    (saved / "saved_model.pb").write_bytes(b"\0")
    with pytest.raises(ValueError, match="a TensorFlow SavedModel directory"):
        mk.models.load_model(saved)
    model = _classifier()
    model.save_weights(tmp_path / "w.weights.h5")
    with pytest.raises(ValueError, match=r"holds weights only.*load_weights"):
        mk.models.load_model(tmp_path / "w.weights.h5")
    with pytest.raises(FileNotFoundError, match="No model found"):
        mk.models.load_model(tmp_path / "absent.keras")


def test_a_lambda_layer_loads_only_outside_safe_mode(tmp_path):
    inputs = mk.Input(shape=(4,))
    scale = 3.0
    outputs = mk.layers.Lambda(lambda t: t * scale)(mk.layers.Dense(2)(inputs))
    model = mk.Model(inputs, outputs)
    model.save(tmp_path / "lambda.keras")
    with pytest.raises(ValueError, match="safe_mode=False"):
        mk.models.load_model(tmp_path / "lambda.keras")
    loaded = mk.models.load_model(tmp_path / "lambda.keras", safe_mode=False)
    np.testing.assert_allclose(loaded.predict(X, verbose=0), model.predict(X, verbose=0), rtol=1e-6)


def test_an_unsaveable_argument_is_named_and_nothing_is_written(tmp_path):
    class Holder(mk.layers.Layer):
        def __init__(self, thing, **kwargs):
            super().__init__(**kwargs)
            self.thing = thing

    model = mk.Sequential([mk.Input(shape=(4,)), Holder(object())])
    with pytest.raises(TypeError, match="Cannot save .*object"):
        model.save(tmp_path / "x.keras")
    assert not os.listdir(tmp_path)


def test_unregistered_custom_layers_need_custom_objects_or_their_module(tmp_path):
    model = mk.Sequential([mk.Input(shape=(4,)), _Scale(2.0)])
    model.save(tmp_path / "c.keras")
    loaded = mk.models.load_model(tmp_path / "c.keras")  # found in its module, as Keras finds it
    assert isinstance(loaded.layers[0], _Scale) and loaded.layers[0].factor == 2.0
    text = json.loads(model.to_json())
    text["config"]["layers"][1]["module"] = "no_such_module"
    with pytest.raises(ValueError, match="Could not locate class '_Scale'"):
        mk.models.model_from_json(json.dumps(text))
    assert isinstance(mk.models.model_from_json(json.dumps(text), custom_objects={"_Scale": _Scale}).layers[0], _Scale)


class _Scale(mk.layers.Layer):
    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor


def test_a_subclassed_model_built_by_its_first_call_gets_its_weights(tmp_path):
    model = _Net(units=5)
    model(X)
    model.save(tmp_path / "net.keras")
    loaded = mk.models.load_model(tmp_path / "net.keras")
    assert loaded.weights, "built from the recorded input shape"
    np.testing.assert_array_equal(loaded(ms.Tensor(X)).asnumpy(), model(ms.Tensor(X)).asnumpy())


class _Net(mk.Model):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.body = mk.layers.Dense(units, activation="relu")
        self.head = mk.layers.Dense(1)

    def call(self, inputs):
        return self.head(self.body(inputs))


def test_plot_model_writes_the_graph_as_dot_and_needs_graphviz_for_images(tmp_path, monkeypatch):
    inputs = mk.Input(shape=(4,), name="features")
    left = mk.layers.Dense(3, activation="relu", name="left")(inputs)
    right = mk.layers.Dense(3, name="right")(inputs)
    outputs = mk.layers.Add(name="join")([left, right])
    model = mk.Model(inputs, outputs)
    target = tmp_path / "model.dot"
    assert mk.utils.plot_model(model, to_file=str(target), show_shapes=True, show_layer_names=True,
                               show_layer_activations=True, rankdir="LR") is None
    text = target.read_text()
    assert "rankdir=LR;" in text
    assert 'n1 [label="left (Dense)\\nActivation: relu\\nInput shape: (None, 4)\\nOutput shape: (None, 3)"];' in text
    for edge in ("n0 -> n1;", "n0 -> n2;", "n1 -> n3;", "n2 -> n3;"):
        assert edge in text
    assert text.count("->") == 4
    monkeypatch.setenv("PATH", str(tmp_path))  # no Graphviz `dot` on it
    with pytest.raises(ImportError, match="You must install graphviz"):
        mk.utils.plot_model(model, to_file=str(tmp_path / "model.png"))
    assert not (tmp_path / "model.png").exists()


def test_plot_model_draws_an_image_with_graphviz(tmp_path):
    """Skipped, saying why, without Graphviz; an error under CI=true, where `.ci/run` installs it."""
    import shutil

    if shutil.which("dot") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Graphviz's `dot` is not installed (CI installs the graphviz package)")
        pytest.skip("Graphviz's `dot` is not installed")
    model = mk.Sequential([mk.Input(shape=(4,)), mk.layers.Dense(3), mk.layers.Dense(2)])
    mk.utils.plot_model(model, to_file=str(tmp_path / "model.png"), show_shapes=True)
    mk.utils.plot_model(model, to_file=str(tmp_path / "model.svg"))
    assert (tmp_path / "model.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "model.svg").read_text()
    assert svg.count("<g id=\"node") == 3 and svg.count("<g id=\"edge") == 2 and "Dense" in svg
    assert sorted(os.listdir(tmp_path)) == ["model.png", "model.svg"]  # no temporary left


def _reloaded(model, tmp_path, **kwargs):
    model.save(tmp_path / "m.keras")
    return mk.models.load_model(tmp_path / "m.keras", **kwargs)


def test_a_graph_whose_calls_interleave_reloads_its_layers_in_order(tmp_path):
    inputs = mk.Input(shape=(3,))
    s, t, x, y = (mk.layers.Dense(3, name=n) for n in "stxy")
    s0 = s(inputs)
    s1 = s(t(s0))
    model = mk.Model(inputs, [x(s1), y(s0)])
    loaded = _reloaded(model, tmp_path)
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    for ours, theirs in zip(loaded.predict(X[:, :3], verbose=0), model.predict(X[:, :3], verbose=0)):
        np.testing.assert_array_equal(ours, theirs)


def test_frozen_layers_and_models_stay_frozen(tmp_path):
    i = mk.Input(shape=(3,))
    base = mk.Model(i, mk.layers.Dense(4, name="b")(i), name="base")
    base.trainable = False
    j = mk.Input(shape=(3,))
    frozen = mk.layers.Dense(2, name="frozen")
    frozen.trainable = False
    model = mk.Model(j, mk.layers.Dense(1, name="head")(frozen(base(j))))
    loaded = _reloaded(model, tmp_path)
    assert len(loaded.trainable_weights) == len(model.trainable_weights) == 2
    assert not loaded.get_layer("base").trainable and not loaded.get_layer("frozen").trainable


@mk.utils.register_keras_serializable(package="tests")
def _half(x):
    return x * 0.5


def test_a_registered_activation_function_comes_back(tmp_path):
    i = mk.Input(shape=(4,))
    model = mk.Model(i, mk.layers.Dense(3, activation=_half)(i))
    loaded = _reloaded(model, tmp_path)
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))


def test_an_adapted_normalization_normalizes_after_loading(tmp_path):
    norm = mk.layers.Normalization()
    norm.adapt(X * 3 + 1)
    i = mk.Input(shape=(4,))
    model = mk.Model(i, norm(i))
    np.testing.assert_allclose(_reloaded(model, tmp_path).predict(X, verbose=0), model.predict(X, verbose=0),
                               rtol=1e-6)


class _Partly(mk.Model):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        self.dense = mk.layers.Dense(units)

    def call(self, inputs):
        return self.dense(inputs) * self.scale


class _Named(mk.Model):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.a, self.b = mk.layers.Dense(units), mk.layers.Dense(units)

    def call(self, inputs):
        return self.a(inputs["a"]) + self.b(inputs["b"])


class _OwnGraph(mk.Model):
    def __init__(self, units=3, **kwargs):
        i = mk.Input(shape=(4,))
        super().__init__(i, mk.layers.Dense(units)(i), **kwargs)
        self.units = units


def test_subclassed_models_built_in_parts_by_dicts_or_with_their_own_graph_reload(tmp_path):
    partly = _Partly(3)
    partly(ms.Tensor(X))
    np.testing.assert_array_equal(_reloaded(partly, tmp_path)(ms.Tensor(X)).asnumpy(), partly(ms.Tensor(X)).asnumpy())
    named = _Named(2)
    inputs = {"a": ms.Tensor(X), "b": ms.Tensor(X[:, :3])}
    named(inputs)
    np.testing.assert_array_equal(_reloaded(named, tmp_path)(inputs).asnumpy(), named(inputs).asnumpy())
    own = _OwnGraph(units=5)
    loaded = _reloaded(own, tmp_path)
    assert type(loaded) is _OwnGraph and loaded.units == 5
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), own.predict(X, verbose=0))


def test_configs_keras_3_leaves_to_a_classs_own_get_config(tmp_path):
    class Variadic(mk.layers.Layer):
        def __init__(self, *sizes, **kwargs):
            super().__init__(**kwargs)
            self.sizes = sizes

    with pytest.raises(TypeError, match="variadic positional arguments"):
        Variadic(2, 3).get_config()

    class Own(mk.layers.Layer):
        def __init__(self, units, helper=None, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    assert Own(2, helper=object()).get_config() == {"name": "own", "trainable": True, "dtype": "float32", "units": 2}


def test_tensors_in_a_config_come_back_as_tensors_and_clones_keep_their_lambdas(tmp_path):
    weights = ms.Tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32))

    def scaled(w):
        return lambda z: z * w

    i = mk.Input(shape=(4,))
    model = mk.Model(i, mk.layers.Lambda(scaled(weights))(i))
    loaded = _reloaded(model, tmp_path, safe_mode=False)
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))
    clone = mk.models.clone_model(model)
    np.testing.assert_array_equal(clone.predict(X, verbose=0), model.predict(X, verbose=0))


def test_a_models_config_rebuilds_it_through_json_as_from_config():
    """`Model.from_config(model.get_config())`: the same layers, connections and outputs once
    the weights are copied (BERT's serialization test); Sequential likewise."""
    inputs = mk.Input((5,), name="ids")
    hidden = mk.layers.Dense(4, activation="relu", name="hidden")(inputs)
    joined = mk.layers.Concatenate(name="joined")([hidden, mk.layers.Dense(2, name="side")(inputs)])
    model = mk.Model(inputs, mk.layers.Dense(3, name="head")(joined))
    twin = mk.Model.from_config(json.loads(json.dumps(model.get_config())))
    assert [layer.name for layer in twin.layers] == [layer.name for layer in model.layers]
    twin.set_weights(model.get_weights())
    x = np.random.default_rng(0).normal(size=(2, 5)).astype(np.float32)
    np.testing.assert_allclose(twin(x).asnumpy(), model(x).asnumpy(), rtol=1e-6)
    stack = mk.Sequential([mk.Input((5,)), mk.layers.Dense(3), mk.layers.Dropout(0.1)])
    again = mk.Sequential.from_config(json.loads(json.dumps(stack.get_config())))
    assert [type(layer) for layer in again.layers] == [type(layer) for layer in stack.layers]


@pytest.mark.tf
def test_hdf5_attribute_lists_read_as_kerass(tmp_path):
    """TFK205: a name list as Keras writes it whole or in chunks, read as Keras's reader reads it."""
    import h5py

    from migrate.runtime.keras import hdf5
    from tests.helpers import python_json

    pytest.importorskip("tensorflow")
    path = tmp_path / "names.h5"
    with h5py.File(path, "w") as f:
        f.attrs["layer_names"] = np.array([b"dense", b"dense_1"])
        f.attrs["weight_names0"] = np.array([b"kernel:0", b"bias:0"])
        f.attrs["weight_names1"] = np.array([b"gamma:0"])
        f.attrs["numbers"] = np.array([3, 4])
    keras_side = ("import json, sys, h5py\n"
                  "from keras.src.legacy.saving.legacy_h5_format import load_attributes_from_hdf5_group as load\n"
                  "with h5py.File(sys.argv[1], 'r') as f:\n"
                  "    print(json.dumps({n: [str(v) for v in load(f, n)] for n in "
                  "('layer_names', 'weight_names', 'numbers', 'missing')}))\n")
    theirs = python_json(keras_side, str(path))
    with h5py.File(path, "r") as f:
        ours = {n: [str(v) for v in hdf5.load_attributes_from_hdf5_group(f, n)]
                for n in ("layer_names", "weight_names", "numbers", "missing")}
    assert ours == theirs and ours["weight_names"] == ["kernel:0", "bias:0", "gamma:0"]
