"""Every benchmark model, bit-identical across fresh processes on the ``cpu`` executor.

    python -m benchmarks.models          # once: the model files
    python -m benchmarks.determinism     # two fresh processes per model, cpu level 3

Each process loads one model, runs it once on its seeded input (``benchmarks.models.feeds``)
at ``cpu`` level 3 with the default settings (the static rule; ``ONNXKIT_CPU_TUNE`` unset)
and prints a SHA-256 of every output's bytes. The table says, per model, whether the two
processes agree. Exit status 1 when a model differs. (``tests/test_cpu_determinism.py``
checks the same on small models in CI.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.models import ALL_MODELS, model_path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import hashlib, sys
sys.path.insert(0, {root!r})
import onnxkit
from benchmarks.models import feeds, model_path
outs = onnxkit.Session(str(model_path({name!r})), executor="cpu", level=3).run(None, feeds({name!r}))
print(" ".join(hashlib.sha256(y.tobytes()).hexdigest()[:16] for y in outs))
"""


def fresh_process(name: str) -> str:
    """The output hashes of ``name`` run once in a new interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "ONNXKIT_CPU_TUNE"}
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(ROOT), name=name)],
                          capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(ALL_MODELS))
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    print("| model | processes | identical | output hash |")
    print("|---|---:|---|---|")
    differ = 0
    for name in args.models:
        if not model_path(name).exists():
            print(f"| {name} | - | missing (python -m benchmarks.models) | |")
            continue
        hashes = [fresh_process(name) for _ in range(args.processes)]
        same = len(set(hashes)) == 1
        differ += not same
        print(f"| {name} | {len(hashes)} | {'yes' if same else 'NO'} | "
              f"{hashes[0] if same else ' / '.join(hashes)} |", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
