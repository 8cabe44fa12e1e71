"""onnxkit::Attention: the opset-23 Attention (first output), for models of older opsets.

    Y = softmax(scale * Q @ K^T + attn_mask) @ V
    3D inputs [batch, seq, heads * size] are split into q_num_heads / kv_num_heads heads
    and the result merged back; 4D inputs are [batch, heads, seq, size].

No KV cache inputs. https://onnx.ai/onnx/operators/onnx__Attention.html ; see
docs/onnxkit-domain.md
"""

from onnxkit.ops.fused._common import standard
from onnxkit.ops.registry import op


@op("Attention", 1, domain="onnxkit")
def attention(Q, K, V, attn_mask=None, *, is_causal=0, kv_num_heads=None, q_num_heads=None,
              scale=None, softcap=0.0):
    return standard("Attention", 23)(Q, K, V, attn_mask, is_causal=is_causal,
                                     kv_num_heads=kv_num_heads, q_num_heads=q_num_heads,
                                     scale=scale, softcap=softcap)[0]
