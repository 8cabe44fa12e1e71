"""If: run ``then_branch`` when the one-element ``cond`` is true, else ``else_branch``.

Both branches take no inputs and see every value of the enclosing scopes; the node's
outputs are the chosen branch's outputs (tensors, sequences or optionals).
https://onnx.ai/onnx/operators/onnx__If.html
"""

from onnxkit.errors import GraphError, InputError, describe_node
from onnxkit.ops.registry import op


@op("If", 1, 11, 13, 16, 19, 21, 23, 24, 25, context=True)
def if_(cond, *, then_branch, else_branch, ctx):
    if cond.size != 1:
        raise InputError(
            f"{describe_node(ctx.node)}: cond must hold exactly one element, got shape "
            f"{list(cond.shape)}"
        )
    chosen, label = (then_branch, "then") if bool(cond.reshape(-1)[0]) else (else_branch, "else")
    outputs = ctx.run(chosen)
    if len(outputs) < ctx.n_outputs:
        raise GraphError(
            f"{describe_node(ctx.node)}: {label}_branch returns {len(outputs)} value(s), "
            f"the node has {ctx.n_outputs} output(s)"
        )
    return tuple(outputs)
