"""Buffer plan (level 3): intermediate values share buffers once their lifetimes are over.

    for each node, in order:
        its outputs take a free buffer big enough (the smallest such), or its in-place
        input's buffer, or a new one
        values read for the last time here give their buffers back
    -> onnxkit.buffers = {"buffers": [bytes, ...], "values": {value: buffer index}}

Only values with a static shape are planned (the others are allocated at run time). The
report compares the bytes of all intermediate values with the bytes of the buffers.
The graph is unchanged.
"""

from __future__ import annotations

import json

import numpy as np

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Graph
from onnxkit.optimizer.passes.inplace_plan import last_readers, plan_inplace
from onnxkit.runtime.values import np_dtype

KEY = "onnxkit.buffers"


def value_bytes(g: Graph, name: str) -> int | None:
    shape, dtype = g.static_shape(name), g.dtype(name)
    if shape is None or dtype is None:
        return None
    try:
        itemsize = np_dtype(dtype).itemsize
    except (KeyError, TypeError, ValueError):
        return None
    return int(np.prod(shape, dtype=np.int64)) * itemsize


def plan_buffers(g: Graph) -> dict:
    last = last_readers(g)
    inplace = plan_inplace(g)
    fixed = g.input_names | g.output_names | set(g.initializers)
    sizes: list[int] = []
    free: list[int] = []
    where: dict[str, int] = {}
    total = 0
    for pos, node in enumerate(g.nodes):
        for k, out in enumerate(node.output):
            size = value_bytes(g, out) if out and out not in fixed else None
            if size is None:
                continue
            total += size
            if k == 0 and node.name in inplace and node.input[inplace[node.name]] in where:
                where[out] = where[node.input[inplace[node.name]]]
                continue
            fits = [b for b in free if sizes[b] >= size]
            if fits:
                buf = min(fits, key=lambda b: sizes[b])
                free.remove(buf)
            else:
                buf = len(sizes)
                sizes.append(size)
            where[out] = buf
        for name in set(node.input):
            if name in where and last.get(name) == pos:
                buf = where[name]
                if buf not in free and not any(where.get(o) == buf for o in node.output):
                    free.append(buf)
        for out in node.output:  # outputs nobody reads die at once
            if out in where and out not in last and where[out] not in free:
                free.append(where[out])
    return {"buffers": sizes, "values": where, "bytes_without_reuse": total,
            "bytes_with_reuse": int(sum(sizes))}


class BufferPlan(Pass):
    """Assign intermediate values to shared buffers (a plan for the executors)."""

    name = "buffer_plan"
    repeat = False

    def run(self, g: Graph, ctx: PassContext) -> int:
        plan = plan_buffers(g)
        g.metadata[KEY] = json.dumps({"buffers": plan["buffers"], "values": plan["values"]},
                                     sort_keys=True)
        mb = 1024 ** 2
        plan["summary"] = (f"{len(plan['values'])} values in {len(plan['buffers'])} buffers: "
                           f"{plan['bytes_with_reuse'] / mb:.1f} MiB instead of "
                           f"{plan['bytes_without_reuse'] / mb:.1f} MiB")
        ctx.report.plans["buffers"] = plan
        return 0


PASS = BufferPlan()
