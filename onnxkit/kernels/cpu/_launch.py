"""Native hand-over of a serial kernel's parts to the pool's threads (``_threads``).

The parts of ``kernel(*args, lo, hi)`` are handed over in compiled code: no thread takes
the GIL to start or finish a part. For each type of ``args``, ``launch`` compiles (once,
cached) a small trampoline ``status = part(data, p)`` that unpacks ``args`` from ``data``
and calls the kernel's compiled entry point, whose address ``_threads`` looks up in
Numba's dispatcher and hands over in ``table`` (the kernel's machine code is not
compiled again into the launcher). Each worker polls a state word of its own:

    IDLE -> POSTED (the caller wrote a task) -> RUNNING (the worker took it) -> DONE
    IDLE -> ASLEEP (the worker waited long enough and went to sleep in Python)
    POSTED -> STOLEN (the caller ran the part itself: the worker was late)

so a part is run exactly once whatever the threads do, and the caller never waits on a
worker that has not started: it runs a part posted but not taken itself.
"""

from __future__ import annotations

import hashlib

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

IDLE, POSTED, RUNNING, DONE, ASLEEP, STOLEN = 0, 1, 2, 3, 4, 5
STRIDE = 16  # int64 words between two workers' slots: one cache line each, and more
MISSING = -1  # ``launch``: the kernel has no entry for these argument types in ``table``

_yield = types.ExternalFunction("sched_yield", types.int32())
_I32 = ir.IntType(32)


def type_key(arg_types) -> int:
    """A 63-bit key for the kernel arguments' Numba types (lo and hi left out): the same
    in the launcher, at compile time, as in ``_threads``, at run time."""
    text = "|".join(str(t) for t in arg_types).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1


def _field(builder, ptr, index):
    return builder.gep(ptr, [_I32(0), _I32(index)])


@intrinsic
def _load(typingctx, words, i):
    """``words[i]`` read atomically (acquire): another thread's store is seen."""
    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load_atomic(builder.gep(array.data, [args[1]]), "acquire", 8)
    return types.int64(words, types.intp), codegen


@intrinsic
def _store(typingctx, words, i, value):
    """``words[i] = value`` atomically (release): what was written before is seen first."""
    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        builder.store_atomic(args[2], builder.gep(array.data, [args[1]]), "release", 8)
        return context.get_dummy_value()
    return types.none(words, types.intp, types.int64), codegen


@intrinsic
def _swap(typingctx, words, i, old, new):
    """``words[i] = new`` if it is ``old`` (compare-and-swap); whether it was."""
    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        pair = builder.cmpxchg(builder.gep(array.data, [args[1]]), args[2], args[3],
                               "acq_rel", "acquire")
        return builder.extract_value(pair, 1)
    return types.boolean(words, types.intp, types.int64, types.int64), codegen


def _part_type():
    return ir.FunctionType(_I32, [ir.IntType(8).as_pointer(), ir.IntType(64)])


@intrinsic
def _run_part(typingctx, part_fn, data, part):
    """``part_fn(data, part)``: a trampoline (``_trampoline``) by its address; its status."""
    def codegen(context, builder, signature, args):
        fn = builder.inttoptr(args[0], _part_type().as_pointer())
        return builder.call(fn, [builder.inttoptr(args[1], ir.IntType(8).as_pointer()), args[2]])
    return types.int32(types.int64, types.int64, types.int64), codegen


def _data_type(context, args):
    """The block a launch hands to its trampoline: the arguments, the kernel's address,
    the items and the items per part."""
    i64 = ir.IntType(64)
    return ir.LiteralStructType([context.get_value_type(args), i64, i64, i64])


def _trampoline(context, module, args):
    """The function ``status = part(data, p)`` for ``args``' types, defined once in
    ``module``: the kernel for [p * per, min(items, (p + 1) * per)), by its address."""
    arg_types = list(args.types) + [types.intp, types.intp]
    name = f"onnxkit_part_{type_key(args.types):016x}"
    fn = cgutils.get_or_insert_function(module, _part_type(), name)
    if not fn.is_declaration:
        return fn
    fn.linkage = "internal"
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    data = builder.bitcast(fn.args[0], _data_type(context, args).as_pointer())
    values = builder.load(_field(builder, data, 0))
    address, items, per = (builder.load(_field(builder, data, k)) for k in (1, 2, 3))
    lo = builder.mul(fn.args[1], per)
    end = builder.add(lo, per)
    hi = builder.select(builder.icmp_signed("<", end, items), end, items)
    kernel_type = context.call_conv.get_function_type(types.none, arg_types)
    kernel = builder.inttoptr(address, kernel_type.as_pointer())
    unpacked = [builder.extract_value(values, k) for k in range(len(args.types))]
    status, _ = context.call_conv.call_function(builder, kernel, types.none, arg_types,
                                                unpacked + [lo, hi])
    builder.ret(builder.select(status.is_error, _I32(1), _I32(0)))
    return fn


@intrinsic
def _pack(typingctx, args, address, items, per):
    """(address of the trampoline for ``args``' types, address of a block holding
    ``args``, the kernel's address, items and per), the block on the caller's stack: it
    lives until ``launch`` returns, after every part has."""
    def codegen(context, builder, signature, values):
        block_type = _data_type(context, args)
        block = cgutils.alloca_once(builder, block_type)
        for k, value in enumerate(values):
            builder.store(value, _field(builder, block, k))
        fn = _trampoline(context, builder.module, args)
        i64 = ir.IntType(64)
        pair = context.make_tuple(builder, types.UniTuple(types.int64, 2),
                                  [builder.ptrtoint(fn, i64), builder.ptrtoint(block, i64)])
        return pair
    return types.UniTuple(types.int64, 2)(args, types.int64, types.int64, types.int64), codegen


