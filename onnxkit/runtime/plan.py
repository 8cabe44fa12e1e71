"""Build a plan once per session: a kernel per node, an order, and when values die.

    ModelProto --compile_model--> GraphPlan
        1. opsets: domain -> version the model imports
        2. initializers -> arrays (kept by the plan, shared by every run)
        3. nodes in topological order (cycles and missing producers are errors)
        4. per node: kernel for (domain, op_type, since_version) from the executor's
           registries, or a model-local function; attributes converted and checked;
           subgraphs (If / Loop / Scan bodies) compiled recursively, seeing outer names
        5. per node whose kernel has a ``prepare`` hook (the cpu kernels): the kernel
           prepared once for this node (``prepare_kernel``), kept on its step
        6. liveness: after each step, the values no later step needs are dropped
        7. where the executor calls kernels as they are: the whole graph written out as
           one Python function (``straight_line``)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np
import onnx
from onnx import FunctionProto, GraphProto, ModelProto, NodeProto

from onnxkit.errors import (GraphError, LimitExceededError, NotImplementedOpError, describe_node, listed,
                            quoted, shown)
from onnxkit.core.executor import Executor
from onnxkit.core.registry import Kernel, normalize_domain, schema_of, schema_since_version
from onnxkit.runtime.attributes import kernel_attributes, resolve_references
from onnxkit.runtime.functions import function_kernel
from onnxkit.runtime.limits import Limits
from onnxkit.runtime.straight_line import straight_line
from onnxkit.runtime.values import np_dtype, sparse_to_dense, tensor_to_array


@dataclass
class Step:
    """One node, ready to run."""

    node: NodeProto
    kernel: Kernel
    opset: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict
    free_after: tuple[str, ...] = ()
    wanted: int = field(init=False)  # how many results the kernel must return
    plain: bool = field(init=False)  # the kernel takes no ``ctx``

    def __post_init__(self):
        self.wanted = max((i + 1 for i, name in enumerate(self.outputs) if name), default=0)
        self.plain = not self.kernel.context

    @property
    def algorithm(self) -> str | None:
        """The algorithm the node's prepared kernel runs (a cpu Conv's, ``_conv_rules``):
        decided when the plan was built where the model declares the input's shape, else
        on its first run; None for other kernels."""
        return getattr(self.kernel.fn, "algorithm", None)


@dataclass
class GraphPlan:
    """A compiled graph: run it with ``onnxkit.runtime.evaluator.run_graph``."""

    name: str
    path: str
    input_names: list[str]
    output_names: list[str]
    initializers: dict[str, Any]
    steps: list[Step]
    free_names: frozenset = field(default_factory=frozenset)
    #: the same run as one Python function (``straight_line``), where every step allows it
    straight: Any = None
    #: ``straight`` taking exactly one value per input, in order (nested graphs only)
    straight_values: Any = None

    def bind(self, values: Sequence[Any]) -> dict:
        """Positional values -> feeds for this graph's inputs (control-flow bodies)."""
        if len(values) > len(self.input_names):
            raise GraphError(
                f"graph {quoted(self.path or self.name)} takes {len(self.input_names)} inputs, "
                f"got {len(values)}"
            )
        return dict(zip(self.input_names, values))


@dataclass
class PlanContext:
    """What compiling any graph of one model needs to know."""

    executor: Any
    limits: Limits
    functions: dict[tuple[str, str], FunctionProto]
    base_dir: str | None = None


def opsets_of(imports) -> dict[str, int]:
    return {normalize_domain(o.domain): int(o.version) for o in imports}


def compile_model(model: ModelProto, executor, limits: Limits, base_dir: str | None = None,
                  initializers: dict | None = None) -> GraphPlan:
    """``initializers``: the main graph's weights as arrays already (a Session's, whose
    model keeps only stubs of them: ``onnxkit.runtime.weights``)."""
    functions = {(f.domain, f.name): f for f in model.functions}
    ctx = PlanContext(executor, limits, functions, base_dir)
    return compile_graph(model.graph, opsets_of(model.opset_import), ctx, frozenset(), "", 0,
                         given=initializers)


