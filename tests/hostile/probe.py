"""A test-only kernel that misbehaves on purpose, to prove the sandbox notices each finding.

Registered (in the fuzz worker only) as ``test.hostile::Probe``; ``what`` picks the failure.
"""

import os
import signal
import tempfile
import time

import numpy as np

from onnxkit.ops.registry import op


class ProbeEscape(BaseException):
    """Not an OnnxkitError, and not an Exception the evaluator would wrap."""


@op("Probe", 1, domain="test.hostile")
def probe(x, *, what="ok"):
    if what == "raise":
        raise ProbeEscape("a raw exception from deep inside")
    if what == "hang":
        while True:
            pass
    if what == "stuck":  # as if blocked in C code: the per-case timer cannot interrupt it
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
        time.sleep(3600)
    if what == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if what == "escape":  # a file outside the model's folder and outside Python's own
        with open(os.path.join(tempfile.gettempdir(), "onnxkit-probe-escape"), "wb") as f:
            f.write(b"x")
    if what == "allocate":
        return np.ones(2**31, np.uint8)
    return x
