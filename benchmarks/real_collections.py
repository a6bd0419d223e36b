"""Build the real collections of docs/holes.md and docs/pooling.md from pinned commits of
their public git repositories, byte for byte the same on every machine (not a test).

    python benchmarks/real_collections.py dl19 --sigir25 PATH --anserini-tools PATH --out DIR
    python benchmarks/real_collections.py tar17 --tar PATH --out DIR

PATH is a git checkout or mirror (a bare clone will do) of the repository; every file is read
with ``git -C PATH show COMMIT:FILE`` at the commit pinned in ``PINS``, whatever is checked
out. DIR (new or empty) gets qrels.txt, runs/, runs.tsv (file, group, kind) and a README.md
saying what it holds. Never commit the folders (see Terms below); judged's tests make their
own data.

dl19, TREC Deep Learning 2019 passage ranking (Craswell et al., "Overview of the TREC 2019
deep learning track", TREC 2019): the qrels (43 judged queries, grades 0-3) from
github.com/castorini/anserini-tools qrels/qrels.dl19-passage.txt; the runs from
github.com/Parry-Parry/sigir25-annotation runs/trec-dl-2019/: every
``dl-19-official-input.*`` file there, the 37 official submissions, copied unchanged (gzipped).
The other files there (re-rankings made for that paper) are not official runs and are left
out. group and kind (trad, nn, nnlm) are those of the overview's run table, written in
``DL19_RUNS``; a run there and not in the table, or the reverse, stops the build.

tar17, CLEF eHealth 2017 Technologically Assisted Reviews (Kanoulas et al., "CLEF 2017
technologically assisted reviews in empirical medicine overview", CLEF 2017), from
github.com/CLEF-TAR/tar 2017-TAR/: the qrels testing/qrels/test.combined.qrels (30 topics,
grades 0-2) and the 16 distinct participant runs of its test topics under 4 MiB, listed in
``TAR17_RUNS`` with the name each gets: AMC's amc.run.res (the runCD* files beside it hold
one topic each); ECNU run2 and run3; IIIT run1 (its runs 1-8 are one file); Padua's four
cost runs (its simple runs are over 4 MiB); QUT's two Elasticsearch runs; UOS's test runs
sis.AL30Q_BM25 and sis.TMAL30Q_BM25; Waterloo's four normal runs, the ones the track's
results evaluate (not the -cost files beside them). Each run keeps the first line of a
repeated (query, docid) pair (UOS's TMAL30Q_BM25 repeats 311) and ends every line with a
newline (QUT's two lack the last one); nothing else changes (ECNU's CRLF line ends stay).
kind: trad for QUT's two Elasticsearch runs and IIIT's PubMed order, unknown for the rest
(mostly active learning).

Terms: CLEF-TAR/tar is under the MIT licence (its LICENSE). sigir25-annotation and
anserini-tools have no licence file at the pinned commits; what dl19 takes from them are
TREC 2019 submissions and NIST's assessments, on the MS MARCO passage corpus: TREC's data
and MS MARCO's are for research, not commercial use. Hence: build, use, never commit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

PINS = {  # repository -> the commit every file is read at
    "sigir25": "935c789fd39a6aa450ce1911188e76a0b26a407a",         # Parry-Parry/sigir25-annotation
    "anserini-tools": "5b819c1a45c8a0a3ec9426f476694f44a29dfaf3",  # castorini/anserini-tools
    "tar": "dbc13d02bb3e2f8ebc90e62ff47f5eb591e5ca20",             # CLEF-TAR/tar
}

DL19_QRELS = "qrels/qrels.dl19-passage.txt"
DL19_RUN_DIR = "runs/trec-dl-2019"
DL19_PREFIX = "dl-19-official-input."
# run -> (group, kind): the run table of the TREC DL 2019 overview (passage ranking task)
DL19_RUNS = {
    "ICT-BERT2": ("ICTNET", "nnlm"), "ICT-CKNRM_B": ("ICTNET", "nn"), "ICT-CKNRM_B50": ("ICTNET", "nn"),
    "TUA1-1": ("TUA1", "nnlm"),
    "TUW19-p1-f": ("TU-Vienna", "nn"), "TUW19-p1-re": ("TU-Vienna", "nn"), "TUW19-p2-f": ("TU-Vienna", "nn"),
    "TUW19-p2-re": ("TU-Vienna", "nn"), "TUW19-p3-f": ("TU-Vienna", "nn"), "TUW19-p3-re": ("TU-Vienna", "nn"),
    "UNH_bm25": ("TREMA-UNH", "trad"), "UNH_exDL_bm25": ("TREMA-UNH", "trad"),
    "bm25base_ax_p": ("Anserini", "trad"), "bm25base_p": ("Anserini", "trad"),
    "bm25base_prf_p": ("Anserini", "trad"), "bm25base_rm3_p": ("Anserini", "trad"),
    "bm25tuned_ax_p": ("Anserini", "trad"), "bm25tuned_p": ("Anserini", "trad"),
    "bm25tuned_prf_p": ("Anserini", "trad"), "bm25tuned_rm3_p": ("Anserini", "trad"),
    "idst_bert_p1": ("IDST", "nnlm"), "idst_bert_p2": ("IDST", "nnlm"), "idst_bert_p3": ("IDST", "nnlm"),
    "idst_bert_pr1": ("IDST", "nnlm"), "idst_bert_pr2": ("IDST", "nnlm"),
    "ms_duet_passage": ("Microsoft", "nn"),
    "p_bert": ("h2oloo", "nnlm"), "p_exp_bert": ("h2oloo", "nnlm"), "p_exp_rm3_bert": ("h2oloo", "nnlm"),
    "runid2": ("CCNU", "nnlm"), "runid3": ("CCNU", "nnlm"), "runid4": ("CCNU", "nnlm"), "runid5": ("CCNU", "nnlm"),
    "srchvrs_ps_run1": ("srchvrs", "trad"), "srchvrs_ps_run2": ("srchvrs", "nnlm"),
    "srchvrs_ps_run3": ("srchvrs", "nnlm"),
    "test1": ("test1", "nnlm"),
}

TAR17_QRELS = "2017-TAR/testing/qrels/test.combined.qrels"
TAR17_RUN_DIR = "2017-TAR/participant-runs"
# name in runs/ -> (file under TAR17_RUN_DIR, group, kind)
TAR17_RUNS = {
    "amc.run": ("AMC/clef-finals/amc.run.res", "AMC", "unknown"),
    "ecnu.run2": ("ECNU/run2.res.txt", "ECNU", "unknown"),
    "ecnu.run3": ("ECNU/run3.res.txt", "ECNU", "unknown"),
    "iiit.run1": ("IIIT/run1.res.txt", "IIIT", "trad"),
    **{f"padua.ims_iafapc_{p}": (f"Padua/cost/ims_iafapc_{p}", "Padua", "unknown")
       for p in ("m10p10f0t150p2m10", "m10p20f0t150p2m10", "m10p20f0t300p2m10", "m10p5f0t0p2m10")},
    "qut.bool_es": ("QUT/result_bool_es_test.txt", "QUT", "trad"),
    "qut.pico_es": ("QUT/result_pico_es_test.txt", "QUT", "trad"),
    "uos.AL30Q_BM25": ("UOS/test/sis.AL30Q_BM25.res", "UOS", "unknown"),
    "uos.TMAL30Q_BM25": ("UOS/test/sis.TMAL30Q_BM25.res", "UOS", "unknown"),
    **{f"waterloo.{w}": (f"Waterloo/{w}.txt", "Waterloo", "unknown")
       for w in ("A-rank-normal", "A-thresh-normal", "B-rank-normal", "B-thresh-normal")},
}

DL19_README = """\
TREC Deep Learning 2019 passage: the {runs} official runs ({prefix}*) from
github.com/Parry-Parry/sigir25-annotation @{sigir25} {run_dir}/, qrels from
github.com/castorini/anserini-tools @{anserini} {qrels}. runs.tsv: group and kind
(trad / nn / nnlm as in the TREC DL 2019 overview's run table; {kinds}). Never commit.
"""

TAR17_README = """\
CLEF eHealth TAR 2017: qrels {qrels} (grades 0-2) and the {runs}
distinct participant runs under 4 MiB in github.com/CLEF-TAR/tar @{tar} {run_dir}
(AMC amc.run.res; ECNU run2, run3; IIIT run1 (runs 1-8 are one file); Padua cost/* (4); QUT
result_bool_es_test, result_pico_es_test; UOS test/sis.AL30Q_BM25, sis.TMAL30Q_BM25; Waterloo
{{A,B}}-{{rank,thresh}}-normal), repeated (query, docid) lines dropped (first kept). kind trad: QUT's
two Elasticsearch runs and IIIT's PubMed order; the rest (active learning) unknown. Never commit.
"""


class BuildError(Exception):
    """A source that cannot give what the build needs; main prints it as one line."""


def _git(repo: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True)
    if done.returncode:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        raise BuildError(f"{repo}: git {' '.join(args)} failed: {why[-1] if why else done.returncode}")
    return done.stdout


def pinned(repo: Path, name: str) -> str:
    """The commit pinned for ``name``, checked to be in ``repo``."""
    commit = PINS[name]
    if not Path(repo).is_dir():
        raise BuildError(f"{repo}: no such folder (a checkout or mirror of the {name} repository)")
    probe = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
    if probe.returncode:
        raise BuildError(f"{repo}: commit {commit[:7]} of {name} not found (not a git repository, or fetch it)")
    return commit


def show(repo: Path, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit`` (``git show COMMIT:PATH``)."""
    probe = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{commit}:{path}"], capture_output=True)
    if probe.returncode:
        raise BuildError(f"{repo}: no {path} at commit {commit[:7]}")
    return _git(repo, "show", f"{commit}:{path}")


def listed(repo: Path, commit: str, folder: str) -> list[str]:
    """The file names directly in ``folder`` at ``commit``."""
    out = _git(repo, "ls-tree", "--name-only", "-z", commit, "--", folder.rstrip("/") + "/")
    return sorted(Path(p).name for p in out.decode().split("\0") if p)


def first_of_each_pair(text: bytes) -> bytes:
    """The run's lines, each kept as it is (a carriage return too) but for the first of a
    repeated (query, docid) pair (fields 1 and 3) only, each ending in a newline; blank lines
    dropped.

    >>> first_of_each_pair(b"q1 Q0 d1 1 2.0 r\\r\\nq1 Q0 d1 2 1.0 r\\r\\nq2 Q0 d1 1 3.0 r")
    b'q1 Q0 d1 1 2.0 r\\r\\nq2 Q0 d1 1 3.0 r\\n'
    """
    seen, out = set(), []
    for line in text.split(b"\n"):
        fields = line.split()
        if not fields:
            continue
        key = (fields[0], fields[2] if len(fields) > 2 else b"")
        if key not in seen:
            seen.add(key)
            out.append(line + b"\n")
    return b"".join(out)


def _unused(out: Path) -> Path:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BuildError(f"{out}: exists and is not an empty folder; give a new one")
    return out


def _runs_tsv(rows: dict) -> bytes:
    return ("file\tgroup\tkind\n" + "".join(f"{f}\t{g}\t{k}\n" for f, (g, k) in sorted(rows.items()))).encode()


def _kinds(rows: dict) -> str:
    counts = Counter(k for _, k in rows.values())
    return ", ".join(f"{counts[k]} {k}" for k in ("trad", "nn", "nnlm"))


def build_dl19(sigir25: Path, anserini_tools: Path, out: Path) -> dict:
    """TREC DL 2019 passage into ``out``; returns runs.tsv's rows (file -> (group, kind))."""
    _unused(out)
    s_commit, a_commit = pinned(sigir25, "sigir25"), pinned(anserini_tools, "anserini-tools")
    qrels = show(anserini_tools, a_commit, DL19_QRELS)
    files = [f for f in listed(sigir25, s_commit, DL19_RUN_DIR) if f.startswith(DL19_PREFIX)]
    found = {f.removeprefix(DL19_PREFIX).removesuffix(".gz") for f in files}
    if found != set(DL19_RUNS):
        extra, missing = sorted(found - set(DL19_RUNS)), sorted(set(DL19_RUNS) - found)
        raise BuildError(f"{sigir25}: the official runs at {s_commit[:7]} differ from the run table "
                         f"(not in the table: {', '.join(extra) or '-'}; missing: {', '.join(missing) or '-'})")
    runs = {f: show(sigir25, s_commit, f"{DL19_RUN_DIR}/{f}") for f in files}
    rows = {f: DL19_RUNS[f.removeprefix(DL19_PREFIX).removesuffix(".gz")] for f in files}
    _write(out, qrels, runs, rows, DL19_README.format(
        runs=len(rows), prefix=DL19_PREFIX, sigir25=s_commit[:7], run_dir=DL19_RUN_DIR, anserini=a_commit[:7],
        qrels=DL19_QRELS, kinds=_kinds(rows)))
    return rows


def build_tar17(tar: Path, out: Path) -> dict:
    """CLEF TAR 2017 into ``out``; returns runs.tsv's rows (file -> (group, kind))."""
    _unused(out)
    commit = pinned(tar, "tar")
    qrels = show(tar, commit, TAR17_QRELS)
    runs = {name: first_of_each_pair(show(tar, commit, f"{TAR17_RUN_DIR}/{src}"))
            for name, (src, _, _) in TAR17_RUNS.items()}
    rows = {name: (group, kind) for name, (_, group, kind) in TAR17_RUNS.items()}
    _write(out, qrels, runs, rows, TAR17_README.format(qrels=TAR17_QRELS, runs=len(rows), tar=commit[:7],
                                                       run_dir=TAR17_RUN_DIR))
    return rows


def _write(out: Path, qrels: bytes, runs: dict, rows: dict, readme: str) -> None:
    """A collection folder: qrels.txt, runs/<file>, runs.tsv (file, group, kind) and README.md."""
    (out / "runs").mkdir(parents=True, exist_ok=True)
    (out / "qrels.txt").write_bytes(qrels)
    for name, data in runs.items():
        (out / "runs" / name).write_bytes(data)
    (out / "runs.tsv").write_bytes(_runs_tsv(rows))
    (out / "README.md").write_text(readme)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="collection", required=True)
    dl19 = sub.add_parser("dl19", help="TREC DL 2019 passage")
    dl19.add_argument("--sigir25", type=Path, required=True, help="Parry-Parry/sigir25-annotation")
    dl19.add_argument("--anserini-tools", type=Path, required=True, help="castorini/anserini-tools")
    tar17 = sub.add_parser("tar17", help="CLEF eHealth TAR 2017")
    tar17.add_argument("--tar", type=Path, required=True, help="CLEF-TAR/tar")
    for q in (dl19, tar17):
        q.add_argument("--out", type=Path, required=True, help="the collection's folder (new or empty)")
    args = p.parse_args(argv)
    try:
        if args.collection == "dl19":
            rows = build_dl19(args.sigir25, args.anserini_tools, args.out)
        else:
            rows = build_tar17(args.tar, args.out)
    except BuildError as exc:
        print(f"real_collections.py: {exc}", file=sys.stderr)
        return 2
    print(f"{args.out}: {args.collection}, {len(rows)} runs, qrels.txt, runs.tsv, README.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
