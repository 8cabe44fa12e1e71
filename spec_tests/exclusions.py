"""Cases the spec suite does not hold onnxkit to, each with its reason.

"Not implemented" is never a reason: an unimplemented operator fails.
"""

EXCLUDED: dict[str, str] = {}

# Per executor: cases outside the operators an executor claims (e.g. the cuda subset).
EXCLUDED_BY_EXECUTOR: dict[str, dict[str, str]] = {}
