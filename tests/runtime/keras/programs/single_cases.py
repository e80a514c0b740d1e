"""Single-process cases, run once with tf.keras and once with migrate's Keras; writes {case: numbers} JSON.

    python single_cases.py tf|mk OUT.json

Every case builds its inputs from fixed numpy seeds and sets weights from numpy, so the
two runs see identical numbers; only random initial values and dropout masks are avoided.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import make, tolist  # noqa: E402

ACTIVATIONS = ["relu", "tanh", "sigmoid", "softmax", "gelu", "linear", "elu", "selu", "softplus", "swish"]


def rng(seed):
    return np.random.default_rng(seed)


def normal(seed, shape, scale=1.0):
    return (rng(seed).normal(size=shape) * scale).astype(np.float32)


def layer_output(B, layer, x, training=False, weights=None):
    """Build `layer` on x, set Keras-layout weights, call it; returns (output, weight shapes)."""
    layer(x[:1])  # build
    if weights is not None:
        layer.set_weights(weights)
    out = layer(x, training=training)
    if isinstance(out, (list, tuple)):
        out = out[0]
    return tolist(B.numpy(out)), [list(w.shape) for w in layer.get_weights()]


def set_random_like(layer, seed):
    return [normal(seed + i, w.shape, 0.5) for i, w in enumerate(layer.get_weights())]


def case_layers(B):
    K = B.keras
    out = {}
    x2 = normal(1, (6, 4))
    x3 = normal(2, (2, 3, 4))
    img = normal(3, (2, 7, 6, 3))
    seq = normal(4, (2, 9, 3))
    for act in ACTIVATIONS:
        layer = K.layers.Dense(5, activation=act)
        layer(x2[:1])
        out[f"dense_{act}"] = layer_output(B, layer, x2, weights=set_random_like(layer, 10))
    layer = K.layers.Dense(5)
    layer(x3[:1])
    out["dense_rank3"] = layer_output(B, layer, x3, weights=set_random_like(layer, 20))

    def conv(name, layer, x, seed):
        layer(x[:1])
        out[name] = layer_output(B, layer, x, weights=set_random_like(layer, seed))

    conv("conv2d_valid", K.layers.Conv2D(4, 3), img, 30)
    conv("conv2d_same_s2", K.layers.Conv2D(3, (3, 2), strides=2, padding="same", activation="relu"), img, 40)
    conv("conv2d_dilated", K.layers.Conv2D(2, 3, dilation_rate=2, padding="same"), img, 50)
    conv("conv1d_causal", K.layers.Conv1D(3, 3, padding="causal"), seq, 60)
    conv("conv2d_transpose_valid", K.layers.Conv2DTranspose(4, 3), img, 65)
    conv("conv2d_transpose_same_s2", K.layers.Conv2DTranspose(2, (3, 2), strides=2, padding="same",
                                                              activation="relu"), img, 66)
    conv("conv2d_transpose_same_s3_k2", K.layers.Conv2DTranspose(3, 2, strides=3, padding="same"), img, 67)
    conv("conv2d_transpose_valid_s2_k4", K.layers.Conv2DTranspose(2, 4, strides=(2, 1), use_bias=False), img, 68)
    out["upsampling_nearest"] = layer_output(B, K.layers.UpSampling2D((2, 3)), img)
    out["upsampling_bilinear"] = layer_output(B, K.layers.UpSampling2D(2, interpolation="bilinear"), img)
    out["upsampling_1d"] = layer_output(B, K.layers.UpSampling1D(3), seq)
    out["upsampling_3d"] = layer_output(B, K.layers.UpSampling3D((2, 1, 3)), normal(5, (2, 2, 3, 2, 2)))
    out["upsampling_3d_factor_array"] = layer_output(B, K.layers.UpSampling3D(np.array([1, 2, 2], dtype=np.uint8)),
                                                     normal(6, (1, 2, 2, 2, 1)))
    conv("conv1d_same_s2", K.layers.Conv1D(2, 4, strides=2, padding="same", use_bias=False), seq, 70)
    conv("depthwise_same", K.layers.DepthwiseConv2D(3, padding="same"), img, 71)
    conv("depthwise_m2_s2", K.layers.DepthwiseConv2D((3, 2), strides=2, depth_multiplier=2, activation="relu"), img, 72)
    conv("separable_same", K.layers.SeparableConv2D(4, 3, padding="same"), img, 75)
    conv("separable_m2_s2_relu", K.layers.SeparableConv2D(3, (3, 2), strides=2, depth_multiplier=2,
                                                          activation="relu"), img, 76)
    conv("separable_dilated_no_bias", K.layers.SeparableConv2D(2, 2, dilation_rate=2, use_bias=False), img, 77)
    conv("prelu", K.layers.PReLU(), img, 73)
    conv("prelu_shared", K.layers.PReLU(shared_axes=[1, 2]), img, 74)
    out["rescaling"] = layer_output(B, K.layers.Rescaling(1 / 127.5, offset=-1.0), img)
    out["zero_padding2d"] = layer_output(B, K.layers.ZeroPadding2D(((1, 2), (0, 3))), img)
    out["zero_padding2d_int"] = layer_output(B, K.layers.ZeroPadding2D(2), img)
    out["resizing_bilinear"] = layer_output(B, K.layers.Resizing(5, 9), img)
    out["resizing_nearest"] = layer_output(B, K.layers.Resizing(3, 4, interpolation="nearest"), img)
    out["alpha_dropout_inference"] = layer_output(B, K.layers.AlphaDropout(0.3), img)
    for name, layer, x in [
        ("maxpool2d", K.layers.MaxPooling2D(2), img),
        ("maxpool2d_same", K.layers.MaxPooling2D(3, strides=2, padding="same"), img),
        ("avgpool2d_same", K.layers.AveragePooling2D(3, strides=2, padding="same"), img),
        ("avgpool2d", K.layers.AveragePooling2D((2, 3)), img),
        ("maxpool1d_same", K.layers.MaxPooling1D(3, strides=2, padding="same"), seq),
        ("avgpool1d", K.layers.AveragePooling1D(2), seq),
        ("avgpool1d_same", K.layers.AveragePooling1D(4, strides=3, padding="same"), seq),
        ("gap2d", K.layers.GlobalAveragePooling2D(), img),
        ("gap1d", K.layers.GlobalAveragePooling1D(), seq),
        ("gmp2d", K.layers.GlobalMaxPooling2D(), img),
        ("flatten", K.layers.Flatten(), img),
        ("reshape", K.layers.Reshape((3, 9)), seq.reshape(2, 27)),
        ("relu_args", K.layers.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.2), x2),
        ("softmax_layer", K.layers.Softmax(), x2),
        ("dropout_inference", K.layers.Dropout(0.5), x2),
        ("activation_gelu", K.layers.Activation("gelu"), x2),
    ]:
        out[name] = layer_output(B, layer, x)
    out["concatenate"] = tolist(B.numpy(K.layers.Concatenate()([x2, 2 * x2])))
    out["add"] = tolist(B.numpy(K.layers.Add()([x2, x2, x2])))

    bn = K.layers.BatchNormalization()
    bn(img[:1])
    weights = [np.linspace(0.5, 1.5, 3).astype(np.float32), np.linspace(-0.2, 0.2, 3).astype(np.float32),
               np.array([0.1, -0.1, 0.2], np.float32), np.array([1.5, 0.7, 2.0], np.float32)]
    out["bn_inference"] = layer_output(B, bn, img, training=False, weights=weights)
    out["bn_training"] = layer_output(B, bn, img, training=True, weights=weights)
    out["bn_moving_after_training"] = [tolist(w) for w in bn.get_weights()]
    bn2 = K.layers.BatchNormalization(momentum=0.9, epsilon=1e-5, center=False)
    bn2(x2[:1])
    out["bn_2d_training"] = layer_output(B, bn2, x2, training=True)
    out["bn_2d_moving"] = [tolist(w) for w in bn2.get_weights()]
    bn3 = K.layers.BatchNormalization(momentum=0.5, synchronized=True)  # (Keras's E[x**2] - E[x]**2 variance)
    bn3(img[:1])
    out["bn_synchronized_training"] = layer_output(B, bn3, img * 3.0 + 1.0, training=True, weights=weights)
    out["bn_synchronized_moving"] = [tolist(w) for w in bn3.get_weights()]
    ln = K.layers.LayerNormalization()
    ln(x3[:1])
    out["layernorm"] = layer_output(B, ln, x3, weights=[np.linspace(0.5, 1.5, 4).astype(np.float32),
                                                        np.linspace(-1, 1, 4).astype(np.float32)])
    emb = K.layers.Embedding(10, 3)
    emb(np.array([[1]]))
    out["embedding"] = layer_output(B, emb, np.array([[1, 2, 9], [0, 0, 5]]), weights=[normal(80, (10, 3))])

    # recurrent layers: Keras's gates and weight layouts, sequences, states, direction, initial state
    for name, kwargs in [("SimpleRNN", {}), ("SimpleRNN", {"return_sequences": True, "go_backwards": True}),
                         ("LSTM", {}), ("LSTM", {"return_sequences": True, "return_state": True}),
                         ("LSTM", {"go_backwards": True, "activation": "relu"}),
                         ("GRU", {}), ("GRU", {"return_sequences": True, "return_state": True}),
                         ("GRU", {"reset_after": False}), ("GRU", {"go_backwards": True, "return_sequences": True})]:
        layer = getattr(K.layers, name)(5, **kwargs)
        layer(seq[:1])
        layer.set_weights(set_random_like(layer, 200 + len(out)))
        outputs = layer(seq)
        key = f"{name.lower()}_{'_'.join(f'{k}_{v}' for k, v in sorted(kwargs.items())) or 'default'}"
        out[key] = [tolist(B.numpy(o)) for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs])]
    lstm = K.layers.LSTM(4, bias_initializer="ones")
    lstm(seq[:1])
    out["lstm_unit_forget_bias"] = tolist(lstm.get_weights()[2])
    gru = K.layers.GRU(5)
    gru(seq[:1])
    gru.set_weights(set_random_like(gru, 260))
    out["gru_initial_state"] = tolist(B.numpy(gru(seq, initial_state=[B.tensor(normal(261, (2, 5)))])))
    shapes = []
    for layer in (lstm, gru, K.layers.GRU(3, reset_after=False), K.layers.SimpleRNN(2)):
        layer(seq[:1])
        shapes.append([list(w.shape) for w in layer.get_weights()])
    out["recurrent_weight_shapes"] = shapes

    # Keras layouts in get_weights, and a set/get round trip through a model
    model = K.Sequential([K.Input(shape=(7, 6, 3)), K.layers.Conv2D(4, 3), K.layers.BatchNormalization(),
                          K.layers.Flatten(), K.layers.Dense(5), K.layers.Dense(2)])
    shapes = [list(w.shape) for w in model.get_weights()]
    new = [np.abs(normal(90 + i, s, 0.3)) + 0.05 for i, s in enumerate(shapes)]  # positive: BN variances
    model.set_weights(new)
    roundtrip = max(float(np.max(np.abs(a - b))) for a, b in zip(model.get_weights(), new))
    out["model_weight_shapes"] = shapes
    out["model_trainable_shapes"] = [list(v.shape) for v in model.trainable_variables]
    out["model_roundtrip_error"] = roundtrip
    out["model_forward"] = tolist(B.numpy(model(img, training=False)))
    return out


def case_initializers(B):
    K = B.keras
    out = {}
    value = normal(5, (4, 3))
    layer = K.layers.Dense(3, kernel_initializer=K.initializers.Constant(value), bias_initializer="ones")
    layer(np.zeros((1, 4), np.float32))
    out["constant"] = [tolist(w) for w in layer.get_weights()]
    layer = K.layers.Dense(3, kernel_initializer=B.constant_initializer(value.reshape(-1)),
                           bias_initializer=K.initializers.Constant(0.25))
    layer(np.zeros((1, 4), np.float32))
    out["constant_initializer_flat"] = [tolist(w) for w in layer.get_weights()]
    # distribution checks: mean/std/bounds of large draws
    for name in ["glorot_uniform", "glorot_normal", "he_normal", "he_uniform", "zeros", "ones"]:
        init = K.initializers.get(name)
        sample = B.numpy(init((200, 300))).astype(np.float64)
        out[f"stats_{name}"] = [float(sample.mean()), float(sample.std()), float(np.abs(sample).max())]
    for name, init in [("random_normal", K.initializers.RandomNormal(0.5, 0.2, seed=1)),
                       ("random_uniform", K.initializers.RandomUniform(-0.3, 0.1, seed=1)),
                       ("truncated_normal", K.initializers.TruncatedNormal(0.0, 0.1, seed=1))]:
        sample = B.numpy(init((300, 300))).astype(np.float64)
        out[f"stats_{name}"] = [float(sample.mean()), float(sample.std()), float(np.abs(sample).max())]
    return out


def case_losses(B):
    K = B.keras
    out = {}
    logits = normal(100, (6, 4), 2.0)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    probs[0] = [1.0, 0.0, 0.0, 0.0]  # exercises the 1e-7 clipping
    probs = probs.astype(np.float32)
    labels = np.array([1, 0, 3, 2, 2, 1])
    onehot = np.eye(4, dtype=np.float32)[labels]
    weights = np.array([1.0, 0.5, 2.0, 0.0, 1.0, 3.0], np.float32)
    binary_logits = normal(101, (6, 3), 2.0)
    binary_probs = (1 / (1 + np.exp(-binary_logits))).astype(np.float32)
    binary_probs[0, 0] = 1.0
    binary_labels = (rng(102).random((6, 3)) > 0.5).astype(np.float32)
    regression_true = normal(103, (6, 2))
    regression_pred = normal(104, (6, 2))
    reductions = ["none", "sum", "sum_over_batch_size"]
    for reduction in reductions:
        for sw_name, sw in [("nosw", None), ("sw", weights)]:
            for from_logits in (False, True):
                tag = f"{reduction}_{sw_name}_{'logits' if from_logits else 'probs'}"
                pred = logits if from_logits else probs
                out[f"scce_{tag}"] = tolist(B.numpy(K.losses.SparseCategoricalCrossentropy(
                    from_logits=from_logits, reduction=reduction)(labels, pred, sample_weight=sw)))
                out[f"cce_{tag}"] = tolist(B.numpy(K.losses.CategoricalCrossentropy(
                    from_logits=from_logits, reduction=reduction)(onehot, pred, sample_weight=sw)))
                bpred = binary_logits if from_logits else binary_probs
                out[f"bce_{tag}"] = tolist(B.numpy(K.losses.BinaryCrossentropy(
                    from_logits=from_logits, reduction=reduction)(binary_labels, bpred, sample_weight=sw)))
            out[f"mse_{reduction}_{sw_name}"] = tolist(B.numpy(K.losses.MeanSquaredError(reduction=reduction)(
                regression_true, regression_pred, sample_weight=sw)))
            out[f"mae_{reduction}_{sw_name}"] = tolist(B.numpy(K.losses.MeanAbsoluteError(reduction=reduction)(
                regression_true, regression_pred, sample_weight=sw)))
    out["fn_scce"] = tolist(B.numpy(K.losses.sparse_categorical_crossentropy(labels, probs)))
    out["fn_scce_logits"] = tolist(B.numpy(K.losses.sparse_categorical_crossentropy(labels, logits,
                                                                                     from_logits=True)))
    out["fn_cce_smooth"] = tolist(B.numpy(K.losses.categorical_crossentropy(onehot, probs, label_smoothing=0.1)))
    out["fn_bce"] = tolist(B.numpy(K.losses.binary_crossentropy(binary_labels, binary_probs)))
    out["fn_mse"] = tolist(B.numpy(K.losses.mse(regression_true, regression_pred)))
    out["fn_mae"] = tolist(B.numpy(K.losses.mae(regression_true, regression_pred)))
    out["get_mse"] = tolist(B.numpy(K.losses.get("mse")(regression_true, regression_pred)))
    out["get_scce"] = tolist(B.numpy(K.losses.get("sparse_categorical_crossentropy")(labels, probs)))
    out["scce_labels_column"] = tolist(B.numpy(K.losses.SparseCategoricalCrossentropy()(labels[:, None], probs)))
    out["mse_rank1"] = tolist(B.numpy(K.losses.MeanSquaredError()(regression_true[:, 0], regression_pred[:, :1])))
    per_example = normal(105, (6,))
    out["cal_default"] = tolist(B.numpy(B.compute_average_loss(per_example)))
    out["cal_global"] = tolist(B.numpy(B.compute_average_loss(per_example, global_batch_size=16)))
    out["cal_weighted"] = tolist(B.numpy(B.compute_average_loss(per_example, sample_weight=weights,
                                                                global_batch_size=10)))
    out["cal_zero"] = tolist(B.numpy(B.compute_average_loss(per_example, global_batch_size=0)))
    return out


def optimizer_specs(K):
    S = K.optimizers.schedules
    return {
        "sgd": lambda: K.optimizers.SGD(learning_rate=0.1),
        "sgd_momentum": lambda: K.optimizers.SGD(learning_rate=0.05, momentum=0.9),
        "sgd_nesterov": lambda: K.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
        "sgd_exp_decay": lambda: K.optimizers.SGD(S.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)),
        "sgd_piecewise": lambda: K.optimizers.SGD(S.PiecewiseConstantDecay([1, 3], [0.1, 0.05, 0.01]),
                                                  momentum=0.5),
        "adam": lambda: K.optimizers.Adam(learning_rate=0.01),
        "adam_amsgrad": lambda: K.optimizers.Adam(learning_rate=0.02, amsgrad=True),
        "adam_cosine": lambda: K.optimizers.Adam(S.CosineDecay(0.05, decay_steps=4, alpha=0.1)),
        "adam_cosine_warmup": lambda: K.optimizers.Adam(S.CosineDecay(0.0, 4, warmup_target=0.05, warmup_steps=2)),
        "adamw": lambda: K.optimizers.AdamW(learning_rate=0.01, weight_decay=0.05),
        "adamw_inverse_time": lambda: K.optimizers.AdamW(S.InverseTimeDecay(0.02, 1, 0.5, staircase=True)),
        "rmsprop": lambda: K.optimizers.RMSprop(learning_rate=0.01),
        "rmsprop_centered_momentum": lambda: K.optimizers.RMSprop(0.01, rho=0.8, momentum=0.9, centered=True),
        "rmsprop_polynomial": lambda: K.optimizers.RMSprop(S.PolynomialDecay(0.02, 4, 0.001, power=2.0)),
        "sgd_clipnorm": lambda: K.optimizers.SGD(0.1, clipnorm=0.5),
        "sgd_global_clipnorm": lambda: K.optimizers.SGD(0.1, global_clipnorm=0.7),
        "adam_clipvalue": lambda: K.optimizers.Adam(0.01, clipvalue=0.3),
        "nadam": lambda: K.optimizers.Nadam(learning_rate=0.02),
        "nadam_betas": lambda: K.optimizers.Nadam(0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-5),
        "adagrad": lambda: K.optimizers.Adagrad(learning_rate=0.05),
        "adagrad_initial": lambda: K.optimizers.Adagrad(0.1, initial_accumulator_value=0.5, epsilon=1e-4),
        "adadelta": lambda: K.optimizers.Adadelta(learning_rate=1.0),
        "adadelta_rho": lambda: K.optimizers.Adadelta(0.5, rho=0.8, epsilon=1e-5),
        "adamax": lambda: K.optimizers.Adamax(learning_rate=0.02),
        "adamax_betas": lambda: K.optimizers.Adamax(0.01, beta_1=0.7, beta_2=0.9, epsilon=1e-4),
    }


def case_optimizers(B):
    K = B.keras
    out = {}
    shapes = [(3, 2), (2,)]
    steps = 6
    grads = [[normal(200 + 10 * s + i, shape) for i, shape in enumerate(shapes)] for s in range(steps)]
    for name, make_optimizer in optimizer_specs(K).items():
        variables = [B.variable(normal(300 + i, shape), f"{name}_v{i}") for i, shape in enumerate(shapes)]
        optimizer = make_optimizer()
        trajectory = []
        for s in range(steps):
            optimizer.apply_gradients(zip([B.tensor(g) for g in grads[s]], variables))
            trajectory.append([tolist(B.numpy(v)) for v in variables])
        out[name] = {"trajectory": trajectory, "iterations": int(B.numpy(optimizer.iterations))}
    S = K.optimizers.schedules
    schedules = {
        "exponential": S.ExponentialDecay(0.1, 3, 0.7),
        "exponential_staircase": S.ExponentialDecay(0.1, 3, 0.7, staircase=True),
        "piecewise": S.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1]),
        "cosine": S.CosineDecay(0.1, 7, alpha=0.05),
        "inverse_time": S.InverseTimeDecay(0.1, 2, 0.3),
        "polynomial": S.PolynomialDecay(0.1, 6, 0.01, power=0.5),
        "polynomial_cycle": S.PolynomialDecay(0.1, 3, 0.01, cycle=True),
    }
    for name, schedule in schedules.items():
        out[f"schedule_{name}"] = [float(B.numpy(schedule(step))) for step in range(12)]
    return out


def case_loss_scale(B):
    """LossScaleOptimizer over 12 steps with overflows forced: skipped steps, the scale and the counter."""
    K = B.keras
    out = {}
    shapes = [(3, 2), (2,)]
    bad = {3: (0, np.inf), 7: (1, np.nan), 8: (0, -np.inf), 9: (1, np.inf)}  # step: (gradient, value)
    inners = {"sgd_momentum": lambda: K.optimizers.SGD(learning_rate=0.05, momentum=0.9),
              "adam_clipnorm": lambda: K.optimizers.Adam(learning_rate=0.01, clipnorm=0.5)}
    for name, make_inner in inners.items():
        variables = [B.variable(normal(500 + i, shape), f"ls_{name}_v{i}") for i, shape in enumerate(shapes)]
        optimizer = K.mixed_precision.LossScaleOptimizer(make_inner(), dynamic_growth_steps=3)
        steps = []
        for s in range(12):
            scale = float(B.numpy(optimizer.scale_loss(1.0)))
            grads = [normal(600 + 10 * s + i, shape) * scale for i, shape in enumerate(shapes)]
            if s in bad:
                index, value = bad[s]
                grads[index].flat[1] = value
            optimizer.apply_gradients(zip([B.tensor(g) for g in grads], variables))
            steps.append({"scale_before": scale, "scale": float(B.numpy(optimizer.dynamic_scale)),
                          "counter": int(B.numpy(optimizer.step_counter)),
                          "iterations": int(B.numpy(optimizer.iterations)),
                          "variables": [tolist(B.numpy(v)) for v in variables]})
        out[name] = steps
    out["defaults"] = [float(B.numpy(K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD()).scale_loss(3.0))),
                       K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD()).dynamic_growth_steps]
    return out


def case_mixed_precision(B):
    """mixed_float16: float16 layers with float32 variables, BatchNorm in float32, fit with automatic loss
    scaling, and a custom loop whose float16 backward pass overflows until the scale has come down."""
    K = B.keras
    out = {}
    K.mixed_precision.set_global_policy("mixed_float16")
    try:
        x = normal(800, (32, 8, 8, 3))
        y = rng(801).integers(0, 4, 32)
        model = K.Sequential([K.Input(shape=(8, 8, 3)), K.layers.Conv2D(4, 3, padding="same"),
                              K.layers.BatchNormalization(), K.layers.Activation("relu"), K.layers.Flatten(),
                              K.layers.Dense(16, activation="relu"), K.layers.Dense(4),
                              K.layers.Activation("linear", dtype="float32")])
        model.set_weights([np.abs(normal(810 + i, w.shape, 0.3)) + 0.5 if i == 5 else normal(810 + i, w.shape, 0.3)
                           for i, w in enumerate(model.get_weights())])
        out["policy"] = [model.dtype_policy.name, model.layers[0].compute_dtype, model.layers[0].variable_dtype,
                         K.mixed_precision.global_policy().name]
        out["dtypes"] = [str(B.numpy(model.layers[1](model.layers[0](x[:2]))).dtype), str(B.numpy(model(x[:2])).dtype),
                         str(B.numpy(model.layers[0].kernel).dtype)]
        out["predict"] = tolist(B.numpy(model(x[:4])))
        model.compile(optimizer=K.optimizers.SGD(0.05, momentum=0.5),
                      loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
        out["wrapped"] = type(model.optimizer).__name__
        history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
        out["fit"] = {"loss": history.history["loss"], "weights": [tolist(w) for w in model.get_weights()],
                      "scale": float(B.numpy(model.optimizer.dynamic_scale))}

        # A regression whose float16 gradients overflow at the initial scale of 2**15.
        regression = K.Sequential([K.Input(shape=(6,)), K.layers.Dense(8, activation="tanh"), K.layers.Dense(1),
                                   K.layers.Activation("linear", dtype="float32")])
        regression.set_weights([normal(820 + i, w.shape, 0.5) for i, w in enumerate(regression.get_weights())])
        optimizer = K.mixed_precision.LossScaleOptimizer(K.optimizers.SGD(1e-4), dynamic_growth_steps=4)
        features, targets = normal(830, (16, 6)), normal(831, (16, 1), 300.0)
        steps = []
        for _ in range(10):
            loss, grads = B.scaled_loss_and_grads(regression, optimizer, features, targets)
            optimizer.apply_gradients(zip(grads, regression.trainable_variables))
            steps.append({"loss": float(B.numpy(loss)), "scale": float(B.numpy(optimizer.dynamic_scale)),
                          "iterations": int(B.numpy(optimizer.iterations))})
        out["overflow_loop"] = {"steps": steps, "weights": [tolist(w) for w in regression.get_weights()]}
    finally:
        K.mixed_precision.set_global_policy("float32")
    return out


def case_metrics(B):
    K = B.keras
    out = {}
    probs = np.abs(normal(400, (8, 4))) + 0.01
    labels = np.array([0, 1, 2, 3, 3, 2, 1, 0])
    onehot = np.eye(4, dtype=np.float32)[rng(401).integers(0, 4, 8)]
    weights = np.array([1, 0.5, 2, 0, 1, 1, 3, 0.25], np.float32)
    specs = {
        "mean": (K.metrics.Mean, lambda m, sl: m.update_state(probs[sl, 0], sample_weight=weights[sl])),
        "sum": (K.metrics.Sum, lambda m, sl: m.update_state(probs[sl])),
        "sparse_categorical_accuracy": (K.metrics.SparseCategoricalAccuracy,
                                        lambda m, sl: m.update_state(labels[sl], probs[sl])),
        "sparse_categorical_accuracy_weighted": (K.metrics.SparseCategoricalAccuracy,
                                                 lambda m, sl: m.update_state(labels[sl], probs[sl], weights[sl])),
        "categorical_accuracy": (K.metrics.CategoricalAccuracy, lambda m, sl: m.update_state(onehot[sl], probs[sl])),
        "accuracy": (K.metrics.Accuracy, lambda m, sl: m.update_state(labels[sl], np.argmax(probs[sl], -1))),
        "binary_accuracy": (K.metrics.BinaryAccuracy,
                            lambda m, sl: m.update_state((labels[sl] > 1).astype(np.float32), probs[sl, 0] / 2)),
        "mse": (K.metrics.MeanSquaredError, lambda m, sl: m.update_state(onehot[sl], probs[sl])),
    }
    for name, (cls, update) in specs.items():
        metric = cls()
        update(metric, slice(0, 3))
        first = float(B.numpy(metric.result()))
        update(metric, slice(3, 8))
        second = float(B.numpy(metric.result()))
        metric.reset_state()
        out[name] = [first, second, float(B.numpy(metric.result()))]
    return out


def build_classifier(B, softmax=False, batchnorm=False):
    K = B.keras
    w1 = normal(500, (4, 8), 0.5)
    w2 = normal(501, (8, 3), 0.5)
    layers = [K.Input(shape=(4,)), K.layers.Dense(8, activation="tanh", kernel_initializer=K.initializers.Constant(w1),
                                                  bias_initializer=K.initializers.Constant(0.1))]
    if batchnorm:
        layers.append(K.layers.BatchNormalization())
    layers.append(K.layers.Dense(3, activation="softmax" if softmax else None,
                                 kernel_initializer=B.constant_initializer(w2)))
    return K.Sequential(layers)


def fit_data():
    x = normal(600, (21, 4))
    y = rng(601).integers(0, 3, 21)
    xv = normal(602, (11, 4))
    yv = rng(603).integers(0, 3, 11)
    return x, y, xv, yv


def case_fit(B):
    K = B.keras
    out = {}
    x, y, xv, yv = fit_data()
    model = build_classifier(B)
    model.compile(optimizer=K.optimizers.SGD(0.1, momentum=0.5),
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, validation_data=(xv, yv))
    out["sgd_logits"] = {"history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
                         "weights": [tolist(w) for w in model.get_weights()],
                         "evaluate": [float(v) for v in model.evaluate(xv, yv, batch_size=4, verbose=0)],
                         "predict": tolist(model.predict(xv, batch_size=3, verbose=0))}
    model = build_classifier(B, softmax=True, batchnorm=True)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=[K.metrics.SparseCategoricalAccuracy(name="acc")])
    history = model.fit(x, y, batch_size=5, epochs=2, shuffle=False, verbose=0)
    out["adam_softmax_bn"] = {"history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
                              "weights": [tolist(w) for w in model.get_weights()]}
    # functional regression with sample weights
    inputs = K.Input(shape=(4,))
    hidden = K.layers.Dense(5, activation="relu", kernel_initializer=K.initializers.Constant(normal(610, (4, 5))))(
        inputs)
    outputs = K.layers.Dense(1, kernel_initializer=K.initializers.Constant(normal(611, (5, 1))))(hidden)
    model = K.Model(inputs, outputs)
    model.compile(optimizer=K.optimizers.RMSprop(0.01), loss="mse", metrics=["mae"])
    target = normal(612, (21, 1))
    weights = np.abs(normal(613, (21,)))
    history = model.fit(x, target, sample_weight=weights, batch_size=6, epochs=2, shuffle=False, verbose=0)
    out["functional_mse_weighted"] = {"history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
                                      "weights": [tolist(w) for w in model.get_weights()]}
    # a sequence classifier: gradients through every step of an LSTM and a GRU
    sequences = normal(640, (14, 6, 3))
    labels = rng(641).integers(0, 3, 14)
    recurrent = K.Sequential([K.Input(shape=(6, 3)), K.layers.LSTM(5, return_sequences=True), K.layers.GRU(4),
                              K.layers.Dense(3)])
    recurrent.set_weights([normal(642 + i, w.shape, 0.4) for i, w in enumerate(recurrent.get_weights())])
    recurrent.compile(optimizer=K.optimizers.SGD(0.1, momentum=0.5),
                      loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = recurrent.fit(sequences, labels, batch_size=4, epochs=2, shuffle=False, verbose=0)
    out["recurrent_lstm_gru"] = {"history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
                                 "weights": [tolist(w) for w in recurrent.get_weights()]}
    # an upsampling decoder: gradients through Conv2DTranspose and UpSampling2D
    images = normal(620, (12, 4, 4, 2))
    decoder = K.Sequential([K.Input(shape=(4, 4, 2)), K.layers.Conv2DTranspose(3, 3, strides=2, padding="same",
                                                                               activation="tanh"),
                            K.layers.UpSampling2D(2), K.layers.Conv2D(1, 3, padding="same")])
    decoder.set_weights([normal(621 + i, w.shape, 0.3) for i, w in enumerate(decoder.get_weights())])
    decoder.compile(optimizer=K.optimizers.SGD(0.05, momentum=0.5), loss="mse")
    history = decoder.fit(images, normal(630, (12, 16, 16, 1)), batch_size=4, epochs=2, shuffle=False, verbose=0)
    out["decoder_transpose_upsampling"] = {"history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
                                           "weights": [tolist(w) for w in decoder.get_weights()]}
    return out


def case_callbacks(B):
    """ReduceLROnPlateau and CSVLogger on a fit with class weights; BackupAndRestore across an interrupted fit."""
    import csv
    import tempfile

    K = B.keras
    out = {}
    x, y, xv, yv = fit_data()
    directory = tempfile.mkdtemp()
    model = build_classifier(B)
    model.compile(optimizer=K.optimizers.SGD(0.2, momentum=0.5),
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    path = os.path.join(directory, "log.csv")
    callbacks = [K.callbacks.ReduceLROnPlateau(monitor="val_accuracy", factor=0.5, patience=1, cooldown=1,
                                               min_lr=0.03),
                 K.callbacks.CSVLogger(path)]
    history = model.fit(x, y, batch_size=8, epochs=6, shuffle=False, verbose=0, validation_data=(xv, yv),
                        class_weight={0: 2.0, 2: 0.5}, callbacks=callbacks)
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    out["plateau_csv_class_weight"] = {
        "history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
        "weights": [tolist(w) for w in model.get_weights()],
        "csv_header": rows[0], "csv": [[float(v) for v in row] for row in rows[1:]]}

    class Interrupt(K.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise KeyboardInterrupt("preempted")

    def make():
        model = build_classifier(B)
        model.compile(optimizer=K.optimizers.Adam(0.05), loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    backup = os.path.join(directory, "backup")
    first = make()
    try:
        first.fit(x, y, batch_size=8, epochs=4, shuffle=False, verbose=0,
                  callbacks=[K.callbacks.BackupAndRestore(backup), Interrupt()])
    except KeyboardInterrupt:
        pass
    saved = sorted(os.listdir(backup))
    with open(os.path.join(backup, "training_metadata.json")) as handle:
        metadata = json.load(handle)
    resumed = make()
    resumed(x[:1])  # BackupAndRestore needs a built model
    history = resumed.fit(x, y, batch_size=8, epochs=4, shuffle=False, verbose=0,
                          callbacks=[K.callbacks.BackupAndRestore(backup)])
    straight = make()
    straight.fit(x, y, batch_size=8, epochs=4, shuffle=False, verbose=0)
    out["backup_and_restore"] = {
        "saved": saved, "metadata": metadata, "history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
        "epochs": list(history.epoch), "weights": [tolist(w) for w in resumed.get_weights()],
        "max_difference_to_uninterrupted": float(max(np.max(np.abs(a - b)) for a, b in
                                                     zip(resumed.get_weights(), straight.get_weights()))),
        "deleted": not os.path.exists(backup)}
    return out


def case_saving(B):
    """`model.save` then `load_model`: the same outputs, compiled as before, training on from the
    optimizer's saved state; a functional graph with a shared layer, tensor arithmetic and
    slicing; a registered subclassed model; `clone_model` and `model_from_json` (new weights)."""
    import tempfile

    K = B.keras
    out = {}
    directory = tempfile.mkdtemp()
    x, y, xv, yv = fit_data()

    model = build_classifier(B)
    model.compile(optimizer=K.optimizers.Adam(0.05), loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    path = os.path.join(directory, "classifier.keras")
    model.save(path)
    loaded = K.models.load_model(path)
    same = float(np.max(np.abs(loaded.predict(xv, verbose=0) - model.predict(xv, verbose=0))))
    history = loaded.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    out["sequential_adam"] = {
        "max_difference_after_load": same, "optimizer": type(loaded.optimizer).__name__,
        "iterations": int(B.numpy(loaded.optimizer.iterations)),
        "history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
        "weights": [tolist(w) for w in loaded.get_weights()],
        "max_difference_to_unsaved": float(max(np.max(np.abs(a - b)) for a, b in
                                               zip(loaded.get_weights(), model.get_weights())))}

    inputs = K.Input(shape=(4,))
    a = K.layers.Dense(5, activation="tanh", kernel_initializer=K.initializers.Constant(normal(700, (4, 5))))(inputs)
    b = K.layers.Dense(5, kernel_initializer=K.initializers.Constant(normal(701, (4, 5))))(inputs)
    shared = K.layers.Dense(3, kernel_initializer=K.initializers.Constant(normal(702, (5, 3))))
    mixed = K.layers.Concatenate()([shared(a), shared(b), 2.0 * a - b, a[:, :2]])
    outputs = K.layers.Dense(2, activation="softmax", kernel_initializer=K.initializers.Constant(normal(703, (13, 2))))(
        mixed)
    graph = K.Model(inputs, outputs)
    path = os.path.join(directory, "graph.keras")
    graph.save(path)
    loaded = K.models.load_model(path)
    clone = K.models.clone_model(graph)
    rebuilt = K.models.model_from_json(graph.to_json())
    out["functional_graph"] = {
        "predict": tolist(loaded.predict(xv, verbose=0)),
        "layer_classes": [type(layer).__name__ for layer in loaded.layers if "Dense" in type(layer).__name__
                          or "Concatenate" in type(layer).__name__],
        "weight_shapes": [list(w.shape) for w in loaded.get_weights()],
        "clone_shapes": [list(w.shape) for w in clone.get_weights()],
        "json_shapes": [list(w.shape) for w in rebuilt.get_weights()]}
    clone.set_weights(graph.get_weights())
    out["functional_graph"]["clone_with_weights_max_difference"] = float(
        np.max(np.abs(clone.predict(xv, verbose=0) - graph.predict(xv, verbose=0))))

    @K.utils.register_keras_serializable(package="cases")
    class TwoLayers(K.Model):
        def __init__(self, hidden=6, **kwargs):
            super().__init__(**kwargs)
            self.hidden = hidden
            self.first = K.layers.Dense(hidden, activation="relu")
            self.second = K.layers.Dense(3)

        def call(self, inputs):
            return self.second(self.first(inputs))

        def get_config(self):
            return {**super().get_config(), "hidden": self.hidden}

    sub = TwoLayers(hidden=7)
    sub.compile(optimizer=K.optimizers.SGD(0.1), loss="mse")
    sub(x[:2])
    sub.set_weights([normal(710 + i, w.shape, 0.5) for i, w in enumerate(sub.get_weights())])
    path = os.path.join(directory, "subclassed.keras")
    sub.save(path)
    loaded = K.models.load_model(path)
    out["subclassed"] = {"class": type(loaded).__name__, "hidden": loaded.hidden,
                         "predict": tolist(loaded.predict(xv, verbose=0))}
    return out


CASES = {"layers": case_layers, "initializers": case_initializers, "losses": case_losses,
         "optimizers": case_optimizers, "callbacks": case_callbacks, "loss_scale": case_loss_scale, "mixed_precision": case_mixed_precision,
         "metrics": case_metrics, "fit": case_fit, "saving": case_saving}


def main():
    backend = make(sys.argv[1])
    results = {}
    for name, case in CASES.items():
        try:
            results[name] = case(backend)
        except Exception as exc:  # report per case; the test names the failing one
            import traceback

            results[name] = {"__error__": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}
    with open(sys.argv[2], "w") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main()
