"""Shared by every test suite (tests/, spec_tests/, exercises/, the notebooks under nbval).

Which convolution algorithm the ``cpu`` executor runs is timed per layer on the machine
(``onnxkit/kernels/cpu/_tuning.py``); under test it follows the static rule instead, so
that the kernel serving a case never depends on the machine's load. Run with
``ONNXKIT_CPU_TUNE=1`` to test the timed choice.
"""

import os

os.environ.setdefault("ONNXKIT_CPU_TUNE", "0")
