"""Every hostile model of the corpus fails with the expected onnxkit error: no crash, no hang."""

import pytest

import onnxkit
from tests.hostile.corpus import CORPUS, build


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_hostile_model_gives_clear_error(name, tmp_path):
    builder, error, fragment, limits, feeds = CORPUS[name]
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(builder().SerializeToString())  # through the file path, as a user would
    with pytest.raises(error) as info:
        sess = onnxkit.Session(str(path), limits=limits)
        if feeds is not None:
            sess.run(None, feeds)
        else:
            pytest.fail(f"{name}: planning succeeded, expected {error.__name__}")
    assert fragment in str(info.value), str(info.value)


def test_corpus_script_writes_every_model(tmp_path):
    paths = build(str(tmp_path))
    assert len(paths) == len(CORPUS) and all((tmp_path / p).stat().st_size > 0 for p in paths)


def test_protobuf_nesting_beyond_the_parser_limit_is_a_load_error(tmp_path):
    from tests.hostile.corpus import protobuf_bomb

    path = tmp_path / "bomb.onnx"
    path.write_bytes(protobuf_bomb(400))
    with pytest.raises(onnxkit.errors.ModelLoadError, match="MaxDepth"):
        onnxkit.Session(str(path))


def test_shallow_bomb_decodes_and_is_judged_by_the_planner():
    from tests.hostile.corpus import protobuf_bomb

    # five levels decode fine; the planner then names what is wrong (no else_branch)
    with pytest.raises(onnxkit.errors.AttributeMismatchError, match="else_branch missing"):
        onnxkit.Session(protobuf_bomb(5))
