"""A graph plan written out as one straight-line Python function.

The evaluator's loop (``evaluator.run_graph``) finds each value by name in a dict and each
step's kernel, inputs and outputs on its ``Step``; on a graph of small nodes that
bookkeeping costs more than the kernels do. ``straight_line(plan)`` writes the same run
as the source of one function, values in local variables:

    def run(feeds, outer, state):
        budget = state.budget; live = budget.live; limit = budget.limit
        try: v0 = feeds[N[0]]                     # a graph input, where first read
        except (KeyError, TypeError): raise missing(0, N[0]) from None
        v1 = feeds.get(N[1], C[0])                # an initializer (a feed may replace it)
        budget.live = live                        # what the kernel's allocations see
        try: r = F[0](v0, v1, **A[0])             # step 0: its kernel and attributes
        except Exception as exc: fail(0, [v0, v1], exc)
        if type(r) is ndarray: v2 = r; h2 = r.nbytes
        else: v2 = results(0, r, state)[0]; h2 = nbytes(v2)
        live += h2
        del v0                                    # values no later step reads
        if live > limit: over(budget, live, h2, 0)
        ...
        budget.live = live - h9                   # the outputs are handed over
        return [v9]

It does what ``run_graph`` does, step for step (the same errors, the same memory budget
accounting), with local variables where the loop has dict lookups. Only names made up
here (``v3``, ``F[3]``, ``N[3]``) appear in the source; the model's own strings stay in the
tuples the function reads, so no name in a model can become code: ``vetted`` checks every
word of the source against the short list of words the writer uses before it is
compiled (and the hostile-model sandbox checks the same). Graphs with a step that
reads the values around it (If, Loop, Scan: their bodies see the enclosing graphs) keep
the loop, as do traced runs and executors that call kernels their own way
(``Executor.invoke``).
"""

from __future__ import annotations

import re

import numpy as np

from onnxkit.errors import describe_node
from onnxkit.core.context import KernelContext
from onnxkit.core.values import value_bytes
from onnxkit.runtime.step_results import fail, missing, over, results

#: graphs with more steps than this keep the loop (the source would take long to compile)
MAX_STEPS = 20_000
#: every word the written source may contain, besides variables ``v<n>``, ``h<n>``, ``a<n>``
WORDS = frozenset(
    "def run bind feeds outer state values budget live limit try except Exception as exc "
    "KeyError TypeError ValueError raise missing from None if else in is type ndarray r t "
    "results nbytes fail over del return get ctx F A N C K".split())
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_VARIABLE = re.compile(r"[vha][0-9]+")


def vetted(source: str) -> bool:
    """True when ``source`` says only ``WORDS``, made-up variables, numbers and operators:
    no string literal, no name that came from a model."""
    if "'" in source or '"' in source or "\\" in source:
        return False
    return all(word in WORDS or _VARIABLE.fullmatch(word) for word in set(_WORD.findall(source)))


def straight_line(plan, positional: bool = False):
    """The run of ``plan`` as one function ``run(feeds, outer, state) -> outputs``, or None
    when a step needs the evaluator's loop. ``positional``: ``run(values, outer, state)``
    instead, ``values`` exactly one per graph input, in order (a body's iterations)."""
    steps = plan.steps
    if len(steps) > MAX_STEPS or any(_reads_scope(step) for step in steps):
        return None
    writer = _Writer(plan, positional)
    source = writer.source()
    if not vetted(source):  # (cannot happen: the writer uses only WORDS; kept as a guard)
        return None
    namespace = {
        "ndarray": np.ndarray, "nbytes": value_bytes, "F": writer.kernels, "A": writer.attrs,
        "N": writer.names, "C": writer.constants,
        "fail": lambda i, args, exc: fail(steps[i], args, exc),
        "results": lambda i, r, state: results(steps[i], r, state),
        "over": lambda budget, live, n, i: over(budget, live, n, steps[i]),
        "K": lambda i, state: KernelContext(steps[i].node, steps[i].opset, _NO_SCOPE, state, plan),
        "missing": lambda i, name: missing(
            name, describe_node(steps[i].node) if i >= 0 else f"graph {plan.path or plan.name!r}"),
    }
    code = compile(source, f"<onnxkit plan {plan.path or 'main'}>", "exec")
    exec(code, namespace)  # noqa: S102 - the source names only the variables made above
    run = namespace["run"]
    run.source = source
    return run


_NO_SCOPE: dict = {}  # what a kernel that runs no subgraph sees as ``ctx.scope``


def _reads_scope(step) -> bool:
    """True for a step whose kernel reads the values around it: one that runs a subgraph
    (If, Loop, Scan...: a graph among its attributes) or reads the whole graph (Gradient).
    Other kernels that take a ``ctx`` read only the node and the run's state."""
    if step.plain:
        return False
    if step.kernel.reads_graph:
        return True
    for value in step.attrs.values():
        values = value if isinstance(value, (list, tuple)) else (value,)
        if any(hasattr(v, "steps") and hasattr(v, "straight") for v in values):
            return True
    return False


