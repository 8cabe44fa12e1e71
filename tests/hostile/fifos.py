"""FIFOs for tests of code that must never open one: a watchdog unblocks a wrong open."""

from __future__ import annotations

import contextlib
import os
import threading


@contextlib.contextmanager
def unblocked(fifo, after: float = 30.0):
    """A FIFO that a watchdog opens (for writing and for reading, then closes) after ``after``
    seconds, so a command that wrongly opens it gets end-of-file or a broken pipe and fails,
    never hangs."""
    done = threading.Event()

    def watchdog():
        if done.wait(after):
            return
        while not done.is_set():
            for mode in (os.O_WRONLY, os.O_RDONLY):
                try:
                    os.close(os.open(fifo, mode | os.O_NONBLOCK))
                except OSError:  # writing: no reader yet
                    pass
            done.wait(0.1)

    thread = threading.Thread(target=watchdog, daemon=True)
    thread.start()
    try:
        yield str(fifo)
    finally:
        done.set()
        thread.join()
