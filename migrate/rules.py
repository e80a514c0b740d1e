"""The rule model: one YAML file per rule under ``rules/<area>/<ID>-<slug>.yaml``.

Rules are data. A rule names the TensorFlow API(s) it matches by fully-qualified
name, the operation from :mod:`migrate.ops` that rewrites a match, that
operation's parameters, the imports the rewritten code needs, a markdown note on
what behaves differently in MindSpore, links, and examples that double as tests.

The schema is checked when rules load; a bad file raises :class:`RuleError`
naming the file, the field and the problem.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from migrate.safe_io import read_source

ID_PATTERN = re.compile(r"^[A-Z]{2,5}\d{3}$")
SLUG_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
QUALNAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\.\*)?$")
# The end of an attribute chain on any receiver: `.shape.as_list()`, `.get_shape().ndims`.
TAIL_PATTERN = re.compile(r"^(\.[A-Za-z_][A-Za-z0-9_]*(\(\))?)+$")
IMPORT_PATTERN = re.compile(
    r"^(?:import (?P<module>[\w.]+)(?: as (?P<asname>\w+))?"
    r"|from (?P<from>[\w.]+) import (?P<obj>\w+)(?: as (?P<objas>\w+))?)$"
)
STATUSES = ("converted", "runtime", "manual", "info")
# libyaml's loader when PyYAML was built with it: every CLI start reads every rule.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RuleError(ValueError):
    """A rule file that does not follow the schema."""

    def __init__(self, path: Path | str, field_name: str, problem: str) -> None:
        self.path, self.field, self.problem = str(path), field_name, problem
        super().__init__(f"{path}: field '{field_name}': {problem}")


@dataclass(frozen=True)
class Import:
    """One import a rewritten node needs, as given to libcst's AddImportsVisitor."""

    module: str
    obj: str | None = None
    asname: str | None = None

    @classmethod
    def parse(cls, text: str) -> "Import":
        m = IMPORT_PATTERN.match(text.strip())
        if not m:
            raise ValueError(f"not an import statement: {text!r}")
        if m["module"]:
            return cls(m["module"], None, m["asname"])
        return cls(m["from"], m["obj"], m["objas"])

    def __str__(self) -> str:
        if self.obj is None:
            return f"import {self.module}" + (f" as {self.asname}" if self.asname else "")
        return f"from {self.module} import {self.obj}" + (f" as {self.asname}" if self.asname else "")


@dataclass(frozen=True)
class Example:
    before: str
    after: str | None  # None: the input must come out unchanged


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    summary: str
    area: str
    match: tuple[str, ...]
    operation: str
    params: dict[str, Any]
    imports: tuple[Import, ...]
    difference: str
    maps_to: str
    status: str
    links: tuple[str, ...]
    examples: tuple[Example, ...]
    returns: str | None = None
    path: str = ""
    match_strings: tuple[str, ...] = field(default=())
    # Attribute chains matched at the end of any expression (`x.shape.as_list()`): what TF's
    # tensors answer and MindSpore's do not, whatever made the tensor (see migrate.ops.tails).
    match_tails: tuple[str, ...] = field(default=())
    # fact -> the matched names it holds of (``keras_model: [tensorflow.keras.Sequential]``)
    facts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The rule file's own bytes, hashed with its place (area/name): what the result cache keys on.
    digest: str = field(default="", compare=False, repr=False)

    @property
    def prefix_matches(self) -> tuple[str, ...]:
        return tuple(m[:-2] for m in self.match if m.endswith(".*"))

    @property
    def exact_matches(self) -> tuple[str, ...]:
        return tuple(m for m in self.match if not m.endswith(".*"))


_FIELDS: dict[str, tuple[type | tuple[type, ...], bool]] = {
    # name: (type, required)
    "id": (str, True),
    "name": (str, True),
    "summary": (str, True),
    "match": (list, False),
    "match_strings": (list, False),
    "match_tails": (list, False),
    "operation": (str, True),
    "params": (dict, False),
    "imports": (list, False),
    "difference": (str, True),
    "maps_to": (str, True),
    "status": (str, True),
    "links": (list, False),
    "examples": (list, True),
    "returns": (str, False),
    "facts": (dict, False),
}
# What a rule may declare the APIs it matches to be, for the conversions that depend on the code
# around them (see migrate.engine.facts).
FACTS = ("keras_model", "gradient_tape")


def _check_str_list(path: Path, key: str, value: list, pattern: re.Pattern | None = None) -> tuple[str, ...]:
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise RuleError(path, f"{key}[{i}]", "must be a non-empty string")
        if pattern is not None and not pattern.match(item):
            raise RuleError(path, f"{key}[{i}]", f"{item!r} is not a dotted name (optionally ending in '.*')")
    return tuple(value)


