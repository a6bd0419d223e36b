"""Hugging Face ``datasets`` folders holding a BEIR-style collection: qrels, queries, corpus.

The mteb/* and BeIR/* datasets on the Hugging Face Hub are BEIR collections split into
*configs*: ``corpus`` (``_id``/``id``, ``title``, ``text``), ``queries`` (``_id``/``id``,
``text``) and the qrels (``default``, or ``qrels``: ``query-id``, ``corpus-id``, ``score``,
one split per evaluation split). A local folder holds them in one of two layouts, both
read here with pyarrow (no ``datasets`` import, nothing written to a cache):

* the Hub's files, as ``git clone`` or ``huggingface-cli download`` leave them: a
  ``README.md`` whose YAML header lists ``configs:`` with their ``data_files`` (Parquet,
  JSON lines, TSV/CSV; globs as the Hub writes them), or without one the usual names
  (``corpus/``, ``queries/``, ``qrels/`` or ``default/`` folders of split files, or
  ``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``; a qrels-only repository, as
  BeIR/*-qrels, with its split files at the root: ``test.tsv``, ``train.tsv``);
* ``save_to_disk`` output: ``DIR/<config>/`` each a saved ``DatasetDict``
  (``dataset_dict.json`` and one folder of Arrow files per split) or a saved ``Dataset``
  (``state.json``); or ``DIR`` itself one saved ``DatasetDict`` whose splits are named
  ``corpus``, ``queries`` and the qrels split(s).

The qrels config is chosen as MTEB's loader does (``default``, else ``qrels``; for one
subset of a multilingual task, ``<subset>-qrels``, ``<subset>-queries``, ``<subset>-corpus``);
queries come from the split of the same name when there is one, else from every split.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re

import pyarrow as pa

from ..errors import ParseError, UsageError
from . import frames

QRELS_CONFIGS = ("default", "qrels")
QUERIES_CONFIGS = ("queries", "query")
CORPUS_CONFIGS = ("corpus",)
DATA_EXTENSIONS = (".parquet", ".arrow", ".jsonl", ".json", ".jsonl.gz", ".json.gz", ".tsv", ".csv")


def is_dataset_folder(path) -> bool:
    """A folder laid out as a Hugging Face dataset (README configs, save_to_disk output,
    or config folders of data files) rather than a plain BEIR folder."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return False
    if _front_matter_configs(path) or _saved(path) or _root_splits(path):
        return True
    return any(_saved(os.path.join(path, c)) or _data_files_under(os.path.join(path, c))
               for c in _config_folders(path) if not _is_beir_qrels_folder(path, c))


SUBSET_PARTS = ("-qrels", "-queries", "-corpus")  # mteb's configs of one subset: <subset>-qrels, ...


def _config_folders(path: str) -> list[str]:
    """The subfolders of ``path`` named as a config: qrels, queries, corpus or mteb's
    ``<subset>-qrels``, ``<subset>-queries``, ``<subset>-corpus``."""
    known = (*QRELS_CONFIGS, *QUERIES_CONFIGS, *CORPUS_CONFIGS)
    return sorted(c for c in os.listdir(path) if os.path.isdir(os.path.join(path, c))
                  and (c in known or c.endswith(SUBSET_PARTS)))


def subsets(folder) -> list[str]:
    """The subsets a collection folder holds (the languages of a multilingual MTEB task,
    CQADupStack's forums): the ``<subset>-qrels`` configs (README configs or folders, the
    names mteb's retrieval loader reads) and the subfolders that are collections themselves."""
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        return []
    names = {str(c.get("config_name", "")) for c in _front_matter_configs(folder) if isinstance(c, dict)}
    names |= set(_config_folders(folder))
    found = {n[:-len("-qrels")] for n in names if n.endswith("-qrels") and len(n) > len("-qrels")}
    for sub in os.listdir(folder):
        path = os.path.join(folder, sub)
        if os.path.isdir(path) and not sub.endswith(SUBSET_PARTS) and sub not in (*QRELS_CONFIGS, *QUERIES_CONFIGS,
                                                                                   *CORPUS_CONFIGS) \
                and (os.path.isdir(os.path.join(path, "qrels")) or is_dataset_folder(path)):
            found.add(sub)
    return sorted(found)


def _names(names: tuple, subset: str | None, part: str) -> tuple:
    """The config names of ``part`` for ``subset``: ``names`` for none (or ``default``),
    else mteb's ``<subset>-<part>``."""
    return names if subset in (None, "default") else (f"{subset}-{part}",)


SPLITS = ("train", "test", "dev", "validation", "val")


