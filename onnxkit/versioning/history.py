"""The history of one operator, from onnx's own schemas: what changed at each version.

    versions("ReduceSum") -> [OperatorVersion(since_version=1, ...), ..., (13, ...)]
        for each schema of the operator in ``onnx.defs.get_all_schemas_with_history()``,
        oldest first: its inputs, outputs, attributes (with defaults) and type constraints,
        and ``changes``: how it differs from the version before it
            attribute 'axes' became input 'axes'        (an attribute removed, an input added)
            input 'B' added / removed / became optional
            attribute 'allowzero' added (default 0) / removed / default 1 -> -1
            T: + bfloat16, - uint8                       (allowed types)

A version whose signature did not change changed its meaning or its documentation: read
the spec page (https://onnx.ai/onnx/operators/) for the details.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import onnx
from onnx import helper

from onnxkit.errors import quoted, shown
from onnxkit.ops.registry import normalize_domain

REQUIRED = "required"
_OPTION = {0: "", 1: "optional", 2: "variadic"}


@dataclass(frozen=True)
class OperatorVersion:
    """One version (``since_version``) of an operator's definition."""

    op_type: str
    domain: str
    since_version: int
    inputs: tuple[str, ...]                  # "X", "B (optional)", "inputs (variadic)"
    outputs: tuple[str, ...]
    attributes: dict = field(hash=False)     # name -> default value, or REQUIRED, or None
    types: dict = field(hash=False)          # type parameter -> tuple of allowed types
    deprecated: bool = False
    changes: tuple[str, ...] = ()

    @property
    def input_names(self) -> list[str]:
        return [i.split(" ")[0] for i in self.inputs]

    def signature(self) -> str:
        attrs = ", ".join(f"{k}={v!r}" if v not in (None, REQUIRED) else
                          (k if v is None else f"{k} (required)") for k, v in self.attributes.items())
        text = f"{self.op_type}-{self.since_version}({', '.join(self.inputs)})"
        return f"{text} -> ({', '.join(self.outputs)})" + (f" <{attrs}>" if attrs else "")


@lru_cache(maxsize=None)
def operator_schemas() -> dict[tuple[str, str], list]:
    table: dict[tuple[str, str], list] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        table.setdefault((schema.domain, schema.name), []).append(schema)
    for schemas in table.values():
        schemas.sort(key=lambda s: s.since_version)
    return table


def since_versions(op_type: str, domain: str = "") -> list[int]:
    """Every ``since_version`` onnx defines for the operator, oldest first."""
    return [s.since_version for s in operator_schemas().get((normalize_domain(domain), op_type), [])]


def versions(op_type: str, domain: str = "") -> list[OperatorVersion]:
    """The operator's versions, oldest first, each with what changed since the one before."""
    schemas = operator_schemas().get((normalize_domain(domain), op_type))
    if not schemas:
        raise KeyError(f"onnx defines no operator {quoted(op_type)} in domain "
                       f"{quoted(normalize_domain(domain) or 'ai.onnx')}")
    out: list[OperatorVersion] = []
    for schema in schemas:
        current = _describe(schema)
        changes = ("first version",) if not out else tuple(diff(out[-1], current))
        out.append(OperatorVersion(**{**current.__dict__, "changes": changes}))
    return out


def version_at(op_type: str, opset: int, domain: str = "") -> OperatorVersion:
    """The version a model importing ``opset`` means: the newest with since_version <= opset."""
    fitting = [v for v in versions(op_type, domain) if v.since_version <= opset]
    if not fitting:
        first = since_versions(op_type, domain)[0]
        raise KeyError(f"{shown(op_type)} does not exist at opset {opset}: it appears in opset {first}")
    return fitting[-1]


def _describe(schema) -> OperatorVersion:
    inputs = tuple(_param(p) for p in schema.inputs)
    outputs = tuple(_param(p) for p in schema.outputs)
    attributes = {name: _default(a) for name, a in sorted(schema.attributes.items())}
    types = {tc.type_param_str: tuple(_short_type(t) for t in tc.allowed_type_strs)
             for tc in schema.type_constraints}
    return OperatorVersion(schema.name, schema.domain, schema.since_version, inputs, outputs,
                           attributes, types, bool(schema.deprecated))


