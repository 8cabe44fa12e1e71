"""Select the executor the spec suite runs on: ``--executor cpu`` or ONNXKIT_EXECUTOR."""

import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--executor", default=os.environ.get("ONNXKIT_EXECUTOR", "reference"),
                     help="onnxkit executor to check: reference, cpu or cuda")


@pytest.fixture(scope="session")
def executor(request):
    return request.config.getoption("--executor")
