"""Reference kernels: optional operators (an empty optional is ``None``)."""
