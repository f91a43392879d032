"""Parsing that keeps given heads (issue 49) through every front end: the API, ``spandep parse --keep`` and the
service's ``/parse`` field, with both parser types and both decoders (the tiny BiLSTM models of conftest)."""

from __future__ import annotations

import io
import random
from dataclasses import replace

import httpx
import pytest
from conftest import DEV
from serve_live import live_server
from typer.testing import CliRunner

import spandep
from spandep.cli.main import app
from spandep.data.conllu import read_conllu
from spandep.data.sentence import Sentence
from spandep.data.trees import tree_problems
from spandep.data.writers import write_sentences
from spandep.errors import InputFormatError
from spandep.options import InferenceOptions
from spandep.pipeline.long import parse_sentences
from spandep.serve.service import Service, ServiceSettings

runner = CliRunner()


def partly_given(share: float, seed: int = 0) -> list[Sentence]:
    """The excerpt's gold sentences with each HEAD (and its DEPREL) kept with chance ``share``, else ``_``; the
    kept DEPRELs renamed ``given`` so that keeping them is seen."""
    rng = random.Random(seed)
    out = []
    for s in read_conllu(DEV):
        keep = [rng.random() < share for _ in s.words]
        out.append(replace(s, words=[replace(w, head=w.head if k else None, deprel="given" if k else "_") for w, k in zip(s.words, keep)]))
    return out


def conllu(sentences: list[Sentence]) -> str:
    out = io.StringIO()
    write_sentences(sentences, out, "conllu")
    return out.getvalue()


def check_kept(given: list[Sentence], parsed: list[Sentence], deprels: bool) -> None:
    assert len(given) == len(parsed)
    for g, p in zip(given, parsed):
        assert tree_problems(p.heads) == []
        for wg, wp in zip(g.words, p.words):
            if wg.head is not None:
                assert wp.head == wg.head
                assert (wp.deprel == "given") == deprels


@pytest.mark.parametrize("model_type", ["biaffine", "span"])
@pytest.mark.parametrize("decoder", ["mst", "projective"])
@pytest.mark.parametrize("keep", ["heads", "heads,deprels"])
def test_the_api_keeps_given_heads_and_deprels(tiny_models, model_type, decoder, keep):
    nlp = spandep.load(tiny_models[model_type], decoder=decoder)
    given = partly_given(0.5)
    sentences = given if decoder == "mst" else [s for s in given if is_projective_given(s)]
    check_kept(sentences, list(nlp.parse_sentences(sentences, keep=keep)), deprels=keep == "heads,deprels")


def is_projective_given(sentence: Sentence) -> bool:
    """Whether the excerpt's gold tree is projective (the given heads of a projective tree never cross)."""
    from spandep.data.trees import is_projective

    return is_projective([int(w.head) for w in read_sentence(sentence).words])


def read_sentence(sentence: Sentence) -> Sentence:
    return next(s for s in read_conllu(DEV) if s.line == sentence.line)


def test_without_keep_the_input_heads_are_replaced(tiny_models):
    nlp = spandep.load(tiny_models["biaffine"])
    given = partly_given(1.0)
    parsed = list(nlp.parse_sentences(given))
    assert all(w.deprel != "given" for s in parsed for w in s.words)


def test_pre_tokenised_sentences_with_fixed_heads(tiny_models):
    nlp = spandep.load(tiny_models["span"])
    doc = nlp.parse_tokens([["I", "saw", "her", "duck", "."], ["Ducks", "swim"]], fixed=[{4: (2, "obj"), 1: 2}, {}])
    words = doc[0].words
    assert (words[3].head_id, words[3].deprel, words[0].head_id) == (2, "obj", 2)
    with pytest.raises(ValueError, match="fixed, sentence 0: 9: 2 must map a word id 1..5"):
        nlp.parse_tokens([["I", "saw", "her", "duck", "."]], fixed=[{9: 2}])
    with pytest.raises(TypeError, match="one per sentence"):
        nlp.parse_tokens([["I", "saw"]], fixed={1: 2})
    with pytest.raises(InputFormatError, match="cannot keep the given heads: the given heads of words 1, 2 form a cycle"):
        nlp.parse_tokens([["I", "saw"]], fixed=[{1: 2, 2: 1}])


def test_the_cli_keeps_given_heads_and_reports_bad_ones_in_one_line(tiny_models, tmp_path):
    given = partly_given(0.3)
    source = tmp_path / "given.conllu"
    source.write_text(conllu(given), encoding="utf-8")
    out = tmp_path / "out.conllu"
    result = runner.invoke(app, ["parse", str(source), "-o", str(out), "--model", str(tiny_models["biaffine"]), "--keep", "heads,deprels", "--decoder", "mst"])
    assert result.exit_code == 0, result.output
    parsed = list(read_conllu(out))
    check_kept(given, parsed, deprels=True)
    api = list(spandep.load(tiny_models["biaffine"], decoder="mst").parse_sentences(given, keep="heads,deprels"))
    assert [s.heads for s in api] == [s.heads for s in parsed] and [s.deprels for s in api] == [s.deprels for s in parsed]

    bad = source.read_text(encoding="utf-8").split("\n")
    line = next(i for i, text in enumerate(bad) if text and text[0].isdigit() and text.split("\t")[6] != "_")
    cols = bad[line].split("\t")
    bad[line] = "\t".join([*cols[:6], "x", *cols[7:]])
    (tmp_path / "bad.conllu").write_text("\n".join(bad), encoding="utf-8")
    for args, message in [
        ([str(tmp_path / "bad.conllu")], f"bad.conllu:{line + 1}: HEAD 'x' is not an integer or _"),
        ([str(source), "--keep", "arcs"], "--keep: unknown value 'arcs'; use heads or heads,deprels"),
        ([str(source), "--input-format", "tokens"], "--keep: heads are read from CoNLL-U or CoNLL-X input"),
    ]:
        keep = [] if "--keep" in args else ["--keep", "heads"]
        result = runner.invoke(app, ["parse", *args, "--model", str(tiny_models["biaffine"]), *keep])
        assert result.exit_code == 2 and result.output.count("\n") == 1 and message in result.output, result.output


