"""Reference kernels: math operators."""
