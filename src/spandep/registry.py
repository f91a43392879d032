"""Registries: one per kind of building block (encoders, parser types, linkers, output heads, decoders).

A registry maps a name to the object it builds. Entries are given as ``"module:attribute"`` strings and imported
on first use, so listing or validating names stays cheap and a heavy dependency (transformers) is imported only
when its encoder is built. A class in a registry declares its own ``name`` too; :meth:`Registry.get` checks that the
two agree, so a renamed class cannot silently answer to an old name (a class that answers to several names, such
as one linker for two query formats, lists them in ``names``).

Adding a building block is one file plus one line in its package's ``__init__``::

    ENCODERS.add("toy", "my_package.toy:ToyEncoder")
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

__all__ = ["Registry", "SettingsCheck", "UnknownNameError", "merged"]

T = TypeVar("T")


def merged(base: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``given`` over ``base``, table by table (inline tables such as the linker's merge too)."""
    out = dict(base)
    for key, value in given.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


class SettingsCheck:
    """For a registered class with a table of settings in a training config (``[encoder]``, ``[model]``): checks of
    the settings given there, before any data is read or model built. ``settings_problem`` runs when the config is
    read; ``missing`` when training starts (a config stays readable on a machine without its files)."""

    @classmethod
    def settings_problem(cls, settings: dict[str, Any]) -> str | None:
        """What is wrong with ``settings`` (defaults filled), as one line naming the key; ``None``: nothing."""
        return None

    @classmethod
    def missing(cls, settings: dict[str, Any]) -> str | None:
        """What this machine lacks for ``settings`` (a model folder, a package), as one line; ``None``: nothing."""
        return None


class UnknownNameError(ValueError):
    """A name no registry entry answers to; the message lists the known ones."""


class Registry(Generic[T]):
    """Named entries of one kind (``kind`` is what error messages call them, e.g. ``"encoder"``)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, str | T] = {}

    def add(self, name: str, target: str | T) -> None:
        """Register ``target`` (an object, or ``"module:attribute"`` imported on first use) under ``name``."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered already")
        self._entries[name] = target

    def remove(self, name: str) -> None:
        """Forget ``name`` (for plug-ins registered for a while, e.g. in a test)."""
        self._entries.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        """The entry called ``name``; :class:`UnknownNameError` (listing the known names) for any other name."""
        if not isinstance(name, str) or name not in self._entries:
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        target = self._entries[name]
        if isinstance(target, str):
            module, _, attribute = target.partition(":")
            target = getattr(importlib.import_module(module), attribute)
            declared: Any = getattr(target, "names", (getattr(target, "name", name),))
            if isinstance(target, type) and name not in declared:
                raise TypeError(f"{self.kind} {name!r} is registered as {target.__qualname__}, which answers to {declared!r}")
            self._entries[name] = target
        return target  # type: ignore[return-value]

    def configured(self, given: dict[str, Any], default: str | None = None) -> tuple[str, dict[str, Any]]:
        """The name in a config table ``given`` (its ``type``; ``default`` where it has none) and that entry's
        ``config_defaults`` with the table's other keys over them; a ``ValueError`` (one line, without the table's
        name) for a missing or unknown type or a key the type does not take."""
        kind = given.get("type", default)
        if kind is None:
            raise ValueError(f"type missing: give one of {', '.join(self.names())}")
        try:
            defaults: dict[str, Any] = getattr(self.get(kind), "config_defaults")
        except UnknownNameError as exc:
            raise UnknownNameError(f"type: {exc}") from None
        unknown = sorted(set(given) - set(defaults) - {"type"})
        if unknown:
            raise ValueError(f"key(s) {', '.join(unknown)} do not apply to type {kind!r}; known: {', '.join(defaults)}")
        return kind, merged(defaults, {k: v for k, v in given.items() if k != "type"})
