"""Reference kernels: linear algebra (MatMul, Gemm, Einsum, Det)."""
