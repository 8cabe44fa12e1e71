"""The graph viewer: a model drawn as an SVG DAG; click a node to see what it is and did.

    w = onnxkit.show(model)                     # or a Session, a path, ONNX text
    rec = TraceRecorder(keep_values=True)
    sess.run(None, feeds, trace=rec)
    w = onnxkit.show(sess, trace=rec)           # details now include the run's tensors
    w.select("conv1"); w.details_html()         # what clicking shows, from Python
    w.tensor("conv1_out")                       # a TensorView of a value the run kept

Layout and drawing happen in Python (``layout.py``, ``svg.py``); the browser side (a few
lines of JavaScript, ``anywidget``) only shows the SVG, reports clicks and toggles
subgraphs (If / Loop / Scan bodies), which Python then redraws.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import anywidget
import traitlets
from onnx import ModelProto

from onnxkit.loading import load
from onnxkit.runtime.trace import TraceEvent
from onnxkit.widgets.details import node_details, value_details
from onnxkit.widgets.graphdata import Box, GraphData, infer_types, graph_data
from onnxkit.widgets.recorder import TraceRecorder
from onnxkit.widgets.svg import DrawOptions, render_svg

ESM = r"""
function render({ model, el }) {
  el.classList.add("onnxkit-graph-widget");
  const bar = document.createElement("div");
  bar.className = "onnxkit-graph-toolbar";
  const wrap = document.createElement("div");
  wrap.className = "onnxkit-graph-scroll";
  const panel = document.createElement("div");
  panel.className = "onnxkit-graph-details";
  const body = document.createElement("div");
  body.className = "onnxkit-graph-body";
  body.append(wrap, panel);
  el.append(bar, body);
  let zoom = 1.0;
  for (const [label, factor] of [["\u2212", 1 / 1.25], ["+", 1.25], ["1:1", 0]]) {
    const b = document.createElement("button");
    b.textContent = label;
    b.className = "onnxkit-zoom";
    b.addEventListener("click", () => { zoom = factor === 0 ? 1.0 : zoom * factor; scale(); });
    bar.append(b);
  }
  const scale = () => {
    const svg = wrap.querySelector("svg.onnxkit-graph");
    if (!svg) return;
    svg.style.width = (parseFloat(svg.getAttribute("width")) * zoom) + "px";
    svg.style.height = (parseFloat(svg.getAttribute("height")) * zoom) + "px";
  };
  const mark = () => {
    const id = model.get("selected");
    for (const g of wrap.querySelectorAll("g[data-id]")) {
      g.classList.toggle("onnxkit-selected", id !== "" && g.getAttribute("data-id") === id);
    }
  };
  const draw = () => { wrap.innerHTML = model.get("svg"); scale(); mark(); };
  const details = () => {
    const id = model.get("selected");
    const all = model.get("details");
    panel.innerHTML = (id && all[id]) ? all[id] :
      '<p class="onnxkit-hint">Click a node to see its attributes' +
      (model.get("traced") ? " and the tensors of the run." : ".") + "</p>";
    mark();
  };
  wrap.addEventListener("click", (ev) => {
    const toggle = ev.target.closest("text.onnxkit-expander");
    if (toggle) {
      const id = toggle.getAttribute("data-id");
      const now = model.get("expanded");
      model.set("expanded", now.includes(id) ? now.filter((x) => x !== id) : [...now, id]);
      model.save_changes();
      return;
    }
    const g = ev.target.closest("g.onnxkit-node, g.onnxkit-value");
    model.set("selected", g ? g.getAttribute("data-id") : "");
    model.save_changes();
  });
  model.on("change:svg", draw);
  model.on("change:selected", details);
  model.on("change:details", details);
  draw();
  details();
}
export default { render };
"""

CSS = """
.onnxkit-graph-widget { font-family: system-ui, sans-serif; font-size: 13px; }
.onnxkit-graph-body { display: flex; gap: 8px; align-items: flex-start; }
.onnxkit-graph-scroll { overflow: auto; max-height: 640px; max-width: 100%; flex: 1 1 auto;
  border: 1px solid #d0d7e2; background: #fff; }
.onnxkit-graph-details { flex: 0 0 320px; max-height: 640px; overflow: auto; color: #1d2330;
  background: #f7f9fc; border: 1px solid #d0d7e2; padding: 6px 8px; }
.onnxkit-graph-details table { border-collapse: collapse; margin: 4px 0; }
.onnxkit-graph-details td, .onnxkit-graph-details th { border-bottom: 1px solid #e1e6ee;
  padding: 2px 4px; text-align: left; vertical-align: top; font-size: 12px; }
.onnxkit-graph-details h4 { margin: 2px 0 4px 0; }
.onnxkit-graph-toolbar button { margin: 0 2px 4px 0; min-width: 28px; }
"""


class GraphWidget(anywidget.AnyWidget):
    """An interactive drawing of a model's graph (see the module docstring)."""

    _esm = ESM
    _css = CSS
    svg = traitlets.Unicode("").tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    traced = traitlets.Bool(False).tag(sync=True)

    def __init__(self, model: Any, *, trace: TraceRecorder | Iterable[TraceEvent] | None = None,
                 expand: bool | Iterable[str] = False, inline_initializers: bool = True,
                 highlight: Mapping[str, str] | None = None, infer: bool = True):
        self.model = as_model(model)
        self.trace = as_recorder(trace)
        typed = infer_types(self.model) if infer else self.model
        self.graph: GraphData = graph_data(typed.graph, inline_initializers=inline_initializers)
        self.opsets = {("" if o.domain == "ai.onnx" else o.domain): int(o.version)
                       for o in self.model.opset_import}
        self.highlight = dict(highlight or {})
        self.trace_ids = {b.trace_key: b.id for b in self.graph.walk()}  # trace key -> node id
        if expand is True:
            opened = ["*"]
        elif expand is False:
            opened = []
        else:
            opened = [self.node_id(n) for n in expand]
        super().__init__(expanded=opened, traced=self.trace is not None)
        self.details = self._all_details()
        self.svg = self.render()
        self.observe(self._redraw, names=["expanded"])

    # --- Python-side API --------------------------------------------------------------

    @property
    def nodes(self) -> list[Box]:
        """Node boxes of the main graph (subgraph nodes: ``self.graph.walk()``)."""
        return self.graph.nodes

    @property
    def edges(self):
        return self.graph.edges

    def node_id(self, name_or_id: str) -> str:
        """The drawing's id of a node given its name (or its id)."""
        for box in self.graph.walk():
            if box.id == name_or_id:
                return box.id
        for box in self.graph.walk():
            if box.node.name == name_or_id:
                return box.id
        for box in self.graph.boxes:
            if box.kind != "node" and box.label == name_or_id:
                return box.id
        raise KeyError(f"no node or value named {name_or_id!r} in graph {self.graph.name!r}")

    def select(self, name_or_id: str) -> "GraphWidget":
        """Select a node as a click would; ``details_html()`` then returns its panel."""
        self.selected = self.node_id(name_or_id)
        return self

    def details_html(self) -> str:
        return self.details.get(self.selected, "")

    def expand(self, *names: str) -> None:
        """Draw the subgraphs of these nodes (all nodes when none are named)."""
        ids = ["*"] if not names else [self.node_id(n) for n in names]
        self.expanded = sorted(set(self.expanded) | set(ids))

    def collapse(self) -> None:
        self.expanded = []

    def tensor(self, name: str, path: str = ""):
        """A ``TensorView`` of a value the attached trace kept (``keep_values=True``)."""
        from onnxkit.widgets.tensor import TensorView

        if self.trace is None:
            raise ValueError("no trace attached: show(model, trace=TraceRecorder(keep_values=True))")
        return TensorView(self.trace.value(name, path), name=name)

    def render(self) -> str:
        ran = None
        if self.trace is not None:
            ran = frozenset(self.trace_ids[k] for k in self.trace.keys() if k in self.trace_ids)
        options = DrawOptions(frozenset(self.expanded), self.highlight, ran)
        return render_svg(self.graph, options, title=self.graph.name)

    def save_svg(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg)

    # --- internals --------------------------------------------------------------------

    def _all_details(self) -> dict[str, str]:
        out = {}
        stack = [self.graph]
        while stack:
            gd = stack.pop()
            for box in gd.boxes:
                if box.kind == "node":
                    out[box.id] = node_details(box, self.opsets, gd.types, self.trace)
                    stack.extend(sub for _, sub in box.subgraphs)
                else:
                    out[box.id] = value_details(box)
        return out

    def _redraw(self, _change=None) -> None:
        self.svg = self.render()

    def __repr__(self) -> str:
        n_all = sum(1 for _ in self.graph.walk())
        nested = f" ({n_all} with subgraphs)" if n_all != len(self.nodes) else ""
        traced = f", trace of {len(self.trace)} node runs" if self.trace is not None else ""
        return (f"<onnxkit GraphWidget {self.graph.name!r}: {len(self.nodes)} nodes{nested}, "
                f"{len(self.edges)} edges{traced}>")


def as_model(obj: Any) -> ModelProto:
    """A ModelProto from a ModelProto, a Session, a path, bytes or ONNX text."""
    model = getattr(obj, "model", None)
    if isinstance(model, ModelProto):
        return model
    return load(obj)


def as_recorder(trace) -> TraceRecorder | None:
    if trace is None or isinstance(trace, TraceRecorder):
        return trace
    rec = TraceRecorder()
    for event in trace:
        rec(event)
    return rec


def show(model: Any, *, trace: TraceRecorder | Iterable[TraceEvent] | None = None,
         feeds: Mapping[str, Any] | None = None, expand: bool | Iterable[str] = False,
         executor: str = "reference", **options) -> GraphWidget:
    """The graph widget for a model or Session; with ``feeds``, run it first and attach the trace."""
    if feeds is not None:
        from onnxkit.runtime.session import Session

        session = model if isinstance(getattr(model, "model", None), ModelProto) else Session(
            as_model(model), executor=executor)
        if trace is None:
            trace = TraceRecorder(keep_values=True)
        elif not isinstance(trace, TraceRecorder):
            raise TypeError("with feeds, trace must be a TraceRecorder (or None for a new one)")
        session.run(None, feeds, trace=trace)
        model = session
    return GraphWidget(model, trace=trace, expand=expand, **options)
