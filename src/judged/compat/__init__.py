"""Drop-in front ends for code written against other evaluation tools.

* :mod:`judged.compat.pytrec_eval` — ``import judged.compat.pytrec_eval as pytrec_eval``
* :mod:`judged.compat.ir_measures` — ``judged.calc_aggregate`` and ``judged.iter_calc``

Each computes with judged's engine (double precision, declared conventions) and
returns the other tool's shapes and names.
"""
