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

DEFAULT_SCALE = {
    "evidence": "required",
    "grade": [
        {"value": 0, "name": "not relevant",
         "definition": "Does not help answer the query, even if it shares its words.",
         "examples": ["A page that mentions the query's terms in passing, about another subject."]},
        {"value": 1, "name": "useful background",
         "definition": "On the query's topic and useful context, but does not itself answer it.",
         "examples": ["A general overview of the field the question belongs to."]},
        {"value": 2, "name": "direct support",
         "definition": "Contains a passage that directly supports part of the answer.",
         "examples": ["A study reporting one of the facts the answer needs."]},
        {"value": 3, "name": "complete answer",
         "definition": "Answers the query fully on its own.",
         "examples": ["A passage stating the answer with its conditions and source."]},
    ],
}


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


def read_scale(path: str | Path | None) -> Scale:
    """A TOML file: ``evidence = "required"|"optional"`` and ``[[grade]]`` tables with
    ``value`` (int), ``name``, ``definition``, ``examples`` (list of strings)."""
    if path is None:
        data = DEFAULT_SCALE
    else:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ParseError(str(path), None, f"not TOML: {exc}") from None
    src = str(path or "default scale")
    grades = data.get("grade")
    if not isinstance(grades, list) or not grades:
        raise ParseError(src, None, "the scale needs [[grade]] tables")
    out = []
    for g in grades:
        if not isinstance(g.get("value"), int) or isinstance(g.get("value"), bool):
            raise ParseError(src, None, f"grade {g.get('name')!r}: value must be an integer")
        if not g.get("name"):
            raise ParseError(src, None, f"grade {g['value']}: needs a name")
        out.append({"value": g["value"], "name": str(g["name"]), "definition": str(g.get("definition", "")),
                    "examples": [str(e) for e in g.get("examples", [])]})
    if len({g["value"] for g in out}) != len(out):
        raise ParseError(src, None, "grade values repeat")
    evidence = data.get("evidence", "required")
    if evidence not in ("required", "optional"):
        raise ParseError(src, None, 'evidence must be "required" or "optional"')
    return Scale(sorted(out, key=lambda g: g["value"]), evidence == "required")
