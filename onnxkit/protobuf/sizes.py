"""Where the bytes of a model go: weights versus graph structure.

    size_breakdown(model):
        for each field, depth first, carry a category down from the field that decides it:
            ModelProto.graph          -> its own fields decide (below)
            GraphProto.node           -> "nodes"          (a nested If/Loop body stays "nodes")
            GraphProto.initializer    -> "initializer names, dims, types"
            GraphProto.input/output/value_info -> "inputs, outputs, value_info"
            ModelProto.functions      -> "functions"
            anything else             -> "model and graph header"
            TensorProto data fields   -> "weights" inside an initializer, else "constants"
        a field's tag and length prefix count for its own category; a message's payload is
        the sum of its fields, so the categories add up to len(model.SerializeToString()).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from onnxkit.protobuf.view import Field, as_bytes, walk

WEIGHTS = "weights (initializer data)"
CONSTANTS = "constants (tensor data in nodes)"
TENSOR_HEADERS = "initializer names, dims, types"
NODES = "nodes"
SIGNATURE = "inputs, outputs, value_info"
HEADER = "model and graph header"
FUNCTIONS = "functions"
OTHER = "other"
CATEGORIES = (WEIGHTS, CONSTANTS, TENSOR_HEADERS, NODES, SIGNATURE, HEADER, FUNCTIONS, OTHER)

TENSOR_DATA_FIELDS = frozenset({"raw_data", "float_data", "int32_data", "string_data", "int64_data",
                                "double_data", "uint64_data"})
_GRAPH_FIELDS = {"node": NODES, "initializer": TENSOR_HEADERS, "sparse_initializer": TENSOR_HEADERS,
                 "input": SIGNATURE, "output": SIGNATURE, "value_info": SIGNATURE}
_MODEL_FIELDS = {"functions": FUNCTIONS, "training_info": OTHER}


@dataclass
class SizeBreakdown:
    """Bytes per category (``by_category``); ``total`` is the size of the serialized model."""

    total: int
    by_category: dict[str, int] = field(default_factory=dict)

    @property
    def weights(self) -> int:
        """Tensor data: initializers and constants inside nodes."""
        return self.by_category.get(WEIGHTS, 0) + self.by_category.get(CONSTANTS, 0)

    @property
    def structure(self) -> int:
        """Everything that is not tensor data: the graph, names, types, header."""
        return self.total - self.weights

    def __str__(self) -> str:
        lines = [f"{'category':<34} {'bytes':>10} {'share':>7}"]
        for name in CATEGORIES:
            n = self.by_category.get(name, 0)
            if n:
                lines.append(f"{name:<34} {n:>10,} {n / max(self.total, 1):>7.1%}")
        lines.append(f"{'total':<34} {self.total:>10,} {1:>7.0%}")
        return "\n".join(lines)


def size_breakdown(model) -> SizeBreakdown:
    """How many bytes of the serialized ``model`` (ModelProto or bytes) each category takes."""
    data = as_bytes(model)
    out = SizeBreakdown(len(data), {name: 0 for name in CATEGORIES})
    for f in walk(data):
        _count(f, _MODEL_FIELDS.get(f.name, HEADER), f.name == "graph", out.by_category)
    out.by_category = {k: v for k, v in out.by_category.items() if v}
    return out


def _count(f: Field, category: str, is_graph: bool, totals: dict[str, int]) -> None:
    if f.message == "TensorProto" and f.name in TENSOR_DATA_FIELDS:
        totals[WEIGHTS if category == TENSOR_HEADERS else CONSTANTS] += f.size
        return
    totals[category] += f.header_size
    if not f.children:
        totals[category] += f.payload_size
        return
    for child in f.children:
        if is_graph:  # a main graph's fields decide their own category
            child_category = _GRAPH_FIELDS.get(child.name, HEADER)
        else:
            child_category = category
        _count(child, child_category, False, totals)
