"""Counts in messages (issue 34: "1 holes", "1 pairs go to two assessors"): one helper,
:func:`judged.core.words.counted`, and no message that puts a count before a plural noun
by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judged.core.words import counted, plural

SRC = Path(__file__).resolve().parents[2] / "src" / "judged"


@pytest.mark.parametrize("n, noun, many, said", [
    (1, "hole", None, "1 hole"), (2, "hole", None, "2 holes"), (0, "query", None, "0 queries"),
    (1, "query", None, "1 query"), (3, "match", None, "3 matches"), (2, "key", None, "2 keys"),
    (1, "pair goes", "pairs go", "1 pair goes"), (5, "pair goes", "pairs go", "5 pairs go"),
    (1, "stratum", "strata", "1 stratum"), (4, "stratum", "strata", "4 strata"),
])
def test_counted(n, noun, many, said):
    assert counted(n, noun, many) == said


def test_plural():
    assert [plural(w) for w in ("judgment", "query", "day", "box")] == ["judgments", "queries", "days", "boxes"]


# a count in braces (not counted's own, not the denominator of a ratio such as 3/10 queries), then one
# of the nouns the messages count, in an f-string or a template
BY_HAND = re.compile(r"(?<!/)\{(?!counted\()[^{}]+\}\}? (holes|pairs|queries|judgments|assessors|documents|labels|leaks|draws|"
                     r"conflicts|strata|samples|resamples|groups|fields|preferences|collections|disagreements)\b(?!=)")


# a count in braces, then a noun hedged with "(s)": "1 unjudged document(s)", "2 run(s)"
HEDGED = re.compile(r"(?<!/)\{(?!counted\()[^{}]+\}\}? (\w+ )?\w+\(s\)")
# a plural hedged the way another tool words it, on purpose (pt.Experiment's own warning)
QUOTED = {"integrations/pyterrier.py"}


def test_no_message_counts_a_plural_by_hand():
    found = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".py", ".html"):
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            hedged = HEDGED.search(line) and str(path.relative_to(SRC)) not in QUOTED
            if (BY_HAND.search(line) or hedged) and ('f"' in line or "f'" in line or "{{" in line):
                found.append(f"{path.relative_to(SRC)}:{lineno}: {line.strip()}")
    assert found == [], "use judged.core.words.counted:\n" + "\n".join(found)
