"""Draw a ``GraphData`` as SVG: boxes, edges, and expanded subgraphs drawn inside their node.

Stable classes for styling and for tests:

    svg.onnxkit-graph                 the drawing (data-nodes / data-edges: counts at depth 0)
    g.onnxkit-node                    one operator node (data-id, data-op, data-depth)
    g.onnxkit-value                   a graph input / output / initializer / outer value,
                                      with onnxkit-input, onnxkit-output, onnxkit-initializer,
                                      onnxkit-outer or onnxkit-missing
    path.onnxkit-edge                 one (value, reader) connection (onnxkit-faint: only
                                      shape values between folded blocks; onnxkit-implicit: an
                                      outer value read inside the reader's subgraph)
    g.onnxkit-subgraph                an expanded If / Loop / Scan body (data-attr)
    text.onnxkit-expander             click to expand or fold a node's subgraphs (data-id)
    g.onnxkit-block                   a folded repeated block (data-id "block:<scope>",
                                      data-members: how many nodes it hides)
    text.onnxkit-unfold               click to unfold that block (data-id)

Every string from the model is escaped (``_escape``); sizes are estimated from text length.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from onnxkit.widgets import _escape as esc
from onnxkit.widgets.graphdata import Box, GraphData
from onnxkit.widgets.layout import layered_layout

LINE = 15.0
PAD = 7.0
CHAR = 7.2  # bold 12px sans
MONO = 6.7  # 11px monospace
MAX_LABEL = 30
MAX_PARAMS = 3
SUB_GAP = 16.0
HEADER = 2 * LINE + PAD

CATEGORIES = {
    "conv": ("Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "FusedConv", "DeformConv"),
    "linear": ("Gemm", "MatMul", "MatMulInteger", "QLinearMatMul", "Einsum", "FusedMatMul"),
    "activation": ("Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Gelu", "HardSigmoid",
                   "HardSwish", "Softplus", "Softsign", "PRelu", "Mish", "Softmax", "LogSoftmax",
                   "Clip", "ThresholdedRelu", "Celu", "Swish"),
    "pool": ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool",
             "MaxRoiPool", "RoiAlign"),
    "norm": ("BatchNormalization", "LayerNormalization", "InstanceNormalization",
             "GroupNormalization", "LRN", "Dropout", "SkipLayerNormalization"),
    "shape": ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split",
              "Slice", "Gather", "Shape", "Expand", "Tile", "Pad", "ConstantOfShape",
              "Constant", "Identity", "Cast", "Size", "GatherElements", "GatherND", "ScatterND"),
    "control": ("If", "Loop", "Scan", "SequenceMap"),
}
_CATEGORY_OF = {op: cat for cat, ops in CATEGORIES.items() for op in ops}

STYLE = """
svg.onnxkit-graph { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; }
svg.onnxkit-graph .onnxkit-background { fill: #ffffff; }
svg.onnxkit-graph rect.onnxkit-box { fill: #eef1f5; stroke: #5b6b7f; stroke-width: 1; }
svg.onnxkit-graph .onnxkit-cat-conv > rect.onnxkit-box { fill: #dbe9fb; }
svg.onnxkit-graph .onnxkit-cat-linear > rect.onnxkit-box { fill: #e3dcfb; }
svg.onnxkit-graph .onnxkit-cat-activation > rect.onnxkit-box { fill: #fbe3d6; }
svg.onnxkit-graph .onnxkit-cat-pool > rect.onnxkit-box { fill: #daf2e4; }
svg.onnxkit-graph .onnxkit-cat-norm > rect.onnxkit-box { fill: #f6efcf; }
svg.onnxkit-graph .onnxkit-cat-shape > rect.onnxkit-box { fill: #ececec; }
svg.onnxkit-graph .onnxkit-cat-control > rect.onnxkit-box { fill: #f9f9fb; stroke-dasharray: 4 2; }
svg.onnxkit-graph .onnxkit-value > rect.onnxkit-box { fill: #ffffff; }
svg.onnxkit-graph .onnxkit-input > rect.onnxkit-box { stroke: #1f7a3a; stroke-width: 1.5; }
svg.onnxkit-graph .onnxkit-output > rect.onnxkit-box { stroke: #a3361a; stroke-width: 1.5; }
svg.onnxkit-graph .onnxkit-initializer > rect.onnxkit-box { stroke: #7a6a1f; stroke-dasharray: 3 2; }
svg.onnxkit-graph .onnxkit-outer > rect.onnxkit-box { stroke: #666; stroke-dasharray: 2 2; }
svg.onnxkit-graph .onnxkit-missing > rect.onnxkit-box { stroke: #c00; stroke-dasharray: 2 2; }
svg.onnxkit-graph .onnxkit-removed > rect.onnxkit-box { fill: #f9d0d0; stroke: #b00020; stroke-width: 2; }
svg.onnxkit-graph .onnxkit-added > rect.onnxkit-box { fill: #d2f4d2; stroke: #127a12; stroke-width: 2; }
svg.onnxkit-graph .onnxkit-replaced > rect.onnxkit-box { fill: #fdebc8; stroke: #b26b00; stroke-width: 2; }
svg.onnxkit-graph .onnxkit-not-run { opacity: 0.45; }
svg.onnxkit-graph .onnxkit-selected > rect.onnxkit-box { stroke: #0b57d0; stroke-width: 3; }
svg.onnxkit-graph .onnxkit-node { cursor: pointer; }
svg.onnxkit-graph text { font-size: 12px; fill: #1d2330; }
svg.onnxkit-graph text.onnxkit-op { font-weight: 600; }
svg.onnxkit-graph text.onnxkit-name, svg.onnxkit-graph text.onnxkit-type,
svg.onnxkit-graph text.onnxkit-param, svg.onnxkit-graph text.onnxkit-edge-label {
  font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 11px; }
svg.onnxkit-graph text.onnxkit-param { fill: #6b5a10; }
svg.onnxkit-graph text.onnxkit-edge-label { fill: #5b6b7f; }
svg.onnxkit-graph text.onnxkit-expander { fill: #0b57d0; cursor: pointer; }
svg.onnxkit-graph text.onnxkit-caption { font-style: italic; fill: #5b6b7f; }
svg.onnxkit-graph path.onnxkit-edge { fill: none; stroke: #7d8ba0; stroke-width: 1.3; }
svg.onnxkit-graph path.onnxkit-implicit { stroke-dasharray: 4 3; }
svg.onnxkit-graph path.onnxkit-faint { stroke-opacity: 0.35; stroke-dasharray: 2 3; }
svg.onnxkit-graph rect.onnxkit-subgraph-frame { fill: #ffffff; stroke: #b8c2d0; }
svg.onnxkit-graph .onnxkit-block > rect.onnxkit-box { fill: #e6ecfa; stroke: #3d5a99; stroke-width: 1.5; }
svg.onnxkit-graph .onnxkit-block > rect.onnxkit-stack { fill: #f3f6fc; stroke: #3d5a99; }
svg.onnxkit-graph .onnxkit-block { cursor: pointer; }
svg.onnxkit-graph text.onnxkit-unfold { fill: #0b57d0; cursor: pointer; }
svg.onnxkit-graph .onnxkit-match > rect.onnxkit-box { stroke: #e37400; stroke-width: 3; }
"""


@dataclass
class DrawOptions:
    expanded: frozenset = frozenset()  # node ids whose subgraphs are drawn; {"*"}: all
    highlight: dict = field(default_factory=dict)  # box id -> extra CSS class
    ran: frozenset | None = None  # node ids a trace saw run (others drawn faded)
    selected: str = ""

    def is_expanded(self, box_id: str) -> bool:
        return "*" in self.expanded or box_id in self.expanded


@dataclass
class Drawing:
    body: str
    width: float
    height: float
    nodes: int  # at depth 0
    edges: int


def render_svg(gd: GraphData, options: DrawOptions | None = None, title: str = "") -> str:
    """The whole ``<svg class="onnxkit-graph">`` element."""
    options = options or DrawOptions()
    d = draw_graph(gd, options, depth=0)
    w, h = round(d.width, 1), round(d.height, 1)
    head = (f'<svg class="onnxkit-graph" xmlns="http://www.w3.org/2000/svg" width="{w}" '
            f'height="{h}" viewBox="0 0 {w} {h}" data-nodes="{d.nodes}" data-edges="{d.edges}" '
            f'data-graph="{esc.attr(gd.name)}">')
    titled = f"<title>{esc.text(title)}</title>" if title else ""
    return (f"{head}{titled}<style>{STYLE}</style>"
            f'<rect class="onnxkit-background" width="{w}" height="{h}"/>{d.body}</svg>')


def draw_graph(gd: GraphData, options: DrawOptions, depth: int) -> Drawing:
    nested: dict[str, list[tuple[str, Drawing]]] = {}
    sizes = []
    for box in gd.boxes:
        if box.kind == "node" and box.subgraphs and options.is_expanded(box.id):
            nested[box.id] = [(attr, draw_graph(sub, options, depth + 1)) for attr, sub in box.subgraphs]
        sizes.append((box.id, *box_size(box, nested.get(box.id))))
    n_out = {}
    for e in gd.edges:
        n_out[e.source] = max(n_out.get(e.source, 1), e.port + 1)
    ports = [(e.port, n_out[e.source]) for e in gd.edges]
    lay = layered_layout(sizes, [(e.source, e.target) for e in gd.edges], ports=ports)

    parts = ['<g class="onnxkit-edges">']
    labelled: set[tuple[str, str]] = set()
    right = lay.width  # edge labels may stick out to the right of the boxes
    for edge, points in zip(gd.edges, lay.routes):
        cls = "onnxkit-edge onnxkit-implicit" if edge.implicit else "onnxkit-edge"
        if edge.faint:
            cls += " onnxkit-faint"
        tip = f"{edge.value}: {edge.type}" if edge.type else edge.value
        label = ""
        if edge.type and (edge.source, edge.value) not in labelled and not edge.implicit:
            labelled.add((edge.source, edge.value))
            x0, y0 = points[0]
            shown = esc.shorten(edge.type, 28)
            right = max(right, x0 + 4 + len(shown) * MONO + PAD)
            label = (f'<text class="onnxkit-edge-label" x="{x0 + 4:.1f}" y="{y0 + 13:.1f}">'
                     f"{esc.text(shown)}</text>")
        parts.append(f'<g class="onnxkit-edge-group" data-value="{esc.attr(edge.value)}">'
                     f"<title>{esc.text(tip)}</title>"
                     f'<path class="{cls}" d="{edge_path(points)}"/>{label}</g>')
    parts.append('</g><g class="onnxkit-nodes">')
    for box in gd.boxes:
        x, y = lay.positions[box.id]
        w, h = lay.sizes[box.id]
        parts.append(draw_box(box, x, y, w, h, options, depth, nested.get(box.id)))
    parts.append("</g>")
    n_nodes = sum(1 for b in gd.boxes if b.kind == "node")
    return Drawing("".join(parts), round(right, 1), lay.height, n_nodes, len(gd.edges))


def edge_path(points: list[tuple[float, float]]) -> str:
    """Vertical cubic curves through the route, then an arrowhead at the end."""
    (x0, y0), rest = points[0], points[1:]
    d = [f"M{x0:.1f},{y0:.1f}"]
    px, py = x0, y0
    for x, y in rest:
        my = (py + y) / 2
        d.append(f"C{px:.1f},{my:.1f} {x:.1f},{my:.1f} {x:.1f},{y:.1f}")
        px, py = x, y
    d.append(f"M{px - 4:.1f},{py - 7:.1f}L{px:.1f},{py:.1f}L{px + 4:.1f},{py - 7:.1f}")
    return " ".join(d)


def box_lines(box: Box) -> list[tuple[str, str]]:
    """(CSS class, text) per line of a box, before escaping."""
    if box.kind == "block":
        lines = [("onnxkit-op", box.label), ("onnxkit-name", box.sublabel)]
        return lines + [("onnxkit-param", f"{op} {n}") for op, n in box.params]
    if box.kind != "node":
        lines = [("onnxkit-name-main", box.label)]
        if box.sublabel:
            lines.append(("onnxkit-type", box.sublabel))
        return lines
    lines = [("onnxkit-op", box.label)]
    if box.sublabel:
        lines.append(("onnxkit-name", box.sublabel))
    for name, typ in box.params[:MAX_PARAMS]:
        lines.append(("onnxkit-param", f"{esc.shorten(name, 18)} {typ}".strip()))
    if len(box.params) > MAX_PARAMS:
        lines.append(("onnxkit-param", f"+{len(box.params) - MAX_PARAMS} more"))
    return lines


def box_size(box: Box, nested: list[tuple[str, Drawing]] | None) -> tuple[float, float]:
    lines = box_lines(box)
    widths = [len(esc.shorten(t, MAX_LABEL)) * (CHAR if c in ("onnxkit-op", "onnxkit-name-main") else MONO)
              for c, t in lines]
    w = max(widths + [40.0]) + 2 * PAD
    h = len(lines) * LINE + 2 * PAD
    if box.subgraphs or box.kind == "block":
        h += LINE
        w = max(w, 16 + MONO * len(expander_text(box, bool(nested))) + 2 * PAD)
    if nested:
        inner_w = sum(d.width for _, d in nested) + SUB_GAP * (len(nested) - 1)
        inner_h = max(d.height for _, d in nested) + LINE
        w = max(w, inner_w + 2 * PAD)
        h += inner_h + PAD
    return round(w, 1), round(h, 1)


def expander_text(box: Box, expanded: bool) -> str:
    if box.kind == "block":
        return "+ unfold"
    names = ", ".join(attr for attr, _ in box.subgraphs)
    sign = "\u2212" if expanded else "+"
    return f"{sign} {names}"


def category(box: Box) -> str:
    op = box.label.split("::")[-1]
    return _CATEGORY_OF.get(op, "other")


def draw_box(box: Box, x: float, y: float, w: float, h: float, options: DrawOptions,
             depth: int, nested: list[tuple[str, Drawing]] | None) -> str:
    if box.kind == "node":
        classes = ["onnxkit-node", f"onnxkit-cat-{category(box)}"]
    elif box.kind == "block":
        classes = ["onnxkit-block"]
    else:
        classes = ["onnxkit-value", f"onnxkit-{box.kind}"]
    extra = options.highlight.get(box.id)
    if extra:
        classes.append(extra)
    if box.kind == "node" and options.ran is not None and box.id not in options.ran:
        classes.append("onnxkit-not-run")
    if box.id == options.selected:
        classes.append("onnxkit-selected")
    op_attr = f' data-op="{esc.attr(box.label)}"' if box.kind == "node" else ""
    if box.kind == "block":
        op_attr = f' data-members="{box.members}"'
    radius = 11 if box.kind not in ("node", "block") else 4
    out = [f'<g class="{" ".join(classes)}" data-id="{esc.attr(box.id)}"{op_attr} '
           f'data-depth="{depth}" transform="translate({x:.1f},{y:.1f})">',
           f"<title>{esc.text(box_title(box))}</title>"]
    if box.kind == "block":  # a stack of cards: one drawn for many
        out.append(f'<rect class="onnxkit-stack" x="4" y="-4" width="{w:.1f}" height="{h:.1f}" rx="4"/>')
    out.append(f'<rect class="onnxkit-box" width="{w:.1f}" height="{h:.1f}" rx="{radius}"/>')
    ty = PAD + 11
    for cls, line in box_lines(box):
        anchor = f'x="{w / 2:.1f}" text-anchor="middle"'
        out.append(f'<text class="{cls}" {anchor} y="{ty:.1f}">{esc.text(esc.shorten(line, MAX_LABEL))}</text>')
        ty += LINE
    if box.kind == "block":
        out.append(f'<text class="onnxkit-unfold" data-id="{esc.attr(box.id)}" x="{PAD:.1f}" '
                   f'y="{ty:.1f}">{esc.text(expander_text(box, False))}</text>')
    if box.subgraphs:
        out.append(f'<text class="onnxkit-expander" data-id="{esc.attr(box.id)}" x="{PAD:.1f}" '
                   f'y="{ty:.1f}">{esc.text(expander_text(box, bool(nested)))}</text>')
        ty += LINE
    if nested:
        inner_w = sum(d.width for _, d in nested) + SUB_GAP * (len(nested) - 1)
        sx = (w - inner_w) / 2
        for attr, drawing in nested:
            out.append(f'<g class="onnxkit-subgraph" data-attr="{esc.attr(attr)}" '
                       f'transform="translate({sx:.1f},{ty - 4:.1f})">'
                       f'<text class="onnxkit-caption" x="4" y="11">{esc.text(attr)}</text>'
                       f'<g transform="translate(0,{LINE:.1f})">'
                       f'<rect class="onnxkit-subgraph-frame" width="{drawing.width:.1f}" '
                       f'height="{drawing.height:.1f}" rx="3"/>{drawing.body}</g></g>')
            sx += drawing.width + SUB_GAP
    out.append("</g>")
    return "".join(out)


def box_title(box: Box) -> str:
    if box.kind == "block":
        return f"block {box.label}: {box.sublabel}"
    if box.kind == "node":
        node = box.node
        head = f"{box.label} {node.name!r}" if node.name else box.label
        ins = ", ".join(i or "<absent>" for i in node.input)
        outs = ", ".join(o or "<absent>" for o in node.output)
        return f"{head}\ninputs: {ins}\noutputs: {outs}"
    return f"{box.kind} {box.label}" + (f": {box.sublabel}" if box.sublabel else "")
