"""Frozen evaluation sets (manifests) and evaluation records.

A **manifest** (``judged freeze ... -o eval.toml``) fixes what a paired comparison
must hold constant: the query set, the relevance unit, the grade scale, every
measure with its gain, discount, cutoff and convention string, the engine-wide
conventions, the corpus id, and the sha256 of the qrels and queries files, plus a
fingerprint of each query's judgments so that a refusal can say *which* queries
changed. ``evaluate_frozen`` evaluates under exactly those settings and refuses
qrels whose judgments or query set differ.

A **record** (``--save record.json``) keeps one evaluation: per-query values, the
ranked docids down to the deepest cutoff, the ideal grade sequence of every query,
conventions, hashes and the tool version; ``judged compare-records`` compares two.

Matching is on content: a qrels file re-saved with other white space or gzipped
still matches (same judgments); the file sha256 is recorded and reported too.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import dataclass, field, replace

import numpy as np

from . import __version__
from .words import counted
from .conventions import Settings
from .errors import JudgedError, ParseError
from .io.text import read_raw, decode_utf8, read_bytes
from .data import Qrels
from .io import read_qrels
from .measures import parse_measures, Measure
from .io.output import open_replacing
from .io.toml import read_toml

MANIFEST_FORMAT = "judged-manifest/1"
RECORD_FORMAT = "judged-record/1"
RELEVANCE_UNITS = ("document", "passage", "other")


class ManifestError(JudgedError):
    """The qrels or query set no longer match a frozen manifest (the message is the diff)."""


class _Shape:
    """Checks of a parsed manifest or record: each value of the expected type, else a
    ParseError naming the file and the key (``runs.bm25.per_query.q1``)."""

    NAMES = {dict: "a mapping", list: "a list", str: "a string", bool: "true or false", float: "a number"}

    def __init__(self, source: str, what: str):
        self.source, self.what = source, what

    def of(self, value, kind, where: str):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float else isinstance(value, kind)
        if not ok:
            got = "nothing" if value is None else f"{type(value).__name__} {_short(value)}"
            raise ParseError(self.source, None, f"not a {self.what}: {where} should be {self.NAMES[kind]}, got {got}")
        return value

    def get(self, obj, key: str, kind, prefix: str = ""):
        return self.of(obj.get(key), kind, prefix + key)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------------------
# qrels content: a fingerprint per query, and what changed between two


def qrels_summary(qrels) -> dict:
    """path, file sha256, counts, grade scale and ``per_query``: qid -> "n:hash" where n
    is the query's number of judgments and hash the sha256 (16 hex) of its sorted
    ``docid<TAB>grade`` lines (subtopic qrels, read for a diversity measure: its sorted
    ``docid<TAB>subtopic<TAB>grade`` lines, so a changed subtopic judgment is seen)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    sub = qrels.meta.get("subtopics")
    table = pa.table({"q": qrels.qid, "d": qrels.docid, "g": pa.array(qrels.grade)} if sub is None else
                     {"q": sub.qid, "d": sub.docid, "s": sub.subtopic, "g": pa.array(sub.grade)})
    keys = [("q", "ascending"), ("d", "ascending")] + ([] if sub is None else [("s", "ascending")])
    table = table.take(pc.sort_indices(table, sort_keys=keys))
    q = table["q"].to_pylist()
    lines = [f"{d}\t{g}\n".encode() for d, g in zip(table["d"].to_pylist(), table["g"].to_pylist())] if sub is None \
        else [f"{d}\t{t}\t{g}\n".encode() for d, t, g in zip(table["d"].to_pylist(), table["s"].to_pylist(),
                                                             table["g"].to_pylist())]
    per_query, start = {}, 0
    for end in range(1, len(q) + 1):
        if end == len(q) or q[end] != q[start]:
            h = hashlib.sha256(b"".join(lines[start:end])).hexdigest()[:16]
            per_query[q[start]] = f"{end - start}:{h}"
            start = end
    return {"path": qrels.source, "sha256": qrels.sha256, "judgments": int(len(qrels)),
            "queries": len(per_query), "grades": sorted(set(np.unique(qrels.grade).tolist())),
            "per_query": per_query}