def _root_splits(path: str) -> dict[str, list[str]]:
    """Split -> data files lying in ``path`` itself and named after a split (``test.tsv``,
    ``dev-00000-of-00001.parquet``): the default config of a Hub repository without
    README configs, as BeIR/*-qrels ship their qrels ({} when there are none)."""
    splits: dict[str, list[str]] = {}
    for name in sorted(os.listdir(path)):
        file = os.path.join(path, name)
        if os.path.isfile(file) and name.lower().endswith(DATA_EXTENSIONS) and _split_of(file, path) in SPLITS:
            splits.setdefault(_split_of(file, path), []).append(file)
    return splits


def _is_beir_qrels_folder(path: str, config: str) -> bool:
    """BEIR's own ``qrels/<split>.tsv`` (read by :mod:`judged.core.io.beir`)."""
    return config == "qrels" and any(f.endswith(".tsv") for f in os.listdir(os.path.join(path, config)))


# ---------------------------------------------------------------------------
# Finding the files of one config and split


def _saved(path: str) -> str | None:
    """'dict' for a saved DatasetDict, 'dataset' for a saved Dataset, None otherwise."""
    if os.path.isfile(os.path.join(path, "dataset_dict.json")):
        return "dict"
    if os.path.isfile(os.path.join(path, "state.json")):
        return "dataset"
    return None


def _saved_splits(path: str) -> dict[str, str]:
    """Split name -> saved Dataset folder of a saved DatasetDict."""
    with open(os.path.join(path, "dataset_dict.json"), encoding="utf-8") as fh:
        splits = json.load(fh).get("splits", [])
    return {s: os.path.join(path, s) for s in splits}


def _saved_files(path: str) -> list[str]:
    """The Arrow files of a saved Dataset, in order (``state.json``'s ``_data_files``)."""
    with open(os.path.join(path, "state.json"), encoding="utf-8") as fh:
        state = json.load(fh)
    files = [os.path.join(path, f["filename"]) for f in state.get("_data_files", [])]
    return files or sorted(glob.glob(os.path.join(path, "*.arrow")))


def _front_matter_configs(path: str) -> list[dict]:
    """The ``configs:`` list of ``DIR/README.md``'s YAML header ([] when there is none)."""
    readme = os.path.join(path, "README.md")
    if not os.path.isfile(readme):
        return []
    with open(readme, encoding="utf-8") as fh:
        text = fh.read()
    m = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", text, re.S)
    if not m or not re.search(r"^configs\s*:", m.group(1), re.M):
        return []
    try:
        import yaml
    except ImportError:
        raise UsageError(f"{readme}: reading its configs needs PyYAML: pip install 'judged[hf]'")
    try:
        header = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError as exc:
        raise ParseError(readme, None, f"invalid YAML header: {exc}")
    configs = header.get("configs") if isinstance(header, dict) else None
    return configs if isinstance(configs, list) else []


def _readme_files(path: str, entry: dict) -> dict[str, list[str]]:
    """Split -> files of one README config entry (``data_files`` as a string, a list of
    globs, or a list of ``{split, path}``)."""
    data_files = entry.get("data_files")
    if data_files is None:
        return {}
    if isinstance(data_files, (str, list)) and not (isinstance(data_files, list) and data_files
                                                    and isinstance(data_files[0], dict)):
        data_files = [{"split": "train", "path": data_files}]
    if isinstance(data_files, dict):
        data_files = [{"split": k, "path": v} for k, v in data_files.items()]
    out = {}
    for item in data_files:
        patterns = item.get("path", [])
        patterns = [patterns] if isinstance(patterns, str) else list(patterns)
        files = []
        for pattern in patterns:
            files += sorted(glob.glob(os.path.join(path, pattern), recursive=True))
        out[str(item.get("split", "train"))] = [f for f in files if os.path.isfile(f)]
    return out


def _data_files_under(path: str) -> list[str]:
    return sorted(f for f in glob.glob(os.path.join(path, "**", "*"), recursive=True)
                  if os.path.isfile(f) and f.lower().endswith(DATA_EXTENSIONS))


def _split_of(file: str, root: str) -> str:
    """The split a data file holds, by the Hub's naming rule: the first path part (file
    name stem or a folder) that names a split, else 'train'."""
    rel = os.path.relpath(file, root).replace(os.sep, "/")
    stem = rel.rsplit("/", 1)[-1].split(".", 1)[0]
    for word in [stem.split("-", 1)[0], *rel.split("/")[:-1]]:
        if word in (*SPLITS, "corpus", "queries", "query"):
            return word
    return stem.split("-", 1)[0] or "train"


