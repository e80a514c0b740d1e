"""Rules by what they match: exact names, name prefixes and string literals, and what a use
of a name gets (the one decision the pruner and the planner share, :meth:`RuleIndex.use_of`)."""

from __future__ import annotations

import re

from migrate import ops
from migrate.engine.aliases import AddedImports
from migrate.engine.compat_v1 import SAME_IN_V1, V1_AS_V2
from migrate.engine.keras_backend import BACKEND_AS_TF
from migrate.ops.tails import match_cst, parse_tail
from migrate.ops.tails import words as tail_words_of
from migrate.rules import Rule


# An identifier-like word of source text (names, and also words in strings and comments).
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Calls whose string arguments libcst's scope analysis may read as type hints.
TYPE_HINT_CALLS = frozenset({"cast", "TypeVar", "NewType"})

# Spellings of the same TF 2 API: `import tensorflow.compat.v2 as tf` is `tensorflow`.
# Keras is one API under four names: `tf.keras`, Keras 3's `keras` (what `tf.keras` is
# from TF 2.16 on), Keras 2's `tf_keras`, and `tf.compat.v1.keras`.
NORMALIZE_PREFIXES = (
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow._api.v2.", "tensorflow."),
    ("tensorflow.compat.v1.keras.", "tensorflow.keras."),
    # Keras's own modules under `keras.src` (Keras 2.13 on and Keras 3) are the public API's implementation
    ("keras.src.", "tensorflow.keras."),
    ("keras.", "tensorflow.keras."),
    ("tf_keras.", "tensorflow.keras."),
    # TF 2's top-level aliases of Keras's modules (`tf.losses.X is tf.keras.losses.X`)
    ("tensorflow.initializers.", "tensorflow.keras.initializers."),
    ("tensorflow.losses.", "tensorflow.keras.losses."),
    ("tensorflow.metrics.", "tensorflow.keras.metrics."),
    ("tensorflow.optimizers.", "tensorflow.keras.optimizers."),
    # TF 1's file API under its two other names: `tf.gfile` (TF 1's top level) and the module
    # that defines it (`from tensorflow.python.platform import gfile`) are `tf.compat.v1.gfile`.
    ("tensorflow.gfile.", "tensorflow.compat.v1.gfile."),
    ("tensorflow.python.platform.gfile.", "tensorflow.compat.v1.gfile."),
)


_TF = "tensorflow."
_V1 = "tensorflow.compat.v1."
# What a tail's uses are called in findings and reports: the questions are TF tensors'.
TAIL_API = "tensorflow.Tensor"
_BACKEND = "tensorflow.keras.backend."


def lowered_words(rules) -> re.Pattern | None:
    """What a converted text must hold for any of ``rules`` (run on converted text) to apply:
    the last part of each name their ``lowers`` lists, as a word; None for no such name."""
    words = {name.rsplit(".", 1)[-1] for rule in rules for name in rule.params["lowers"]}
    return re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, words)))) if words else None


def normalize(qualname: str) -> str:
    # `tf.compat.v1.X` converts as `tf.X` where it is `tf.X` in TensorFlow (see compat_v1.py).
    if qualname.startswith(_V1):
        rest = qualname[len(_V1):]
        if rest in SAME_IN_V1:
            return "tensorflow." + rest
        if rest in V1_AS_V2:  # (`tf.compat.v1.gfile.GFile` is `tf.io.gfile.GFile`)
            return "tensorflow." + V1_AS_V2[rest]
    elif qualname.startswith(_TF) and qualname[len(_TF):] in V1_AS_V2:
        # A TF 1 top-level spelling TF 2 does not have (`tf.random_shuffle`): the program is TF 1's,
        # where `tf.X` is `tf.compat.v1.X`, which is that TF 2 name.
        return _TF + V1_AS_V2[qualname[len(_TF):]]
    for old, new in NORMALIZE_PREFIXES:
        if qualname.startswith(old) or qualname + "." == old:
            qualname = new + qualname[len(old):] if qualname.startswith(old) else new[:-1]
            break
    # Keras's backend helper that is one TF call converts as that call (see keras_backend.py).
    if qualname.startswith(_BACKEND) and qualname[len(_BACKEND):] in BACKEND_AS_TF:
        return "tensorflow." + BACKEND_AS_TF[qualname[len(_BACKEND):]]
    return qualname


