"""Exercise 4: write the kernels that compile, for the CPU (Numba) and the GPU (Numba CUDA).

Notebook 7 (notebooks/07-kernels.ipynb) reads Softmax written three ways. Here you write
three small kernels in the two compiled styles:

- Task 4.1  ``softmax_rows``: loops over the rows of a matrix, compiled for the CPU (@njit);
- Task 4.2  ``leaky_relu_kernel``: a GPU kernel, one thread per element (@cuda.jit);
- Task 4.3  ``row_sums_kernel``: a GPU kernel, one block of threads per row, the threads'
            partial sums added as a tree in shared memory.

You write only the kernels; the code that calls them is given in exercises/given.py
(read it). Softmax-13 moves ``axis`` last and hands ``softmax_rows`` contiguous rows;
``leaky_relu`` launches ceil(n / THREADS) blocks of THREADS threads; ``row_sums`` launches
one block per row, of a power-of-two number of threads.

No GPU? The checks of tasks 4.2 and 4.3 run each in a child Python process: on the GPU
when this machine has a usable one, else in numba's CUDA simulator, where every GPU
thread is a Python thread (slow, but every line of your kernel runs, and an index past
the end of an array raises IndexError instead of corrupting memory).

Check your work:   ONNXKIT_EXERCISES=learner python -m pytest exercises -m task4_1
"""

from __future__ import annotations

import math  # noqa: F401  (for your kernels)

from numba import cuda, float64, njit  # noqa: F401

from exercises import given
from exercises.given import MAX_ROW_THREADS  # noqa: F401  (the length of your shared buffer)


@njit
def softmax_rows(x, y):
    """y[r, :] = softmax of row r of the 2-D float array x, for every row r:

        for r in range(rows):
            m = max of x[r, :]
            s = sum over i of exp(x[r, i] - m)
            y[r, i] = exp(x[r, i] - m) / s      for every i

    Subtracting the row's max keeps exp from overflowing (notebook 7). A row of -inf has
    no softmax: it comes out NaN, as in the reference kernel (onnxkit/ops/softmax/softmax.py);
    a -inf among finite values comes out 0. x and y are float32 or float64, C-contiguous.
    https://onnx.ai/onnx/operators/onnx__Softmax.html
    """
    # ## Task 4.1
    # Hint: plain loops and math.exp, written as in Python; Numba compiles them. Notebook 7,
    # section 2, reads the cpu executor's version (onnxkit/kernels/cpu/softmax.py).
    # Careful: under @njit a float division by zero raises ZeroDivisionError, as in Python.
    raise NotImplementedError("Need to implement for Task 4.1")


# debug=True, opt=False: on a real GPU a `raise` in a kernel (the stub's, or one of yours)
# reaches Python only in debug mode; the simulator raises either way. Keep them while you work.
@cuda.jit(debug=True, opt=False)
def leaky_relu_kernel(x, alpha, y):
    """y[i] = x[i] where x[i] >= 0, alpha * x[i] elsewhere; one GPU thread per element:

        i = cuda.grid(1)        # this thread's element: blockIdx.x * blockDim.x + threadIdx.x
        if i < x.size:          # the last block sticks out past the end of the arrays
            y[i] = ...

    x and y are 1-D device arrays of one float dtype; alpha is a scalar of that dtype.
    https://onnx.ai/onnx/operators/onnx__LeakyRelu.html
    """
    # ## Task 4.2
    # Hint: notebook 7, "Index math written once, compiled for both targets": all_taps_gpu
    # takes its index from cuda.grid(1) and checks it against the size first.
    raise NotImplementedError("Need to implement for Task 4.2")


@cuda.jit(debug=True, opt=False)
def row_sums_kernel(x, out):
    """out[r] = the sum of row r of the 2-D x: block r adds up row r with its nt threads.

        buf = cuda.shared.array(MAX_ROW_THREADS, float64)   # one per block, all its threads see it
        r, t, nt = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
        partial = x[r, t] + x[r, t + nt] + x[r, t + 2 nt] + ...   (while inside the row)
        buf[t] = partial
        for step = nt/2, nt/4, ..., 1:             (nt is a power of two)
            cuda.syncthreads()                     # wait until every thread wrote what it read
            if t < step: buf[t] += buf[t + step]
        thread 0: out[r] = buf[0]

    https://onnx.ai/onnx/operators/onnx__ReduceSum.html (over the last axis, keepdims=0)
    """
    # ## Task 4.3
    # Hint: notebook 7, "The cuda kernel: one block of threads per row", and the tree it runs
    # by hand with numpy; onnxkit/kernels/cuda/_rows.py writes the tree as a device function.
    raise NotImplementedError("Need to implement for Task 4.3")


# Given: Softmax-13 on softmax_rows and LeakyRelu on leaky_relu_kernel, in this exercise's
# own registry (exercises/given.py), so the checks can run onnx's test cases through them.
KERNELS = given.registry("exercise", softmax_rows, leaky_relu_kernel)
