"""A page of console lines: text wrapped to the width under a hanging indent, and a plain table."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text


@dataclass(frozen=True)
class Column:
    header: str
    right: bool = False


class Page:
    """Lines for a terminal `width` columns wide; words never break (an id or path longer than the
    width stays whole on a line of its own), no box drawing, colour only when asked for."""

    def __init__(self, width: int, color: bool) -> None:
        self.width = max(width, 40)
        self.buffer = io.StringIO()
        self.console = Console(
            file=self.buffer,
            width=self.width,
            force_terminal=color,
            color_system="standard" if color else None,
            no_color=not color,
            highlight=False,
            emoji=False,
            soft_wrap=True,
        )

    def line(self, text: Text | str = "", indent: int = 0, hang: int = 2) -> None:
        """`text` at `indent`, continuation lines `hang` further in."""
        body = text if isinstance(text, Text) else Text(text)
        if not body.plain:
            self.console.print()
            return
        lines = _wrap_hanging(body, self.width - indent, hang)
        for number, piece in enumerate(lines):
            margin = indent if number == 0 else indent + hang
            self.console.print(Text(" " * margin) + piece)

    def heading(self, text: str) -> None:
        self.console.print()
        self.console.print(Text(text, style="bold"))

    def table(self, columns: Sequence[Column], rows: Sequence[Sequence[Text]], indent: int = 0) -> None:
        """A table without borders: two spaces between columns, the last column left free to run on."""
        widths = [
            max([len(column.header), *(row[index].cell_len for row in rows)])
            for index, column in enumerate(columns)
        ]
        header = Text(" " * indent)
        for index, column in enumerate(columns):
            header.append(_cell(Text(column.header), widths[index], column, last=index == len(columns) - 1))
        header.rstrip()
        header.stylize("bold")
        self.console.print(header)
        for row in rows:
            line = Text(" " * indent)
            for index, column in enumerate(columns):
                line.append_text(_cell(row[index], widths[index], column, last=index == len(columns) - 1))
            line.rstrip()
            self.console.print(line)

    def text(self) -> str:
        return self.buffer.getvalue()


def _cell(value: Text, width: int, column: Column, *, last: bool) -> Text:
    room = " " * (width - value.cell_len)
    cell = Text(room) + value if column.right else value + Text(room)
    return cell if last else cell + Text("  ")


def _wrap_hanging(body: Text, first: int, hang: int) -> list[Text]:
    """Break `body` at spaces: `first` columns on its first line, `first - hang` on the others; a word
    longer than its line stays whole (an id or path is never cut)."""
    plain = body.plain
    breaks: list[int] = []
    start, room = 0, max(first, 20)
    rest = max(first - hang, 20)
    for word in re.finditer(r"\S+", plain):
        # a word too long for any line stays where it is: on a line of its own it would not fit either
        if word.end() - start > room and word.start() > start and word.end() - word.start() <= rest:
            breaks.append(word.start())
            start, room = word.start(), rest
    lines = list(body.divide(breaks))
    for piece in lines:
        piece.rstrip()
    return lines
