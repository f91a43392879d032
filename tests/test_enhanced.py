"""The enhancement rules (``spandep.enhancement``) on small hand-written trees, the empty nodes collapsed for the IWPT
scorer, the official scorer on a tiny file, and DEPS kept through CoNLL-U reading and writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from spandep.data.conllu import format_sentence, read_conllu, write_conllu
from spandep.data.sentence import Sentence, Token
from spandep.enhancement import RULES, enhance
from spandep.enhancement.collapse import collapse_empty_nodes
from spandep.enhancement.relative import relative_pronouns


def sentence(*rows: str) -> Sentence:
    """A sentence from rows ``"form lemma UPOS FEATS head deprel"`` (FEATS ``_`` for none)."""
    words = []
    for i, row in enumerate(rows, 1):
        form, lemma, upos, feats, head, deprel = row.split()
        words.append(Token(id=i, form=form, lemma=lemma, upos=upos, feats=feats, head=int(head), deprel=deprel))
    return Sentence(words=words)


def deps(s: Sentence, rules=RULES) -> list[str]:
    return [w.deps for w in enhance(s, rules).words]


def test_case_marked_relations_take_the_markers_form_with_its_fixed_words() -> None:
    s = sentence(
        "She she PRON _ 2 nsubj", "sat sit VERB _ 0 root", "on on ADP _ 5 case", "the the DET _ 5 det",
        "mat mat NOUN _ 2 obl", "because because ADP _ 9 case", "of of ADP _ 6 fixed", "the the DET _ 9 det",
        "rain rain NOUN _ 2 obl", "including include VERB VerbForm=Ger 11 case", "cats cat NOUN _ 9 nmod",
    )
    got = deps(s)
    assert got[4] == "2:obl:on"
    assert got[8] == "2:obl:because_of"
    assert got[10] == "9:nmod:including"  # the form, as EWT writes it, not the lemma "include"
    assert got[0] == "2:nsubj" and got[2] == "5:case"  # other relations as in the tree


def test_clauses_take_their_mark_or_interrogative_adverb() -> None:
    s = sentence(
        "Call call VERB _ 0 root", "if if SCONJ _ 4 mark", "you you PRON _ 4 nsubj", "can can AUX _ 1 advcl",
        "when when ADV PronType=Int 7 advmod", "you you PRON _ 7 nsubj", "arrive arrive VERB _ 1 advcl",
    )
    got = deps(s)
    assert got[3] == "1:advcl:if"
    assert got[6] == "1:advcl:when"


def test_conjuncts_share_the_first_ones_heads_and_its_conjunction_label() -> None:
    s = sentence(
        "She she PRON _ 2 nsubj", "bought buy VERB _ 0 root", "apples apple NOUN _ 2 obj", ", , PUNCT _ 5 punct",
        "pears pear NOUN _ 3 conj", "and and CCONJ _ 7 cc", "plums plum NOUN _ 3 conj",
    )
    got = deps(s)
    assert got[4] == "2:obj|3:conj:and"  # "A, B and C": B takes C's conjunction
    assert got[6] == "2:obj|3:conj:and"


def test_conjoined_predicates_share_the_subject_but_not_the_root() -> None:
    s = sentence(
        "He he PRON _ 3 nsubj:pass", "was be AUX _ 3 aux:pass", "arrested arrest VERB VerbForm=Part 0 root",
        "and and CCONJ _ 5 cc", "sent send VERB VerbForm=Part 3 conj", "but but CCONJ _ 8 cc", "they they PRON _ 8 nsubj",
        "left leave VERB _ 3 conj",
    )
    got = deps(s)
    assert got[4] == "3:conj:and"  # no 0:root
    assert got[0] == "3:nsubj:pass|5:nsubj:pass"  # a bare participle sharing a passive subject is passive
    assert "8:" not in got[0]  # "left" has a subject of its own
    without = deps(s, [r for r in RULES if r.__name__ != "shared_subjects"])
    assert without[0] == "3:nsubj:pass"


def test_an_open_complement_gets_its_controllers_subject_or_object() -> None:
    s = sentence(
        "She she PRON _ 2 nsubj", "wants want VERB _ 0 root", "to to PART _ 4 mark", "try try VERB _ 2 xcomp",
        "to to PART _ 6 mark", "leave leave VERB _ 4 xcomp",
    )
    assert deps(s)[0] == "2:nsubj|4:nsubj:xsubj|6:nsubj:xsubj"  # a chain resolves top down
    s = sentence(
        "They they PRON _ 2 nsubj", "asked ask VERB _ 0 root", "him he PRON _ 2 obj", "to to PART _ 5 mark",
        "go go VERB _ 2 xcomp",
    )
    got = deps(s)
    assert got[2] == "2:obj|5:nsubj:xsubj"  # object control
    assert "5:" not in got[0]


def test_relative_pronouns_refer_to_the_noun_that_takes_their_role() -> None:
    s = sentence(
        "the the DET _ 2 det", "book book NOUN _ 0 root", "which which PRON PronType=Rel 5 obj",
        "I I PRON _ 5 nsubj", "read read VERB _ 2 acl:relcl",
    )
    assert deps(s, [relative_pronouns]) == ["2:det", "0:root|5:obj", "2:ref", "5:nsubj", "2:acl:relcl"]
    s = sentence(
        "the the DET _ 2 det", "lab lab NOUN _ 0 root", "where where ADV PronType=Rel 5 advmod",
        "I I PRON _ 5 nsubj", "work work VERB _ 2 acl:relcl",
    )
    assert deps(s, [relative_pronouns])[1] == "0:root|5:obl"  # a relative adverb's role is obl
    s = sentence(
        "the the DET _ 2 det", "firm firm NOUN _ 0 root", "whose whose PRON PronType=Rel 4 nmod:poss",
        "boss boss NOUN _ 5 nsubj", "left leave VERB _ 2 acl:relcl",
    )
    got = deps(s, [relative_pronouns])
    assert got[1] == "0:root|4:nmod:poss" and got[2] == "2:ref"


@pytest.mark.parametrize(
    "clause, role",
    [
        (("I I PRON _ 4 nsubj", "read read VERB _ 2 acl:relcl"), "4:obj"),  # the book I read
        (("I I PRON _ 4 nsubj", "live live VERB _ 2 acl:relcl", "in in ADP _ 4 obl"), "4:obl"),  # stranded preposition
        (("I I PRON _ 4 nsubj", "read read VERB _ 2 acl:relcl", "it it PRON _ 4 obj"), None),  # no role left open
    ],
)
def test_a_relative_clause_without_a_pronoun_gives_the_noun_the_role_left_open(clause: tuple[str, ...], role: str | None) -> None:
    got = deps(sentence("the the DET _ 2 det", "book book NOUN _ 0 root", *clause), [relative_pronouns])
    assert got[1] == "0:root" + (f"|{role}" if role else "")


def test_enhance_replaces_the_graph_and_its_empty_nodes_and_needs_a_tree() -> None:
    s = sentence("Hi hi INTJ _ 0 root")
    s.words[0].deps = "0:root|1.1:dep"
    s.extra_lines = [(1, "1.1\tx\t_\t_\t_\t_\t_\t_\t1:dep\t_")]
    out = enhance(s)
    assert out.extra_lines == [] and out.words[0].deps == "0:root"
    assert s.words[0].deps == "0:root|1.1:dep"  # a copy: the input is unchanged
    s.words[0].head = None
    with pytest.raises(ValueError, match="needs a tree"):
        enhance(s)
    cycle = sentence("a a X _ 2 dep", "b b X _ 1 dep")
    with pytest.raises(ValueError, match="needs a tree"):
        enhance(cycle)


GAPPING = """# text = Mary won gold and Peter bronze
1\tMary\tMary\tPROPN\t_\t_\t2\tnsubj\t2:nsubj\t_
2\twon\twin\tVERB\t_\t_\t0\troot\t0:root\t_
3\tgold\tgold\tNOUN\t_\t_\t2\tobj\t2:obj\t_
4\tand\tand\tCCONJ\t_\t_\t5\tcc\t5.1:cc\t_
5\tPeter\tPeter\tPROPN\t_\t_\t2\tconj\t5.1:nsubj\t_
5.1\twon\twin\tVERB\t_\t_\t_\t_\t2:conj:and\tCopyOf=2
6\tbronze\tbronze\tNOUN\t_\t_\t5\torphan\t5.1:obj\t_

