"""Write migrate/engine/compat_v1.py: the `tf.compat.v1` spellings that are the TF 2 API itself.

    .venv/bin/python scripts/compat_v1_names.py           # print the module
    .venv/bin/python scripts/compat_v1_names.py --write   # rewrite it

A `tf.compat.v1.X` converts as `tf.X` only when it *is* `tf.X` in TensorFlow: the same
object, or the same function under another export wrapper (`inspect.unwrap`). One under
another path converts as the TF 2 name it is (`tf.compat.v1.gfile.GFile` is
`tf.io.gfile.GFile`, `tf.compat.v1.log` is `tf.math.log`): ``V1_AS_V2``. The rest
(`tf.compat.v1.where`, which does not broadcast; `tf.compat.v1.shape`, whose second
parameter is `name`) keep TFU901's "TF 1.x API" finding. A few v1 functions differ only by a
trailing deprecated alias (`keep_dims=`, `dim=`, `squeeze_dims=`): the v2 parameters come
first in the same order, so every call the rule accepts means the same; an alias argument
does not fit the rule's signature and is refused with the rest. They are listed in
``DEPRECATED_ALIAS_ONLY`` below, each checked here against TensorFlow's signatures. A few
more mean what v2's do with parameters ordered otherwise after a common prefix
(``SAME_FOR_THE_RULES``): each is checked against every rule's signature for the name, and a
rule with none (it passes the arguments on as written) fails the check; ``zeros_like`` and
``ones_like`` are checked so past their first parameter, which v1 names otherwise
(``FIRST_PARAMETER_RENAMED``). Two differ only in parameters that change nothing
(``SAME_WHATEVER_THE_ORDER``).

Needs TensorFlow. tests/test_aliases.py fails while the module differs from what this
prints, so a new rule's name goes with its regenerated module.
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from migrate.ops.args import parse_signature  # noqa: E402
from migrate.rules import load_rules  # noqa: E402

TARGET = REPO / "migrate" / "engine" / "compat_v1.py"

# v1 functions whose only difference is trailing deprecated alias parameters.
DEPRECATED_ALIAS_ONLY = {
    "reduce_all": ("reduction_indices", "keep_dims"),
    "reduce_any": ("reduction_indices", "keep_dims"),
    "reduce_max": ("reduction_indices", "keep_dims"),
    "reduce_mean": ("reduction_indices", "keep_dims"),
    "reduce_min": ("reduction_indices", "keep_dims"),
    "reduce_prod": ("reduction_indices", "keep_dims"),
    "reduce_sum": ("reduction_indices", "keep_dims"),
    "math.reduce_all": ("reduction_indices", "keep_dims"),
    "math.reduce_any": ("reduction_indices", "keep_dims"),
    "math.reduce_max": ("reduction_indices", "keep_dims"),
    "math.reduce_mean": ("reduction_indices", "keep_dims"),
    "math.reduce_min": ("reduction_indices", "keep_dims"),
    "math.reduce_prod": ("reduction_indices", "keep_dims"),
    "math.reduce_sum": ("reduction_indices", "keep_dims"),
    "expand_dims": ("dim",),
    "squeeze": ("squeeze_dims",),
    "nn.softmax": ("dim",),
    "nn.log_softmax": ("dim",),
    "math.softmax": ("dim",),
    "math.log_softmax": ("dim",),
}

# v1 functions with the v2 function's meaning whose parameters after a common prefix differ in
# order or number (`name` before `conjugate`, a trailing `verify_shape`): every call each rule
# of the name accepts binds the same parameters in both, which is checked below against the
# rules' signatures (positional parameters a prefix of v1's, keyword-only ones among them).
# (Not `where`: v1's selects rows by a rank-1 condition where v2's broadcasts it; nor `cond`:
# v1's unpacks a branch's one-element list unless `strict`.)
SAME_FOR_THE_RULES = {
    "transpose": "v1 takes `name` third and `conjugate` fourth; the rule binds `a` and `perm` by position",
    "constant": "v1 adds `verify_shape`, which no rule accepts; `value`, `dtype`, `shape` are v2's",
    "gather_nd": "v1 takes `name` before `batch_dims`",
    "argmax": "v1 takes `name` third, then the deprecated alias `dimension` and `output_type`; the rules bind "
              "`input` and `axis` by position, `output_type` by keyword",
    "argmin": "as `argmax`",
    "math.argmax": "as `argmax`",
    "math.argmin": "as `argmax`",
}

# v1 functions that name their first parameter otherwise (the rest as SAME_FOR_THE_RULES checks it):
# a positional first argument binds alike, and a call naming v1's first parameter does not fit the
# rule's signature (refused, as every call that does not fit is).
FIRST_PARAMETER_RENAMED = {
    "zeros_like": "v1 calls its first parameter `tensor` (v2 `input`) and adds `optimize` fourth",
    "ones_like": "as `zeros_like`",
}

# v1 functions whose parameters differ from v2's only in ones that change nothing the rule's target
# does, whatever position they take: converted without a signature check.
SAME_WHATEVER_THE_ORDER = {
    "io.parse_single_example": "v1 takes `name` third and `example_names` fourth (v2 the other way round); "
                               "`serialized` and `features` are v2's, and neither `name` nor `example_names` "
                               "changes what is parsed",
    "io.parse_example": "as `io.parse_single_example`",
}

HEADER = '''"""The `tf.compat.v1` spellings that are the TF 2 API itself, so they convert as `tf.X` does.

