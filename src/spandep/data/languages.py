"""The languages of the treebanks spandep has data for: codes, English names and the default treebank of each.

One table, :data:`LANGUAGES`: a language's ISO 639-1 code (the prefix of UD's treebank names, ``de`` of ``de_gsd``),
its ISO 639-3 code (and the 639-2/B code where it differs: ``ger``), its English name and other names it is known
by, and its default treebank: what ``spandep.load("de")``, ``load("deu")`` and ``load("german")`` load
(:func:`spandep.storage.catalogue.model_choice`). The default is the treebank of the language's model shipped
before the multilingual pool (cs, en, fr, it, no, ru, zh), else its treebank with the most training sentences in
the pool (docs/data.md, "Model names"), but never one of a narrow genre where the language has another: Korean
``ko_gsd`` (not the learner essays of ``ko_ksl``), Romanian ``ro_rrt`` (not the bible and poetry of
``ro_nonstandard``), Finnish ``fi_tdt`` (not the grammar examples of ``fi_ftb``), and Dutch ``nl_alpino`` (the data
README scores Dutch there: ``nl_lassysmall_v1`` overlaps later LassySmall releases). ``nb`` names Bokmål.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["LANGUAGES", "Language", "language", "normalized", "treebank_language", "treebanks"]


@dataclass(frozen=True)
class Language:
    """``code`` (ISO 639-1), ``iso3`` (ISO 639-3), ``name`` (English), ``treebank`` (the default), ``others`` (its
    other treebanks in the data), ``aliases`` (other names and codes: 639-2/B, a native or older name)."""

    code: str
    iso3: str
    name: str
    treebank: str
    others: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        """Every name the language is looked up by, normalized."""
        return tuple(normalized(n) for n in (self.code, self.iso3, self.name, *self.aliases))


LANGUAGES: tuple[Language, ...] = (
    Language("af", "afr", "Afrikaans", "af_afribooms"),
    Language("ar", "ara", "Arabic", "ar_padt_v1"),
    Language("be", "bel", "Belarusian", "be_hse", aliases=("Belarussian",)),
    Language("bg", "bul", "Bulgarian", "bg_btb"),
    Language("ca", "cat", "Catalan", "ca_ancora"),
    Language("cs", "ces", "Czech", "cs_cltt", ("cs_fictree", "cs_cac"), ("cze",)),
    Language("cy", "cym", "Welsh", "cy_ccg", aliases=("wel",)),
    Language("da", "dan", "Danish", "da_ddt"),
    Language("de", "deu", "German", "de_gsd", aliases=("ger", "Deutsch")),
    Language("el", "ell", "Greek", "el_gdt", aliases=("gre", "Modern Greek")),
    Language("en", "eng", "English", "en_ewt"),
    Language("es", "spa", "Spanish", "es_ancora", ("es_gsd",), ("Castilian", "Español")),
    Language("et", "est", "Estonian", "et_ewt"),
    Language("eu", "eus", "Basque", "eu_bdt_v1", aliases=("baq",)),
    Language("fa", "fas", "Persian", "fa_perdt", ("fa_seraji",), ("per", "Farsi")),
    Language("fi", "fin", "Finnish", "fi_tdt", ("fi_ftb",)),
    Language("fo", "fao", "Faroese", "fo_farpahc"),
    Language("fr", "fra", "French", "fr_sequoia", aliases=("fre", "Français")),
    Language("ga", "gle", "Irish", "ga_idt", aliases=("Irish Gaelic",)),
    Language("gd", "gla", "Scottish Gaelic", "gd_arcosg", aliases=("Gaelic",)),
    Language("gl", "glg", "Galician", "gl_ctg_v1", ("gl_treegal",)),
    Language("he", "heb", "Hebrew", "he_htb", ("he_iahltwiki", "he_iahltknesset")),
    Language("hi", "hin", "Hindi", "hi_hdtb_v1_prerelease"),
    Language("hr", "hrv", "Croatian", "hr_set"),
    Language("hu", "hun", "Hungarian", "hu_szeged"),
    Language("hy", "hye", "Armenian", "hy_bsut", ("hy_armtdp",), ("arm",)),
    Language("id", "ind", "Indonesian", "id_gsd"),
    Language("is", "isl", "Icelandic", "is_modern_prerelease", ("is_gc",), ("ice",)),
    Language("it", "ita", "Italian", "it_partut"),
    Language("ja", "jpn", "Japanese", "ja_gsd_v1", ("ja_gsd",)),
    Language("ka", "kat", "Georgian", "ka_gnc", aliases=("geo",)),
    Language("kk", "kaz", "Kazakh", "kk_ktb_v1"),
    Language("ko", "kor", "Korean", "ko_gsd", ("ko_ksl",)),
    Language("la", "lat", "Latin", "la_perseus"),
    Language("lt", "lit", "Lithuanian", "lt_alksnis", ("lt_hse",)),
    Language("lv", "lav", "Latvian", "lv_lvtb"),
    Language("mr", "mar", "Marathi", "mr_ufal"),
    Language("mt", "mlt", "Maltese", "mt_mudt"),
    Language("nb", "nob", "Norwegian Bokmål", "no_bokmaal", aliases=("Bokmål", "Bokmaal")),
    Language("nl", "nld", "Dutch", "nl_alpino", ("nl_lassysmall_v1",), ("dut", "Flemish")),
    Language("nn", "nno", "Norwegian Nynorsk", "no_nynorsklia", aliases=("Nynorsk",)),
    Language("no", "nor", "Norwegian", "no_nynorsklia"),
    Language("pl", "pol", "Polish", "pl_pdb", ("pl_mpdt", "pl_lfg")),
    Language("pt", "por", "Portuguese", "pt_bosque", ("pt_dantestocks",)),
    Language("ro", "ron", "Romanian", "ro_rrt", ("ro_simonero", "ro_nonstandard"), ("rum", "Moldavian")),
    Language("ru", "rus", "Russian", "ru_taiga", ("ru_gsd", "ru_poetry")),
    Language("sd", "snd", "Sindhi", "sd_isra"),
    Language("sk", "slk", "Slovak", "sk_snk", aliases=("slo",)),
    Language("sl", "slv", "Slovenian", "sl_sst", aliases=("Slovene",)),
    Language("sq", "sqi", "Albanian", "sq_staf", aliases=("alb",)),
    Language("sr", "srp", "Serbian", "sr_set"),
    Language("sv", "swe", "Swedish", "sv_lines"),
    Language("ta", "tam", "Tamil", "ta_ttb"),
    Language("te", "tel", "Telugu", "te_mtg"),
    Language("th", "tha", "Thai", "th_tud"),
    Language("tr", "tur", "Turkish", "tr_imst"),
    Language("ug", "uig", "Uyghur", "ug_udt", aliases=("Uighur",)),
    Language("uk", "ukr", "Ukrainian", "uk_parlamint", ("uk_iu",)),
    Language("ur", "urd", "Urdu", "ur_udtb"),
    Language("vi", "vie", "Vietnamese", "vi_vtb"),
    Language("wo", "wol", "Wolof", "wo_wtb"),
    Language("zh", "zho", "Chinese", "zh_gsd_v1", ("zh_gsd",), ("chi", "Mandarin")),
)


def normalized(name: str) -> str:
    """``name`` as looked up: case-folded, accents and the separators ``-``, ``_`` and spaces removed
    (``Norwegian Bokmål`` → ``norwegianbokmal``)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return re.sub(r"[\s_-]+", "", plain.casefold())


_BY_NAME = {name: lang for lang in LANGUAGES for name in lang.names()}
# every treebank's language; the two Norwegian ones are Bokmål's and Nynorsk's, not "no"'s
_BY_TREEBANK = {tb: lang for lang in LANGUAGES if lang.code != "no" for tb in (lang.treebank, *lang.others)}


def language(name: str) -> Language | None:
    """The language named ``name`` (ISO 639-1 or 639-3 code, English or other name, any case); ``None``: none."""
    return _BY_NAME.get(normalized(name))


def treebank_language(treebank: str) -> Language | None:
    """The language of a treebank of the data, named as UD names its folders (``de_gsd``, any case); ``None``: a
    treebank this table does not know."""
    return _BY_TREEBANK.get(treebank.casefold())


def treebanks() -> dict[str, Language]:
    """Every treebank of the table and its language."""
    return dict(_BY_TREEBANK)
