"""External data stays inside the model's folder (CVE-2022-25882 is the cautionary tale)."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit import errors


def _model_with_external(location: str, offset: int = 0, length: int = 12) -> onnx.ModelProto:
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[3])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    node = helper.make_node("Add", ["x", "w"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [3])],
                              [helper.make_tensor_value_info("y", 1, [3])], initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _save(tmp_path, model, name="m.onnx"):
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return str(path)


def test_external_data_inside_folder_loads(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.array([1, 2, 3], np.float32).tobytes())
    path = _save(tmp_path, _model_with_external("w.bin"))
    y, = onnxkit.run(path, {"x": np.ones(3, np.float32)})
    np.testing.assert_array_equal(y, [2, 3, 4])


@pytest.mark.parametrize("location", ["/etc/passwd", "../secret.bin", "sub/../../secret.bin"])
def test_paths_that_leave_the_folder_are_refused(tmp_path, location):
    (tmp_path / "secret.bin").write_bytes(b"x" * 64)
    folder = tmp_path / "model"
    folder.mkdir()
    path = _save(folder, _model_with_external(location))
    with pytest.raises(errors.UnsafeModelError):
        onnxkit.load(path)


def test_symlink_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "secret.bin").write_bytes(b"x" * 64)
    folder = tmp_path / "model"
    folder.mkdir()
    os.symlink(tmp_path / "secret.bin", folder / "w.bin")
    path = _save(folder, _model_with_external("w.bin"))
    with pytest.raises(errors.UnsafeModelError, match="outside the model's folder"):
        onnxkit.load(path)


def test_range_past_end_of_file_is_refused(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"\0" * 8)
    path = _save(tmp_path, _model_with_external("w.bin", offset=4, length=12))
    with pytest.raises(errors.ModelLoadError, match="runs past the end"):
        onnxkit.load(path)


def test_external_data_without_a_folder_is_refused():
    with pytest.raises(errors.ModelLoadError, match="without a folder"):
        onnxkit.load(_model_with_external("w.bin"))
