"""Assertions for a project's own test suite (pytest or any runner): the release gate as a test.

>>> from judged.testing import assert_gate
>>> assert_gate("gate.toml", "qrels.txt", "bm25.run", "tuned.run")  # doctest: +SKIP

:func:`assert_gate` decides as ``judged gate`` does (:func:`judged.analyses.gate.gate`) and
raises ``AssertionError`` with one line per rule unless the gate passes.
"""

from __future__ import annotations

from .analyses.gate import GateResult, gate

__all__ = ["assert_gate"]


def assert_gate(policy, qrels=None, baseline=None, candidate=None, *, allow_undecided: bool = False,
                **options) -> GateResult:
    """Assert that ``candidate`` may replace ``baseline`` under ``policy`` (a TOML path, a dict
    of its sections or a :class:`judged.analyses.gate.Policy`); ``options`` (``manifest``,
    ``answers``, ``settings``) go to :func:`judged.analyses.gate.gate`. The message of the
    ``AssertionError`` is the gate's rule lines and the pairs to judge first.
    ``allow_undecided``: an undecided gate (no rule failed, judging the holes could flip
    one) passes too. Returns the :class:`~judged.analyses.gate.GateResult`."""
    __tracebackhide__ = True  # pytest shows the assertion, not this frame
    result = gate(policy, qrels, baseline, candidate, **options)
    if result.verdict == "pass" or (allow_undecided and result.verdict == "undecided"):
        return result
    raise AssertionError("\n".join(result.lines()))
