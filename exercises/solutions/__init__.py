"""Reference solutions of the exercises, checked in CI (``ONNXKIT_EXERCISES=solutions``)."""
