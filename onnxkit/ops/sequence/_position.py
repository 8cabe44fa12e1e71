"""Checking a sequence position (shared by SequenceAt, SequenceInsert, SequenceErase)."""

from onnxkit.errors import InputError, describe_node


def position_index(position, length: int, allow_end: bool, node) -> int:
    """``position`` as a non-negative index into a sequence of ``length``.

    Accepted: ``[-length, length - 1]``, or up to ``length`` when inserting.
    """
    pos = int(position.reshape(-1)[0])
    high = length if allow_end else length - 1
    if not -length <= pos <= high:
        raise InputError(
            f"{describe_node(node)}: position {pos} is outside [{-length}, {high}] for a "
            f"sequence of {length}"
        )
    return pos + length if pos < 0 else pos
