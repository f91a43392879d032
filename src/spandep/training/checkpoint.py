"""Resumable training state, written atomically: weights, optimiser moments and RNG as safetensors, the rest JSON.

A checkpoint is ``ckpt-<step>.safetensors`` + ``ckpt-<step>.json``; ``latest.json`` names the newest complete one
and is replaced (``os.replace``) only after both files are on disk, so a crash at any moment leaves a usable
checkpoint behind.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from spandep.errors import OutputError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: no lock
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def run_lock(out: Path) -> Iterator[None]:
    """Hold ``out/train.lock`` while training into ``out``: a second ``spandep train`` on the same run (which would
    overwrite the first one's checkpoints) gets a clear error instead. The lock goes with the process, even on kill -9,
    so an interrupted run always resumes."""
    with open(out / "train.lock", "a", encoding="utf-8") as handle:
        if fcntl is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise OutputError(
                    f"another spandep train is writing {out} (it holds {out / 'train.lock'}); wait for it to end, "
                    "or train into another --output"
                ) from None
        yield


RESUMABLE = {  # what a resumed run may change: how long and where it runs, not what it learns
    "training": {"epochs", "patience", "threads", "checkpoint_every", "eval_batch_tokens", "device", "output"},
    "data": {"tokenizer"},
    "inference": None,  # None: the whole table
}


def changed_settings(saved: dict[str, Any], cfg: dict[str, Any]) -> list[str]:
    """The settings, as ``[table] key: old → new``, that differ between the config a run was started with and
    ``cfg`` and that a resumed run may not change (``RESUMABLE``): its checkpoint was trained under the old ones. A
    setting the saved config lacks (one a later spandep added, at its default) does not count."""
    changed = []
    for table in sorted(saved):
        free = RESUMABLE.get(table, set())
        if free is None:
            continue
        old, new = saved[table], cfg.get(table, {})
        for key in sorted(old):
            if key not in free and old[key] != new.get(key):
                changed.append(f"[{table}] {key}: {old.get(key)!r} → {new.get(key)!r}")
    return changed


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def save_checkpoint(
    directory: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, meta: dict[str, Any],
    extra: dict[str, torch.Tensor] | None = None,
) -> None:
    """Write a checkpoint for ``meta['step']`` and point ``latest.json`` at it; older ones are removed. ``extra``:
    more tensors of the run's state (the weight averages of ``[training] ema``), read back by ``load_checkpoint``."""
    step = int(meta["step"])
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tensors = _stored("model.", model.state_dict())
        opt_state = optimizer.state_dict()
        for pid, state in opt_state["state"].items():
            for key, value in state.items():
                tensors[f"optim.{pid}.{key}"] = torch.as_tensor(value).detach().cpu().contiguous().clone()
        tensors["rng.torch"] = torch.get_rng_state()
        tensors.update(_stored("extra.", extra or {}))
        name = f"ckpt-{step}"
        tmp = directory / f".{name}.safetensors.tmp"
        save_file(tensors, str(tmp))
        os.replace(tmp, directory / f"{name}.safetensors")
        info = {**meta, "param_groups": opt_state["param_groups"]}
        _atomic_write_text(directory / f"{name}.json", json.dumps(info, indent=1))
        _atomic_write_text(directory / "latest.json", json.dumps({"name": name, "step": step}))
    except OSError as exc:
        for tmp_file in directory.glob(".*.tmp"):  # a partial weights file or JSON from this attempt
            tmp_file.unlink(missing_ok=True)
        raise OutputError(f"cannot write checkpoint in {directory}: {exc.strerror or exc}; free space or choose another [training] output") from exc
    for old in directory.glob("ckpt-*"):
        if not old.name.startswith(name + "."):
            old.unlink(missing_ok=True)


def has_checkpoint(directory: Path) -> bool:
    """Whether ``directory`` holds a complete checkpoint to resume from."""
    return (directory / "latest.json").is_file()


def load_checkpoint(
    directory: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, extra: dict[str, torch.Tensor] | None = None
) -> dict[str, Any] | None:
    """Restore the newest checkpoint into ``model`` and ``optimizer`` (and its extra tensors into ``extra``); returns
    its metadata, or None if none."""
    if not has_checkpoint(directory):
        return None
    name = json.loads((directory / "latest.json").read_text(encoding="utf-8"))["name"]
    info = json.loads((directory / f"{name}.json").read_text(encoding="utf-8"))
    tensors = load_file(str(directory / f"{name}.safetensors"))
    model.load_state_dict(_read("model.", tensors))
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith("optim."):
            _, pid, field = key.split(".", 2)
            state.setdefault(int(pid), {})[field] = value
    optimizer.load_state_dict({"state": state, "param_groups": info.pop("param_groups")})
    torch.set_rng_state(tensors["rng.torch"])
    if extra is not None:
        extra.update(_read("extra.", tensors))
    return info


def _stored(prefix: str, tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``tensors`` as a checkpoint stores them: named ``prefix + name``, detached, on the CPU, contiguous copies."""
    return {prefix + k: v.detach().cpu().contiguous().clone() for k, v in tensors.items()}


def _read(prefix: str, tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The tensors :func:`_stored` wrote under ``prefix``, by their own names."""
    return {k.removeprefix(prefix): v for k, v in tensors.items() if k.startswith(prefix)}
