"""DictVectorizer: a map becomes a row of values ordered by a vocabulary.

    Y[0, i] = X[vocabulary[i]] if that key is in X, else 0 ("" for strings)

A sequence of maps gives one row per map. https://onnx.ai/onnx/operators/onnx_aionnxml_DictVectorizer.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError, InputError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("DictVectorizer", 1, domain=ML_DOMAIN)
def dict_vectorizer(X, *, int64_vocabulary=None, string_vocabulary=None):
    vocabulary = list(string_vocabulary) if string_vocabulary else list(int64_vocabulary if int64_vocabulary is not None else [])
    if not vocabulary:
        raise AttributeMismatchError("DictVectorizer needs int64_vocabulary or string_vocabulary")
    maps = [X] if isinstance(X, dict) else list(X)
    if not all(isinstance(m, dict) for m in maps):
        raise InputError("DictVectorizer takes a map (dict) or a sequence of maps")
    sample = next((v for m in maps for v in m.values()), 0.0)
    if isinstance(sample, str):
        out = np.full((len(maps), len(vocabulary)), "", dtype=object)
    else:  # a Python float stands for the usual map(_, float); numpy scalars keep their type
        dtype = np.float32 if type(sample) is float else np.asarray(sample).dtype
        out = np.zeros((len(maps), len(vocabulary)), dtype=dtype)
    for row, m in enumerate(maps):
        for col, key in enumerate(vocabulary):
            if key in m:
                out[row, col] = m[key]
    return out
