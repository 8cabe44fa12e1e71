"""Common subexpression elimination: compute each distinct expression once.

    before:  a = Relu (x)
             b = Relu (x)             # same op, same inputs, same attributes
             y = Add (a, b)
    after:   a = Relu (x)
             y = Add (a, a)

Equal constants (same type, shape and bytes) are merged first, so that nodes reading
copies of one constant become equal too. Random generators and nodes with subgraphs are
never merged.
"""

from __future__ import annotations


from onnxkit.ops.registry import normalize_domain
from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import subgraphs
from onnxkit.optimizer.passes.constant_folding import NONDETERMINISTIC


class CommonSubexpressions(Pass):
    """Merge duplicate constants and duplicate nodes."""

    name = "cse"

    def run(self, g: Graph, ctx: PassContext) -> int:
        renames = self._merge_constants(g, ctx)
        count = 1 if renames else 0
        seen: dict[tuple, object] = {}
        edits = []
        outputs = g.output_names
        for node in g.nodes:
            if subgraphs(node) or (normalize_domain(node.domain) == "" and node.op_type in NONDETERMINISTIC):
                continue
            key = (normalize_domain(node.domain), node.op_type, len(node.output),
                   tuple(renames.get(i, i) for i in node.input),
                   tuple(sorted(a.SerializeToString(deterministic=True) for a in node.attribute)))
            first = seen.get(key)
            if first is None:
                seen[key] = node
                continue
            pairs = [(o, f) for o, f in zip(node.output, first.output) if o]
            if any(o in outputs and (f in outputs or not f) for o, f in pairs):
                continue  # two graph outputs stay two values
            if any(o and not f for o, f in pairs):
                continue
            if not ctx.may_rewrite():
                break
            for o, f in pairs:
                renames[o] = f
            edits.append(Edit([node], renames={o: f for o, f in pairs}))
            ctx.record(self.name, "duplicate node", [node], [], f"same as {first.name!r}")
            count += 1
        g.apply(edits)
        return count

    def _merge_constants(self, g: Graph, ctx: PassContext) -> dict[str, str]:
        by_content: dict[tuple, str] = {}
        renames: dict[str, str] = {}
        inputs, outputs = g.input_names, g.output_names
        by_shape: dict[tuple, list[str]] = {}
        for name, t in g.initializers.items():
            if name not in inputs and name not in outputs:
                by_shape.setdefault((t.data_type, tuple(t.dims)), []).append(name)
        candidates = [n for names in by_shape.values() if len(names) > 1 for n in names]
        for name in candidates:
            t = g.initializers[name]
            if not ctx.may_rewrite():
                break
            digest = g.content_digest(name)
            if digest is None:
                continue
            key = (t.data_type, tuple(t.dims), digest)
            if key in by_content:
                renames[name] = by_content[key]
            else:
                by_content[key] = name
        if renames:
            for name in renames:
                g.drop_initializer(name)
            g.apply_renames(renames)
            shown = ", ".join(f"{a} = {b}" for a, b in list(renames.items())[:4])
            ctx.record(self.name, "duplicate constants", [], [],
                       f"merged {len(renames)} duplicate initializer(s): {shown}"
                       + (", ..." if len(renames) > 4 else ""))
        return renames


PASS = CommonSubexpressions()
