"""A tensor at a glance: dtype, shape, statistics, and a heatmap of one 2-D slice.

    TensorView(x, name="x")          # widget: one slider per leading axis picks the slice
    tensor_html(x, index=(0, 3))     # the same as HTML, for the slice x[0, 3, :, :]

Large slices are sampled (evenly spaced rows and columns, at most ``max_cells`` each way);
the caption says so. NaN cells are grey; the colour scale (viridis) spans the slice's range.
"""

from __future__ import annotations

from typing import Any, Sequence

import ipywidgets as widgets
import numpy as np

from onnxkit.widgets import _escape as esc
from onnxkit.widgets.recorder import numeric_view

VIRIDIS = ("#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962",
           "#addc30", "#fde725")


def colour(t: float) -> str:
    """Viridis at ``t`` in [0, 1] (linear between nine stops)."""
    t = min(max(t, 0.0), 1.0) * (len(VIRIDIS) - 1)
    k = min(int(t), len(VIRIDIS) - 2)
    f = t - k
    a, b = VIRIDIS[k], VIRIDIS[k + 1]
    rgb = [round(int(a[i:i + 2], 16) * (1 - f) + int(b[i:i + 2], 16) * f) for i in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def sample_axis(n: int, limit: int) -> np.ndarray:
    if n <= limit:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, limit).round().astype(np.int64))


