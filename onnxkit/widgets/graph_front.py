"""The graph widget's browser side (anywidget ESM and CSS): it shows the SVG Python drew.

    toolbar   zoom out / in / 1:1 / fit; search box (Python finds the nodes, folded ones
              included); fold all / unfold all
    body      the drawing (click a node: details; click "+ unfold" on a block: Python redraws)
              | a minimap of the whole drawing (click to go there) above the details panel

Nothing here lays out or escapes: the SVG and the panels arrive escaped from Python.
"""

ESM = r"""
function button(label, title, onclick) {
  const b = document.createElement("button");
  b.textContent = label;
  b.title = title;
  b.addEventListener("click", onclick);
  return b;
}

function render({ model, el }) {
  el.classList.add("onnxkit-graph-widget");
  const bar = document.createElement("div");
  bar.className = "onnxkit-graph-toolbar";
  const wrap = document.createElement("div");
  wrap.className = "onnxkit-graph-scroll";
  const side = document.createElement("div");
  side.className = "onnxkit-graph-side";
  const mini = document.createElement("div");
  mini.className = "onnxkit-graph-minimap";
  const view = document.createElement("div");
  view.className = "onnxkit-graph-viewport";
  mini.append(view);
  const panel = document.createElement("div");
  panel.className = "onnxkit-graph-details";
  side.append(mini, panel);
  const body = document.createElement("div");
  body.className = "onnxkit-graph-body";
  body.append(wrap, side);
  el.append(bar, body);

  let zoom = 1.0;
  let miniUrl = null;
  let miniWidth = 0;
  let hit = -1;
  const svgEl = () => wrap.querySelector("svg.onnxkit-graph");
  const size = () => {
    const svg = svgEl();
    return svg ? [parseFloat(svg.getAttribute("width")), parseFloat(svg.getAttribute("height"))] : [1, 1];
  };
  const scale = () => {
    const svg = svgEl();
    if (!svg) return;
    const [w, h] = size();
    svg.style.width = (w * zoom) + "px";
    svg.style.height = (h * zoom) + "px";
    frame();
  };
  const fit = () => {
    const [w, h] = size();
    const tall = parseFloat(getComputedStyle(wrap).maxHeight) || wrap.clientHeight;
    zoom = Math.min(1, (wrap.clientWidth - 4) / w, (tall - 4) / h);
    scale();
  };
  const frame = () => {  // the minimap's rectangle: what the scroll box shows
    const [w, h] = size();
    const k = miniWidth / (w * zoom);
    if (!k) { view.style.display = "none"; return; }
    view.style.display = "";
    view.style.left = (wrap.scrollLeft * k) + "px";
    view.style.top = (wrap.scrollTop * k) + "px";
    view.style.width = Math.min(miniWidth, wrap.clientWidth * k) + "px";
    view.style.height = Math.min(miniWidth * h / w, wrap.clientHeight * k) + "px";
  };
  const minimap = () => {  // the whole drawing as a background picture, made after the drawing
    if (miniUrl) URL.revokeObjectURL(miniUrl);
    const [w, h] = size();
    miniWidth = Math.min(160, 220 * w / h);
    mini.style.width = miniWidth + "px";
    mini.style.height = (miniWidth * h / w) + "px";
    miniUrl = URL.createObjectURL(new Blob([model.get("svg")], { type: "image/svg+xml" }));
    mini.style.backgroundImage = `url("${miniUrl}")`;
    frame();
  };
  mini.addEventListener("click", (ev) => {
    const [w] = size();
    const k = (w * zoom) / miniWidth;
    const r = mini.getBoundingClientRect();
    wrap.scrollLeft = (ev.clientX - r.left) * k - wrap.clientWidth / 2;
    wrap.scrollTop = (ev.clientY - r.top) * k - wrap.clientHeight / 2;
  });
  wrap.addEventListener("scroll", frame);

  const mark = () => {
    const id = model.get("selected");
    const found = new Set(model.get("matches"));
    for (const g of wrap.querySelectorAll("g[data-id]")) {
      const gid = g.getAttribute("data-id");
      g.classList.toggle("onnxkit-selected", id !== "" && gid === id);
      g.classList.toggle("onnxkit-match", found.has(gid));
    }
  };
  const goTo = (id) => {
    const g = wrap.querySelector(`g[data-id="${CSS.escape(id)}"]`);
    if (!g) return;
    const a = g.getBoundingClientRect(), b = wrap.getBoundingClientRect();
    wrap.scrollLeft += a.left - b.left - (wrap.clientWidth - a.width) / 2;
    wrap.scrollTop += a.top - b.top - (wrap.clientHeight - a.height) / 2;
  };
  const draw = () => {
    wrap.innerHTML = model.get("svg");
    scale();
    mark();
    el.dataset.drawn = String((Number(el.dataset.drawn) || 0) + 1);
    setTimeout(minimap, 0);
  };
  const details = () => {
    const id = model.get("selected");
    const all = model.get("details");
    panel.innerHTML = (id && all[id]) ? all[id] :
      '<p class="onnxkit-hint">Click a node to see its attributes' +
      (model.get("traced") ? " and the tensors of the run." : ".") + "</p>";
    mark();
  };

  for (const [label, title, factor] of [["\u2212", "zoom out", 1 / 1.25], ["+", "zoom in", 1.25],
                                        ["1:1", "actual size", 0]]) {
    const b = button(label, title, () => { zoom = factor === 0 ? 1.0 : zoom * factor; scale(); });
    b.className = "onnxkit-zoom";
    bar.append(b);
  }
  const fitButton = button("fit", "fit the whole graph in the view", fit);
  fitButton.className = "onnxkit-fit";
  const search = document.createElement("input");
  search.type = "search";
  search.placeholder = "search op or name";
  search.className = "onnxkit-search";
  const count = document.createElement("span");
  count.className = "onnxkit-search-count";
  let pending = null;
  const ask = () => { model.set("query", search.value); model.save_changes(); };
  search.addEventListener("input", () => { clearTimeout(pending); pending = setTimeout(ask, 250); });
  search.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter") return;
    clearTimeout(pending);
    if (search.value !== model.get("query")) { ask(); return; }
    const found = model.get("matches");
    if (found.length) { hit = (hit + 1) % found.length; goTo(found[hit]); }
  });
  const foldAll = button("fold", "fold every repeated block", () => {
    model.set("opened", []); model.save_changes();
  });
  foldAll.className = "onnxkit-fold-all";
  const unfoldAll = button("unfold", "unfold every block", () => {
    model.set("opened", ["*"]); model.save_changes();
  });
  unfoldAll.className = "onnxkit-unfold-all";
  bar.append(fitButton, search, count, foldAll, unfoldAll);
  const counted = () => {
    const n = model.get("match_count");
    const found = model.get("matches");
    const boxes = `${found.length} box${found.length === 1 ? "" : "es"}`;
    count.textContent = model.get("query") ? `${n} node${n === 1 ? "" : "s"} in ${boxes}` : "";
    hit = -1;
    mark();
    if (found.length) { hit = 0; goTo(found[0]); }
  };

  wrap.addEventListener("click", (ev) => {
    const unfold = ev.target.closest("text.onnxkit-unfold");
    if (unfold) {
      const id = unfold.getAttribute("data-id");
      model.set("opened", [...model.get("opened").filter((x) => x !== id), id]);
      model.save_changes();
      return;
    }
    const toggle = ev.target.closest("text.onnxkit-expander");
    if (toggle) {
      const id = toggle.getAttribute("data-id");
      const now = model.get("expanded");
      model.set("expanded", now.includes(id) ? now.filter((x) => x !== id) : [...now, id]);
      model.save_changes();
      return;
    }
    const g = ev.target.closest("g.onnxkit-node, g.onnxkit-value, g.onnxkit-block");
    model.set("selected", g ? g.getAttribute("data-id") : "");
    model.save_changes();
  });
  model.on("change:svg", draw);
  model.on("change:selected", details);
  model.on("change:details", details);
  model.on("change:matches", counted);
  model.on("change:match_count", counted);
  draw();
  details();
  if (model.get("query")) counted();
  return () => { if (miniUrl) URL.revokeObjectURL(miniUrl); };
}
export default { render };
"""

