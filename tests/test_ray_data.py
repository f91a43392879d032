"""Ray Data integration on a local Ray instance: the actor pool's parses equal single-process parsing."""

from __future__ import annotations

import re

import pytest

from conftest import DEV, TINY_SPAN, write_config
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.storage.model_io import load_model
from spandep.pipeline.predict import parse_stream
from spandep.training.config import load_config
from spandep.training.trainer import Trainer

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    except Exception:  # Ray waits a fixed 30 s for its raylet; on a busy 2-core machine a second try succeeds
        ray.shutdown()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ray_model")
    Trainer(load_config(write_config(tmp / "c.toml", tmp / "run", "bilstm", model=TINY_SPAN, epochs=1))).run()
    return tmp / "run" / "model"


@pytest.mark.slow
def test_parse_dataset_equals_single_process_parsing(local_ray, tiny_model) -> None:
    from spandep.integrations.ray_data import parse_dataset

    sentences = [Sentence.from_tokens(s.forms) for s in read_conllu(DEV)]  # what the rows carry: forms only
    sentences.append(Sentence.from_tokens(["A", "very" * 20 + "long", "word"]))  # batches of different string widths
    rows = [{"id": i, "tokens": s.forms} for i, s in enumerate(sentences)]
    ds = local_ray.data.from_items(rows, override_num_blocks=3)
    got = sorted(parse_dataset(ds, model=str(tiny_model), actors=2, batch_size=4).take_all(), key=lambda r: r["id"])
    expected = list(parse_stream(load_model(tiny_model), sentences))
    assert [r["id"] for r in got] == list(range(len(sentences)))
    for row, sent in zip(got, expected):
        assert list(row["tokens"]) == sent.forms
        assert [int(h) for h in row["heads"]] == sent.heads
        assert list(row["deprels"]) == sent.deprels
        assert list(row["upos"]) == sent.upos


def test_rows_without_tokens_or_with_bad_tokens_fail_clearly(tiny_model) -> None:
    import numpy as np

    from spandep.integrations.ray_data import RayParser
    from spandep.api import ModelSpec

    parser = RayParser(ModelSpec.resolve(str(tiny_model)))
    with pytest.raises(ValueError, match="'tokens' column"):
        parser({"text": np.array(["I saw her"])})
    for tokens, error, message in (
        ([1, None, "x"], TypeError, "row 0 of the batch, token 0: expected a str, got int 1"),
        ("I saw her", TypeError, "row 0 of the batch: expected a list of token strings, got str"),
        (np.array(["I", "a\x07b"]), ValueError, "row 0 of the batch, token 1: control character U+0007"),
        ([], ValueError, "at least one token"),
    ):
        column = np.empty(1, dtype=object)
        column[0] = tokens
        with pytest.raises(error, match=re.escape(message)):  # the API's check and messages (Pipeline.parse_tokens)
            parser({"tokens": column})
    assert len(parser({"tokens": np.array([["I", "saw her"]])})["heads"][0]) == 2  # a 2-D string batch; spaces are fine


@pytest.mark.parametrize(("arguments", "message"), [
    ({"actors": 0}, "actors must be an int in [1, 10000], not 0"),
    ({"batch_size": 10**9}, "batch_size must be an int in [1, 100000], not 1000000000"),
    ({"threads": 2000}, "threads must be an int in [1, 1024], not 2000"),
])
def test_parse_dataset_bounds_its_numbers(arguments, message) -> None:
    from spandep.integrations.ray_data import parse_dataset

    with pytest.raises(ValueError, match=re.escape(message)):  # refused before a model or Ray is touched
        parse_dataset(None, **arguments)  # type: ignore[arg-type]
