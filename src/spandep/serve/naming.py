"""Model names as UDPipe 2 resolves them, and as ``spandep.load`` does: a served model answers to its own name and,
when it is a shipped model, to its language, treebank and ISO code (``en`` → ``english-ewt``, ``english``,
``en_ewt``, ``en``), as UDPipe's ``english-ewt-ud-2.12-230717:en_ewt:en`` answers to each of its ``-`` prefixes, and to
every name ``spandep.load`` takes for it: its catalogue code in any case and its language's codes and names in the
language table (``de``, ``deu``, ``ger``, ``german``, ``Deutsch``, ``de_gsd``: :func:`spandep.storage.catalogue.find`
over the served models). The first served model takes a name that several have (UDPipe's order), a model's own name
wins over any other's alias, and any unique prefix of the names resolves too (``engl``)."""

from __future__ import annotations

import re

from spandep.storage.catalogue import ShippedModel, find

__all__ = ["Names", "aliases"]


def aliases(name: str, shipped: ShippedModel | None) -> list[str]:
    """The names a served model answers to, its own first: with a catalogue line (``shipped``), also
    LANGUAGE-TREEBANK, LANGUAGE, ISO_TREEBANK and ISO (the language's first word, the treebank after ``UD_Language-``,
    the ISO code of the catalogue name), lower case."""
    if shipped is None:
        return [name]
    language = re.split(r"[\s(]", shipped.language.strip())[0].lower()
    treebank = shipped.treebank.split("-", 1)[-1].split()[0].lower()
    iso = re.split(r"[-_]", shipped.name)[0].lower()
    return list(dict.fromkeys([name, f"{language}-{treebank}", language, f"{iso}_{treebank}", iso]))


class Names:
    """Which served model a requested name means (``resolve``); ``served``: each served model's catalogue line (``None``:
    not a shipped model, a folder), in order."""

    def __init__(self, served: dict[str, ShippedModel | None]) -> None:
        self.table: dict[str, str] = {name: name for name in served}  # own names first: they win
        for name, shipped in served.items():
            for alias in aliases(name, shipped):
                self.table.setdefault(alias, name)
        self.lines = {line.name: line for line in served.values() if line is not None}  # for find, in served order
        self.served_as = {line.name: name for name, line in reversed(served.items()) if line is not None}  # the first

    def resolve(self, requested: str) -> str | None:
        """The served model ``requested`` names: an exact name, else the one ``spandep.load(requested)`` would load
        among them, else the model of which it prefixes names (of one model only)."""
        if requested in self.table:
            return self.table[requested]
        line = find(requested, self.lines)
        if line is not None:
            return self.served_as[line.name]
        found = {model for alias, model in self.table.items() if alias.startswith(requested)}
        return found.pop() if len(found) == 1 and requested else None