def compile_graph(graph: GraphProto, opsets: dict[str, int], ctx: PlanContext,
                  outer_names: frozenset, path: str, depth: int,
                  caller_attrs: dict | None = None, given: dict | None = None) -> GraphPlan:
    """Compile ``graph``; ``outer_names`` are the values enclosing graphs make visible;
    ``given``: its initializers already as arrays."""
    if depth > ctx.limits.max_graph_depth:
        raise LimitExceededError(
            f"graph {quoted(path)} is nested {depth} levels deep (limit max_graph_depth="
            f"{ctx.limits.max_graph_depth})"
        )
    given = given or {}
    initializers = {t.name: given[t.name] if t.name in given else tensor_to_array(t, ctx.base_dir)
                    for t in graph.initializer}
    for sparse in graph.sparse_initializer:
        initializers[sparse.values.name] = sparse_to_dense(sparse)
    input_names = [i.name for i in graph.input if i.name not in initializers]
    check_declared_sizes(graph, ctx.limits)

    local = set(initializers) | {i.name for i in graph.input}
    nodes = topological_order(graph, set(local), set(outer_names), path)
    visible = frozenset(outer_names | local | {o for n in nodes for o in n.output if o})

    fed = {i.name for i in graph.input}  # an initializer listed as an input: a default only
    constants = {name: value for name, value in initializers.items() if name not in fed}
    declared = None
    steps, uses = [], []
    for node in nodes:
        step, free = compile_node(node, opsets, ctx, visible, path, depth, caller_attrs)
        if hasattr(step.kernel.fn, "prepare"):
            declared = declared if declared is not None else declared_shapes(graph)
            prepare_kernel(step, constants, declared)
        steps.append(step)
        used = {i for i in node.input if i} | free
        if step.kernel.reads_graph:  # e.g. Gradient: everything defined so far stays alive
            used |= local
        uses.append(used)
        local.update(o for o in node.output if o)

    outputs = [o.name for o in graph.output]
    plan_free = set().union(*uses) | set(outputs) if uses else set(outputs)
    _add_liveness(steps, uses, set(outputs) | set(outer_names))
    plan = GraphPlan(graph.name, path, input_names, outputs, initializers, steps,
                     frozenset(plan_free - local))
    if type(ctx.executor).invoke is Executor.invoke:  # kernels called as they are
        plan.straight = straight_line(plan)
        if path and plan.straight is not None:  # a body: run once per iteration
            plan.straight_values = straight_line(plan, positional=True)
    return plan


def compile_node(node: NodeProto, opsets, ctx: PlanContext, visible: frozenset, path: str,
                 depth: int, caller_attrs) -> tuple[Step, set]:
    """The step for one node, and the outer names its subgraphs read."""
    domain = normalize_domain(node.domain)
    subgraph_free: set[str] = set()
    node_path = f"{path}/{node.name or node.op_type}" if path else (node.name or node.op_type)

    def compile_sub(attr_name: str, g: GraphProto) -> GraphPlan:
        sub = compile_graph(g, opsets, ctx, visible, f"{node_path}/{attr_name}", depth + 1,
                            caller_attrs)
        subgraph_free.update(sub.free_names)
        return sub

    attrs_protos = resolve_references(node, caller_attrs)
    function = ctx.functions.get((node.domain, node.op_type))
    if function is not None:
        kernel = function_kernel(node, function, attrs_protos, opsets, ctx, node_path, depth)
        return Step(node, kernel, opsets.get(domain, 0), tuple(node.input),
                    tuple(node.output), {}), set()
    if domain not in opsets:
        raise NotImplementedOpError(
            f"{describe_node(node)}: the model does not import domain {quoted(node.domain)} "
            f"(it imports: {listed(d or 'ai.onnx' for d in sorted(opsets))})"
        )
    opset = opsets[domain]
    kernel = resolve_kernel(node, domain, opset, ctx.executor)
    schema = schema_of(domain, node.op_type, opset)
    attrs = kernel_attributes(node, attrs_protos, kernel, schema, compile_sub, ctx.base_dir)
    n_inputs = len(node.input)
    if kernel.max_inputs is not None and n_inputs > kernel.max_inputs:
        raise GraphError(
            f"{describe_node(node)}: has {n_inputs} inputs, kernel "
            f"{kernel.qualified_name} takes at most {kernel.max_inputs}"
        )
    return Step(node, kernel, opset, tuple(node.input), tuple(node.output), attrs), subgraph_free


