"""Reference kernels: reductions (Reduce*), arg-extrema (ArgMax, ArgMin) and scans (CumSum, CumProd)."""