CSS = """
.onnxkit-graph-widget { font-family: system-ui, sans-serif; font-size: 13px; }
.onnxkit-graph-body { display: flex; gap: 8px; align-items: flex-start; }
.onnxkit-graph-scroll { overflow: auto; max-height: 640px; max-width: 100%; flex: 1 1 auto;
  border: 1px solid #d0d7e2; background: #fff; }
.onnxkit-graph-side { flex: 0 0 320px; display: flex; flex-direction: column; gap: 6px; }
.onnxkit-graph-minimap { position: relative; align-self: flex-start; overflow: hidden;
  border: 1px solid #d0d7e2; background: #fff no-repeat; background-size: 100% 100%;
  cursor: crosshair; }
.onnxkit-graph-viewport { position: absolute; border: 2px solid #0b57d0;
  background: rgba(11, 87, 208, 0.08); pointer-events: none; }
.onnxkit-graph-details { max-height: 410px; overflow: auto; color: #1d2330;
  background: #f7f9fc; border: 1px solid #d0d7e2; padding: 6px 8px; }
.onnxkit-graph-details table { border-collapse: collapse; margin: 4px 0; }
.onnxkit-graph-details td, .onnxkit-graph-details th { border-bottom: 1px solid #e1e6ee;
  padding: 2px 4px; text-align: left; vertical-align: top; font-size: 12px; }
.onnxkit-graph-details h4 { margin: 2px 0 4px 0; }
.onnxkit-graph-toolbar { display: flex; gap: 4px; align-items: center; margin-bottom: 4px; }
.onnxkit-graph-toolbar button { min-width: 28px; }
.onnxkit-graph-toolbar input.onnxkit-search { width: 180px; }
.onnxkit-search-count { color: #5b6b7f; min-width: 120px; }
"""
