"""BEIR dataset folders (Thakur et al., NeurIPS 2021 datasets track).

Layout: ``DIR/corpus.jsonl`` (``{"_id", "title", "text"}`` per line), ``DIR/queries.jsonl``
(``{"_id", "text"}``) and ``DIR/qrels/<split>.tsv`` (``query-id corpus-id score`` with a
header). BEIR's own results dict ``{qid: {docid: score}}`` is a run as it is: pass it to
:func:`judged.evaluate`. BEIR drops documents whose id equals the query id by default
(``ignore_identical_ids=True``); judged keeps them unless told
(``evaluate(..., ignore_identical_ids=True)``, ``judged eval --ignore-identical-ids``).
"""

from __future__ import annotations

import json
import os

from ..errors import ParseError
from .text import utf8_line


def qrels_path(folder, split: str = "test") -> str:
    """``DIR/qrels/<split>.tsv``; a ParseError naming the folder (or its ``qrels/``) and the
    splits there when it is missing, never the path that was looked for."""
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        raise ParseError(folder, None, "no such BEIR folder")
    qrels_dir = os.path.join(folder, "qrels")
    if not os.path.isdir(qrels_dir):
        raise ParseError(folder, None, f"no qrels here: neither a BEIR folder (qrels/{split}.tsv) nor a Hugging "
                                       f"Face dataset folder (README.md configs, save_to_disk output, or split files "
                                       f"such as {split}.tsv)")
    path = os.path.join(qrels_dir, f"{split}.tsv")
    if not os.path.exists(path):
        splits = sorted(f[:-4] for f in os.listdir(qrels_dir) if f.endswith(".tsv"))
        raise ParseError(qrels_dir, None, f"no qrels for split {split!r}"
                                          + (f" (splits here: {', '.join(splits)})" if splits else ""))
    return path


def iter_jsonl(path):
    """(line number, object) of each non-blank line of a JSON-lines file, streamed; a line
    that is not UTF-8, not JSON or not an object with an ``_id`` is a ParseError naming it."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise ParseError(os.fspath(path), None, "no such file")
    with fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(utf8_line(path, lineno, line))
            except json.JSONDecodeError as exc:
                raise ParseError(os.fspath(path), lineno, f"invalid JSON: {exc.msg}") from None
            if not isinstance(obj, dict) or "_id" not in obj:
                raise ParseError(os.fspath(path), lineno, 'expected an object with an "_id"')
            yield lineno, obj


def load_queries(folder) -> dict[str, str]:
    """Query id -> query text, from ``DIR/queries.jsonl``."""
    return {str(o["_id"]): o.get("text", "") for _, o in iter_jsonl(os.path.join(os.fspath(folder), "queries.jsonl"))}


def load_docs(folder, doc_ids=None) -> dict[str, dict]:
    """Document id -> ``{"title", "text"}`` from ``DIR/corpus.jsonl``; only ``doc_ids``
    when given (the corpus is streamed, never held whole)."""
    wanted = None if doc_ids is None else {str(d) for d in doc_ids}
    out = {}
    for _, o in iter_jsonl(os.path.join(os.fspath(folder), "corpus.jsonl")):
        docid = str(o["_id"])
        if wanted is None or docid in wanted:
            out[docid] = {"title": o.get("title", ""), "text": o.get("text", "")}
    return out
