"""Rich's output, byte for byte, without importing Rich, when stdout is not a terminal.

Importing Rich's console and table costs 0.03 s, a tenth of ``judged eval``'s whole process
on a small file (issue #19). Written to a file or a pipe, Rich draws no colour: what it
prints is the text, word-wrapped to the console's width, and tables in box characters.
:class:`PlainConsole` prints the same bytes for lines of printable text (ASCII and the few
one-cell characters judged prints, :data:`ONE_CELL`), with or without the markup tags
``[bold]``/``[yellow]``, and for :class:`Table` s of such cells, narrowed as Rich narrows a
table wider than the page (``Table._calculate_column_widths``: the widest wrapable columns
first, then all evenly), their cells wrapped, folded or cut with an ellipsis as Rich's
``Text.wrap`` does. Anything else (other characters, markup or emoji codes it does not
know, a column narrower than its padding, a non-UTF-8 stdout) goes to a Rich console made
on first use, so the output is Rich's either way. ``tests/cli/test_plain.py`` compares the
two on random text and tables.
"""

from __future__ import annotations

import os
import re
import sys

_TAG = re.compile(r"\[(/?)(bold|yellow|bold yellow|)\]")  # the markup judged's own lines and cells use
_EMOJI = re.compile(r":\S*?:")  # what Rich may read as an emoji code (:smile:)
_WORD = re.compile(r"\s*\S+\s*")  # Rich's words: a word and the spaces after it
_RICH_TAG = re.compile(r"\[[a-z#/@][^[]*?]")  # what Rich's markup reads as a tag (rich.markup.RE_TAGS)


def console(file=None, width: int | None = None):
    """A Rich console on a terminal (or when Rich is asked for colour: FORCE_COLOR,
    TTY_COMPATIBLE); else a :class:`PlainConsole`. ``width``: the console's; by default the
    terminal's, and for a file or a pipe the one rule of every command's output: lines of
    text wrap at ``COLUMNS``, else not at all (:func:`text_width`); tables fit ``COLUMNS``,
    else 80 columns (:func:`table_width`)."""
    out = sys.stdout if file is None else file
    env = os.environ
    terminal = _isatty(out)
    plain = env.get("FORCE_COLOR") is None and env.get("TTY_COMPATIBLE", "") in ("", "0") and not terminal \
        and (getattr(out, "encoding", None) or "utf-8").lower().replace("-", "") == "utf8"
    if plain:
        return PlainConsole(file, width)
    from rich.console import Console

    return Console(file=file, width=table_width() if width is None and not terminal else width)


def _isatty(out) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False


UNWRAPPED = 100_000  # the width lines of text wrap at in a file or a pipe without COLUMNS: never
TABLE_WIDTH = 80  # the width tables fit in a file or a pipe without COLUMNS


def _columns() -> int | None:
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def text_width() -> int:
    """Where lines of text wrap in a file or a pipe: ``COLUMNS`` when set (a positive
    number), else :data:`UNWRAPPED` (each line as long as its text: grep and diff read
    whole lines). On a terminal, the terminal's width."""
    return _columns() or UNWRAPPED


def table_width() -> int:
    """The width tables fit in a file or a pipe: ``COLUMNS`` when set, else
    :data:`TABLE_WIDTH` (80: tables read in any pager or mail). On a terminal, the
    terminal's width."""
    return _columns() or TABLE_WIDTH


BOXES = {  # Rich's boxes (rich.box) judged's tables use: (top, header row, rule under it, rows, bottom, the
    # line ending a section) as (left, fill or divider, right); SIMPLE and SIMPLE_HEAD draw alike without a footer
    "heavy_head": (("┏", "━", "┳", "┓"), ("┃", "┃", "┃"), ("┡", "━", "╇", "┩"), ("│", "│", "│"), ("└", "─", "┴", "┘"),
                   ("├", "─", "┼", "┤")),
    "simple": ((" ", " ", " ", " "), (" ", " ", " "), (" ", "─", "─", " "), (" ", " ", " "), (" ", " ", " ", " "),
               (" ", " ", " ", " ")),
}
BOXES["simple_head"] = BOXES["simple"]


