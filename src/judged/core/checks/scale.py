"""Grade scales: what each relevance grade means, kept beside the qrels.

A scale is a TOML file, the same one ``judged eval --scale`` checks the qrels against,
reports print, and the judging app shows its assessors::

    name = "default"                      # optional
    description = "..."                   # optional
    [[grade]]                             # one table per grade, any order
    value = 0                             # the integer written in the qrels
    name = "not relevant"                 # short label (required)
    definition = "..."                    # written in terms of the reader's task (required)
    examples = ["...", "..."]             # optional list of strings

Values are distinct integers; names are distinct. The default scale
(``judged/data/default-scale.toml``) is 0 not relevant, 1 useful background, 2 direct
support, 3 complete answer ("define graded labels with examples").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import ParseError
from ..words import counted

DEFAULT_SCALE_FILE = "default-scale.toml"
SCALE_BESIDE_QRELS = ("{stem}.scale.toml", "scale.toml")  # looked for in the qrels' folder


@dataclass(frozen=True)
class Grade:
    value: int
    name: str
    definition: str
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class GradeScale:
    grades: tuple[Grade, ...]  # sorted by value
    name: str = ""
    description: str = ""
    source: str = "<memory>"

    @property
    def values(self) -> list[int]:
        return [g.value for g in self.grades]

    def grade(self, value: int) -> Grade | None:
        return next((g for g in self.grades if g.value == value), None)

    def to_dict(self) -> dict:
        """JSON form (the ``scale`` key of ``judged eval --format json``)."""
        return {"source": self.source, "name": self.name, "description": self.description,
                "grades": [{"value": g.value, "name": g.name, "definition": g.definition,
                            "examples": list(g.examples)} for g in self.grades]}

    def check_qrels(self, qrels) -> None:
        """ParseError naming the qrels file when a grade in it is not on this scale."""
        present, counts = np.unique(qrels.grade, return_counts=True)
        off = [int(v) for v in present if int(v) not in self.values]
        if not off:
            return
        first = int(np.flatnonzero(qrels.grade == off[0])[0])
        n = int(counts[np.isin(present, off)].sum())
        more = f", and {counted(n - 1, 'more judgment', 'more judgments')}" if n > 1 else ""
        raise ParseError(qrels.source, None,
                         f"grade {off[0]} (query {qrels.qid[first].as_py()!r}, docid {qrels.docid[first].as_py()!r}"
                         f"{more}) is not on the grade scale "
                         f"{self.source} (grades {', '.join(map(str, self.values))})"
                         + (f"; other grades off the scale: {', '.join(map(str, off[1:]))}" if len(off) > 1 else ""))


def parse_scale(data: dict, source: str = "<memory>") -> GradeScale:
    """A GradeScale from the parsed TOML (a dict); ParseError(source) when malformed."""
    raw = data.get("grade")
    if not isinstance(raw, list) or not raw:
        raise ParseError(source, None, "a grade scale needs at least one [[grade]] table")
    grades = []
    for i, g in enumerate(raw, start=1):
        where = f"[[grade]] #{i}"
        if not isinstance(g, dict):
            raise ParseError(source, None, f"{where} is not a table")
        value = g.get("value")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParseError(source, None, f"{where}: value must be an integer grade, got {value!r}")
        for key in ("name", "definition"):
            if not isinstance(g.get(key), str) or not g[key].strip():
                raise ParseError(source, None, f"{where} (value {value}): {key} must be a non-empty string")
        examples = g.get("examples", [])
        if isinstance(examples, str):
            examples = [examples]
        if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
            raise ParseError(source, None, f"{where} (value {value}): examples must be a list of strings")
        unknown = set(g) - {"value", "name", "definition", "examples"}
        if unknown:
            raise ParseError(source, None, f"{where} (value {value}): unknown key(s) {', '.join(sorted(unknown))}")
        grades.append(Grade(value, g["name"].strip(), g["definition"].strip(), tuple(examples)))
    for attr in ("value", "name"):
        seen = [getattr(g, attr) for g in grades]
        dup = next((v for v in seen if seen.count(v) > 1), None)
        if dup is not None:
            raise ParseError(source, None, f"grade {attr} {dup!r} appears twice")
    return GradeScale(tuple(sorted(grades, key=lambda g: g.value)), str(data.get("name", "")),
                      str(data.get("description", "")), source)


def read_scale(source) -> GradeScale:
    """Read a grade scale: a TOML path, a GradeScale, or None for the default scale."""
    if isinstance(source, GradeScale):
        return source
    from ..io.toml import read_toml, tomllib  # imported when a scale is read (0.01 s)

    if source is None:
        return parse_scale(tomllib.loads(default_scale_text()), source=f"<default scale: {DEFAULT_SCALE_FILE}>")

    path = os.fspath(source)
    data = read_toml(path, "grade scale file")
    return parse_scale(data, source=path)


def default_scale() -> GradeScale:
    """0 not relevant, 1 useful background, 2 direct support, 3 complete answer."""
    return read_scale(None)


def default_scale_text() -> str:
    """The default scale's TOML text (a starting point to copy and edit)."""
    from importlib import resources

    return resources.files("judged").joinpath("data", DEFAULT_SCALE_FILE).read_text("utf-8")


def scale_beside(qrels_path) -> str | None:
    """A scale kept beside the qrels: ``<stem>.scale.toml`` or ``scale.toml`` in its folder."""
    if not isinstance(qrels_path, (str, os.PathLike)):
        return None
    path = os.fspath(qrels_path)
    folder, base = os.path.split(path)
    stem = base.split(".")[0]
    for pattern in SCALE_BESIDE_QRELS:
        candidate = os.path.join(folder, pattern.format(stem=stem))
        if os.path.isfile(candidate):
            return candidate
    return None
