"""benchmarks/scripts/typographic_variants.py: the variant gold files spell their rewritten text, keep every column
but FORM and ``# text``, and are read by the official CoNLL 2018 scorer (issue 47)."""

from __future__ import annotations

from benchmarks.scripts.typographic_variants import write_variants
from spandep.data.conllu import read_conllu
from spandep.tokenization.corpus import raw_text, read_paragraphs

GOLD = """# newdoc id = d1
# newpar
# sent_id = 1
# text = Dell'arte "vera" - disse... ok
1-2\tDell'\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
1\tDi\tdi\tADP\t_\t_\t3\tcase\t_\t_
2\tl'\til\tDET\t_\t_\t3\tdet\t_\t_
3\tarte\tarte\tNOUN\t_\t_\t0\troot\t_\t_
4\t"\t"\tPUNCT\t_\t_\t5\tpunct\t_\tSpaceAfter=No
5\tvera\tvero\tADJ\t_\t_\t3\tamod\t_\tSpaceAfter=No
6\t"\t"\tPUNCT\t_\t_\t5\tpunct\t_\t_
7\t-\t-\tPUNCT\t_\t_\t8\tpunct\t_\t_
8\tdisse\tdire\tVERB\t_\t_\t3\tparataxis\t_\tSpaceAfter=No
9\t...\t...\tPUNCT\t_\t_\t8\tpunct\t_\t_
10\tok\tok\tINTJ\t_\t_\t8\tdiscourse\t_\t_

# newpar
# sent_id = 2
# text = Sì.
1\tSì\tsì\tINTJ\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""


def test_variant_gold_files_spell_their_text(tmp_path):
    gold = tmp_path / "it-test.conllu"
    gold.write_text(GOLD, encoding="utf-8")
    files = write_variants(gold, "it", tmp_path / "variants", seed=1)  # checks raw text and the scorer's reading
    typo = list(read_conllu(files["typo"]))
    assert typo[0].comment("text").replace("\u00a0", " ") == "Dell’arte «vera» – disse… ok"
    assert [w.form for w in typo[0].words] == ["Di", "l’", "arte", "«", "vera", "»", "–", "disse", "…", "ok"]
    assert typo[0].extra_lines[0][1].split("\t")[1] == "Dell’"
    original = list(read_conllu(gold))
    assert [(w.lemma, w.head, w.deprel, w.misc) for s in original for w in s.words] == [
        (w.lemma, w.head, w.deprel, w.misc) for s in typo for w in s.words
    ]
    nopar = files["nopar"].read_text(encoding="utf-8")
    assert "# newpar" not in nopar and "# newdoc" not in nopar
    assert raw_text(read_paragraphs(files["nopar"])) == "Dell'arte \"vera\" - disse... ok Sì.\n"
    assert len(read_paragraphs(files["typo"])) == 2
