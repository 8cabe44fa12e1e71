"""Reference kernels: attention and the ops that serve it (KV caches, RoPE, linear attention).

Attention, FlexAttention (``ai.onnx.preview``), LinearAttention, RotaryEmbedding,
CausalConvWithState and TensorScatter. Head reshapes, grouped-query repetition and the
masked softmax they share live in ``_heads``.
"""
