"""The bounds on what comes from outside: docs/limits.md lists exactly spandep.limits.LIMITS, and each bound is
enforced where its value enters (inference options here; the readers, CLI and service in their own tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spandep.options import InferenceOptions
from spandep.limits import LIMITS

DOC = Path(__file__).resolve().parents[1] / "docs" / "limits.md"


def test_doc_table_is_the_limits():
    text = DOC.read_text(encoding="utf-8")
    table = re.search(r"<!-- limits:begin -->\n(.*?)<!-- limits:end -->", text, re.S).group(1)
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    assert [(r[0].strip("| `"), r[1], r[2].rstrip(" |")) for r in rows] == [
        (lim.name, str(lim.allowed), lim.what) for lim in LIMITS.values()
    ]


@pytest.mark.parametrize("name", ["k", "lam", "arc_weight", "batch_tokens"])
def test_inference_options_refuse_past_the_limit(name):
    high = LIMITS[name].high
    InferenceOptions.from_dict({name: int(high)})  # the bound itself is allowed
    too_big = int(high) + 1 if LIMITS[name].allowed.integer else high * 2
    with pytest.raises(ValueError, match=rf"^{name} must be .* in \[.*\], not {too_big}$"):
        InferenceOptions.from_dict({name: too_big})


def test_huge_k_is_refused_at_once():
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 64\], not 1000000000"):
        InferenceOptions(k=1_000_000_000)