class Table:
    """The rows and columns of a table: a Rich ``Table`` (``rich.table.Table(title=title,
    box=box.HEAVY_HEAD | SIMPLE | SIMPLE_HEAD, pad_edge=..., collapse_padding=...)``, padding
    (0, 1)) when a Rich console prints it (``__rich__``), drawn by :class:`PlainConsole`
    when it is not. Columns: a header, ``justify`` (left, right, center), ``overflow``
    (ellipsis, fold), ``min_width`` and ``no_wrap``, as Rich's ``add_column``; a row may
    end a section (a line under it), as Rich's ``add_row(..., end_section=True)``."""

    def __init__(self, title: str | None = None, box: str = "heavy_head", pad_edge: bool = True,
                 collapse_padding: bool = False, show_edge: bool = True):
        if box not in BOXES:
            raise ValueError(f"box: one of {', '.join(BOXES)}, not {box!r}")
        self.title, self.box, self.pad_edge, self.collapse_padding = title, box, pad_edge, collapse_padding
        self.show_edge = show_edge  # False: no line above and below, no left and right edge (Rich's show_edge)
        self.columns = []  # (header, justify, overflow)
        self.options = []  # per column: min_width, no_wrap
        self.rows = []
        self.ends = []  # per row: it ends a section

    def add_column(self, header: str, justify: str = "left", overflow: str = "ellipsis", min_width: int | None = None,
                   no_wrap: bool = False) -> None:
        self.columns.append((header, justify, overflow))
        self.options.append({"min_width": min_width, "no_wrap": no_wrap})

    def add_row(self, *cells: str, end_section: bool = False) -> None:
        self.rows.append(cells)
        self.ends.append(bool(end_section))

    def __rich__(self):
        from rich import box
        from rich.table import Table as RichTable
        from rich.text import Text

        table = RichTable(title=self.title, box=getattr(box, self.box.upper()), pad_edge=self.pad_edge,
                          collapse_padding=self.collapse_padding, show_edge=self.show_edge)
        for (header, justify, overflow), options in zip(self.columns, self.options):
            table.add_column(header, justify=justify, overflow=overflow, **options)
        for row, end in zip(self.rows, self.ends):
            table.add_row(*(_rich_cell(c, Text) for c in row), end_section=end)
        return table

    def draw(self, width: int) -> str | None:
        """The table as Rich prints it on a console ``width`` cells wide, or None where this
        drawing is not known to be Rich's (a cell beyond :func:`_cell`, a column too narrow
        for its padding): :class:`PlainConsole` asks Rich then."""
        n = len(self.columns)
        cells = [[h for h, _, _ in self.columns], *self.rows]
        if not n or any(len(row) != n for row in self.rows) or \
                any(j not in ("left", "right", "center") or o not in ("ellipsis", "fold") for _, j, o in self.columns):
            return None
        blob = "\n".join(c for row in cells for c in row)  # every cell at once: the checks of most tables
        if any(ch in blob for ch in "[:\\") or not _plain(blob.replace("\n", "")) or blob[:1] == " " or "\n " in blob:
            cells = [[_without_tags(c) if _TAG.search(c) else c for c in row]  # Rich measures the text, not its tags
                     for row in cells]
            if not all(c is not None and _cell(c) for row in cells for c in row):
                return None
        pads = [self._padding(i) for i in range(n)]
        rules = n + 1 if self.show_edge else n - 1  # the box's vertical lines (Rich's Table._extra_width)
        widths = self._widths(cells, pads, width - rules)
        if any(w < a + b for w, (a, b) in zip(widths, pads)):
            return None  # Rich pads past the column's width there
        lines = []
        if self.title:
            total = sum(widths) + rules
            if not _cell(self.title):
                return None
            lines.extend(_justify(line, total, "center", "fold") for line in wrap(self.title, total))
        top, head, rule, row, bottom, section = BOXES[self.box]
        if not self.show_edge:  # no left and right edges
            top, rule, bottom, section = (("", fill, middle, "") for _, fill, middle, _ in (top, rule, bottom, section))
            head, row = (("", middle, "") for _, middle, _ in (head, row))
        last = len(self.rows) - 1
        ends = [i < last and end for i, end in enumerate(self.ends)]  # Rich draws no line under the last row
        edge = (lambda left, fill, middle, right: left + middle.join(fill * w for w in widths) + right)
        if self.show_edge:
            lines.append(edge(*top))
        columns, one_line = [], True  # per column, per row: the cell's lines, padded
        for i, (texts, w, (a, b), (_, justify, overflow), option) in enumerate(
                zip(zip(*cells), widths, pads, self.columns, self.options)):
            inner, left_pad, right_pad = w - a - b, " " * a, " " * b
            if inner == 0 and any(texts):
                return None  # no room for a character: Rich's own cropping rules then
            if max(map(len, texts)) <= inner:  # every cell on one line, as long as the column
                if justify == "left":
                    columns.append([left_pad + t.ljust(inner) + right_pad for t in texts])
                elif justify == "right":
                    columns.append([left_pad + t.rstrip().rjust(inner) + right_pad for t in texts])
                else:
                    columns.append([left_pad + _justify(t, inner, justify, overflow) + right_pad for t in texts])
            else:
                one_line = False
                columns.append([[left_pad + line + right_pad for line in _cell_lines(t, inner, justify, overflow,
                                                                                      option["no_wrap"])]
                                for t in texts])
        if one_line:  # most tables: a line per row
            header, *body = zip(*columns)
            lines += [head[0] + head[1].join(header) + head[2], edge(*rule)]
            for r, end in zip(body, ends):
                lines.append(row[0] + row[1].join(r) + row[2])
                if end:
                    lines.append(edge(*section))
        else:
            columns = [[c if isinstance(c, list) else [c] for c in col] for col in columns]
            for at, drawn in enumerate(zip(*columns)):
                height = max(map(len, drawn))
                if height > 1:  # the header row aligned at its bottom, other rows at their top
                    drawn = [[" " * w] * (height - len(d)) + d if at == 0 else d + [" " * w] * (height - len(d))
                             for d, w in zip(drawn, widths)]
                left, middle, right = head if at == 0 else row
                lines.extend(left + middle.join(d[i] for d in drawn) + right for i in range(height))
                if at == 0:
                    lines.append(edge(*rule))
                elif ends[at - 1]:
                    lines.append(edge(*section))
        if self.show_edge:
            lines.append(edge(*bottom))
        return "".join(line[:width] + "\n" for line in lines)  # the console crops what it cannot show

    def natural_width(self) -> int:
        """The table's width on a page wide enough for every cell on one line."""
        n = len(self.columns)
        cells = [[h for h, _, _ in self.columns], *self.rows]
        widths = self._widths([[_without_tags(c) or c for c in row] for row in cells],
                              [self._padding(i) for i in range(n)], UNWRAPPED)
        return sum(widths) + (n + 1 if self.show_edge else n - 1)

    def least_width(self) -> int:
        """The narrowest page the table is drawn on without cutting a cell of a column that
        does not wrap: those columns whole, the others (which fold or wrap) down to their
        ``min_width`` or 8 cells."""
        n = len(self.columns)
        cells = [[h for h, _, _ in self.columns], *self.rows]
        widths = self._widths([[_without_tags(c) or c for c in row] for row in cells],
                              [self._padding(i) for i in range(n)], UNWRAPPED)
        least = [w if option["no_wrap"] else min(w, max(option["min_width"] or 0, 8) + self._padding_width(i))
                 for i, (w, option) in enumerate(zip(widths, self.options))]
        return sum(least) + (n + 1 if self.show_edge else n - 1)

    def _padding(self, i: int) -> tuple:
        """(left, right) padding of column ``i``'s cells, as Rich's ``Table._get_cells``."""
        left, right = 1, 1
        if self.collapse_padding and i:
            left = 0
        if not self.pad_edge:
            left = 0 if i == 0 else left
            right = 0 if i == len(self.columns) - 1 else right
        return left, right

    def _padding_width(self, i: int) -> int:
        """Rich's ``Table._get_padding_width`` (which collapses the padding otherwise)."""
        left, right = (0, 1) if self.collapse_padding else (1, 1)
        if not self.pad_edge:
            left = 0 if i == 0 else left
            right = 0 if i == len(self.columns) - 1 else right
        return left + right

    def _widest(self, i: int, longest: int, pad: tuple, max_width: int) -> int:
        """The maximum of Rich's measurement of column ``i`` (``_measure_column``: each cell a
        ``Padding`` of a ``Text``, measured on ``max_width`` cells, then ``min_width``), whose
        longest cell has ``longest`` characters: a cell measures min(its length, the width)
        plus its padding, at most the width (the width itself when the padding leaves no
        cell), 0 under one cell."""
        if max_width < 1:
            return 0
        extra = pad[0] + pad[1]
        high = max_width if max_width - extra < 1 else min(min(longest, max_width) + extra, max_width)
        high = high if high >= 1 else 0
        min_width = self.options[i]["min_width"]
        return high if min_width is None else max(high, min_width + self._padding_width(i))

    def _widths(self, cells: list, pads: list, max_width: int) -> list:
        """Each column's width, padding included, on ``max_width`` cells: Rich's
        ``Table._calculate_column_widths`` (no expand, no fixed widths): the widest wrapable
        columns narrowed first, then all evenly, then each measured again on its width."""
        n = len(self.columns)
        longest = [max(map(len, column)) for column in zip(*cells)]
        widths = [self._widest(i, longest[i], pads[i], max_width) or 1 for i in range(n)]
        if sum(widths) <= max_width:
            return widths
        widths = _collapse_widths(widths, [not o["no_wrap"] for o in self.options], max_width)
        if sum(widths) > max_width:
            widths = _ratio_reduce(sum(widths) - max_width, [1] * n, widths, widths)
        return [self._widest(i, longest[i], pads[i], w) or 0 for i, w in enumerate(widths)]


