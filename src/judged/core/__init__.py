"""The core: read (``io``), hold (``data``), align, measure (``measures`` over ``kernels``
and the C extension ``_native``), evaluate (``blocks``, ``evaluation``, ``stream``, ``spill``),
with the conventions, the records (``manifest``) and the checks beyond the score (``checks``).
The core imports nothing from ``judged.analyses`` or the front ends."""
