"""Fast kernels for the `cpu` (Numba) and `cuda` (Numba CUDA) executors."""
