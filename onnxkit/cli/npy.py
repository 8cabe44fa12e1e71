"""Read a ``.npy`` file given on the command line, bounded by what its header declares.

    array = read_npy("x.npy", "--input x", max_bytes=limits.max_tensor_bytes)

The file must be a regular file; its header is parsed by ``numpy.lib.format`` (format 1.0
or 2.0, the header itself at most 10,000 bytes), and the data size it declares must equal
what the file holds after the header and fit ``max_bytes``, all before a byte of data is
allocated. Arrays of Python objects are refused: they are pickles, and onnxkit never
unpickles a file. Structured dtypes are refused too (no ONNX type holds them).
"""

from __future__ import annotations

import math
import os

import numpy as np
from numpy.lib import format as npy_format

from onnxkit.cli.common import ArgumentError, open_regular

_READERS = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}


def read_npy(path: str, what: str, max_bytes: int) -> np.ndarray:
    with open_regular(path, what) as f:
        size = os.fstat(f.fileno()).st_size
        shape, fortran, dtype = _header(f, what)
        count = math.prod(shape)
        declared = count * dtype.itemsize
        held = size - f.tell()
        if declared > max_bytes:
            raise ArgumentError(f"{what}: the header declares shape {list(shape)} of {dtype} "
                                f"({declared:,} bytes), more than the {max_bytes:,}-byte limit "
                                f"of one tensor")
        if declared != held:
            raise ArgumentError(f"{what}: the header declares shape {list(shape)} of {dtype} "
                                f"({declared:,} bytes) but the file holds {held:,} bytes of data: "
                                f"truncated or not written by numpy.save")
        buffer = bytearray(declared)
        if f.readinto(buffer) != declared:
            raise ArgumentError(f"{what}: the file ended early (it changed while being read?)")
    array = np.frombuffer(buffer, dtype=dtype, count=count)
    array = array.reshape(shape, order="F" if fortran else "C")
    if not dtype.isnative:
        array = array.astype(dtype.newbyteorder("="))
    return array


def _header(f, what: str):
    try:
        version = npy_format.read_magic(f)
    except (ValueError, EOFError, OSError) as exc:
        raise ArgumentError(f"{what}: not a .npy file ({exc})") from None
    reader = _READERS.get(version)
    if reader is None:
        raise ArgumentError(f"{what}: .npy format version {version[0]}.{version[1]} is not "
                            f"supported (1.0 and 2.0 are)")
    try:
        shape, fortran, dtype = reader(f)
    except Exception as exc:  # noqa: BLE001 - any malformed header: numpy raises many kinds
        raise ArgumentError(f"{what}: the .npy header is malformed "
                            f"({type(exc).__name__}: {str(exc)[:200]})") from None
    if dtype.hasobject:
        raise ArgumentError(f"{what}: the array holds Python objects, stored as a pickle; "
                            f"onnxkit never unpickles a file (save strings as a fixed-width "
                            f"str array, e.g. np.array(['a', 'b']))")
    if dtype.fields is not None or dtype.subdtype is not None or dtype.kind == "V" \
            or dtype.itemsize == 0:
        raise ArgumentError(f"{what}: the array's dtype {dtype} (structured, raw bytes or "
                            f"zero-width) is one no ONNX tensor type holds")
    if not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ArgumentError(f"{what}: the .npy header declares an invalid shape {shape!r}")
    return shape, fortran, dtype
