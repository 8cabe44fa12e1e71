"""ReverseSequence: per batch entry i, reverse the first sequence_lens[i] steps of the time
axis and keep the rest.

    for i in range(batch):
        out[i, :L] = x[i, L-1::-1];  out[i, L:] = x[i, L:]     (L = sequence_lens[i])
https://onnx.ai/onnx/operators/onnx__ReverseSequence.html
"""


from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis


@op("ReverseSequence", 10, 28)
def reverse_sequence(data, sequence_lens, *, batch_axis=1, time_axis=0):
    batch_axis = normalize_axis(batch_axis, data.ndim, "batch_axis")
    time_axis = normalize_axis(time_axis, data.ndim, "time_axis")
    if batch_axis == time_axis:
        raise AttributeValueError("ReverseSequence: batch_axis and time_axis must differ")
    lens = [int(v) for v in sequence_lens.reshape(-1)]
    if len(lens) != data.shape[batch_axis]:
        raise KernelInputError(f"ReverseSequence: {len(lens)} sequence lengths for a batch of "
                               f"{data.shape[batch_axis]}")
    out = data.copy()
    for i, length in enumerate(lens):
        if not 0 <= length <= data.shape[time_axis]:
            raise KernelInputError(f"ReverseSequence: sequence length {length} is out of range "
                                   "for time axis size "
                                   f"{data.shape[time_axis]}")
        if length == 0:
            continue
        dst = [slice(None)] * data.ndim
        dst[batch_axis], dst[time_axis] = i, slice(0, length)
        src = list(dst)
        src[time_axis] = slice(length - 1, None, -1)
        out[tuple(dst)] = data[tuple(src)]
    return out
