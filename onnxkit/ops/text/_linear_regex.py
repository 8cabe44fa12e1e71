"""Full-match regular expressions in time linear in the text (RE2's promise), not Python's.

Python's ``re`` backtracks: ``(a+)+$`` on thirty ``a`` and a ``!`` takes minutes, so a
hostile model could hang RegexFullMatch. Here the pattern is parsed by Python's own
parser, compiled to a Thompson NFA, and run as a lazily built DFA:

    prog  = compile(parse(pattern))          # CHAR / SPLIT / JMP / ASSERT / MATCH
    state = closure({0}) at position 0
    for each character c:  state = closure({pc + 1 for pc in state if CHAR pc accepts c})
    matched = MATCH in state                 # transitions are cached per (state, context)

Work per character is bounded by the program size (itself capped), whatever the text.
Constructs RE2 does not have (backreferences, lookaround, atomic groups, possessive
repeats, conditionals) are refused with ``AttributeValueError`` (a ``ValueError``).
"""

from __future__ import annotations

import re
import re._constants as C
import re._parser as sre_parse
import warnings

from onnxkit.errors import AttributeValueError

MAX_PROGRAM = 20_000  # instructions; a{1000}{1000} and the like are refused
_CACHE_LIMIT = 10_000

CHAR, SPLIT, JMP, ASSERT, MATCH = range(5)


def _word(ch: str | None, ascii_only: bool) -> bool:
    if ch is None:
        return False
    if ascii_only and not ch.isascii():
        return False
    return ch.isalnum() or ch == "_"


_CATEGORIES = {
    C.CATEGORY_DIGIT: lambda ch, a: ch.isdecimal() and (ch.isascii() or not a),
    C.CATEGORY_SPACE: lambda ch, a: ch.isspace() and (ch.isascii() or not a),
    C.CATEGORY_WORD: lambda ch, a: _word(ch, a),
}
_NEGATED = {C.CATEGORY_NOT_DIGIT: C.CATEGORY_DIGIT, C.CATEGORY_NOT_SPACE: C.CATEGORY_SPACE,
            C.CATEGORY_NOT_WORD: C.CATEGORY_WORD}


def _variants(ch: str, ignore_case: bool) -> tuple[str, ...]:
    return (ch, ch.lower(), ch.upper()) if ignore_case else (ch,)


def _class_test(items, flags: int):
    """A predicate for ``[...]``: literals, ranges, categories, maybe negated."""
    ic, asc = bool(flags & re.IGNORECASE), bool(flags & re.ASCII)
    negate = any(op is C.NEGATE for op, _ in items)

    def one(ch: str) -> bool:
        for op, arg in items:
            if op is C.LITERAL and chr(arg) in _variants(ch, ic):
                return True
            if op is C.RANGE and any(arg[0] <= ord(v) <= arg[1] for v in _variants(ch, ic)):
                return True
            if op is C.CATEGORY:
                if arg in _NEGATED:
                    if not _CATEGORIES[_NEGATED[arg]](ch, asc):
                        return True
                elif _CATEGORIES[arg](ch, asc):
                    return True
        return False

    return (lambda ch: not one(ch)) if negate else one


