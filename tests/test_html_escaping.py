"""Strings from a model never reach HTML unescaped (``onnxkit.html``)."""

import re

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.html import Markup, escape_attr, escape_text, markdown_cell, table

EVIL = "\"><script>alert('x')</script><img src=x onerror=alert(1)>"


def _has_raw_html(s: str) -> bool:
    """A tag other than the table's own, or a quote that could end an attribute."""
    rest = re.sub(r"</?(table|thead|tbody|tr|th|td|caption)( class=\"[^\"<>]*\")?>", "", s)
    return re.search(r"<[a-zA-Z/!?]", rest) is not None


def hostile_model():
    """Node name, op type, domain, doc strings and value names all carry markup."""
    node = helper.make_node("Relu", ["x"], [EVIL], name=EVIL, doc_string=EVIL)
    odd = helper.make_node(f"<script>{EVIL}", [EVIL], ["y"], name="'quote\"", domain="<b>evil</b>")
    graph = helper.make_graph([node, odd], EVIL, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], doc_string=EVIL)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid("<b>evil</b>", 1)],
                              doc_string=EVIL, producer_name=EVIL)
    model.ir_version = 8
    return model


def test_escape_text_and_attr():
    assert escape_text("<a href='x'>&</a>") == "&lt;a href=&#x27;x&#x27;&gt;&amp;&lt;/a&gt;"
    assert escape_attr('" onload="x') == "&quot; onload&#x3D;&quot;x"
    assert escape_attr("a`b\nc") == "a&#x60;b&#xA;c"
    assert not _has_raw_html(escape_text(EVIL)) and not _has_raw_html(escape_attr(EVIL))
    assert '"' not in escape_attr(EVIL) and "'" not in escape_attr(EVIL)
    assert escape_text(Markup("<b>ok</b>")) == "<b>ok</b>"  # already safe stays as is
    assert escape_attr(Markup("<b>")) == "&lt;b&gt;"  # but markup is text inside an attribute


def test_control_characters_and_lone_surrogates_are_replaced():
    out = escape_text("a\x00b\x1bc\ud800d\tе\n")
    assert out == "a\ufffdb\ufffdc\ufffdd\tе\n"
    out.encode("utf-8")  # writable: no lone surrogate left
    assert escape_attr(b"bytes \xff") == "bytes \ufffd"


def test_markdown_cell_has_no_html_pipes_or_newlines():
    cell = markdown_cell("a|b\n<script>x</script>")
    assert cell == "a\\|b &lt;script&gt;x&lt;\\/script&gt;"


def test_table_escapes_every_cell_header_and_caption():
    html = table([EVIL, "op"], [[EVIL, 1], [Markup("<i>kept</i>"), None]], caption=EVIL, css_class=EVIL)
    assert isinstance(html, Markup)
    assert not _has_raw_html(html.replace("<i>kept</i>", ""))
    assert "<i>kept</i>" in html and "<td>None</td>" in html
    assert html.count("<table") == 1 and html.count("</table>") == 1


def test_a_model_full_of_markup_comes_out_escaped():
    model = hostile_model()
    rows = [[n.name, n.op_type, n.domain, n.doc_string] for n in model.graph.node]
    rows.append([model.graph.name, model.producer_name, "", model.doc_string])
    html = table(["name", "op", "domain", "doc"], rows)
    assert not _has_raw_html(html), html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    # the error a learner sees about this model, shown in a page, is escaped too
    with pytest.raises(onnxkit.OnnxkitError) as info:
        onnxkit.Session(model).run(None, {"x": np.zeros(2, np.float32)})
    assert "<script>" in str(info.value)  # messages keep the model's words...
    assert not _has_raw_html(escape_text(str(info.value)))  # ...and pages escape them


def test_model_strings_with_invalid_utf8_still_escape_to_writable_html():
    model = hostile_model()
    data = model.SerializeToString().replace(b"'quote", b"\xff\xfeuote")
    parsed = onnxkit.load(data)
    html = table(["name"], [[n.name] for n in parsed.graph.node])
    html.encode("utf-8")
    assert not _has_raw_html(html)
