"""Text views of the bytes: a field-by-field dump, a hex dump, and one tag explained.

    dump(model)                     one line per field: offset, tag bytes, size, name, value
    hexdump(data, start, end)       16 bytes a line, offsets on the left, ASCII on the right
    explain_tag(0x3a)               "field 7, wire type 2 (len)"
"""

from __future__ import annotations

from onnxkit.protobuf.view import Field, as_bytes, iter_all, walk
from onnxkit.protobuf.wire import WIRE_TYPE_NAMES, decode_varint, split_tag

VALUE_WIDTH = 40


def explain_tag(tag: int) -> str:
    """What a tag value means: ``explain_tag(0x3a)`` -> ``'field 7, wire type 2 (len)'``."""
    number, wire_type = split_tag(tag)
    return f"field {number}, wire type {wire_type} ({WIRE_TYPE_NAMES.get(wire_type, '?')})"


def format_value(f: Field) -> str:
    """The value column of a dump line."""
    if f.children or f.is_message:
        return f"{f.payload_size} bytes"
    if f.count is not None:
        shown = ", ".join(_short(v) for v in f.value)
        more = ", ..." if f.count > len(f.value) else ""
        return f"{f.count} values [{shown}{more}]"
    if isinstance(f.value, bytes):
        more = "..." if f.payload_size > len(f.value) else ""
        return f"{f.payload_size} bytes {f.value.hex(' ')}{more}"
    if isinstance(f.value, str) and f.type_name.startswith("string"):
        text = repr(f.value)
        return text if len(text) <= VALUE_WIDTH else text[:VALUE_WIDTH - 4] + "...'"
    return _short(f.value)


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def dump(model, *, max_depth: int | None = None, max_lines: int | None = 200) -> str:
    """One line per field of the serialized ``model`` (a message or its bytes).

    Columns: offset of the tag (decimal), the tag byte(s) in hex, the field's total size in
    bytes, the field name indented by depth with ``(number, wire type)`` and its type, and
    the value (for a message: the size of its payload).
    """
    data = as_bytes(model)
    fields = walk(model)
    lines = [f"{'offset':>6}  {'tag':<5} {'size':>6}  field"]
    shown = 0
    total = sum(1 for _ in iter_all(fields))
    for depth, f in iter_all(fields):
        if max_depth is not None and depth > max_depth:
            total -= 1
            continue
        if max_lines is not None and shown >= max_lines:
            lines.append(f"... {total - shown} more fields (max_lines={max_lines})")
            break
        _, tag_end = decode_varint(data, f.offset)
        tag = data[f.offset:tag_end].hex()
        label = f"{'  ' * depth}{f.name} ({f.field_number}, {f.wire_type_name}) {f.type_name}"
        lines.append(f"{f.offset:>6}  {tag:<5} {f.size:>6}  {label:<52} {format_value(f)}".rstrip())
        shown += 1
    lines.append(f"{len(data):>6}  end")
    return "\n".join(lines)


def hexdump(model, start: int = 0, end: int | None = None) -> str:
    """``data[start:end]`` as hex, 16 bytes a line, printable ASCII on the right."""
    data = as_bytes(model)
    end = len(data) if end is None else min(end, len(data))
    lines = []
    for row in range(start - start % 16, end, 16):
        cells, text = [], []
        for pos in range(row, row + 16):
            if start <= pos < end:
                cells.append(f"{data[pos]:02x}")
                text.append(chr(data[pos]) if 32 <= data[pos] < 127 else ".")
            else:
                cells.append("  ")
                text.append(" ")
        lines.append(f"{row:06x}  {' '.join(cells[:8])}  {' '.join(cells[8:])}  |{''.join(text)}|")
    return "\n".join(lines)