@intrinsic
def _key_of(typingctx, args):
    """``type_key`` of ``args``' types, a constant of the compiled launcher."""
    key = type_key(args.types)

    def codegen(context, builder, signature, values):
        return context.get_constant(types.int64, key)
    return types.int64(args), codegen


@njit(nogil=True, cache=True)
def hand_over(state, tasks, workers, fn, data, first, parts):
    """Parts ``first`` .. ``parts - 1`` of trampoline ``fn`` on ``data``: the first here,
    the next ones posted to the workers (one each), the rest here; a part posted but not
    taken when this thread is done with its own is taken back. Returns bit 0 set when a
    part failed, bit w + 1 when worker w was asleep. One function for every kernel: the
    launchers, one per kernel argument types, stay small."""
    handed = min(workers, parts - first - 1)
    posted = 0
    asleep = 0
    for w in range(handed):
        slot = w * STRIDE
        tasks[slot] = fn
        tasks[slot + 1] = data
        tasks[slot + 2] = first + 1 + w
        if _swap(state, slot, IDLE, POSTED):
            posted |= 1 << w
        elif _load(state, slot) == ASLEEP:
            asleep |= 1 << w
    failed = np.int64(_run_part(fn, data, first))
    for p in range(first + 1 + handed, parts):  # more parts than workers
        failed |= _run_part(fn, data, p)
    for w in range(handed):
        slot = w * STRIDE
        if not (posted >> w) & 1:  # its worker was busy or asleep: run it here
            failed |= _run_part(fn, data, first + 1 + w)
        elif _swap(state, slot, POSTED, STOLEN):  # not taken yet: run it here
            failed |= _run_part(fn, data, first + 1 + w)
            _store(state, slot, IDLE)
        else:  # taken: wait for it
            polls = 0
            while _load(state, slot) != DONE:
                polls += 1
                if polls > 1024:
                    _yield()
            failed |= tasks[slot + 3]
            _store(state, slot, IDLE)
    return (failed & 1) | (asleep << 1)


HAND_OVER_TYPES = (types.Array(types.int64, 1, "C"), types.Array(types.int64, 1, "C"),
                   types.int64, types.int64, types.int64, types.int64, types.int64)
HAND_OVER_SYMBOL = "onnxkit_hand_over"  # an int64 cell holding ``hand_over``'s address


@intrinsic
def _call_hand_over(typingctx, state, tasks, workers, fn, data, first, parts):
    """``hand_over(...)`` by its address, read at run time from the cell named
    ``HAND_OVER_SYMBOL`` (``_threads`` gives it to LLVM): the launchers call it without
    compiling it in, and stay cacheable."""
    def codegen(context, builder, signature, args):
        module = builder.module
        cell = module.globals.get(HAND_OVER_SYMBOL)
        if cell is None:
            cell = ir.GlobalVariable(module, ir.IntType(64), HAND_OVER_SYMBOL)
            cell.linkage = "external"
        fnty = context.call_conv.get_function_type(types.int64, HAND_OVER_TYPES)
        callee = builder.inttoptr(builder.load(cell), fnty.as_pointer())
        _, out = context.call_conv.call_function(builder, callee, types.int64,
                                                 HAND_OVER_TYPES, args)
        return out
    return types.int64(*HAND_OVER_TYPES), codegen


@njit(nogil=True, cache=True)
def launch(state, tasks, workers, table, items, first, parts, per, args):
    """Parts ``first`` .. ``parts - 1`` of ``kernel(*args, lo, hi)`` (the kernel whose
    entry for ``args``' types ``table`` lists), the first here and the next ones on the
    workers (``hand_over``). Returns MISSING (no entry: nothing ran), else a status:
    bit 0 set when a part failed, bit w + 1 when worker w was asleep (``_threads`` wakes
    it)."""
    key = _key_of(args)
    address = 0
    for row in range(table.shape[0]):
        if table[row, 0] == key:
            address = table[row, 1]
    if address == 0:
        return MISSING
    fn, data = _pack(args, address, items, per)
    return _call_hand_over(state, tasks, workers, fn, data, first, parts)


@njit(nogil=True, cache=True)
def serve(state, tasks, w, spins, yields):
    """Worker w's loop: run each part posted to it; after ``spins`` polls and then
    ``yields`` yields of the processor with nothing posted, go ASLEEP and return 0 (the
    caller sleeps in Python until woken); return 1 when told to stop (state < 0)."""
    slot = w * STRIDE
    while True:
        polls = 0
        while True:
            seen = _load(state, slot)
            if seen == POSTED and _swap(state, slot, POSTED, RUNNING):
                break
            if seen < 0:
                return 1
            polls += 1
            if polls > spins:
                _yield()
                if polls > spins + yields and seen == IDLE and _swap(state, slot, IDLE, ASLEEP):
                    return 0
        tasks[slot + 3] = _run_part(tasks[slot], tasks[slot + 1], tasks[slot + 2])
        _store(state, slot, DONE)
