"""Graded exercises: write kernels, a graph rewrite and models in ONNX text syntax.

The tasks are marked in the source of ``ex*.py`` (``# ## Task 1.1``); their checks are in
``exercises/tests`` and select a task with a pytest marker (``-m task1_1``). See README.md.
"""
