"""LabelEncoder: map each element through a key -> value table; unknown keys -> default.

    version 1: strings -> their index in classes_strings, or ints -> classes_strings[i]
    version 2: keys_{floats,int64s,strings} -> values_{floats,int64s,strings}; a NaN
               key matches NaN inputs; a repeated key: the first one wins (as onnxruntime)
    version 4: also keys_tensor / values_tensor / default_tensor (any listed type);
               a NaN key matches every NaN input; a repeated key: the last one wins
               (the spec's rule; onnxruntime 1.31 keeps the first)

https://onnx.ai/onnx/operators/onnx_aionnxml_LabelEncoder.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("LabelEncoder", 4, domain=ML_DOMAIN)
def label_encoder(X, *, default_float=-0.0, default_int64=-1, default_string="_Unused",
                  default_tensor=None, keys_floats=None, keys_int64s=None, keys_strings=None,
                  keys_tensor=None, values_floats=None, values_int64s=None, values_strings=None,
                  values_tensor=None):
    keys = _one_of("keys", keys_floats, keys_int64s, keys_strings, keys_tensor)
    values = _one_of("values", values_floats, values_int64s, values_strings, values_tensor)
    if keys.size != values.size:
        raise AttributeMismatchError(f"{keys.size} keys but {values.size} values")
    if default_tensor is not None:
        default = _text(np.asarray(default_tensor)).reshape(-1)[0]
    elif values.dtype == object:
        default = default_string
    elif values.dtype.kind == "f":
        default = default_float
    else:
        default = default_int64
    return _lookup(X, keys, values, default, last_wins=True)


@op("LabelEncoder", 2, domain=ML_DOMAIN)
def label_encoder_v2(X, *, default_float=-0.0, default_int64=-1, default_string="_Unused",
                     keys_floats=None, keys_int64s=None, keys_strings=None, values_floats=None,
                     values_int64s=None, values_strings=None):
    keys = _one_of("keys", keys_floats, keys_int64s, keys_strings, None)
    values = _one_of("values", values_floats, values_int64s, values_strings, None)
    if keys.size != values.size:
        raise AttributeMismatchError(f"{keys.size} keys but {values.size} values")
    default = {"O": default_string, "f": default_float}.get(values.dtype.kind, default_int64)
    return _lookup(X, keys, values, default, last_wins=False)


@op("LabelEncoder", 1, domain=ML_DOMAIN)
def label_encoder_v1(X, *, classes_strings=None, default_int64=-1, default_string="_Unused"):
    classes = np.array([] if classes_strings is None else list(classes_strings), dtype=object)
    indices = np.arange(classes.size, dtype=np.int64)
    if X.dtype == object:
        return _lookup(X, classes, indices, default_int64)
    return _lookup(X.astype(np.int64), indices, classes, default_string)


def _one_of(kind, floats, ints, strings, tensor) -> np.ndarray:
    given = [(n, v) for n, v in (("floats", floats), ("int64s", ints), ("strings", strings),
                                 ("tensor", tensor)) if v is not None]
    if len(given) != 1:
        names = ", ".join(f"{kind}_{n}" for n, _ in given) or "none"
        raise AttributeMismatchError(f"set exactly one {kind}_* attribute (got: {names})")
    name, v = given[0]
    if name == "floats":
        return np.asarray(v, dtype=np.float32)
    if name == "int64s":
        return np.asarray(v, dtype=np.int64)
    if name == "strings":
        return np.array(list(v), dtype=object)
    return _text(np.asarray(v)).reshape(-1)


def _text(a: np.ndarray) -> np.ndarray:
    """String tensors may hold bytes: decode them."""
    if a.dtype == object or a.dtype.kind in "SU":
        return np.array([x.decode() if isinstance(x, bytes) else str(x) for x in a.reshape(-1)],
                        dtype=object).reshape(a.shape)
    return a


def _lookup(X, keys, values, default, last_wins=False):
    out_dtype = values.dtype
    if not last_wins:  # keep the first occurrence of a repeated key
        keys, values = keys[::-1], values[::-1]
    if X.dtype == object:
        table = dict(zip(keys.tolist(), values.tolist()))  # the later of two equal keys wins
        flat = [table.get(x, default) for x in X.reshape(-1).tolist()]
        out = np.empty(len(flat), dtype=out_dtype)
        out[:] = flat
        return out.reshape(X.shape)
    keys = keys.astype(X.dtype) if keys.dtype != object else keys
    out = np.full(X.shape, default, dtype=out_dtype)
    nan_keys = np.isnan(keys) if keys.dtype.kind == "f" else np.zeros(keys.shape, bool)
    real = np.flatnonzero(~nan_keys)
    if real.size:
        # the later of two equal keys wins: unique (which keeps the first) on reversed order
        rev = real[::-1]
        uniq, first = np.unique(keys[rev], return_index=True)
        mapped = values[rev[first]]
        at = np.clip(np.searchsorted(uniq, X), 0, uniq.size - 1)
        hit = uniq[at] == X
        out[hit] = mapped[at[hit]]
    if nan_keys.any() and X.dtype.kind == "f":
        out[np.isnan(X)] = values[np.flatnonzero(nan_keys)[-1]]
    return out
