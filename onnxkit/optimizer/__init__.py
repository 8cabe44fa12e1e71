"""The graph optimizer: levels 0-3, every rewrite explained.

    model2, report = onnxkit.optimizer.optimize(model, level=2)
    print(report)                       # per pass: rewrites, nodes in and out
    onnxkit.optimizer.bisect(model, feeds, level=2)    # which rewrite changed the outputs?

Passes live one per module in ``onnxkit/optimizer/passes/``; ``levels.py`` lists those of
each level. A level-1 model is standard ONNX; fusions without a standard operator use the
``onnxkit`` domain (docs/onnxkit-domain.md). See docs/optimizer.md.
"""

from onnxkit.optimizer.bisect import BisectResult, bisect
from onnxkit.optimizer.manager import optimize
from onnxkit.optimizer.report import Report

__all__ = ["optimize", "bisect", "Report", "BisectResult"]
