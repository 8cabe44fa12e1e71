"""onnxkit: learn how ONNX works, run models with a runtime you can read, check conformance.

    import onnxkit
    sess = onnxkit.Session("model.onnx", executor="reference")
    outputs = sess.run(None, {"x": x})
"""

from onnxkit.api import Session, bisect, optimize, run
from onnxkit.errors import OnnxkitError
from onnxkit.loading import load
from onnxkit.magic import load_ipython_extension  # cheap: does not import IPython
from onnxkit.runtime.limits import Limits
from onnxkit.runtime.trace import TraceEvent

__version__ = "0.1.0"


def show(model, **options):
    """Draw a model's (or Session's) graph as an interactive widget (``onnxkit.widgets.show``)."""
    from onnxkit.widgets import show as _show  # lazy: anywidget and IPython are slow to import

    return _show(model, **options)


__all__ = ["Session", "run", "load", "optimize", "bisect", "show", "Limits", "TraceEvent",
           "OnnxkitError", "load_ipython_extension", "__version__"]
