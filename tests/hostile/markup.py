"""A model whose every string carries markup, and checks that no output lets it act.

    markup_model()            op types, domains, node / value / graph names, doc strings,
                              an attribute and a string output, each with a payload below;
                              it runs on the reference executor and the optimizer rewrites it
    feeds()                   the inputs it runs on
    render_markdown(text)     Markdown -> HTML with two real renderers (mistune, Python-Markdown),
                              raw HTML passed through as JupyterLab does for trusted output
    live_markup(html)         what in an HTML page would act: script-bearing tags, event
                              handlers, links, javascript: URLs (an empty list when none)
    text_of(html)             the text a reader sees
    invisible(text)           raw bidi overrides, zero-width characters, terminal escapes

Every payload sets ``window.__onnxkit_pwned`` when it runs, which the browser test checks.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
from onnx import TensorProto, helper

FLAG = "__onnxkit_pwned"
JS = f"window.{FLAG}=1"
BARE = f"Object.assign(window,{{{FLAG}:1}})"  # the same, as an unquoted attribute value

PAYLOADS = {
    "img": f'<img src=x onerror="{JS}">',
    "img_unquoted": f"<img src=x onerror={BARE}>",
    "iframe": f"<iframe srcdoc=\"<script>parent.{FLAG}=1</script>\"></iframe>",
    "script": f"<script>{JS}</script>",
    "svg": f"<svg onload={BARE}>",
    "attribute_break": f'"><img src=x onerror={BARE}>',
    "md_link": f"[x](javascript:{JS})",
    "md_image": f"![y](javascript:{JS})",
    "md_autolink": f"<javascript:{JS}>",
    "md_reference": f"[z]\n\n[z]: javascript:{JS}",
    "md_html_block": f"\n\n<details open ontoggle={BARE}>",
    "md_table_break": f"a | b\n\n<img src=x onerror={BARE}>",
    "math": f"$\\href{{javascript:{JS}}}{{m}}$",
    "bidi": "abc\u202edcba\u2066x\u2069",
    "zero_width": "Re\u200blu\ufeff",
    "terminal": "\x1b[31mred\x1b[0m\x1b]8;;javascript:x\x07link\x1b]8;;\x07\r\x08",
}
ALL = "".join(PAYLOADS.values())

# raw characters no view may pass on: bidi embeddings / overrides / isolates, zero-width
# characters, and the C0 / C1 controls that start terminal sequences
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\x1b\x07\x08\r\x9b]")


def _p(key: str) -> str:
    return PAYLOADS[key]


def markup_model():
    """Three nodes with hostile names; a model-local function whose domain and op type are
    hostile (so it still runs); an Identity the optimizer removes; a string output."""
    f32 = TensorProto.FLOAT
    domain = _p("iframe") + _p("md_reference") + _p("bidi")
    op_type = _p("md_link") + _p("img") + _p("zero_width")
    x_name = _p("attribute_break") + _p("terminal")
    function = helper.make_function(domain, op_type, ["a"], ["b"],
                                    [helper.make_node("Relu", ["a"], ["b"], name=_p("script"))],
                                    [helper.make_opsetid("", 18)])
    t_name = _p("md_image") + _p("md_autolink")
    nodes = [
        helper.make_node(op_type, [x_name], [t_name], name=_p("img_unquoted") + _p("bidi"),
                         domain=domain, doc_string=ALL),
        helper.make_node("Identity", [t_name], [_p("svg")], name=_p("md_html_block") + _p("math")),
        helper.make_node("LeakyRelu", [_p("svg")], ["y"], name=_p("md_table_break") + _p("terminal"),
                         doc_string=ALL, alpha=0.5),
        helper.make_node("Constant", [], ["s"], name=_p("zero_width") + _p("md_link"),
                         value=helper.make_tensor("v", TensorProto.STRING, [len(PAYLOADS)],
                                                  [v.encode() for v in PAYLOADS.values()])),
    ]
    graph = helper.make_graph(
        nodes, _p("script") + _p("bidi"),
        [helper.make_tensor_value_info(x_name, f32, [2, 3])],
        [helper.make_tensor_value_info("y", f32, [2, 3]),
         helper.make_tensor_value_info("s", TensorProto.STRING, [len(PAYLOADS)])],
        doc_string=ALL)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid(domain, 1)],
                              functions=[function], doc_string=ALL, producer_name=_p("img"))
    model.ir_version = 10
    return model


def feeds() -> dict:
    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)
    return {markup_model().graph.input[0].name: x}


def render_markdown(text: str) -> dict[str, str]:
    """``text`` rendered by each Markdown renderer installed: name -> HTML."""
    import markdown as python_markdown
    import mistune

    md = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])
    return {"mistune": md(text),
            "python-markdown": python_markdown.markdown(text, extensions=["tables"])}


# tags that run script, load something, or make a link, and attributes that do
_ACTIVE_TAGS = {"script", "iframe", "img", "object", "embed", "a", "form", "input", "button",
                "link", "meta", "base", "frame", "frameset", "image", "video", "audio", "source",
                "details", "math", "foreignobject", "use", "animate", "set", "textarea", "select"}
_URL_ATTRS = {"href", "src", "srcdoc", "xlink:href", "action", "formaction", "data", "poster"}


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in _ACTIVE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=>")
            elif name in _URL_ATTRS or name == "style" and "url(" in (value or ""):
                self.found.append(f"<{tag} {name}={value!r}>")

    handle_startendtag = handle_starttag


def live_markup(html: str) -> list[str]:
    """What in ``html`` could run script, load something or follow a link, as an HTML parser
    reads it: active tags, ``on*`` handlers, URL attributes (none of our views makes a link)."""
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return collector.found


def text_of(html: str) -> str:
    """The text a reader sees in ``html`` (entities decoded)."""
    parts: list[str] = []
    parser = HTMLParser(convert_charrefs=True)
    parser.handle_data = parts.append
    parser.feed(html)
    parser.close()
    return "".join(parts)


def invisible(text: str) -> list[str]:
    """The raw invisible or control characters in ``text`` (escaped forms are fine)."""
    return sorted({f"U+{ord(c):04X}" for c in INVISIBLE.findall(text)})
