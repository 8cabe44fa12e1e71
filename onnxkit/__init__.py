"""onnxkit: learn how ONNX works, run models with a runtime you can read, check conformance.

    import onnxkit
    sess = onnxkit.Session("model.onnx", executor="reference")
    outputs = sess.run(None, {"x": x})
"""

from onnxkit.errors import OnnxkitError
from onnxkit.loading import load
from onnxkit.runtime.limits import Limits
from onnxkit.runtime.session import Session, run
from onnxkit.runtime.trace import TraceEvent

__version__ = "0.1.0"

__all__ = ["Session", "run", "load", "Limits", "TraceEvent", "OnnxkitError", "__version__"]
