"""The leaf of onnxkit: what every other layer builds on, importing none of them.

| module    | holds                                                                    |
|-----------|--------------------------------------------------------------------------|
| registry  | ``Kernel``, ``Registry``, the ``@op`` decorator, onnx schema look-ups    |
| limits    | ``Limits``, ``MemoryBudget``, ``check_allocation`` (per Session / run)   |
| context   | ``KernelContext``: what a scope-aware kernel receives as ``ctx``         |
| executor  | ``Executor``: how kernels are called, where values live (the protocol)   |
| values    | ONNX types and the Python values carrying them (dtypes, sizes, tensors)  |

The one exception hierarchy is ``onnxkit.errors`` (a leaf module beside this package,
kept at its public path). Layers above: ``runtime/`` (plan, evaluator, session core) on
this package only; the backends (``ops/`` reference, ``kernels/cpu``, ``kernels/cuda``),
each exporting a ``make_executor`` that ``runtime.executors.BACKENDS`` names; the optimizer;
and ``onnxkit.api``, which composes ``Session(level=)``, ``optimize`` and ``bisect``.
"""
