"""Findings: what the engine saw at one place in one file, and what it did about it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from migrate.safe_io import display

# converted: rewritten statically; runtime: left to migrate.runtime at run time;
# manual: a person has to act; info: converted, with a behaviour note worth reading.
NEEDS_PERSON = ("manual",)
_LINE_BREAK = re.compile(r"[ \t]*(?:\r\n|\r|\n)[ \t\f]*")


def one_line(text: str) -> str:
    """``text`` on one line: code quoted in a message may span lines; a diagnostic and a comment may not."""
    return _LINE_BREAK.sub(" ", text) if "\n" in text or "\r" in text else text


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    col: int
    rule: str
    status: str
    message: str
    api: str = ""
    maps_to: str = ""

    def format(self) -> str:
        """``path:line:col: ID message`` as ruff and flake8 print them."""
        return f"{display(self.path)}:{self.line}:{self.col}: {self.rule} {self.message}"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, order=True)
class CellFinding(Finding):
    """A finding in a notebook: ``line``/``col`` are within cell ``cell`` (1-based).

    ``file_line`` is the line of the ``.ipynb`` file that holds that source line,
    for tools that only understand file lines (SARIF viewers, editors).
    """

    cell: int = 0
    file_line: int = 0

    def format(self) -> str:
        return f"{display(self.path)}:cell {self.cell}:{self.line}:{self.col}: {self.rule} {self.message}"
