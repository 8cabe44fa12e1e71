"""The graph viewer: a model drawn as an SVG DAG; click a node to see what it is and did.

    w = onnxkit.show(model)                     # or a Session, a path, ONNX text
    rec = TraceRecorder(keep_values=True)
    sess.run(None, feeds, trace=rec)
    w = onnxkit.show(sess, trace=rec)           # details now include the run's tensors
    w.select("conv1"); w.details_html()         # what clicking shows, from Python
    w.tensor("conv1_out")                       # a TensorView of a value the run kept

Big graphs: repeated blocks (a transformer's layers) are found by ``blocks.py`` and drawn
folded, one box each, when the graph has more than ``FOLD_ABOVE`` nodes::

    w.blocks; w.unfold("layers/layers.3"); w.fold()   # fold every block again
    w.search("Softmax")                               # names of the matching nodes, marked

Layout and drawing happen in Python (``layout.py``, ``svg.py``); the browser side
(``graph_front.py``, ``anywidget``) only shows the SVG with zoom, fit, search and a minimap,
reports clicks and toggles subgraphs and blocks, which Python then redraws. Outside a live
kernel (a saved notebook, nbviewer, GitHub, the docs site) the display's static
``image/svg+xml`` is shown instead (``png=True`` adds an ``image/png``, with resvg-py).
"""

from __future__ import annotations

import base64
import contextlib
import gc
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Mapping

import anywidget
import traitlets
from onnx import ModelProto

from onnxkit.errors import quoted
from onnxkit.loading import load
from onnxkit.runtime.trace import TraceEvent
from onnxkit.widgets import _escape as esc
from onnxkit.widgets.blocks import Block, data_nodes, find_blocks
from onnxkit.widgets.blocks import fold as fold_blocks
from onnxkit.widgets.blocks import search as search_nodes
from onnxkit.widgets.details import node_details, value_details
from onnxkit.widgets.graph_front import CSS, ESM
from onnxkit.widgets.graphdata import Box, GraphData, graph_data, infer_types, retype
from onnxkit.widgets.raster import png_of
from onnxkit.widgets.recorder import TraceRecorder
from onnxkit.widgets.svg import DrawOptions, render_svg

FOLD_ABOVE = 300  # nodes: bigger graphs start with their repeated blocks folded
EAGER_DETAILS = 1000  # nodes: bigger graphs make a node's panel when it is first selected

