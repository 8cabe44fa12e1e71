"""Kernel registration: which function runs (domain, op_type, since_version).

A kernel is a plain function. Inputs arrive positionally (an absent optional input is
``None``); attributes arrive as keyword arguments whose Python defaults are the spec's
defaults. It returns one value or a tuple of values, one per output::

    @op("LeakyRelu", 6, 16)
    def leaky_relu(X, *, alpha=0.01):
        return np.where(X >= 0, X, X * alpha).astype(X.dtype)

Registration is explicit: every version a kernel implements is named in its decorator.
Control-flow and other scope-aware kernels say so with ``context=True`` and receive a
``ctx`` keyword (see ``onnxkit.core.context.KernelContext``).

The same contract holds for the ``cpu`` and ``cuda`` executors, each with its own
``Registry``; a plan looks in the executor's registries in order.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterator

import onnx.defs

ML_DOMAIN = "ai.onnx.ml"
TRAINING_DOMAIN = "ai.onnx.preview.training"
ONNXKIT_DOMAIN = "onnxkit"


def normalize_domain(domain: str) -> str:
    """The default domain is spelled both ``""`` and ``"ai.onnx"``; use ``""``."""
    return "" if domain in ("", "ai.onnx") else domain


@dataclass(frozen=True)
class Kernel:
    """One registered implementation of an operator version."""

    domain: str
    op_type: str
    since_version: int
    fn: Callable
    context: bool = False
    registry: str = "reference"
    attributes: frozenset = field(default=frozenset(), compare=False)
    required: frozenset = field(default=frozenset(), compare=False)
    accepts_any_attribute: bool = field(default=False, compare=False)
    max_inputs: int | None = field(default=None, compare=False)
    reads_graph: bool = field(default=False, compare=False)

    @property
    def qualified_name(self) -> str:
        domain = self.domain or "ai.onnx"
        return f"{domain}::{self.op_type}-{self.since_version}"


def _signature_facts(fn: Callable, context: bool):
    """Read attribute names, required attributes and input arity off the signature."""
    params = inspect.signature(fn).parameters.values()
    attrs, required, any_attr, positional, varargs = set(), set(), False, 0, False
    for p in params:
        if p.kind == p.VAR_KEYWORD:
            any_attr = True
        elif p.kind == p.VAR_POSITIONAL:
            varargs = True
        elif p.kind == p.KEYWORD_ONLY:
            if context and p.name == "ctx":
                continue
            attrs.add(p.name)
            if p.default is p.empty:
                required.add(p.name)
        else:
            positional += 1
    return frozenset(attrs), frozenset(required), any_attr, (None if varargs else positional)


class Registry:
    """A table of kernels for one executor."""

    def __init__(self, name: str):
        self.name = name
        self._table: dict[tuple[str, str], dict[int, Kernel]] = {}

    def add(self, kernel: Kernel) -> None:
        versions = self._table.setdefault((kernel.domain, kernel.op_type), {})
        if kernel.since_version in versions:
            other = versions[kernel.since_version].fn
            raise ValueError(
                f"{kernel.qualified_name} is registered twice in the {self.name!r} registry "
                f"({other.__module__}.{other.__name__} and {kernel.fn.__module__}.{kernel.fn.__name__})"
            )
        versions[kernel.since_version] = kernel

    def versions(self, domain: str, op_type: str) -> list[int]:
        return sorted(self._table.get((normalize_domain(domain), op_type), {}))

    def get(self, domain: str, op_type: str, since_version: int) -> Kernel | None:
        return self._table.get((normalize_domain(domain), op_type), {}).get(since_version)

    def latest_at_most(self, domain: str, op_type: str, opset: int) -> Kernel | None:
        """For domains without onnx schemas: the newest kernel not newer than the opset."""
        table = self._table.get((normalize_domain(domain), op_type), {})
        fitting = [v for v in table if v <= opset]
        return table[max(fitting)] if fitting else None

    def __iter__(self) -> Iterator[Kernel]:
        for versions in self._table.values():
            yield from versions.values()

    def __len__(self) -> int:
        return sum(len(v) for v in self._table.values())

    def op_types(self) -> set[tuple[str, str]]:
        return set(self._table)


REFERENCE = Registry("reference")


def op(op_type: str, *versions: int, domain: str = "", context: bool = False,
       reads_graph: bool = False, registry: Registry = REFERENCE) -> Callable[[Callable], Callable]:
    """Register ``fn`` as the kernel of ``op_type`` for each listed ``since_version``.

    ``reads_graph=True`` (with ``context=True``): the kernel reads values of its enclosing
    graph beyond its inputs (``Gradient`` re-runs part of it), so the planner keeps every
    value defined before it alive until it has run.
    """
    if not versions:
        raise ValueError(f"@op({op_type!r}) must name at least one since_version")

    def decorate(fn: Callable) -> Callable:
        attrs, required, any_attr, max_inputs = _signature_facts(fn, context)
        for version in versions:
            registry.add(Kernel(normalize_domain(domain), op_type, version, fn, context,
                                registry.name, attrs, required, any_attr, max_inputs, reads_graph))
        return fn

    return decorate


@lru_cache(maxsize=None)
def schema_since_version(domain: str, op_type: str, opset: int) -> int | None:
    """The since_version of the operator that a model importing ``opset`` means.

    ``None`` when onnx has no schema for it (custom domains such as ``onnxkit``).
    """
    try:
        return onnx.defs.get_schema(op_type, opset, normalize_domain(domain)).since_version
    except onnx.defs.SchemaError:
        return None


@lru_cache(maxsize=None)
def schema_of(domain: str, op_type: str, opset: int):
    try:
        return onnx.defs.get_schema(op_type, opset, normalize_domain(domain))
    except onnx.defs.SchemaError:
        return None
