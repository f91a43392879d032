"""The span parser's inference as one staged object (``SpanInference``: propose → link → decode over one options
object): its stages give the parse, a sweep's scoring decodes exactly what a parse with each setting gives, no import
cycle with the parser, and no decision about the linker's kind outside the linkers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import DEV

from spandep.data.conllu import read_conllu
from spandep.options import InferenceOptions, InferenceStats
from spandep.models.layers import evaluating
from spandep.models.span.scores import SpanScores
from spandep.storage.model_io import load_model

SPAN = Path(__file__).resolve().parents[1] / "src" / "spandep" / "models" / "span"
LINKERS = ("linking.py", "late.py", "faithful.py", "queries.py")  # where a linker's kind may be looked at
KIND = {"needs_word_vectors", "answer_token", "query_token", "allow_root_in_span"}  # attributes that tell linkers apart


@pytest.fixture(scope="module")
def span(tiny_models):
    return load_model(tiny_models["span"])


def test_the_stages_give_the_parse(span) -> None:
    sentences = list(read_conllu(DEV))
    stats = InferenceStats()
    parses = span.parse(sentences, InferenceOptions(k=2, decoder="mst"), stats)
    stages = span.stages(InferenceOptions(k=2, decoder="mst"))
    assert stages.options == span.settings(InferenceOptions(k=2, decoder="mst"))  # one options object, complete
    with evaluating(span):
        scored = stages.link(sentences, stages.propose(sentences), range(len(sentences)), True, InferenceStats())
    assert stages.decode(scored)[0] == parses and stats.queries > 0


@pytest.mark.parametrize("retrieval", [False, True])
@pytest.mark.parametrize("decoder", ["projective", "mst"])
def test_a_sweeps_scoring_decodes_what_a_parse_gives(span, retrieval: bool, decoder: str) -> None:
    """``spandep tune`` scores once per k (with retrieval) and decodes every setting from it: each decoding equals a
    parse with that setting, trees, labels and columns."""
    sentences = list(read_conllu(DEV))
    scores = span.score(sentences, InferenceOptions(k=2))
    assert isinstance(scores, SpanScores) and scores.inference.options.retrieval  # decodable with and without it
    for lam in (0.5, 2.0):
        setting = InferenceOptions(k=2, retrieval=retrieval, decoder=decoder, lam=lam)
        assert scores.decode(setting)[0] == span.parse(sentences, setting)
    report = scores.report(sentences)
    assert 0 < report["recall"] <= report["recall_retrieval"] <= 100 and report["queries"] > 0


def imported(path: Path) -> set[str]:
    """The modules ``path`` imports, at any depth (``TYPE_CHECKING`` blocks included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_inference_does_not_import_the_parser() -> None:
    assert "spandep.models.span.parser" not in imported(SPAN / "inference.py")
    assert "spandep.models.span.parser" not in imported(SPAN / "scores.py")


def test_no_decision_about_the_linkers_kind_outside_the_linkers() -> None:
    """Whether a linker reads word vectors, answers with a token or lets a parent's root lie in the child's span is
    the linker's to act on (``LinkScorer.prepare``, ``retrieves``, ``structural_link``, ``training_batch``)."""
    for path in [*SPAN.glob("*.py"), SPAN.parents[1] / "training" / "tune.py"]:
        if path.name in LINKERS:
            continue
        read = {node.attr for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Attribute)}
        assert not read & KIND, f"{path.name} reads {sorted(read & KIND)}"
