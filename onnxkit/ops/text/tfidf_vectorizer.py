"""TfIdfVectorizer: count the pool's n-grams (with skips) in each row of X.

    pool n-grams: sizes n = 1, 2, ...; those of size n are pool[ngram_counts[n-1] : ngram_counts[n]],
                  n items each; the k-th n-gram of the whole pool counts into Y[ngram_indexes[k]]
    for each row, skip s in 0..max_skip_count, size n in min_gram_length..max_gram_length
                  (1-grams only once, with s = 0), start i:
        gram = (row[i], row[i + s + 1], ..., row[i + (n - 1)(s + 1)])
        if gram is in the pool: count[ngram_indexes[k]] += 1
    TF: Y = count; IDF: Y = weight (or 1) where count > 0; TFIDF: Y = weight * count,
    where the k-th n-gram's weight weights[k] applies at Y[ngram_indexes[k]]

(as the spec and onnxruntime have it; onnx's Python reference indexes weights by output
position instead). Y is float32,
[max(ngram_indexes) + 1] for X [C], [N, max(ngram_indexes) + 1] for X [N, C].
https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError, InputError, describe_node
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


@op("TfIdfVectorizer", 9, context=True)
def tfidf_vectorizer(X, *, mode, min_gram_length, max_gram_length, max_skip_count,
                     ngram_counts, ngram_indexes, pool_int64s=None, pool_strings=None,
                     weights=None, ctx):
    if mode not in ("TF", "IDF", "TFIDF"):
        raise AttributeMismatchError(
            f"{describe_node(ctx.node)}: mode must be TF, IDF or TFIDF, got {mode!r}")
    if (pool_int64s is None) == (pool_strings is None):
        raise AttributeMismatchError(
            f"{describe_node(ctx.node)}: exactly one of pool_int64s and pool_strings must be set")
    if X.ndim not in (1, 2):
        raise InputError(f"{describe_node(ctx.node)}: X must be [C] or [N, C], got {list(X.shape)}")
    pool_items = pool_int64s if pool_strings is None else pool_strings
    _check_counts(ctx.node, ngram_counts, len(pool_items), min_gram_length, max_gram_length,
                  max_skip_count)
    pool = _pool_ngrams(pool_items, ngram_counts, min_gram_length, max_gram_length)
    width = max(ngram_indexes) + 1
    if min(ngram_indexes) < 0:
        raise AttributeMismatchError(f"{describe_node(ctx.node)}: ngram_indexes must be >= 0, "
                                     f"got {min(ngram_indexes)}")
    rows = X.reshape(1, -1) if X.ndim == 1 else X
    check_allocation((rows.shape[0], width), np.float32, "TfIdfVectorizer output")
    counts = np.zeros((rows.shape[0], width), dtype=np.float32)
    for r, row in enumerate(rows):
        items = [v if pool_strings is not None else int(v) for v in row]
        for gram in _row_ngrams(items, min_gram_length, max_gram_length, max_skip_count):
            k = pool.get(gram)
            if k is not None:
                counts[r, ngram_indexes[k]] += 1
    w = np.ones(width, dtype=np.float32)
    if weights is not None and len(weights) > 0:
        w[np.asarray(ngram_indexes)] = np.asarray(weights, dtype=np.float32)
    if mode == "IDF":
        counts = np.where(counts > 0, w, 0).astype(np.float32)
    elif mode == "TFIDF":
        counts = (counts * w).astype(np.float32)
    return counts.reshape(width) if X.ndim == 1 else counts


def _check_counts(node, ngram_counts, pool_size: int, min_n: int, max_n: int, max_skip: int) -> None:
    """The attributes bound every loop below: refuse values that would not (a hostile
    ngram_counts or max_gram_length could otherwise spin for 2**62 iterations)."""
    where = describe_node(node)
    if list(ngram_counts) != sorted(ngram_counts) or any(not 0 <= c <= pool_size for c in ngram_counts):
        raise AttributeMismatchError(f"{where}: ngram_counts {list(ngram_counts)} must be "
                                     f"non-decreasing offsets in [0, {pool_size}]")
    if not 1 <= min_n <= max_n <= max(len(ngram_counts), 1):
        raise AttributeMismatchError(f"{where}: need 1 <= min_gram_length <= max_gram_length <= "
                                     f"{len(ngram_counts)}, got {min_n} and {max_n}")
    if max_skip < 0:
        raise AttributeMismatchError(f"{where}: max_skip_count must be >= 0, got {max_skip}")


def _pool_ngrams(pool: list, ngram_counts: list[int], min_n: int, max_n: int) -> dict:
    """n-gram tuple -> its ordinal in the pool (only sizes min_n..max_n)."""
    found, ordinal = {}, 0
    for size, start in enumerate(ngram_counts, start=1):
        end = ngram_counts[size] if size < len(ngram_counts) else len(pool)
        for first in range(start, end - size + 1, size):
            if min_n <= size <= max_n:
                found.setdefault(tuple(pool[first:first + size]), ordinal)
            ordinal += 1
    return found


def _row_ngrams(items: list, min_n: int, max_n: int, max_skip: int):
    for skip in range(min(max_skip, len(items)) + 1):  # longer skips fit no n-gram of 2+
        step = skip + 1
        for size in range(max(min_n, 1 if skip == 0 else 2), max_n + 1):
            for i in range(len(items) - (size - 1) * step):
                yield tuple(items[i + j * step] for j in range(size))
