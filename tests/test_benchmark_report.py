"""The CPU benchmark's report says how the convolution algorithms were chosen."""

from benchmarks.report import _conv_choice


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