def prepare_kernel(step: Step, constants: dict, declared: dict) -> None:
    """Give ``step`` the kernel its ``prepare`` hook makes for this node, if it makes one.

    ``kernel.fn.prepare(node, attrs, constants, shapes)``: ``constants`` maps the index of
    each input that is an initializer of the graph to its array, ``shapes`` the index of
    each input whose shape the model declares in full to (shape, numpy dtype), and its
    ``dtypes`` each input whose element type it declares (of any shape) to its dtype. The
    callable it returns is called as the kernel is (inputs, then the attributes); it
    keeps whatever it works out (algorithm, transformed weights) for this node alone.
    """
    named = [(i, name) for i, name in enumerate(step.inputs) if name]
    shapes = Declared({i: declared[n] for i, n in named if n in declared})
    types = getattr(declared, "dtypes", {})
    shapes.dtypes = {i: types[n] for i, n in named if n in types}
    fn = step.kernel.fn.prepare(step.node, step.attrs,
                                {i: constants[n] for i, n in named if n in constants}, shapes)
    if fn is not None:
        step.kernel = replace(step.kernel, fn=fn)


class Declared(dict):
    """name (or input index) -> (shape, numpy dtype) of values whose type the model
    states in full; ``dtypes``: name -> numpy dtype of those whose element type it states,
    static shape or not (a float16 value of batch "N" is still float16)."""

    __slots__ = ("dtypes",)


def declared_shapes(graph: GraphProto) -> Declared:
    """name -> (shape, numpy dtype) of the graph's values whose type the model states
    in full (a promise the run checks: a prepared kernel meeting another shape decides
    again), and ``.dtypes`` (``Declared``)."""
    shapes = Declared()
    shapes.dtypes = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None or not tt.elem_type:
            continue
        try:
            dtype = np.dtype(np_dtype(tt.elem_type))
        except (KeyError, ValueError, TypeError):
            continue
        shapes.dtypes[vi.name] = dtype
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            shapes[vi.name] = (tuple(d.dim_value for d in tt.shape.dim), dtype)
    return shapes


def resolve_kernel(node: NodeProto, domain: str, opset: int, executor) -> Kernel:
    """The executor's kernel for the operator version the model's opset selects."""
    since = schema_since_version(domain, node.op_type, opset)
    for registry in executor.registries:
        if since is not None:
            kernel = registry.get(domain, node.op_type, since)
        else:
            kernel = registry.latest_at_most(domain, node.op_type, opset)
        if kernel is not None:
            return kernel
    available = sorted({v for r in executor.registries for v in r.versions(domain, node.op_type)})
    if since is None and not available and schema_of(domain, node.op_type, 10**6) is None:
        raise NotImplementedOpError(
            f"{describe_node(node)}: unknown operator {quoted(node.op_type)} in domain "
            f"{quoted(node.domain or 'ai.onnx')} (no onnx schema and no onnxkit kernel)"
        )
    wanted = f"version {since}" if since is not None else f"opset {opset}"
    have = ", ".join(map(str, available)) if available else "none"
    raise NotImplementedOpError(
        f"{describe_node(node)}: no {executor.name!r} kernel for {shown(node.op_type)} {wanted} "
        f"(model opset {opset}); versions implemented: {have}"
    )


