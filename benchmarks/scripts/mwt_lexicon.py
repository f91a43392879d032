"""A trained tokenizer's multiword-token lexicon learned again from its training file as its training learned it (its
augmented copy too: ``training.tokenizer.seen_paragraphs``, the seed and rate of its record), for the prefix rules of
``tokenization/mwt.py`` that a lexicon learned before them lacks; kept where its dev split says so.

    python -m benchmarks.scripts.mwt_lexicon src/spandep/resources/multilingual/tokenizers/he_htb \\
        --train runs/pool/he_htb/train.conllu --dev runs/pool/he_htb/dev.conllu [--write]

The tokenizer's decoding settings are chosen again on dev with each lexicon (``training.tokenizer.choose_settings``,
as ``spandep train-tokenizer`` chooses them: dev Words plus Sentences by the quick span scorer of
``tokenization.selection``); it prints both lexicons' best settings and scores. ``--write`` replaces the folder's
``mwt.json`` (atomically) where the relearned lexicon scores higher with the settings the folder has, and refuses where
dev would choose other settings (train the tokenizer again then). The network's weights are not touched.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch

from spandep.tokenization.corpus import read_paragraphs
from spandep.tokenization.trained import load_tokenizer
from spandep.training.tokenizer import choose_settings, learn_lexicon, seen_paragraphs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="a trained tokenizer's folder")
    ap.add_argument("--train", type=Path, required=True, help="the CoNLL-U it was trained on")
    ap.add_argument("--dev", type=Path, required=True, help="the CoNLL-U its settings were chosen on")
    ap.add_argument("--write", action="store_true", help="replace the folder's mwt.json where dev says so")
    args = ap.parse_args()
    torch.set_num_threads(1)
    tokenizer = load_tokenizer(args.folder)
    record = json.loads((args.folder / "config.json").read_text(encoding="utf-8"))["training"]["settings"]
    seen = seen_paragraphs(read_paragraphs(args.train), record["augment"], record["seed"])
    relearned, dev = learn_lexicon(seen), read_paragraphs(args.dev)
    settings = (tokenizer.mwt_decision, tokenizer.thresholds.sentence, tokenizer.max_tokens)
    scores = {}
    for name, lexicon in (("as saved", tokenizer.lexicon), ("relearned", relearned)):
        tokenizer.lexicon = lexicon
        best, tried = choose_settings(tokenizer, dev)
        chosen = (best.mwt_decision, best.thresholds.sentence, best.max_tokens)
        mine = next(r for r in tried if (r["mwt_decision"], r["sentence_threshold"], r["max_tokens"]) == settings)
        scores[name] = (chosen, mine)
        print(f"{args.folder.name} {name}: dev chooses {chosen}; with the folder's {settings}: "
              f"Tokens {mine['tokens']:.2f} Sentences {mine['sentences']:.2f} Words {mine['words']:.2f}")
    (chosen, new), (_, old) = scores["relearned"], scores["as saved"]
    if not args.write:
        return
    if chosen != settings:
        raise SystemExit(f"{args.folder}: with the relearned lexicon dev chooses {chosen}, not the folder's {settings}: train the tokenizer again")
    if new["words"] + new["sentences"] <= old["words"] + old["sentences"]:
        print(f"{args.folder}: the relearned lexicon does not score higher on dev; mwt.json kept")
        return
    tmp = args.folder / ".mwt.json.tmp"
    tmp.write_text(json.dumps(relearned.to_json(), ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, args.folder / "mwt.json")
    (args.folder / "mwt.json.xz").unlink(missing_ok=True)  # a packed folder's (spandep.tokenization.trained.packed)
    print(f"wrote {args.folder / 'mwt.json'}")


if __name__ == "__main__":
    main()
