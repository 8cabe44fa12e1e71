"""Print the pytest node ids of the spec subset the cuda executor is checked on in CI.

    pytest --executor cuda $(python -m tests.cuda.spec_ids)
"""

from spec_tests.cuda_subset import CUDA_SUBSET

if __name__ == "__main__":
    print(" ".join(f"spec_tests/test_onnx_cases.py::test_case[node:{name}]"
                   for name in sorted(CUDA_SUBSET)))
