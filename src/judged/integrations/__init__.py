"""judged inside the tools people evaluate with (front ends: no evaluation logic here,
only calls to judged's public API).

* :mod:`judged.integrations.sentence_transformers` — ``GradedIREvaluator``, a Sentence
  Transformers evaluator with graded qrels, declared conventions, Judged@k and holes
  (extra ``st``)
* :mod:`judged.integrations.mteb` — MTEB predictions and task data as runs and qrels;
  MTEB's reported scores beside judged's (extra ``mteb``)
* :mod:`judged.integrations.pyterrier` — ``pt.Experiment``-style tables from PyTerrier
  result frames, with holes and paired tests (extra ``pyterrier``)
* :mod:`judged.integrations.ir_measures` — judged as an ir_measures provider, so
  ir_measures and PyTerrier compute with judged
* :mod:`judged.integrations.ranx` — export to ``ranx.Qrels`` / ``ranx.Run`` (reading them
  needs nothing: ``read_qrels``/``read_run``/``evaluate`` take them as they are; extra ``ranx``)

Hugging Face ``datasets`` folders are read by :mod:`judged.core.io.hf` (wherever a qrels path
is accepted, and for the judging app's texts). Importing :mod:`judged` imports none of
these packages; each module imports its tool when it is imported.
"""
