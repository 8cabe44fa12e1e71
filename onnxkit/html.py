"""Escaping for every string that reaches HTML (or SVG, or Markdown) from a model.

Node names, op types, domains, doc strings, value names and error messages all come
from the model file, which may be hostile: ``<script>``, quotes that end an attribute,
control characters, lone surrogates. Reports and widgets build HTML only with these:

    escape_text(s)     element content:  & < > " ' escaped
    escape_attr(s)     a quoted attribute value: also backtick, =, tab and newlines
    markdown_text(s)   Markdown prose: HTML-escaped and Markdown's own syntax escaped
    markdown_cell(s)   a Markdown table cell: markdown_text, | escaped, one line
    terminal_text(s)   a terminal line: control bytes shown as escapes, never sent
    Markup(s)          a string already safe to insert (only this module makes them)
    table(headers, rows, caption=None) -> Markup   every cell escaped unless Markup

The HTML escapers also replace what cannot be shown safely: C0/C1 control characters
(except tab and newline in text) and lone surrogates, which would make writing the
page fail, become U+FFFD. Every channel shows invisible and direction-changing
characters (bidi overrides such as U+202E, zero-width characters) as their escape,
e.g. ``\u202e``, so a name cannot reorder or hide what is printed after it.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

# controls other than \t \n, DEL and C1, XML's non-characters, and lone surrogates
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0d\x0e-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")
_TEXT = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
_ATTR = dict(_TEXT, **{"`": "&#x60;", "=": "&#x3D;", "\t": "&#x9;", "\n": "&#xA;"})
_TEXT_RE = re.compile("[&<>\"']")
# bidi embeddings, overrides and isolates, zero-width and other invisible format characters
_INVISIBLE = re.compile("[\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
                        "\u3164\ufeff\uffa0\ufff9-\ufffb]")
# what a terminal must not receive raw: every C0/C1 control (ESC starts a sequence), DEL
_TERMINAL = re.compile("[\x00-\x1f\x7f-\x9f]")
# CommonMark backslash-escapes any ASCII punctuation; & < > " ' become entities instead
_MD_PUNCT = re.compile(r"[!#$%()*+,\-./:;=?@\[\\\]^_`{|}~]")
_ATTR_RE = re.compile("[&<>\"'`=\t\n]")


class Markup(str):
    """HTML that is safe as it is: the result of escaping or of ``table``."""

    def __html__(self) -> str:  # the protocol Jinja and MarkupSafe understand
        return str(self)


def _escape_code(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(value) -> str:
    """``value`` with invisible and direction-changing characters written as escapes."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return _INVISIBLE.sub(lambda m: _escape_code(m.group()), str(value))


def _clean(value) -> str:
    return _UNSAFE.sub("\ufffd", visible(value))


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


def markdown_text(value) -> str:
    """``value`` as literal Markdown text: no raw HTML, no links, emphasis, code or headings.

    Markup is returned as it is (HTML is valid inside Markdown)."""
    if isinstance(value, Markup):
        return str(value)
    text = _clean(value)
    text = _MD_PUNCT.sub(lambda m: "\\" + m.group(), text)
    return _TEXT_RE.sub(lambda m: _TEXT[m.group()], text)


def markdown_cell(value) -> str:
    """``value`` for one cell of a Markdown table: markdown_text on one line."""
    return " ".join(markdown_text(value).split())


def terminal_text(value, *, newlines: bool = False) -> str:
    """``value`` safe to print on a terminal: controls and invisible characters as escapes.

    ``newlines=True`` keeps line feeds (for multi-line text such as a doc string)."""
    text = visible(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    keep = "\n" if newlines else ""
    return _TERMINAL.sub(lambda m: m.group() if m.group() in keep else _escape_code(m.group()), text)


def table(headers: Sequence, rows: Iterable[Sequence], caption=None, css_class: str | None = None) -> Markup:
    """A ``<table>`` whose header, cells and caption are escaped (``Markup`` cells are kept)."""
    head = "".join(f"<th>{escape_text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape_text(c)}</td>" for c in row) + "</tr>" for row in rows)
    cls = f' class="{escape_attr(css_class)}"' if css_class is not None else ""
    cap = f"<caption>{escape_text(caption)}</caption>" if caption is not None else ""
    return Markup(f"<table{cls}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


__all__ = ["Markup", "escape_text", "escape_attr", "markdown_text", "markdown_cell", "terminal_text",
           "table", "visible"]
