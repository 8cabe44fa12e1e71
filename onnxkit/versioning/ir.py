"""Three version numbers, three meanings.

- **IR version** (``model.ir_version``): the version of the file format itself — which
  fields a ModelProto may use (e.g. IR 4: initializers need not be graph inputs; IR 8:
  model-local functions; IR 10: uint4/int4; IR 11: float4/float8 variants...).
- **opset version** (``model.opset_import``): per domain, the set of operator
  definitions the model was written against (``ai.onnx`` 18, ``ai.onnx.ml`` 3...).
- **operator version** (a schema's ``since_version``): the opset in which the definition
  of one operator last changed. A model importing opset 18 that uses ``Reshape`` means
  ``Reshape-14``, because Reshape did not change between opsets 14 and 18.

Each onnx release fixes one combination (``onnx.helper.VERSION_TABLE``).
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx
from onnx import helper

from onnxkit.loading import ModelLike, load
from onnxkit.ops.registry import normalize_domain


@dataclass(frozen=True)
class Release:
    """One row of onnx's version table: what an onnx release writes by default."""

    onnx: str
    ir_version: int
    opset: int          # ai.onnx
    ml_opset: int       # ai.onnx.ml
    training_opset: int | None


def releases() -> list[Release]:
    """onnx releases, oldest first, from ``onnx.helper.VERSION_TABLE``."""
    rows = []
    for row in helper.VERSION_TABLE:
        release, ir_version, opset, ml_opset = row[:4]
        training = row[4] if len(row) > 4 else None
        rows.append(Release(release, ir_version, opset, ml_opset, training))
    return rows


def first_release_with_opset(opset: int, domain: str = "") -> Release | None:
    """The first onnx release that knows ``opset`` of ``domain`` (``""`` or ``"ai.onnx.ml"``)."""
    for r in releases():
        have = r.opset if normalize_domain(domain) == "" else r.ml_opset
        if have >= opset:
            return r
    return None


def min_ir_version(opsets: dict[str, int]) -> int:
    """The lowest IR version a model importing these opsets must declare (onnx's rule)."""
    ids = [helper.make_opsetid(domain, version) for domain, version in opsets.items()]
    return helper.find_min_ir_version_for(ids, ignore_unknown=True)


@dataclass
class ModelVersions:
    """The version facts of one model."""

    ir_version: int
    opsets: dict[str, int]       # domain ("" is ai.onnx) -> imported opset
    producer: str
    min_ir_version: int          # the lowest IR version its opsets allow

    def __str__(self) -> str:
        opsets = ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in sorted(self.opsets.items()))
        return (f"IR version {self.ir_version} (its opsets need at least {self.min_ir_version}); "
                f"opsets: {opsets}; producer: {self.producer or '(none)'}")


def model_versions(model: ModelLike) -> ModelVersions:
    proto = load(model)
    opsets = {normalize_domain(o.domain): int(o.version) for o in proto.opset_import}
    producer = " ".join(p for p in (proto.producer_name, proto.producer_version) if p)
    return ModelVersions(proto.ir_version, opsets, producer, min_ir_version(opsets))


def latest_opset(domain: str = "") -> int | None:
    """The newest opset of ``domain`` the installed onnx defines (None: onnx does not know it)."""
    known = onnx.defs.C.schema_version_map()
    domain = normalize_domain(domain)
    return known[domain][1] if domain in known else None
