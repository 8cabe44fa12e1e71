"""The CPU benchmark's report says how the convolution algorithms and the BLAS library
of each product were chosen."""

from benchmarks.report import _blas_choice, _conv_choice, _pointwise_choice


def _cell(model, runtime, timed, chosen):
    return {"model": model, "runtime": runtime,
            "conv_tuning": {"timed": timed, "chosen": chosen}}


def test_conv_choice_counts_the_decisions_at_the_highest_level():
    results = [_cell("resnet18", "cpu-L0", True, ["winograd"] * 3),
               _cell("resnet18", "cpu-L3", True, ["winograd4", "winograd", "im2col",
                                                        "im2col"]),
               _cell("mlp", "cpu-L3", True, []),
               {"model": "resnet18", "runtime": "ort-all"}]
    assert _conv_choice(results) == ("timed per layer shape on this machine (onnxkit cpu L3: "
                                     "resnet18 1 Winograd F(4x4) / 1 F(2x2) / 2 im2col)")


def test_conv_choice_names_the_static_rule_and_no_cpu_cells():
    assert _conv_choice([_cell("resnet18", "cpu-L3", False, [])]) == \
        "the static rule (ONNXKIT_CPU_TUNE=0)"
    assert _conv_choice([{"model": "mlp", "runtime": "ort-all"}]) == "—"


def _blas(model, runtime, timed, chosen, libraries=("onemkl", "openblas")):
    return {"model": model, "runtime": runtime,
            "blas_tuning": {"timed": timed, "libraries": list(libraries), "chosen": chosen}}


def test_blas_choice_counts_each_library_at_the_highest_level():
    results = [_blas("mlp", "cpu-L2", True, ["onemkl"] * 5),
               _blas("mlp", "cpu-L3", True, ["openblas", "onemkl", "openblas"]),
               _blas("resnet18", "cpu-L3", True, ["onemkl"]),
               {"model": "mlp", "runtime": "ort-all"}]
    assert _blas_choice(results) == ("timed per product shape on this machine (onnxkit cpu "
                                     "L3: mlp 1 oneMKL / 2 OpenBLAS, resnet18 1 oneMKL / "
                                     "0 OpenBLAS)")


def test_blas_choice_with_one_library_or_tuning_off():
    assert _blas_choice([_blas("mlp", "cpu-L3", True, [], ["openblas"])]) == "OpenBLAS only"
    assert _blas_choice([_blas("mlp", "cpu-L3", False, [])]) == "oneMKL (ONNXKIT_CPU_TUNE=0)"
    on_amd = dict(_blas("mlp", "cpu-L3", False, []))
    on_amd["blas_tuning"] = dict(on_amd["blas_tuning"], default="openblas")
    assert _blas_choice([on_amd]) == "OpenBLAS (ONNXKIT_CPU_TUNE=0)"
    assert _blas_choice([{"model": "mlp", "runtime": "ort-all"}]) == "—"


def test_pointwise_choice_counts_the_layers_by_bands():
    cell = _cell("mobilenetv2", "cpu-L3", True, [])
    cell["conv_tuning"]["pointwise"] = ["bands", "im2col", "bands"]
    results = [cell, _cell("resnet18", "cpu-L3", True, ["winograd4"])]
    assert _pointwise_choice(results) == ("timed per layer shape on this machine (onnxkit cpu "
                                          "L3: mobilenetv2 2 of 3 by bands)")
    assert _pointwise_choice([_cell("mlp", "cpu-L3", False, [])]) == \
        "the whole-image product (ONNXKIT_CPU_TUNE=0)"


def test_zoo_table_marks_a_run_past_the_tolerance():
    from benchmarks.zoo import _table

    row = {"model": "m", "input": [1, 3, 8, 8], "nodes": 5, "reference L0": 1e-7,
           "cpu L0": 1e-7, "cpu L1": 2e-3, "cpu L2": 1e-7, "cpu L3": 1e-7,
           "ort ms": 2.0, "cpu L3 ms": 3.0}
    lines = _table([row, {"model": "broken:64", "error": "no torchvision model"}]).splitlines()
    assert lines[2] == ("| m | 1x3x8x8 | 5 | 1.0e-07 | 1.0e-07 | 2.0e-03 **FAIL** | 1.0e-07 | "
                        "1.0e-07 | 2.00 | 3.00 | 1.50 |")
    assert lines[3] == "| broken:64 | | | error: no torchvision model |"
