"""If: run ``then_branch`` when cond is true, else ``else_branch``; both see the
enclosing scope.  https://onnx.ai/onnx/operators/onnx__If.html"""

from onnxkit.ops.registry import op


@op("If", 1, 11, 13, 16, 19, 21, 23, 24, 25, context=True)
def if_(cond, *, then_branch, else_branch, ctx):
    branch = then_branch if bool(cond.reshape(-1)[0]) else else_branch
    return tuple(ctx.run(branch))