def test_a_cycle_is_one_line_naming_the_sentence(tiny_models, tmp_path):
    source = tmp_path / "cycle.conllu"
    source.write_text("# sent_id = s9\n1\tA\t_\t_\t_\t_\t2\t_\t_\t_\n2\tB\t_\t_\t_\t_\t1\t_\t_\t_\n3\tC\t_\t_\t_\t_\t_\t_\t_\t_\n\n", encoding="utf-8")
    result = runner.invoke(app, ["parse", str(source), "--model", str(tiny_models["span"]), "--keep", "heads"])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"spandep: error: {source}:1: sentence s9: cannot keep the given heads: the given heads of words 1, 2 form a cycle"


def test_long_sentences_with_given_heads_are_refused(tiny_models):
    model = spandep.load(tiny_models["biaffine"]).model
    sentence = partly_given(0.5)[0]
    with pytest.raises(InputFormatError, match="heads are kept in sentences of up to 3 words; split it"):
        parse_sentences(model, [sentence], InferenceOptions(keep="heads"), long_words=3)
    assert len(parse_sentences(model, [sentence], InferenceOptions(), long_words=3)[0].heads) == len(sentence)


def test_the_service_keeps_given_heads_and_refuses_bad_ones(tiny_models):
    given = partly_given(0.5)
    tiny = str(tiny_models["span"])
    with live_server(Service.load([tiny], ServiceSettings(), threads=1)) as url:
        answer = httpx.post(f"{url}/parse", json={"data": conllu(given), "input": "conllu", "keep": "heads,deprels", "decoder": "mst", "output": "conllu"})
        assert answer.status_code == 200, answer.text
        records = answer.json()["sentences"]
        assert len(records) == len(given)
        for g, record in zip(given, records):
            assert tree_problems(record["heads"]) == []
            for head, deprel, w in zip(record["heads"], record["deprels"], g.words):
                assert w.head is None or (head, deprel) == (w.head, "given")
        for body, message in [
            ({"data": "A B", "input": "text", "keep": "heads"}, "keep: heads are read from conllu or conllx input"),
            ({"data": "A B", "input": "conllu", "keep": "arcs"}, "keep: Input should be 'heads' or 'heads,deprels'"),
            ({"data": "1\tA\t_\t_\t_\t_\t2\t_\t_\t_\n2\tB\t_\t_\t_\t_\t1\t_\t_\t_\n\n", "input": "conllu", "keep": "heads"}, "data:1: cannot keep the given heads"),
        ]:
            response = httpx.post(f"{url}/parse", json=body)
            assert response.status_code == 400 and response.json()["error"].startswith(message), response.text


def test_keep_is_a_choice_of_the_run_never_a_saved_setting():
    with pytest.raises(ValueError, match="unknown keep 'arcs'; use heads or heads,deprels"):
        InferenceOptions(keep="arcs")
    options = InferenceOptions(keep="heads", k=3)
    assert options.given() == {"k": 3} and options.over(InferenceOptions(k=2)).keep == "heads"


@pytest.mark.parametrize("model_type", ["biaffine", "span"])
@pytest.mark.parametrize("decoder", ["mst", "projective"])
def test_a_subtrees_comment_keeps_those_word_ranges_subtrees(tiny_models, model_type, decoder):
    nlp = spandep.load(tiny_models[model_type], decoder=decoder)
    plain = [replace(s, words=[replace(w, head=None) for w in s.words]) for s in read_conllu(DEV)]
    ranges = [(2, len(s) - 1) for s in plain if len(s) > 3]
    marked = [replace(s, comments=[*s.comments, f"# subtrees = {a}-{b}"]) for s, (a, b) in zip([s for s in plain if len(s) > 3], ranges)]
    for s, (a, b) in zip(nlp.parse_sentences(marked, keep="heads"), ranges):
        entering = [d for d in range(a, b + 1) if not a <= s.heads[d - 1] <= b]
        leaving = [d for d in range(1, len(s) + 1) if not a <= d <= b and a <= s.heads[d - 1] <= b]
        assert tree_problems(s.heads) == [] and len(entering) == 1 and leaving == []
    bad = replace(marked[0], comments=["# subtrees = 2-x"])
    with pytest.raises(InputFormatError, match="'# subtrees = 2-x': give word ranges such as 2-4 7-9"):
        list(nlp.parse_sentences([bad], keep="heads"))
