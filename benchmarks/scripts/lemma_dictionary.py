"""Give a model folder's lemma head a language's dictionary for the forms its lexicons lack (issue 45).

    python -m benchmarks.scripts.lemma_dictionary MODEL --language ru --mode prefer
    python -m benchmarks.scripts.lemma_dictionary MODEL --off

Writes ``model.heads.lemma.dictionary`` (``{"language": ..., "mode": ...}``: ``models/heads/dictionary.py``) into
MODEL's config, atomically (``storage.model_io.write_model_config``), or removes it (``--off``); the weights are not
touched, so the trees, tags and features stay as they were. Meant for a copy of a shipped folder, scored against the
folder on dev by ``heads_finetune.py --step dictionary-MODE`` (BENCHMARKS.md, "A language's dictionary for unseen
words"); the mode dev prefers is then written into the shipped folder itself.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spandep.models.heads.dictionary import MODES, checked
from spandep.storage.model_io import read_model_config, write_model_config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--language", help="simplemma's code of the language (ISO 639-1 where it has one: ru, cs, nn, ...)")
    ap.add_argument("--mode", choices=MODES, default="repair")
    ap.add_argument("--off", action="store_true", help="remove the dictionary")
    args = ap.parse_args()
    config = read_model_config(args.model)
    heads = config["model"].get("heads", {})
    if "lemma" not in heads:
        raise SystemExit(f"{args.model}: the model has no lemma head")
    if args.off:
        heads["lemma"].pop("dictionary", None)
    elif args.language is None:
        raise SystemExit("lemma_dictionary: error: give --language (or --off)")
    else:
        try:
            heads["lemma"]["dictionary"] = checked({"language": args.language, "mode": args.mode})
        except ValueError as e:
            raise SystemExit(f"lemma_dictionary: error: {e}") from None
    write_model_config(args.model, config)
    print(f"{args.model / 'config.json'}: lemma dictionary {heads['lemma'].get('dictionary') or 'none'}")


if __name__ == "__main__":
    main()
