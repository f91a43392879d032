"""What the suite runs: the treebanks (name → train/dev/test files) and the systems (name → config per treebank).

Beside the suite's own treebanks (``DATASETS``), any treebank of the multilingual pool (``pool_dataset``: the
manifest ``benchmarks/scripts/multilingual_pool.py`` writes) can be scored.

A system is a trained model plus, for span models, the decoder that overrides its saved (dev-chosen) inference
settings; everything else comes from the model folder. A treebank a system has no config for is skipped.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "benchmarks" / "results"  # what the suite writes and the report reads
POOL_MANIFEST = RESULTS / "multilingual_pool.json"  # benchmarks/scripts/multilingual_pool.py's record of the pool
# A result's ``gold_labels``: whether its gold relations are the release's or converted from a UD v1 release
GOLD_LABELS = {False: "UD v2 as released", True: "UD v2, converted from the released UD v1 (spandep.data.udv1)"}


@dataclass(frozen=True)
class Dataset:
    """The three splits of one treebank; models are trained on ``train``, chosen on ``dev``, scored on ``test``.
    ``labelled`` is False for a treebank whose DEPREL carries no information (only root/dep): UAS only. ``lemmas``
    is False for one whose LEMMA column is empty: its Lemmas and BLEX scores compare ``_`` with ``_`` and mean
    nothing (tables print "–"). A treebank of the multilingual pool (:func:`pool_dataset`) also has its UD
    ``release`` (``None``: a prerelease), the split it trains on (``train_split``: ``train``, or a dev-only
    treebank's ``dev (less the held-out part)``) and ``v1_test``: its test file is UD v1 as released, read with v2
    relations (``spandep.data.udv1``, as the pool's own files are written) to score a model of v2 relations."""

    train: Path
    dev: Path
    test: Path
    labelled: bool = True
    lemmas: bool = True
    release: str | None = None
    train_split: str | None = None
    v1_test: bool = False


def _ud(folder: str, stem: str, labelled: bool = True, lemmas: bool = True) -> Dataset:
    return Dataset(*(DATA / folder / f"{stem}-{split}.conllu" for split in ("train", "dev", "test")), labelled, lemmas)


DATASETS: dict[str, Dataset] = {
    "en_ewt": _ud("en_ewt", "en_ewt-ud"),
    "zh_gsd_v1": _ud("zh_gsd_v1", "zh_gsd_v1-ud", lemmas=False),
    "fr_sequoia": _ud("fr_sequoia", "fr_sequoia-ud"),
    "it_partut": _ud("it_partut", "it_partut-ud"),
    "ru_taiga": _ud("ru_taiga", "ru_taiga-ud"),
    "no_nynorsklia": _ud("no_nynorsklia", "no_nynorsklia-ud"),
    "cs_cltt": _ud("cs_cltt", "cs_cltt-ud"),
    "ptb_nltk_sample": _ud("ptb_nltk_sample", "ptb_nltk", labelled=False),
}

def pool_entries(manifest: Path = POOL_MANIFEST) -> dict[str, dict]:
    """The pool's treebanks by name, as its manifest records them (``{}``: no manifest)."""
    return json.loads(manifest.read_text(encoding="utf-8"))["treebanks"] if manifest.is_file() else {}


def pool_folder() -> Path:
    """Where the pool's files are: ``$SPANDEP_POOL``, else ``runs/pool`` (where multilingual_pool.py writes them)."""
    return Path(os.environ.get("SPANDEP_POOL") or REPO / "runs" / "pool")


def pool_dataset(name: str, pool: Path, manifest: Path = POOL_MANIFEST) -> Dataset:
    """Treebank ``name`` of the multilingual pool: train and dev from the pool folder ``pool`` (``<name>/train.conllu``,
    ``dev.conllu``: a dev-only treebank's training part and held-out part), test as released (the manifest's source,
    compressed or not, relative to the repository's root, normalised: a released file is under :data:`DATA`); a
    ``KeyError`` for a name the manifest lacks."""
    entry = pool_entries(manifest)[name]
    return Dataset(
        pool / name / "train.conllu", pool / name / "dev.conllu", Path(os.path.normpath(REPO / entry["sources"]["test"])),
        release=entry["release"], train_split=entry["train_split"], v1_test=entry["ud_version"] == 1,
    )


SUITES: dict[str, tuple[str, ...]] = {"ewt": ("en_ewt",), "all": tuple(DATASETS), **{name: (name,) for name in DATASETS}}


@dataclass(frozen=True)
class System:
    """Training configs by dataset name; ``decoder`` (``mst`` or ``projective``) overrides the model's own; ``tune``
    (span systems): the grid arguments of ``spandep tune``, run on dev after training to choose the model's
    inference settings; ``model``: a finished model folder (from the repository root) measured as it is, with the
    inference settings it ships with, instead of the config's run (the config then only names its data and encoder);
    ``{dataset}`` in it stands for the dataset's name (one shipped model per treebank)."""

    configs: dict[str, str] = field(default_factory=dict)
    decoder: str | None = None
    tune: tuple[str, ...] = ()
    model: str | None = None

    def shipped(self, dataset: str) -> str | None:
        """The finished model folder measured on ``dataset`` (``None``: the config's run)."""
        return self.model.format(dataset=dataset) if self.model else None


# The seven non-English or PTB-sample treebanks, all with the multilingual encoder (one encoder for every language).
E5_SETS = ("zh_gsd_v1", "fr_sequoia", "it_partut", "ru_taiga", "no_nynorsklia", "cs_cltt", "ptb_nltk_sample")
# The parser each shipped treebank model is (src/spandep/resources/<treebank>): the span parser, or its Biaffine twin
# where that was the better on dev (ru_taiga: LAS +0.63, MLAS +4.02; BENCHMARKS.md "The shipped treebank models").
SHIPPED_PARSERS = {d: "span" for d in E5_SETS if d != "ptb_nltk_sample"} | {"ru_taiga": "biaffine"}

# spandep tune grids (benchmarks.tune_span before it) as recorded in each run's sweep file (benchmarks/results/*_dev__span_sweep__*.json).
LW3_GRID = ("--lams", "0.25,0.5,1,2", "--ablate-mutual")
RUN1_GRID = ("--lams", "0.5,1,2,4", "--ablate-mutual")
WORD_GRID = ("--ks", "2,5", "--lams", "0.25,0.5,1", "--arc-weights", "0,0.5,1,2", "--ablate-mutual")
E5_GRID = ("--ks", "2,5")
ABLATION_GRID = ("--ks", "2,5", "--ablate-mutual")
ABLATIONS = ("span-span", "token-token", "span-token", "token-span", "no-mutual")

DEFAULT_MODEL = "src/spandep/resources/default_model"
ACCURATE_MODEL = "src/spandep/resources/en_accurate"

# Config paths are relative to the repository root. Names without a run suffix are the runs chosen on dev
# (BENCHMARKS.md); span-minilm-word is run 4 (a word-level Biaffine head on the shared encoder).
SYSTEMS: dict[str, System] = {
    "biaffine-minilm": System({"en_ewt": "configs/ewt-biaffine-minilm.toml"}),
    "biaffine-bilstm": System({"en_ewt": "configs/ewt-biaffine-bilstm-b3k.toml"}),
    "span-minilm-dp": System({"en_ewt": "configs/ewt-span-minilm-lw3.toml"}, "projective", LW3_GRID),
    "span-minilm-mst": System({"en_ewt": "configs/ewt-span-minilm-lw3.toml"}, "mst", LW3_GRID),
    "span-minilm-word-dp": System({"en_ewt": "configs/ewt-span-minilm-word.toml"}, "projective", WORD_GRID),
    "span-minilm-word-mst": System({"en_ewt": "configs/ewt-span-minilm-word.toml"}, "mst", WORD_GRID),
    # Run 4 trained again (its own model was lost before its MST row was measured).
    "span-minilm-word-rerun-dp": System({"en_ewt": "configs/ewt-span-minilm-word-rerun.toml"}, "projective", WORD_GRID),
    "span-minilm-word-rerun-mst": System({"en_ewt": "configs/ewt-span-minilm-word-rerun.toml"}, "mst", WORD_GRID),
    # The base-size English encoder (`make models` first; trained on a GPU: --train-device cuda).
    "span-mpnet-dp": System({"en_ewt": "configs/ewt-span-mpnet.toml"}, "projective", WORD_GRID),
    "span-mpnet-mst": System({"en_ewt": "configs/ewt-span-mpnet.toml"}, "mst", WORD_GRID),
    "span-bilstm-dp": System({"en_ewt": "configs/ewt-span-bilstm.toml"}, "projective", WORD_GRID),
    "span-bilstm-mst": System({"en_ewt": "configs/ewt-span-bilstm.toml"}, "mst", WORD_GRID),
    # The multilingual encoder (the base multilingual-e5-small), on the non-English treebanks.
    "biaffine-e5": System({d: f"configs/{d}-biaffine-e5.toml" for d in E5_SETS}),
    "span-e5-dp": System({d: f"configs/{d}-span-e5.toml" for d in E5_SETS}, "projective", E5_GRID),
    "span-e5-mst": System({d: f"configs/{d}-span-e5.toml" for d in E5_SETS}, "mst", E5_GRID),
    # The shipped default model (configs/ewt-span-small-annotated-20ep.toml, trained on this CPU; settings chosen on
    # dev, BENCHMARKS.md "The default model with full UD annotation"), measured as installed. The defaults shipped
    # before it were measured by the same systems: from configs/ewt-span-small-tagged.toml up to commit 6e905a5, from
    # configs/ewt-span-small-annotated.toml (10 epochs) up to commit 59508db.
    "span-minilm-default-dp": System({"en_ewt": "configs/ewt-span-small-annotated-20ep.toml"}, "projective", model=DEFAULT_MODEL),
    "span-minilm-default-mst": System({"en_ewt": "configs/ewt-span-small-annotated-20ep.toml"}, "mst", model=DEFAULT_MODEL),
    # The shipped en-accurate model (configs/ewt-span-mpnet-lora.toml: all-mpnet-base-v2 with LoRA, trained on this CPU;
    # settings chosen on dev, BENCHMARKS.md "An accurate English model"), measured as installed.
    "span-mpnet-accurate-mst": System({"en_ewt": "configs/ewt-span-mpnet-lora.toml"}, "mst", model=ACCURATE_MODEL),
    # The shipped treebank models (configs/multilingual/<treebank>-<parser>.toml: the recipe of BENCHMARKS.md "Every
    # treebank"; the parser and its settings chosen on dev), measured as installed with their own decoder.
    **{f"{parser}-e5-shipped": System({d: f"configs/multilingual/{d}-{parser}.toml" for d, p in SHIPPED_PARSERS.items() if p == parser},
                                      model="src/spandep/resources/{dataset}") for parser in ("span", "biaffine")},
    # The EWT recipes on the first 1,781 EWT training sentences (ParTUT's size): the gain against training-set size.
    "biaffine-minilm-1781": System({"en_ewt": "configs/ewt1781-biaffine-minilm.toml"}),
    "span-minilm-word-1781-dp": System({"en_ewt": "configs/ewt1781-span-minilm-word.toml"}, "projective", WORD_GRID),
    # The e5 recipes (as on ParTUT) on the same 1,781 EWT sentences: encoder and recipe apart from the treebank.
    "biaffine-e5-1781": System({"en_ewt": "configs/ewt1781-biaffine-e5.toml"}),
    "span-e5-1781-dp": System({"en_ewt": "configs/ewt1781-span-e5.toml"}, "projective", E5_GRID),
    # Paper Table 5: the linker's scoring ablated, trained on the same 1,781 EWT sentences without the word-level head.
    **{f"ablation-{name}": System({"en_ewt": f"configs/ewt1781-ablation-{name}.toml"}, "projective", ABLATION_GRID)
       for name in ABLATIONS},
    "biaffine-bilstm-run1": System({"en_ewt": "configs/ewt-biaffine-bilstm.toml"}),
    "span-minilm-run1-dp": System({"en_ewt": "configs/ewt-span-minilm.toml"}, "projective", RUN1_GRID),
    "span-minilm-run1-mst": System({"en_ewt": "configs/ewt-span-minilm.toml"}, "mst", RUN1_GRID),
}
