"""Reference kernels: image operators."""
