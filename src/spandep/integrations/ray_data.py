"""Ray Data integration: parse a Dataset of tokenised sentences with ``map_batches`` and an actor pool.

Users who parse corpora beyond one machine already run Ray Data; this plugs spandep into it instead of adding an
engine of our own. :class:`RayParser` is the callable class ``map_batches`` instantiates once per actor: it loads the
pipeline once (from a :class:`~spandep.api.ModelSpec`, which holds only a folder and options, so Ray ships it
cheaply) and parses each batch as the pipeline parses a chunk (``Pipeline.parse_chunk``). :func:`parse_dataset` wires
it up::

    import ray
    from spandep.integrations.ray_data import parse_dataset

    ds = ray.data.from_items([{"id": 0, "tokens": ["I", "saw", "her"]}])
    rows = parse_dataset(ds, actors=2).take_all()  # + heads, deprels, upos; other columns pass through

Input rows need a ``tokens`` column (a list of word forms, checked as ``spandep``'s Python API checks them: a
``TypeError`` for a token that is not a string or a bare string in place of a list); every other column is passed through unchanged, so an
``id`` column restores any order after a shuffle. Output columns: ``heads`` (ints, 0 = root), ``deprels``, ``upos``
(``_`` where the model predicts none). Ray is an optional dependency (``pip install 'spandep[ray]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from spandep.api import ModelSpec
from spandep.data.conllu import token_sentence
from spandep.options import InferenceOptions
from spandep.limits import check_counts

if TYPE_CHECKING:
    import ray.data

__all__ = ["RayParser", "parse_dataset"]

OUTPUT_COLUMNS = ("heads", "deprels", "upos")


def _object_column(rows: list[list[Any]]) -> np.ndarray:
    """A column of variable-length lists as an object array of Python lists: Arrow stores it as a list column.

    (Numpy string arrays would carry a fixed width per batch, and Ray cannot concatenate batches whose widths
    differ.)"""
    column = np.empty(len(rows), dtype=object)  # (batch,)
    for i, row in enumerate(rows):
        column[i] = list(row)
    return column


class RayParser:
    """``map_batches`` callable class: loads the pipeline of ``spec`` once per actor, then parses numpy batches."""

    def __init__(self, spec: ModelSpec) -> None:
        self.nlp = spec.load()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if "tokens" not in batch:
            raise ValueError(f"rows need a 'tokens' column (a list of word forms); the batch has {sorted(batch)}")
        sentences = [
            token_sentence(tokens.tolist() if isinstance(tokens, np.ndarray) else tokens, f"row {row} of the batch")
            for row, tokens in enumerate(batch["tokens"])
        ]
        parsed, _ = self.nlp.parse_chunk(sentences)
        out = dict(batch)
        out["heads"] = _object_column([[int(h or 0) for h in s.heads] for s in parsed])
        out["deprels"] = _object_column([s.deprels for s in parsed])
        out["upos"] = _object_column([s.upos for s in parsed])
        return out


def parse_dataset(
    ds: ray.data.Dataset,
    model: str | None = None,
    actors: int = 2,
    batch_size: int = 512,
    threads: int = 1,
    options: InferenceOptions | None = None,
) -> ray.data.Dataset:
    """``ds`` with parse columns added, computed by ``actors`` actors (one model each, ``threads`` torch threads).

    ``model``: a model folder or a shipped name (``None``: the shipped default); ``batch_size``: sentences per
    ``map_batches`` call; ``options``: how to parse (decoder, k, batch size, the treebank of a multi-treebank model,
    ...; ``None``: the model's settings, and a shipped name's treebank). Lazy, like every Ray Data transform.
    """
    check_counts(("actors", actors, "ray_actors"), ("batch_size", batch_size, "pipe_batch"), ("threads", threads, "threads"))
    import ray.data

    spec = ModelSpec.resolve(model, options or InferenceOptions(), threads=threads)  # the name, once: actors load the folder
    return ds.map_batches(
        RayParser,
        fn_constructor_kwargs={"spec": spec},
        batch_size=batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=threads,
    )
