"""Plain tables with a note under them: what the robustness benches, the subsets summary and the signal cost
print, as Markdown, rich tables or JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from serpfuse.bench.report import markdown_table


@dataclass
class Tables:
    """Plain tables (header, rows) with a note under them: what the robustness benches print.

    ``strong`` cells are wrapped in ``**`` for Markdown and ``[bold]`` for rich; ``right_from`` is the first
    right-aligned column of each table.
    """

    payload: Any
    tables: list[tuple[str, list[str], list[list[str]], int]]  # (rich title, header, rows, right_from)
    note: str

    def to_json(self) -> Any:
        return self.payload

    def markdown(self) -> str:
        parts = [
            markdown_table(head, [[_strong(c, "**", "**") for c in row] for row in rows], right_from=right)
            for _, head, rows, right in self.tables
        ]
        return "\n\n".join([*parts, self.note] if self.note else parts)

    def render(self, console) -> None:
        from rich.table import Table

        for title, head, rows, right in self.tables:
            table = Table(title=title)
            for i, name in enumerate(head):
                table.add_column(name, justify="left" if i < right else "right")
            for row in rows:
                table.add_row(*(_strong(c, "[bold]", "[/bold]") for c in row))
            console.print(table)
        if self.note:
            console.print(f"[dim]{self.note}[/dim]")


STRONG = "\x00"  # marks a cell to show in bold: "\x00text"


def _strong(cell: str, start: str, end: str) -> str:
    return f"{start}{cell[1:]}{end}" if cell.startswith(STRONG) else cell
