"""Valid seed models the fuzzers mutate, each with feeds it runs on.

Every seed is a small model in ONNX text syntax covering one family of operators;
``SEEDS[name].feeds()`` returns inputs it runs on (``test_fuzz.test_every_seed_runs``
checks that). Integer inputs that steer sizes (shapes, repeats, trip counts, k, pads,
window lengths...) are graph inputs on purpose: mutated feeds then reach the kernels'
allocation checks. ``LIGHT_NETS`` are real model files from onnx's test data, used for
byte-level mutation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import numpy as np
import onnx

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
LIGHT_NETS = ("light_bvlc_alexnet.onnx", "light_zfnet512.onnx", "light_vgg19.onnx",
              "light_squeezenet.onnx")


def _vals(n: int, scale: float = 1.0, seed: int = 0) -> str:
    """``n`` deterministic floats for an initializer written in text syntax."""
    rng = np.random.default_rng(seed)
    return ", ".join(f"{v:.3f}" for v in rng.standard_normal(n) * scale)


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _i64(*values):
    return np.array(values, dtype=np.int64)


@dataclass(frozen=True)
class Seed:
    name: str
    text: str
    feeds: Callable[[], dict]

    def model(self) -> onnx.ModelProto:
        return onnx.parser.parse_model(self.text)

    def bytes(self) -> bytes:
        return self.model().SerializeToString()


HEADER = '<ir_version: 10, opset_import: ["" : {opset}{extra}]>\n'


def _h(opset=21, extra=""):
    return HEADER.format(opset=opset, extra=extra)


ARITH = _h() + """
arith (float[N, C] a, float[N, C] b, int32[N, C] i, int32[C] k) => (float[N, C] y, int32[N, C] j, float[N, C] z) {
  s = Add(a, b)
  d = Div(a, b)
  p = Pow(a, b)
  l = Log(p)
  r = Relu(l)
  q = Sqrt(r)
  lo = Constant <value = float {-0.5}> ()
  hi = Constant <value = float {0.5}> ()
  c = Clip(q, lo, hi)
  m = Greater(a, b)
  w = Where(m, c, s)
  y = Mul(w, s)
  j0 = Mod(i, k)
  j1 = Sub(i, k)
  j2 = BitwiseAnd(j0, j1)
  j = Div(j2, k)
  u = Max(a, b, s)
  v = Mean(a, u)
  z = Sum(v, d, a)
}
"""

UNARY = _h() + """
unary (float[N, C] x, int64[N, C] n) => (float[N, C] y, bool[N, C] flags, int64[N, C] m, float[N, C] g) {
  e = Exp(x)
  t = Tanh(e)
  s = Sigmoid(t)
  h = HardSigmoid <alpha = 0.3, beta = 0.4> (s)
  k = LeakyRelu <alpha = 0.1> (h)
  sp = Softplus(k)
  el = Elu <alpha = 1.5> (sp)
  se = Selu(el)
  fl = Floor(se)
  ce = Ceil(x)
  ro = Round(ce)
  sg = Sign(ro)
  ab = Abs(sg)
  rc = Reciprocal(ab)
  er = Erf(rc)
  sn = Sin(er)
  at = Atan(sn)
  y = Add(at, fl)
  nan = IsNaN(rc)
  inf = IsInf(rc)
  either = Or(nan, inf)
  flags = Not(either)
  m0 = Neg(n)
  sh = Constant <value = int64 {2}> ()
  m = BitShift <direction = "LEFT"> (n, sh)
  g = Gelu <approximate = "tanh"> (x)
}
"""

CONV_POOL = _h() + f"""
conv_pool (float[N, 2, H, W] x) => (float[N, 3, P, Q] y, float[N, 3, 1, 1] g, float[N, 2, H, W] n, float[N, 3, R, S] lp)
  <float[3, 2, 3, 3] w = {{{_vals(54, 0.3)}}}, float[3] b = {{0.1, -0.2, 0.3}},
   float[2] scale = {{1.0, 0.5}}, float[2] bias = {{0.0, 0.1}}, float[2] mean = {{0.0, 0.2}}, float[2] var = {{1.0, 2.0}}>
{{
  n = BatchNormalization <epsilon = 0.00001> (x, scale, bias, mean, var)
  c = Conv <pads = [1, 1, 1, 1], strides = [1, 1], kernel_shape = [3, 3]> (n, w, b)
  mp = MaxPool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1]> (c)
  y = AveragePool <kernel_shape = [2, 2], strides = [1, 1], count_include_pad = 1, pads = [1, 1, 0, 0]> (mp)
  g = GlobalMaxPool(c)
  lp = LpPool <kernel_shape = [2, 2], p = 2, dilations = [1, 1]> (c)
}}
"""

CONV_MISC = _h() + f"""
conv_misc (float[N, 2, H, W] x) => (float[N, 2, P, Q] t, float[N, 4, H, W] l, float[N, 8, A, B] s, float[N, 2, H, W] d)
  <float[2, 2, 3, 3] w = {{{_vals(36, 0.3, 1)}}}, float[4] sc = {{1.0, 0.5, 2.0, 1.0}}, float[4] bi = {{0.0, 0.1, 0.2, 0.3}}>
{{
  t = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]> (x, w)
  c4 = Concat <axis = 1> (x, x)
  lr = LRN <size = 3, alpha = 0.001> (c4)
  l = InstanceNormalization <epsilon = 0.001> (lr, sc, bi)
  s = SpaceToDepth <blocksize = 2> (x)
  d = DepthToSpace <blocksize = 2, mode = "CRD"> (s)
}}
"""

RESHAPE_SLICE = _h() + """
reshape_slice (float[N, M] x, int64[2] shape, int64[2] starts, int64[2] ends, int64[2] steps) => (float[A, B] r, float[P, Q] s, float[M, N] t, float[K] f, int64[2] sh)
  <int64[2] axes = {0, 1}, int64[1] zero = {0}>
{
  r = Reshape(x, shape)
  s = Slice(x, starts, ends, axes, steps)
  t = Transpose <perm = [1, 0]> (x)
  f0 = Flatten <axis = 0> (x)
  f = Squeeze(f0, zero)
  sh = Shape <start = 0> (x)
}
"""

GATHER_CONCAT = _h() + """
gather_concat (float[N, M] x, int64[K] idx, int64[2] reps, int64[E] eshape, int64[2] splits) => (float[K, M] g, float[N, P] c, float[A, B] tl, float ex, float u, float s1, float s2, int64 n)
  <int64[1] uax = {1}>
{
  g = Gather <axis = 0> (x, idx)
  c = Concat <axis = 1> (x, g, x)
  tl = Tile(x, reps)
  ex = Expand(x, eshape)
  u = Unsqueeze(x, uax)
  s1, s2 = Split <axis = 1> (x, splits)
  n = Size(ex)
}
"""

SCATTER_GATHER = _h() + """
scatter_gather (float[N, M] x, int64[K, 2] ind, float[K] upd, int64[N, M] eidx, bool[N] keep) => (float[N, M] a, float[K] b, float[N, M] c, float[N, M] d, float e, float[N, M] r)
  <int64[3] lens = {1, 2, 3}>
{
  a = ScatterND <reduction = "add"> (x, ind, upd)
  b = GatherND(x, ind)
  c = GatherElements <axis = 1> (x, eidx)
  d = ScatterElements <axis = 1, reduction = "max"> (x, eidx, x)
  e = Compress <axis = 0> (x, keep)
  r = ReverseSequence <batch_axis = 0, time_axis = 1> (x, lens)
}
"""

IF_ = _h() + """
if_ (bool c, float[N] x) => (float[N] y, float[N] z) {
  y = If (c) <
    then_branch = then_g () => (float[N] t) { t = Relu(x) },
    else_branch = else_g () => (float[N] e) { e = Neg(x) }>
  z = If (c) <
    then_branch = then2 () => (float[N] t2) {
      inner = If (c) <then_branch = a () => (float[N] ta) { ta = Abs(x) },
                      else_branch = b () => (float[N] tb) { tb = Identity(x) }>
      t2 = Add(inner, x) },
    else_branch = else2 () => (float[N] e2) { e2 = Identity(x) }>
}
"""

LOOP = _h() + """
loop (int64 M, bool cond, float[N] x0) => (float[N] xs, float[K, N] scan) {
  xs, scan = Loop (M, cond, x0) <body = body (int64 i, bool c_in, float[N] x_in) => (bool c_out, float[N] x_out, float[N] s_out) {
    one = Constant <value = float {1.0}> ()
    x_out = Add(x_in, one)
    total = ReduceSum <keepdims = 0> (x_out)
    limit = Constant <value = float {100.0}> ()
    c_out = Less(total, limit)
    s_out = Mul(x_out, x_in)
  }>
}
"""

WHILE_LOOP = _h() + """
while_loop (float[N] x0, float stop) => (float[N] xs, int64 count) <int64 zero = {0}> {
  xs, count = Loop ("", true_, x0, zero) <body = body (int64 i, bool c_in, float[N] x_in, int64 n_in) => (bool c_out, float[N] x_out, int64 n_out) {
    two = Constant <value = float {2.0}> ()
    x_out = Mul(x_in, two)
    big = ReduceMax <keepdims = 0> (x_out)
    c_out = Less(big, stop)
    one = Constant <value = int64 {1}> ()
    n_out = Add(n_in, one)
  }>
  true_ = Constant <value = bool {1}> ()
}
"""

SCAN = _h() + """
scan (float[N] init, float[T, N] xs) => (float[N] final, float[T, N] ys) {
  final, ys = Scan (init, xs) <num_scan_inputs = 1, scan_input_directions = [1], body = body (float[N] acc, float[N] x) => (float[N] acc_out, float[N] y) {
    acc_out = Add(acc, x)
    y = Identity(acc_out)
  }>
}
"""

SEQUENCES = _h() + """
sequences (float[N, M] x, int64 pos, int64[S] splits) => (float[P, M] cat, int64 n, float[Q, M] at, int64 ne, float[R, M] st)
{
  seq = SplitToSequence <axis = 0> (x, splits)
  seq2 = SequenceInsert(seq, x, pos)
  n = SequenceLength(seq2)
  at = SequenceAt(seq2, pos)
  cat = ConcatFromSequence <axis = 0> (seq2)
  er = SequenceErase(seq2, pos)
  ne = SequenceLength(er)
  pair = SequenceConstruct(x, at)
  empty = SequenceEmpty <dtype = 1> ()
  more = SequenceInsert(empty, x)
  mapped = SequenceMap(pair) <body = add_one (float[A, B] v) => (float[A, B] w) {
    o = Constant <value = float {1.0}> ()
    w = Add(v, o)
  }>
  st = ConcatFromSequence <axis = 0, new_axis = 0> (mapped)
}
"""

CAST = _h() + """
cast (float[N] x, int32[N] i, string[N] s) => (float16[N] a, bfloat16[N] b, int64[N] c, string[N] d, float[N] e, float[N] f, float8e4m3fn[N] g, bool[N] h, double[N] k, uint8[N] u)
{
  a = Cast <to = 10> (x)
  b = Cast <to = 16> (x)
  c = Cast <to = 7> (x)
  d = Cast <to = 8> (i)
  e = Cast <to = 1> (d)
  f = CastLike(i, x)
  g = Cast <to = 17, saturate = 1> (x)
  h = Cast <to = 9> (x)
  k = Cast <to = 11> (s)
  u = Cast <to = 2> (a)
}
"""

REDUCE = _h() + """
reduce (float[N, M] x, int64[K] axes, int64 axis) => (float s, float m, float mx, float l2, float lse, float p, int64 am, float cs, float l1, float sq)
{
  s = ReduceSum <keepdims = 1> (x, axes)
  m = ReduceMean <keepdims = 0> (x, axes)
  mx = ReduceMax (x, axes)
  l2 = ReduceL2 (x, axes)
  lse = ReduceLogSumExp (x, axes)
  p = ReduceProd (x, axes)
  l1 = ReduceL1 <noop_with_empty_axes = 1> (x, axes)
  sq = ReduceSumSquare (x)
  am = ArgMax <axis = 1, keepdims = 0, select_last_index = 1> (x)
  cs = CumSum <exclusive = 1, reverse = 1> (x, axis)
}
"""

TOPK_UNIQUE = _h() + """
topk_unique (float[N, M] x, int64[1] k) => (float v, int64 i, int64 nz, float u, int64 ui, int64 uinv, int64 ucnt, int64 am, float h)
{
  v, i = TopK <axis = 1, largest = 1, sorted = 1> (x, k)
  nz = NonZero(x)
  u, ui, uinv, ucnt = Unique <sorted = 1, axis = 0> (x)
  am = ArgMin <axis = 0> (x)
  h = Hardmax <axis = 1> (x)
}
"""

RESIZE = _h() + """
resize (float[N, C, H, W] x, float[4] scales, int64[4] sizes) => (float a, float b, float c)
{
  a = Resize <mode = "linear", coordinate_transformation_mode = "half_pixel"> (x, "", scales)
  b = Resize <mode = "nearest", nearest_mode = "floor"> (x, "", "", sizes)
  c = Resize <mode = "cubic", cubic_coeff_a = -0.5> (x, "", scales)
}
"""

EINSUM_MATMUL = _h() + """
einsum_matmul (float[N, K] a, float[K, M] b, float[M] bias, float[K, K] sq) => (float e, float m, float g, float t, float d)
{
  e = Einsum <equation = "ik,kj->ij"> (a, b)
  m = MatMul(a, b)
  g = Gemm <alpha = 0.5, beta = 2.0, transA = 0> (a, b, bias)
  t = Einsum <equation = "ii->i"> (sq)
  d = Det(sq)
}
"""

NORMS = _h(23) + """
norms (float[N, C, L] x, float[L] gamma, float[L] beta, float[C] cs, float[C] cb) => (float s, float ls, float ln, float ins, float lp, float mvn, float rms)
{
  s = Softmax <axis = -1> (x)
  ls = LogSoftmax <axis = 1> (x)
  ln = LayerNormalization <axis = -1, epsilon = 0.00001> (x, gamma, beta)
  ins = InstanceNormalization(x, cs, cb)
  lp = LpNormalization <axis = 1, p = 2> (x)
  mvn = MeanVarianceNormalization <axes = [0, 2]> (x)
  rms = RMSNormalization <axis = -1> (x, gamma)
}
"""

GENERATORS = _h() + """
generators (int64[R] shape, float start, float limit, float delta, int64 depth, int64[I] idx, int64[4] pads, float[N, M] x, int64 k) => (float c, float r, float oh, float p, float p2, float ey, float tr)
{
  c = ConstantOfShape <value = float[1] {2.5}> (shape)
  r = Range(start, limit, delta)
  onoff = Constant <value = float[2] {0.0, 1.0}> ()
  oh = OneHot <axis = -1> (idx, depth, onoff)
  p = Pad <mode = "reflect"> (x, pads)
  cval = Constant <value = float {7.0}> ()
  p2 = Pad <mode = "constant"> (x, pads, cval)
  ey = EyeLike <k = 1> (x)
  tr = Trilu <upper = 0> (x, k)
}
"""

OPTIONAL = _h() + """
optional (float[N] x) => (bool h, float[N] y, bool h2, float[N] z) {
  o = Optional(x)
  h = OptionalHasElement(o)
  y = OptionalGetElement(o)
  s = SequenceConstruct(x, y)
  os = Optional(s)
  h2 = OptionalHasElement(os)
  ss = OptionalGetElement(os)
  z = SequenceAt(ss, one)
  one = Constant <value = int64 {1}> ()
}
"""

TEXT = _h() + """
text (string[N] s) => (string n, bool[N] r, string[N] c, string parts, int64[N] counts) {
  n = StringNormalizer <case_change_action = "UPPER", is_case_sensitive = 0, stopwords = ["the"]> (s)
  r = RegexFullMatch <pattern = "[a-z]+( [a-z]+)*"> (s)
  c = StringConcat(s, s)
  parts, counts = StringSplit <delimiter = " ", maxsplit = 2> (s)
}
"""

TFIDF = _h(9) + """
tfidf (int64[N, L] x) => (float[N, 7] y) {
  y = TfIdfVectorizer <mode = "TFIDF", min_gram_length = 1, max_gram_length = 2, max_skip_count = 1,
      ngram_counts = [0, 4], ngram_indexes = [0, 1, 2, 3, 4, 5, 6], pool_int64s = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7],
      weights = [1.0, 0.5, 2.0, 1.0, 1.5, 1.0, 0.5]> (x)
}
"""

H = 3
RNN = _h(14) + f"""
rnn (float[T, B, 2] x) => (float ly, float lyh, float gy, float gyh, float ry, float ryh)
  <float[1, {4 * H}, 2] W = {{{_vals(4 * H * 2, 0.5, 2)}}}, float[1, {4 * H}, {H}] R = {{{_vals(4 * H * H, 0.5, 3)}}},
   float[1, {3 * H}, 2] Wg = {{{_vals(3 * H * 2, 0.5, 4)}}}, float[1, {3 * H}, {H}] Rg = {{{_vals(3 * H * H, 0.5, 5)}}},
   float[1, {H}, 2] Wr = {{{_vals(H * 2, 0.5, 6)}}}, float[1, {H}, {H}] Rr = {{{_vals(H * H, 0.5, 7)}}}>
{{
  ly, lyh, lyc = LSTM <hidden_size = {H}> (x, W, R)
  gy, gyh = GRU <hidden_size = {H}, linear_before_reset = 1> (x, Wg, Rg)
  ry, ryh = RNN <hidden_size = {H}, activations = ["Tanh"], direction = "forward"> (x, Wr, Rr)
}}
"""

SIGNAL = _h(20) + """
signal (float[B, N, 1] x, int64 dft_len, int64 wsize, int64 step, int64 bins) => (float d, float w, float bw, float hw, float st, float mel)
{
  ax = Constant <value = int64 {1}> ()
  d = DFT <onesided = 0, inverse = 0> (x, dft_len, ax)
  w = HannWindow <periodic = 1> (wsize)
  bw = BlackmanWindow (wsize)
  hw = HammingWindow <output_datatype = 11> (wsize)
  st = STFT <onesided = 1> (x, step, w)
  rate = Constant <value = int64 {8000}> ()
  lo = Constant <value = float {20.0}> ()
  hi = Constant <value = float {3000.0}> ()
  mel = MelWeightMatrix (bins, dft_len, rate, lo, hi)
}
"""

ATTENTION = _h(23) + """
attention (float[B, H, S, D] q, float[B, H, S, D] k, float[B, H, S, D] v, float[S, 2] cache, int64[B, S] ids) => (float y, float r)
{
  y = Attention <is_causal = 1> (q, k, v)
  r = RotaryEmbedding <interleaved = 0> (q, cache, cache, ids)
}
"""

FUNCTION = '<ir_version: 10, opset_import: ["" : 21, "local" : 1]>\n' + """
function (float[N, 4] x) => (float[N, 4] y, float[N, 4] z) {
  y = local.Scale <alpha = 2.0> (x)
  z = local.Twice(x)
}
<domain: "local", opset_import: ["" : 21, "local" : 1]>
Scale <alpha> (a) => (b) {
  c = Constant <value_float: float = @alpha> ()
  b = Mul(a, c)
}
<domain: "local", opset_import: ["" : 21, "local" : 1]>
Twice (a) => (b) {
  t = local.Scale <alpha = 3.0> (a)
  b = local.Scale <alpha = 0.5> (t)
}
"""

RANDOM = _h() + """
random (float[N, M] x) => (float a, float b, float c, int32 d, float e) {
  a = RandomNormal <shape = [2, 3], seed = 1.0> ()
  b = RandomUniformLike <seed = 2.0, high = 3.0> (x)
  p = Sigmoid(x)
  c = Bernoulli <seed = 3.0> (p)
  d = Multinomial <sample_size = 4, seed = 4.0> (x)
  e = RandomUniform <shape = [3], dtype = 1, seed = 5.0> ()
}
"""

QUANT = _h() + """
quant (float[N, M] x) => (uint8 q, float dq, uint8 y, float ys, uint8 yzp)
  <float scale = {0.05}, uint8 zp = {128}>
{
  q = QuantizeLinear(x, scale, zp)
  dq = DequantizeLinear(q, scale, zp)
  y, ys, yzp = DynamicQuantizeLinear(x)
}
"""

ML = _h(21, ', "ai.onnx.ml" : 3') + """
ml (float[N, 3] x) => (float y, float s, int64 lab, float prob, float tr) {
  y = ai.onnx.ml.Normalizer <norm = "L2"> (x)
  s = ai.onnx.ml.Scaler <offset = [0.0, 1.0, 2.0], scale = [1.0, 0.5, 2.0]> (x)
  lab, prob = ai.onnx.ml.LinearClassifier <coefficients = [1.0, 0.0, -1.0, 0.5, 0.5, 0.5], intercepts = [0.0, 0.1], classlabels_ints = [0, 1]> (x)
  tr = ai.onnx.ml.TreeEnsembleRegressor <n_targets = 1, nodes_treeids = [0, 0, 0], nodes_nodeids = [0, 1, 2],
      nodes_featureids = [0, 0, 0], nodes_values = [0.5, 0.0, 0.0], nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"],
      nodes_truenodeids = [1, 0, 0], nodes_falsenodeids = [2, 0, 0], target_treeids = [0, 0], target_nodeids = [1, 2],
      target_ids = [0, 0], target_weights = [1.0, 2.0]> (x)
}
"""

SPATIAL = _h() + """
spatial (float[N, C, H, W] x, float[N, 2, 3] theta, int64[4] size, float[K, 4] rois, int64[K] bidx, float[1, B, 4] boxes, float[1, 1, B] scores) => (float g, float gs, float ra, int64 nms, float cc)
{
  g = AffineGrid <align_corners = 0> (theta, size)
  gs = GridSample <mode = "linear", padding_mode = "border"> (x, g)
  ra = RoiAlign <output_height = 2, output_width = 2, sampling_ratio = 2> (x, rois, bidx)
  maxb = Constant <value = int64 {2}> ()
  nms = NonMaxSuppression (boxes, scores, maxb)
  cs = Constant <value = int64[2] {3, 5}> ()
  cc = CenterCropPad <axes = [2, 3]> (x, cs)
}
"""

LEGACY = '<ir_version: 3, opset_import: ["" : 6]>\n' + """
legacy (float[N, 3, H, W] x, float[3] b) => (float[N, 3, H, W] y, float[N, 3, A, B] u) {
  y = Add <broadcast = 1, axis = 1> (x, b)
  u = Upsample <height_scale = 2.0, width_scale = 2.0, mode = "nearest"> (y)
}
"""

IMAGE = _h(20) + """
image (uint8[L] data) => (uint8 img) {
  img = ImageDecoder <pixel_format = "RGB"> (data)
}
"""


def _png() -> np.ndarray:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)).save(buf, format="PNG")
    return np.frombuffer(buf.getvalue(), dtype=np.uint8).copy()


_SEEDS = [
    Seed("arith", ARITH, lambda: {"a": _f32(2, 3), "b": _f32(2, 3, seed=1),
                                  "i": np.arange(-3, 3, dtype=np.int32).reshape(2, 3),
                                  "k": np.array([1, 2, 3], np.int32)}),
    Seed("unary", UNARY, lambda: {"x": _f32(2, 3), "n": np.arange(6, dtype=np.int64).reshape(2, 3)}),
    Seed("conv_pool", CONV_POOL, lambda: {"x": _f32(1, 2, 5, 6)}),
    Seed("conv_misc", CONV_MISC, lambda: {"x": _f32(1, 2, 4, 4)}),
    Seed("reshape_slice", RESHAPE_SLICE, lambda: {"x": _f32(3, 4), "shape": _i64(2, 6),
                                                  "starts": _i64(0, 1), "ends": _i64(3, 4),
                                                  "steps": _i64(1, 2)}),
    Seed("gather_concat", GATHER_CONCAT, lambda: {"x": _f32(3, 4), "idx": _i64(0, 2, -1),
                                                  "reps": _i64(2, 1), "eshape": _i64(2, 1, 4),
                                                  "splits": _i64(1, 3)}),
    Seed("scatter_gather", SCATTER_GATHER, lambda: {
        "x": _f32(3, 4), "ind": _i64(0, 1, 2, 3).reshape(2, 2), "upd": np.ones(2, np.float32),
        "eidx": (np.arange(12, dtype=np.int64).reshape(3, 4) % 4),
        "keep": np.array([True, False, True])}),
    Seed("if", IF_, lambda: {"c": np.array(True), "x": _f32(4)}),
    Seed("loop", LOOP, lambda: {"M": np.array(3, np.int64), "cond": np.array(True), "x0": _f32(4)}),
    Seed("while_loop", WHILE_LOOP, lambda: {"x0": np.ones(3, np.float32), "stop": np.array(50, np.float32)}),
    Seed("scan", SCAN, lambda: {"init": np.zeros(3, np.float32), "xs": _f32(4, 3)}),
    Seed("sequences", SEQUENCES, lambda: {"x": _f32(4, 2), "pos": np.array(1, np.int64),
                                          "splits": _i64(1, 3)}),
    Seed("cast", CAST, lambda: {"x": _f32(3), "i": np.array([1, -2, 300], np.int32),
                                "s": np.array(["1.5", "-2", "nan"], dtype=object)}),
    Seed("reduce", REDUCE, lambda: {"x": _f32(3, 4), "axes": _i64(1), "axis": np.array(0, np.int64)}),
    Seed("topk_unique", TOPK_UNIQUE, lambda: {"x": _f32(3, 4), "k": _i64(2)}),
    Seed("resize", RESIZE, lambda: {"x": _f32(1, 1, 3, 4), "scales": np.array([1, 1, 2, 1.5], np.float32),
                                    "sizes": _i64(1, 1, 5, 2)}),
    Seed("einsum_matmul", EINSUM_MATMUL, lambda: {"a": _f32(2, 3), "b": _f32(3, 4), "bias": _f32(4),
                                                  "sq": _f32(3, 3)}),
    Seed("norms", NORMS, lambda: {"x": _f32(2, 3, 4), "gamma": np.ones(4, np.float32),
                                  "beta": np.zeros(4, np.float32), "cs": np.ones(3, np.float32),
                                  "cb": np.zeros(3, np.float32)}),
    Seed("generators", GENERATORS, lambda: {
        "shape": _i64(2, 3), "start": np.array(0, np.float32), "limit": np.array(5, np.float32),
        "delta": np.array(1.5, np.float32), "depth": np.array(4, np.int64), "idx": _i64(0, 3, -1),
        "pads": _i64(1, 0, 1, 2), "x": _f32(3, 4), "k": np.array(1, np.int64)}),
    Seed("optional", OPTIONAL, lambda: {"x": _f32(3)}),
    Seed("text", TEXT, lambda: {"s": np.array(["the cat sat", "Hello World", "a"], dtype=object)}),
    Seed("tfidf", TFIDF, lambda: {"x": _i64(2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3).reshape(2, 6)}),
    Seed("rnn", RNN, lambda: {"x": _f32(4, 2, 2)}),
    Seed("signal", SIGNAL, lambda: {"x": _f32(1, 16, 1), "dft_len": np.array(16, np.int64),
                                    "wsize": np.array(8, np.int64), "step": np.array(4, np.int64),
                                    "bins": np.array(5, np.int64)}),
    Seed("attention", ATTENTION, lambda: {"q": _f32(1, 2, 3, 4), "k": _f32(1, 2, 3, 4, seed=1),
                                          "v": _f32(1, 2, 3, 4, seed=2), "cache": _f32(3, 2),
                                          "ids": _i64(0, 1, 2).reshape(1, 3)}),
    Seed("function", FUNCTION, lambda: {"x": _f32(2, 4)}),
    Seed("random", RANDOM, lambda: {"x": _f32(2, 3)}),
    Seed("quant", QUANT, lambda: {"x": _f32(2, 3)}),
    Seed("ml", ML, lambda: {"x": _f32(2, 3)}),
    Seed("spatial", SPATIAL, lambda: {
        "x": _f32(1, 1, 4, 4), "theta": np.array([[[1, 0, 0], [0, 1, 0]]], np.float32),
        "size": _i64(1, 1, 3, 3), "rois": np.array([[0, 0, 2, 2]], np.float32), "bidx": _i64(0),
        "boxes": np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [2, 2, 3, 3]]], np.float32),
        "scores": np.array([[[0.9, 0.8, 0.7]]], np.float32)}),
    Seed("legacy", LEGACY, lambda: {"x": _f32(1, 3, 2, 2), "b": _f32(3)}),
    Seed("image", IMAGE, lambda: {"data": _png()}),
]

SEEDS: dict[str, Seed] = {s.name: s for s in _SEEDS}


def light_net_bytes(name: str) -> bytes:
    with open(os.path.join(LIGHT_DIR, name), "rb") as f:
        return f.read()
