"""Which op types onnxkit level 2 leaves where onnxruntime's EXTENDED level fused them, on
the cached models of ``python -m benchmarks.kinds`` (run that first).

    python -m benchmarks.kinds.ops                    # every cached model
    python -m benchmarks.kinds.ops bert_ts llama_past_dynamo

For each model: the node counts, then each op type whose count differs, as
``op: onnxkit L2 -> ORT EXTENDED``. onnxruntime's fused ops (``com.microsoft`` domain) show
which patterns it matched that onnxkit did not.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.kinds.measure import CACHE, ort_session


def op_counts(model) -> Counter:
    import onnx.inliner

    if model.functions:
        model = onnx.inliner.inline_local_functions(model)
    return Counter(f"{n.domain + '.' if n.domain not in ('', 'ai.onnx') else ''}{n.op_type}"
                   for n in model.graph.node)


def compare(path: Path) -> str:
    import onnx

    from onnxkit.optimizer import optimize

    ours = op_counts(optimize(onnx.load(str(path)), 2)[0])
    with tempfile.TemporaryDirectory() as tmp:
        saved = Path(tmp) / "extended.onnx"
        ort_session(path, "ENABLE_EXTENDED", 1, save=saved)
        theirs = op_counts(onnx.load(str(saved), load_external_data=False))
    lines = [f"{path.stem}: onnxkit L2 {sum(ours.values())} nodes, ORT EXTENDED "
             f"{sum(theirs.values())}"]
    for op in sorted(set(ours) | set(theirs), key=lambda o: theirs[o] - ours[o]):
        if ours[op] != theirs[op]:
            lines.append(f"    {op}: {ours[op]} -> {theirs[op]}")
    return "\n".join(lines)


def main(argv=None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or sorted(
        p.stem for p in CACHE.glob("*.onnx"))
    for name in names:
        print(compare(CACHE / f"{name}.onnx"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
