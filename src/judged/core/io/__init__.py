"""Readers: every input form becomes a :class:`~judged.core.data.Qrels` or :class:`~judged.core.data.Run`.

Paths are dispatched on content and name: Parquet by content (a file or a folder of part
files whose first bytes are ``PAR1``, whatever their names, as Spark writes them), JSON
dict-of-dicts (``.json``: the pytrec_eval/BEIR form), MTEB predictions (``.json`` with
``mteb_model_meta``), BEIR qrels TSV (a ``query-id corpus-id score`` header), TREC text (the
default; gzip, bz2 and xz too, by content: :mod:`.compressed`). Another folder is a BEIR or Hugging Face ``datasets`` collection (its
``test`` qrels; :func:`dataset_qrels` for another split). In memory: pandas or polars
DataFrames, Arrow tables, dicts, ranx ``Qrels``/``Run`` objects, Hugging Face ``Dataset`` /
``DatasetDict`` objects, or objects already read.

JSON and TREC text are told apart by content where the name lies: a TREC file named ``.json``
is read as TREC, JSON named ``.txt`` as JSON. A file that fails to parse and looks like
something else (qrels given as a run or the other way round, a CSV or TSV with a header)
gets one line saying what it looks like and what was probably meant
(:func:`judged.core.io.sniff.hinted`).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from ..conventions import validate
from ..data import Qrels, Run
from ..errors import ParseError
from . import beir, compressed, frames, ranx_objects
from .sniff import hinted, parquet_files, text_or_json
from .text import RawFile, iter_lines, line_of_row, open_file, read_raw
from .trec_files import dedupe_qrels, parse_grade, read_trec_qrels, read_trec_run

__all__ = ["read_qrels", "read_run", "dataset_qrels"]

BEIR_HEADERS = {b"query-id", b"query_id", b"qid"}


def file_kind(path: str) -> str:
    """parquet (by content, or by name), json or text: by content where the name lies (a
    TREC file named ``.json``, JSON named ``.txt``), else by name."""
    p = path.lower()
    if parquet_files(path) or p.rstrip("/").endswith((".parquet", ".pq")):
        return "parquet"
    for suffix in compressed.SUFFIXES:
        p = p.removesuffix(suffix)
    return (text_or_json(path) if os.path.isfile(path) else None) or ("json" if p.endswith(".json") else "text")


def _read_path(path: str, expected: str, read):
    """``read()``, its ParseError replaced by a hint when the file looks like another format."""
    try:
        return read()
    except ParseError as exc:
        raise hinted(exc, path, expected) from None


def read_qrels(source, on_duplicate: str = "error", subtopics: bool = False) -> Qrels:
    """Read relevance judgments from a path (TREC qrels, BEIR TSV, JSON, Parquet),
    ``irds:<dataset-id>`` (ir_datasets, the ``irds`` extra),
    a dataset folder (BEIR, Hugging Face ``datasets``: the ``test`` split), a DataFrame / Arrow
    table (columns qid, docid, grade), a dict {qid: {docid: grade}}, a ``ranx.Qrels``, or a
    ``datasets.Dataset`` / ``DatasetDict`` (its ``test`` split; :func:`dataset_qrels` for another).

    ``subtopics``: a TREC qrels file or a table with a subtopic column is read as subtopic
    qrels for the diversity measures (:mod:`judged.core.io.subtopics`: the second column is the
    subtopic; each document's flat grade its largest over the subtopics).

    >>> q = read_qrels({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}})
    >>> len(q), q.qid.to_pylist(), q.grade.tolist()
    (3, ['q1', 'q1', 'q2'], [2, 0, 1])
    """
    validate(on_duplicate=on_duplicate)
    if isinstance(source, Qrels):
        return source
    if _in_datasets(source):
        return dataset_qrels(source, on_duplicate=on_duplicate)
    if subtopics and _subtopic_source(source):
        from .subtopics import read_subtopic_qrels

        return _read_path(os.fspath(source), "qrels", lambda: read_subtopic_qrels(source)) \
            if isinstance(source, (str, os.PathLike)) else read_subtopic_qrels(source)
    if ranx_objects.is_qrels(source):
        return ranx_objects.qrels_from_ranx(source, on_duplicate=on_duplicate)
    if isinstance(source, dict):
        return frames.qrels_from_dict(source, on_duplicate=on_duplicate)
    if isinstance(source, str) and source.startswith("irds:"):
        from .irds import load_qrels

        return load_qrels(source, on_duplicate=on_duplicate, subtopics=subtopics)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        kind = file_kind(path)
        if kind != "parquet" and os.path.isdir(path):
            return dataset_qrels(path, on_duplicate=on_duplicate)
        if kind == "json":
            obj, raw = _read_path(path, "json", lambda: frames.load_json(path, on_duplicate))
            q = frames.qrels_from_dict(obj, source=raw.name)
            q.sha256 = raw.sha256
            return q
        if kind == "parquet":
            table, raw = frames.read_parquet_table(path)
            q = frames.qrels_from_table(table, source=raw.name, on_duplicate=on_duplicate)
            q.sha256 = raw.sha256
            return q
        first = _first_fields(path)
        if first and first[0].lower() in BEIR_HEADERS:
            return _read_beir_tsv(read_raw(path), on_duplicate)
        return _read_path(path, "qrels", lambda: read_trec_qrels(path, on_duplicate=on_duplicate))
    return frames.qrels_from_table(frames.to_arrow_table(source), on_duplicate=on_duplicate)


def _subtopic_source(source) -> bool:
    """A TREC qrels text file, or a table: the sources with a subtopic column."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return not path.startswith("irds:") and not os.path.isdir(path) and file_kind(path) == "text" and \
            (_first_fields(path)[:1] or [b""])[0].lower() not in BEIR_HEADERS
    return not isinstance(source, dict) and not ranx_objects.is_qrels(source)


