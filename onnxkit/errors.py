"""One exception hierarchy for everything a user can cause.

Every message names what is involved (node name and op type, domain, opset, input
name) and says what would be accepted, so a learner knows what to fix.
"""

from __future__ import annotations

import hashlib

from onnxkit.html import terminal_text  # a leaf like this module: it imports no onnxkit

#: the longest model string a message repeats in full; longer ones are cut (see ``shown``)
NAME_LIMIT = 80
#: the longest message of another library (which may quote the model) repeated in full
MESSAGE_LIMIT = 600


class OnnxkitError(Exception):
    """Base class of every error onnxkit raises on purpose."""


class ModelLoadError(OnnxkitError):
    """The model could not be read: missing, truncated, malformed or unsafe."""


class UnsafeModelError(ModelLoadError):
    """The model asks for something onnxkit refuses (e.g. external data outside its folder)."""


class GraphError(OnnxkitError):
    """The graph is not well formed: cycles, missing producers, duplicate outputs..."""


class NotImplementedOpError(OnnxkitError):
    """No kernel exists for an operator at the version the model asks for."""


class AttributeMismatchError(OnnxkitError):
    """A node's attribute is missing, unknown or of the wrong type."""


class AttributeValueError(AttributeMismatchError, ValueError):
    """A node's attribute has a value its op does not accept (an unknown mode, an odd
    blocksize...). Also a ``ValueError``, so code that caught one before still does."""


class InputError(OnnxkitError):
    """A feed given to Session.run is unknown, missing, or of the wrong type or shape."""


class KernelError(OnnxkitError):
    """A kernel failed while running a node; the message names the node and its inputs."""


class KernelInputError(KernelError, ValueError):
    """A kernel's inputs do not fit its op (rank, shape, value range); the message names the
    op and the input. Also a ``ValueError``, so code that caught one before still does."""


class KernelIndexError(KernelError, IndexError):
    """An index input points outside the tensor it indexes (Gather, ScatterND...). Also an
    ``IndexError``."""


class LimitExceededError(OnnxkitError):
    """A configurable safety limit (memory, loop trips, recursion depth) was hit."""


class ExecutorUnavailableError(OnnxkitError):
    """The requested executor cannot run here (e.g. `cuda` without a GPU or simulator)."""


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{text[:limit]}\u2026 ({len(text)} chars, #{digest})"


def shown(value, limit: int = NAME_LIMIT) -> str:
    """A model string as a message repeats it: cut past ``limit`` characters, with a hash.

    ``'aaaa…' (100000 chars, #1f2e3d4c)``-style cuts keep messages short when a node or
    value name is huge, while the hash still tells two long names apart. Control, bidi and
    zero-width characters are written as escapes (``\\x1b``, ``\\u202e``): a name cannot
    reorder, hide or recolour the rest of the message where it is printed."""
    return terminal_text(_cut(str(value), limit))


def clipped(message, limit: int = MESSAGE_LIMIT) -> str:
    """Another library's message (onnx's parser, checker) as ours repeats it: cut like
    ``shown``, its line breaks kept, since it may quote the model at length."""
    return terminal_text(_cut(str(message), limit), newlines=True)


def describe_node(node) -> str:
    """`node 'conv1' (Conv, domain 'ai.onnx')` — the way every message names a node."""
    name = shown(node.name) if node.name else "<unnamed>"
    domain = shown(node.domain or "ai.onnx")
    return f"node '{name}' ({shown(node.op_type)}, domain '{domain}')"


def quoted(value, limit: int = NAME_LIMIT) -> str:
    """``shown(value)`` in quotes: how a message names a value, input, domain or graph."""
    return f"'{shown(value, limit)}'"


def listed(values, limit: int = 8) -> str:
    """Up to ``limit`` model strings, each ``quoted``, then how many more there are."""
    values = list(values)
    head = ", ".join(quoted(v) for v in values[:limit])
    return head + (f", ... ({len(values) - limit} more)" if len(values) > limit else "")
