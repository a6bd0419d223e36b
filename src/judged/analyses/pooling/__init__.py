"""Pooling: which unjudged (query, document) pairs to judge, and in which order.

``candidates``: the pairs in the runs' top depth; ``policies``: the strategies, each a
policy object that proposes the next pair given the labels so far (used by ``judged
pool``, ``judged meta pooling`` and the judging app's ``/api/next``).
"""

from .candidates import Candidates, build_candidates, candidates_from_aligned
from .policies import Policy

__all__ = ["Candidates", "Policy", "build_candidates", "candidates_from_aligned"]
