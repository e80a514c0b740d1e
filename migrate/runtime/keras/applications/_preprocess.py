"""Keras's ``applications.<model>.preprocess_input``: the ImageNet input scaling of each model.

Programs call it on their own images before their own models as often as before Keras's. Each module's function is Keras 3's
(``keras.src.applications.imagenet_utils``), ported line for line so that the numbers and
the quirks are the same:

- ``"tf"`` (MobileNet, MobileNetV2, InceptionV3, InceptionResNetV2, Xception, NASNet,
  ResNetV2): ``x / 127.5 - 1``;
- ``"caffe"`` (VGG16, VGG19, ResNet): RGB to BGR, then the ImageNet mean pixel subtracted;
- ``"torch"`` (DenseNet): ``x / 255``, then each channel's ImageNet mean and deviation;
- the rest (MobileNetV3, EfficientNet, EfficientNetV2, ConvNeXt) scale inside the
  model: ``preprocess_input`` gives its input back.

A NumPy array is scaled as Keras scales it: a float array in place (the caller's array
changes, as in Keras; an integer array is copied to float32 first). A MindSpore tensor
gives a new tensor (integers become float32).
"""

from __future__ import annotations

import numpy as np

_MEAN_CAFFE = [103.939, 116.779, 123.68]
_MEAN_TORCH = [0.485, 0.456, 0.406]
_STD_TORCH = [0.229, 0.224, 0.225]


def _numpy(x: np.ndarray, data_format: str, mode: str) -> np.ndarray:
    if not issubclass(x.dtype.type, np.floating):
        x = x.astype("float32", copy=False)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
        mean, std = _MEAN_TORCH, _STD_TORCH
    else:
        if data_format == "channels_first":
            x = x[::-1, ...] if len(x.shape) == 3 else x[:, ::-1, ...]
        else:
            x = x[..., ::-1]
        mean, std = _MEAN_CAFFE, None
    for channel in range(3):
        index = ((channel,) if len(x.shape) == 3 else (slice(None), channel)) if data_format == "channels_first" \
            else (Ellipsis, channel)
        x[index] -= mean[channel]
        if std is not None:
            x[index] /= std[channel]
    return x


def _tensor(x, data_format: str, mode: str):
    import mindspore as ms
    from mindspore import ops
    from mindspore.common import dtype as mstype

    if not isinstance(x, ms.Tensor):
        x = ms.Tensor(np.asarray(x))
    if x.dtype not in mstype.float_type:
        x = x.astype(ms.float32)
    ndim = len(x.shape)
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        x = x / 255.0
        mean, std = _MEAN_TORCH, _STD_TORCH
    else:
        if data_format == "channels_first":
            x = ops.stack([x[i, ...] for i in (2, 1, 0)], axis=0) if ndim == 3 else \
                ops.stack([x[:, i, :] for i in (2, 1, 0)], axis=1)
        else:
            x = ops.stack([x[..., i] for i in (2, 1, 0)], axis=-1)
        mean, std = _MEAN_CAFFE, None
    shape = ((3, 1, 1) if ndim == 3 else (1, 3) + (1,) * (ndim - 2)) if data_format == "channels_first" \
        else (1,) * (ndim - 1) + (3,)
    x = x + ms.Tensor(-np.array(mean), x.dtype).reshape(shape)
    if std is not None:
        std_shape = (-1, 1, 1) if data_format == "channels_first" else (3,)
        x = x / ms.Tensor(np.array(std), x.dtype).reshape(std_shape)
    return x


def preprocess_input(x, data_format=None, mode="caffe"):
    """Keras's ``imagenet_utils.preprocess_input``."""
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    if data_format is None:
        data_format = "channels_last"
    elif data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Expected data_format to be one of `channels_first` or `channels_last`. "
                         f"Received: data_format={data_format}")
    if isinstance(x, np.ndarray):
        return _numpy(x, data_format, mode)
    return _tensor(x, data_format, mode)


def _scaling(mode: str):
    def scale(x, data_format=None):
        return preprocess_input(x, data_format=data_format, mode=mode)

    scale.__doc__ = f"Keras's `preprocess_input` of this model: ImageNet's {mode!r} scaling."
    return scale


def _unchanged(x, data_format=None):
    """Keras's `preprocess_input` of a model that scales its input itself: the input, unchanged."""
    return x


_MODES = {
    "tf": ("mobilenet", "mobilenet_v2", "inception_v3", "inception_resnet_v2", "xception", "nasnet", "resnet_v2"),
    "caffe": ("vgg16", "vgg19", "resnet", "resnet50"),
    "torch": ("densenet",),
    None: ("mobilenet_v3", "efficientnet", "efficientnet_v2", "convnext"),
}



def scaling_of(module: str):
    """The `preprocess_input` of the Keras module `module` (`"vgg16"`, `"mobilenet_v2"`, ...)."""
    for mode, names in _MODES.items():
        if module in names:
            return _scaling(mode) if mode else _unchanged
    raise KeyError(module)


MODULES = tuple(name for names in _MODES.values() for name in names)
