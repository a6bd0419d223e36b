"""Readers for a campaign's inputs: the pool, the topics, the corpus, the grade scale, the
practice answers and the guidelines.

Pool: the file ``judged pool`` writes, read by the pooling wing's one reader
(:func:`judged.analyses.pooling.poolfile.read_pool_file`); a campaign takes its distinct
(qid, docid) pairs (:func:`pool_pairs`). Topics (:func:`read_topics`): TSV ``qid<TAB>text``, BEIR
``queries.jsonl`` (``_id``, ``text``, and ``title``, ``description``, ``narrative`` at the
top level or under ``metadata``, as BEIR's TREC-COVID has them), or a TREC topic file
(``<top> <num> <title> <desc> <narr>``, or the XML form ``<topic number=...>`` with
``<query>``/``<title>``, ``<question>``/``<description>``, ``<narrative>``), told apart by
content. Corpus: BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``). Practice answers:
TREC qrels (``qid 0 docid grade``).
"""

from __future__ import annotations

import html
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import ParseError
from ..core.io.text import utf8_line
from ..core.io.beir import iter_jsonl
from ..core.io.texts import tsv_texts
from ..core.checks.scale import read_scale as read_grade_scale

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# what no campaign stores, so that every database keeps the same text: NUL (PostgreSQL's
# text type refuses it; SQLite would keep it) and lone surrogates (not encodable as UTF-8)
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
MAX_ID_LENGTH = 200


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored the same on SQLite and PostgreSQL, or None.

    >>> text_problem("a\\x00b"), text_problem("ok")
    ('contains NUL (U+0000), which PostgreSQL cannot store', None)
    """
    m = UNSTORABLE.search(text)
    if m is None:
        return None
    if m.group() == "\x00":
        return "contains NUL (U+0000), which PostgreSQL cannot store"
    return f"contains a lone surrogate (U+{ord(m.group()):04X}), which is not Unicode text"


def _checked(path, line: int | None, what: str, text: str, max_length: int | None = None) -> str:
    """``text`` unchanged, or a ParseError naming the file, the line and the problem."""
    why = text_problem(text)
    if why is None and max_length is not None and len(text) > max_length:
        why = f"is longer than {max_length} characters"
    if why is not None:
        raise ParseError(str(path), line, f"{what} {why}")
    return text


def _decoded_lines(path: Path):
    """(line number, text without its end of line) of a UTF-8 file, streamed; a line that
    is not UTF-8 is a ParseError naming it."""
    with open(path, "rb") as lines:
        for n, line in enumerate(lines, 1):
            yield n, utf8_line(path, n, line)


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


def pool_pairs(pool) -> tuple[list[tuple[str, str]], int]:
    """The distinct (qid, docid) pairs of a pool file read back
    (:class:`~judged.analyses.pooling.poolfile.PoolFile`), in its order, each id one that
    every database stores the same (a ParseError naming the line otherwise), and how many
    lines repeated a pair before them."""
    seen: set[tuple[str, str]] = set()
    pairs, dups = [], 0
    for p, n in zip(pool.pairs, pool.lines):
        pair = (_checked(pool.path, n, "the qid", p.qid, MAX_ID_LENGTH),
                _checked(pool.path, n, "the docid", p.docid, MAX_ID_LENGTH))
        if pair in seen:
            dups += 1
            continue
        seen.add(pair)
        pairs.append(pair)
    if not pairs:
        raise ParseError(pool.path, None, "the pool holds no (qid, docid) pair")
    return pairs, dups


@dataclass(frozen=True)
class Topic:
    """What the assessor reads about a query: ``text`` first (the query as typed: a TREC
    title, a BEIR text), then, when the topic file has them, its description (the
    information need in a sentence) and narrative (what counts as relevant)."""
    qid: str
    text: str
    title: str = ""
    description: str = ""
    narrative: str = ""


def read_topics(path: str | Path, wanted: set[str] | None = None) -> dict[str, Topic]:
    """qid -> :class:`Topic`, from TSV, BEIR JSON lines or a TREC topic file (by content)."""
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        out = _trec_topics(path)
    elif path.suffix == ".jsonl" or head.startswith(b"{"):
        out = {}
        for n, obj in iter_jsonl(path):
            qid = _checked(path, n, "the _id", str(obj["_id"]), MAX_ID_LENGTH)
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}

            def field(*names):
                for source in (obj, meta):
                    for name in names:
                        if source.get(name):
                            return _checked(path, n, f"the {name}", str(source[name]))
                return ""
            out[qid] = Topic(qid, field("text", "query"), field("title"), field("description", "question", "desc"),
                             field("narrative", "narr"))
    else:
        out = {}
        for n, qid, text in tsv_texts(path, text=False):      # NUL is named by _checked
            qid = _checked(path, n, "the qid", qid.strip(), MAX_ID_LENGTH)
            out[qid] = Topic(qid, _checked(path, n, "the text", text))
    return out if wanted is None else {q: t for q, t in out.items() if q in wanted}


_TOPIC = re.compile(r"<top>(.*?)</top>|<topic\b([^>]*)>(.*?)</topic>", re.S | re.I)
_TAG = re.compile(r"<(num|title|desc|narr|query|question|description|narrative)\b[^>]*>", re.I)
_LABEL = re.compile(r"^\s*(number|description|narrative)\s*:\s*", re.I)


def _trec_topics(path: Path) -> dict[str, Topic]:
    """TREC topics: SGML ``<top>`` blocks (TREC 1-8, Robust: fields run to the next tag) or
    XML ``<topic number="...">`` elements (Web, TREC-COVID, Deep Learning)."""
    text = "\n".join(line for _, line in _decoded_lines(path))
    out: dict[str, Topic] = {}
    for m in _TOPIC.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        body = m.group(1) if m.group(1) is not None else m.group(3)
        fields: dict[str, str] = {}
        tags = list(_TAG.finditer(body))
        for i, t in enumerate(tags):
            end = tags[i + 1].start() if i + 1 < len(tags) else len(body)
            value = re.sub(r"</[a-z]+>", " ", body[t.end():end], flags=re.I)
            value = " ".join(_LABEL.sub("", value).split())
            if m.group(1) is None:                 # the XML form: entities such as &amp;
                value = html.unescape(value)
            fields.setdefault(t.group(1).lower(), value)
        attrs = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', m.group(2) or ""))
        qid = fields.get("num") or attrs.get("number") or attrs.get("id") or ""
        if not qid:
            raise ParseError(str(path), line, "a topic without a number (<num> or number=\"...\")")
        qid = _checked(path, line, "the topic number", qid, MAX_ID_LENGTH)
        title = fields.get("title") or fields.get("query") or ""
        desc = fields.get("desc") or fields.get("description") or fields.get("question") or ""
        for value in (title, desc, fields.get("narr", ""), fields.get("narrative", "")):
            _checked(path, line, "the topic's text", value)
        out[qid] = Topic(qid, title or desc, title, desc, fields.get("narr") or fields.get("narrative") or "")
    if not out:
        raise ParseError(str(path), None, "no <top> or <topic> element: not a TREC topic file")
    return out


def read_practice(path: str | Path) -> list[tuple[str, str, int]]:
    """The practice round's known answers, TREC qrels lines ``qid 0 docid grade``."""
    out = []
    for n, line in _decoded_lines(Path(path)):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        f = line.split()
        if len(f) != 4:
            raise ParseError(str(path), n, "a practice line is a qrels line: qid 0 docid grade")
        try:
            grade = int(f[3])
        except ValueError:
            raise ParseError(str(path), n, f"the grade {f[3]!r} is not an integer") from None
        out.append((_checked(path, n, "the qid", f[0], MAX_ID_LENGTH), _checked(path, n, "the docid", f[2], MAX_ID_LENGTH),
                    grade))
    if not out:
        raise ParseError(str(path), None, "no practice answer in the file")
    return out


