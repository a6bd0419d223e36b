"""Meta-evaluation: which measure, gain and discount can be trusted on this collection?

* :func:`discriminative_power` — Sakai (SIGIR 2006): a seeded paired test for every pair
  of runs, the share of pairs significant at alpha and the ASL curve, per measure.
* :func:`preference_agreement` — Sanderson et al. (SIGIR 2010): how often a measure
  agrees with side-by-side preferences, where it tells the two rankings apart.
* :func:`ranking_stability` — Kendall's tau and tau_AP (Yilmaz et al., SIGIR 2008)
  between system rankings under two qrels, two measures or two conventions.
* :func:`simulate_discount` — Wang et al. (COLT 2013) on synthetic rankers.
* :func:`synthetic_collection` — a deterministic multi-run collection to try them on.
"""

from __future__ import annotations

from importlib import import_module

_HOME = {"agreement": ["AgreementResult", "preference_agreement", "read_preferences"],
         "discount": ["DiscountSimulation", "simulate_discount"],
         "power": ["PowerResult", "bootstrap_pvalues", "bootstrap_test", "discriminative_power", "randomization_pvalues",
                   "randomization_test"],
         "scores": ["ScoreMatrix", "score_matrix"],
         "stability": ["StabilityResult", "kendall_tau", "ranking_stability", "tau_ap"],
         "synthetic": ["SyntheticCollection", "synthetic_collection", "write_collection"]}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}
__all__ = list(_MODULE_OF)


def __getattr__(name: str):
    """The names above, imported from their module on first use: a command imports only the
    meta-evaluation it runs (``judged meta holdout`` none of these)."""
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted([*globals(), *_MODULE_OF])
