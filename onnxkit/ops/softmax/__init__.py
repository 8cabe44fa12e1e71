"""Reference kernels: Softmax, LogSoftmax and Hardmax."""
