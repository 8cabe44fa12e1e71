"""Reference kernels: random generators (numpy's PCG64, seeded from the ``seed`` attribute).

The spec promises no particular stream: equal seeds give equal outputs here, but not
the numbers another runtime draws.
"""
