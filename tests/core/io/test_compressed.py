"""Compressed runs and qrels (gzip, bz2, xz; :mod:`judged.core.io.compressed`): read as the
plain file, and damaged streams refused in one line naming the file, never a traceback.

The fuzzing is seeded and small: each codec's stream of a run and of a qrels file, with
bytes overwritten, bytes dropped or the end cut off, through the CLI's entry point. The
oracle is the codec itself: when Python's own module decompresses the damaged bytes to the
original text, the command must succeed with the plain file's output; otherwise it must
fail with exit code 2 and one line naming the file (and, for a stream that is recognised,
the line of the text where decompression failed).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import random
import zlib

import pytest

from judged.core.errors import ParseError
from judged.core.io import compressed, read_qrels, read_run
from judged.core.io.text import read_raw

QRELS = "".join(f"q{q} 0 d{d} {(q * d) % 3}\n" for q in range(1, 9) for d in range(1, 30))
RUN = "".join(f"q{q} Q0 d{d} {d} {100 - d}.5 tag\n" for q in range(1, 9) for d in range(1, 40))
CODECS = {"gzip": (gzip.compress, gzip.decompress), "bz2": (bz2.compress, bz2.decompress),
          "xz": (lzma.compress, lzma.decompress)}
SEED = 20240534  # issue 34


def damaged(data: bytes, rng: random.Random) -> bytes:
    """One random damage: bytes overwritten, bytes dropped, or the end cut off."""
    data = bytearray(data)
    how = rng.choice(("overwrite", "drop", "cut"))
    start = rng.randrange(len(data))
    if how == "overwrite":
        for i in range(start, min(len(data), start + rng.randint(1, 32))):
            data[i] = rng.randrange(256)
    elif how == "drop":
        del data[start:start + rng.randint(1, 32)]
    else:
        del data[max(1, start):]
    return bytes(data)


def intact(decompress, data: bytes, original: bytes) -> bool:
    """Python's codec reads the damaged bytes back as the original text."""
    try:
        return decompress(data) == original
    except Exception:  # noqa: BLE001 - whatever the codec raises: damaged
        return False


@pytest.mark.parametrize("codec", list(CODECS))
def test_compressed_files_read_as_the_plain_ones(tmp_path, codec):
    compress, _ = CODECS[codec]
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.z").write_bytes(compress(QRELS.encode()))  # a name that says nothing
    (tmp_path / "run.z").write_bytes(compress(RUN.encode()))
    assert compressed.kind_of_file(tmp_path / "run.z") == codec
    assert read_qrels(tmp_path / "qrels.z").grade.tolist() == read_qrels(tmp_path / "qrels.txt").grade.tolist()
    assert read_run(tmp_path / "run.z").score.tolist() == read_run(tmp_path / "run.txt").score.tolist()


def test_text_that_starts_like_bz2_is_text():
    """bz2's "BZh" is recognised with its block size and block magic, not alone."""
    assert compressed.kind(b"BZh1 Q0 d1") is None
    assert compressed.kind(bz2.compress(b"x")[:10]) == "bz2"
    assert compressed.kind(bz2.compress(b"")[:10]) == "bz2"


@pytest.mark.parametrize("codec", list(CODECS))
def test_the_issue_damage_names_file_and_line(tmp_path, codec):
    """Issue 34: a valid stream with bytes 12-39 overwritten by random bytes (bad deflate
    codes for gzip, not a truncation) was a zlib.error traceback."""
    compress, _ = CODECS[codec]
    data = bytearray(compress(RUN.encode()))
    data[12:40] = random.Random(SEED).randbytes(28)
    (tmp_path / "bad.run").write_bytes(data)
    with pytest.raises(ParseError) as info:
        read_raw(tmp_path / "bad.run")
    assert info.value.source == str(tmp_path / "bad.run") and info.value.line == 1
    assert info.value.why.startswith(f"corrupt {codec} data")


