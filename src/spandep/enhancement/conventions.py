"""How each language writes its enhanced labels (UD leaves these to each treebank), chosen for every language
with a treebank here whose splits have enhanced graphs, by the rules' ELAS on the gold trees of its dev splits
(``python -m benchmarks.scripts.enhanced_conventions``, ``benchmarks/results/enhanced/conventions.json``,
docs/enhanced.md "Languages"); a language without a line writes English's."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Conventions:
    """How a treebank writes its enhanced labels (UD leaves these to each language): a case marker's subtype from
    its lower-cased ``form`` (English EWT: ``nmod:including``) or its ``lemma`` (Czech: ``obl:v``); ``case``: the
    dependent's morphological case appended to ``nmod``/``obl`` (Czech ``obl:v:loc``, ``nmod:gen``), the basic
    subtype kept (``obl:arg:ins``); ``conj``: ``conj`` arcs subtyped by their conjunction (EWT ``conj:and``);
    ``without``: the rules (by function name) the language leaves out, chosen on its dev split."""

    marker: str = "form"
    case: bool = False
    conj: bool = True
    without: tuple[str, ...] = ()


ENGLISH = Conventions()  # EWT's: the marker's form, no case, conj subtypes
CASE = Conventions(marker="lemma", case=True, conj=False)  # the marker's lemma and the case: obl:v:loc
PLAIN = Conventions(without=("case_labels",))  # no subtypes, the structural rules only
_ALL_RULES = ("case_labels", "relative_pronouns", "shared_heads", "shared_subjects", "controlled_subjects")
_NO_RELATIVE = "relative_pronouns"

CONVENTIONS = {  # by ISO 639-1 code: the best mean dev ELAS over the language's treebanks with DEPS
    "en": ENGLISH, "bg": ENGLISH, "nl": ENGLISH, "uk": ENGLISH,
    "cs": replace(CASE, without=(_NO_RELATIVE,)), "sk": replace(CASE, without=(_NO_RELATIVE,)), "ta": CASE,
    "fi": replace(PLAIN, without=("case_labels", _NO_RELATIVE)), "pl": replace(PLAIN, without=("case_labels", _NO_RELATIVE)),
    "lt": PLAIN,
    "et": Conventions(without=_ALL_RULES),  # Estonian EWT's graphs: the basic tree scores best
}
