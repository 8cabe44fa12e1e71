"""What every subcommand shares: bounded argument types, file checks, safe printing.

Every value a user types is checked where argparse reads it, so a bad one is a one-line
``onnxkit CMD: error: argument --x: ...`` naming the bound; every file named is checked with
``os.stat`` before it is opened (a FIFO, device or folder is refused, never read); every
string from a model is printed through ``terminal_text`` (escape bytes and bidi overrides
shown as ``\\x1b`` / ``\\u202e``, never sent to the terminal).
"""

from __future__ import annotations

import argparse
import math
import os
import stat
import sys

from onnxkit.errors import OnnxkitError
from onnxkit.html import terminal_text

#: most timed runs ``onnxkit run --repeat`` accepts
MAX_REPEAT = 100_000
#: largest ``--seed`` (numpy seeds are unbounded; a seed past 2**64 is a typo)
MAX_SEED = 2**64 - 1
#: most worker processes ``onnxkit conformance --jobs`` starts
MAX_JOBS = 256
#: largest value ``--dim SYMBOL=N`` gives a symbolic dimension
MAX_DIM = 2**31 - 1


class ArgumentError(OnnxkitError):
    """A command-line argument names a file or value the command cannot use."""


def say(text: str = "") -> None:
    """Print ``text`` (which may hold model strings) with every control byte made visible."""
    print(terminal_text(text, newlines=True))


def bounded_int(low: int, high: int | None = None):
    """An argparse type: an integer in [low, high], the bounds named when it is not."""

    def parse(text: str) -> int:
        try:
            value = int(text.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high:,}" if high is not None else f"{low} or more"
            raise argparse.ArgumentTypeError(f"{short(text)} is out of range: give a whole number "
                                             f"{bound}")
        return value

    parse.__name__ = "integer"
    return parse


def tolerance(text: str) -> float:
    """An argparse type: a finite, non-negative float (``--rtol``, ``--atol``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number, 0 or more")
    return value


def pairs(items: list[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` items -> dict; a missing ``=``, an empty name or a repeat is an error."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ArgumentError(f"{option} {short(item)!r} must look like NAME=VALUE")
        if name in out:
            raise ArgumentError(f"{option} {short(name)!r} is given twice")
        out[name] = value
    return out


_KINDS = [(stat.S_ISREG, "a file"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket")]


def file_kind(mode: int) -> str:
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "of an unknown kind"


def regular_file(path: str, what: str) -> os.stat_result:
    """``os.stat`` of ``path``, which must be an existing regular file (never a FIFO, device
    or folder, which would hang or never end if read)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ArgumentError(f"{what} {short(path)!r}: no such file") from None
    except (OSError, ValueError) as exc:  # permission, too long, NUL in the name, ...
        raise ArgumentError(f"{what} {short(path)!r}: cannot use it ({_reason(exc)})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ArgumentError(f"{what} {short(path)!r} is {file_kind(st.st_mode)}, "
                            f"not a regular file")
    return st


def open_regular(path: str, what: str):
    """Open ``path`` for reading as a binary file, refusing anything but a regular file.

    The file is opened without blocking and checked again through its descriptor, so a
    FIFO swapped in after the first check cannot make the open hang."""
    regular_file(path, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:
        raise ArgumentError(f"{what} {short(path)!r}: cannot open it ({_reason(exc)})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ArgumentError(f"{what} {short(path)!r} is {file_kind(st.st_mode)}, "
                            f"not a regular file")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def writable_target(path: str, what: str) -> None:
    """``path`` may be written: absent, or a regular file, in an existing folder."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except (OSError, ValueError) as exc:
        raise ArgumentError(f"{what} {short(path)!r}: cannot use it ({_reason(exc)})") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise ArgumentError(f"{what} {short(path)!r} is {file_kind(st.st_mode)}: "
                            f"give a file path")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ArgumentError(f"{what} {short(path)!r}: the folder {short(folder)!r} does not exist")


def write_atomically(path: str, data: bytes, what: str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then rename:
    a failure leaves the old file whole (and ``out == in`` cannot truncate the input)."""
    writable_target(path, what)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "xb") as f:
            f.write(data)
        os.replace(tmp, path)
    except (OSError, ValueError) as exc:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise ArgumentError(f"{what} {short(path)!r}: cannot write it ({_reason(exc)})") from None


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc)


def short(text: str, limit: int = 200) -> str:
    """User-typed text as an error repeats it: at most ``limit`` characters."""
    return text if len(text) <= limit else text[:limit] + f"\u2026 ({len(text)} chars)"


def reconfigure_streams() -> None:
    """Never fail on printing: characters the terminal's encoding lacks become escapes."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass
