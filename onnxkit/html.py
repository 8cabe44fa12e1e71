"""Escaping for every string that reaches HTML (or SVG, or Markdown) from a model.

Node names, op types, domains, doc strings, value names and error messages all come
from the model file, which may be hostile: ``<script>``, quotes that end an attribute,
control characters, lone surrogates. Reports and widgets build HTML only with these:

    escape_text(s)     element content:  & < > " ' escaped
    escape_attr(s)     a quoted attribute value: also backtick, =, tab and newlines
    markdown_cell(s)   a Markdown table cell: HTML-escaped, | escaped, one line
    Markup(s)          a string already safe to insert (only this module makes them)
    table(headers, rows, caption=None) -> Markup   every cell escaped unless Markup

Both escapers also replace what cannot be shown safely: C0/C1 control characters
(except tab and newline in text) and lone surrogates, which would make writing the
page fail, become U+FFFD.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

# controls other than \t \n, DEL and C1, XML's non-characters, and lone surrogates
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0d\x0e-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")
_TEXT = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
_ATTR = dict(_TEXT, **{"`": "&#x60;", "=": "&#x3D;", "\t": "&#x9;", "\n": "&#xA;"})
_TEXT_RE = re.compile("[&<>\"']")
_ATTR_RE = re.compile("[&<>\"'`=\t\n]")


class Markup(str):
    """HTML that is safe as it is: the result of escaping or of ``table``."""

    def __html__(self) -> str:  # the protocol Jinja and MarkupSafe understand
        return str(self)


def _clean(value) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return _UNSAFE.sub("\ufffd", str(value))


def escape_text(value) -> Markup:
    """``value`` (any object, via ``str``) as safe element content."""
    if isinstance(value, Markup):
        return value
    return Markup(_TEXT_RE.sub(lambda m: _TEXT[m.group()], _clean(value)))


def escape_attr(value) -> Markup:
    """``value`` as a safe attribute value; always write the attribute in double quotes."""
    if isinstance(value, Markup):
        value = str(value)  # markup inside an attribute is still text there
    return Markup(_ATTR_RE.sub(lambda m: _ATTR[m.group()], _clean(value)))


def markdown_cell(value) -> str:
    """``value`` for one cell of a Markdown table: no raw HTML, no ``|``, no line breaks."""
    text = escape_text(value).replace("|", "\\|")
    return " ".join(text.split())


def table(headers: Sequence, rows: Iterable[Sequence], caption=None, css_class: str | None = None) -> Markup:
    """A ``<table>`` whose header, cells and caption are escaped (``Markup`` cells are kept)."""
    head = "".join(f"<th>{escape_text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape_text(c)}</td>" for c in row) + "</tr>" for row in rows)
    cls = f' class="{escape_attr(css_class)}"' if css_class is not None else ""
    cap = f"<caption>{escape_text(caption)}</caption>" if caption is not None else ""
    return Markup(f"<table{cls}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


__all__ = ["Markup", "escape_text", "escape_attr", "markdown_cell", "table"]
