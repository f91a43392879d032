"""Errors that the command line turns into a one-line message and an exit code.

Exit codes: 0 ok, 1 unexpected bug (any other exception), 2 bad input data, config or option, 3 bad model,
4 output cannot be written.
"""

from __future__ import annotations


class SpandepError(Exception):
    """Base class of the errors a user can cause (and fix); ``exit_code`` is the process exit status."""

    exit_code: int = 1


class InputFormatError(SpandepError, ValueError):
    """Malformed input data; ``str()`` is ``"{source}:{line}: {reason}"``. A ``ValueError`` too, as the Python API
    raises for bad input."""

    exit_code = 2

    def __init__(self, source: str, line: int, reason: str) -> None:
        self.source = str(source)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.source}:{line}: {reason}")

    def __reduce__(self):  # keep pickling (e.g. multiprocessing) working with the 3-argument constructor
        return (type(self), (self.source, self.line, self.reason))


class OptionError(SpandepError, ValueError):
    """A command-line option out of its range or of a kind the command does not take; ``str()`` names it."""

    exit_code = 2


class ModelError(SpandepError):
    """A model directory that is missing, incomplete or unreadable."""

    exit_code = 3


class OutputError(SpandepError):
    """An output file or directory that cannot be written."""

    exit_code = 4


class WorkerError(SpandepError, RuntimeError):
    """A parsing worker process that died (killed for memory or by a signal): one line naming its status, exit 1."""

