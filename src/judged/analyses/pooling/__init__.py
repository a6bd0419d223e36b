"""Pooling, in one wing: which unjudged (query, document) pairs to judge, and in which order.

From the bottom up: ``poolfile`` (the file ``judged pool`` writes and its one reader, for
pooling, inference, PPI and the judging app); ``candidates`` (the pairs in the runs' top
depth, built by ``PoolRows``); ``replay_kernels`` (the kernels, their C in
``_native_pooling.c``); ``policies`` (the policy objects that propose the next pair given
the labels so far); ``strategies`` (the one registry of ``judged pool``'s strategies,
``pool`` and ``make_policy``: used by ``judged pool``, the replay and the judging app's
``/api/next``); ``replay`` (``judged meta pooling``) and ``choice`` (the rule that picks
a strategy from a replay).
"""

from .candidates import Candidates, PoolRows, build_candidates
from .policies import PoolingPolicy

__all__ = ["Candidates", "PoolingPolicy", "PoolRows", "build_candidates"]
