"""Query and document texts for the judging app, from any of the sources judged reads.

``source`` is ``irds:<dataset-id>`` (ir_datasets), a BEIR folder (``queries.jsonl``,
``corpus.jsonl``), a Hugging Face ``datasets`` folder (the ``queries`` and ``corpus``
configs: README configs, ``save_to_disk`` output or mteb/* files; :mod:`judged.core.io.hf`),
a JSON-lines file (``{"_id", "text"[, "title"]}`` per line, BEIR's form)
or a TSV file (``id<TAB>text``, ir_datasets' and MS MARCO's form).
"""

from __future__ import annotations

import os

from ..errors import ParseError
from . import beir, hf, irds
from .text import read_raw, utf8_line


def read_queries(source) -> dict[str, str]:
    """Query id -> text."""
    if isinstance(source, str) and source.startswith("irds:"):
        return irds.load_queries(source)
    path = os.fspath(source)
    if os.path.isdir(path):
        return hf.load_queries(path) if hf.is_dataset_folder(path) else beir.load_queries(path)
    return {docid: d["text"] for docid, d in _read_file(path).items()}


def read_docs(source, doc_ids=None) -> dict[str, dict]:
    """Document id -> ``{"title", "text"}``, only ``doc_ids`` when given."""
    if isinstance(source, str) and source.startswith("irds:"):
        return irds.load_docs(source, doc_ids)
    path = os.fspath(source)
    if os.path.isdir(path):
        return hf.load_docs(path, doc_ids) if hf.is_dataset_folder(path) else beir.load_docs(path, doc_ids)
    docs = _read_file(path)
    return docs if doc_ids is None else {str(d): docs[str(d)] for d in doc_ids if str(d) in docs}


def tsv_texts(path, text: bool = True):
    """(line number, id, text) of each ``id<TAB>text`` line (gzip and a BOM taken, blank
    lines skipped); a line not UTF-8 or without a tab is a ParseError naming FILE:LINE.
    ``text=False`` lets a NUL byte through, for the caller to name."""
    raw = read_raw(path, text=text)
    for lineno, line in enumerate(raw.data.split(b"\n"), start=1):
        if line.strip():
            line = utf8_line(raw.name, lineno, line)
            if "\t" not in line:
                raise ParseError(raw.name, lineno, "expected id<TAB>text")
            key, value = line.split("\t", 1)
            yield lineno, key, value


def _read_file(path: str) -> dict[str, dict]:
    if path.lower().endswith(".jsonl"):
        return {str(o["_id"]): {"title": o.get("title", ""), "text": o.get("text", "")}
                for _, o in beir.iter_jsonl(path)}
    return {key: {"title": "", "text": value} for _, key, value in tsv_texts(path)}