def _in_datasets(source) -> bool:
    """A Hugging Face ``datasets`` object (``Dataset``, ``DatasetDict``), known by its class's
    module: ``datasets`` is not imported."""
    return type(source).__module__.split(".", 1)[0] == "datasets"


def dataset_qrels(folder, split: str = "test", on_duplicate: str = "error", subset: str | None = None) -> Qrels:
    """The qrels of one split of a dataset folder: a Hugging Face ``datasets`` folder
    (:mod:`judged.core.io.hf`: README configs, ``save_to_disk``, mteb/* files) or a BEIR folder
    (:mod:`judged.core.io.beir`: ``qrels/<split>.tsv``); or of an in-memory ``DatasetDict`` (a
    ``Dataset`` is read as it is). ``subset``: one subset of the collection, a language of a
    multilingual MTEB task (its ``<subset>-qrels`` config) or a subfolder that is a
    collection itself (CQADupStack's forums); :func:`judged.core.io.hf.subsets` lists them."""
    from . import hf  # read only here: not imported by every evaluation

    if _in_datasets(folder):
        return hf.qrels_from_memory(folder, split, on_duplicate=on_duplicate)
    if subset not in (None, "default") and os.path.isdir(os.path.join(os.fspath(folder), subset)):
        folder, subset = os.path.join(os.fspath(folder), subset), None
    if hf.is_dataset_folder(folder) or subset not in (None, "default") or \
            (not os.path.isdir(os.path.join(os.fspath(folder), "qrels")) and hf.subsets(folder)):
        return hf.load_qrels(folder, split, on_duplicate=on_duplicate, subset=subset)
    return read_qrels(beir.qrels_path(folder, split), on_duplicate=on_duplicate)


def _first_fields(path: str) -> list[bytes]:
    """The fields of a text file's first non-blank line, from its first 64 KB (decompressed
    if need be); [] when that cannot be read (the full reader then says why)."""
    open_file(path).close()  # a missing or unreadable path: its ParseError
    return compressed.head(path, 1 << 16).removeprefix(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0].split()


def _read_beir_tsv(raw: RawFile, on_duplicate: str) -> Qrels:
    qids, docids, grades = [], [], []
    header_seen = False
    for lineno, f in iter_lines(raw):
        if not header_seen:
            header_seen = True
            continue
        if len(f) != 3:
            raise ParseError(raw.name, lineno, f"expected 3 fields (query-id corpus-id score), found {len(f)}")
        qids.append(f[0]); docids.append(f[1]); grades.append(parse_grade(raw, lineno, f[2]))
    if not qids:
        raise ParseError(raw.name, None, "no judgments after the header")
    q = Qrels(pa.array(qids, pa.string()), pa.array(docids, pa.string()), np.array(grades, np.int64),
              source=raw.name, sha256=raw.sha256)
    return dedupe_qrels(q, on_duplicate, lambda row: line_of_row(raw, row + 1))


def read_run(source, name: str | None = None, on_duplicate: str = "error", digest: bool = True) -> Run:
    """Read a run from a path (TREC run, JSON {qid: {docid: score}}, Parquet), a
    DataFrame / Arrow table (columns qid, docid, score), a dict, a ``ranx.Run`` or a
    ``datasets.Dataset`` (a ``DatasetDict``: its ``test`` split); an
    MTEB predictions file (:mod:`judged.core.io.mteb_files`). ``name`` defaults to the path as given
    (to the model's name for MTEB predictions, to its own name for a ranx Run).
    ``digest=False``: a plain TREC run file's sha256 is not computed (``Run.sha256`` None),
    for a caller that shows no run's hash.

    >>> r = read_run({"q1": {"a": 1.5, "b": 2.0}}, name="bm25")
    >>> r.name, r.docid.to_pylist(), r.score.tolist()
    ('bm25', ['a', 'b'], [1.5, 2.0])
    """
    from . import mteb_files

    validate(on_duplicate=on_duplicate)
    if isinstance(source, Run):
        return source
    if _in_datasets(source):
        from .hf import memory_table

        table, where = memory_table(source)
        return frames.run_from_table(table, name or "run", source=where, on_duplicate=on_duplicate)
    if ranx_objects.is_run(source):
        return ranx_objects.run_from_ranx(source, name)
    if isinstance(source, dict):
        return frames.run_from_dict(source, name or "run")
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        kind = file_kind(path)
        if kind == "json":
            obj, raw = _read_path(path, "json", lambda: frames.load_json(path, on_duplicate))
            r = (mteb_files.run_from_predictions(obj, raw.name, name=name) if mteb_files.is_predictions(obj)
                 else frames.run_from_dict(obj, name or path, source=raw.name))
            if len(r) == 0:
                raise ParseError(raw.name, None, "no ranked documents")
            r.sha256 = raw.sha256
            return r
        if kind == "parquet":
            table, raw = frames.read_parquet_table(path)
            r = frames.run_from_table(table, name or path, source=raw.name, on_duplicate=on_duplicate)
            r.sha256 = raw.sha256
            return r
        return _read_path(path, "run", lambda: read_trec_run(path, name=name or path, on_duplicate=on_duplicate,
                                                             digest=digest))
    return frames.run_from_table(frames.to_arrow_table(source), name or "run", on_duplicate=on_duplicate)
