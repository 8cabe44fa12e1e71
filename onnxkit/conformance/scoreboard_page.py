"""Write a scoreboard (``scoreboard.run_scoreboard``'s dict) as a static HTML page, JSON and PNG.

The page: per runtime its version and totals; per operator version (``Relu-14``) a cell per
runtime (passing cases / cases, coloured by the worst state), each linking to the list of
that operator's non-passing cases on that runtime, each case with its state, its message,
what was adapted, and a link to the case in onnx's repository. Every string from a model,
a runtime or a message is escaped with ``onnxkit.html``'s escapers.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict

from onnxkit.conformance.scoreboard import LABELS, STATES
from onnxkit.html import escape_attr, escape_text

COLORS = {"pass": "#4c9a2a", "adapted": "#8fc46b", "version": "#6c8ebf", "fail": "#d1495b",
          "error": "#edae49", "crash": "#7b2d8b", "timeout": "#a0522d", "skip": "#9e9e9e",
          "unrun": "#d9d9d9"}
ONNX_DATA = "https://github.com/onnx/onnx/tree/v{version}/onnx/backend/test/data/{path}"
_ORDER = {s: i for i, s in enumerate(("unrun", "pass", "skip", "adapted", "version", "timeout", "error", "crash", "fail"))}

_STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:80em}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}
td.n{text-align:right}a.c{display:block;color:#fff;text-decoration:none;text-align:center}
li{margin:2px 0}code{white-space:pre-wrap;font-size:12px}.s{color:#fff;padding:0 4px;border-radius:3px}"""


def case_link(case: dict, onnx_version: str) -> str | None:
    """Where a case lives: its folder in onnx's repository, or its file in this one."""
    if case["kind"] == "version":
        return None  # built in memory: onnxkit/conformance/versions.py names how
    folder = {"node": "node", "simple": "simple", "pytorch-converted": "pytorch-converted",
              "pytorch-operator": "pytorch-operator"}.get(case["kind"])
    if folder:
        return ONNX_DATA.format(version=onnx_version, path=f"{folder}/{case['name']}")
    if case["kind"] == "light":
        return ONNX_DATA.format(version=onnx_version, path=f"light/light_{case['name'][5:]}.onnx")
    return None


def _anchor(*parts: str) -> str:
    return "a" + hashlib.sha1("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _badge(state: str) -> str:
    return f'<span class="s" style="background:{COLORS[state]}">{escape_text(LABELS[state])}</span>'


def _by_operator(board: dict) -> dict[str, dict[str, list[int]]]:
    """operator version -> runtime -> indexes of its cases (model cases under their kind)."""
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, case in enumerate(board["cases"]):
        ops = case["operators"] if case["kind"] in ("node", "version") else [f"model: {case['kind']}"]
        for op in ops or ["(no operator)"]:
            for name, rt in board["runtimes"].items():
                if rt.get("installed"):
                    table[op][name].append(i)
    return table


def render_html(board: dict) -> str:
    installed = {n: r for n, r in board["runtimes"].items() if r.get("installed")}
    out = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>onnxkit conformance scoreboard"
           f"</title><style>{_STYLE}</style></head><body>",
           "<h1>Conformance scoreboard</h1>",
           f"<p>onnx {escape_text(board['onnx'])} backend test cases, run {escape_text(board['date'])} on "
           f"{escape_text(board['machine'])}; {len(board['cases'])} cases, per-case timeout "
           f"{escape_text(board['timeout'])} s, {escape_text(board['seconds'])} s in all.</p>",
           "<p>" + " ".join(_badge(s) for s in STATES) + "</p>",
           "<h2>Totals</h2><table><tr><th>runtime</th><th>version</th>"
           + "".join(f"<th>{escape_text(LABELS[s])}</th>" for s in STATES) + "<th>seconds</th></tr>"]
    for name, rt in board["runtimes"].items():
        if not rt.get("installed"):
            out.append(f"<tr><td>{escape_text(name)}</td><td colspan=\"{len(STATES) + 2}\">not installed"
                       "</td></tr>")
            continue
        cells = "".join(f'<td class="n">{rt["totals"].get(s, 0)}</td>' for s in STATES)
        sampled = f" (1 case in {rt['every']})" if rt.get("every", 1) > 1 else ""
        out.append(f"<tr><td>{escape_text(name)}</td><td>{escape_text(rt['version'])}{sampled}</td>{cells}"
                   f"<td class=\"n\">{escape_text(rt['seconds'])}</td></tr>")
    out.append("</table>")
    table = _by_operator(board)
    out.append("<h2>Per operator version</h2><p>passing cases / cases; a cell links to its cases "
               "that do not pass.</p><table><tr><th>operator</th>"
               + "".join(f"<th>{escape_text(n)}</th>" for n in installed) + "</tr>")
    details = []
    for op in sorted(table, key=lambda o: (o.startswith("model:"), o)):
        row = [f"<td>{escape_text(op)}</td>"]
        for name, rt in installed.items():
            idx = table[op].get(name, [])
            idx = [i for i in idx if rt["cells"][i]["state"] != "unrun"]
            states = [rt["cells"][i]["state"] for i in idx]
            worst = max(states, key=_ORDER.get) if states else "unrun"
            ok = sum(s in ("pass", "adapted") for s in states)
            text = f"{ok}/{len(states)}"
            bad = [i for i in idx if rt["cells"][i]["state"] not in ("pass", "skip")]
            if bad:
                anchor = _anchor(name, op)
                row.append(f'<td style="background:{COLORS[worst]}"><a class="c" href="#{anchor}" '
                           f'title="{escape_attr(LABELS[worst])}">{escape_text(text)}</a></td>')
                details.append(_details(anchor, name, op, bad, board, rt))
            else:
                row.append(f'<td style="background:{COLORS[worst]};color:#fff;text-align:center">'
                           f"{escape_text(text)}</td>")
        out.append("<tr>" + "".join(row) + "</tr>")
    out.append("</table><h2>Cases that do not pass</h2>")
    out.extend(details)
    out.append("</body></html>")
    return "\n".join(out)


