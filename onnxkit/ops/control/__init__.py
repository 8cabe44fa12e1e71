"""Reference kernels: control operators."""
