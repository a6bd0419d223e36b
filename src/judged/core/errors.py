"""Typed errors. The CLI turns every one of them into a single line and exit code 2."""

from __future__ import annotations


class JudgedError(Exception):
    """Base class of every error `judged` raises on purpose."""


class ParseError(JudgedError):
    """Bad input: names the file, the line (1-based, when known) and what is wrong."""

    def __init__(self, source: str, line: int | None, why: str):
        self.source = source
        self.line = line
        self.why = why
        where = f"{source}:{line}" if line is not None else str(source)
        super().__init__(f"{where}: {why}")


class MeasureError(JudgedError):
    """A measure string that cannot be parsed or a parameter that makes no sense."""


class ConventionError(JudgedError):
    """A convention that is unknown, or data that a declared convention refuses
    (for example ``no_relevant='error'`` meeting a query with nothing relevant)."""


class UsageError(JudgedError):
    """A command line or call that cannot be carried out as given (a missing argument,
    an optional package that is not installed)."""


class QuerySetError(JudgedError):
    """Runs and qrels whose queries do not meet: a run that shares no query id with the
    qrels, so its score would be a mean over nothing it was asked (see :mod:`judged.core.querysets`)."""
