"""Select the executor the spec suite runs on: ``--executor cpu`` or ONNXKIT_EXECUTOR.

Several, comma-separated (``--executor reference,cpu``), run every case on each in one
session (``make test`` does, to pay pytest's start-up and the cases' loading once); the
test ids then end in the executor's name. Under numba's CUDA simulator the ``cuda`` cases
outside ``spec_tests/cuda_subset.py`` are deselected (on a real GPU every case runs).
"""

import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--executor", default=os.environ.get("ONNXKIT_EXECUTOR", "reference"),
                     help="onnxkit executor to check: reference, cpu or cuda; several "
                          "comma-separated (reference,cpu) check each in one session")


def executors(config) -> list[str]:
    return [name.strip() for name in config.getoption("--executor").split(",") if name.strip()]


@pytest.fixture(scope="session")
def executor(request):
    return request.config.getoption("--executor")


def pytest_generate_tests(metafunc):
    names = executors(metafunc.config)
    if "executor" in metafunc.fixturenames and len(names) > 1:
        metafunc.parametrize("executor", names, ids=names)


def _outside_cuda_subset(item, names: list[str]) -> bool:
    from spec_tests.cuda_subset import CUDA_SUBSET

    params = getattr(item, "callspec", None)
    params = params.params if params is not None else {}
    case = params.get("case")
    if case is None or not hasattr(case, "name") or "executor" not in item.fixturenames:
        return False
    return params.get("executor", names[0]) == "cuda" and case.name not in CUDA_SUBSET


def pytest_collection_modifyitems(config, items):
    names = executors(config)
    if "cuda" not in names:
        return
    from numba import config as numba_config

    if not numba_config.ENABLE_CUDASIM:
        return
    drop = [item for item in items if _outside_cuda_subset(item, names)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        dropped = set(map(id, drop))
        items[:] = [item for item in items if id(item) not in dropped]
