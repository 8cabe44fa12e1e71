"""Where the time goes: the per-op-type and per-node profile of onnxkit cpu, level 3.

    python -m benchmarks.profile [--models resnet18 ...] [--runs 20] [--out benchmarks/results]

Writes ``profile.md``: for each benchmark model, ``Profiler.table()`` by op type and the
slowest nodes, over ``--runs`` runs after three warm-up runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.models import ALL_MODELS, feeds, model_path

ROOT = Path(__file__).resolve().parent


def profile(name: str, runs: int, top: int = 8) -> str:
    from onnxkit import Session
    from onnxkit.runtime.profile import Profiler

    sess = Session(str(model_path(name)), executor="cpu", level=3)
    inputs = feeds(name)
    for _ in range(3):
        sess.run(None, inputs)
    prof = Profiler(sess)
    for _ in range(runs):
        sess.run(None, inputs, trace=prof)
    return f"## {name}\n\n{prof.table()}\n\n{prof.table(by='node', top=top)}\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(ALL_MODELS),
                        choices=list(ALL_MODELS))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=ROOT / "results")
    args = parser.parse_args(argv)
    parts = [f"# Where the time goes: onnxkit cpu, level 3\n\nPer op type and the slowest "
             f"nodes, {args.runs} runs each (``onnxkit.runtime.profile.Profiler``; "
             f"``python -m benchmarks.profile``).\n"]
    for name in args.models:
        parts.append(profile(name, args.runs))
        print(f"profiled {name}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "profile.md").write_text("\n".join(parts))
    print(f"wrote {args.out / 'profile.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
