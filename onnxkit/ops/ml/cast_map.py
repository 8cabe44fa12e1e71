"""CastMap: a map int64 -> (string | float) becomes a [1, n] tensor, ordered by key.

    DENSE:  Y = [cast(X[k]) for k in sorted keys]
    SPARSE: Y[0, k] = cast(X[k]) for k < max_map, missing keys padded (0, or "0.f" as
            onnxruntime writes for strings)
    cast_to: TO_FLOAT, TO_STRING ("%f" for floats), TO_INT64 (truncating)

https://onnx.ai/onnx/operators/onnx_aionnxml_CastMap.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError, InputError
from onnxkit.ops.registry import ML_DOMAIN, op
from onnxkit.core.limits import check_allocation

_TARGETS = {"TO_FLOAT": np.float32, "TO_STRING": object, "TO_INT64": np.int64}


@op("CastMap", 1, domain=ML_DOMAIN)
def cast_map(X, *, cast_to="TO_FLOAT", map_form="DENSE", max_map=1):
    if cast_to not in _TARGETS:
        raise AttributeMismatchError(f"cast_to={cast_to!r} is not one of {', '.join(_TARGETS)}")
    if not isinstance(X, dict):
        raise InputError("CastMap takes a map (dict) from int64 keys")
    keys = sorted(X)
    if map_form == "DENSE":
        values = [_cast(X[k], cast_to) for k in keys]
    elif map_form == "SPARSE":
        if keys and keys[0] < 0:
            raise InputError(f"CastMap SPARSE: negative key {keys[0]}")
        check_allocation((max_map,), np.float64, "CastMap output")
        pad = "0.f" if cast_to == "TO_STRING" else 0
        values = [_cast(X[k], cast_to) if k in X else pad for k in range(max_map)]
    else:
        raise AttributeMismatchError(f"map_form={map_form!r} is not DENSE or SPARSE")
    out = np.empty((1, len(values)), dtype=_TARGETS[cast_to])
    out[0, :] = values
    return out


def _cast(value, cast_to):
    if cast_to == "TO_STRING":
        return value if isinstance(value, str) else f"{float(value):f}"
    number = float(value)
    return np.float32(number) if cast_to == "TO_FLOAT" else int(number)
