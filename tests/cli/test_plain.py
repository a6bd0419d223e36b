"""judged.cli.plain prints Rich's bytes without Rich (issue #19: `judged eval` to a file or a
pipe imports no Rich): random lines and tables, printed by both at random widths."""

import io
import string
from pathlib import Path

import numpy as np
import pytest

from judged.cli import plain as plain_module
from judged.cli.plain import PlainConsole, Table

rich_console = pytest.importorskip("rich.console")
from rich.errors import MarkupError  # noqa: E402

WORDS = ["a", "run", "0.1054", "bm25.run", "queries=run-and-qrels,", "x" * 30, "nDCG@10", "(default)", "-", "",
         "P(rel=2)@10", "/work/a/b/c.run", "small.run:", "1000", "—", "eval—",
         "sha256=0a1b2c3d4e5f6a7b…", "…", "Δ", "±0.01", "▲", "⇄"]
ODD = ["é", "[bold]", "[/]", "[yellow]", "[/yellow]", "[/bold]", "[1]", "a:b:", "\\", "tab\there", "\x1b[1m"]  # Rich's markup, emoji, ...


def _pair(width: int):
    a, b = io.StringIO(), io.StringIO()
    return PlainConsole(file=a, width=width), a, rich_console.Console(file=b, width=width), b


def _line(rng) -> str:
    words = [str(rng.choice(ODD)) if rng.random() < 0.02 else str(rng.choice(WORDS)) for _ in range(rng.integers(0, 25))]
    return "".join(w + " " * int(rng.choice([0, 1, 1, 1, 2, 3])) for w in words)


@pytest.mark.parametrize("seed", range(6))
def test_lines_are_richs(seed):
    rng = np.random.default_rng(seed)
    drawn = 0
    for _ in range(150):
        width = int(rng.integers(8, 120))
        text = _line(rng)
        if rng.random() < 0.2:
            text = f"[bold]{text}[/]: {_line(rng)}"
        if rng.random() < 0.1:
            text += "\n" + _line(rng)
        options = dict(highlight=bool(rng.random() < 0.5), markup=bool(rng.random() < 0.7),
                       soft_wrap=bool(rng.random() < 0.3))
        plain, a, rich, b = _pair(width)
        try:
            rich.print(text, **options)
        except MarkupError:  # Rich refuses the markup: so does the plain console (it asks Rich)
            with pytest.raises(MarkupError):
                plain.print(text, **options)
            continue
        plain.print(text, **options)
        assert a.getvalue() == b.getvalue(), (text, width, options)
        drawn += plain._rich is None
    assert drawn > 50  # most lines drawn without Rich


@pytest.mark.parametrize("text", ["[bold]a[/yellow]: b", "[/]a", "[bold]a", "[]", "a [1] b", "[bold]x[/bold]: y",
                                  "[yellow]warning:[/] x", "x:y:z", "tab\tx", "\\[bold]a", "é " * 50, ""])
def test_odd_lines_are_richs(text):
    plain, a, rich, b = _pair(30)
    try:
        rich.print(text)
    except MarkupError:
        with pytest.raises(MarkupError):
            plain.print(text)
        return
    plain.print(text)
    assert a.getvalue() == b.getvalue()


BOXES = [dict(), dict(box="simple", pad_edge=False, collapse_padding=True),  # eval's, holes'
         dict(box="simple_head", pad_edge=False), dict(box="simple_head", collapse_padding=True),  # compare's, ...
         dict(box="simple_head", pad_edge=False, collapse_padding=True, show_edge=False),  # no blank lines around
         dict(box="heavy_head", show_edge=False)]


