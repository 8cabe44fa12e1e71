"""Replay a traced run node by node on the graph: a slider (and a play button) over the trace.

    rec = TraceRecorder()
    sess.run(None, feeds, trace=rec)
    Stepper(show(sess, trace=rec))         # step k selects the k-th node that ran

The run has already happened; stepping shows, in order, each node with what its inputs and
outputs looked like (the details panel), the nodes still to come drawn in the graph as usual.
"""

from __future__ import annotations

import ipywidgets as widgets

from onnxkit.widgets import _escape as esc
from onnxkit.widgets.graph import GraphWidget
from onnxkit.widgets.recorder import Record


class Stepper(widgets.VBox):
    def __init__(self, graph: GraphWidget, interval_ms: int = 700):
        if graph.trace is None or not graph.trace.records:
            raise ValueError("Stepper needs a graph widget with a trace of a run attached")
        self.graph = graph
        self.records = [r for r in graph.trace.records if r.key in graph.trace_ids]
        last = max(len(self.records) - 1, 0)
        self.play = widgets.Play(min=0, max=last, interval=interval_ms)
        self.slider = widgets.IntSlider(min=0, max=last, description="step")
        self.label = widgets.HTML()
        widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.slider.observe(self._moved, names="value")
        super().__init__(children=[widgets.HBox([self.play, self.slider, self.label]), graph])
        self.add_class("onnxkit-stepper")
        self.step(0)

    def step(self, k: int) -> Record:
        """Select the ``k``-th node run; returns its record (kernel, summaries of its values)."""
        rec = self.records[k]
        self.graph.selected = self.graph.trace_ids[rec.key]
        shown = rec.name or (rec.outputs[0] if rec.outputs else "")
        self.label.value = f"<code>{esc.text(rec.kernel)}</code> {esc.text(shown)}"
        if self.slider.value != k:
            self.slider.value = k
        return rec

    def _moved(self, change) -> None:
        self.step(change["new"])

    def __repr__(self) -> str:
        return f"<onnxkit Stepper: {len(self.records)} steps over {self.graph.graph.name!r}>"