def qrels_changes(old: dict, new: dict, limit: int = 8) -> list[str]:
    """What changed between two :func:`qrels_summary` dicts, one line per kind (empty: same judgments)."""
    a, b = old.get("per_query", {}), new.get("per_query", {})
    if a == b:
        return []
    out = []
    if old.get("sha256") != new.get("sha256"):
        out.append(f"qrels sha256 {str(old.get('sha256'))[:12]}… -> {str(new.get('sha256'))[:12]}…, "
                   f"{old.get('judgments')} -> {counted(new.get('judgments'), 'judgment')}")
    removed, added = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    changed = sorted(q for q in set(a) & set(b) if a[q] != b[q])
    if changed:
        detail = ", ".join(f"{q} ({_count_change(a[q], b[q])})" for q in changed[:limit])
        out.append(f"judgments changed for {len(changed)} quer{'y' if len(changed) == 1 else 'ies'}: "
                   f"{detail}{', …' if len(changed) > limit else ''}")
    if added:
        out.append(f"{len(added)} quer{'y' if len(added) == 1 else 'ies'} newly judged: {_few(added, limit)}")
    if removed:
        out.append(f"{len(removed)} quer{'y' if len(removed) == 1 else 'ies'} no longer judged: {_few(removed, limit)}")
    return out


def _count_change(old: str, new: str) -> str:
    n_old, n_new = old.split(":")[0], new.split(":")[0]
    if n_old == n_new:
        return f"{counted(n_old, 'judgment')}, a grade or docid differs"
    return f"{n_old} -> {counted(n_new, 'judgment')}"


def _few(items, limit) -> str:
    return ", ".join(map(str, items[:limit])) + (", …" if len(items) > limit else "")


# ---------------------------------------------------------------------------
# query files