def _random_table(rng, box: dict) -> Table:
    """Columns of every kind (justify, overflow, no_wrap, min_width), cells from a word
    (empty) to a path longer than the console, with spaces to wrap at and compare's marks."""
    alphabet = list(string.ascii_letters + string.digits + "./@()=-_ ") + ["Δ", "▲", "▼", "⇄", "—", "±"]
    table = Table(title=str(rng.choice(["per query", "per query, machine-filled", ("a much longer title " * 4).strip(), ""]))
                  if rng.random() < 0.3 else None, **box)
    columns = int(rng.integers(1, 9))
    for _ in range(columns):
        table.add_column("".join(rng.choice(alphabet, size=rng.integers(1, 12))).strip() or "h",
                         justify=str(rng.choice(["left", "right", "center"])),
                         overflow=str(rng.choice(["fold", "ellipsis"])), no_wrap=bool(rng.random() < 0.4),
                         min_width=int(rng.integers(0, 26)) if rng.random() < 0.3 else None)
    for _ in range(int(rng.integers(0, 6))):
        cells = ["".join(rng.choice(alphabet, size=rng.integers(0, 14 if rng.random() < 0.7 else 70))).strip()
                 + " " * int(rng.choice([0, 0, 0, 0, 1, 2])) for _ in range(columns)]  # trailing spaces too
        if rng.random() < 0.2:
            cells[0] = str(rng.choice(["/work/wt/workflow/bench-data/1000x1000-j60-v2/a.run", "[+0.0012, -0.0034]",
                                       "a.run (base) (3 leaks)", ""]))
        if rng.random() < 0.03:
            cells[-1] = str(rng.choice(["é", "[x]", "a:b:", "a\tb", "a\\b", "[bold]x[/]", "[bold yellow]d 1[/]",
                                        "[bold]x", "[/]x"]))  # Rich reads these: markup it drops or refuses
        table.add_row(*cells, end_section=bool(rng.random() < 0.3))  # a line under it, but for the last row
    return table


@pytest.mark.parametrize("box", range(len(BOXES)), ids=["default box", "simple (holes)", "simple head (compare)",
                                                      "simple head, collapsed", "simple head, no edge",
                                                      "heavy head, no edge"])
@pytest.mark.parametrize("seed", range(4))
def test_tables_are_richs(seed, box):
    """Tables that fit and tables Rich shrinks (collapsing the widest wrapable columns,
    then all), wraps, folds and cuts with an ellipsis, at widths from 20 to 160."""
    rng = np.random.default_rng(100 + seed + 100 * box)
    drawn = shrunk = 0
    for _ in range(150):
        width = int(rng.integers(20, 160))
        table = _random_table(rng, BOXES[box])
        plain, a, rich, b = _pair(width)
        try:
            rich.print(table)
        except MarkupError:  # Rich refuses the markup: so does the plain console (it asks Rich)
            with pytest.raises(MarkupError):
                plain.print(table)
            continue
        plain.print(table)
        assert a.getvalue() == b.getvalue(), (table.columns, table.options, table.rows, table.title, width)
        drawn += plain._rich is None
        shrunk += plain._rich is None and table._widths([[h for h, _, _ in table.columns], *table.rows],
                                                         [table._padding(i) for i in range(len(table.columns))],
                                                         width - len(table.columns) - (1 if table.show_edge else -1)) != \
            table._widths([[h for h, _, _ in table.columns], *table.rows],
                          [table._padding(i) for i in range(len(table.columns))], 10 ** 6)
    assert drawn > 70 and shrunk > 20  # most drawn without Rich (not columns narrower than their padding), many narrowed


def test_one_cell_characters_are_one_cell_for_rich():
    from rich.cells import cell_len

    assert all(cell_len(c) == 1 for c in plain_module.ONE_CELL)


def _through_both(argv, monkeypatch) -> dict:
    """A command's output to a pipe, through the plain console and through Rich."""
    from judged.cli import main
    from judged.cli import plain

    out = {}
    for name, make in (("plain", plain.PlainConsole), ("rich", rich_console.Console)):
        monkeypatch.setattr(plain, "console", lambda file=None, width=None, make=make: make(
            file=file, width=width or plain.table_width()))  # a pipe's tables: COLUMNS, else 80
        buf = io.StringIO()
        monkeypatch.setattr("sys.stdout", buf)
        assert main(argv) == 0
        out[name] = buf.getvalue()
    return out


EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def test_eval_to_a_pipe_prints_what_rich_prints(monkeypatch):
    """The whole of `judged eval`'s table output, through the plain console and through Rich."""
    out = _through_both(["eval", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "bm25.run"), str(EXAMPLES / "dense.run"),
                         "-m", "nDCG@10", "-m", "AP", "--per-query"], monkeypatch)
    assert out["plain"] == out["rich"]
    assert "┃ run " in out["plain"] and "per query" in out["plain"]


def test_holes_to_a_pipe_prints_what_rich_prints(monkeypatch):
    """The whole of `judged holes`' table output (two measures: two tables)."""
    out = _through_both(["holes", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "bm25.run"), str(EXAMPLES / "dense.run"),
                         "-m", "nDCG@10", "-m", "AP@100"], monkeypatch)
    assert out["plain"] == out["rich"]
    assert " run " in out["plain"] and "Judged@10" in out["plain"] and "AP@100" in out["plain"]


