"""Readers for a campaign's inputs: the pool, the queries, the corpus and the grade scale.

Pool (the format ``judged pool`` writes): one (qid, docid) pair per line, qid and docid
the first two whitespace-separated fields, further fields ignored; lines starting with
``#`` and blank lines are skipped. Queries: TSV ``qid<TAB>text`` or BEIR ``queries.jsonl``
(``_id``, ``text``). Corpus: BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

@dataclass(frozen=True)
class Pool:
    pairs: list[tuple[str, str]]
    sha256: str
    duplicates: int = 0


@dataclass(frozen=True)
class Scale:
    """Grades with name, definition and examples; ``evidence_required``: grades above 0 need
    a quoted passage or a note (``evidence = "required"``, the default) or not (``"optional"``)."""
    grades: list[dict] = field(default_factory=list)
    evidence_required: bool = True

    @property
    def values(self) -> set[int]:
        return {g["value"] for g in self.grades}

    def to_dict(self) -> dict:
        return {"evidence": "required" if self.evidence_required else "optional", "grade": self.grades}


def read_pool(path: str | Path) -> Pool:
    raw = Path(path).read_bytes()
    seen: set[tuple[str, str]] = set()
    pairs, dups = [], 0
    for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        if len(fields) < 2:
            raise ParseError(str(path), n, "a pool line needs qid and docid (two whitespace-separated fields)")
        pair = (fields[0], fields[1])
        if pair in seen:
            dups += 1
            continue
        seen.add(pair)
        pairs.append(pair)
    if not pairs:
        raise ParseError(str(path), None, "the pool holds no (qid, docid) pair")
    return Pool(pairs, hashlib.sha256(raw).hexdigest(), dups)


def _jsonl(path: Path):
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ParseError(str(path), n, f"not JSON: {exc.msg}") from None
            if not isinstance(obj, dict) or "_id" not in obj:
                raise ParseError(str(path), n, 'a JSON line needs an "_id" field')
            yield n, obj


def read_queries(path: str | Path, wanted: set[str] | None = None) -> dict[str, str]:
    """qid -> text, from TSV ``qid<TAB>text`` or BEIR ``queries.jsonl``."""
    path = Path(path)
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        first = fh.read(1)
    if path.suffix == ".jsonl" or first == "{":
        for _, obj in _jsonl(path):
            out[str(obj["_id"])] = str(obj.get("text", ""))
    else:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                if "\t" not in line:
                    raise ParseError(str(path), n, "a query line is qid<TAB>text")
                qid, text = line.split("\t", 1)
                out[qid.strip()] = text
    return out if wanted is None else {q: t for q, t in out.items() if q in wanted}


def read_corpus(path: str | Path, wanted: set[str]) -> dict[str, tuple[str, str]]:
    """docid -> (title, text) for the wanted docids, streamed from BEIR ``corpus.jsonl``."""
    out: dict[str, tuple[str, str]] = {}
    for _, obj in _jsonl(Path(path)):
        docid = str(obj["_id"])
        if docid in wanted:
            out[docid] = (str(obj.get("title") or ""), str(obj.get("text") or ""))
    return out


def read_judging_scale(path: str | Path | None) -> Scale:
    """The grade scale the assessors see: the TOML format of :mod:`judged.scale` (``[[grade]]``
    tables with ``value``, ``name``, ``definition``, ``examples``; None: judged's default
    scale), plus one key of the judging app's own, ``evidence = "required"`` (the default:
    grades above the lowest need a quoted passage or a note) or ``"optional"``."""
    from ..scale import read_scale as read_grade_scale

    grade_scale = read_grade_scale(None if path is None else str(path))
    evidence = "required" if path is None else tomllib.loads(Path(path).read_text("utf-8")).get("evidence", "required")
    if evidence not in ("required", "optional"):
        raise ParseError(str(path), None, 'evidence must be "required" or "optional"')
    grades = [{"value": g.value, "name": g.name, "definition": g.definition, "examples": list(g.examples)}
              for g in grade_scale.grades]
    return Scale(grades, evidence == "required")
