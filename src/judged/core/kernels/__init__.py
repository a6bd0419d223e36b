"""The kernel layer: each kernel written once as its numpy reference, bound to its C
function (``judged.core._native``) when the extension is loaded; the fallback rule in one place.

    @kernel
    def string_hash(values):              # the numpy reference: the definition
        ...

    @string_hash.binding
    def _(native, values):                # the same result by the compiled function
        ...                               # or FALLBACK: the reference decides

Calling ``string_hash(values)`` runs the binding when :func:`judged.core.native.compiled` gives
the extension (``JUDGED_PURE_PYTHON=1`` and ``judged.core.native.pure()`` turn it off), else the
reference. A binding returns :data:`FALLBACK` for an input its C code does not take (a NaN
score, a grade past the gain table); the reference then computes the result. Both give the
same bits: the tests run every kernel both ways (``tests/core/test_native.py``), and
:data:`KERNELS` lists them. No module outside this one asks the switch for a kernel.
"""

from __future__ import annotations

import functools

from ..native import compiled

FALLBACK = object()  # a binding's "not for this input": the reference computes it
KERNELS: dict = {}  # "module.name" -> Kernel


class Kernel:
    """A numpy reference function and its optional compiled binding."""

    def __init__(self, reference):
        self.reference = reference
        self.bound = None  # binding(native, *args, **kwargs)
        functools.update_wrapper(self, reference)
        KERNELS[f"{reference.__module__}.{reference.__qualname__}"] = self

    def binding(self, function):
        """Decorator: ``function(native, *args, **kwargs)`` computes the same result with the
        compiled module ``native``, or returns :data:`FALLBACK`."""
        self.bound = function
        return self

    @property
    def compiled(self) -> bool:
        """A call now runs the compiled binding (it may still fall back for some inputs): for
        callers whose plan depends on it, e.g. a thread count for a kernel that releases the GIL."""
        return self.bound is not None and compiled() is not None

    def __call__(self, *args, **kwargs):
        native = compiled()
        if native is not None and self.bound is not None:
            out = self.bound(native, *args, **kwargs)
            if out is not FALLBACK:
                return out
        return self.reference(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__}{'' if self.bound else ' (numpy only)'}>"


def packed_key(*keys):
    """One int64 per row whose ascending order is the rows' order by ``keys`` (equal-length
    arrays of non-negative integers, the first key deciding, as ``np.lexsort(keys[::-1])``
    orders them), or None when their spans' product does not fit in 62 bits."""
    import numpy as np

    spans = [int(k.max()) + 1 if len(k) else 1 for k in keys]
    if np.prod([float(x) for x in spans]) >= 2.0 ** 62:
        return None
    key = np.zeros(len(keys[0]), np.int64)
    for k, span in zip(keys, spans):
        key *= span
        key += k
    return key


def block_rows(offsets, which):
    """The rows of blocks ``which`` (in that order) of a table cut by ``offsets`` (block b:
    rows ``offsets[b]`` to ``offsets[b + 1] - 1``), one block after another: the gather the
    references and their callers share."""
    import numpy as np

    starts, lengths = offsets[which], offsets[which + 1] - offsets[which]
    before = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=before[1:])
    return np.repeat(starts - before, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)


def kernel(reference) -> Kernel:
    """Decorator: ``reference`` (numpy) is a kernel; see the module."""
    return Kernel(reference)