class GraphWidget(anywidget.AnyWidget):
    """An interactive drawing of a model's graph (see the module docstring)."""

    _esm = ESM
    _css = CSS
    svg = traitlets.Unicode("").tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    traced = traitlets.Bool(False).tag(sync=True)
    opened = traitlets.List(traitlets.Unicode()).tag(sync=True)  # unfolded block ids; "*": all
    query = traitlets.Unicode("").tag(sync=True)
    matches = traitlets.List(traitlets.Unicode()).tag(sync=True)  # drawn ids holding a match
    match_count = traitlets.Int(0).tag(sync=True)  # matching nodes, folded ones included

    def __init__(self, model: Any, *, trace: TraceRecorder | Iterable[TraceEvent] | None = None,
                 expand: bool | Iterable[str] = False, inline_initializers: bool = True,
                 highlight: Mapping[str, str] | None = None, infer: bool = True,
                 fold: bool | None = None, png: bool = False):
        with paused_gc():
            self._build(model, trace, expand, inline_initializers, highlight, infer, fold, png)

    def _build(self, model, trace, expand, inline_initializers, highlight, infer, fold, png) -> None:
        self.model = as_model(model)
        self.trace = as_recorder(trace)
        # onnx infers shapes without holding the GIL: meanwhile the graph's records and its
        # blocks are made (no types needed), and the types are filled in afterwards
        pool = ThreadPoolExecutor(1) if infer else None
        typed = pool.submit(infer_types, self.model) if pool else None
        try:
            self._build_graph(inline_initializers, fold)
            if typed is not None:
                retype(self.graph, typed.result().graph)
        finally:
            if pool is not None:
                pool.shutdown()
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
        self.png = png  # the display also carries a PNG (resvg-py), for viewers without SVG
        folded = fold is True or (fold is None and len(self.graph.nodes) > FOLD_ABOVE)
        self._hidden: dict[str, Block] = {}
        unfolded = [] if folded else ["*"]
        self._lazy = sum(1 for _ in self.graph.walk()) > EAGER_DETAILS
        details = {} if self._lazy else {**self._all_details(),
                                         **{b.id: self._block_details(b) for b in self.blocks}}
        # the drawing and details go in the state the widget opens with: set afterwards, as
        # separate updates, a view created meanwhile could miss them and stay empty
        super().__init__(expanded=opened, traced=self.trace is not None, opened=unfolded,
                         svg=self.render(opened, unfolded), details=details)
        self.observe(self._redraw, names=["expanded", "opened"])
        self.observe(self._searched, names=["query"])
        self.observe(self._selected, names=["selected"])

    def _build_graph(self, inline_initializers: bool, fold: bool | None) -> None:
        self.graph: GraphData = graph_data(self.model.graph, inline_initializers=inline_initializers)
        data = data_nodes(self.graph) if fold is not False else set()
        self.blocks: list[Block] = [] if fold is False else find_blocks(self.graph, data=data)
        self._data = data if self.blocks else set()

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
        for block in self.blocks:
            if block.id == name_or_id:
                return block.id
        raise KeyError(f"no node or value named {quoted(name_or_id)} in graph {quoted(self.graph.name)}")

    def select(self, name_or_id: str) -> "GraphWidget":
        """Select a node as a click would; ``details_html()`` then returns its panel."""
        self.selected = self.node_id(name_or_id)
        return self

    def details_html(self) -> str:
        return self.details.get(self.selected, "")

    def unfold(self, *names: str) -> None:
        """Draw these blocks' nodes (every block when none are named); see ``blocks``."""
        ids = ["*"] if not names else [self.block(n).id for n in names]
        self.opened = sorted(set(self.opened) | set(ids))

    def fold(self, *names: str) -> None:
        """Draw these blocks as one box each again (every block when none are named)."""
        if not names:
            self.opened = []
            return
        drop = {self.block(n).id for n in names}
        opened = {b.id for b in self.blocks} if "*" in self.opened else set(self.opened)
        self.opened = sorted(opened - drop)

    def block(self, name: str) -> Block:
        """A block by its id (``block:layers/layers.3``), scope or last scope name."""
        for b in self.blocks:
            if name in (b.id, b.scope, b.name):
                return b
        raise KeyError(f"no repeated block named {name!r} in graph {self.graph.name!r}")

    def search(self, query: str) -> list[str]:
        """Names (ids when unnamed) of the nodes whose op type or name contains ``query``;
        the drawing marks them, or the folded blocks that hold them."""
        self.query = query
        return [b.node.name or b.id for b in search_nodes(self.graph, query)]

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

    def render(self, expanded=None, opened=None) -> str:
        """The SVG for the current (or the given) expanded subgraphs and unfolded blocks."""
        expanded = self.expanded if expanded is None else expanded
        opened = self.opened if opened is None else opened
        ran = None
        if self.trace is not None:
            ran = frozenset(self.trace_ids[k] for k in self.trace.keys() if k in self.trace_ids)
        options = DrawOptions(frozenset(expanded), self.highlight, ran)
        opened = {b.id for b in self.blocks} if "*" in opened else set(opened)
        shown, self._hidden = fold_blocks(self.graph, self.blocks, opened, self._data)
        return render_svg(shown, options, title=self.graph.name)

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

    @staticmethod
    def _block_details(b: Block) -> str:
        ops = "".join(f"<tr><td>{esc.text(op)}</td><td>{n}</td></tr>" for op, n in b.ops.most_common())
        return (f'<div class="onnxkit-details" data-id="{esc.attr(b.id)}">'
                f"<h4>block {esc.text(b.scope)}</h4><p>{len(b.members)} nodes; "
                f"{b.alike} blocks of this structure. Click <b>+ unfold</b> to draw them."
                f"</p><table><tr><th>op</th><th>nodes</th></tr>{ops}</table></div>")

    def _selected(self, change) -> None:
        box_id = change["new"]
        if self._lazy and box_id and box_id not in self.details:
            self.details = {**self.details, **self._details_of(box_id)}

    def _details_of(self, box_id: str) -> dict[str, str]:
        for b in self.blocks:
            if b.id == box_id:
                return {box_id: self._block_details(b)}
        stack = [self.graph]
        while stack:
            gd = stack.pop()
            for box in gd.boxes:
                if box.id == box_id:
                    if box.kind == "node":
                        return {box_id: node_details(box, self.opsets, gd.types, self.trace)}
                    return {box_id: value_details(box)}
                stack.extend(sub for _, sub in box.subgraphs)
        return {}

    def _searched(self, change) -> None:
        found = search_nodes(self.graph, change["new"])
        drawn = [self._hidden[b.id].id if b.id in self._hidden else b.id for b in found]
        self.match_count = len(found)
        self.matches = list(dict.fromkeys(drawn))

    def _redraw(self, _change=None) -> None:
        with paused_gc():
            self.svg = self.render()
        if self.query:
            self._searched({"new": self.query})

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, with the drawing as a static SVG for where no kernel runs."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = {**data, "image/svg+xml": self.svg}
        if self.png:
            data["image/png"] = base64.b64encode(png_of(self.svg)).decode("ascii")
        return data, meta

    def __repr__(self) -> str:
        n_all = sum(1 for _ in self.graph.walk())
        nested = f" ({n_all} with subgraphs)" if n_all != len(self.nodes) else ""
        traced = f", trace of {len(self.trace)} node runs" if self.trace is not None else ""
        big = self.blocks and len(self.nodes) > FOLD_ABOVE
        blocks = f", {len(self.blocks)} repeated blocks" if big else ""
        return (f"<onnxkit GraphWidget {self.graph.name!r}: {len(self.nodes)} nodes{nested}, "
                f"{len(self.edges)} edges{blocks}{traced}>")


@contextlib.contextmanager
def paused_gc():
    """Python's cycle collector paused while a big graph's records are made: they are many
    objects and none forms a cycle, yet each full collection they set off walks every object
    of the kernel."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


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