"""


def read(text: str, tmp_path: Path) -> list[Sentence]:
    path = tmp_path / "in.conllu"
    path.write_text(text, encoding="utf-8")
    return list(read_conllu(path))


def test_empty_nodes_collapse_into_paths(tmp_path: Path) -> None:
    (s,) = read(GAPPING, tmp_path)
    out = collapse_empty_nodes(s)
    assert [w.deps for w in out.words] == ["2:nsubj", "0:root", "2:obj", "2:conj:and>cc", "2:conj:and>nsubj", "2:conj:and>obj"]
    assert out.extra_lines == []
    assert collapse_empty_nodes(out) is out  # nothing left to collapse


def test_deps_and_empty_nodes_round_trip_through_conllu(tmp_path: Path) -> None:
    (s,) = read(GAPPING, tmp_path)
    assert format_sentence(s) == GAPPING
    write_conllu([enhance(s)], tmp_path / "out.conllu")
    (back,) = read_conllu(tmp_path / "out.conllu")
    assert [w.deps for w in back.words] == [w.deps for w in enhance(s).words]
    assert back.words[4].deps == "2:conj:and"


RELATIVE = """# text = She likes the book that I read .
1\tShe\tshe\tPRON\t_\t_\t2\tnsubj\t2:nsubj\t_
2\tlikes\tlike\tVERB\t_\t_\t0\troot\t0:root\t_
3\tthe\tthe\tDET\t_\t_\t4\tdet\t4:det\t_
4\tbook\tbook\tNOUN\t_\t_\t2\tobj\t2:obj|7:obj\t_
5\tthat\tthat\tPRON\t_\tPronType=Rel\t7\tobj\t4:ref\t_
6\tI\tI\tPRON\t_\t_\t7\tnsubj\t7:nsubj\t_
7\tread\tread\tVERB\t_\t_\t4\tacl:relcl\t4:acl:relcl\t_
8\t.\t.\tPUNCT\t_\t_\t2\tpunct\t2:punct\t_

