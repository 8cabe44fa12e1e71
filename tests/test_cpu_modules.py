"""The cpu executor's kernel modules are an explicit list: none on disk is left out."""

from pathlib import Path

import onnxkit.kernels.cpu as cpu


def test_every_cpu_kernel_module_is_listed():
    """A kernel module missing from ``KERNEL_MODULES`` would silently register nothing."""
    on_disk = {p.stem for p in Path(cpu.__file__).parent.glob("*.py")
               if not p.stem.startswith("_")}
    listed = set(cpu.KERNEL_MODULES) | set(cpu.NOT_KERNEL_MODULES)
    assert listed == on_disk, (sorted(on_disk - listed), sorted(listed - on_disk))
    assert len(set(cpu.KERNEL_MODULES)) == len(cpu.KERNEL_MODULES)
