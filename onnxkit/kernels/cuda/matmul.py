"""MatMul, Gemm and the onnxkit FusedGemm / FusedMatMul: one register-tiled GEMM kernel.

    for each batch b (grid z), output tile (rows m0.., cols n0..)     one block (``_tiles``)
        acc[TM, TN] = 0 in registers
        for k0 in 0, BK, 2*BK, ... < K:
            shared As[BK, BM] <- A'[b, m0.., k0..];  Bs[BK, BN] <- B'[b, k0.., n0..]
            (zero outside the matrices; the next slice is fetched while this one is used)
            acc += As^T @ Bs                        (``_tiles.multiply_slice``)
        Y[b, r, c] = act(alpha * acc + beta * C[b, r, c])

Operands are read through strides, so Gemm's transA / transB cost nothing, broadcast
batch dimensions (numpy.matmul) have stride 0, and C / Bias broadcast the same way.
Y is written through strides too (row-major unless told: Attention puts each head's
columns into [batch, seq, heads * size]). Accumulation is in the input dtype (float32 stays float32: no TF32, no float64).
https://onnx.ai/onnx/operators/onnx__MatMul.html  https://onnx.ai/onnx/operators/onnx__Gemm.html
"""

from functools import lru_cache

import numba
import numpy as np
from numba import cuda

from onnxkit.errors import KernelError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (DEVICE_DTYPES, HostFallback, device, empty, launch,
                                          launch_1d, need_dtype, note_algorithm, shape_tuple)
from onnxkit.kernels.cuda._scalar import activation as activation_formula, identity
from onnxkit.kernels.cuda._tiles import (MEDIUM, Tiles, k_splits, multiply_slice, park_rows, pick,
                                         slot, split_chunk, stash_slices)
from onnxkit.kernels.indexing import broadcast_offset, broadcast_strides, for_cuda
from onnxkit.ops.registry import op

NUMERIC = frozenset(d for d in DEVICE_DTYPES if d.kind in "iuf")
_offset = for_cuda(broadcast_offset)


