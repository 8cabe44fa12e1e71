"""The model kinds benchmark: real architectures, exported the way their users export them,
built by the benchmark from random weights (``python -m benchmarks.kinds``)."""
