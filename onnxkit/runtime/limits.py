"""Safety limits, kept at their old path: they live in ``onnxkit.core.limits``."""

from onnxkit.core.limits import (DEFAULT_LIMITS, GiB, Limits, MemoryBudget, check_allocation,
                                 current_budget, current_limits, default_run_bytes,
                                 physical_memory, reset_limits, run_bytes_for, using_limits)

__all__ = ["DEFAULT_LIMITS", "GiB", "Limits", "MemoryBudget", "check_allocation",
           "current_budget", "current_limits", "default_run_bytes", "physical_memory",
           "reset_limits", "run_bytes_for", "using_limits"]