def read_guidelines(path: str | Path) -> str:
    """The assessors' guidelines, Markdown text (shown at /guidelines)."""
    return "\n".join(_checked(path, n, "the text", line) for n, line in _decoded_lines(Path(path)))


def read_corpus(path: str | Path, wanted: set[str]) -> dict[str, tuple[str, str]]:
    """docid -> (title, text) for the wanted docids, streamed from BEIR ``corpus.jsonl``."""
    out: dict[str, tuple[str, str]] = {}
    for n, obj in iter_jsonl(Path(path)):
        docid = str(obj["_id"])
        if docid in wanted:
            out[docid] = (_checked(path, n, "the title", str(obj.get("title") or "")),
                          _checked(path, n, "the text", str(obj.get("text") or "")))
    return out


def read_judging_scale(path: str | Path | None) -> Scale:
    """The grade scale the assessors see: the TOML format of :mod:`judged.core.checks.scale` (``[[grade]]``
    tables with ``value``, ``name``, ``definition``, ``examples``; None: judged's default
    scale), plus one key of the judging app's own, ``evidence = "required"`` (the default:
    grades above the lowest need a quoted passage or a note) or ``"optional"``."""
    grade_scale = read_grade_scale(None if path is None else str(path))
    evidence = "required" if path is None else tomllib.loads(Path(path).read_text("utf-8")).get("evidence", "required")
    if evidence not in ("required", "optional"):
        raise ParseError(str(path), None, 'evidence must be "required" or "optional"')
    grades = [{"value": g.value, "name": g.name, "definition": g.definition, "examples": list(g.examples)}
              for g in grade_scale.grades]
    for g in grades:
        for text in (g["name"], g["definition"], *g["examples"]):
            _checked(path, None, f"grade {g['value']}'s text", text)
    return Scale(grades, evidence == "required")
