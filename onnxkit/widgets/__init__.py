"""Views of models and runs for notebooks (docs/widgets.md).

    onnxkit.widgets.show(model)                  GraphWidget: the graph as SVG, click for details
    TraceRecorder(keep_values=True)              a trace callback that keeps what a run did
    Stepper(show(sess, trace=rec))               replay a traced run node by node on the graph
    TensorView(x)                                shape, dtype, statistics, heatmap of a slice
    ProfileView(profile(sess, feeds))            time per op type / per node, table and bars
    DiffView(model, optimized, report)           nodes removed / added / replaced / kept

Layout and drawing are plain Python (``layout.py``, ``svg.py``); the widgets only display.
"""

from onnxkit.widgets.diff import DiffView, model_diff
from onnxkit.widgets.graph import GraphWidget, show
from onnxkit.widgets.profile import Profile, ProfileView, profile
from onnxkit.widgets.recorder import Record, Summary, TraceRecorder, summarize
from onnxkit.widgets.stepper import Stepper
from onnxkit.widgets.tensor import TensorView, tensor_html

__all__ = ["show", "GraphWidget", "TraceRecorder", "Record", "Summary", "summarize",
           "TensorView", "tensor_html", "Profile", "ProfileView", "profile", "DiffView",
           "model_diff", "Stepper"]
