"""Level 3, the report's data, bisect, and the ``onnxkit optimize`` command."""

import json

import numpy as np
import onnx

from onnxkit.cli import main as cli_main
from onnxkit.optimizer import bisect, optimize
from onnxkit.optimizer.passes import identity_elimination
from onnxkit.optimizer.pattern import RewriteRule, RulePass
from tests.optimizer._helpers import model, ops, rand, run_pass

H = '<ir_version: 8, opset_import: ["" : 17]>'

BLOCK = H + """
g (float[1,8,6,6] x) => (float[1,8,6,6] y) {
    a = Conv <group = 8, pads = [1, 1, 1, 1]> (x, Wd)
    b = Relu (a)
    c = Conv (b, Wp)
    d = Add (c, x)
    e = Sigmoid (d)
    y = Neg (e)
}"""


def block():
    return model(BLOCK, Wd=rand(8, 1, 3, 3), Wp=rand(8, 8, 1, 1, seed=2))


def test_level3_is_level2_and_writes_no_plans():
    """The level-3 plans (layout, in-place, buffers) went: nothing read them. Level 3 gives
    level 2's graph and adds no metadata (docs/optimizer.md, "Level 3")."""
    out3, report = run_pass(block(), level=3, rtol=1e-5, atol=1e-5)
    out2, _ = optimize(block(), 2)
    assert [(n.op_type, list(n.input)) for n in out3.graph.node] == \
        [(n.op_type, list(n.input)) for n in out2.graph.node]
    assert not [p.key for p in out3.metadata_props if p.key.startswith("onnxkit.")]
    assert report.plans == {}


def test_level1_keeps_standard_onnx():
    out, _ = optimize(block(), 1)
    assert all(n.domain in ("", "ai.onnx") for n in out.graph.node)
    onnx.checker.check_model(out, full_check=True)


def test_report_lists_nodes_in_and_out():
    out, report = optimize(block(), 2)
    assert report.nodes_before == 6 and report.nodes_after == len(out.graph.node) == 3
    rw = next(r for r in report.rewrites if r.rule == "Conv+Add")
    assert [n.name for n in rw.removed] == [out_name for out_name in ("Conv_2", "Add_3")]
    assert rw.added[0].op_type == "FusedConv" and rw.added[0].domain == "onnxkit"
    data = report.to_dict()
    json.dumps(data)  # plain data
    assert {"by_pass", "diff", "rewrites", "rejections"} <= set(data)
    assert set(data["diff"]["removed"]) >= {"Add_3"}
    text = str(report)
    assert "conv_add_fusion" in text and "6 -> 3 nodes" in text
    assert "| activation_fusion |" in report.to_markdown()


def test_level0_returns_the_model_unchanged():
    m = block()
    out, report = optimize(m, 0)
    assert out == m and report.nodes_after == 6 and not report.rewrites


def _sign_flip(op, x, c):
    return op.Add(x, c)


BAD = RulePass("bad_pass", (RewriteRule("Add->Sub", _sign_flip, lambda op, x, c: op.Sub(x, c)),))


def test_bisect_finds_the_rewrite_that_changes_outputs():
    m = model(H + """
    g (float[4] x) => (float[4] y) {
        a = Identity (x)
        b = Identity (a)
        c = Add (b, k)
        d = Identity (c)
        y = Relu (d)
    }""", k=np.arange(1, 5, dtype=np.float32))
    feeds = {"x": rand(4)}
    passes = (identity_elimination.PASS, BAD)
    result = bisect(m, feeds, passes=passes)
    assert not result.ok
    assert result.culprit.pass_name == "bad_pass" and result.culprit.rule == "Add->Sub"
    assert [n.name for n in result.culprit.removed] == ["Add_2"]
    assert "bad_pass" in str(result)
    assert bisect(m, feeds, passes=(identity_elimination.PASS,)).ok


def test_cli_optimize(tmp_path, capsys):
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(block(), src)
    assert cli_main(["optimize", "-O2", str(src), str(dst), "--verify", "--details",
                     "--json", str(tmp_path / "r.json")]) == 0
    printed = capsys.readouterr().out
    assert "level 2: 6 -> 3 nodes" in printed and "outputs unchanged" in printed
    assert ops(onnx.load(dst)).count("onnxkit::FusedConv") == 2
    assert json.loads((tmp_path / "r.json").read_text())["nodes_after"] == 3


def test_session_optimizes_and_keeps_the_report():
    import onnxkit

    sess = onnxkit.Session(block(), level=2)
    assert sess.optimization_report.nodes_after == 3
    x = {"x": rand(1, 8, 6, 6, seed=3)}
    np.testing.assert_allclose(sess.run(None, x)[0], onnxkit.Session(block()).run(None, x)[0],
                               rtol=1e-5, atol=1e-6)


def test_reuse_source_rewrites_the_model_in_place_when_its_weights_survive():
    m = block()
    m.metadata_props.add(key="author", value="test")
    expected, _ = optimize(m, 2)  # a copy: m stays as it was
    assert ops(m) == ["Conv", "Relu", "Conv", "Add", "Sigmoid", "Neg"]
    weights = {t.name: t for t in m.graph.initializer}
    out, report = optimize(m, 2, reuse_source=True)
    assert out is m and report.nodes_after == 3
    for field in ("node", "initializer", "input", "output", "value_info"):
        assert list(getattr(out.graph, field)) == list(getattr(expected.graph, field)), field
    assert out.ir_version == expected.ir_version
    assert list(out.opset_import) == list(expected.opset_import)
    # the initializers were kept, not copied: the same messages, in the same model
    assert all(weights[t.name] is t for t in out.graph.initializer)
    assert {p.key: p.value for p in out.metadata_props} == {"author": "test"}


def test_reuse_source_copies_when_most_weight_bytes_are_replaced():
    from onnxkit.optimizer.passes import conv_fold

    c = 16
    m = model(H + """
    g (float[1,16,4,4] x) => (float[1,16,4,4] y) {
        a = Conv (x, W)
        y = BatchNormalization (a, scale, bias, mean, var)
    }""", W=rand(c, c, 1, 1), scale=rand(c, seed=1), bias=rand(c, seed=2),
        mean=rand(c, seed=3), var=rand(c, seed=4, low=0.5))
    before = m.SerializeToString()
    out, report = optimize(m, 1, passes=(conv_fold.PASS,), reuse_source=True)
    assert report.count("conv_fold", "BatchNormalization") == 1
    assert out is not m and m.SerializeToString() == before  # W was refolded: a new model
    assert ops(out) == ["Conv"]


def test_a_session_leaves_a_model_it_was_given_unchanged(tmp_path):
    import onnxkit

    m = block()
    before = m.SerializeToString()
    onnxkit.Session(m, level=3)
    assert m.SerializeToString() == before
    path = tmp_path / "block.onnx"
    onnx.save(m, path)
    sess = onnxkit.Session(str(path), level=2)  # loaded by the session: rewritten in place
    assert ops(sess.model).count("onnxkit::FusedConv") == 2
    x = {"x": rand(1, 8, 6, 6, seed=3)}
    np.testing.assert_allclose(sess.run(None, x)[0], onnxkit.Session(m).run(None, x)[0],
                               rtol=1e-5, atol=1e-6)
