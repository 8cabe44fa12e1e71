"""Every string that comes from a model is hostile until escaped.

Uses ``onnxkit.html`` (``escape_text`` / ``escape_attr``) when it exists; otherwise the
standard library's ``html.escape`` with quotes escaped too. Characters XML forbids
(control characters other than tab and newline) are dropped so an SVG stays well formed.
"""

from __future__ import annotations

import html
import re

_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")

try:  # pragma: no cover - depends on whether onnxkit.html is present
    from onnxkit.html import escape_attr as _escape_attr
    from onnxkit.html import escape_text as _escape_text
except ImportError:  # pragma: no cover
    _escape_attr = None
    _escape_text = None


def text(value) -> str:
    """Escape for element content (``<text>...</text>``, ``<td>...</td>``)."""
    s = _XML_FORBIDDEN.sub("", str(value))
    return _escape_text(s) if _escape_text is not None else html.escape(s, quote=True)


def attr(value) -> str:
    """Escape for a double-quoted attribute value."""
    s = _XML_FORBIDDEN.sub("", str(value))
    return _escape_attr(s) if _escape_attr is not None else html.escape(s, quote=True)


def shorten(value: str, limit: int = 32) -> str:
    """``value`` cut to ``limit`` characters with an ellipsis (escape the result afterwards)."""
    value = str(value)
    return value if len(value) <= limit else value[: limit - 1] + "\u2026"
