"""Shared by every test suite (tests/, spec_tests/, exercises/, the notebooks under nbval).

Which convolution algorithm the ``cpu`` executor runs is timed per layer on the machine
(``onnxkit/kernels/cpu/_tuning.py``); under test it follows the static rule instead, so
that the kernel serving a case never depends on the machine's load. Run with
``ONNXKIT_CPU_TUNE=1`` to test the timed choice.

A test leaves ``sys.modules``' torchvision entries as it found them: the onnx2torch adapter
puts a stand-in there where torchvision cannot be imported beside this torch, and a later
test in the same xdist worker (transformers' ``find_spec("torchvision")``) then failed on
the stand-in's missing ``__spec__``, depending on which tests shared a worker.
"""

import os
import sys

import pytest

os.environ.setdefault("ONNXKIT_CPU_TUNE", "0")

_TORCHVISION = ("torchvision", "torchvision.ops")


@pytest.fixture(autouse=True)
def _torchvision_modules_restored():
    before = {name: sys.modules.get(name) for name in _TORCHVISION}
    yield
    for name, module in before.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module
