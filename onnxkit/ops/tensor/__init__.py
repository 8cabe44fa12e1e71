"""Reference kernels: tensor operators."""
