"""What the adapters share: installed versions and the graph's input names."""

from __future__ import annotations

from importlib import metadata
from importlib.util import find_spec


def dist_version(distribution: str, module: str) -> str | None:
    """``distribution``'s installed version, or None when ``module`` cannot be found."""
    if find_spec(module) is None:
        return None
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def graph_inputs(model) -> list[str]:
    """Names of the graph inputs a caller feeds (initializers with the same name excluded)."""
    init = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in init]


def graph_outputs(model) -> list[str]:
    return [o.name for o in model.graph.output]
