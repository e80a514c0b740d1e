"""A method call that stays as it is: the object it is made on comes from migrate.runtime.

``ds.shuffle(100, seed=1)`` on a dataset built by ``migrate.runtime.tfdata`` needs no
rewrite; the rule still says what behaves differently, and notes the arguments that
have no effect or a different one there.
"""

from __future__ import annotations

from typing import Any

from migrate.ops import args as argbind
from migrate.ops.base import Param
from migrate.ops.calls import SignatureCall


class KeepCall(SignatureCall):
    name = "keep_call"
    target = "call"
    static = False  # the call needs its object: the object stays
    params = {
        "signature": Param(list, required=True, doc="the method's parameters (a call that does not fit is left to a person)"),
        "notes": Param(dict, doc="parameter → note when the call passes it"),
    }

    def check(self, params: dict[str, Any]) -> None:
        argbind.check_signature(params["signature"])
        names = {p[0] for p in argbind.parse_signature(params["signature"])}
        for key in params.get("notes", {}):
            if key not in names:
                raise ValueError(f"note for {key!r}, which is not in the signature")


    def rewrite(self, ctx, original, updated, params, suffix: str = ""):
        passed = argbind.explicit(original, params["signature"])
        for key, note in params.get("notes", {}).items():
            if key in passed:
                ctx.note(original, note)
        return updated
