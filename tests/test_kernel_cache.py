"""Every model load bounds oneDNN's kernel cache (``spandep.storage.kernels``), not only ``spandep serve``: a plain
``spandep.load`` sets ``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` when the user has not, before oneDNN's first kernel, and keeps
the user's own value."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import spandep
from spandep.storage.kernels import KERNEL_CACHE

NAME, CAPACITY = KERNEL_CACHE

AFTER_LOAD = """
import sys, torch, spandep
spandep.load(sys.argv[1], threads=1)  # the only spandep call: it must set the bound before oneDNN's first kernel
lstm = torch.nn.LSTM(2, 2, batch_first=True).eval()
with torch.inference_mode():
    for n in [*range(1, int(sys.argv[2]) + 2), 1]:  # one shape more than the bound holds, then the first again
        lstm(torch.zeros(1, n, 2))  # (1, n, 2)
"""


def test_a_plain_load_sets_the_bound_when_the_user_has_not(tiny_models, monkeypatch) -> None:
    monkeypatch.delenv(NAME, raising=False)
    spandep.load(str(tiny_models["biaffine"]), threads=1)
    assert os.environ[NAME] == str(CAPACITY)


def test_a_plain_load_keeps_the_users_own_value(tiny_models, monkeypatch) -> None:
    monkeypatch.setenv(NAME, "7")
    spandep.load(str(tiny_models["biaffine"]), threads=1)
    assert os.environ[NAME] == "7"


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="torch built without oneDNN")
def test_the_bound_a_load_sets_is_the_one_onednn_uses(tiny_models) -> None:
    """oneDNN's verbose log says whether a kernel came from its cache: after a plain load the first shape has been
    dropped by the time it comes back (CAPACITY kernels kept, not oneDNN's 1,024)."""
    env = {k: v for k, v in os.environ.items() if k != NAME}
    env.update(ONEDNN_VERBOSE="profile_create", OMP_NUM_THREADS="1")
    run = subprocess.run(
        [sys.executable, "-c", AFTER_LOAD, str(tiny_models["biaffine"]), str(CAPACITY)],
        env=env, capture_output=True, text=True, timeout=300, check=True,
    )
    lstm = [line for line in run.stdout.splitlines() if ",primitive,create:" in line and ",rnn," in line]
    assert len(lstm) >= CAPACITY + 2, run.stdout[-2000:]  # a kernel asked for on each call
    assert lstm[-1].split(",")[3] == "create:cache_miss"
