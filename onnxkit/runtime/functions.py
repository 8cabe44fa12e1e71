"""Model-local functions: a node whose (domain, op_type) names a FunctionProto.

The body is compiled for each calling node (its attributes can change the body
through ``ref_attr_name``) and runs in its own scope: a function sees only its inputs.
"""

from __future__ import annotations

from onnx import AttributeProto, FunctionProto, GraphProto, NodeProto, ValueInfoProto

from onnxkit.core.registry import Kernel, normalize_domain


def function_graph(function: FunctionProto) -> GraphProto:
    """The function body as a graph whose inputs and outputs carry names only."""
    graph = GraphProto(name=function.name)
    graph.input.extend(ValueInfoProto(name=n) for n in function.input)
    graph.output.extend(ValueInfoProto(name=n) for n in function.output)
    graph.node.extend(function.node)
    graph.value_info.extend(function.value_info)
    return graph


def function_kernel(node: NodeProto, function: FunctionProto, attrs: list[AttributeProto],
                    opsets: dict[str, int], ctx, node_path: str, depth: int) -> Kernel:
    """A context kernel that runs the compiled body of ``function`` for ``node``."""
    from onnxkit.runtime.evaluator import run_graph
    from onnxkit.runtime.plan import compile_graph, opsets_of

    caller_attrs = {a.name: a for a in function.attribute_proto}
    caller_attrs.update({a.name: a for a in attrs})
    body_opsets = dict(opsets)
    body_opsets.update(opsets_of(function.opset_import))
    body = compile_graph(function_graph(function), body_opsets, ctx, frozenset(),
                         f"{node_path}/{function.name}", depth + 1, caller_attrs)

    def run_function(*inputs, ctx):
        return tuple(run_graph(body, body.bind(inputs), None, ctx.state))

    run_function.__doc__ = f"Runs the model-local function {function.domain}::{function.name}."
    return Kernel(normalize_domain(function.domain), function.name, 1, run_function,
                  context=True, registry="model-function", accepts_any_attribute=True)