"""


def test_the_official_scorer_gives_the_rules_full_marks_where_the_copy_loses_the_ref_edges(tmp_path: Path) -> None:
    from udtools.argparser import parse_args_scorer
    from udtools.udeval import evaluate_wrapper

    gold = tmp_path / "gold.conllu"
    gold.write_text(RELATIVE + GAPPING, encoding="utf-8")
    golds = list(read_conllu(gold))
    collapsed = tmp_path / "collapsed.conllu"
    write_conllu(map(collapse_empty_nodes, golds), collapsed)
    ours, copy = tmp_path / "ours.conllu", tmp_path / "copy.conllu"
    write_conllu(map(enhance, golds), ours)
    write_conllu((enhance(s, []) for s in golds), copy)  # no rule: DEPS = HEAD:DEPREL
    score = {name: evaluate_wrapper(parse_args_scorer([str(collapsed), str(f)])) for name, f in (("ours", ours), ("copy", copy))}
    # 15 gold edges; ours misses the two gapping paths through the empty node (orphan and its cc), the copy 4 more
    # 15 gold edges: ours has all 9 of the relative clause, none of the 3 gapping paths through the empty node; the
    # copy misses "read → book" (obj) and "book → that" (ref) too
    assert score["ours"]["ELAS"].correct == 12 and score["ours"]["ELAS"].gold_total == 15
    assert score["copy"]["ELAS"].correct == 10
    assert score["ours"]["LAS"].f1 == 1.0
