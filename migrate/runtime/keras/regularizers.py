"""`tf.keras.regularizers`: L1, L2, L1L2 (Keras 3 defaults: 0.01), computed on the current weights."""

from __future__ import annotations


class Regularizer:
    def __call__(self, weight):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, weight):
        from mindspore import ops

        loss = 0.0
        if self.l1:
            loss = loss + self.l1 * ops.sum(ops.abs(weight))
        if self.l2:
            loss = loss + self.l2 * ops.sum(ops.square(weight))
        return loss

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2=0.01):
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2


def get(identifier):
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2}[identifier.lower()]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")


_BUILTINS = {cls.__name__: cls for cls in (Regularizer, L1, L2, L1L2)}


def serialize(regularizer):
    """Keras 3's `{"module", "class_name", "config", "registered_name"}` of a regularizer."""
    from . import serialization

    return serialization.serialize(regularizer, "keras.regularizers", _BUILTINS)


def deserialize(config, custom_objects=None):
    from . import serialization

    return serialization.deserialize(config, {**_BUILTINS, "l1": L1, "l2": L2, "l1_l2": L1L2}, "regularizer",
                                     custom_objects)
