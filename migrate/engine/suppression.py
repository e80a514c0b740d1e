"""Inline suppressions: ``# migrate: ignore`` and ``# migrate: ignore[ID,...]`` on a line."""

from __future__ import annotations

import io
import re
import tokenize

SUPPRESS = "# migrate: ignore"
SUPPRESS_COMMENT = re.compile(r"# migrate: ignore(?:\[(?P<ids>[^\]]*)\])?")


def suppressed_lines(text: str) -> dict[int, frozenset[str] | None]:
    """Lines holding ``# migrate: ignore`` (every rule: None) or ``# migrate: ignore[ID,...]``.

    Read from comment tokens, so the text inside a string literal silences nothing.
    """
    out: dict[int, frozenset[str] | None] = {}
    if SUPPRESS not in text:
        return out
    try:
        comments = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        comments = list(enumerate(re.split(r"\r\n|\r|\n", text), 1))
    for line, comment in comments:
        m = SUPPRESS_COMMENT.search(comment)
        if m is None:
            continue
        if m["ids"] is None:
            out[line] = None
        elif out.get(line, frozenset()) is not None:
            out[line] = out.get(line, frozenset()) | {i.strip() for i in m["ids"].split(",") if i.strip()}
    return out


def is_suppressed(quiet: dict[int, frozenset[str] | None], line: int, rule_id: str) -> bool:
    return line in quiet and (quiet[line] is None or rule_id in quiet[line])
