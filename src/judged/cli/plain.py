"""Rich's output, byte for byte, without importing Rich, when stdout is not a terminal.

Importing Rich's console and table costs 0.03 s, a tenth of ``judged eval``'s whole process
on a small file (issue #19). Written to a file or a pipe, Rich draws no colour: what it
prints is the text, word-wrapped to the console's width, and tables in box characters.
:class:`PlainConsole` prints the same bytes for what ``judged eval`` prints (lines of
printable ASCII text and dashes, with or without the markup tags ``[bold]``/``[yellow]``,
and tables of ASCII whose columns fit the width); anything else (wider tables, other
characters, markup or emoji codes it does not know, a non-UTF-8 stdout) goes to a Rich
console made on first use, so the output is Rich's either way. ``tests/cli/test_plain.py``
compares the two on random text and tables.
"""

from __future__ import annotations

import os
import re
import sys

_TAG = re.compile(r"\[(/?)(bold|yellow|)\]")  # the markup judged's own lines use
_EMOJI = re.compile(r":\S*?:")  # what Rich may read as an emoji code (:smile:)
_WORD = re.compile(r"\s*\S+\s*")  # Rich's words: a word and the spaces after it


def console(file=None, width: int | None = None):
    """A Rich console on a terminal (or when Rich is asked for colour: FORCE_COLOR,
    TTY_COMPATIBLE); else a :class:`PlainConsole`. ``width``: the console's, else Rich's."""
    out = sys.stdout if file is None else file
    env = os.environ
    plain = env.get("FORCE_COLOR") is None and env.get("TTY_COMPATIBLE", "") in ("", "0") and not _isatty(out) \
        and (getattr(out, "encoding", None) or "utf-8").lower().replace("-", "") == "utf8"
    if plain:
        return PlainConsole(file, width)
    from rich.console import Console

    return Console(file=file, width=width)


def _isatty(out) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False


def console_width() -> int:
    """Rich's width when not writing to a terminal: the first of stdin, stdout and stderr
    that is a terminal gives it, ``COLUMNS`` overrides it, else 80."""
    width = None
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd)[0]
            break
        except (AttributeError, ValueError, OSError):
            pass
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return width or 80


class Table:
    """The rows and columns of a table: a Rich ``Table`` (``rich.table.Table()``, default
    box) when a Rich console prints it (``__rich__``), drawn by :class:`PlainConsole` when
    it is not. ``simple``: ``Table(box=box.SIMPLE, padding=(0, 1), pad_edge=False,
    collapse_padding=True)`` instead, no title (``judged holes``' table); its columns may
    have a ``min_width`` and ``no_wrap``."""

    def __init__(self, title: str | None = None, simple: bool = False):
        if simple and title is not None:
            raise ValueError("a simple table has no title")
        self.title, self.simple = title, simple
        self.columns = []  # (header, justify, overflow)
        self.options = []  # per column: min_width, no_wrap
        self.rows = []

    def add_column(self, header: str, justify: str = "left", overflow: str = "ellipsis", min_width: int | None = None,
                   no_wrap: bool = False) -> None:
        self.columns.append((header, justify, overflow))
        self.options.append({"min_width": min_width, "no_wrap": no_wrap})

    def add_row(self, *cells: str) -> None:
        self.rows.append(cells)

    def __rich__(self):
        from rich.table import Table as RichTable

        if self.simple:
            from rich import box

            table = RichTable(box=box.SIMPLE, padding=(0, 1), pad_edge=False, collapse_padding=True)
        else:
            table = RichTable(title=self.title)
        for (header, justify, overflow), options in zip(self.columns, self.options):
            table.add_column(header, justify=justify, overflow=overflow, **options)
        for row in self.rows:
            table.add_row(*row)
        return table