class RuleIndex:
    """Rules by what they match: exact names, name prefixes (``a.b.*``) and string literals."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self.exact: dict[str, Rule] = {}
        # Every rule for a name, in rule order: the first that can rewrite a use takes it
        # (`@tf.function` and `tf.function(fn)` are two rules for one name).
        self.named: dict[str, list[Rule]] = {}
        self.prefixes: list[tuple[str, Rule]] = []
        self._by_prefix: dict[str, list[Rule]] = {}
        self.strings: dict[str, Rule] = {}
        # Attribute chains matched on any receiver, longest first (see migrate.ops.tails).
        self.tails: list[tuple[tuple[tuple[str, bool], ...], str, Rule]] = []
        self.returns: dict[str, str] = {}
        facts: dict[str, set[str]] = {}
        # The native tier's lowerings (migrate.ops.native) match nothing in TF code: they run
        # after the rewrite, on the shim's names it wrote.
        self.lowerings: tuple[Rule, ...] = tuple(r for r in rules if ops.REGISTRY[r.operation].target == "lowering")
        # What a converted text must hold for any lowering to apply (the last part of a lowered name).
        self.lowered_words: re.Pattern | None = lowered_words(self.lowerings)
        for rule in rules:
            if rule in self.lowerings:
                continue
            for fact, names in rule.facts.items():
                facts.setdefault(fact, set()).update(normalize(n) for n in names)
            for name in rule.exact_matches:
                self.exact.setdefault(name, rule)
                self.named.setdefault(name, []).append(rule)
                if rule.returns:
                    self.returns.setdefault(name, rule.returns)
            for prefix in rule.prefix_matches:
                self.prefixes.append((prefix, rule))
                self._by_prefix.setdefault(prefix, []).append(rule)
            for literal in rule.match_strings:
                self.strings.setdefault(literal, rule)
            for tail in rule.match_tails:
                self.tails.append((parse_tail(tail), tail, rule))
        self.tails.sort(key=lambda t: -len(t[0]))
        self.tail_chains = [parsed for parsed, _, _ in self.tails]
        self.tail_words: frozenset[str] = frozenset(tail_words_of(t for _, t, _ in self.tails))
        # What rules declare the APIs they match to be (see migrate.engine.facts).
        self.fact_names: dict[str, frozenset[str]] = {fact: frozenset(names) for fact, names in facts.items()}
        self.prefixes.sort(key=lambda p: -len(p[0]))
        self.roots = {name.split(".")[0] for name in list(self.exact) + [p for p, _ in self.prefixes]}
        # Other spellings of a matched namespace (`keras` for `tensorflow.keras`) are roots too.
        matched = list(self.exact) + [p + "." for p, _ in self.prefixes]
        self.roots |= {old.split(".")[0] for old, new in NORMALIZE_PREFIXES if any(m.startswith(new) for m in matched)}
        # Words a file must contain for any rule to match in it: the last name of every
        # matched API (`MirroredStrategy`, `distribute` for `tensorflow.distribute.*`).
        # Methods of tracked objects need no word of their own: their constructor has one.
        instance_types = tuple(t + "." for t in set(self.returns.values()))
        needles = {name.rsplit(".", 1)[-1] for name in list(self.exact) + [p for p, _ in self.prefixes] if not name.startswith(instance_types)}
        needles |= self.tail_words
        # A prefix rule covering a whole namespace (`tensorflow.*`) also covers its other spellings (`keras.*`).
        needles |= {old.rstrip(".").rsplit(".", 1)[-1] for old, new in NORMALIZE_PREFIXES if any(new.startswith(p + ".") for p, _ in self.prefixes)}
        self._needles = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, needles)))) if needles else None
        self._roots = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, self.roots)))) if self.roots else None

    @property
    def added_imports(self) -> AddedImports:
        """The imports the rules may add, by the name each binds (see migrate.engine.aliases)."""
        found = self.__dict__.get("_added_imports")
        if found is None:
            found = self._added_imports = AddedImports.of(self.rules)
        return found

    def may_match(self, code: str) -> bool:
        """Cheap pre-filter: without these words no rule can match, so no scope analysis is needed."""
        if any(s in code for s in self.strings):
            return True
        return bool(self._roots and self._needles and self._roots.search(code) and self._needles.search(code))

    def tail_of(self, node, parent) -> tuple[Rule, str, object, object] | None:
        """The longest tail ``node`` (an attribute) ends: (rule, the API's name for reports,
        the node the rewrite replaces, the receiver), else None."""
        if node.attr.value not in self.tail_words:
            return None
        for parsed, tail, rule in self.tails:
            found = match_cst(node, parsed, parent)
            if found is not None:
                return rule, TAIL_API + tail.replace("()", ""), found[0], found[1]
        return None

    def use_of(self, qualname: str) -> tuple[str, Rule | None]:
        """What a use of ``qualname`` gets, as far as its name alone decides: ``("nothing", None)``
        when no rule matches it, ``("mark", rule)`` when the first rule only marks what no other
        rule maps (such a use needs no libcst: the pruner sets its statement aside and marks it
        there, the planner marks it the same way), else ``("rewrite", None)``: the planner decides."""
        if qualname.split(".")[0] not in self.roots:
            return "nothing", None
        found = self.candidates(qualname)
        if not found:
            return "nothing", None
        rule = found[0][0]
        return ("mark", rule) if ops.REGISTRY[rule.operation].fallback else ("rewrite", None)

    def deciding(self, qualname: str) -> tuple[Rule, str] | None:
        """The first candidate that decides every use of the name, wherever it stands (a rule that
        takes only uses in certain places leaves the others to the next): what a use is when
        nothing about its place is known, or when the place-bound rule does not take it."""
        return next(((rule, suffix) for rule, suffix in self.candidates(qualname)
                     if ops.REGISTRY[rule.operation].everywhere(rule.params)), None)

    def candidates(self, qualname: str) -> list[tuple[Rule, str]]:
        """(rule, suffix) pairs, most specific first; the suffix is what a prefix rule keeps."""
        found = [(rule, "") for rule in self.named.get(qualname, ())]
        # Prefix rules by dictionary look-ups on the name's own prefixes, longest first:
        # the cost grows with the name's depth, not with the number of rules.
        end = qualname.rfind(".")
        while end > 0:
            prefix = qualname[:end]
            found += [(rule, qualname[end:]) for rule in self._by_prefix.get(prefix, ())]
            end = qualname.rfind(".", 0, end)
        return found


def mentions_any(code: str, index: RuleIndex) -> bool:
    """Cheap pre-filter: a file that cannot match any rule needs no parse and no scope analysis."""
    return index.may_match(code)
