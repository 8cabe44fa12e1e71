"""Convert a model to another ``ai.onnx`` opset with onnx's version converter.

    convert(model, target_opset):
        1. onnx.version_converter.convert_version(model, target_opset)
           (each operator is carried version by version through onnx's "adapters":
            ReduceSum-11 -> 13 turns the ``axes`` attribute into a Constant input)
        2. the IR version raised to the lowest one the new opset allows, when it was below
           (the converter leaves ir_version as it was)
        3. onnx.checker.check_model on the result
        any failure -> VersionConversionError naming the opsets, the operators whose
        version differs between them, and what onnx said
"""

from __future__ import annotations

import re

import onnx
import onnx.version_converter

from onnxkit.errors import OnnxkitError
from onnxkit.loading import ModelLike, load
from onnxkit.ops.registry import normalize_domain, schema_since_version
from onnxkit.versioning.history import since_versions
from onnxkit.versioning.ir import min_ir_version
from onnxkit.versioning.resolve import iter_nodes

_NO_ADAPTER = re.compile(r"No Adapter (To|From) Version \$(\d+) for (\w+)")
_NO_PREVIOUS = re.compile(r"No Previous Version of (\w+) exists")


class VersionConversionError(OnnxkitError):
    """onnx's version converter could not carry the model to the requested opset."""


def changed_operators(model: ModelLike, target_opset: int) -> list[tuple[str, int | None, int | None]]:
    """``(op_type, version now, version at target)`` for each ai.onnx operator of the model
    whose version differs between its opset and ``target_opset`` (None: not defined there)."""
    proto = load(model)
    current = _default_opset(proto)
    rows, seen = [], set()
    for _, node in iter_nodes(proto.graph):
        if normalize_domain(node.domain) != "" or node.op_type in seen:
            continue
        seen.add(node.op_type)
        now = schema_since_version("", node.op_type, current)
        then = schema_since_version("", node.op_type, target_opset)
        if now != then:
            rows.append((node.op_type, now, then))
    return rows


def convert(model: ModelLike, target_opset: int, *, check: bool = True,
            raise_ir_version: bool = True) -> onnx.ModelProto:
    """The model rewritten for ``ai.onnx`` opset ``target_opset`` (the input is not modified).

    ``raise_ir_version``: give the result at least the IR version its opsets need.
    """
    proto = load(model)
    current = _default_opset(proto)
    latest = onnx.defs.onnx_opset_version()
    if not 1 <= target_opset <= latest:
        raise VersionConversionError(
            f"cannot convert to opset {target_opset}: onnx {onnx.__version__} knows ai.onnx "
            f"opsets 1 to {latest}")
    if target_opset == current:
        out = onnx.ModelProto()
        out.CopyFrom(proto)
        return out
    try:
        out = onnx.version_converter.convert_version(proto, target_opset)
    except Exception as exc:  # the converter reports failures as RuntimeError / ConvertError
        raise VersionConversionError(_explain(proto, current, target_opset, str(exc))) from exc
    if raise_ir_version:
        needed = min_ir_version({normalize_domain(o.domain): int(o.version) for o in out.opset_import})
        out.ir_version = max(out.ir_version, needed)
    if check:
        try:
            onnx.checker.check_model(out)
        except onnx.checker.ValidationError as exc:
            raise VersionConversionError(
                f"converting from opset {current} to {target_opset} gave a model that "
                f"onnx.checker rejects: {_first_line(str(exc))}") from exc
    return out


def _default_opset(proto: onnx.ModelProto) -> int:
    for o in proto.opset_import:
        if normalize_domain(o.domain) == "":
            return int(o.version)
    raise VersionConversionError("the model imports no ai.onnx opset: there is nothing to convert")


def _explain(proto, current: int, target: int, message: str) -> str:
    text = f"cannot convert the model from opset {current} to opset {target}"
    m, gone = _NO_ADAPTER.search(message), _NO_PREVIOUS.search(message)
    if m is not None:
        direction, version, op_type = m.groups()
        text += (f": onnx's version converter has no adapter for {op_type} on the step "
                 f"{'to' if direction == 'To' else 'from'} opset {version}")
    elif gone is not None:
        op_type = gone.group(1)
        first = since_versions(op_type)[0]
        text += f": {op_type} does not exist before opset {first}"
    changed = changed_operators(proto, target)
    if changed:
        shown = ", ".join(f"{op} {_v(a)} -> {_v(b)}" for op, a, b in changed)
        text += f". Operators whose version differs between the two opsets: {shown}"
    return f"{text}. (onnx: {_first_line(message)})"


def _v(version: int | None) -> str:
    return "absent" if version is None else str(version)


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message
