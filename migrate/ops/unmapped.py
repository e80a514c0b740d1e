"""What no rule converts stays as it is and is reported, with MindSpore's counterpart when there is one.

The counterparts are data (the rule's ``counterparts`` table, after MindSpore's
"TensorFlow and MindSpore API mapping"): the exact name, or else the longest
listed prefix of it, says where to look (``tf.data.Dataset.from_tensor_slices``
finds ``tf.data.Dataset.from_tensor_slices``, ``tf.io.gfile.exists`` finds
``tf.io.gfile``).
"""

from __future__ import annotations

from typing import Any

from migrate.ops.base import Param
from migrate.ops.names import Flag


def shown(api: str) -> str:
    """``tensorflow.nn.gelu`` as users write it: ``tf.nn.gelu``."""
    return "tf." + api[len("tensorflow."):] if api.startswith("tensorflow.") else api


def nearest(table: dict[str, Any], name: str) -> str | None:
    """``name`` or its longest dotted prefix that ``table`` lists."""
    while name:
        if name in table:
            return name
        name = name.rpartition(".")[0]
    return None


class FlagUnmapped(Flag):
    """Leave the code as it is; one finding per use, naming the MindSpore counterpart from a table."""

    name = "flag_unmapped"
    fallback = True
    params = {
        "message": Param(str, required=True, doc="what a finding says when the tables know nothing of the name"),
        "counterparts": Param(dict, required=True, doc="TF name (tf.x.y) → MindSpore name; every name must exist in MindSpore"),
        "notes": Param(dict, doc="TF name → advice, said after the counterpart (or alone)"),
    }

    def check(self, params: dict[str, Any]) -> None:
        for table in ("counterparts", "notes"):
            for key, value in params.get(table, {}).items():
                if not (isinstance(key, str) and key.startswith("tf.") and isinstance(value, str) and value.strip()):
                    raise ValueError(f"{table}: {key!r} must be a TF name (tf.x.y) mapped to a non-empty string")

    def describe(self, params: dict[str, Any], api: str) -> str:
        name = shown(api)
        counterparts, notes = params["counterparts"], params.get("notes", {})
        found, advice = nearest(counterparts, name), nearest(notes, name)
        if found is None and advice is None:
            return f"`{name}` {params['message']}"
        text = f"`{name}` is not converted"
        if found is not None:
            text += f"; MindSpore: `{counterparts[found]}`"
        if advice is not None:
            text += f" ({notes[advice]})"
        return text
