"""numba's typed dicts ``{qid: {docid: value}}`` (what a ``ranx.Qrels`` / ``ranx.Run`` holds)
walked by numba itself: the pairs as Arrow string columns and a value column, without
boxing each pair into Python objects (``to_dict()`` does, 60x slower).

Imported only when a ranx object is read (:mod:`judged.core.io.ranx_objects`), so numba is not
imported otherwise. The functions are compiled on first use for each key type (ranx keys
documents built from a dict by fixed-width numpy strings, ``[unichr x N]``: one
compilation per width) and cached on disk by numba (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import types
from numba.cpython import charseq, unicode
from numba.extending import overload


def code_point(s, i):
    """The i-th code point of a numba str or fixed-width numpy str (in numba only)."""


@overload(code_point)
def _code_point(s, i):
    if isinstance(s, types.UnicodeCharSeq):
        return lambda s, i: charseq.unicode_charseq_get_code(s, i)
    if isinstance(s, types.UnicodeType):
        return lambda s, i: unicode._get_code_point(s, i)


@njit(cache=True)
def _put_utf8(s, out, at):
    """The UTF-8 bytes of the str ``s`` (a numba str or fixed-width numpy str, whose
    ``len`` leaves out trailing NULs, as its Python str does) written from ``out[at]``:
    the next free place, or -1 for a lone surrogate (no UTF-8: the caller falls back)."""
    for i in range(len(s)):
        c = code_point(s, i)
        if c < 0x80:
            out[at] = c
            at += 1
        elif c < 0x800:
            out[at] = 0xC0 | (c >> 6)
            out[at + 1] = 0x80 | (c & 0x3F)
            at += 2
        elif c < 0x10000:
            if 0xD800 <= c <= 0xDFFF:
                return -1
            out[at] = 0xE0 | (c >> 12)
            out[at + 1] = 0x80 | ((c >> 6) & 0x3F)
            out[at + 2] = 0x80 | (c & 0x3F)
            at += 3
        else:
            out[at] = 0xF0 | (c >> 18)
            out[at + 1] = 0x80 | ((c >> 12) & 0x3F)
            out[at + 2] = 0x80 | ((c >> 6) & 0x3F)
            out[at + 3] = 0x80 | (c & 0x3F)
            at += 4
    return at


@njit(cache=True)
def pairs(d):
    """(ok, rows, qid offsets, qid bytes, docid offsets, docid bytes, values, block starts,
    block qid offsets, block qid bytes) of the typed dict ``d`` in its order, as
    :func:`judged.core.io.frames.dict_columns` gives them for the same dict; ok False for a
    lone surrogate in an id, a non-finite value or 2 GiB of ids (the reference decides)."""
    rows, nq, qchars, dchars = 0, 0, 0, 0
    for q, docs in d.items():
        k = len(docs)
        if k:
            rows += k
            nq += 1
            qchars += (k + 1) * len(q)
        for doc in docs.keys():
            dchars += len(doc)
    qoff, doff = np.zeros(rows + 1, np.int32), np.zeros(rows + 1, np.int32)
    qdata, ddata = np.empty(4 * qchars, np.uint8), np.empty(4 * dchars, np.uint8)
    values = np.empty(rows, np.float64)
    starts, boff = np.empty(nq, np.int64), np.zeros(nq + 1, np.int32)
    ok = 4 * max(qchars, dchars) < 2**31
    r, b, qa, da = 0, 0, 0, 0
    for q, docs in d.items():
        if not ok:
            break
        if len(docs) == 0:
            continue
        first = qa
        qa = _put_utf8(q, qdata, qa)
        if qa < 0:
            ok = False
            break
        width = qa - first
        starts[b] = r
        boff[b + 1] = boff[b] + width
        b += 1
        again = False
        for doc, v in docs.items():
            if again:  # the qid's bytes again
                qdata[qa:qa + width] = qdata[first:first + width]
                qa += width
            again = True
            qoff[r + 1] = qa
            da = _put_utf8(doc, ddata, da)
            if da < 0 or not np.isfinite(v):
                ok = False
                break
            doff[r + 1] = da
            values[r] = v
            r += 1
    if not ok:
        return (False, 0, qoff, qdata, doff, ddata, values, starts, boff, qdata)
    bdata = np.empty(boff[nq], np.uint8)
    for i in range(nq):
        at = qoff[starts[i]]
        bdata[boff[i]:boff[i + 1]] = qdata[at:at + boff[i + 1] - boff[i]]
    return (True, rows, qoff, qdata[:qa].copy(), doff, ddata[:da].copy(), values, starts, boff, bdata)
