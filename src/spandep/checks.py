"""Checks of option values, shared by the command line, the training config and model loading: each problem is one
line that names the option and what it allows (the command line raises it as an ``OptionError``, the config as an
``InputFormatError``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["DEVICES", "Range", "device_problem"]

DEVICES = "cpu, cuda, cuda:N or auto"
_DEVICE = re.compile(r"(cpu|auto|cuda(:[0-9]+)?)\Z")


@dataclass(frozen=True)
class Range:
    """The values an int (``integer``) or a finite number may take: from ``low`` to ``high``, each end included
    unless ``open_low`` / ``open_high``. ``str()`` says it in words: "an int ≥ 1", "a number in [0, 1)"."""

    low: float = -math.inf
    high: float = math.inf
    integer: bool = True
    open_low: bool = False
    open_high: bool = False

    def __str__(self) -> str:
        kind = "an int" if self.integer else "a finite number"
        if self.high == math.inf:
            return kind if self.low == -math.inf else f"{kind} {'>' if self.open_low else '≥'} {_number(self.low)}"
        return f"{kind} in {'(' if self.open_low else '['}{_number(self.low)}, {_number(self.high)}{')' if self.open_high else ']'}"

    def problem(self, name: str, value: object) -> str | None:
        """"NAME must be an int ≥ 1, not 0" unless ``value`` is of the kind and in the range (then ``None``)."""
        kinds = int if self.integer else (int, float)
        ok = isinstance(value, kinds) and not isinstance(value, bool) and math.isfinite(value)
        if ok:
            ok = (value > self.low if self.open_low else value >= self.low) and (
                value < self.high if self.open_high else value <= self.high
            )
        return None if ok else f"{name} must be {self}, not {value!r}"


def _number(value: float) -> str:
    """A bound as written: ``1000000``, not ``1e+06``; ``0.5`` as it is."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def device_problem(name: str, value: object) -> str | None:
    """"NAME must be cpu, cuda, cuda:N or auto, not 'gpu'" unless ``value`` names a device (then ``None``)."""
    if isinstance(value, str) and _DEVICE.match(value):
        return None
    return f"{name} must be {DEVICES}, not {value!r}"