def parse_rule(data: Any, path: Path, area: str) -> Rule:
    """Validate one rule's parsed YAML and build the :class:`Rule`."""
    from migrate import ops  # ops validate their own parameters

    if not isinstance(data, dict):
        raise RuleError(path, "<file>", "must be a mapping of fields")
    for key in data:
        if key not in _FIELDS:
            raise RuleError(path, key, f"unknown field (allowed: {', '.join(_FIELDS)})")
    for key, (typ, required) in _FIELDS.items():
        if key not in data:
            if required:
                raise RuleError(path, key, "is required")
            continue
        if not isinstance(data[key], typ):
            raise RuleError(path, key, f"must be a {typ.__name__}, not {type(data[key]).__name__}")

    rule_id = data["id"]
    if not ID_PATTERN.match(rule_id):
        raise RuleError(path, "id", f"{rule_id!r} must look like 'TFD101' (2-5 capitals, 3 digits)")
    if not SLUG_PATTERN.match(data["name"]):
        raise RuleError(path, "name", f"{data['name']!r} must be a lowercase slug like 'unwrap-scope'")
    expected_stem = f"{rule_id}-{data['name']}"
    if path.stem != expected_stem:
        raise RuleError(path, "name", f"file must be named {expected_stem}{path.suffix}")
    if "\n" in data["summary"].strip():
        raise RuleError(path, "summary", "must be one line")
    match = _check_str_list(path, "match", data.get("match", []), QUALNAME_PATTERN)
    match_strings = _check_str_list(path, "match_strings", data.get("match_strings", []))
    match_tails = tuple(data.get("match_tails", []))
    for i, tail in enumerate(match_tails):
        if not isinstance(tail, str) or not TAIL_PATTERN.match(tail) or (len(tail.split(".")) < 3 and not tail.endswith("()")):
            raise RuleError(path, f"match_tails[{i}]", f"{tail!r} must be an attribute chain of two names or more, "
                                                       "each maybe called without arguments ('.shape.as_list()'), "
                                                       "or one name called ('.get_shape()')")
    if not match and not match_strings and not match_tails:
        raise RuleError(path, "match", "a rule must match at least one API (match), literal (match_strings) or "
                                       "attribute chain (match_tails)")
    if data["status"] not in STATUSES:
        raise RuleError(path, "status", f"must be one of {', '.join(STATUSES)}")

    op = ops.REGISTRY.get(data["operation"])
    if op is None:
        raise RuleError(path, "operation", f"unknown operation {data['operation']!r} (known: {', '.join(sorted(ops.REGISTRY))})")
    if getattr(op, "tails", False) != bool(match_tails) or (match_tails and (match or match_strings)):
        raise RuleError(path, "match_tails", "attribute chains (match_tails) go with a tail operation "
                                             "(tail_template, tail_call_template), alone, and only there")
    if match_tails and any(t.endswith("()") != (op.target == "call") for t in match_tails):
        raise RuleError(path, "match_tails", f"{op.name} takes chains that end "
                                             f"{'in a call' if op.target == 'call' else 'in a name'}, every one")
    params = data.get("params", {}) or {}
    try:
        op.validate_params(params)
    except Exception as exc:  # noqa: BLE001 - an op's check may fail any way (e.g. a template that does not parse)
        problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RuleError(path, "params", problem) from None

    imports = []
    for i, text in enumerate(data.get("imports", [])):
        try:
            imports.append(Import.parse(text))
        except (ValueError, AttributeError, TypeError):
            raise RuleError(path, f"imports[{i}]", f"{text!r} must be 'import a.b [as c]' or 'from a.b import c [as d]'") from None

    links = _check_str_list(path, "links", data.get("links", []))
    facts = {}
    for fact, names in (data.get("facts") or {}).items():
        if fact not in FACTS:
            raise RuleError(path, "facts", f"{fact!r} is not a fact (known: {', '.join(FACTS)})")
        if not isinstance(names, list):
            raise RuleError(path, f"facts.{fact}", "must be a list of the rule's matched names")
        facts[fact] = _check_str_list(path, f"facts.{fact}", names, QUALNAME_PATTERN)
        prefixes = tuple(m[:-1] for m in match if m.endswith(".*"))  # `a.b.*` -> `a.b.`
        stray = [n for n in facts[fact] if n not in match and not n.startswith(prefixes)]
        if stray:
            raise RuleError(path, f"facts.{fact}", f"{stray[0]!r} is not one of the names the rule matches")
    examples = []
    for i, ex in enumerate(data["examples"]):
        where = f"examples[{i}]"
        if not isinstance(ex, dict):
            raise RuleError(path, where, "must be a mapping with 'before' and 'after', or 'unchanged'")
        if set(ex) == {"unchanged"} and isinstance(ex["unchanged"], str):
            examples.append(Example(ex["unchanged"], None))
        elif set(ex) == {"before", "after"} and all(isinstance(ex[k], str) for k in ex):
            examples.append(Example(ex["before"], ex["after"]))
        else:
            raise RuleError(path, where, "must have string 'before' and 'after', or only 'unchanged'")
    if not any(ex.after is not None for ex in examples):
        raise RuleError(path, "examples", "needs at least one before/after pair")

    return Rule(
        id=rule_id,
        name=data["name"],
        summary=data["summary"].strip(),
        area=area,
        match=match,
        operation=data["operation"],
        params=params,
        imports=tuple(imports),
        difference=data["difference"].strip(),
        maps_to=data["maps_to"].strip(),
        status=data["status"],
        links=links,
        examples=tuple(examples),
        returns=data.get("returns"),
        path=str(path),
        match_strings=match_strings,
        match_tails=match_tails,
        facts=facts,
    )