def _collapse_widths(widths: list, wrapable: list, max_width: int) -> list:
    """Rich's ``Table._collapse_widths``: the widest wrapable columns narrowed first."""
    total = sum(widths)
    excess = total - max_width
    if any(wrapable):
        while total and excess > 0:
            widest = max(w for w, ok in zip(widths, wrapable) if ok)
            second = max(w if ok and w != widest else 0 for w, ok in zip(widths, wrapable))
            ratios = [1 if (w == widest and ok) else 0 for w, ok in zip(widths, wrapable)]
            if not any(ratios) or not widest - second:
                break
            widths = _ratio_reduce(excess, ratios, [min(excess, widest - second)] * len(widths), widths)
            total = sum(widths)
            excess = total - max_width
    return widths


def _ratio_reduce(total: int, ratios: list, maximums: list, values: list) -> list:
    """Rich's ``rich._ratio.ratio_reduce``."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return values[:]
    remaining, out = total, []
    for ratio, maximum, value in zip(ratios, maximums, values):
        if ratio and total_ratio > 0:
            step = min(maximum, round(ratio * remaining / total_ratio))
            out.append(value - step)
            remaining -= step
            total_ratio -= ratio
        else:
            out.append(value)
    return out


def _cell_lines(text: str, width: int, justify: str, overflow: str, no_wrap: bool) -> list[str]:
    """A cell's lines on ``width`` cells: Rich's ``Text.wrap`` (word wrap, or none with
    ``no_wrap``; long words folded or cut with an ellipsis), justified to the width."""
    if no_wrap or len(text) <= width:
        lines = [text]
    else:
        breaks = _breaks(text, width, fold=overflow == "fold")
        lines = [_rstrip_end(text[a:b], width) for a, b in zip([0, *breaks], [*breaks, len(text)])]
    return [_justify(line, width, justify, overflow) for line in lines]


def _rstrip_end(line: str, width: int) -> str:
    """Rich's ``Text.rstrip_end``: the spaces past the width dropped."""
    if len(line) > width:
        spaces = len(line) - len(line.rstrip())
        return line[:len(line) - min(spaces, len(line) - width)]
    return line