def heatmap_svg(matrix: np.ndarray, max_cells: int = 32, cell: float | None = None) -> str:
    """An ``<svg class="onnxkit-heatmap">`` of a 2-D numeric array (sampled when large).

    Cells are ``cell`` pixels wide; by default 10 to 24, so that small slices stay readable.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"heatmap_svg needs a 2-D array, got shape {m.shape}")
    rows, cols = sample_axis(m.shape[0], max_cells), sample_axis(m.shape[1], max_cells)
    sub = m[np.ix_(rows, cols)] if m.size else m
    finite = sub[np.isfinite(sub)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    span = hi - lo
    if cell is None:
        cell = float(min(24, max(10, 240 // max(len(rows), len(cols), 1))))
    w, h = len(cols) * cell, len(rows) * cell
    parts = [f'<svg class="onnxkit-heatmap" xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" '
             f'height="{h:.0f}" viewBox="0 0 {w:.0f} {h:.0f}" data-rows="{len(rows)}" '
             f'data-cols="{len(cols)}">']
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            v = sub[i, j]
            if np.isnan(v):
                fill = "#9e9e9e"
            else:
                fill = colour(0.5 if span == 0 else (min(max(v, lo), hi) - lo) / span)
            parts.append(f'<rect x="{j * cell:.0f}" y="{i * cell:.0f}" width="{cell:.0f}" '
                         f'height="{cell:.0f}" fill="{fill}"><title>[{r},{c}] {v:.6g}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def stats(value: np.ndarray) -> dict[str, Any]:
    """min / max / mean / std over finite values; counts of zeros, NaN and inf."""
    out: dict[str, Any] = {"dtype": str(value.dtype), "shape": tuple(int(d) for d in value.shape),
                           "size": int(value.size), "nbytes": int(value.nbytes)}
    num = numeric_view(value)
    if num is None or num.size == 0:
        return out
    num = num.astype(np.float64)
    finite = num[np.isfinite(num)]
    out.update(zeros=int((num == 0).sum()), nan=int(np.isnan(num).sum()),
               inf=int(np.isinf(num).sum()))
    if finite.size:
        out.update(min=float(finite.min()), max=float(finite.max()), mean=float(finite.mean()),
                   std=float(finite.std()))
    return out


def slice_2d(value: np.ndarray, index: Sequence[int] | None = None) -> tuple[np.ndarray, str]:
    """The 2-D slice over the last two axes at ``index`` (leading axes), and its spelling."""
    if value.ndim == 0:
        return value.reshape(1, 1), "[]"
    if value.ndim == 1:
        return value.reshape(1, -1), "[:]"
    lead = value.ndim - 2
    index = tuple(index or ()) + (0,) * (lead - len(tuple(index or ())))
    index = tuple(min(max(int(i), 0), value.shape[k] - 1) if value.shape[k] else 0
                  for k, i in enumerate(index[:lead]))
    spelled = "[" + ", ".join([str(i) for i in index] + [":", ":"]) + "]"
    if any(value.shape[k] == 0 for k in range(lead)):
        return np.zeros((0, 0)), spelled
    return value[index], spelled


def tensor_html(value: Any, name: str = "", index: Sequence[int] | None = None,
                max_cells: int = 32) -> str:
    """Header, statistics and a heatmap of one 2-D slice, as escaped HTML."""
    arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    st = stats(arr)
    shape = "[" + ",".join(map(str, st["shape"])) + "]"
    title = f"<code>{esc.text(name)}</code> " if name else ""
    parts = [f'<div class="onnxkit-tensor"><h4>{title}{esc.text(st["dtype"])}{esc.text(shape)}</h4>',
             '<table class="onnxkit-stats"><tr>']
    keys = [k for k in ("size", "min", "max", "mean", "std", "zeros", "nan", "inf") if k in st]
    parts.append("".join(f"<th>{k}</th>" for k in keys) + "</tr><tr>")
    parts.append("".join(f"<td>{_fmt(st[k])}</td>" for k in keys) + "</tr></table>")
    num = numeric_view(arr)
    if num is None:
        shown = ", ".join(esc.shorten(repr(v), 40) for v in arr.reshape(-1)[:10].tolist())
        parts.append(f"<p>first values: <code>{esc.text(shown)}</code></p></div>")
        return "".join(parts)
    if arr.size == 0:
        parts.append("<p>empty tensor</p></div>")
        return "".join(parts)
    plane, spelled = slice_2d(num, index)
    sampled = plane.shape[0] > max_cells or plane.shape[1] > max_cells
    note = f", sampled to at most {max_cells}\u00d7{max_cells}" if sampled else ""
    parts.append(f'<p class="onnxkit-slice">slice <code>{esc.text((name or "x") + spelled)}</code> '
                 f"({plane.shape[0]}\u00d7{plane.shape[1]}{note})</p>")
    if plane.size:
        parts.append(heatmap_svg(plane, max_cells))
    parts.append("</div>")
    return "".join(parts)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.5g}"
    return esc.text(v)


class TensorView(widgets.VBox):
    """``tensor_html`` as a widget, with one slider per leading axis to choose the slice."""

    def __init__(self, value: Any, name: str = "", max_cells: int = 32):
        self.value = value if isinstance(value, np.ndarray) else np.asarray(value)
        self.name = name
        self.max_cells = max_cells
        lead = max(self.value.ndim - 2, 0)
        self.sliders = [widgets.IntSlider(value=0, min=0, max=max(self.value.shape[k] - 1, 0),
                                          description=f"axis {k}", continuous_update=False)
                        for k in range(lead) if self.value.shape[k] > 1]
        self._axes = [k for k in range(lead) if self.value.shape[k] > 1]
        self.html = widgets.HTML(self.render())
        for slider in self.sliders:
            slider.observe(self._update, names="value")
        super().__init__(children=[*self.sliders, self.html])
        self.add_class("onnxkit-tensor-view")

    @property
    def index(self) -> tuple[int, ...]:
        lead = max(self.value.ndim - 2, 0)
        chosen = dict(zip(self._axes, (s.value for s in self.sliders)))
        return tuple(chosen.get(k, 0) for k in range(lead))

    def render(self) -> str:
        return tensor_html(self.value, self.name, self.index, self.max_cells)

    def _update(self, _change=None) -> None:
        self.html.value = self.render()

    def __repr__(self) -> str:
        shape = ",".join(map(str, self.value.shape))
        label = f" {self.name!r}" if self.name else ""
        return f"<onnxkit TensorView{label} {self.value.dtype}[{shape}]>"
