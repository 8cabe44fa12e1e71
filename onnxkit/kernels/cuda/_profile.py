"""Where a model leaves the GPU: a trace callback that tabulates every node of a run.

    prof = DeviceProfile(sess)
    sess.run(None, feeds, trace=prof)
    print(prof.table())        # node, op, where it ran, why, h2d / d2h bytes, ms

Each row reads the executor's record of the node that just ran (``last_record``):
placement ("cuda" or "host"), the reason a node with a cuda kernel ran on the host, and
its copies between host and device memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnxkit.html import terminal_text


@dataclass(frozen=True)
class ProfileRow:
    path: str  # "" for the main graph, "loop/body" inside a subgraph
    node: str
    op_type: str
    kernel: str
    placement: str
    reason: str
    h2d_bytes: int
    d2h_bytes: int
    h2d_count: int
    d2h_count: int
    elapsed: float  # seconds


class DeviceProfile:
    """A trace callback for ``Session(..., executor="cuda")``; one row per node run."""

    def __init__(self, session_or_executor):
        self.executor = getattr(session_or_executor, "executor", session_or_executor)
        self.rows: list[ProfileRow] = []

    def __call__(self, event) -> None:
        record = self.executor.last_record()
        if record is None:
            return
        self.rows.append(ProfileRow(
            event.path, event.node.name or "<unnamed>", event.node.op_type, event.kernel,
            record.placement, record.reason, record.bytes("h2d"), record.bytes("d2h"),
            record.count("h2d"), record.count("d2h"), event.elapsed))

    def host_rows(self) -> list[ProfileRow]:
        """The nodes that ran on the host while a device input had to come down, or that
        copied anything: where the model leaves the GPU."""
        return [r for r in self.rows if r.placement == "host" and (r.d2h_count or r.h2d_count)]

    def totals(self) -> dict:
        return {
            "nodes": len(self.rows),
            "cuda_nodes": sum(r.placement == "cuda" for r in self.rows),
            "host_nodes": sum(r.placement == "host" for r in self.rows),
            "h2d_bytes": sum(r.h2d_bytes for r in self.rows),
            "d2h_bytes": sum(r.d2h_bytes for r in self.rows),
            "transfers": sum(r.h2d_count + r.d2h_count for r in self.rows),
            "ms": 1e3 * sum(r.elapsed for r in self.rows),
        }

    def table(self, only_transfers: bool = False) -> str:
        """A fixed-width table of the rows (only those that copied, if asked)."""
        rows = [r for r in self.rows if r.h2d_count or r.d2h_count] if only_transfers else self.rows
        head = f"{'node':<24} {'op':<20} {'where':<5} {'h2d B':>10} {'d2h B':>10} {'ms':>8}  why"
        lines = [head, "-" * len(head)]
        for r in rows:
            name = f"{r.path}/{r.node}" if r.path else r.node
            lines.append(f"{name[:24]:<24} {r.op_type[:20]:<20} {r.placement:<5} "
                         f"{r.h2d_bytes:>10,} {r.d2h_bytes:>10,} {1e3 * r.elapsed:>8.3f}  "
                         f"{r.reason}")
        t = self.totals()
        lines.append(f"{t['nodes']} nodes ({t['cuda_nodes']} on cuda, {t['host_nodes']} on host), "
                     f"{t['transfers']} copies: {t['h2d_bytes']:,} B to the device, "
                     f"{t['d2h_bytes']:,} B back, {t['ms']:.3f} ms")
        return "\n".join(map(terminal_text, lines))  # node names and op types come from the model

    def clear(self) -> None:
        self.rows.clear()