def default_rules_dir() -> Path:
    """``rules/`` of a source checkout, or the copy packaged inside an installed wheel."""
    packaged = Path(__file__).parent / "_rules"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "rules"


def rule_files(directory: Path) -> list[Path]:
    """The YAML files under ``directory``, sorted: what :func:`load_rules_from` reads (or rejects)."""
    return sorted(p for p in Path(directory).rglob("*") if p.suffix in (".yaml", ".yml"))


def rule_directories(extra_dirs: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The bundled rules' directory, then the extra ones from configuration."""
    return (str(default_rules_dir()), *extra_dirs)


# A rule file is a page of YAML. These bound what one may cost to load: its bytes, and the
# nodes its aliases expand to (nine levels of ten aliases each, 894 bytes, expand to a
# billion strings: "billion laughs").
MAX_RULE_BYTES = 1_000_000
MAX_RULE_NODES = 100_000


def _check_aliases(text: str, path: Path) -> None:
    """Refuse a file whose YAML aliases would expand past :data:`MAX_RULE_NODES` nodes, counting
    from the parser's events (nothing is built): each alias counts as the size of its anchor."""
    if "&" not in text or "*" not in text:
        return  # no anchor or no alias: nothing expands
    sizes: dict[str, int] = {}
    stack: list[list] = [[None, 0]]  # open collections: [anchor, nodes so far]
    for event in yaml.parse(text, Loader=_YAML_LOADER):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append([event.anchor, 1])
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor, size = None, sizes.get(event.anchor, 1)
        else:
            continue
        if anchor is not None:
            sizes[anchor] = size
        stack[-1][1] += size
        if stack[-1][1] > MAX_RULE_NODES or size > MAX_RULE_NODES:
            raise RuleError(path, "<file>", f"expands to more than {MAX_RULE_NODES:,} YAML nodes through its aliases "
                                            "(*name); write the repeated parts out, or use fewer aliases")


def load_rules_from(directory: Path) -> list[Rule]:
    """Every rule under ``directory/<area>/<ID>-<slug>.yaml``; a file anywhere else is an error."""
    directory = Path(directory)
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for path in (p for p in rule_files(directory) if p.is_file()):
        depth = len(path.relative_to(directory).parts)
        if depth != 2:
            raise RuleError(path, "<file>", f"rule files live one level down, in {directory}/<area>/<ID>-<slug>.yaml")
        if path.suffix != ".yaml":
            raise RuleError(path, "<file>", "rule files are named <ID>-<slug>.yaml (not .yml)")
        try:
            raw = read_source(str(path))
        except OSError as exc:
            raise RuleError(path, "<file>", f"cannot be read: {exc.strerror or exc}") from None
        if len(raw) > MAX_RULE_BYTES:
            raise RuleError(path, "<file>", f"is {len(raw):,} bytes; a rule file may hold at most {MAX_RULE_BYTES:,}")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RuleError(path, "<file>", f"cannot be read: not UTF-8 text (byte {exc.start})") from None
        try:
            _check_aliases(text, path)
            data = yaml.load(text, Loader=_YAML_LOADER)
        except yaml.YAMLError as exc:
            raise RuleError(path, "<file>", f"is not valid YAML: {exc}") from None
        rule = parse_rule(data, path, path.parent.name)
        rule = replace(rule, digest=hashlib.sha256(f"{path.parent.name}/{path.name}\0".encode() + raw).hexdigest())
        if rule.id in seen:
            raise RuleError(path, "id", f"{rule.id} is also used by {seen[rule.id]}")
        seen[rule.id] = str(path)
        rules.append(rule)
    if not rules:
        raise RuleError(directory, "<dir>", "holds no rules (expected <dir>/<area>/<ID>-<slug>.yaml)")
    return rules


@functools.cache
def _load_cached(directories: tuple[str, ...]) -> tuple[Rule, ...]:
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for d in directories:
        for rule in load_rules_from(Path(d)):
            if rule.id in seen:
                raise RuleError(rule.path, "id", f"{rule.id} is also defined in {seen[rule.id]}")
            seen[rule.id] = rule.path
            rules.append(rule)
    return tuple(rules)


def load_rules(extra_dirs: tuple[str, ...] = ()) -> tuple[Rule, ...]:
    """All rules: the bundled set plus any extra directories from configuration."""
    return _load_cached(rule_directories(extra_dirs))


def select_rules(rules: tuple[Rule, ...], select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> tuple[Rule, ...]:
    """Filter by id or id prefix, as ruff's --select/--ignore do (``TFD`` selects every TFD rule)."""
    return tuple(r for r in rules if selected(r.id, select, ignore))


def selected(rule_id: str, select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> bool:
    return (not select or rule_id.startswith(tuple(select))) and not rule_id.startswith(tuple(ignore))
