"""Neural-network operators: convolution, pooling, normalization, dropout.

Window arithmetic (pads, auto_pad, output sizes, sliding-window views) lives once in
``_windows``; every convolution and pooling kernel uses it.
"""
