"""Shared fixtures: tiny EWT excerpts, a tiny random transformer and tiny training configs (CPU, seconds)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

FIXTURES = Path(__file__).parent / "fixtures"
TRAIN = FIXTURES / "en_ewt_train_40.conllu"
DEV = FIXTURES / "en_ewt_excerpt.conllu"

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_transformer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer BERT with all-MiniLM-L6-v2's tokenizer (no weights needed)."""
    from spandep.encoders.bases import MINILM_ALIAS, resolve_model_path

    src = Path(resolve_model_path(MINILM_ALIAS))
    out = tmp_path_factory.mktemp("tiny_bert")
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (src / name).exists():
            shutil.copy(src / name, out / name)
    config = {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64, "vocab_size": 30522,
        "type_vocab_size": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "layer_norm_eps": 1e-12, "pad_token_id": 0, "initializer_range": 0.02,
    }
    (out / "config.json").write_text(json.dumps(config))
    from transformers import AutoConfig, AutoModel

    torch.manual_seed(0)
    AutoModel.from_config(AutoConfig.from_pretrained(out)).save_pretrained(out)  # "pretrained" random weights
    return out


TINY_BIAFFINE = "arc_mlp = 32\nrel_mlp = 16\n"
TINY_SPAN = (
    'type = "span"\nspan_mlp = 32\nquery_rate = 0.7\nnoisy_rate = 0.3\n'
    "linker = { format = \"late\", dim = 32, layers = 1, heads = 2, ff = 64, mlp = 32, label_mlp = 16 }\n"
)


def write_config(
    path: Path,
    output: Path,
    encoder: str,
    model_dir: Path | None = None,
    pretrained: bool = False,
    model: str = TINY_BIAFFINE,
    encoder_extra: str = "",
    **training: object,
) -> Path:
    """A tiny training config for tests (BiLSTM or the tiny transformer; ``model`` is the [model] table's body,
    ``encoder_extra`` lines added to the [encoder] table)."""
    if encoder == "bilstm":
        enc = '[encoder]\ntype = "bilstm"\nword_dim = 16\nchar_dim = 8\nchar_out = 16\nhidden = 16\nlayers = 1\nmin_freq = 1\n'
    else:
        enc = f'[encoder]\ntype = "transformer"\nmodel = "{model_dir}"\npretrained = {str(pretrained).lower()}\nmix_layers = 2\n'
    enc += encoder_extra
    settings = {"output": str(output), "epochs": 2, "batch_tokens": 300, "lr": 2e-3, "seed": 7, **training}
    table = "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items())
    path.write_text(
        f'[data]\ntrain = "{TRAIN}"\ndev = "{DEV}"\n\n{enc}\n[model]\n{model}\n'
        f"[training]\n{table}"
    )
    return path


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One-epoch BiLSTM models trained once per session (seconds): ``{"biaffine": folder, "span": folder}``."""
    from spandep.training.config import load_config
    from spandep.training.trainer import Trainer

    root = tmp_path_factory.mktemp("tiny_models")
    models = {}
    for name, table in (("biaffine", TINY_BIAFFINE), ("span", TINY_SPAN)):
        Trainer(load_config(write_config(root / f"{name}.toml", root / name, "bilstm", model=table, epochs=1))).run()
        models[name] = root / name / "model"
    return models


def train_interrupted(cfg: dict, monkeypatch: pytest.MonkeyPatch, at_call: int) -> None:
    """Train ``cfg`` until its ``at_call``-th step, which is interrupted (as by Ctrl-C) before it runs."""
    from spandep.training.trainer import Trainer

    crashing = Trainer(cfg)
    real_step = Trainer._step
    calls = {"n": 0}

    def step_then_crash(self, batch, step):
        calls["n"] += 1
        if calls["n"] == at_call:
            raise KeyboardInterrupt
        return real_step(self, batch, step)

    monkeypatch.setattr(Trainer, "_step", step_then_crash)
    with pytest.raises(KeyboardInterrupt):
        crashing.run()
    monkeypatch.setattr(Trainer, "_step", real_step)