def _details(anchor: str, runtime: str, op: str, bad: list[int], board: dict, rt: dict) -> str:
    items = []
    for i in bad:
        case, cell = board["cases"][i], rt["cells"][i]
        link = case_link(case, board["onnx"])
        name = escape_text(case["name"])
        name = f'<a href="{escape_attr(link)}">{name}</a>' if link else name
        text = f"<li>{name} {_badge(cell['state'])} <code>{escape_text(cell.get('message', '')[:600])}</code>"
        if cell.get("adapted"):
            text += f"<br>adapted ({escape_text(cell['adapted'])})"
        if cell.get("adapted_message"):
            text += f": <code>{escape_text(cell['adapted_message'][:600])}</code>"
        items.append(text + "</li>")
    return (f'<h3 id="{anchor}">{escape_text(runtime)}: {escape_text(op)}</h3><ul>'
            + "".join(items) + "</ul>")


def plot(board: dict, path: str) -> None:
    """A stacked bar per installed runtime: how many cases ended in each state."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, r in board["runtimes"].items() if r.get("installed")]
    fig, ax = plt.subplots(figsize=(10, 1 + 0.5 * max(1, len(names))))
    left = [0] * len(names)
    labels = [f"{n} {board['runtimes'][n]['version']}" for n in names]
    for state in STATES:
        values = [board["runtimes"][n]["totals"].get(state, 0) for n in names]
        ax.barh(labels, values, left=left, color=COLORS[state], label=LABELS[state])
        left = [a + b for a, b in zip(left, values)]
    ax.invert_yaxis()
    ax.set_title(f"onnx {board['onnx']} backend test cases on each runtime ({board['date']})", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def merge(boards: list[dict]) -> dict:
    """One board from several runs (e.g. a slow runtime on a sparser subset): the union of
    their cases; a runtime's cell for a case its run did not include is ``unrun``."""
    from onnxkit.conformance.scoreboard import Cell, totals

    cases, index = [], {}
    for board in boards:
        for case in board["cases"]:
            if case["name"] not in index:
                index[case["name"]] = len(cases)
                cases.append(case)
    merged = dict(boards[0], cases=cases, runtimes={}, seconds=sum(b["seconds"] for b in boards),
                  date=max(b["date"] for b in boards))
    for board in boards:
        for name, rt in board["runtimes"].items():
            if not rt.get("installed"):
                merged["runtimes"].setdefault(name, rt)
                continue
            cells = [{"state": "unrun"}] * len(cases)
            for case, cell in zip(board["cases"], rt["cells"]):
                cells[index[case["name"]]] = cell
            counted = totals([Cell(c["state"]) for c in cells])
            merged["runtimes"][name] = dict(rt, cells=cells, totals=counted)
    return merged


def write(board: dict, folder: str) -> dict[str, str]:
    """scoreboard.html, scoreboard.json and scoreboard.png in ``folder``."""
    os.makedirs(folder, exist_ok=True)
    paths = {ext: os.path.join(folder, f"scoreboard.{ext}") for ext in ("html", "json", "png")}
    with open(paths["json"], "w", encoding="utf-8") as f:
        json.dump(board, f, indent=0, ensure_ascii=True)
    with open(paths["html"], "w", encoding="utf-8") as f:
        f.write(render_html(board))
    plot(board, paths["png"])
    return paths


__all__ = ["render_html", "plot", "write", "case_link", "COLORS"]
