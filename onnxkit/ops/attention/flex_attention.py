"""FlexAttention (ai.onnx.preview): attention with user subgraphs on scores and probabilities.

    scores = (Q @ K^T) * scale                 (scale defaults to 1/sqrt(head_size);
                                                kv heads repeated for grouped queries)
    scores = score_mod(scores)                 if given
    probs = softmax(scores)                    (a row that is all -inf gives zeros)
    probs = prob_mod(probs)                    if given
    Y = probs @ V

Scores and probabilities use ``softmax_precision`` (default float32, or double for double
inputs). Inputs are rank 4. https://onnx.ai/onnx/operators/onnx_aionnxpreview_FlexAttention.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.attention._heads import repeat_kv, softmax_rows
from onnxkit.ops.registry import op
from onnxkit.core.values import np_dtype


@op("FlexAttention", 1, domain="ai.onnx.preview", context=True)
def flex_attention(Q, K, V, *, prob_mod=None, scale=None, score_mod=None,
                   softmax_precision=None, ctx):
    if Q.ndim != 4 or K.ndim != 4 or V.ndim != 4:
        raise KernelInputError("FlexAttention: Q, K, V must be rank 4, got shapes "
                               f"{list(Q.shape)}, "
                               f"{list(K.shape)}, {list(V.shape)}")
    if K.shape[1] != V.shape[1] or K.shape[2] != V.shape[2] or K.shape[3] != Q.shape[3]:
        raise KernelInputError(f"FlexAttention: K {list(K.shape)} and V {list(V.shape)} do not "
                               f"fit Q {list(Q.shape)}")
    if softmax_precision is not None:
        work = np_dtype(softmax_precision)
    else:
        work = np.float64 if Q.dtype == np.float64 else np.float32
    if scale is None:
        scale = 1 / np.sqrt(Q.shape[3])
    heads = Q.shape[1]
    k = repeat_kv(K, heads).astype(work)
    scores = (np.matmul(Q.astype(work), np.swapaxes(k, 2, 3)) * work(scale)).astype(work)
    if score_mod is not None:
        scores = _modify(ctx, score_mod, scores, "score_mod")
    probs = softmax_rows(scores)
    if prob_mod is not None:
        probs = _modify(ctx, prob_mod, probs, "prob_mod")
    return np.matmul(probs, repeat_kv(V, heads).astype(work)).astype(V.dtype)


def _modify(ctx, graph, x: np.ndarray, name: str) -> np.ndarray:
    outs = ctx.run(graph, [x])
    if len(outs) != 1 or np.shape(outs[0]) != x.shape:
        raise KernelInputError(f"FlexAttention: {name} must return one tensor of shape "
                               f"{list(x.shape)}")
    return np.asarray(outs[0]).astype(x.dtype, copy=False)
