"""benchmarks/scripts/silver_words.py: a treebank's words cut further where a segmenter cuts, never merged; the excluded
texts left out; the gold files appended as they are; the output read back by the tokenizer's corpus as the same text.
The segmenter is a stand-in here (MeCab is not installed for the tests)."""

from __future__ import annotations

import pytest

from benchmarks.scripts.silver_words import agreement, build, refine
from spandep.data.conllu import read_conllu
from spandep.tokenization.corpus import read_paragraphs


def by_chars(sizes: list[int]):
    """A segmenter cutting its text into pieces of ``sizes`` characters (then the rest)."""

    def segment(text: str) -> list[str]:
        out, at = [], 0
        for n in sizes:
            out.append(text[at:at + n])
            at += n
        return [*out, text[at:]]

    return segment


def test_refine_keeps_every_boundary_of_both():
    assert refine(["これに", "不快感を", "示す"], by_chars([2, 3, 1])) == ["これ", "に", "不快", "感", "を", "示す"]
    assert refine(["ab", "cd"], by_chars([4])) == ["ab", "cd"]  # a piece over a word boundary is cut there
    with pytest.raises(ValueError, match="changed the text"):
        refine(["ab"], lambda text: ["a", "c"])


def test_build_leaves_out_excluded_texts_and_appends_gold(tmp_path):
    v1 = tmp_path / "v1.conllu"
    v1.write_text(
        "1\tこれに\t_\tNOUN\t_\t_\t2\tnmod\t_\t_\n2\t示す\t_\tVERB\t_\t_\t0\troot\t_\t_\n\n"
        "1\tABC\t_\tPROPN\t_\t_\t2\tnmod\t_\t_\n2\tDEF\t_\tPROPN\t_\t_\t0\troot\t_\t_\n\n",
        encoding="utf-8",
    )
    test = tmp_path / "test.conllu"
    test.write_text("# text = ABC DEF。\n1\tABC\t_\tX\t_\t_\t0\troot\t_\t_\n2\tDEF\t_\tX\t_\t_\t1\tdep\t_\t_\n\n", encoding="utf-8")
    gold = tmp_path / "gold.conllu"
    gold.write_text("# text = 示す\n1\t示す\t_\tVERB\t_\t_\t0\troot\t_\t_\n", encoding="utf-8")
    text, record = build(v1, [gold], [test], lambda t: [t[:2], t[2:]])
    out = tmp_path / "out.conllu"
    out.write_text(text, encoding="utf-8")
    sentences = list(read_conllu(out))
    assert [[w.form for w in s.words] for s in sentences] == [["これ", "に", "示す"], ["示す"]]
    assert record["sentences"] == 1 and record["left_out_excluded"] == 1 and record["words_after"] == 3
    assert [p.text for p in read_paragraphs(out)] == ["これに示す示す"]


def test_agreement_scores_the_shared_sentences_only(tmp_path):
    v1, gold = tmp_path / "v1.conllu", tmp_path / "gold.conllu"
    v1.write_text("1\tこれに\t_\tNOUN\t_\t_\t2\tnmod\t_\t_\n2\t示す\t_\tVERB\t_\t_\t0\troot\t_\t_\n\n"
                  "1\t他の\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    gold.write_text("# text = これに示す。\n1\tこれ\t_\tX\t_\t_\t0\troot\t_\t_\n2\tに\t_\tX\t_\t_\t1\tdep\t_\t_\n"
                    "3\t示す\t_\tX\t_\t_\t1\tdep\t_\t_\n4\t。\t_\tX\t_\t_\t1\tdep\t_\t_\n\n", encoding="utf-8")
    assert agreement(v1, gold, by_chars([2])) == {"sentences": 0, "silver": None, "segmenter": None, "treebank": None}  # 。 differs
    gold.write_text(gold.read_text(encoding="utf-8").replace("4\t。\t_\tX\t_\t_\t1\tdep\t_\t_\n", "").replace("示す。", "示す"), encoding="utf-8")
    # silver: これ|に|示す (all 3 right); the segmenter alone: これ|に示す (1 of 3 right, 2 found); v1: これに|示す (1 of 3, 2 found)
    assert agreement(v1, gold, by_chars([2])) == {"sentences": 1, "silver": 100.0, "segmenter": 40.0, "treebank": 40.0}