def config_splits(folder, names) -> tuple[str, dict[str, list[str]]] | None:
    """(config name, {split: [files]}) of the first of ``names`` found in ``folder``, or None."""
    folder = os.fspath(folder)
    configs = {str(c.get("config_name", "default")): c for c in _front_matter_configs(folder) if isinstance(c, dict)}
    for name in names:
        if name in configs:
            return name, _readme_files(folder, configs[name])
    if _saved(folder) == "dict":  # one DatasetDict: splits named corpus, queries, test...
        splits = _saved_splits(folder)
        if names is CORPUS_CONFIGS and "corpus" in splits:
            return "corpus", {"corpus": _saved_files(splits["corpus"])}
        if names is QUERIES_CONFIGS:
            for q in QUERIES_CONFIGS:
                if q in splits:
                    return q, {q: _saved_files(splits[q])}
        if names is QRELS_CONFIGS:
            rest = {s: _saved_files(d) for s, d in splits.items() if s not in (*CORPUS_CONFIGS, *QUERIES_CONFIGS)}
            if rest:
                return "default", rest
    for name in names:
        sub = os.path.join(folder, name)
        kind = _saved(sub) if os.path.isdir(sub) else None
        if kind == "dict":
            return name, {s: _saved_files(d) for s, d in _saved_splits(sub).items()}
        if kind == "dataset":
            return name, {name if name != "default" else "test": _saved_files(sub)}
        if os.path.isdir(sub):
            files = _data_files_under(sub)
            if files:
                splits: dict[str, list[str]] = {}
                for f in files:
                    splits.setdefault(_split_of(f, sub), []).append(f)
                return name, splits
        for ext in (".jsonl", ".parquet", ".jsonl.gz"):
            if os.path.isfile(sub + ext):
                return name, {name: [sub + ext]}
    if names is QRELS_CONFIGS and _root_splits(folder):
        return "default", _root_splits(folder)
    return None


# ---------------------------------------------------------------------------
# Reading files into Arrow tables


def read_table(files: list[str]) -> pa.Table:
    """One Arrow table from Parquet, Arrow (save_to_disk's stream files), JSON lines or
    TSV/CSV files of the same columns."""
    tables = [_read_one(f) for f in files]
    if len(tables) == 1:
        return tables[0]
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ParseError(files[0], None, f"its files do not share columns ({exc})")


def _read_one(file: str) -> pa.Table:
    low = file.lower()
    try:
        if low.endswith(".parquet"):
            import pyarrow.parquet as pq

            return pq.read_table(file)
        if low.endswith(".arrow"):
            import pyarrow.ipc as ipc

            with pa.memory_map(file) as source:
                try:
                    return ipc.open_stream(source).read_all()
                except pa.ArrowInvalid:
                    source.seek(0)
                    return ipc.open_file(source).read_all()
        if low.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz")):
            import pyarrow.json as pajson

            with pa.input_stream(file, compression="detect") as stream:
                return pajson.read_json(stream)
        if low.endswith((".tsv", ".csv")):
            import pyarrow.csv as pacsv

            return pacsv.read_csv(file, parse_options=pacsv.ParseOptions(delimiter="\t" if low.endswith(".tsv") else ","),
                                  convert_options=pacsv.ConvertOptions(column_types={
                                      "query-id": pa.string(), "corpus-id": pa.string(), "_id": pa.string(),
                                      "id": pa.string()}))
    except (pa.ArrowInvalid, OSError) as exc:
        raise ParseError(file, None, f"not readable as {low.rsplit('.', 1)[-1]} ({exc})")
    raise ParseError(file, None, f"unknown data file type (known: {', '.join(DATA_EXTENSIONS)})")


def _sha256(files: list[str]) -> str:
    h = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def _column(table: pa.Table, names, where: str, what: str) -> pa.ChunkedArray:
    for n in names:
        if n in table.column_names:
            return table[n]
    raise ParseError(where, None, f"no {what} column (looked for {', '.join(names)}; found {', '.join(table.column_names)})")


def _strings(col: pa.ChunkedArray) -> list[str]:
    if not pa.types.is_string(col.type):
        col = col.cast(pa.string())
    return ["" if v is None else v for v in col.to_pylist()]


# ---------------------------------------------------------------------------
# The three parts of a BEIR collection


def load_qrels(folder, split: str = "test", on_duplicate: str = "error", subset: str | None = None):
    """The qrels of one split (the ``default`` or ``qrels`` config; of a subset: mteb's
    ``<subset>-qrels``). Without ``subset``, a folder holding one subset only is read at it;
    several are one error listing them."""
    folder = os.fspath(folder)
    found = config_splits(folder, _names(QRELS_CONFIGS, subset, "qrels"))
    held = subsets(folder) if found is None else []
    if found is None and subset is None and len(held) == 1:
        return load_qrels(folder, split, on_duplicate, held[0])
    if found is None and (held or subset not in (None, "default")):
        raise ParseError(folder, None, f"no qrels for subset {subset or 'default'!r}: "
                                       + (f"the folder holds the subsets {', '.join(held)}; choose one with "
                                          "--subset NAME (judged eval) or subset=NAME" if held else
                                          "the folder holds no subsets (no <subset>-qrels config)"))
    if found is None:
        raise ParseError(folder, None, "no qrels here (looked for a 'default' or 'qrels' config: README.md configs, "
                                       "save_to_disk folders, qrels/ and default/ folders of data files, or split files "
                                       "such as test.tsv at the root)")
    config, splits = found
    if split not in splits:
        raise ParseError(folder, None, f"no qrels for split {split!r} in config {config!r}"
                                       + (f" (splits here: {', '.join(sorted(splits))})" if splits else ""))
    files = splits[split]
    if not files:
        raise ParseError(folder, None, f"config {config!r} split {split!r} names no file that exists")
    source = files[0] if len(files) == 1 else f"{folder} ({config}/{split})"
    table = read_table(files)
    q = frames.qrels_from_table(table, source=source, on_duplicate=on_duplicate)
    q.sha256 = _sha256(files)
    return q


