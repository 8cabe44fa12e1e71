"""Reference kernels: string operators (string tensors are numpy arrays of dtype object)."""
