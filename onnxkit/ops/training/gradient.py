"""Gradient: d y / d x for each x in ``xs``, by reverse-mode differentiation of the
part of the enclosing graph that computes ``y`` from ``xs`` (and ``zs``).

    forward: re-run the nodes between xs/zs and y, with the Gradient node's inputs
             bound to xs then zs (other values: initializers and the graph's scope)
    backward: grad[y] = 1; for the nodes in reverse order:
                  grad[input] += rule[op](inputs, output, grad[output])
    outputs: grad[x] for x in xs (zeros when y does not depend on x)

Supported operators are listed in ``onnxkit.ops.training._grad_rules.RULES``.
https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_Gradient.html
"""

import numpy as np

from onnxkit.errors import GraphError, InputError, NotImplementedOpError, describe_node
from onnxkit.ops.registry import TRAINING_DOMAIN, op
from onnxkit.ops.training._grad_rules import RULES


@op("Gradient", 1, domain=TRAINING_DOMAIN, context=True, reads_graph=True)
def gradient(*inputs, xs, y, zs=None, ctx):
    zs = [] if zs is None else list(zs)
    if len(inputs) != len(xs) + len(zs):
        raise InputError(f"{describe_node(ctx.node)}: takes one input per name in xs and zs "
                         f"({len(xs) + len(zs)}), got {len(inputs)}")
    if ctx.graph is None:
        raise GraphError(f"{describe_node(ctx.node)}: Gradient needs its enclosing graph")
    given = dict(zip(list(xs) + zs, inputs))
    steps = _steps_between(ctx, set(given), y)
    values = _forward(ctx, steps, given)
    grads = _backward(steps, values, y)
    return tuple(np.asarray(grads.get(x, np.zeros_like(given[x])), dtype=given[x].dtype)
                 .reshape(np.shape(given[x])) for x in xs)


def _steps_between(ctx, leaves: set, y: str) -> list:
    """The plan's steps y depends on, stopping at the leaves, in execution order."""
    producer = {}
    for step in ctx.graph.steps:
        if step.node is ctx.node:
            continue
        for name in step.outputs:
            if name:
                producer[name] = step
    needed, stack = [], [y]
    seen = set()
    while stack:
        name = stack.pop()
        if name in seen or name in leaves or name not in producer:
            continue
        seen.add(name)
        step = producer[name]
        if step not in needed:
            needed.append(step)
            stack.extend(i for i in step.inputs if i)
    if y not in producer and y not in leaves:
        raise GraphError(f"{describe_node(ctx.node)}: y={y!r} is produced by no node of the graph")
    order = {id(s): i for i, s in enumerate(ctx.graph.steps)}
    return sorted(needed, key=lambda s: order[id(s)])


def _forward(ctx, steps, given) -> dict:
    values = dict(given)
    for step in steps:
        if step.kernel.context:
            raise NotImplementedOpError(
                f"{describe_node(ctx.node)}: cannot differentiate through {describe_node(step.node)}")
        args = [None if not name else _value(ctx, values, name) for name in step.inputs]
        values.update((n, a) for n, a in zip(step.inputs, args) if n)
        result = ctx.state.executor.invoke(step.kernel, args, step.attrs, None)
        result = result if isinstance(result, tuple) else (result,)
        values.update((n, np.asarray(v)) for n, v in zip(step.outputs, result) if n)
    return values


def _value(ctx, values, name):
    for source in (values, ctx.graph.initializers, ctx.scope):
        if name in source:
            return source[name]
    raise GraphError(f"{describe_node(ctx.node)}: value {name!r}, needed to recompute the "
                     f"forward pass, is no longer available (feed it as a zs input)")


def _backward(steps, values, y) -> dict:
    grads = {y: np.ones_like(values[y])}
    for step in reversed(steps):
        out = step.outputs[0]
        if out not in grads:
            continue
        rule = RULES.get(step.node.op_type)
        if rule is None or len([o for o in step.outputs if o]) != 1:
            raise NotImplementedOpError(
                f"no derivative for {describe_node(step.node)}; onnxkit differentiates "
                f"{', '.join(sorted(RULES))}")
        ins = [values.get(name) if name else None for name in step.inputs]
        for name, g in zip(step.inputs, rule(ins, values[out], grads[out], step.attrs)):
            if name and g is not None:
                grads[name] = grads[name] + g if name in grads else g
    return grads
