"""Kernel registration, kept at its old path: it lives in ``onnxkit.core.registry``."""

from onnxkit.core.registry import (ML_DOMAIN, ONNXKIT_DOMAIN, REFERENCE, TRAINING_DOMAIN, Kernel,
                                   Registry, normalize_domain, op, schema_of,
                                   schema_since_version)

__all__ = ["ML_DOMAIN", "ONNXKIT_DOMAIN", "REFERENCE", "TRAINING_DOMAIN", "Kernel", "Registry",
           "normalize_domain", "op", "schema_of", "schema_since_version"]
