"""Property-based tests (hypothesis) of the CoNLL-U reader/writer and of parsing.

* Any well-formed CoNLL-U (or CoNLL-X) round-trips exactly through ``read_conllu`` and ``write_conllu``: every
  comment, multiword-token and empty-node line and every column is kept, byte for byte.
* For any tokens the parser accepts (arbitrary Unicode without whitespace or C0/DEL/NEL controls, 1..60 per
  sentence), the tiny Biaffine and span parsers, with either decoder and either encoder, return one tree per
  sentence with the same tokens: one root, no cycles, heads in range.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from conftest import TINY_BIAFFINE, TINY_SPAN, write_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spandep.data.conllu import read_conllu, write_conllu
from spandep.data.sentence import Sentence
from spandep.data.trees import is_valid_tree
from spandep.options import InferenceOptions
from spandep.pipeline.predict import parse_stream

FORBIDDEN = re.compile("[\x00-\x1f\x7f\x85]")  # what the readers reject in a FORM (see data/conllu.py)

# field text: anything but the format's separators (tab, LF) and CR, which a line end would swallow, and NUL: a line
# with NUL among its control bytes is binary data, refused (data/reading.sniff; tests/test_cli_hostile.py)
field = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n\r\x00"), min_size=1, max_size=8)
form = field.filter(lambda f: not f.isspace() and not FORBIDDEN.search(f))
token = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6).filter(
    lambda t: t.split() == [t] and not FORBIDDEN.search(t)
)


@st.composite
def conll_files(draw: st.DrawFn, fmt: str) -> str:
    """A well-formed CoNLL-U / CoNLL-X text: 1..4 sentences with comments; CoNLL-U also gets multiword-token
    lines (two words each, none overlapping), empty nodes and comments between words."""
    conllu = fmt == "conllu"
    blocks = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 8))
        lines = ["#" + c for c in draw(st.lists(field, max_size=3))]
        covered = 0  # multiword tokens do not overlap
        for i in range(1, n + 1):
            if conllu and covered < i < n and draw(st.booleans()):
                covered = i + 1
                lines.append(f"{i}-{i + 1}\t" + "\t".join(draw(st.lists(field, min_size=9, max_size=9))))
            word_form = draw(form if conllu else form.filter(lambda f: " " not in f))
            head = draw(st.one_of(st.just("_"), st.integers(0, n).map(str)))
            cols = draw(st.lists(field, min_size=8, max_size=8))
            lines.append("\t".join([str(i), word_form, *cols[:4], head, *cols[4:7]]))
            if conllu and draw(st.integers(0, 4)) == 0:
                lines.append(f"{i}.1\t" + "\t".join(draw(st.lists(field, min_size=9, max_size=9))))
            if conllu and draw(st.integers(0, 4)) == 0:
                lines.append("# " + draw(field))
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)


@pytest.mark.parametrize("fmt", ["conllu", "conllx"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_conll_round_trips_exactly(tmp_path: Path, fmt: str, data: st.DataObject) -> None:
    text = data.draw(conll_files(fmt))
    path = tmp_path / "in.conll"
    path.write_bytes(text.encode("utf-8"))
    out = io.StringIO()
    write_conllu(read_conllu(path, fmt), out)
    assert out.getvalue() == text


@pytest.fixture(scope="module")
def tiny_parsers(tmp_path_factory: pytest.TempPathFactory, tiny_transformer_dir: Path) -> dict[tuple[str, str], object]:
    """Untrained tiny parsers by (encoder, model type): arbitrary scores are the hard case for the decoders."""
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    root = tmp_path_factory.mktemp("property_parsers")
    parsers = {}
    for encoder in ("bilstm", "transformer"):
        for name, table in (("biaffine", TINY_BIAFFINE), ("span", TINY_SPAN)):
            cfg = load_config(write_config(root / f"{encoder}-{name}.toml", root / "run", encoder, tiny_transformer_dir, model=table))
            cfg["data"]["max_train_sentences"] = 8
            parsers[encoder, name] = Trainer(cfg).model.eval()
    return parsers


@pytest.mark.parametrize("encoder", ["bilstm", "transformer"])
@pytest.mark.parametrize("model_type", ["biaffine", "span"])
@pytest.mark.parametrize("decoder", ["mst", "projective"])
@settings(max_examples=12, deadline=None)
@given(forms=st.lists(token, min_size=1, max_size=60))
def test_any_accepted_tokens_get_one_tree(tiny_parsers, encoder: str, model_type: str, decoder: str, forms: list[str]) -> None:
    sentence = Sentence.from_tokens(forms)
    parsed = list(parse_stream(tiny_parsers[encoder, model_type], [sentence], InferenceOptions(decoder=decoder)))
    assert len(parsed) == 1 and parsed[0].forms == forms
    heads = parsed[0].heads
    assert is_valid_tree(heads) and heads.count(0) == 1  # one root, no cycles, heads in 0..n
    assert all(isinstance(r, str) and r not in ("", "_") for r in parsed[0].deprels)
