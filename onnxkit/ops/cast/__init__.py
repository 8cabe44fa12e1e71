"""Reference kernels: Cast, CastLike and BitCast (value conversion and bit reinterpretation)."""