Generated by scripts/compat_v1_names.py from TensorFlow {version} and the bundled rules;
do not edit by hand. A name is here when `tf.compat.v1.X` is `tf.X` (the same object or
the same wrapped function), differs only by trailing deprecated alias parameters, or binds
every call the rules accept as `tf.X` does.
"""

SAME_IN_V1 = frozenset({{
'''

ALIASES_HEADER = '''
# `tf.compat.v1.X` that is the TF 2 function or class `tf.Y` under another path (the same
# object, or the same wrapped function): it converts as `tf.Y`.
V1_AS_V2 = {
'''


def _get(root, dotted: str):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _params(fn) -> list[str]:
    return list(inspect.signature(inspect.unwrap(fn)).parameters)


def compute() -> tuple[str, list[str], dict[str, str]]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    names = sorted({n for r in load_rules() for n in r.exact_matches
                    if n.startswith("tensorflow.") and not n.startswith(("tensorflow.keras.", "tensorflow.compat."))})
    same = []
    for name in names:
        rest = name[len("tensorflow."):]
        try:
            v2, v1 = _get(tf, rest), _get(tf.compat.v1, rest)
        except (AttributeError, ValueError):  # (a property that raises, `tf.float16.limits`, names nothing to pair)
            continue
        # (a method read twice is two bound objects, equal when they bind one function to one class)
        if v1 is v2 or ((inspect.ismethod(v1) or inspect.isbuiltin(v1)) and v1 == v2) or (
                callable(v1) and inspect.unwrap(v1) is inspect.unwrap(v2)):
            same.append(rest)
        elif rest in SAME_FOR_THE_RULES or rest in FIRST_PARAMETER_RENAMED:
            v1_params = _params(v1)
            for rule in load_rules():
                if name not in rule.exact_matches:
                    continue
                if "signature" not in rule.params:  # (it passes a call's arguments on as they are written)
                    raise SystemExit(f"{rule.id} has no signature to check tf.compat.v1.{rest} against")
                signature = parse_signature(rule.params["signature"])
                positional = [p for p, _, kw_only in signature if not kw_only]
                checked = v1_params
                if rest in FIRST_PARAMETER_RENAMED:
                    if v1_params[0] in {p for p, _, _ in signature}:
                        raise SystemExit(f"{rule.id} takes tf.compat.v1.{rest}'s first parameter by name")
                    positional, checked = positional[1:], v1_params[1:]
                if positional != checked[:len(positional)] or any(
                        p not in v1_params for p, _, kw_only in signature if kw_only):
                    raise SystemExit(f"{rule.id} binds tf.compat.v1.{rest}{v1_params} otherwise than tf.{rest}")
            same.append(rest)
        elif rest in SAME_WHATEVER_THE_ORDER:
            same.append(rest)
        elif rest in DEPRECATED_ALIAS_ONLY:
            p1, p2 = _params(v1), _params(v2)
            if p1 != p2 + list(DEPRECATED_ALIAS_ONLY[rest]):
                raise SystemExit(f"tf.compat.v1.{rest}{p1} is no longer tf.{rest}{p2} plus aliases")
            same.append(rest)
    return tf.__version__, same, _elsewhere(tf, names, set(same))


def _elsewhere(tf, names: list[str], same: set[str]) -> dict[str, str]:
    """`tf.compat.v1` names (of functions and classes, reached through its modules) that are a
    mapped TF 2 name's object under another path: {v1 path: the TF 2 path}."""
    import types

    mapped: dict[int, str] = {}
    for name in names:  # (sorted: the first TF 2 name of an object wins)
        rest = name[len("tensorflow."):]
        try:
            obj = inspect.unwrap(_get(tf, rest))
        except (AttributeError, ValueError):  # (as in compute)
            continue
        if callable(obj) and not isinstance(obj, type(tf)):
            mapped.setdefault(id(obj), rest)
    found: dict[str, str] = {}
    seen: set[int] = set()

    def walk(module, prefix: str) -> None:
        if id(module) in seen:
            return
        seen.add(id(module))
        for attr in sorted(dir(module)):
            if attr.startswith("_"):
                continue
            try:
                value = getattr(module, attr)
            except Exception:  # noqa: BLE001 - a lazily loaded attribute that fails: not an alias
                continue
            path = prefix + attr
            if isinstance(value, types.ModuleType):
                if "keras" in attr or attr == "compat":
                    continue  # (Keras's names normalize to tf.keras already, its lazy module raises; v1's
                    # `compat` leads back to v1 under another prefix)
                try:
                    inside = value.__name__.startswith("tensorflow")
                except Exception:  # noqa: BLE001 - a lazily loaded module that cannot say its name
                    inside = False
                if inside:
                    walk(value, path + ".")
                continue
            if not callable(value) or path in same:
                continue
            try:
                target = mapped.get(id(inspect.unwrap(value)))
            except Exception:  # noqa: BLE001 - an object that acts on being looked at (absl's FLAGS parses argv)
                continue
            if target is not None and target != path:
                try:
                    _get(tf, path)
                    continue  # (TF 2 has this path: it is TF 2's name, not an alias)
                except AttributeError:
                    found[path] = target

    walk(tf.compat.v1, "")
    return dict(sorted(found.items()))


def render() -> str:
    version, same, elsewhere = compute()
    body = "".join(f'    "{name}",\n' for name in same)
    aliases = "".join(f'    "{v1}": "{v2}",\n' for v1, v2 in elsewhere.items())
    return HEADER.format(version=version) + body + "})\n" + ALIASES_HEADER + aliases + "}\n"


def main(argv: list[str] | None = None) -> int:
    from generated_file import main as generate

    return generate(__doc__.splitlines()[0], render, TARGET, REPO, argv)


if __name__ == "__main__":
    sys.exit(main())
