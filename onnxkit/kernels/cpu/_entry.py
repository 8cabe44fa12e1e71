"""A kernel's compiled variant for one signature, called without Numba's dispatcher.

    call = compiled_entry(kernel, signature)     # compiled, or loaded from the cache
    call(*args)                                  # args of exactly those types
    call = entry_of(kernel, args)                # after a dispatcher call on args: its variant

A dispatcher call types every argument to find the variant (a named tuple, as the
activation codes are, costs about a microsecond alone). A kernel of the small paths
runs a few microseconds, so the nodes that call one keep its entry point, looked up once
(a prepared node on its first call), and pass exactly the signature's types: the
arrays' dtype, rank and, where the signature says "C", C-contiguity are checked by the
caller (the entry point converts what it is given, it does not check). Such a kernel
is marked ``_can_compile = False``, so a call through its dispatcher compiles nothing
new either.
"""

from __future__ import annotations

from numba.core.compiler_lock import global_compiler_lock


def compiled_entry(kernel, signature: tuple):
    """The entry point of ``kernel``'s variant for ``signature`` (a tuple of Numba
    types), compiled or loaded from the cache on first use."""
    found = kernel.overloads.get(signature)
    if found is None:
        with global_compiler_lock:  # no other thread compiles a variant meanwhile
            kernel._can_compile = True
            try:
                kernel.compile(signature)
            finally:
                kernel._can_compile = False
        found = kernel.overloads[signature]
    return found.entry_point


def entry_of(kernel, args: tuple):
    """The entry point of the variant ``kernel`` holds for the types of ``args``, as its
    dispatcher types them (compiled or loaded already: a dispatcher call made it), or
    None where it holds none of exactly those types."""
    found = kernel.overloads.get(tuple(kernel.typeof_pyval(a) for a in args))
    return None if found is None else found.entry_point
