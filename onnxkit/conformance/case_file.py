"""The built node cases in a file, so that a process need not build them again.

``collect_testcases()`` spends seconds of numpy building onnx's node cases (3-D pooling's
expected outputs); every process that collects ``spec_tests`` paid it. ``write`` keeps
them in a file per onnx, numpy and Python version (``path()``) and ``read`` brings them
back. No pickle: the file is a stream of length-prefixed records, a JSON header per case
(name, tolerances, which values are tensors, numpy scalars, sequences or None), the
model's protobuf and one ``TensorProto`` per value, parsed by onnx and read by
``numpy_helper.to_array``. A file that cannot be read is ignored and built again.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

MAGIC = b"onnxkit node cases 1\n"
_LENGTH = struct.Struct("<Q")


def path() -> str:
    """``$ONNXKIT_CACHE_DIR/conformance/...`` (default ``~/.cache/onnxkit``), named by the
    onnx, numpy and Python versions."""
    root = os.environ.get("ONNXKIT_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "onnxkit")
    name = (f"node-cases-onnx{onnx.__version__}-numpy{np.__version__}"
            f"-py{sys.version_info[0]}.{sys.version_info[1]}.bin")
    return os.path.join(root, "conformance", name)


def _layout(value, tensors: list) -> object:
    """How ``value`` is stored ("t" tensor, "s" numpy scalar, "n" None, ["l", layouts]),
    its tensors appended to ``tensors``."""
    if value is None:
        return "n"
    if isinstance(value, list):
        return ["l", [_layout(v, tensors) for v in value]]
    tensors.append(numpy_helper.from_array(np.asarray(value)).SerializeToString())
    return "s" if isinstance(value, np.generic) else "t"


def _value(layout, tensors) -> object:
    if layout == "n":
        return None
    if isinstance(layout, list) and layout[0] == "l":
        return [_value(item, tensors) for item in layout[1]]
    proto = onnx.TensorProto()
    proto.ParseFromString(next(tensors))
    array = numpy_helper.to_array(proto)
    return array[()] if layout == "s" else array


def _record(fh, data: bytes) -> None:
    fh.write(_LENGTH.pack(len(data)))
    fh.write(data)


def write(cases, where: str) -> None:
    """Write ``cases`` (node cases: model and data in memory) whole, then rename: a
    process reading at the same time sees all of them or none. Nothing is written where
    nothing can be (a read-only home): each process then builds."""
    tmp = None
    try:
        os.makedirs(os.path.dirname(where), exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=os.path.dirname(where), delete=False) as fh:
            tmp = fh.name
            fh.write(MAGIC)
            _record(fh, str(len(cases)).encode())
            for case in cases:
                tensors: list[bytes] = []
                sets = [[[_layout(v, tensors) for v in part] for part in data_set]
                        for data_set in case.data_sets]
                head = {"name": case.name, "rtol": case.rtol, "atol": case.atol, "sets": sets,
                        "tensors": len(tensors)}
                _record(fh, json.dumps(head).encode())
                _record(fh, case.model.SerializeToString())
                for tensor in tensors:
                    _record(fh, tensor)
        os.replace(tmp, where)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def read(where: str, make_case) -> tuple | None:
    """The cases in the file at ``where`` (``make_case(name, rtol, atol, model, data)``
    makes each), or None when there is no such file or it cannot be read whole."""
    try:
        with open(where, "rb") as fh:
            blob = fh.read()
    except OSError:
        return None
    try:
        if not blob.startswith(MAGIC):
            return None
        view, at = memoryview(blob), len(MAGIC)

        def record() -> bytes:
            nonlocal at
            (n,) = _LENGTH.unpack_from(view, at)
            at += _LENGTH.size
            if at + n > len(view):
                raise ValueError("the file ends inside a record")
            at += n
            return bytes(view[at - n:at])

        cases = []
        for _ in range(int(record())):
            head = json.loads(record())
            model = onnx.ModelProto()
            model.ParseFromString(record())
            tensors = iter([record() for _ in range(int(head["tensors"]))])
            data = [tuple([_value(v, tensors) for v in part] for part in data_set)
                    for data_set in head["sets"]]
            cases.append(make_case(head["name"], float(head["rtol"]), float(head["atol"]),
                                   model, data))
        if at != len(view):
            return None
        return tuple(cases)
    except Exception:  # noqa: BLE001 - any damage (truncated, foreign, old): build again
        return None
