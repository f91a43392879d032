"""Evaluation metrics, the punctuation rule and the ``evaluate`` command, checked against numbers computed
by hand (every number is derived in the comments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from spandep.cli.common import handle_errors
from spandep.cli.evaluate import evaluate as evaluate_command
from spandep.data.conllu import read_conllu, write_conllu
from spandep.data.sentence import Sentence, Token
from spandep.errors import InputFormatError, OutputError
from spandep.evaluation.metrics import EvalReport, evaluate
from spandep.evaluation.punct import PUNCT_RULE, is_punct, is_punct_form

FIXTURE = Path(__file__).parent / "fixtures" / "en_ewt_excerpt.conllu"


def sent(rows: list[tuple[str, str, int | None, str]], source: str = "<memory>", line: int = 0) -> Sentence:
    """rows: (form, upos, head, deprel) for words 1..n."""
    words = [Token(id=i + 1, form=f, upos=u, head=h, deprel=d) for i, (f, u, h, d) in enumerate(rows)]
    return Sentence(words=words, source=source, line=line)


# Gold sentence 1 (7 words)                     Predicted sentence 1
#  1 The  DET   -> 2 det                          -> 2 det       head ok, label ok
#  2 cat  NOUN  -> 3 nsubj                        -> 3 obj       head ok, label wrong
#  3 sat  VERB  -> 0 root                         -> 0 root      head ok, label ok
#  4 on   ADP   -> 6 case                         -> 3 nmod      head wrong
#  5 the  DET   -> 6 det                          -> 6 det       head ok, label ok
#  6 mat  NOUN  -> 3 obl:on                       -> 3 obl       head ok, label wrong (subtype differs)
#  7 .    PUNCT -> 3 punct                        -> 6 punct     head wrong (pred UPOS "X": gold decides punct)
# Gold sentence 2 (2 words)                     Predicted sentence 2
#  1 Run  VERB  -> 0 root                         -> 0 root      ok, ok
#  2 !    PUNCT -> 1 punct                        -> 1 punct     ok, ok
GOLD = [
    sent([("The", "DET", 2, "det"), ("cat", "NOUN", 3, "nsubj"), ("sat", "VERB", 0, "root"), ("on", "ADP", 6, "case"),
          ("the", "DET", 6, "det"), ("mat", "NOUN", 3, "obl:on"), (".", "PUNCT", 3, "punct")], "gold", 1),
    sent([("Run", "VERB", 0, "root"), ("!", "PUNCT", 1, "punct")], "gold", 10),
]
PRED = [
    sent([("The", "_", 2, "det"), ("cat", "_", 3, "obj"), ("sat", "_", 0, "root"), ("on", "_", 3, "nmod"),
          ("the", "_", 6, "det"), ("mat", "_", 3, "obl"), (".", "X", 6, "punct")], "pred", 1),
    sent([("Run", "_", 0, "root"), ("!", "_", 1, "punct")], "pred", 10),
]


@pytest.fixture(scope="module")
def report() -> EvalReport:
    return evaluate(GOLD, PRED)


def test_main_scores(report):
    assert (report.sentences, report.words, report.punct_words) == (2, 9, 2)
    # correct heads: s1 words 1,2,3,5,6 (5) + s2 words 1,2 (2) = 7 of 9
    assert report.uas == pytest.approx(100 * 7 / 9)
    # correct head+label: s1 words 1,3,5 (3) + s2 (2) = 5 of 9
    assert report.las == pytest.approx(100 * 5 / 9)
    # without punctuation (gold "." and "!" removed): heads 5 of 6 in s1 + 1 of 1 in s2 = 6/7; labels 3 + 1 = 4/7
    assert report.uas_no_punct == pytest.approx(100 * 6 / 7)
    assert report.las_no_punct == pytest.approx(100 * 4 / 7)
    # exact match: s1 has wrong heads, s2 is perfect -> 1 of 2 for both
    assert report.exact_uas == pytest.approx(50.0)
    assert report.exact_las == pytest.approx(50.0)
    assert report.counts["uas_correct"] == 7 and report.counts["las_correct"] == 5
    assert report.counts["words_no_punct"] == 7
    assert (report.gold_source, report.pred_source) == ("gold", "pred")


def test_clas(report):
    # gold content words (universal part not aux/case/cc/clf/cop/det/mark/punct):
    #   s1 nsubj(2), root(3), obl:on(6); s2 root(1)                                  -> 4
    # predicted content words: s1 obj(2), root(3), nmod(4), obl(6); s2 root(1)       -> 5
    # correct (gold content, head and full label right): s1 word 3, s2 word 1        -> 2
    # P = 2/5 = 40, R = 2/4 = 50, F1 = 2*2/(5+4) = 44.44
    assert report.counts["clas_gold"] == 4
    assert report.counts["clas_predicted"] == 5
    assert report.counts["clas_correct"] == 2
    assert report.clas_precision == pytest.approx(40.0)
    assert report.clas_recall == pytest.approx(50.0)
    assert report.clas_f1 == pytest.approx(100 * 4 / 9)


def test_per_label(report):
    rows = {ls.label: ls for ls in report.per_label}
    # gold support: det 2, punct 2, root 2, case 1, nsubj 1, obl:on 1; predicted only: nmod, obj, obl
    # order: support descending, then label
    assert [ls.label for ls in report.per_label] == ["det", "punct", "root", "case", "nsubj", "obl:on", "nmod", "obj", "obl"]
    # det: gold words 1,5 (s1), both predicted det with right heads -> 2/2/2 -> 100 everywhere
    assert (rows["det"].support, rows["det"].predicted, rows["det"].correct) == (2, 2, 2)
    assert rows["det"].f1 == pytest.approx(100.0)
    # punct: predicted on s1 word 7 (wrong head) and s2 word 2 (right) -> correct 1; P = 1/2, R = 1/2, F1 = 50
    assert (rows["punct"].support, rows["punct"].predicted, rows["punct"].correct) == (2, 2, 1)
    assert rows["punct"].precision == pytest.approx(50.0)
    assert rows["punct"].recall == pytest.approx(50.0)
    assert rows["punct"].f1 == pytest.approx(50.0)
    # nsubj: never predicted -> P undefined, R 0, F1 0
    assert (rows["nsubj"].support, rows["nsubj"].predicted, rows["nsubj"].correct) == (1, 0, 0)
    assert rows["nsubj"].precision is None and rows["nsubj"].recall == 0.0 and rows["nsubj"].f1 == 0.0
    # obj: predicted once, never in gold -> P 0, R undefined, F1 0
    assert (rows["obj"].support, rows["obj"].predicted, rows["obj"].correct) == (0, 1, 0)
    assert rows["obj"].precision == 0.0 and rows["obj"].recall is None and rows["obj"].f1 == 0.0
    # obl:on vs obl: subtypes count, so obl:on has 0 correct
    assert rows["obl:on"].correct == 0 and rows["obl"].correct == 0


def by_bin(rows):
    return {b.bin: (b.words, b.uas, b.las) for b in rows}


def test_breakdown_sentence_length(report):
    rows = {b.bin: b for b in report.by_sentence_length}
    assert list(rows) == ["1-10", "11-20", "21-30", "31-40", "41-50", ">50"]
    # both sentences (7 and 2 words) are in 1-10: 9 words, UAS 7/9, LAS 5/9
    assert (rows["1-10"].sentences, rows["1-10"].words) == (2, 9)
    assert rows["1-10"].uas == pytest.approx(100 * 7 / 9)
    assert rows["1-10"].las == pytest.approx(100 * 5 / 9)
    assert (rows[">50"].sentences, rows[">50"].words, rows[">50"].uas) == (0, 0, None)


def test_breakdown_dependency_length(report):
    rows = by_bin(report.by_dependency_length)
    assert list(rows) == ["root", "1", "2", "3", "4", "5", "6", "7", "8-10", "11-15", "16-20", ">20"]
    # gold arc lengths: s1 w1 |2-1|=1, w2 1, w3 root, w4 |6-4|=2, w5 1, w6 |3-6|=3, w7 |3-7|=4; s2 w1 root, w2 1
    # root: s1 w3 (ok, ok), s2 w1 (ok, ok)                    -> 2 words, 100, 100
    # 1:    s1 w1 (ok,ok), w2 (ok,wrong), w5 (ok,ok), s2 w2 (ok,ok) -> 4 words, UAS 4/4 = 100, LAS 3/4 = 75
    # 2:    s1 w4 (wrong)                                      -> 1 word, 0, 0
    # 3:    s1 w6 (ok, wrong label)                            -> 1 word, 100, 0
    # 4:    s1 w7 (wrong)                                      -> 1 word, 0, 0
    assert rows["root"] == (2, 100.0, 100.0)
    assert rows["1"] == (4, 100.0, 75.0)
    assert rows["2"] == (1, 0.0, 0.0)
    assert rows["3"] == (1, 100.0, 0.0)
    assert rows["4"] == (1, 0.0, 0.0)
    assert all(rows[b] == (0, None, None) for b in ["5", "6", "7", "8-10", "11-15", "16-20", ">20"])


def test_breakdown_span_length(report):
    rows = by_bin(report.by_span_length)
    assert list(rows) == ["1", "2", "3-4", "5-8", "9-16", "17-32", ">32"]
    # gold hulls: s1 w1 [1,1]=1, w2 [1,2]=2, w3 [1,7]=7, w4 1, w5 1, w6 [4,6]=3, w7 1; s2 w1 [1,2]=2, w2 1
    # 1:   s1 w1 (ok,ok), w4 (wrong), w5 (ok,ok), w7 (wrong), s2 w2 (ok,ok) -> 5 words, UAS 3/5 = 60, LAS 60
    # 2:   s1 w2 (ok, wrong label), s2 w1 (ok, ok)                           -> 2 words, 100, 50
    # 3-4: s1 w6 (ok, wrong label)                                           -> 1 word, 100, 0
    # 5-8: s1 w3 (ok, ok)                                                    -> 1 word, 100, 100
    assert rows["1"] == (5, 60.0, 60.0)
    assert rows["2"] == (2, 100.0, 50.0)
    assert rows["3-4"] == (1, 100.0, 0.0)
    assert rows["5-8"] == (1, 100.0, 100.0)
    assert all(rows[b] == (0, None, None) for b in ["9-16", "17-32", ">32"])


def test_long_sentence_bins():
    # a chain of 60 words: word i is headed by i+1, word 60 is the root. Prediction = gold except word 1.
    n = 60
    gold = sent([(f"w{i}", "NOUN", i + 1 if i < n else 0, "dep" if i < n else "root") for i in range(1, n + 1)])
    pred_rows = [(w.form, "_", w.head, w.deprel) for w in gold.words]
    pred_rows[0] = ("w1", "_", 3, "dep")  # wrong head
    r = evaluate([gold], [sent(pred_rows)])
    sl = {b.bin: b for b in r.by_sentence_length}
    assert (sl[">50"].sentences, sl[">50"].words) == (1, 60)
    assert sl[">50"].uas == pytest.approx(100 * 59 / 60)
    dl = by_bin(r.by_dependency_length)
    assert dl["root"] == (1, 100.0, 100.0) and dl["1"] == (59, pytest.approx(100 * 58 / 59), pytest.approx(100 * 58 / 59))
    # hull of word i = [1, i]: sizes 1..60 -> bins 1:1, 2:1, 3-4:2, 5-8:4, 9-16:8, 17-32:16, >32:28 words
    sp = by_bin(r.by_span_length)
    assert [sp[b][0] for b in ["1", "2", "3-4", "5-8", "9-16", "17-32", ">32"]] == [1, 1, 2, 4, 8, 16, 28]
    assert sp["1"] == (1, 0.0, 0.0)  # word 1 has span 1 and the wrong head
    assert r.exact_uas == 0.0 and r.punct_words == 0


def test_unparsed_prediction_scores_zero():
    gold = GOLD[1]
    pred = sent([("Run", "_", None, "_"), ("!", "_", None, "_")])
    r = evaluate([gold], [pred])
    assert (r.uas, r.las, r.uas_no_punct, r.exact_uas) == (0.0, 0.0, 0.0, 0.0)


def test_empty_input_gives_undefined_scores():
    r = evaluate([], [])
    assert r.sentences == 0 and r.uas is None and r.clas_f1 is None
    json.dumps(r.to_dict())


# ------------------------------------------------------------------------------------------ punctuation


@pytest.mark.parametrize(
    "upos,xpos,form,expected",
    [
        ("PUNCT", "_", "word", True),  # UPOS decides
        ("SYM", "$", "$", True),
        ("NOUN", ".", ".", False),  # UPOS present and not PUNCT/SYM: form and XPOS do not matter
        ("_", ",", ",", True),  # no UPOS: PTB tags `` '' : , .
        ("_", "``", "``", True),
        ("_", "''", "''", True),
        ("_", ":", "--", True),
        ("_", ".", "?", True),
        ("_", "-LRB-", "(", False),  # brackets, # and $ are not punctuation
        ("_", "-RRB-", ")", False),
        ("_", "#", "#", False),
        ("_", "$", "$", False),
        ("_", "NN", ".", False),  # XPOS present: the form does not matter
        ("_", "_", "...", True),  # neither: form made of Unicode punctuation (P*)
        ("_", "_", "«—»", True),
        ("_", "_", "#", True),  # '#' is category Po
        ("_", "_", "$", False),  # '$' is Sc (a symbol), not punctuation
        ("_", "_", "a.", False),
    ],
)
def test_punct_rule(upos, xpos, form, expected):
    assert is_punct(Token(id=1, form=form, upos=upos, xpos=xpos)) is expected


def test_punct_form_and_rule_text():
    assert is_punct_form("!?") and not is_punct_form("") and not is_punct_form("+")
    assert "PUNCT or SYM" in PUNCT_RULE and "-LRB- -RRB- # $" in PUNCT_RULE


def test_no_punct_uses_gold_xpos_when_no_upos():
    # PTB-style data without UPOS: "," (XPOS ,) is punctuation, "(" (XPOS -LRB-) is not.
    def rows(h3):
        return [Token(1, "Hi", xpos="UH", head=0, deprel="root"), Token(2, ",", xpos=",", head=1, deprel="dep"),
                Token(3, "(", xpos="-LRB-", head=h3, deprel="dep")]

    r = evaluate([Sentence(rows(1))], [Sentence(rows(2))])
    # all: heads right for words 1,2 -> 2/3; without "," -> words 1 and 3: 1/2
    assert r.punct_words == 1
    assert r.uas == pytest.approx(100 * 2 / 3)
    assert r.uas_no_punct == pytest.approx(50.0)


# ------------------------------------------------------------------------------------------ alignment


def _file(tmp_path: Path, name: str, sents: list[Sentence]) -> Path:
    path = tmp_path / name
    write_conllu(sents, path)
    return path


def test_alignment_errors_name_the_prediction(tmp_path):
    g = _file(tmp_path, "gold.conllu", GOLD)  # s1 at line 1, s2 at line 9
    fewer = _file(tmp_path, "fewer.conllu", PRED[:1])
    with pytest.raises(InputFormatError, match="ends after 1 sentences") as exc:
        evaluate(read_conllu(g), read_conllu(fewer))
    assert (exc.value.source, exc.value.line) == (str(fewer), 1)

    more = _file(tmp_path, "more.conllu", PRED + PRED[1:])
    with pytest.raises(InputFormatError, match="more sentences") as exc:
        evaluate(read_conllu(g), read_conllu(more))
    assert (exc.value.source, exc.value.line) == (str(more), 12)

    swapped = _file(tmp_path, "swapped.conllu", [PRED[0], sent([("Walk", "_", 0, "root"), ("!", "_", 1, "punct")])])
    with pytest.raises(InputFormatError, match="word 1: form 'Walk' differs from the gold form 'Run'") as exc:
        evaluate(read_conllu(g), read_conllu(swapped))
    assert (exc.value.source, exc.value.line) == (str(swapped), 9)

    short = _file(tmp_path, "short.conllu", [PRED[0], sent([("Run", "_", 0, "root")])])
    with pytest.raises(InputFormatError, match="has 1 words but the gold sentence") as exc:
        evaluate(read_conllu(g), read_conllu(short))
    assert exc.value.line == 9


def test_gold_must_be_a_tree(tmp_path):
    bad_gold = _file(tmp_path, "g.conllu", [GOLD[0], sent([("Run", "VERB", 2, "dep"), ("!", "PUNCT", 1, "punct")])])
    with pytest.raises(InputFormatError, match="gold heads do not form a tree") as exc:
        evaluate(read_conllu(bad_gold), PRED)
    assert (exc.value.source, exc.value.line) == (str(bad_gold), 9)


def test_self_evaluation_of_fixture_is_perfect():
    r = evaluate(read_conllu(FIXTURE), read_conllu(FIXTURE))
    assert r.sentences == 4 and r.words == 7 + 5 + 5 + 23
    assert r.uas == r.las == r.clas_f1 == r.exact_las == 100.0
    # gold punctuation: ":" in s1, "." in s2 and s3, ",", ",", "." in s4 -> 6
    assert r.punct_words == 6


def test_report_dict_and_text(report):
    d = report.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["uas"] == report.uas and isinstance(d["per_label"][0], dict)
    assert d["punct_rule"] == PUNCT_RULE
    text = report.format_text()
    assert PUNCT_RULE in text
    assert "77.78" in text  # UAS 7/9
    assert "44.44" in text  # CLAS F1
    assert "obl:on" in text and ">50" in text and "root" in text


# ------------------------------------------------------------------------------------------ command line


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        return CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(evaluate_command)
    return app


def test_cli_text_and_json(tmp_path):
    g = _file(tmp_path, "gold.conllu", GOLD)
    p = _file(tmp_path, "pred.conllu", PRED)
    result = _runner().invoke(_app(), [str(g), str(p)])
    assert result.exit_code == 0, result.output
    assert "77.78" in result.stdout and PUNCT_RULE in result.stdout
    result = _runner().invoke(_app(), [str(g), str(p), "--json"])
    assert result.exit_code == 0
    d = json.loads(result.stdout)
    assert d["uas"] == pytest.approx(100 * 7 / 9) and d["clas_f1"] == pytest.approx(100 * 4 / 9)


def test_cli_errors_exit_cleanly(tmp_path):
    g = _file(tmp_path, "gold.conllu", GOLD)
    p = _file(tmp_path, "pred.conllu", PRED[:1])
    result = _runner().invoke(_app(), [str(g), str(p)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0  # one line, no traceback
    # the prediction's text stops at its last line (7) where the gold file's goes on (its line 9)
    assert f"{p}:7:" in result.stderr and f"{g}:9" in result.stderr and "Traceback" not in result.stderr
    result = _runner().invoke(_app(), [str(g), str(tmp_path / "missing.conllu")])
    assert result.exit_code == 2 and "file not found" in result.stderr


def test_handle_errors_uses_exit_code_and_lets_bugs_through():
    app = typer.Typer()

    @app.command()
    def fail(kind: str) -> None:
        with handle_errors():
            if kind == "output":
                raise OutputError("cannot write x: disk\nfull")
            raise RuntimeError("bug")

    result = _runner().invoke(app, ["output"])
    assert result.exit_code == 4
    assert result.stderr == "spandep: error: cannot write x: disk full\n"
    result = _runner().invoke(app, ["bug"])
    assert result.exit_code == 1 and isinstance(result.exception, RuntimeError)


def test_upos_accuracy_counts_words_with_a_gold_tag() -> None:
    gold = [sent([("I", "PRON", 2, "nsubj"), ("run", "VERB", 0, "root"), ("fast", "_", 2, "advmod")])]
    pred = [sent([("I", "PRON", 2, "nsubj"), ("run", "NOUN", 0, "root"), ("fast", "ADV", 2, "advmod")])]
    report = evaluate(gold, pred)
    assert report.counts["upos_gold"] == 2 and report.counts["upos_correct"] == 1
    assert report.upos == 50.0
    assert "UPOS accuracy" in report.format_text()
