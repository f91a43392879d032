"""spandep.malloc: the resident memory a parse may grow by before free memory is handed back."""

import sys

import pytest

from spandep import malloc


@pytest.fixture
def process(monkeypatch):
    """A fake process: its resident memory is set by the test, and each trim is counted (and halves it)."""
    state = {"resident": 1000, "trims": 0}

    def trim():
        state["trims"] += 1
        state["resident"] //= 2
        return True

    monkeypatch.setattr(malloc, "resident", lambda: state["resident"])
    monkeypatch.setattr(malloc, "trim", trim)
    monkeypatch.setattr(malloc, "_floor", [])
    return state


def test_a_parse_trims_only_once_it_has_grown_past_the_headroom(process):
    assert malloc.settle() == 500 and process["trims"] == 1  # loading's free memory handed back first
    process["resident"] = 500 + 100
    assert not malloc.keep_headroom(100) and process["trims"] == 1  # at the headroom: left alone
    process["resident"] = 500 + 101
    assert malloc.keep_headroom(100) and process["trims"] == 2
    process["resident"] = 700  # the floor stays where settle put it, whatever the trims gave
    assert malloc.keep_headroom(100) and process["trims"] == 3


def test_without_a_settled_floor_the_first_check_takes_one(process):
    assert not malloc.keep_headroom(10) and process["trims"] == 0  # the floor: 1000, now
    process["resident"] = 1011
    assert malloc.keep_headroom(10) and process["trims"] == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/statm is Linux's")
def test_resident_memory_is_the_processes_own():
    before = malloc.resident()
    block = bytearray(64 << 20)  # 64 MiB, every page written (zeroed)
    assert malloc.resident() - before >= 32 << 20
    del block