@pytest.mark.parametrize("command", [["eval", "-m", "nDCG@10", "-m", "AP"], ["holes", "-m", "nDCG@10"]])
def test_long_run_names_print_what_rich_prints(command, tmp_path, monkeypatch):
    """Run names as long paths: the tables are wider than the page and Rich narrows them
    (both fold the run column; no number is cut with an ellipsis)."""
    deep = tmp_path / ("a-long-folder-name-" * 4) / "runs"
    deep.mkdir(parents=True)
    runs = []
    for name in ("bm25.run", "dense.run"):
        (deep / name).write_bytes((EXAMPLES / name).read_bytes())
        runs.append(str(deep / name))
    out = _through_both([command[0], str(EXAMPLES / "qrels.txt"), *runs, *command[1:]], monkeypatch)
    assert out["plain"] == out["rich"]
    assert "…" not in out["plain"] and "bm25.run" in out["plain"]


@pytest.mark.parametrize("long_names", [False, True], ids=["example names", "paths wider than the page"])
@pytest.mark.parametrize("options", [[], ["--all-tests"]], ids=["randomization", "every test"])
def test_compare_to_a_pipe_prints_what_rich_prints(options, long_names, tmp_path, monkeypatch):
    """judged compare's tables (SIMPLE_HEAD, the run column folded to its min_width, Δ, ▲/▼
    and ⇄ marks, bracketed intervals) through the plain console and through Rich."""
    monkeypatch.setenv("COLUMNS", "200")  # --all-tests: every test's p, wider than 80 columns
    runs = [str(EXAMPLES / n) for n in ("bm25.run", "dense.run", "tuned.run")]
    if long_names:
        deep = tmp_path / ("a-long-folder-name-" * 5)
        deep.mkdir()
        for r in runs:
            (deep / Path(r).name).write_bytes(Path(r).read_bytes())
        runs = [str(deep / Path(r).name) for r in runs]
    out = _through_both(["compare", str(EXAMPLES / "qrels.txt"), *runs, "-m", "nDCG@10", "-m", "AP", *options],
                        monkeypatch)
    assert out["plain"] == out["rich"]
    assert "Δ mean" in out["plain"] and "▼" in out["plain"]


@pytest.mark.parametrize("width", [30, 45, 120])
def test_cells_with_judgeds_markup_are_drawn_as_rich_draws_them(width):
    """compare's regression table marks newly unjudged docids [bold yellow]...[/]: Rich
    measures and prints the text without its tags, so does the plain console."""
    table = Table(box="simple_head", pad_edge=False)
    for col in ["rank", "baseline docid", "grade", "run docid", "grade "]:
        table.add_column(col, justify="right" if col.startswith("grade") or col == "rank" else "left", overflow="fold")
    for i in range(6):
        doc = f"clueweb09-en0000-{i:02d}-12345"
        table.add_row(str(i + 1), doc, str(i % 3), f"[bold yellow]{doc}x[/]" if i % 2 else doc, "unjudged")
    plain, a, rich, b = _pair(width)
    plain.print(table)
    rich.print(table)
    assert a.getvalue() == b.getvalue()
    assert plain._rich is None and "[bold" not in a.getvalue()


@pytest.mark.parametrize("qid", ["[/i]", "x[b]y", "[bold]q", ":smile:"])
def test_data_in_a_table_is_shown_as_written(qid, tmp_path, capsys):
    """A query id (or run name, docid) that reads as Rich markup or an emoji code is data:
    `judged eval --per-query` shows it as written (it stopped with a MarkupError traceback
    on '[/i]', and printed 'x[b]y' as a bold 'xy')."""
    from judged.cli import main

    (tmp_path / "q").write_text(f"q1 0 d1 1\n{qid} 0 d1 1\n")
    (tmp_path / "r").write_text(f"q1 Q0 d1 1 1.0 r\n{qid} Q0 d1 1 1.0 r\n")
    assert main(["eval", str(tmp_path / "q"), str(tmp_path / "r"), "-m", "P@1", "--per-query"]) == 0
    out = capsys.readouterr().out
    assert any(line.split("│")[2].strip() == qid for line in out.splitlines() if line.count("│") >= 3)