class _Compiler:
    def __init__(self):
        self.prog: list[list] = []

    def emit(self, *inst) -> int:
        if len(self.prog) >= MAX_PROGRAM:
            raise AttributeValueError(f"the pattern compiles to more than {MAX_PROGRAM} steps")
        self.prog.append(list(inst))
        return len(self.prog) - 1

    def seq(self, items, flags: int) -> None:
        for op, arg in items:
            self.node(op, arg, flags)

    def node(self, op, arg, flags: int) -> None:
        ic = bool(flags & re.IGNORECASE)
        if op is C.LITERAL:
            want = set(_variants(chr(arg), ic))
            self.emit(CHAR, lambda ch, want=want: bool(want.intersection(_variants(ch, ic))))
        elif op is C.NOT_LITERAL:
            want = set(_variants(chr(arg), ic))
            self.emit(CHAR, lambda ch, want=want: not want.intersection(_variants(ch, ic)))
        elif op is C.ANY:
            dotall = bool(flags & re.DOTALL)
            self.emit(CHAR, lambda ch: dotall or ch != "\n")
        elif op is C.IN:
            self.emit(CHAR, _class_test(arg, flags))
        elif op is C.AT:
            self.emit(ASSERT, arg, flags)
        elif op is C.SUBPATTERN:
            _group, add, remove, body = arg
            self.seq(body, (flags | add) & ~remove)
        elif op is C.BRANCH:
            self.branch(arg[1], flags)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):  # greedy or lazy: the same for a yes/no answer
            self.repeat(*arg, flags)
        else:
            raise AttributeValueError(f"{op} is not RE2 syntax (no backreferences, lookaround, "
                                      "atomic groups or possessive repeats)")

    def branch(self, alternatives, flags: int) -> None:
        jumps = []
        for i, alt in enumerate(alternatives):
            if i < len(alternatives) - 1:
                split = self.emit(SPLIT, None, None)
                self.prog[split][1] = len(self.prog)
                self.seq(alt, flags)
                jumps.append(self.emit(JMP, None))
                self.prog[split][2] = len(self.prog)
            else:
                self.seq(alt, flags)
        for j in jumps:
            self.prog[j][1] = len(self.prog)

    def repeat(self, low: int, high, body, flags: int) -> None:
        before = len(self.prog)
        self.seq(body, flags)
        if len(self.prog) == before:  # an empty body: repeating it matches nothing more
            return
        del self.prog[before:]
        for _ in range(low):
            self.seq(body, flags)
        if high is C.MAXREPEAT:
            split = self.emit(SPLIT, None, None)
            self.prog[split][1] = len(self.prog)
            self.seq(body, flags)
            self.emit(JMP, split)
            self.prog[split][2] = len(self.prog)
            return
        ends = []
        for _ in range(high - low):
            split = self.emit(SPLIT, None, None)
            self.prog[split][1] = len(self.prog)
            ends.append(split)
            self.seq(body, flags)
        for split in ends:
            self.prog[split][2] = len(self.prog)


def _assert_holds(kind, flags: int, prev: str | None, nxt: str | None) -> bool:
    multiline, asc = bool(flags & re.MULTILINE), bool(flags & re.ASCII)
    if kind is C.AT_BEGINNING:
        return prev is None or (multiline and prev == "\n")
    if kind is C.AT_BEGINNING_STRING:
        return prev is None
    if kind is C.AT_END:  # Python's $: the end, or before a final newline (any newline: multiline)
        return nxt is None or (nxt[0] == "\n" and (multiline or len(nxt) == 1))
    if kind is C.AT_END_STRING:
        return nxt is None
    if kind in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
        edge = _word(prev, asc) != _word(nxt[0] if nxt else None, asc)
        return edge if kind is C.AT_BOUNDARY else not edge
    raise AttributeValueError(f"anchor {kind} is not supported")


class LinearRegex:
    """``LinearRegex(pattern).fullmatch(text)`` -> bool, in time linear in ``len(text)``."""

    def __init__(self, pattern: str):
        with warnings.catch_warnings():  # "possible nested set" hints are not errors here
            warnings.simplefilter("ignore", FutureWarning)
            parsed = sre_parse.parse(pattern)
        compiler = _Compiler()
        compiler.seq(parsed, parsed.state.flags)
        compiler.emit(MATCH)
        self.prog = compiler.prog
        self._anchored = any(inst[0] == ASSERT for inst in self.prog)
        self._cache: dict = {}

    def _closure(self, pcs, prev: str | None, nxt: str | None) -> frozenset:
        """The CHAR and MATCH steps reachable from ``pcs`` without consuming a character."""
        out, stack, seen = set(), list(pcs), set()
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            inst = self.prog[pc]
            if inst[0] in (CHAR, MATCH):
                out.add(pc)
            elif inst[0] == SPLIT:
                stack += (inst[2], inst[1])
            elif inst[0] == JMP:
                stack.append(inst[1])
            elif _assert_holds(inst[1], inst[2], prev, nxt):
                stack.append(pc + 1)
        return frozenset(out)

    def fullmatch(self, text: str) -> bool:
        # anchors look at the neighbours of a position: the previous character, the next
        # one and whether that one is the last; without anchors no context is needed
        context = (lambda pos: text[pos:pos + 2] or None) if self._anchored else (lambda pos: None)
        state = self._closure((0,), None, context(0))
        for pos, ch in enumerate(text):
            nxt = context(pos + 1)
            key = (state, ch, nxt)
            following = self._cache.get(key)
            if following is None:
                moved = [pc + 1 for pc in state if self.prog[pc][0] == CHAR and self.prog[pc][1](ch)]
                following = self._closure(moved, ch, nxt) if moved else frozenset()
                if len(self._cache) >= _CACHE_LIMIT:
                    self._cache.clear()
                self._cache[key] = following
            state = following
            if not state:
                return False
        return any(self.prog[pc][0] == MATCH for pc in state)