def test_a_cut_stream_names_the_line_where_the_text_stops(tmp_path):
    """The line named is where the readable text ends, to within one read of STEP bytes."""
    text = "".join(f"q{i % 50} Q0 d{i * 7919 % 100003} {i} {random.Random(i).random()} t\n" for i in range(20000))
    data = gzip.compress(text.encode())
    (tmp_path / "cut.run.gz").write_bytes(data[:len(data) // 2])
    with pytest.raises(ParseError) as info:
        read_raw(tmp_path / "cut.run.gz")
    readable = zlib.decompressobj(31).decompress(data[:len(data) // 2])  # all the text before the cut
    last = readable.count(b"\n") + 1
    assert last - compressed.STEP // 20 <= info.value.line <= last and info.value.line > 5000
    assert "ended before the end-of-stream marker" in info.value.why


@pytest.mark.parametrize("what", ["run", "qrels"])
@pytest.mark.parametrize("codec", list(CODECS))
def test_fuzzed_streams_never_a_traceback(tmp_path, cli, monkeypatch, codec, what):
    monkeypatch.chdir(tmp_path)
    compress, decompress = CODECS[codec]
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    original = (RUN if what == "run" else QRELS).encode()
    stream = compress(original)
    plain = cli("eval", "qrels.txt", "run.txt")[1]
    rng = random.Random(f"{SEED}-{codec}-{what}")
    refused = 0
    for case in range(12):
        bad = tmp_path / f"bad{case}.{what}.{'gz' if codec == 'gzip' else codec}"
        bad.write_bytes(damaged(stream, rng))
        argv = ["eval", "qrels.txt", bad] if what == "run" else ["eval", bad, "run.txt"]
        rc, out, err = cli(*argv)
        assert "Traceback" not in err, (case, err)
        if intact(decompress, bad.read_bytes(), original):  # damage the codec does not see
            assert rc == 0 and out.replace(bad.name, "run.txt") == plain, (case, err)
            continue
        refused += 1
        assert rc == 2 and len(err.splitlines()) == 1 and err.startswith(f"judged: error: {bad}"), (case, err)
    assert refused >= 8  # the damage is seen most of the time: the test exercises refusals


@pytest.mark.parametrize("command", [
    lambda q, r: ["holes", q, r, "-k", "5"],
    lambda q, r: ["compare", q, r, "run.txt"],
    lambda q, r: ["pool", q, r, "--depth", "5", "-o", "-"],
    lambda q, r: ["explain", q, r, "--query", "q1"],
    lambda q, r: ["meta", "power", q, r, "run.txt"],
], ids=["holes", "compare", "pool", "explain", "meta power"])
@pytest.mark.parametrize("codec", ["gzip", "bz2"])
def test_every_command_refuses_damaged_streams_in_one_line(tmp_path, cli, monkeypatch, command, codec):
    monkeypatch.chdir(tmp_path)
    compress, _ = CODECS[codec]
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    for name, text in (("bad.qrels", QRELS), ("bad.run", RUN)):
        data = bytearray(compress(text.encode()))
        data[12:40] = random.Random(SEED).randbytes(28)
        (tmp_path / name).write_bytes(data)
    for argv in (command("bad.qrels", "run.txt"), command("qrels.txt", "bad.run")):
        rc, _, err = cli(*argv)
        assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, (argv, err)
        assert f"corrupt {codec} data" in err and ":1: " in err, err


FILE_COMMANDS = {  # every command that reads a run and qrels file, as issue 34's acceptance lists them
    "eval": lambda q, r: ["eval", q, r, "run.txt"],
    "holes": lambda q, r: ["holes", q, r, "run.txt", "--samples", "5"],
    "compare": lambda q, r: ["compare", q, r, "run.txt", "--permutations", "50"],
    "report": lambda q, r: ["report", q, r, "run.txt", "--permutations", "50", "-o", "report.html"],
    "pool": lambda q, r: ["pool", q, r, "run.txt", "--depth", "5", "-o", "pool.txt"],
}


@pytest.mark.parametrize("codec", ["gzip", "bz2"])
@pytest.mark.parametrize("command", list(FILE_COMMANDS))
def test_every_file_command_fuzzed_never_a_traceback(tmp_path, cli, monkeypatch, command, codec):
    """Issue 34's acceptance, seeded and small: damaged gzip and bz2 streams of the run and of
    the qrels (bytes overwritten, dropped, the end cut) through eval, holes, compare, report
    and pool: exit code 2 and one line naming the file, or, for damage the codec does not
    see, the command's plain run."""
    monkeypatch.chdir(tmp_path)
    compress, decompress = CODECS[codec]
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    rng = random.Random(f"{SEED}-{command}-{codec}")
    refused = 0
    for case in range(10):
        what = ("run", "qrels")[case % 2]
        original = (RUN if what == "run" else QRELS).encode()
        bad = tmp_path / f"bad{case}.{what}.{'gz' if codec == 'gzip' else codec}"
        bad.write_bytes(damaged(compress(original), rng))
        argv = FILE_COMMANDS[command]("qrels.txt", bad.name) if what == "run" else \
            FILE_COMMANDS[command](bad.name, "run.txt")
        rc, out, err = cli(*argv)  # an exception escaping main() fails the test: the traceback a user would see
        if intact(decompress, bad.read_bytes(), original):
            assert rc == 0, (case, err)
            continue
        refused += 1
        assert rc == 2 and len(err.splitlines()) == 1 and err.startswith(f"judged: error: {bad.name}:"), (case, err)
    assert refused >= 7
