"""Save a run's outputs in a folder: one file per output under a safe, unique name, and a
manifest, ``outputs.json``, that maps each output name to its file.

    {"model": "demo.onnx",
     "outputs": [{"name": "y",   "file": "y.npy",            "kind": "tensor", "dtype": "float32", "shape": [1, 3]},
                 {"name": "a/b", "file": "a_b-3ec69c85.npy", "kind": "tensor", ...}]}

A file name keeps only ``A-Z a-z 0-9 . _ -`` of the output name (no path separator, NUL or
leading dot, so no ``..``) and at most 100 of them; a name that had to change, or that
names a Windows device, gets the first 8 hex digits of its SHA-1, so ``a/b`` and ``a_b``
never share a file; names equal but for case are numbered (``-2``) for case-insensitive
file systems. Tensors are ``.npy`` (string tensors as fixed-width ``str``, never pickled),
sequences and maps ``.npz`` (``0``, ``1``, ... / ``keys``, ``values``), an empty optional no
file. Files already there are never replaced unless asked (``overwrite=True``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re

import numpy as np

from onnxkit.cli.common import ArgumentError, file_kind, short

MANIFEST = "outputs.json"
MAX_STEM = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_DEVICES = {"CON", "PRN", "AUX", "NUL"} | {f"{p}{i}" for p in ("COM", "LPT") for i in range(10)}


def file_stem(name: str) -> str:
    """A file name stem for the output ``name``: safe characters only, short, and unique
    to ``name`` whenever it is not ``name`` itself."""
    stem = _UNSAFE.sub("_", name).lstrip(".") or "output"
    if stem != name or len(stem) > MAX_STEM or stem.split(".")[0].upper() in _DEVICES:
        digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        stem = f"{stem[:MAX_STEM]}-{digest}"
    return stem


def file_stems(names: list[str]) -> list[str]:
    """``file_stem`` of each name, numbered where two would be the same file (equal but for
    case, or the same output listed twice)."""
    taken: set[str] = {os.path.splitext(MANIFEST)[0].lower()}
    stems = []
    for name in names:
        stem = base = file_stem(name)
        k = 1
        while stem.lower() in taken:
            k += 1
            stem = f"{base}-{k}"
        taken.add(stem.lower())
        stems.append(stem)
    return stems


def prepare_folder(folder: str, stems: list[str], overwrite: bool) -> None:
    """Make ``folder``; refuse (before the model runs) files that saving would replace."""
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        raise ArgumentError(f"--output-dir {short(folder)!r} is {file_kind(os.stat(folder).st_mode)}, "
                            f"not a folder") from None
    except (OSError, ValueError) as exc:
        raise ArgumentError(f"--output-dir {short(folder)!r}: cannot make the folder "
                            f"({getattr(exc, 'strerror', None) or exc})") from None
    if not os.path.isdir(folder):
        raise ArgumentError(f"--output-dir {short(folder)!r} is not a folder")
    targets = [MANIFEST] + [stem + ext for stem in stems for ext in (".npy", ".npz")]
    present = [t for t in targets if os.path.lexists(os.path.join(folder, t))]
    if present and not overwrite:
        shown = ", ".join(present[:3]) + (f" and {len(present) - 3} more" if len(present) > 3 else "")
        raise ArgumentError(f"--output-dir {short(folder)!r} already holds {shown}; pass --overwrite "
                            f"to replace them, or choose another folder")


def save_outputs(folder: str, names: list[str], values: list, model: str,
                 overwrite: bool = False) -> str:
    """Write each value and the manifest; returns the manifest's path."""
    stems = file_stems(names)
    prepare_folder(folder, stems, overwrite)
    entries = []
    for name, stem, value in zip(names, stems, values):
        entry, ext, data = _encode(value)
        if data is not None:
            entry["file"] = stem + ext
            _write(os.path.join(folder, stem + ext), data, overwrite)
        entries.append({"name": name, **entry})
    manifest = os.path.join(folder, MANIFEST)
    rows = ",\n  ".join(json.dumps(entry) for entry in entries)  # one output per line
    text = f'{{"model": {json.dumps(model)},\n "outputs": [\n  {rows}]}}\n'
    _write(manifest, text.encode("ascii"), overwrite)
    return manifest


def _encode(value) -> tuple[dict, str, bytes | None]:
    """(manifest entry, extension, file bytes or None) for one output value."""
    buf = io.BytesIO()
    if value is None:
        return {"file": None, "kind": "none"}, "", None
    if isinstance(value, np.ndarray):
        array = _storable(value)
        np.save(buf, array, allow_pickle=False)
        return ({"file": None, "kind": "tensor", "dtype": str(array.dtype),
                 "shape": list(array.shape)}, ".npy", buf.getvalue())
    if isinstance(value, (list, tuple)) and all(isinstance(v, np.ndarray) for v in value):
        np.savez(buf, allow_pickle=False, **{str(i): _storable(v) for i, v in enumerate(value)})
        return {"file": None, "kind": "sequence", "length": len(value)}, ".npz", buf.getvalue()
    if isinstance(value, dict):
        keys, vals = _storable(np.array(list(value))), _storable(np.array(list(value.values())))
        np.savez(buf, allow_pickle=False, keys=keys, values=vals)
        return {"file": None, "kind": "map", "length": len(value)}, ".npz", buf.getvalue()
    return ({"file": None, "kind": type(value).__name__,
             "note": "not saved: no .npy form for this kind of value"}, "", None)


def _storable(array: np.ndarray) -> np.ndarray:
    """``array`` in a dtype ``np.save`` writes without pickling (strings as ``str``)."""
    if array.dtype.hasobject:
        return np.array([v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                         for v in array.reshape(-1)], dtype=str).reshape(array.shape)
    return array


def _write(path: str, data: bytes, overwrite: bool) -> None:
    try:
        if overwrite:
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        else:
            with open(path, "xb") as f:  # never replaces a file that appeared meanwhile
                f.write(data)
    except (OSError, ValueError) as exc:
        raise ArgumentError(f"cannot write {short(path)!r} ({getattr(exc, 'strerror', None) or exc})") from None
