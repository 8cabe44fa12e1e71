"""Benchmarks: the models they run (``python -m benchmarks.models``) and the tables they print."""