def _truncate(line: str, width: int, overflow: str) -> str:
    if len(line) > width:
        return line[:width - 1] + "…" if overflow == "ellipsis" else line[:width]
    return line


def _justify(line: str, width: int, justify: str, overflow: str) -> str:
    """Rich's ``Lines.justify`` of one line, then its truncation."""
    if justify == "left":
        return _truncate(line, width, overflow).ljust(width)
    line = _truncate(line.rstrip(), width, overflow)
    if justify == "right":
        return line.rjust(width)
    line = " " * ((width - len(line)) // 2) + line
    return line.ljust(width)


class PlainConsole:
    """``print`` as Rich's ``Console.print`` prints to a file (see the module), on a page
    ``width`` cells wide; by default tables fit :func:`table_width` and lines of text wrap at
    :func:`text_width` (not at all without ``COLUMNS``), as if printed with ``soft_wrap``."""

    def __init__(self, file=None, width: int | None = None):
        self.width = table_width() if width is None else width
        self.text_width = text_width() if width is None else width
        # without a width or COLUMNS, a table that 80 columns would cut is drawn as wide as its cells
        self._stretch = width is None and _columns() is None
        self._file, self._width = file, self.width
        self._rich = None

    @property
    def file(self):
        return sys.stdout if self._file is None else self._file

    def print(self, obj, *, highlight: bool | None = None, markup: bool | None = None, soft_wrap: bool = False):
        if isinstance(obj, Table):
            # a table that cannot fit without cutting a cell that does not wrap: as wide as its cells
            width = obj.natural_width() if self._stretch and obj.least_width() > self.width else self.width
            text = obj.draw(width)
            if text is None:
                return self.rich(width).print(obj, highlight=highlight, markup=markup, soft_wrap=soft_wrap)
        else:
            text = self._text(obj, markup is not False, soft_wrap) if isinstance(obj, str) else None
        if text is None:
            return self.rich().print(obj, highlight=highlight, markup=markup,
                                     soft_wrap=soft_wrap or (isinstance(obj, str) and self.text_width > self.width))
        self.file.write(text)

    def rich(self, width: int | None = None):
        """The Rich console for what this one does not draw, writing to the same file
        (``width``: another page width than this console's, for one wide table)."""
        from rich.console import Console

        if width is not None and width != self._width:
            return Console(file=self._file, width=width)
        if self._rich is None:
            self._rich = Console(file=self._file, width=self._width)
        return self._rich

    def _text(self, text: str, markup: bool, soft_wrap: bool) -> str | None:
        if markup:
            text = _without_tags(text)
        if text is None or not _plain(text.replace("\n", "")) or _EMOJI.search(text):
            return None
        if soft_wrap:
            return text + "\n"
        return "".join(line + "\n" for part in text.split("\n") for line in wrap(part, self.text_width))


ONE_CELL = frozenset("—Δ▲▼⇄±…")  # beyond ASCII, what judged prints (eval's dash, compare's marks,
# rejudge's cut sha256): one cell each


def _plain(text: str) -> bool:
    """Printable ASCII and :data:`ONE_CELL`: one cell per character, nothing Rich strips or
    expands."""
    return text.isprintable() and (text.isascii() or all(c.isascii() or c in ONE_CELL for c in text))


def _cell(text: str) -> bool:
    """What a table shows as it is: :func:`_plain`, without markup (a ``[`` Rich reads as a
    tag, a backslash), emoji code or leading spaces (trailing ones Rich measures and drops
    as :func:`_cell_lines` does: compare's header "grade ")."""
    return _plain(text) and text == text.lstrip() and not _RICH_TAG.search(text) and "\\" not in text \
        and not _EMOJI.search(text)


def _rich_cell(cell, Text):
    """A cell as Rich shows it (``Text``: rich.text.Text): judged's own markup (:data:`_TAG`,
    paired) read as markup, anything else as literal text: a query id, run name or docid
    such as ``[/i]`` or ``x[b]y`` is data, which Rich would read as a tag (a MarkupError, or
    text lost)."""
    if not isinstance(cell, str):
        return cell
    if _TAG.search(cell) and _without_tags(cell) is not None:
        return Text.from_markup(cell, emoji=False)
    return Text(cell)


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
    """Rich's word wrap of one line of printable text (``rich._wrap.divide_line``, then
    each line cut at the width: Rich drops the spaces past it, then crops): words longer
    than the width are folded."""
    breaks = _breaks(text, width)
    return [text[a:b][:width] for a, b in zip([0, *breaks], [*breaks, len(text)])]


def _breaks(text: str, width: int, fold: bool = True) -> list[int]:
    """Where Rich breaks a line of one-cell characters ``width`` cells wide
    (``rich._wrap.divide_line``): before a word that does not fit, and inside a word longer
    than the width if ``fold`` (else that word stays whole on its line)."""
    breaks, offset = [], 0
    for m in _WORD.finditer(text):
        start, word = m.start(), m.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            if not fold:
                if start:
                    breaks.append(start)
                offset = len(word)
                continue
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
    return breaks
