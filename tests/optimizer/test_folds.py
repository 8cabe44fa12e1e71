"""Level-1 folds into weights: BatchNorm / Mul / Add into Conv, Gemm and MatMul."""

from onnxkit.optimizer.passes import batchnorm_affine, conv_fold, gemm_fold
from tests.optimizer._helpers import model, ops, rand, run_pass

H = '<ir_version: 8, opset_import: ["" : 17]>'
TOL = {"rtol": 1e-5, "atol": 1e-5}


def bn_params(c: int, seed: int = 1):
    return {"scale": rand(c, seed=seed), "bias": rand(c, seed=seed + 1),
            "mean": rand(c, seed=seed + 2), "var": rand(c, seed=seed + 3, low=0.5)}


def test_batchnorm_folds_into_conv():
    m = model(H + """
    g (float[1,3,8,8] x) => (float[1,4,8,8] y) {
        c = Conv <pads = [1, 1, 1, 1]> (x, W, B)
        y = BatchNormalization <epsilon = 0.001> (c, scale, bias, mean, var)
    }""", W=rand(4, 3, 3, 3), B=rand(4, seed=9), **bn_params(4))
    out, report = run_pass(m, conv_fold.PASS, **TOL)
    assert report.count("conv_fold", "BatchNormalization") == 1
    assert ops(out) == ["Conv"]


def test_mul_and_add_fold_into_a_conv_without_bias():
    m = model(H + """
    g (float[1,3,6,6] x) => (float[1,4,6,6] y) {
        c = Conv (x, W)
        m = Mul (c, s)
        y = Add (k, m)
    }""", W=rand(4, 3, 3, 3), s=rand(4, 1, 1, seed=3), k=rand(1, 4, 1, 1, seed=4))
    out, report = run_pass(m, conv_fold.PASS, **TOL)
    assert report.count("conv_fold") == 2  # Mul first, then Add into the new Conv
    assert ops(out) == ["Conv"]


def test_mul_that_varies_along_space_does_not_fold():
    m = model(H + """
    g (float[1,3,6,6] x) => (float[1,4,4,4] y) {
        c = Conv (x, W)
        y = Mul (c, s)
    }""", W=rand(4, 3, 3, 3), s=rand(4, 4, 4, seed=3))
    out, report = run_pass(m, conv_fold.PASS, **TOL)
    assert report.count("conv_fold") == 0
    assert any("per output channel" in r.reason for r in report.rejections)


def test_conv_output_read_twice_does_not_fold():
    m = model(H + """
    g (float[1,3,6,6] x) => (float[1,4,4,4] y, float[1,4,4,4] c) {
        c = Conv (x, W)
        y = Mul (c, s)
    }""", W=rand(4, 3, 3, 3), s=rand(4, 1, 1, seed=3))
    _, report = run_pass(m, conv_fold.PASS, **TOL)
    assert report.count("conv_fold") == 0
    assert any("graph output" in r.reason for r in report.rejections)


def test_gemm_folds():
    m = model(H + """
    g (float[5,6] a) => (float[5,4] y) {
        g1 = Gemm <transB = 1, beta = 0.5> (a, B, C)
        m = Mul (g1, s)
        y = Add (m, k)
    }""", B=rand(4, 6), C=rand(4, seed=2), s=rand(4, seed=3), k=rand(1, 4, seed=4))
    out, report = run_pass(m, gemm_fold.PASS, **TOL)
    assert report.count("gemm_fold") == 2
    assert ops(out) == ["Gemm"]


def test_batchnorm_folds_into_gemm_and_matmul():
    m = model(H + """
    g (float[5,6] a) => (float[5,4] y, float[5,4] z) {
        g1 = Gemm (a, B)
        y = BatchNormalization (g1, scale, bias, mean, var)
        m1 = MatMul (a, W)
        z = BatchNormalization (m1, scale, bias, mean, var)
    }""", B=rand(6, 4), W=rand(6, 4, seed=7), **bn_params(4))
    out, report = run_pass(m, gemm_fold.PASS, **TOL)
    assert report.count("gemm_fold", "Gemm+BatchNormalization") == 1
    assert report.count("gemm_fold", "MatMul+BatchNormalization") == 1
    assert ops(out) == ["Gemm", "Gemm"]


def test_mul_folds_into_matmul_weights():
    m = model(H + """
    g (float[2,5,6] a) => (float[2,5,4] y) {
        m1 = MatMul (a, W)
        y = Mul (m1, s)
    }""", W=rand(6, 4), s=rand(4, seed=3))
    out, report = run_pass(m, gemm_fold.PASS, **TOL)
    assert report.count("gemm_fold", "MatMul+Mul") == 1
    assert ops(out) == ["MatMul"]


def test_mul_and_add_fold_into_batchnorm():
    m = model(H + """
    g (float[1,4,3,3] x) => (float[1,4,3,3] y) {
        b = BatchNormalization (x, scale, bias, mean, var)
        m = Mul (b, s)
        y = Add (m, k)
    }""", s=rand(4, 1, 1, seed=5), k=rand(4, 1, 1, seed=6), **bn_params(4))
    out, report = run_pass(m, batchnorm_affine.PASS, **TOL)
    assert report.count("batchnorm_affine") == 2
    assert ops(out) == ["BatchNormalization"]