def read_query_ids(path) -> tuple[list[str], str]:
    """Query ids of a queries file and its sha256: BEIR ``queries.jsonl`` (``_id``),
    JSON (a list of ids or an object keyed by id), or text/TSV (first field of each
    line; a header ``query-id``/``qid``/``_id`` and ``#`` lines skipped)."""
    raw = read_raw(path)
    name = raw.name.lower().removesuffix(".gz")
    try:
        text = raw.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(raw.name, raw.data.count(b"\n", 0, exc.start) + 1, "not UTF-8 text, not a queries file")
    if name.endswith(".jsonl"):
        ids = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    obj = json.loads(line)
                except ValueError:
                    obj = None
                qid = next((obj[k] for k in ("_id", "query_id", "qid") if k in obj), None) \
                    if isinstance(obj, dict) else None
                if qid is None:
                    raise ParseError(raw.name, lineno, "not a JSON object with an _id")
                ids.append(str(qid))
    elif name.endswith(".json"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(raw.name, exc.lineno, f"not JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(obj, (list, dict)):
            raise ParseError(raw.name, None, "a JSON queries file is a list of ids or an object keyed by id")
        ids = [str(x) for x in (obj if isinstance(obj, list) else obj.keys())]
    else:
        ids = [line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")]
        if ids and ids[0].lower() in ("query-id", "query_id", "qid", "_id", "id"):
            ids = ids[1:]
    return sorted(set(ids)), raw.sha256


# ---------------------------------------------------------------------------
# manifests


@dataclass
class Manifest:
    measures: list  # dicts: measure (canonical), convention, cutoff, ...
    conventions: dict  # ties, complete, no_relevant, canonical
    qrels: dict  # qrels_summary + relevance_unit
    queries: dict  # path, sha256, ids
    corpus: dict = field(default_factory=dict)
    tool: str = ""
    created: str = ""
    path: str | None = None  # where it was read from

    # -- building ---------------------------------------------------------------
    @staticmethod
    def freeze(qrels, measures, *, queries=None, corpus_id: str | None = None, relevance_unit: str = "document",
               settings: Settings | None = None) -> "Manifest":
        """Freeze an evaluation set. The query set is the queries file's ids (if given),
        else the qrels' queries; a query of the set missing from a run scores 0 (``complete``).
        ``settings``: the conventions (default trec_eval's; no ``depth_cut``)."""
        if relevance_unit not in RELEVANCE_UNITS:
            raise JudgedError(f"relevance unit must be one of {', '.join(RELEVANCE_UNITS)}")
        settings = replace(Settings() if settings is None else settings, complete=True)
        if settings.depth_cut is not None:
            raise JudgedError("a manifest does not record depth_cut: freeze without it")
        parsed = parse_measures(measures)
        q = read_qrels(qrels, on_duplicate=settings.on_duplicate, subtopics=any(m.family.subtopics for m in parsed))
        if queries is not None:
            ids, sha = read_query_ids(queries)
            qdesc = {"path": os.fspath(queries), "sha256": sha, "ids": ids}
            q = restrict(q, ids)
        else:
            qdesc = {"path": "", "sha256": "", "ids": [str(x) for x in q.query_ids.tolist()]}
        summary = qrels_summary(q)
        summary["relevance_unit"] = relevance_unit
        qdesc["count"] = len(qdesc["ids"])
        qdesc["without_judgments"] = len(set(qdesc["ids"]) - set(summary["per_query"]))
        ms = [_measure_entry(m, settings) for m in parsed]
        conv = {"ties": settings.ties, "complete": settings.complete, "no_relevant": settings.no_relevant,
                "ignore_identical_ids": settings.ignore_identical_ids, "canonical": settings.canonical()}
        return Manifest(ms, conv, summary, qdesc, {"id": corpus_id or ""}, f"judged {__version__}",
                        _now())

    # -- files ------------------------------------------------------------------
    def to_dict(self) -> dict:
        qrels = {k: v for k, v in self.qrels.items() if k != "per_query"}
        qrels["per_query"] = dict(self.qrels["per_query"])
        return {"format": MANIFEST_FORMAT, "tool": self.tool, "created": self.created, "corpus": self.corpus,
                "conventions": self.conventions, "queries": self.queries, "qrels": qrels, "measures": self.measures}

    def write(self, path) -> None:
        """Write the TOML file; file paths are stored relative to its folder."""
        import tomli_w

        folder = os.path.dirname(os.path.abspath(path))
        for section in (self.qrels, self.queries):
            if section.get("path") and os.path.exists(section["path"]):
                section["path"] = os.path.relpath(os.path.abspath(section["path"]), folder)
        self.path = os.fspath(path)
        text = ("# judged evaluation manifest: a frozen query set, judgments and conventions.\n"
                "# judged eval/compare --manifest THIS refuse qrels or queries that no longer match.\n")
        text += tomli_w.dumps(_toml_safe(self.to_dict()))
        with open_replacing(path) as fh:
            fh.write(text)

    @staticmethod
    def load(path) -> "Manifest":
        """Read a manifest written by :meth:`write`. A file that is not one (missing,
        binary, not TOML, a section missing or of the wrong type, a measure or convention
        that no longer parses) is a :class:`~judged.core.errors.ParseError` naming the file."""
        if isinstance(path, Manifest):
            return path
        name = os.fspath(path)
        data = read_toml(name, "judged manifest")
        if data.get("format") != MANIFEST_FORMAT:
            raise ParseError(name, None, f"not a judged manifest (format {data.get('format')!r}, "
                                         f"expected {MANIFEST_FORMAT!r})")
        shape = _Shape(name, "judged manifest")
        measures = shape.get(data, "measures", list)
        if not measures:
            raise ParseError(name, None, "not a judged manifest: measures is empty")
        for i, entry in enumerate(measures):
            shape.of(entry, dict, f"measures[{i}]")
            shape.get(entry, "measure", str, f"measures[{i}].")
            shape.get(entry, "convention", str, f"measures[{i}].")
        conventions = shape.get(data, "conventions", dict)
        for key, kind in (("ties", str), ("complete", bool), ("no_relevant", str)):
            shape.get(conventions, key, kind, "conventions.")
        qrels = shape.get(data, "qrels", dict)
        shape.get(qrels, "path", str, "qrels.")
        for q, fingerprint in shape.get(qrels, "per_query", dict, "qrels.").items():
            shape.of(fingerprint, str, f"qrels.per_query.{q}")
        queries = shape.get(data, "queries", dict)
        if shape.get(queries, "path", str, "queries."):
            for i, q in enumerate(shape.get(queries, "ids", list, "queries.")):
                shape.of(q, str, f"queries.ids[{i}]")
        corpus = data.get("corpus", {})
        m = Manifest(measures, conventions, qrels, queries, corpus if isinstance(corpus, dict) else {},
                     str(data.get("tool", "")), str(data.get("created", "")), name)
        try:  # the conventions and measures must still mean something to this version
            m.settings()
            for entry in measures:
                Measure.parse(entry["measure"])
        except JudgedError as exc:
            raise ParseError(name, None, f"not a usable judged manifest: {exc}") from None
        return m

    # -- use ----------------------------------------------------------------------
    @property
    def measure_strings(self) -> list[str]:
        return [m["measure"] for m in self.measures]

    def provenance(self) -> dict:
        """Where this manifest was read from and the sha256 of that file."""
        return {"path": self.path, "sha256": _file_sha(self.path)}

    def settings(self) -> Settings:
        c = self.conventions
        return Settings(ties=c["ties"], complete=bool(c["complete"]), no_relevant=c["no_relevant"],
                        ignore_identical_ids=bool(c.get("ignore_identical_ids", False)))

    def resolve(self, path: str) -> str:
        """A path recorded in the manifest: relative to the manifest's folder (else as is)."""
        if not path or os.path.isabs(path) or not self.path:
            return path
        beside = os.path.join(os.path.dirname(os.path.abspath(self.path)), path)
        return beside if os.path.exists(beside) else path

    def check(self, qrels, queries=None):
        """Refuse (ManifestError with the diff) judgments, a query set or conventions
        that differ from the frozen ones; return the qrels restricted to the query set."""
        diff = []
        if self.queries.get("path"):
            qpath = queries or self.resolve(self.queries["path"])
            ids, sha = read_query_ids(qpath)
            if ids != self.queries["ids"]:
                added, removed = sorted(set(ids) - set(self.queries["ids"])), sorted(set(self.queries["ids"]) - set(ids))
                diff.append(f"query set {qpath} changed: {len(added)} added ({_few(added, 8)}), "
                            f"{len(removed)} removed ({_few(removed, 8)})")
            qrels = restrict(qrels, self.queries["ids"])
        diff += qrels_changes(self.qrels, qrels_summary(qrels))
        settings = self.settings()
        for m in self.measures:
            now = Measure.parse(m["measure"]).convention(settings)
            if now != m["convention"]:
                diff.append(f"measure {m['measure']} now means {now!r}, frozen as {m['convention']!r}")
        if diff:
            where = self.path or "the manifest"
            raise ManifestError(f"the evaluation set no longer matches {where}:\n  - " + "\n  - ".join(diff))
        return qrels


def _measure_entry(m, settings) -> dict:
    entry = {"measure": str(m), "convention": m.convention(settings), "cutoff": m.cutoff or 0}
    if "gain" in m.family.params:
        entry.update(gain=str(m.gain), discount=str(m.discount))
        if "ideal" in m.family.params:
            entry["ideal"] = m.ideal
    if m.family.reads not in ("judged", "retrieved"):
        entry["rel"] = m.rel
    entry["unjudged"] = m.unjudged
    return entry


def _toml_safe(obj):
    """TOML has no null: drop None values (tomli-w refuses them)."""
    if isinstance(obj, dict):
        return {str(k): _toml_safe(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, (list, tuple)):
        return [_toml_safe(v) for v in obj]
    return obj


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def restrict(qrels, qids):
    """The qrels of the given queries only (file sha256 and source kept)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = pc.is_in(qrels.qid, value_set=pa.array(list(qids), type=pa.string()))
    if pc.all(mask).as_py():
        return qrels
    keep = np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)
    return Qrels(qrels.qid.filter(mask), qrels.docid.filter(mask), qrels.grade[keep], source=qrels.source,
                 sha256=qrels.sha256)


def evaluate_frozen(manifest, runs, *, qrels=None, queries=None, on_duplicate: str = "error", **checks):
    """:func:`judged.evaluate` under a manifest's measures and conventions, after
    checking that the qrels (default: the manifest's qrels path) still match it.
    ``checks`` (scale, requirements, eligibility, ...) go to ``evaluate`` as they are."""
    from .evaluation import evaluate
    m = Manifest.load(manifest)
    if qrels is None:
        qrels = m.resolve(m.qrels["path"])
        if not os.path.exists(qrels) and not qrels.startswith("irds:"):  # ir_datasets ids are not paths
            raise ParseError(m.path or "the manifest", None, f"its qrels file {qrels!r} no longer exists "
                                                             "(paths are relative to the manifest's folder)")
    q = read_qrels(qrels, on_duplicate=on_duplicate,
                   subtopics=any(x.family.subtopics for x in parse_measures(m.measure_strings)))
    q = m.check(q, queries)
    return evaluate(q, runs, m.measure_strings, settings=replace(m.settings(), on_duplicate=on_duplicate), **checks)


# ---------------------------------------------------------------------------
# records


def record(result, manifest=None) -> dict:
    """An evaluation record of a :class:`~judged.core.evaluation.Result`: per-query values,
    ranked docids down to the deepest cutoff (whole rankings if a measure has none),
    each query's ideal grade sequence to that depth, conventions, hashes, tool version."""
    cutoffs = [m.cutoff for m in result.measures.values()]
    depth = None if any(c is None for c in cutoffs) or not cutoffs else max(cutoffs)
    ideal, runs = {}, {}
    for name, rr in result.runs.items():
        al = rr.aligned
        qids = [str(x) for x in rr.qids.tolist()]
        jo, jg = al.judgments.offsets, al.judgments.grade
        ro, rows = al.ranked.offsets, al.ranked.row
        ranked = {}
        for i, q in enumerate(qids):
            if q not in ideal:
                g = np.sort(jg[jo[i]:jo[i + 1]][jg[jo[i]:jo[i + 1]] >= 0])[::-1]
                ideal[q] = g[:depth].tolist()
            hi = ro[i + 1] if depth is None else min(ro[i + 1], ro[i] + depth)
            ranked[q] = al.docids(rows[ro[i]:hi])
        runs[name] = {"path": al.run.source, "sha256": al.run.sha256, "queries": dict(rr.counts),
                      "mean": {g: result.aggregate(name, g) for g in result.measures},
                      "per_query": {q: {g: float(rr.values[g][i]) for g in result.measures} for i, q in enumerate(qids)},
                      "ranked": ranked}
    return {"format": RECORD_FORMAT, "tool": f"judged {__version__}", "created": _now(),
            "settings": {"ties": result.settings.ties, "complete": result.settings.complete,
                         "no_relevant": result.settings.no_relevant,
                         "ignore_identical_ids": result.settings.ignore_identical_ids,
                         "canonical": result.settings.canonical()},
            "measures": result.conventions, "ranked_depth": depth, "qrels": qrels_summary(result.qrels),
            "manifest": None if manifest is None else Manifest.load(manifest).provenance(),
            "ideal_grades": ideal, "runs": runs}


def _file_sha(path) -> str | None:
    if not path:
        return None
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def save_record(result, path, manifest=None) -> dict:
    """Write :func:`record` as JSON (and return it); an existing file is replaced only once
    it is complete."""
    data = record(result, manifest)
    with open_replacing(path) as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    return data


def load_record(source) -> dict:
    """A record saved by :func:`save_record` (a path or the dict itself). A file that is
    not one (missing, binary, not JSON, a key missing or of the wrong type) is a
    :class:`~judged.core.errors.ParseError` naming the file and the key."""
    if isinstance(source, dict):
        return check_record(source, "<record>")
    name = os.fspath(source)
    try:
        data = json.loads(decode_utf8(name, read_bytes(name, "record"), "record"))
    except json.JSONDecodeError as exc:
        raise ParseError(name, exc.lineno, f"not a JSON record: {exc.msg} (column {exc.colno})") from None
    return check_record(data, name)


def check_record(data, source: str = "<record>") -> dict:
    """``data`` if it has a record's shape: format, qrels fingerprints, measures (name ->
    convention) and runs whose per-query entries hold a number for every measure."""
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        raise ParseError(source, None, f"not a judged evaluation record (expected format {RECORD_FORMAT!r})")
    shape = _Shape(source, "judged evaluation record")
    qrels = shape.get(data, "qrels", dict)
    for q, fingerprint in shape.get(qrels, "per_query", dict, "qrels.").items():
        shape.of(fingerprint, str, f"qrels.per_query.{q}")
    measures = shape.get(data, "measures", dict)
    for m, convention in measures.items():
        shape.of(convention, str, f"measures.{m}")
    runs = shape.get(data, "runs", dict)
    if not runs:
        raise ParseError(source, None, "not a judged evaluation record: it holds no run")
    for run, entry in runs.items():
        shape.of(entry, dict, f"runs.{run}")
        for q, values in shape.get(entry, "per_query", dict, f"runs.{run}.").items():
            where = f"runs.{run}.per_query.{q}"
            shape.of(values, dict, where)
            for m in measures:
                shape.get(values, m, float, where + ".")
    return data