class _Writer:
    """Writes ``run``'s source: one variable per value, one block per step."""

    def __init__(self, plan, positional: bool = False):
        self.plan = plan
        self.positional = positional
        self.kernels: list = []  # F[i]: step i's callable
        self.attrs: list[dict] = []  # A[i]: its attributes
        self.count = 0  # variables made so far
        self.names: list[str] = []  # N[j]: the name of a value read from feeds or outer
        self.constants: list = []  # C[j]: an initializer no feed replaced
        self.var: dict[str, str] = {}  # value name -> its variable
        self.held: dict[str, str] = {}  # value made by a step -> its bytes variable
        self.lines = ["def run(feeds, outer, state):",
                      "    budget = state.budget; live = budget.live; limit = budget.limit"]
        if positional and plan.input_names:  # the inputs are the variables a0, a1...
            self.lines[0] = "def run(values, outer, state):"
            params = ", ".join(f"a{i}" for i in range(len(plan.input_names)))
            self.emit(f"{params}, = values")

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    def source(self) -> str:
        plan = self.plan
        for i, step in enumerate(plan.steps):
            args = [self.read(name, i) if name else "None" for name in step.inputs]
            self.step(i, step, args)
        outputs = [self.read(name, -1) for name in plan.output_names]
        kept = {name for name in plan.output_names if name in self.held}
        handed = " + ".join(self.held[name] for name in sorted(kept)) or "0"
        self.emit(f"budget.live = live - ({handed})")
        self.emit(f"return [{', '.join(outputs)}]")
        return "\n".join(self.lines) + "\n"

    def read(self, name: str, step_index: int) -> str:
        """The variable holding ``name``; on its first read, the lines that fetch it
        from the feeds, the initializers or the enclosing graphs."""
        if name in self.var:
            return self.var[name]
        var = self.var[name] = self._new("v")
        plan = self.plan
        if self.positional and name in plan.input_names:
            self.emit(f"{var} = a{plan.input_names.index(name)}")
            return var
        if name in plan.initializers:  # a feed may replace it (an initializer listed as input)
            j = self._constant(plan.initializers[name])
            if self.positional:
                self.emit(f"{var} = C[{j}]")
                return var
            k = self._name(name)
            self.emit(f"{var} = feeds.get(N[{k}], C[{j}])")
            return var
        k = self._name(name)
        self.emit("try:")
        if name in plan.input_names:  # (as in the loop: an input not bound may be an outer value)
            self.emit(f"    {var} = feeds[N[{k}]] if N[{k}] in feeds else outer[N[{k}]]")
        else:
            self.emit(f"    {var} = outer[N[{k}]]")
        self.emit("except (KeyError, TypeError):")
        self.emit(f"    raise missing({step_index}, N[{k}]) from None")
        return var

    def step(self, i: int, step, args: list[str]) -> None:
        self.kernels.append(step.kernel.fn)
        self.attrs.append(step.attrs)
        call = ", ".join(args)
        if not step.plain:  # a kernel that reads its node and the run's state
            args = args + [f"ctx=K({i}, state)"]
        bound = ", ".join(args + [f"**A[{i}]"])
        self.emit("budget.live = live")
        self.emit("try:")
        self.emit(f"    r = F[{i}]({bound if step.attrs else ', '.join(args)})")
        self.emit("except Exception as exc:")
        self.emit(f"    fail({i}, [{call}], exc)")
        named = [(j, name) for j, name in enumerate(step.outputs) if name]
        made = []
        if step.wanted == 1 and len(named) == 1:
            var, nb = self._made(named[0][1])
            self.emit("if type(r) is ndarray:")
            self.emit(f"    {var} = r; {nb} = r.nbytes")
            self.emit("else:")
            self.emit(f"    {var} = results({i}, r, state)[0]; {nb} = nbytes({var})")
            made.append(nb)
        else:
            self.emit(f"t = results({i}, r, state)")
            for j, name in named:
                var, nb = self._made(name)
                self.emit(f"{var} = t[{j}]; {nb} = nbytes({var})")
                made.append(nb)
        total = " + ".join(made) if made else "0"
        if made:
            self.emit(f"live += {total}")
        for name in step.free_after:
            var = self.var.get(name)
            if var is None:
                continue
            self.emit(f"del {var}")
            if name in self.held:
                self.emit(f"live -= {self.held.pop(name)}")
            del self.var[name]
        self.emit(f"if live > limit: over(budget, live, {total}, {i})")

    def _made(self, name: str) -> tuple[str, str]:
        var = self.var[name] = self._new("v")
        nb = self.held[name] = "h" + var[1:]
        return var, nb

    def _new(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def _name(self, name: str) -> int:
        self.names.append(name)
        return len(self.names) - 1

    def _constant(self, value) -> int:
        self.constants.append(value)
        return len(self.constants) - 1