def _param(p) -> str:
    option = _OPTION.get(int(p.option.value), "")
    name = p.name.rstrip(".")  # some early schemas spell variadic outputs "outputs..."
    return f"{name} ({option})" if option else name


def _default(attr):
    if attr.required:
        return REQUIRED
    proto = attr.default_value
    if proto.type == onnx.AttributeProto.UNDEFINED:
        return None
    value = helper.get_attribute_value(proto)
    return value.decode() if isinstance(value, bytes) else value


def _short_type(t: str) -> str:
    """``tensor(float)`` -> ``float``; sequences and maps keep their spelling."""
    return t[len("tensor("):-1] if t.startswith("tensor(") and t.count("(") == 1 else t


def diff(old: OperatorVersion, new: OperatorVersion) -> list[str]:
    """What changed from ``old`` to ``new``, one sentence each (empty: only the meaning)."""
    changes: list[str] = []
    old_in = dict(zip(old.input_names, old.inputs))
    new_in = dict(zip(new.input_names, new.inputs))
    moved = [n for n in new_in if n not in old_in and n in old.attributes and n not in new.attributes]
    for name in moved:
        changes.append(f"attribute '{name}' became input '{name}'")
    for name in new_in:
        if name not in old_in and name not in moved:
            changes.append(f"input '{new_in[name]}' added")
        elif name in old_in and old_in[name] != new_in[name]:
            changes.append(f"input '{old_in[name]}' is now '{new_in[name]}'")
    changes += [f"input '{name}' removed" for name in old_in if name not in new_in]
    old_out, new_out = set(old.outputs), set(new.outputs)
    changes += [f"output '{o}' added" for o in new.outputs if o not in old_out]
    changes += [f"output '{o}' removed" for o in old.outputs if o not in new_out]
    for name, default in new.attributes.items():
        if name not in old.attributes:
            changes.append(f"attribute '{name}' added" + _default_text(default))
        elif old.attributes[name] != default:
            changes.append(_default_change(name, old.attributes[name], default))
    changes += [f"attribute '{name}' removed" for name in old.attributes
                if name not in new.attributes and name not in moved]
    for param, allowed in new.types.items():
        before = old.types.get(param)
        if before is None:
            changes.append(f"type parameter {param} added")
            continue
        added = [t for t in allowed if t not in before]
        dropped = [t for t in before if t not in allowed]
        if added or dropped:
            changes.append(f"{param}: " + ", ".join([f"+ {t}" for t in added] + [f"- {t}" for t in dropped]))
    if new.deprecated and not old.deprecated:
        changes.append("deprecated")
    return changes


def _default_text(default) -> str:
    if default == REQUIRED:
        return " (required)"
    return "" if default is None else f" (default {default!r})"


def _default_change(name: str, before, after) -> str:
    if before is None:
        return f"attribute '{name}' now has a default: {after!r}"
    if after is None:
        return f"attribute '{name}' no longer has a default (was {before!r})"
    if REQUIRED in (before, after):
        return f"attribute '{name}' is now {'required' if after == REQUIRED else f'optional (default {after!r})'}"
    return f"attribute '{name}' default {before!r} -> {after!r}"


def format_history(op_type: str, domain: str = "", *, max_types: int = 6) -> str:
    """The operator's versions as text, one line per change.

    Long runs of added types are cut to ``max_types`` names.
    """
    lines = []
    for v in versions(op_type, domain):
        changes = [_cut(c, max_types) for c in v.changes] or [
            "same signature: the meaning or the documentation changed (see the spec)"]
        lines.append(f"{op_type}-{v.since_version}:".ljust(len(op_type) + 5) + changes[0])
        lines.extend(" " * (len(op_type) + 5) + c for c in changes[1:])
    return "\n".join(lines)


def _cut(change: str, max_types: int) -> str:
    head, sep, rest = change.partition(": ")
    items = rest.split(", ")
    if sep and len(head) <= 3 and len(items) > max_types:
        return f"{head}: {', '.join(items[:max_types])}, ... ({len(items)} type changes)"
    return change