@lru_cache(maxsize=None)
def gemm_kernel(dtype, formula, tiles: Tiles, split: bool = False):
    """The kernel for one element type, epilogue formula (``_scalar``) and tiling;
    ``split``: a split-K part (one batch, partial sums out), decided at compile time."""
    BM, BN, BK, TM, TN = tiles.bm, tiles.bn, tiles.bk, tiles.tm, tiles.tn
    RT, CT, NT = BM // TM, BN // TN, tiles.threads
    LA, LB = BM * BK // NT, BN * BK // NT  # slice elements each thread fetches
    elem = numba.from_dtype(dtype)
    zero = np.dtype(dtype).type(0)
    act = for_cuda(formula)
    stash, multiply, park = stash_slices(tiles), multiply_slice(tiles), park_rows(tiles)

    @cuda.jit
    def kernel(a, a_batch, a_rs, a_cs, b, b_batch, b_rs, b_cs, c, c_batch, c_rs, c_cs, has_c,
               batch_shape, batches, M, N, K, alpha, beta, p0, p1, out, out_batch, out_rs,
               splits, kchunk):
        As = cuda.shared.array((BK, BM), elem)
        Bs = cuda.shared.array((BK, BN), elem)
        Cs = cuda.shared.array((RT, BN), elem)
        acc = cuda.local.array((TM, TN), elem)
        fa = cuda.local.array(TM, elem)
        fb = cuda.local.array(TN, elem)
        ra = cuda.local.array(LA, elem)
        rb = cuda.local.array(LB, elem)
        t = cuda.threadIdx.x
        tr, tc = t // CT, t % CT
        m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
        a_k_fast, b_k_fast = a_cs == 1, b_rs == 1  # which way each operand is contiguous
        if split:  # split-K (one batch only): this block's share of K
            part, first, step = cuda.blockIdx.z, 0, 1
            kbeg = part * kchunk
            kend = min(K, kbeg + kchunk)
        else:
            part, first, step, kbeg, kend = 0, cuda.blockIdx.z, cuda.gridDim.z, 0, K
        for batch in range(first, batches, step):
            a0 = _offset(batch, batch_shape, a_batch)
            b0 = _offset(batch, batch_shape, b_batch)
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] = zero
            for k0 in range(kbeg - BK, kend, BK):  # k0 = kbeg - BK only fetches the first slice
                if k0 >= kbeg:
                    stash(ra, rb, As, Bs, t, a_k_fast, b_k_fast)
                    cuda.syncthreads()
                if k0 + BK < kend:
                    for l in range(LA):
                        m, k = slot(t + l * NT, a_k_fast, BM, BK)
                        m, k = m0 + m, k0 + BK + k
                        ra[l] = a[a0 + m * a_rs + k * a_cs] if m < M and k < kend else zero
                    for l in range(LB):
                        n, k = slot(t + l * NT, b_k_fast, BN, BK)
                        n, k = n0 + n, k0 + BK + k
                        rb[l] = b[b0 + k * b_rs + n * b_cs] if n < N and k < kend else zero
                if k0 >= kbeg:
                    multiply(As, Bs, acc, fa, fb, tr, tc)
                    cuda.syncthreads()
            c0 = _offset(batch, batch_shape, c_batch) if has_c else 0
            o0 = _offset(batch, batch_shape, out_batch)
            for i in range(TM):
                park(acc, Cs, i, tr, tc)
                cuda.syncthreads()
                for e in range(t, RT * BN, NT):
                    row, col = m0 + RT * i + e // BN, n0 + e % BN
                    if row < M and col < N:
                        if split:  # a partial sum: ``split_sum_kernel`` finishes it
                            out[part * M * N + row * N + col] = Cs[e // BN, e % BN]
                        else:
                            y = alpha * Cs[e // BN, e % BN]
                            if has_c:
                                y += beta * c[c0 + row * c_rs + col * c_cs]
                            out[o0 + row * out_rs + col] = act(y, p0, p1)
                cuda.syncthreads()

    return kernel


@lru_cache(maxsize=None)
def split_sum_kernel(dtype, formula):
    """Y[r, c] = act(alpha * sum of the splits' partial sums + beta * C[r, c]) (split-K's
    2nd pass; one batch, Y row-major)."""
    zero = np.dtype(dtype).type(0)
    act = for_cuda(formula)

    @cuda.jit
    def kernel(parts, splits, c, c_rs, c_cs, has_c, N, alpha, beta, p0, p1, out):
        o = cuda.grid(1)
        if o < out.size:
            y = zero
            for s in range(splits):
                y += parts[s * out.size + o]
            y = alpha * y
            if has_c:
                y += beta * c[(o // N) * c_rs + (o % N) * c_cs]
            out[o] = act(y, p0, p1)

    return kernel


def tiled_gemm(A, a_strides, B, b_strides, C, c_strides, batch_shape, M, N, K, out_shape,
               alpha=1.0, beta=1.0, formula=identity, p0=0.0, p1=0.0, tiles=None,
               out_strides=None, splits=None):
    """Launch the kernel. ``*_strides`` are (batch strides, row stride, col stride);
    ``out_strides`` (batch strides, row stride) place the product inside ``out_shape``
    (columns contiguous), by default the row-major [batch..., M, N]."""
    batches = int(np.prod(batch_shape, dtype=np.int64))
    if out_strides is None:
        out_strides = (_batch_strides(batch_shape, batch_shape, M * N), N)
    out = empty(out_shape, A.dtype)
    if out.size == 0:
        return out
    if -(-M // MEDIUM.bm) > 65535:
        raise HostFallback(f"{M} rows need more than 65535 blocks on the grid's y axis")
    has_c = C is not None
    c_flat, c_strides = (C.flat, c_strides) if has_c else (A.flat, (a_strides[0], 0, 0))
    args = (A.flat, a_strides[0], a_strides[1], a_strides[2],
            B.flat, b_strides[0], b_strides[1], b_strides[2],
            c_flat, c_strides[0], c_strides[1], c_strides[2], has_c,
            shape_tuple(batch_shape), batches, M, N, K, float(alpha), float(beta),
            float(p0), float(p1), out.flat, shape_tuple(out_strides[0]), out_strides[1])

    def run(tiles, splits=1):
        if splits == 1:
            launch(gemm_kernel(A.dtype, formula, tiles),
                   tiles.blocks(M, N) + (min(batches, 65535),), tiles.threads, *args, 1, K)
            return
        parts = empty((splits * M * N,), A.dtype)
        launch(gemm_kernel(A.dtype, formula, tiles, True), tiles.blocks(M, N) + (splits,),
               tiles.threads, *args[:-3], parts.flat, args[-2], args[-1], splits,
               split_chunk(K, splits, tiles.bk))
        launch_1d(split_sum_kernel(A.dtype, formula), M * N, parts.flat, splits, c_flat,
                  c_strides[1], c_strides[2], has_c, N, float(alpha), float(beta), float(p0),
                  float(p1), out.flat)

    tiles = tiles or pick(("gemm", M, N, K, batches, A.dtype), M, N, batches, A.dtype, run)
    row_major = out_strides[1] == N and out.size == M * N
    splits = splits or (k_splits(tiles, M, N, 1, K) if batches == 1 and row_major else 1)
    run(tiles, splits)
    note_algorithm(f"gemm {tiles.bm}x{tiles.bn}" + (f" split-K {splits}" if splits > 1 else ""))
    return out


def _operands(A, B):
    A, B = device(A, "A"), device(B, "B")
    need_dtype(A, NUMERIC, "A")
    if A.dtype != B.dtype:
        raise HostFallback(f"A is {A.dtype} and B is {B.dtype}")
    return A, B


def _matmul(A, B, bias=None, formula=identity, p0=0.0, p1=0.0, tiles=None, trans_a=0, trans_b=0):
    """numpy.matmul: 1-D operands gain (then lose) a dimension; batch dimensions broadcast.
    ``trans_a`` / ``trans_b``: the operand's last two axes are read swapped (its strides)."""
    if A.ndim == 0 or B.ndim == 0:
        raise KernelError(f"MatMul needs operands of rank >= 1, got shapes {list(A.shape)} "
                          f"and {list(B.shape)}")
    a_shape = (1,) + A.shape if A.ndim == 1 else A.shape
    b_shape = B.shape + (1,) if B.ndim == 1 else B.shape
    if (trans_a and A.ndim < 2) or (trans_b and B.ndim < 2):
        raise KernelError(f"FusedMatMul: a transposed operand needs rank 2 or more, got shapes "
                          f"{list(A.shape)} and {list(B.shape)}")
    a_shape = a_shape[:-2] + a_shape[:-3:-1] if trans_a else a_shape
    b_shape = b_shape[:-2] + b_shape[:-3:-1] if trans_b else b_shape
    (M, K), (K2, N) = a_shape[-2:], b_shape[-2:]
    if K != K2:
        raise KernelError(f"MatMul: inner dimensions differ: A {list(A.shape)} @ B {list(B.shape)}")
    batch = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    final = batch + ((M,) if A.ndim > 1 else ()) + ((N,) if B.ndim > 1 else ())
    a_strides = (_batch_strides(a_shape[:-2], batch, M * K),) + ((1, M) if trans_a else (K, 1))
    b_strides = (_batch_strides(b_shape[:-2], batch, K * N),) + ((1, K) if trans_b else (N, 1))
    c_strides = None
    if bias is not None:
        if tuple(np.broadcast_shapes(final, bias.shape)) != final:
            raise HostFallback(f"Bias {list(bias.shape)} would broadcast the product {list(final)}")
        c_strides = _bias_strides(bias.shape, final, batch, A.ndim > 1, B.ndim > 1)
    return tiled_gemm(A, a_strides, B, b_strides, bias, c_strides, batch, M, N, K, final,
                      1.0, 1.0, formula, p0, p1, tiles)


def _batch_strides(shape, batch, matrix_size) -> tuple:
    if not batch:
        return (0,)
    return tuple(int(s) * matrix_size for s in broadcast_strides(shape, batch))


def _bias_strides(shape, final, batch, has_m, has_n) -> tuple:
    """(batch strides, row stride, col stride) of a Bias broadcast to the product."""
    strides = list(broadcast_strides(shape, final))
    col = strides.pop() if has_n else 0
    row = strides.pop() if has_m else 0
    return (tuple(int(s) for s in strides) if batch else (0,)), int(row), int(col)


def _gemm(A, B, C, alpha, beta, transA, transB, formula=identity, p0=0.0, p1=0.0, tiles=None,
          splits=None):
    A, B = _operands(A, B)
    if A.ndim != 2 or B.ndim != 2:
        raise KernelError(f"Gemm needs 2-D A and B, got shapes {list(A.shape)} and {list(B.shape)}")
    M, K = A.shape[::-1] if transA else A.shape
    K2, N = B.shape[::-1] if transB else B.shape
    if K != K2:
        raise KernelError(f"Gemm: A' is {[M, K]} and B' is {[K2, N]} (transA={transA}, "
                          f"transB={transB}); their inner dimensions differ")
    a_strides = ((0,), 1, A.shape[1]) if transA else ((0,), A.shape[1], 1)
    b_strides = ((0,), 1, B.shape[1]) if transB else ((0,), B.shape[1], 1)
    c_strides = None
    if C is not None and beta != 0.0:
        C = device(C, "C")
        if C.dtype != A.dtype:
            raise HostFallback(f"C is {C.dtype}, A is {A.dtype}")
        rs, cs = broadcast_strides(C.shape, (M, N))
        c_strides = ((0,), int(rs), int(cs))
    else:
        C = None
    return tiled_gemm(A, a_strides, B, b_strides, C, c_strides, (), M, N, K, (M, N), alpha, beta,
                      formula, p0, p1, tiles, splits=splits)


@op("MatMul", 1, 9, 13, registry=CUDA)
def matmul(A, B):
    return _matmul(*_operands(A, B))


@op("Gemm", 7, 9, 11, 13, registry=CUDA)
def gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    return _gemm(A, B, C, alpha, beta, transA, transB)


@op("FusedGemm", 1, domain="onnxkit", registry=CUDA)
def fused_gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0, activation="",
               activation_params=None):
    formula, p0, p1 = activation_formula(activation, activation_params)
    return _gemm(A, B, C, alpha, beta, transA, transB, formula, p0, p1)


@op("FusedMatMul", 1, domain="onnxkit", registry=CUDA)
def fused_matmul(A, B, Bias=None, *, activation="", activation_params=None, transA=0, transB=0):
    formula, p0, p1 = activation_formula(activation, activation_params)
    A, B = _operands(A, B)
    if Bias is not None:
        Bias = device(Bias, "Bias")
        if Bias.dtype != A.dtype:
            raise HostFallback(f"Bias is {Bias.dtype}, A is {A.dtype}")
    return _matmul(A, B, Bias, formula, p0, p1, trans_a=transA, trans_b=transB)