# ---------------------------------------------------------------------------
# In memory: datasets.Dataset and DatasetDict


def memory_table(obj, split: str = "test") -> tuple[pa.Table, str]:
    """(Arrow table, source name) of an in-memory ``Dataset`` (as it is: its rows after any
    ``select``/``filter``) or of the split ``split`` of a ``DatasetDict``."""
    kind = type(obj).__name__
    if kind == "DatasetDict":
        if split not in obj:
            raise ParseError("<datasets.DatasetDict>", None, f"no split {split!r} (splits here: "
                                                             f"{', '.join(sorted(obj)) or 'none'}); choose one with "
                                                             "judged.core.io.dataset_qrels(d, split) or d[split]")
        obj, source = obj[split], f"<datasets.DatasetDict[{split!r}]>"
    else:
        source = "<datasets.Dataset>"
    if type(obj).__name__ != "Dataset" or not hasattr(obj, "with_format"):
        raise TypeError(f"cannot read datasets.{type(obj).__name__}: give a Dataset or a DatasetDict "
                        "(an IterableDataset: Dataset.from_generator(lambda: (yield from d)))")
    return obj.with_format("arrow")[:], source


def qrels_from_memory(obj, split: str = "test", on_duplicate: str = "error"):
    """The qrels of an in-memory ``Dataset`` or of one split of a ``DatasetDict``
    (``query-id``, ``corpus-id``, ``score`` columns, or judged's own names)."""
    table, source = memory_table(obj, split)
    return frames.qrels_from_table(table, source=source, on_duplicate=on_duplicate)


def _records(folder, names, split: str | None, what: str) -> tuple[pa.Table, str]:
    folder = os.fspath(folder)
    found = config_splits(folder, names)
    if found is None:
        held = subsets(folder)
        raise ParseError(folder, None, f"no {what} here (looked for a {' or '.join(repr(n) for n in names)} config"
                                       + (f"; the folder holds the subsets {', '.join(held)}: choose one with "
                                          "subset=NAME)" if held and not names[0].endswith(SUBSET_PARTS) else ")"))
    _, splits = found
    files = splits[split] if split in splits else [f for fs in splits.values() for f in fs]
    if not files:
        raise ParseError(folder, None, f"the {what} config names no file that exists")
    return read_table(files), files[0]


def load_queries(folder, split: str | None = None, subset: str | None = None) -> dict[str, str]:
    """Query id -> text (the ``queries`` config, a subset's ``<subset>-queries``; its split
    ``split`` when it has one)."""
    table, where = _records(folder, _names(QUERIES_CONFIGS, subset, "queries"), split, "queries")
    ids = _strings(_column(table, ("_id", "id", "query-id", "query_id"), where, "query id"))
    texts = _strings(_column(table, ("text", "query"), where, "text"))
    return dict(zip(ids, texts))


def load_docs(folder, doc_ids=None, subset: str | None = None) -> dict[str, dict]:
    """Document id -> ``{"title", "text"}`` (the ``corpus`` config, a subset's
    ``<subset>-corpus``); only ``doc_ids`` when given."""
    table, where = _records(folder, _names(CORPUS_CONFIGS, subset, "corpus"), None, "corpus")
    id_col = _column(table, ("_id", "id", "corpus-id", "doc_id", "docid"), where, "document id")
    if doc_ids is not None:
        import pyarrow.compute as pc

        keep = pc.is_in(id_col.cast(pa.string()) if not pa.types.is_string(id_col.type) else id_col,
                        value_set=pa.array([str(d) for d in doc_ids], pa.string()))
        table = table.filter(keep)
        id_col = _column(table, ("_id", "id", "corpus-id", "doc_id", "docid"), where, "document id")
    ids = _strings(id_col)
    texts = _strings(_column(table, ("text", "contents", "body"), where, "text"))
    titles = _strings(table["title"]) if "title" in table.column_names else [""] * len(ids)
    return {i: {"title": t, "text": x} for i, t, x in zip(ids, titles, texts)}
