"""The core: read (``io``), hold (``data``), align, measure (``measures`` over ``kernels``
and the C extension ``_native``), evaluate (``blocks``, ``evaluation``, ``stream``, ``spill``),
with the conventions, the records (``manifest``) and the checks beyond the score (``checks``).
The core imports nothing from ``judged.analyses`` or the front ends."""

__version__ = "0.1.0"  # the package's one version (pyproject.toml reads it: dynamic)

# Jupyter's view of a result (``Result`` and ``Comparison``: ``_repr_html_``, ``.plot()``): name ->
# function, registered by the front ends (``judged/__init__.py``: judged.notebook draws them)
DISPLAY: dict = {}
