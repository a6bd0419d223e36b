"""Strict JSON out of Python values: what ``json.dumps`` would print as ``NaN``/``Infinity``
(no JSON reader takes them) becomes ``null``. Shared by the CLI's ``--format json`` and the
judging app's API; imports nothing heavier than :mod:`math` (``judged --help`` loads no numpy)."""

from __future__ import annotations

import math


def json_safe(obj):
    """NaN and infinities -> None, numpy scalars -> Python numbers (by their ``.item()``),
    tuples -> lists, keys -> strings, through dicts and lists.

    >>> json_safe({"kappa": float("nan"), 1: (2.5, float("inf"))})
    {'kappa': None, '1': [2.5, None]}
    """
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
