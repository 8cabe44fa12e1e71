"""One module per pass; ``onnxkit/optimizer/levels.py`` lists which run at each level.

Every module's docstring shows the rewrite before and after in ONNX text syntax and exports
``PASS`` (an instance of ``onnxkit.optimizer.base.Pass``).
"""
