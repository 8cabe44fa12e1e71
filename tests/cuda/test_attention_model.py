"""A small BERT (the benchmark's BertMini, shrunk) stays on the GPU end to end at level 2:
its fused onnxkit::Attention nodes run the cuda kernel, with no host round trip.

Runs on a GPU, or under the simulator: ``NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda``.
"""

import io

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.kernels.cuda import DeviceProfile

pytestmark = pytest.mark.torch

SEQ, VOCAB = 8, 50


@pytest.fixture(scope="module")
def bert_l2():
    """BertMini with 2 layers, d=16, 2 heads, exported at opset 17 and optimized at level 2."""
    torch = pytest.importorskip("torch")
    from benchmarks.models import _torch_modules

    torch.manual_seed(0)
    module = _torch_modules()["bert_mini"](vocab=VOCAB, d=16, heads=2, layers=2, ff=32,
                                           max_pos=SEQ).eval()
    ids = torch.randint(0, VOCAB, (1, SEQ))  # one sequence: the simulator is slow
    mask = torch.ones((1, SEQ), dtype=torch.int64)
    mask[0, SEQ - 3:] = 0  # it ends in 3 padding tokens
    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, (ids, mask), buffer, dynamo=False, opset_version=17,
                          input_names=["input_ids", "attention_mask"], output_names=["output"])
    model, _ = onnxkit.optimize(onnx.load_from_string(buffer.getvalue()), 2)
    return model, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}


def test_bert_runs_on_the_device_and_matches_the_reference(bert_l2):
    model, feeds = bert_l2
    assert [n.op_type for n in model.graph.node].count("Attention") == 2
    (want,) = onnxkit.Session(model).run(None, feeds)
    sess = onnxkit.Session(model, executor="cuda")
    prof = DeviceProfile(sess)
    (got,) = sess.run(None, feeds, trace=prof)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    attention = [r for r in prof.rows if r.op_type == "Attention"]
    assert len(attention) == 2 and all(r.placement == "cuda" for r in attention)
    assert all(r.h2d_bytes == 0 and r.d2h_bytes == 0 for r in attention)  # no round trip
    assert sess.executor.stats()["host_nodes"] == 0, prof.table()