class PlainConsole:
    """``print`` as Rich's ``Console.print`` prints to a file (see the module); ``width``
    as Rich finds it unless given."""

    def __init__(self, file=None, width: int | None = None):
        self._file, self._width = file, width
        self.width = console_width() if width is None else width
        self._rich = None

    @property
    def file(self):
        return sys.stdout if self._file is None else self._file

    def print(self, obj, *, highlight: bool | None = None, markup: bool | None = None, soft_wrap: bool = False):
        text = self._table(obj) if isinstance(obj, Table) else \
            self._text(obj, markup is not False, soft_wrap) if isinstance(obj, str) else None
        if text is None:
            return self.rich().print(obj, highlight=highlight, markup=markup, soft_wrap=soft_wrap)
        self.file.write(text)

    def rich(self):
        """The Rich console for what this one does not draw, writing to the same file."""
        if self._rich is None:
            from rich.console import Console

            self._rich = Console(file=self._file, width=self._width)
        return self._rich

    def _text(self, text: str, markup: bool, soft_wrap: bool) -> str | None:
        if markup:
            text = _without_tags(text)
        if text is None or not _plain(text.replace("\n", "")) or _EMOJI.search(text):
            return None
        if soft_wrap:
            return text + "\n"
        return "".join(line + "\n" for part in text.split("\n") for line in wrap(part, self.width))

    def _table(self, table: Table) -> str | None:
        cells = [[h for h, _, _ in table.columns], *table.rows]
        if not table.columns or any(len(row) != len(table.columns) for row in table.rows) or \
                not all(_cell(c) for row in cells for c in row):
            return None
        if table.simple:
            return self._simple(table, cells)
        if any(o["min_width"] is not None or o["no_wrap"] for o in table.options):
            return None
        widths = [max(len(row[i]) for row in cells) + 2 for i in range(len(table.columns))]
        if sum(widths) + len(widths) + 1 > self.width:
            return None  # Rich would shrink and wrap the columns

        def line(left, fill, middle, right):
            return left + middle.join(fill * w for w in widths) + right + "\n"

        def row(cells, bar):
            return bar + bar.join(" " + (c.rjust(w - 2) if justify == "right" else c.ljust(w - 2)) + " "
                                  for c, w, (_, justify, _) in zip(cells, widths, table.columns)) + bar + "\n"

        out = []
        if table.title:
            total = sum(widths) + len(widths) + 1
            title = table.title
            if not _cell(title) or len(title) > total:
                return None
            left = (total - len(title)) // 2
            out.append(" " * left + title + " " * (total - left - len(title)) + "\n")
        out.append(line("┏", "━", "┳", "┓"))
        out.append(row(cells[0], "┃"))
        out.append(line("┡", "━", "╇", "┩"))
        out.extend(row(r, "│") for r in table.rows)
        out.append(line("└", "─", "┴", "┘"))
        return "".join(out)


    def _simple(self, table: Table, cells: list) -> str | None:
        """Rich's SIMPLE box with padding (0, 1), collapsed, none at the edges: a space at
        each edge and between columns, one space of padding right of every column but the
        last, a line of spaces above and below, dashes under the header."""
        if not table.rows:
            return None
        n = len(table.columns)
        widths = [max(max(len(row[i]) for row in cells), table.options[i]["min_width"] or 0) for i in range(n)]
        total = sum(widths) + 2 * n
        if total > self.width:
            return None  # Rich would shrink and wrap the columns
        blank = " " * total + "\n"

        def row(cells):
            return " " + "  ".join(c.rjust(w) if justify == "right" else c.ljust(w)
                                   for c, w, (_, justify, _) in zip(cells, widths, table.columns)) + " \n"

        return "".join([blank, row(cells[0]), " " + "─" * (total - 2) + " \n", *map(row, table.rows), blank])


ONE_CELL = frozenset("—")  # beyond ASCII, what judged's lines print (the dash of eval's first line)


def _plain(text: str) -> bool:
    """Printable ASCII and :data:`ONE_CELL`: one cell per character, nothing Rich strips or
    expands."""
    return text.isprintable() and (text.isascii() or all(c.isascii() or c in ONE_CELL for c in text))


def _cell(text: str) -> bool:
    """Printable ASCII a table shows as it is: no markup, emoji code or outer spaces."""
    return text.isascii() and _plain(text) and text == text.strip() and "[" not in text and not _EMOJI.search(text)


def _without_tags(text: str) -> str | None:
    """The text without judged's markup tags, when they pair up and nothing else in it
    could be markup; else None."""
    opened = []
    for closing, name in _TAG.findall(text):
        if not closing:
            if not name:
                return None  # "[]"
            opened.append(name)
        elif not opened or name not in ("", opened.pop()):
            return None  # Rich refuses a tag closing nothing, or another tag
    rest = _TAG.sub("", text)
    if opened or "[" in rest or "\\" in text:
        return None
    return rest


def wrap(text: str, width: int) -> list[str]:
    """Rich's word wrap of one line of printable ASCII (``rich._wrap.divide_line``, then
    each line cut at the width: Rich drops the spaces past it, then crops): words longer
    than the width are folded."""
    breaks, offset = [], 0
    for m in _WORD.finditer(text):
        start, word = m.start(), m.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            pieces = [word[i:i + width] for i in range(0, len(word), width)]
            for last, piece in ((i == len(pieces) - 1, p) for i, p in enumerate(pieces)):
                if start:
                    breaks.append(start)
                if last:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return [text[a:b][:width] for a, b in zip([0, *breaks], [*breaks, len(text)])]