def topological_order(graph: GraphProto, local: set[str], outer: set[str],
                      path: str) -> list[NodeProto]:
    """Kahn's algorithm, keeping the file's order where it is already valid.

    A node output may shadow an outer-scope name, never a name of its own graph.
    """
    known = local | outer
    producer: dict[str, int] = {}
    for idx, node in enumerate(graph.node):
        for out in node.output:
            if not out:
                continue
            if out in producer or out in local:
                raise GraphError(
                    f"{describe_node(node)}: output {quoted(out)} is already defined "
                    f"{'by another node' if out in producer else 'as a graph input or initializer'}"
                    f"{' in ' + quoted(path) if path else ''}; ONNX values are assigned once"
                )
            producer[out] = idx
    deps: list[set[int]] = []
    for node in graph.node:
        need = set()
        for name in node.input:
            if not name or name in known:
                continue
            if name not in producer:
                raise GraphError(
                    f"{describe_node(node)}: input {quoted(name)} is produced by no node and is "
                    f"not a graph input, initializer or outer-scope value"
                )
            need.add(producer[name])
        for attr in node.attribute:
            for g in _subgraphs(attr):
                need.update(producer[n] for n in _graph_reads(g) if n in producer)
        deps.append(need)
    done: set[int] = set()
    order: list[NodeProto] = []
    progress = True
    while progress and len(done) < len(graph.node):
        progress = False
        for idx, node in enumerate(graph.node):
            if idx not in done and deps[idx] <= done:
                done.add(idx)
                order.append(node)
                progress = True
    if len(done) < len(graph.node):
        stuck = [describe_node(graph.node[i]) for i in range(len(graph.node)) if i not in done]
        raise GraphError(f"the graph has a cycle through: {', '.join(stuck[:5])}")
    for out in graph.output:
        if out.name not in producer and out.name not in known:
            raise GraphError(f"graph output {quoted(out.name)} is produced by no node")
    return order


def _subgraphs(attr) -> list[GraphProto]:
    if attr.type == onnx.AttributeProto.GRAPH:
        return [attr.g]
    if attr.type == onnx.AttributeProto.GRAPHS:
        return list(attr.graphs)
    return []


def _graph_reads(graph: GraphProto) -> set[str]:
    """Every name a graph (and its nested graphs) reads, defined there or not."""
    names = {o.name for o in graph.output}
    for node in graph.node:
        names.update(i for i in node.input if i)
        for attr in node.attribute:
            for g in _subgraphs(attr):
                names |= _graph_reads(g)
    return names


def _add_liveness(steps: list[Step], uses: list[set], keep: set[str]) -> None:
    """Set ``free_after`` so each value is dropped right after its last reader."""
    last: dict[str, int] = {}
    for idx, (step, used) in enumerate(zip(steps, uses)):
        for name in used:
            last[name] = idx
        for name in step.outputs:
            if name:
                last.setdefault(name, idx)
    frees: list[list[str]] = [[] for _ in steps]
    for name, idx in last.items():
        if name not in keep:
            frees[idx].append(name)
    for step, names in zip(steps, frees):
        step.free_after = tuple(sorted(names))


def check_declared_sizes(graph: GraphProto, limits: Limits) -> None:
    """Refuse declared shapes whose tensors would exceed ``limits.max_tensor_bytes``."""
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None or not tt.HasField("shape"):
            continue
        dims = [d.dim_value for d in tt.shape.dim if d.HasField("dim_value")]
        if len(dims) != len(tt.shape.dim):
            continue
        try:
            itemsize = np_dtype(tt.elem_type).itemsize
        except (KeyError, ValueError, TypeError):
            itemsize = 1
        size = int(np.prod(dims, dtype=object)) * itemsize if dims else itemsize
        if size > limits.max_tensor_bytes:
            raise LimitExceededError(
                f"value {quoted(vi.name)} is declared with shape {dims} ({size:,} bytes), over the "
                f"limit max_tensor_bytes={limits.max_tensor_bytes:,}"
            )
