"""Run names: how a run given twice is named, and how runs named by their paths are shown to
people.

* A run is named as given (its path, or its name in a dict or a Run); the JSON outputs key
  runs so. The same name given again gets `` (2)``, `` (3)``, ...: ``judged compare a.run
  a.run`` compares ``a.run`` with ``a.run (2)``.
* Every command's tables and sentences, and the reports, show a path by its file name,
  with as many of its folders as it takes to tell two runs apart (``runs/v1/bm25.run`` and
  ``runs/v2/bm25.run`` show as ``v1/bm25.run`` and ``v2/bm25.run``): :func:`display_names`,
  the one naming rule for people (the JSON outputs keep the names as given);
  :func:`shortener` applies it to a sentence an analysis wrote.
"""

from __future__ import annotations

import os


def unique_name(name: str, seen: set) -> str:
    """``name``, or ``name (2)``, ``name (3)``... when it is already in ``seen`` (which it joins)."""
    out, k = name, 2
    while out in seen:
        out, k = f"{name} ({k})", k + 1
    seen.add(out)
    return out


def display_names(names) -> dict:
    """name -> what a report shows: a path's shortest tail of folders and file name that no
    other run shares (a name without a folder, as it is).

    >>> display_names(["/data/runs/bm25.run", "/data/runs/dense.run"])
    {'/data/runs/bm25.run': 'bm25.run', '/data/runs/dense.run': 'dense.run'}
    >>> display_names(["a/x/bm25.run", "b/x/bm25.run", "dense"])
    {'a/x/bm25.run': 'a/x/bm25.run', 'b/x/bm25.run': 'b/x/bm25.run', 'dense': 'dense'}
    >>> display_names(["v1/bm25.run", "v2/bm25.run (2)"])
    {'v1/bm25.run': 'bm25.run', 'v2/bm25.run (2)': 'bm25.run (2)'}
    """
    names = list(names)
    parts = {n: [p for p in n.replace(os.sep, "/").split("/") if p not in ("", ".")] or [n] for n in names}
    depth = {n: 1 for n in names}
    while True:
        shown = {n: "/".join(parts[n][-depth[n]:]) for n in names}
        clash = {n for n in names if sum(s == shown[n] for s in shown.values()) > 1}
        grow = {n for n in clash if depth[n] < len(parts[n])}
        if not grow:
            return shown
        for n in grow:
            depth[n] += 1


RUN_ENDINGS = (".gz", ".run", ".txt", ".trec", ".tsv")  # what a run file's name ends with, stripped by run_stem


def run_stem(name: str) -> str:
    """A run's file name without its folders and the endings of :data:`RUN_ENDINGS`.

    >>> run_stem("runs/input.bm25.run.gz")
    'input.bm25'
    """
    base = os.path.basename(name)
    for ext in RUN_ENDINGS:
        if base.endswith(ext):
            base = base[:-len(ext)]
    return base


def shortener(names):
    """(name -> shown name, a function showing every run name of a text as
    :func:`display_names` does): for sentences an analysis wrote with the names as given.
    A name is replaced where it stands whole (not inside a longer word or path), longest
    names first, and its HTML-escaped form too.

    >>> shown, short = shortener(["/data/runs/bm25.run", "/data/runs/dense.run"])
    >>> short("/data/runs/bm25.run vs /data/runs/dense.run: can flip")
    'bm25.run vs dense.run: can flip'
    """
    import re
    from html import escape

    shown = display_names(names)
    forms = {}
    for full, brief in shown.items():
        if full != brief:
            forms[full] = brief
            forms.setdefault(escape(full), escape(brief))
    if not forms:
        return shown, (lambda text: text)
    pattern = re.compile(r"(?<![\w./-])(" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                         + r")(?![\w/-])")
    return shown, (lambda text: pattern.sub(lambda m: forms[m.group(1)], text))
