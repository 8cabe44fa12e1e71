"""A drawing's SVG as PNG, for viewers that show no SVG (some renderings on GitHub).

Uses ``resvg-py`` (a self-contained wheel: no cairo, no browser) when it is installed, with
the system's fonts; ``png_of`` raises ``RasterError`` naming the package when it is not.
"""

from __future__ import annotations

from onnxkit.errors import OnnxkitError


class RasterError(OnnxkitError):
    """No rasterizer installed, or the SVG could not be drawn."""


def png_of(svg: str) -> bytes:
    """The PNG bytes of ``svg`` at its own size, on a white background."""
    try:
        import resvg_py
    except ImportError:
        raise RasterError("a PNG of the graph needs the resvg-py package "
                          "(pip install 'resvg-py==0.5.0', or the 'course' extra)") from None
    try:
        return bytes(resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff"))
    except ValueError as exc:
        raise RasterError(f"the graph's SVG could not be drawn as PNG: {exc}") from None
