"""Reference kernels: sequence operators (a sequence is a Python list of tensors)."""
