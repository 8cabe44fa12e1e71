"""Register tiling: the core that MatMul / Gemm and Conv (implicit GEMM) share.

One block computes a BM x BN tile of ``Y = A @ B`` (A is M x K, B is K x N); each of its
``threads = (BM / TM) * (BN / TN)`` threads keeps TM x TN outputs in registers::

    thread t owns rows    m0 + tr + RT*i   (i < TM, tr = t // CT, RT = BM / TM)
              and columns n0 + tc + CT*j   (j < TN, tc = t %  CT, CT = BN / TN)
    acc[:, :] = 0
    fetch slice 0 of A (BM x BK) and of B (BK x BN) into registers
    for k0 in 0, BK, 2*BK, ... < K:
        registers -> shared As[BK, BM], Bs[BK, BN]; sync
        fetch slice k0 + BK into registers         (its loads fly while we multiply)
        for k < BK:                                 (``multiply_slice``)
            a[i] = As[k, tr + RT*i];  b[j] = Bs[k, tc + CT*j]
            acc[i, j] += a[i] * b[j]                TM*TN multiply-adds per TM+TN reads
        sync
    for i < TM:                                     (the epilogue, ``park_rows``)
        shared Cs[RT, BN] <- acc[i, :]              rows m0 + RT*i .. m0 + RT*(i+1)
        sync; every thread finishes some of Cs: Y[row, col] = epilogue(Cs[...]); sync

Every loop that indexes ``acc`` must be unrolled for ``acc`` to stay in registers. The
main loop's are; the epilogue (bias, residual, activation) is too much code to unroll
TM times, so ``acc`` is parked in local memory once at the end (an L1-cached copy of
TM*TN values per thread, next to the K/BK slices of TM*TN multiply-adds before it). The
epilogue reads it through shared memory, so its global stores are coalesced.

Rows and columns are dealt out with a stride (``tr + RT*i``), not in runs, so the 32
threads of a warp read 32 different shared-memory banks and store 32 neighbouring
outputs. Each element of a slice is fetched by one thread (``slot``): consecutive threads
take consecutive elements along whichever axis is contiguous in global memory.

Under the simulator every GPU thread is a Python thread, so it runs ``SIMULATED`` (small
tiles, the same code); the PTX compile check builds the real ones.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import cuda

from onnxkit.kernels.cuda._device import simulated, synchronize


@dataclass(frozen=True)
class Tiles:
    """Block tile BM x BN, slice depth BK, per-thread tile TM x TN."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    def __post_init__(self):
        n = self.threads
        if self.bm % self.tm or self.bn % self.tn or (self.bm * self.bk) % n \
                or (self.bn * self.bk) % n or n % self.bn:
            raise ValueError(f"{self}: threads must split both slices evenly and cover BN")

    def blocks(self, rows: int, cols: int) -> tuple[int, int]:
        """(column blocks, row blocks) covering a rows x cols product."""
        return -(-cols // self.bn), -(-rows // self.bm)


LARGE = Tiles(128, 128, 8, 8, 8)  # 256 threads, 64 outputs each: big products
WIDE = Tiles(64, 128, 8, 4, 8)  # 256 threads, 32 outputs each: 33-64 rows, many columns
MEDIUM = Tiles(64, 64, 16, 4, 4)  # 256 threads, 16 outputs each: small ones, 8-byte types
SIMULATED = Tiles(16, 16, 4, 2, 2)  # 64 threads
CHOICES = (LARGE, WIDE, MEDIUM)


@lru_cache(maxsize=None)
def multiprocessors() -> int:
    """Streaming multiprocessors of the current GPU (132 on an H100 when unknown)."""
    try:
        return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:  # the PTX compile check has no device
        return 132


#: what one simulated thread's pass over one K slice costs besides its multiply-adds, in
#: multiply-adds: its two barriers, each a round of the simulator's polling of every thread
SIMULATED_BARRIER_COST = 380


def simulated_cost(tiles: Tiles, rows: int, cols: int) -> float:
    """Time to simulate a rows x cols product, per unit of K, in multiply-adds.

    Every thread of every block takes K / BK slices; each costs the barriers and the
    thread's TM * TN * BK multiply-adds (padding included): counting threads alone picked
    a tiling the simulator ran slowest (the fit and its timings: docs/cuda.md, Testing).
    """
    per_slice = SIMULATED_BARRIER_COST + tiles.tm * tiles.tn * tiles.bk
    return math.prod(tiles.blocks(rows, cols)) * tiles.threads * per_slice / tiles.bk


def choose(rows: int, cols: int, batches: int, dtype) -> Tiles:
    """WIDE tiles when they give every multiprocessor a block and waste under half their
    rows, else MEDIUM (and split-K, ``k_splits``, where even those leave SMs idle).

    The rule follows the tilings timed on an H200 for every ResNet-50 batch-32 layer
    (docs/cuda.md): WIDE was fastest or within 2 % wherever it filled the GPU, MEDIUM where
    it did not; LARGE won one layer of 23, by 1 %, so only tuning tries it.

    8-byte types take MEDIUM: 64 float64 accumulators would spill out of registers.
    Under the simulator, the tiling that is cheapest to simulate (``simulated_cost``), so
    the real tilings run in the simulator tests too.
    """
    if simulated():
        return min((SIMULATED, MEDIUM, LARGE), key=lambda t: simulated_cost(t, rows, cols))
    if np.dtype(dtype).itemsize > 4:
        return MEDIUM
    x, y = WIDE.blocks(rows, cols)
    if 2 * rows > y * WIDE.bm and x * y * batches >= multiprocessors():
        return WIDE
    return MEDIUM


#: split-K: each split keeps at least this many slices of K, and splitting stops once the
#: grid has this many blocks per multiprocessor
MIN_SPLIT_SLICES = 8
SPLIT_BLOCKS_PER_SM = 2


def k_splits(tiles: Tiles, rows: int, cols: int, batches: int, depth: int) -> int:
    """Into how many parts to split K (1: none) so that a product with few output tiles
    but a long K (a batch-1 convolution's 512 x 49 x 4608) still fills the GPU: the parts
    run as blocks of their own and a second pass sums them (``split_chunk``)."""
    if simulated():
        return 1
    blocks = math.prod(tiles.blocks(rows, cols)) * batches
    if blocks >= multiprocessors():  # one full wave already
        return 1
    want = -(-SPLIT_BLOCKS_PER_SM * multiprocessors() // blocks)
    most = depth // (MIN_SPLIT_SLICES * tiles.bk)
    splits = max(1, min(want, most, 64))
    return -(-depth // split_chunk(depth, splits, tiles.bk))  # no empty part


def split_chunk(depth: int, splits: int, bk: int) -> int:
    """The length of K each of ``splits`` parts takes (a multiple of BK)."""
    per = -(-depth // splits)
    return -(-per // bk) * bk


#: (product, tiling chosen, {tiling: ms}) for every product timed by ``pick``
TUNING_LOG: list = []
_TUNED: dict = {}


def tuning() -> bool:
    """Time the tilings on the GPU instead of guessing: ``ONNXKIT_CUDA_TUNE=1``."""
    return os.environ.get("ONNXKIT_CUDA_TUNE", "0") not in ("", "0") and not simulated()


def pick(key, rows: int, cols: int, batches: int, dtype, run) -> Tiles:
    """The tiling for one product: ``choose``'s guess or, when ``tuning()``, the fastest.

    Tuning runs ``run(tiles)`` (a launch that only writes its own output) once per
    candidate to compile and warm it, then times three more, once per distinct ``key``
    (kind of product, its sizes, dtype) in this process, like cuDNN's benchmark mode.
    """
    if not tuning():
        return choose(rows, cols, batches, dtype)
    if key not in _TUNED:
        candidates = CHOICES if np.dtype(dtype).itemsize <= 4 else (MEDIUM,)
        timings = {}
        for tiles in candidates:
            run(tiles)
            synchronize()
            start = time.perf_counter()
            for _ in range(3):
                run(tiles)
            synchronize()
            timings[tiles] = (time.perf_counter() - start) / 3 * 1e3
        _TUNED[key] = min(timings, key=timings.get)
        TUNING_LOG.append((key, _TUNED[key], timings))
    return _TUNED[key]


# ---------------------------------------------------------------- device functions


@cuda.jit(device=True, inline=True)
def slot(e, depth_fast, width, depth):
    """Element ``e`` of a slice ``width`` wide and ``depth`` deep: ``(w, d)``.

    ``depth_fast``: consecutive ``e`` walk the depth (K) axis, else the width axis.
    """
    if depth_fast:
        return e // depth, e % depth
    return e % width, e // width


@lru_cache(maxsize=None)
def stash_slices(tiles: Tiles):
    """The slices a thread fetched into registers ``ra`` / ``rb`` -> shared ``As`` / ``Bs``.

    ``a_k_fast`` / ``b_k_fast`` say how they were fetched (``slot``'s ``depth_fast``).
    """
    BM, BN, BK, NT = tiles.bm, tiles.bn, tiles.bk, tiles.threads
    LA, LB = BM * BK // NT, BN * BK // NT

    @cuda.jit(device=True, inline=True)
    def stash(ra, rb, As, Bs, t, a_k_fast, b_k_fast):
        for l in range(LA):
            m, k = slot(t + l * NT, a_k_fast, BM, BK)
            As[k, m] = ra[l]
        for l in range(LB):
            n, k = slot(t + l * NT, b_k_fast, BN, BK)
            Bs[k, n] = rb[l]

    return stash


@lru_cache(maxsize=None)
def multiply_slice(tiles: Tiles):
    """``acc += As[:, rows]^T @ Bs[:, cols]`` for one thread: the inner loop above."""
    BK, TM, TN = tiles.bk, tiles.tm, tiles.tn
    RT, CT = tiles.bm // tiles.tm, tiles.bn // tiles.tn

    @cuda.jit(device=True, inline=True)
    def multiply(As, Bs, acc, a, b, tr, tc):
        for k in range(BK):
            for i in range(TM):
                a[i] = As[k, tr + RT * i]
            for j in range(TN):
                b[j] = Bs[k, tc + CT * j]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]

    return multiply


@lru_cache(maxsize=None)
def park_rows(tiles: Tiles):
    """``Cs[tr, tc + CT*j] = acc[i, j]``: row ``i`` of every thread's tile to shared memory.

    Cs[r, col] is then output row ``m0 + RT*i + r``, column ``n0 + col``.
    """
    TN, CT = tiles.tn, tiles.bn // tiles.tn

    @cuda.jit(device=True, inline=True)
    def park(acc, Cs, i, tr, tc):
        for j in range(TN):
            Cs[tr, tc + CT * j] = acc[i, j]

    return park
