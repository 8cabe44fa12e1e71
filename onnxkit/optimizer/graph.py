"""The optimizer's working copy of a model: a node list plus the indexes rewrites need.

    Graph.from_model(model)      copy nodes, name unnamed ones, read types (shape inference)
      .producer(v) .consumers(v) who writes / reads value v (subgraph reads count as reads)
      .constant(v)               v's array when v is a constant (initializer or Constant)
      .shape(v) .dtype(v)        static facts from shape inference, None when unknown
      .apply(edits)              remove / insert nodes and rename values in one sweep
    Graph.to_model()             a new ModelProto, or the source rewritten (``writing``)

Initializers that are also graph inputs can be overridden by a feed from IR version 4
on, so they are not constants; before IR 4 every initializer had to be listed as an input
and is a constant (as onnxruntime reads them). Such models are written back as IR 4.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from onnx import GraphProto, ModelProto, NodeProto, TensorProto, TypeProto, helper, numpy_helper

from onnxkit.ops.registry import normalize_domain
from onnxkit.optimizer.nodes import constant_node_value, copy_node, make_node, node_reads, rename_reads
from onnxkit.runtime.values import tensor_to_array
from onnxkit.shape_inference import infer_shapes

#: initializers with more elements than this are left out of the shape-inference skeleton
_SKELETON_MAX = 4096
#: the domains onnx's shape inference has schemas for
_SCHEMAS = ("", "ai.onnx.ml", "ai.onnx.preview.training")


@dataclass
class Edit:
    """One rewrite: drop ``remove`` (by identity), put ``insert`` where the last of them was."""

    remove: list[NodeProto]
    insert: list[NodeProto] = field(default_factory=list)
    renames: dict[str, str] = field(default_factory=dict)  # every read of key reads value
    anchor: NodeProto | None = None  # insert here (default: the last removed node)


class Graph:
    """A mutable view of a model's main graph (nested graphs are kept as they are)."""

    def __init__(self, model: ModelProto):
        self.model = model  # header fields (opsets, functions, metadata) come from here
        g = model.graph
        self.name = g.name
        self.nodes: list[NodeProto] = [copy_node(n) for n in g.node]
        self.initializers: dict[str, TensorProto] = {t.name: t for t in g.initializer}
        self.inputs = list(g.input)
        self.outputs = list(g.output)
        self.value_info = {vi.name: vi for vi in g.value_info}
        self.ir_version = model.ir_version
        self.notes: list[str] = []
        self.metadata: dict[str, str] = {}  # written to metadata_props (the level-3 plans)
        if self.ir_version < 4:
            listed = {i.name for i in self.inputs}
            self.inputs = [i for i in self.inputs if i.name not in self.initializers]
            self.ir_version = 4
            if listed & set(self.initializers):
                self.notes.append("IR version 3 -> 4: initializers are no longer listed as graph "
                                  "inputs, so they read as the constants they were")
        self.opsets = {normalize_domain(o.domain): o.version for o in model.opset_import}
        self._arrays: dict[str, np.ndarray] = {}
        self._extra_names: set[str] = set()  # value names handed out, maybe not used yet
        self._index = None
        self.types: dict[str, TypeProto] = {}
        self._name_nodes()
        self.infer_types()

    # --- names -----------------------------------------------------------------------

    def _name_nodes(self) -> None:
        seen: set[str] = set()
        for i, node in enumerate(self.nodes):
            if not node.name or node.name in seen:
                base = node.name or f"{node.op_type}_{i}"
                node.name = self._unique(base, seen)
            seen.add(node.name)
        self._node_names = seen

    def _unique(self, base: str, taken: set[str]) -> str:
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        return name

    def node_name(self, base: str) -> str:
        """A node name no node has yet."""
        name = self._unique(base, self._node_names)
        self._node_names.add(name)
        return name

    def value_name(self, base: str) -> str:
        """A value name no value, input or initializer has yet."""
        values = self._idx()["values"]
        name, k = base, 1
        while name in values or name in self._extra_names or name in self.initializers:
            name, k = f"{base}_{k}", k + 1
        self._extra_names.add(name)
        return name

    # --- indexes ---------------------------------------------------------------------

    def _idx(self) -> dict:
        if self._index is None:
            producer, consumers, values = {}, {}, set(self.initializers)
            values.update(i.name for i in self.inputs)
            for node in self.nodes:
                for o in node.output:
                    if o:
                        producer[o] = node
                        values.add(o)
                for name in node_reads(node):
                    consumers.setdefault(name, []).append(node)
                    values.add(name)
            self._index = {"producer": producer, "consumers": consumers, "values": values,
                           "position": {id(n): i for i, n in enumerate(self.nodes)},
                           "inputs": frozenset(i.name for i in self.inputs),
                           "outputs": frozenset(o.name for o in self.outputs)}
        return self._index

    def invalidate(self) -> None:
        self._index = None

    def producer(self, value: str) -> NodeProto | None:
        return self._idx()["producer"].get(value)

    def consumers(self, value: str) -> list[NodeProto]:
        return self._idx()["consumers"].get(value, [])

    def position(self, node: NodeProto) -> int:
        return self._idx()["position"][id(node)]

    @property
    def output_names(self) -> frozenset[str]:
        return self._idx()["outputs"]

    @property
    def input_names(self) -> frozenset[str]:
        return self._idx()["inputs"]

    def is_used(self, value: str) -> bool:
        return bool(self.consumers(value)) or value in self.output_names

    # --- constants -------------------------------------------------------------------

    def is_constant(self, value: str) -> bool:
        if value in self.initializers:
            return value not in self.input_names
        node = self.producer(value)
        return node is not None and node.op_type == "Constant" and normalize_domain(node.domain) == ""

    def constant(self, value: str) -> np.ndarray | None:
        """The value's array if it is a constant, else None."""
        if not value or not self.is_constant(value):
            return None
        if value not in self._arrays:
            if value in self.initializers:
                self._arrays[value] = tensor_to_array(self.initializers[value])
            else:
                self._arrays[value] = constant_node_value(self.producer(value))
        return self._arrays[value]

    def content_digest(self, name: str) -> str | None:
        """A digest of initializer ``name``'s values (None for strings), computed without
        keeping an array: comparing big weights must not hold a copy of each of them."""
        if name in self._arrays:
            arr = self._arrays[name]
        else:
            t = self.initializers[name]
            if t.HasField("raw_data"):
                return hashlib.sha1(t.raw_data).hexdigest()
            arr = tensor_to_array(t)
        return None if arr.dtype == object else hashlib.sha1(arr.tobytes()).hexdigest()

    def add_initializer(self, base: str, array: np.ndarray) -> str:
        name = self.value_name(base)
        self.set_initializer(name, array)
        return name

    def set_initializer(self, name: str, array: np.ndarray) -> None:
        array = np.asarray(array)
        self.initializers[name] = numpy_helper.from_array(array, name)
        self._arrays[name] = array
        self.types[name] = helper.make_tensor_type_proto(
            helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))
        self._extra_names.add(name)  # no node changed: the indexes stay valid

    def drop_initializer(self, name: str) -> None:
        self.initializers.pop(name, None)
        self._arrays.pop(name, None)

    # --- types -----------------------------------------------------------------------

    def infer_types(self) -> None:
        """Run onnx shape inference on a skeleton (big initializers become typed inputs)."""
        known = dict(self.types)
        for vi in list(self.inputs) + list(self.outputs) + list(self.value_info.values()):
            known.setdefault(vi.name, vi.type)
        for name, t in self.initializers.items():
            known[name] = helper.make_tensor_type_proto(t.data_type, list(t.dims))
        try:
            inferred = infer_shapes(self._skeleton(), data_prop=True)
            for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
                if vi.type.WhichOneof("value") is not None:
                    known[vi.name] = vi.type
        except Exception:  # noqa: BLE001 - inference is a help, never a requirement
            pass
        self.types = known

    def opset_imports(self) -> list:
        """The model's opset imports, plus one for each domain a node uses that the model
        does not import (a fusion's ``onnxkit`` nodes): without it, shape inference
        rejects the whole graph, and every shape after the first fusion would be stale."""
        imports = list(self.model.opset_import)
        imported = {normalize_domain(o.domain) for o in imports}
        for domain in sorted({normalize_domain(n.domain) for n in self.nodes} - imported):
            imports.append(helper.make_opsetid(domain, self.opsets.get(domain, 1)))
        return imports

    def _skeleton(self) -> ModelProto:
        g = GraphProto(name=self.name or "g")
        g.node.extend(self.nodes)
        g.input.extend(self.inputs)
        g.output.extend(self.outputs)
        for name, t in self.initializers.items():
            size = int(np.prod(t.dims)) if t.dims else 1
            if size <= _SKELETON_MAX and not t.external_data:
                g.initializer.append(t)
            elif name not in self.input_names:
                g.input.append(helper.make_value_info(name, self.types.get(name) or
                               helper.make_tensor_type_proto(t.data_type, list(t.dims))))
        # what onnx has no schema for (the onnxkit domain's fused nodes) keeps the types
        # its outputs had before the fusion, so that what follows them is still inferred
        g.value_info.extend(helper.make_value_info(name, self.types[name])
                            for node in self.nodes if normalize_domain(node.domain) not in _SCHEMAS
                            for name in node.output if name in self.types)
        m = helper.make_model(g, opset_imports=self.opset_imports(),
                              ir_version=max(self.ir_version, 4))
        m.functions.extend(self.model.functions)
        return m

    def shape(self, value: str) -> tuple | None:
        """Static shape (ints; strings for symbolic dims), None when unknown."""
        arr = self.constant(value) if value in self.initializers else None
        if arr is not None:
            return tuple(arr.shape)
        tp = self.types.get(value)
        if tp is None or tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
            return None
        dims = []
        for d in tp.tensor_type.shape.dim:
            dims.append(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?"))
        return tuple(dims)

    def static_shape(self, value: str) -> tuple[int, ...] | None:
        s = self.shape(value)
        if s is None or not all(isinstance(d, int) for d in s):
            return None
        return s

    def rank(self, value: str) -> int | None:
        s = self.shape(value)
        return None if s is None else len(s)

    def dtype(self, value: str) -> int | None:
        """The ONNX element type (TensorProto.FLOAT, ...), None when unknown."""
        if value in self.initializers:
            return self.initializers[value].data_type
        tp = self.types.get(value)
        if tp is None or tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.elem_type:
            return None
        return tp.tensor_type.elem_type

    def copy_type(self, src: str, dst: str) -> None:
        if src in self.types:
            self.types[dst] = self.types[src]

    # --- edits -----------------------------------------------------------------------

    def apply(self, edits: list[Edit]) -> None:
        """Apply non-overlapping edits in one sweep over the node list."""
        if not edits:
            return
        removed = {id(n) for e in edits for n in e.remove}
        at: dict[int, list[NodeProto]] = {}
        for e in edits:
            anchor = e.anchor if e.anchor is not None else max(e.remove, key=self.position)
            at.setdefault(id(anchor), []).extend(e.insert)
        renames: dict[str, str] = {}
        for e in edits:
            renames.update(e.renames)
        nodes = []
        for node in self.nodes:
            nodes.extend(at.get(id(node), ()))
            if id(node) not in removed:
                nodes.append(node)
        self.nodes = nodes
        for node in nodes:
            self._node_names.add(node.name)
        if renames:
            self._rename(renames)
        self.invalidate()

    def apply_renames(self, renames: dict[str, str]) -> None:
        """Every read of a key reads its value instead."""
        if renames:
            self._rename(renames)
            self.invalidate()

    def _rename(self, renames: dict[str, str]) -> None:
        """Every read of ``old`` reads ``new``; a graph output keeps its name (the producer
        of ``new`` is renamed to it instead)."""
        def resolve(name: str) -> str:
            seen = set()
            while name in renames and name not in seen:
                seen.add(name)
                name = renames[name]
            return name

        flat = {old: resolve(old) for old in renames}
        outputs = self.output_names
        # an output replaced by an internal value: that value takes the output's name;
        # one replaced by an input, a constant or another output gets an Identity
        back: dict[str, str] = {}
        for old, new in flat.items():
            if old not in outputs:
                continue
            if (new in outputs or new in back or new in self.initializers
                    or new in self.input_names):
                self.nodes.append(make_node("Identity", [new], [old], self.node_name(f"{old}:Identity")))
            else:
                back[new] = old
        flat = {old: new for old, new in flat.items() if old not in outputs}
        for node in self.nodes:
            rename_reads(node, flat)
            rename_reads(node, back)
            for i, o in enumerate(node.output):
                if o in back:
                    node.output[i] = back[o]
        for new, old in back.items():
            self.copy_type(new, old)

    def to_model(self, reuse_source: bool = False) -> ModelProto:
        """The optimized model (``onnxkit.optimizer.writing.write_model``)."""
        from onnxkit.optimizer.writing import write_model

        return write_model(self, reuse_source)

    def __len__(self) -> int:
        return len(self.nodes)
