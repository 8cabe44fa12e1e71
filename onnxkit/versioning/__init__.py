"""IR version, opset and operator version, as functions a notebook can call.

    model_versions(model)        IR version, opsets imported, producer
    node_versions(model)         what each node's operator resolves to (since_version)
    versions("Reshape")          an operator's history: what changed at each version
    format_history("Reshape")    the same, as text
    support_table(model)         the versions a model needs vs those onnxkit implements
    coverage("reference")        every onnx operator version vs those onnxkit implements
    convert(model, 18)           onnx's version converter, with onnxkit errors
"""

from onnxkit.versioning.convert import VersionConversionError, changed_operators, convert
from onnxkit.versioning.history import (OperatorVersion, diff, format_history, since_versions,
                                        version_at, versions)
from onnxkit.versioning.ir import (ModelVersions, Release, first_release_with_opset, latest_opset,
                                   min_ir_version, model_versions, releases)
from onnxkit.versioning.resolve import NodeVersion, format_node_versions, node_versions
from onnxkit.versioning.support import (Coverage, Support, coverage, format_support,
                                        implemented_versions, support_table)

__all__ = [
    "model_versions", "ModelVersions", "releases", "Release", "first_release_with_opset",
    "latest_opset", "min_ir_version",
    "node_versions", "format_node_versions", "NodeVersion",
    "versions", "version_at", "since_versions", "format_history", "diff", "OperatorVersion",
    "support_table", "format_support", "Support", "coverage", "Coverage", "implemented_versions",
    "convert", "changed_operators", "VersionConversionError",
]
