"""Jupyter notebooks (``.ipynb``): convert the code cells, keep every other byte.

How a notebook is converted, and why:

- **One module per notebook.** The code cells are joined in order and converted as
  one module, so a strategy made in one cell resolves where a later cell uses it
  (``strategy.run`` in cell 5 is only static if the planner sees cell 2's
  ``strategy = tf.distribute.MirroredStrategy()``), and the imports the conversion
  adds are scheduled once, in the first code cell, as notebooks put them.
  Converting cell by cell would send every cross-cell use to the run-time shim.
- **Cells are split again at boundary statements**, a bare name unique to the
  notebook placed before each cell but the first. No rule matches it and no rewrite
  removes it, so the split after conversion is exact (a comment would move or
  vanish with the statement it is attached to).
- **IPython syntax is masked.** A line magic (``%time f()``), shell escape
  (``!pip install x``), captured shell (``files = !ls``) or help (``obj?``) that
  starts a statement becomes a placeholder name, one per physical line, and is
  put back after conversion with the indentation its block has then (a magic
  inside ``with strategy.scope():`` moves out with the block's body). A cell
  whose first line is a cell magic holds no Python (``%%bash``, ``%%writefile``)
  and is left as it is, except the magics whose body is Python
  (``%%time``, ``%%timeit``, ``%%capture``, ``%%prun``, ``%%debug``): only their
  first line is masked, and stays first. A cell of one line that starts with the name
  of a magic and is not Python (``pip install x``, ``cd data``) is one too: IPython
  runs such a line as that magic (automagic, on by default, for one-line cells only);
  should the conversion add lines to its cell (the imports, in a first cell), it is
  written back as ``%pip install x``, which means the same in a longer cell.
- **An indented cell is dedented**, as IPython does before it runs a cell: when its
  first non-blank line is indented, that indentation is taken off every line that
  starts with it (so a cell pasted from inside a function converts). After
  conversion the lines that came through unchanged get their own text back and new
  lines get that indentation, which IPython takes off again; should that not give
  back the converted code under IPython's reading (a column-0 line that became the
  first), every non-blank line gets the indentation instead.
- **Findings** read ``path:cell N:LINE:COL: ID message``. ``N`` is the 1-based
  position of the cell in the notebook's ``cells`` list, markdown and raw cells
  counted (cell ``N`` is ``cells[N-1]`` in the file, and the N-th cell on screen);
  ``LINE`` and ``COL`` are 1-based within that cell's source.
- **Writing** replaces only the JSON values of the ``source`` of cells whose code
  changed, in the style they had (a list of lines or one string, the same
  indentation, newline and escaping). Cell ids, outputs, metadata, key order and
  the trailing newline stay byte for byte.

A notebook that is not valid JSON, not nbformat 4, or whose code does not parse
is a failed result with a message saying where; its bytes are not touched.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import hashlib
import json
import re
import warnings
from dataclasses import dataclass
from json.decoder import scanstring

from migrate.engine.findings import CellFinding, Finding  # noqa: F401  (CellFinding: notebooks' findings)
from migrate.engine.paths import NOTEBOOK_SUFFIX

PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
UTF8_BOM = "\ufeff"


class NotebookError(ValueError):
    """A file that is not a notebook this tool can rewrite."""


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


# -- reading: the JSON document and where each cell's source sits in the text --------------


@dataclass
class Cell:
    number: int  # 1-based position in ``cells``
    cell_type: str
    source: str
    as_list: bool  # stored as a list of lines (nbformat's usual form) or one string
    span: tuple[int, int]  # of the source value in the text
    element_starts: tuple[int, ...]  # text offsets of the list's strings (or the string's)


@dataclass
class Notebook:
    text: str  # without a BOM
    bom: bool
    data: dict
    cells: list[Cell]

    @property
    def language(self) -> str:
        meta = self.data.get("metadata")
        if not isinstance(meta, dict):
            return "python"
        for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
            section = meta.get(key)
            if isinstance(section, dict) and isinstance(section.get(field_name), str):
                return section[field_name].lower()
        return "python"


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip_ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _expect(text: str, i: int, char: str) -> int:
    i = _skip_ws(text, i)
    if text[i : i + 1] != char:
        raise NotebookError(f"expected {char!r} at offset {i}")
    return i + 1


def _walk_object(text: str, i: int, on_member) -> int:
    """Visit the members of the object at ``i``; ``on_member(key, value_start)`` returns the value's end."""
    i = _skip_ws(text, _expect(text, i, "{"))
    if text[i : i + 1] == "}":
        return i + 1
    while True:
        i = _skip_ws(text, i)
        if text[i : i + 1] != '"':
            raise NotebookError(f"expected a key at offset {i}")
        key, i = scanstring(text, i + 1)
        i = _skip_ws(text, _expect(text, i, ":"))
        i = _skip_ws(text, on_member(key, i))
        if text[i : i + 1] == ",":
            i += 1
            continue
        return _expect(text, i, "}")


def _skip_value(text: str, i: int) -> int:
    _, end = _DECODER.raw_decode(text, i)
    return end


def _array_items(text: str, i: int) -> tuple[list[int], int]:
    """Start offsets of an array's items, and the array's end."""
    i = _expect(text, i, "[")
    starts: list[int] = []
    i = _skip_ws(text, i)
    if text[i : i + 1] == "]":
        return starts, i + 1
    while True:
        i = _skip_ws(text, i)
        starts.append(i)
        i = _skip_ws(text, _skip_value(text, i))
        if text[i : i + 1] == ",":
            i += 1
            continue
        return starts, _expect(text, i, "]")


def _source_text(value) -> str:
    return value if isinstance(value, str) else "".join(value)


def parse_notebook(raw: bytes) -> Notebook:
    """Parse and check an nbformat 4 notebook; :class:`NotebookError` says what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not UTF-8 (byte {exc.start})") from None
    bom = text.startswith(UTF8_BOM)
    if bom:
        text = text[1:]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise NotebookError("not a notebook: the top level is not a JSON object")
    major = data.get("nbformat")
    if not isinstance(major, int) or isinstance(major, bool):
        raise NotebookError("not a notebook: no integer 'nbformat' field")
    if major != 4:
        raise NotebookError(f"nbformat {major} is not supported; save it as nbformat 4 (jupyter nbconvert --to notebook)")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not a notebook: 'cells' is not a list")
    for n, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"cell {n}: not an object with a 'cell_type'")
        source = cell.get("source")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            raise NotebookError(f"cell {n}: 'source' must be a string or a list of strings")

    # Where each cell's source value is, so a rewrite replaces exactly those characters.
    # A repeated key counts once, the last time, as json.loads reads it.
    spans: list[tuple[tuple[int, int], tuple[int, ...]] | None] = []

    def cell_member(n: int):
        def on_member(key: str, start: int) -> int:
            if key != "source":
                return _skip_value(text, start)
            if text[start] == "[":
                starts, end = _array_items(text, start)
            else:
                starts, end = [start], _skip_value(text, start)
            spans[n] = ((start, end), tuple(starts))
            return end

        return on_member

    def top_member(key: str, start: int) -> int:
        if key != "cells":
            return _skip_value(text, start)
        starts, end = _array_items(text, start)
        spans[:] = [None] * len(starts)
        for n, cell_start in enumerate(starts):
            _walk_object(text, cell_start, cell_member(n))
        return end

    try:
        _walk_object(text, _skip_ws(text, 0), top_member)
    except (NotebookError, ValueError, IndexError) as exc:  # pragma: no cover - json.loads accepted it
        raise NotebookError(f"cannot locate cell sources: {exc}") from None
    if len(spans) != len(cells) or None in spans:  # pragma: no cover - as above
        raise NotebookError("cannot locate cell sources")
    out = []
    for n, (cell, located) in enumerate(zip(cells, spans), 1):
        span, starts = located
        out.append(Cell(n, cell["cell_type"], _source_text(cell["source"]), isinstance(cell["source"], list), span, starts))
    return Notebook(text, bom, data, out)


def cell_sources(raw: bytes) -> list[Cell]:
    """The cells of a notebook, for excerpts and diffs (empty if it does not parse)."""
    try:
        return parse_notebook(raw).cells
    except NotebookError:
        return []


# -- masking IPython syntax ----------------------------------------------------------------

_HELP = re.compile(r"^(\?{1,2}\s*[\w.*]+|[\w.*]+\s*\?{1,2})\s*$")
_ASSIGN_MAGIC = re.compile(r"^[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
_STRING_START = re.compile(r"([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")


def _is_ipython_line(stripped: str) -> bool:
    return stripped[:1] in ("%", "!") or bool(_HELP.match(stripped)) or bool(_ASSIGN_MAGIC.match(stripped))


class _LineState:
    """Just enough of Python's lexer to know whether a line starts a statement."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # an open triple-quoted string
        self.continued = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        body = line.rstrip("\r\n")
        i, n = 0, len(body)
        self.continued = False
        while i < n:
            if self.quote is not None:
                end = body.find(self.quote, i)
                while end > 0 and _escaped(body, end):
                    end = body.find(self.quote, end + 1)
                if end < 0:
                    return
                i = end + len(self.quote)
                self.quote = None
                continue
            ch = body[i]
            if ch == "#":
                return
            if ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
            elif ch in "'\"":
                quote = body[i : i + 3] if body[i : i + 3] in ("'''", '"""') else ch
                if len(quote) == 3:
                    self.quote = quote
                    i += 3
                    continue
                end = i + 1
                while end < n and (body[end] != ch or _escaped(body, end)):
                    end += 1
                i = end + 1
                continue
            elif ch == "\\" and i == n - 1:
                self.continued = True
            i += 1


def _escaped(text: str, i: int) -> bool:
    backslashes = 0
    while i - 1 - backslashes >= 0 and text[i - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def physical_lines(text: str) -> list[str]:
    """Lines as Python counts them (``\\n``, ``\\r\\n``, ``\\r``), ends kept; unlike str.splitlines,
    a form feed or U+2028 inside a line does not end it."""
    return _LINE.findall(text)


@dataclass
class _Masked:
    code: str
    magics: dict[int, tuple[str, str]]  # placeholder number -> (placeholder's indentation, original line)
    opaque: bool = False
    indent: str = ""  # taken off the lines that start with it (IPython's leading_indent)
    lines: tuple[str, ...] = ()  # with an indent: the cell's lines as written, and dedented
    dedented: tuple[str, ...] = ()
    automagic: int | None = None  # the placeholder of a one-line cell's automagic line
    cell_magic: int | None = None  # the placeholder of a ``%%time``-like first line


# Magics IPython runs without their ``%`` in a one-line cell (automagic): its default line
# magics and shell aliases, and TensorBoard's (``%load_ext tensorboard``).
AUTOMAGICS = frozenset(
    """alias alias_magic autoawait autocall automagic bookmark cat cd clear colors conda config
    cp debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf
    lk ll load load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro
    magic man matplotlib mkdir more mv notebook page pastebin pdb pdef pdoc pfile pinfo
    pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat pylab quickref
    recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env
    store sx system tb tensorboard time timeit unalias unload_ext who who_ls whos xdel
    xmode""".split()
)
_FIRST_WORD = re.compile(r"[A-Za-z_]\w*")


def _leading_indent(lines: list[str]) -> str:
    """The indentation IPython takes off a cell's lines that start with it: its first non-blank line's."""
    first = next((line for line in lines if line.strip()), "")
    return first[: len(first) - len(first.lstrip(" \t"))]


def _ipython_dedent(text: str) -> str:
    """IPython's ``leading_indent``: the first non-blank line's indentation taken off every
    line that starts with it."""
    lines = physical_lines(text)
    indent = _leading_indent(lines)
    return "".join(line[len(indent):] if indent and line.startswith(indent) else line for line in lines)


def _reindent(text: str, masked: _Masked) -> str:
    """The converted text of a dedented cell, indented again so that IPython reads it as
    ``text``: lines that came through the conversion unchanged as they were written, new
    lines with the indent; failing that (a line written at column 0 became the first),
    every non-blank line with the indent, which IPython takes off exactly."""
    new = physical_lines(text)
    bodies = [line.rstrip("\r\n") for line in new]
    was = [line.rstrip("\r\n") for line in masked.lines]
    dedented = [line.rstrip("\r\n") for line in masked.dedented]

    def indented(lines: list[str]) -> list[str]:
        return [masked.indent + line if line.strip() else line for line in lines]

    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, dedented, bodies, autojunk=False).get_opcodes():
        if tag == "equal":  # as written, with the line end it has now (the cell's last line may have gained one)
            out += [was[i] + new[j][len(bodies[j]):] for i, j in zip(range(i1, i2), range(j1, j2))]
        else:
            out += indented(new[j1:j2])
    kept = "".join(out)
    if _ipython_dedent(kept) == text:
        return kept
    return "".join(indented(new))


def _dedent_of(masked: _Masked, line: int) -> int:
    """How many characters were taken off the start of ``line`` (1-based) of the cell."""
    if not masked.indent or not 0 < line <= len(masked.lines):
        return 0
    return len(masked.lines[line - 1]) - len(masked.dedented[line - 1])


def _automagic(stripped: str) -> bool:
    """A line IPython runs as a magic named by its first word when it is a cell's only line."""
    word = _FIRST_WORD.match(stripped)
    if word is None or word.group() not in AUTOMAGICS:
        return False
    if stripped[word.end():].lstrip()[:1] in ("=", ","):  # an assignment: IPython never makes it a magic
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (SyntaxWarning: `x is 1`)
            compile(stripped, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError):
        return True
    return False  # Python (``ls``, ``time.sleep(1)``): converted as such


def mask_cell(source: str, placeholder: str, counter: list[int]) -> _Masked:
    """Replace IPython-only lines by placeholder names; ``counter`` numbers them notebook-wide.
    An indented cell is dedented first (:func:`_leading_indent`)."""
    lines = written = physical_lines(source)
    indent = _leading_indent(lines)
    if indent:
        lines = [line[len(indent):] if line.strip() and line.startswith(indent) else line for line in lines]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    magics: dict[int, tuple[str, str]] = {}
    if first is not None and lines[first].lstrip().startswith("%%"):
        words = lines[first].strip()[2:].split(None, 1)
        if (words[0] if words else "") not in PYTHON_CELL_MAGICS:
            return _Masked(source, {}, opaque=True)
    one_line = first is not None and first == len(lines) - 1  # IPython: `len(cell.splitlines()) == 1`
    state = _LineState()
    out: list[str] = []
    at = ""
    magic_continues = False
    automagic = cell_magic = None
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        newline = line[len(body):]
        stripped = body.lstrip()
        is_cell_magic = i == first and stripped.startswith("%%")
        if (magic_continues or is_cell_magic or (state.at_statement_start and stripped and _is_ipython_line(stripped))
                or (one_line and i == first and _automagic(stripped))):
            if not magic_continues:  # a continuation line keeps the statement's indentation
                at = body[: len(body) - len(stripped)]
            k = counter[0]
            counter[0] += 1
            magics[k] = (at, body)
            if is_cell_magic:
                cell_magic = k
            elif one_line and i == first and not _is_ipython_line(stripped):
                automagic = k
            out.append(f"{at}{placeholder}{k}__{newline}")
            magic_continues = body.endswith("\\")
            continue
        out.append(line)
        state.feed(line)
    if not indent:
        return _Masked("".join(out), magics, automagic=automagic, cell_magic=cell_magic)
    return _Masked("".join(out), magics, indent=indent, lines=tuple(written), dedented=tuple(lines),
                   automagic=automagic, cell_magic=cell_magic)


def _unmask(code: str, masked: dict[int, tuple[str, str]], pattern: re.Pattern) -> tuple[str, set[int]]:
    """Put the masked lines back, shifted by as much as their placeholder's indentation moved."""
    seen: set[int] = set()

    def restore(m: re.Match) -> str:
        k = int(m["k"])
        seen.add(k)
        was, original = masked[k]
        now = m["indent"]
        if now == was:
            return original
        if len(now) < len(was):  # the block was dedented (a scope unwrapped): take off as much
            cut = len(was) - len(now)
            head = original[:cut]
            return original[cut:] if not head.strip(" \t") else now + original.lstrip(" \t")
        return now[len(was):] + original

    return pattern.sub(restore, code), seen


# -- converting -----------------------------------------------------------------------------


def _nonce(text: str) -> str:
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
    for i in range(0, len(digest) - 8):
        candidate = digest[i : i + 8]
        if candidate not in text:
            return candidate
    return digest  # pragma: no cover - 30+ collisions of 8 hex digits


@dataclass
class _Segment:
    cell: Cell
    masked: _Masked
    first_line: int  # line of the joined module where this cell's code starts
    line_count: int


def _joined(nb: Notebook) -> tuple[str, list[_Segment], str, str]:
    nonce = _nonce(nb.text)
    boundary = f"_migrate_cell_{nonce}_"
    placeholder = f"_migrate_magic_{nonce}_"
    counter = [0]
    pieces: list[str] = []
    segments: list[_Segment] = []
    line = 1
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        masked = mask_cell(cell.source, placeholder, counter)
        if masked.opaque:
            continue
        if segments:
            pieces.append(f"{boundary}{cell.number}__\n")
            line += 1
        code = masked.code
        if code and not code.endswith(("\n", "\r")):
            code += "\n"
        pieces.append(code)
        count = len(physical_lines(code))
        segments.append(_Segment(cell, masked, line, count))
        line += count
    return "".join(pieces), segments, boundary, placeholder


def _locate(segments: list[_Segment], line: int) -> tuple[_Segment, int] | None:
    starts = [s.first_line for s in segments]
    i = bisect.bisect_right(starts, line) - 1
    if i < 0:
        return None
    seg = segments[i]
    if line >= seg.first_line + max(seg.line_count, 1):
        return None
    return seg, line - seg.first_line + 1


def _file_line(nb: Notebook, newlines: list[int], cell: Cell, cell_line: int) -> int:
    """The line of the .ipynb text holding line ``cell_line`` of ``cell``'s source."""
    offset = cell.span[0]
    if cell.as_list and cell.element_starts:
        first = 1  # the cell line each list item starts on
        for start, piece in zip(cell.element_starts, nb.data["cells"][cell.number - 1]["source"]):
            if first > cell_line:
                break
            offset = start
            first += piece.count("\n")
    return bisect.bisect_right(newlines, offset + (1 if nb.bom else 0)) + 1


_LINE_IN_MESSAGE = re.compile(r"\bline (\d+)(, column (\d+))?")


def _map_error(message: str, segments: list[_Segment]) -> str:
    def repl(m: re.Match) -> str:
        found = _locate(segments, int(m.group(1)))
        if found is None:
            return m.group(0)
        seg, line = found
        column = f", column {int(m.group(3)) + _dedent_of(seg.masked, line)}" if m.group(3) else ""
        return f"cell {seg.cell.number}, line {line}{column}"

    return _LINE_IN_MESSAGE.sub(repl, message)


def convert_notebook(data: bytes, index, path: str = "<notebook>", max_nodes: int | None = None, options=None):
    """Convert a notebook's bytes; a :class:`~migrate.engine.runner.FileResult` as for a .py file.
    ``max_nodes`` bounds its code as a .py file's (outputs make notebooks big: bytes say little)."""
    from migrate.engine.results import FileResult
    from migrate.engine.runner import convert_source

    try:
        nb = parse_notebook(data)
    except NotebookError as exc:
        return FileResult(path, "failed", error=f"{exc}; file left as it was", original=data)
    if nb.language != "python":
        return FileResult(path, "skipped", error=f"not a Python notebook (kernel language {nb.language!r})", original=data, converted=data)
    code, segments, boundary, placeholder = _joined(nb)
    if not segments:
        return FileResult(path, "unchanged", original=data, converted=data)
    # A BOM pins the module's encoding to UTF-8, whatever a coding comment in the first cell says.
    result = convert_source(b"\xef\xbb\xbf" + code.encode("utf-8"), index, path, options, max_nodes)
    if result.status == "failed":
        return FileResult(path, "failed", error=_map_error(result.error, segments), original=data)
    findings = _cell_findings(nb, segments, result.findings)
    if result.status != "changed":
        return FileResult(path, result.status, findings=findings, error=result.error, original=data, converted=data,
                          engine_error=result.engine_error)
    try:
        sources = _split(result.converted.decode("utf-8-sig"), segments, boundary, placeholder)
    except NotebookError as exc:
        return FileResult(path, "failed", error=f"internal error: {exc}; file left as it was", original=data)
    new_text = _replace_sources(nb, sources)
    converted = (UTF8_BOM if nb.bom else "").encode("utf-8") + new_text.encode("utf-8")
    status = "changed" if converted != data else "unchanged"
    return FileResult(path, status, findings=findings, original=data, converted=converted, engine_error=result.engine_error)


def _cell_findings(nb: Notebook, segments: list[_Segment], findings: list[Finding]) -> list[CellFinding]:
    newlines = [m.start() for m in re.finditer("\n", (UTF8_BOM if nb.bom else "") + nb.text)]
    out = []
    for f in findings:
        found = _locate(segments, f.line)
        if found is None:  # pragma: no cover - findings sit on code, never on a boundary
            continue
        seg, line = found
        out.append(
            CellFinding(f.path, line, f.col + _dedent_of(seg.masked, line), f.rule, f.status, f.message, f.api, f.maps_to, cell=seg.cell.number, file_line=_file_line(nb, newlines, seg.cell, line))
        )
    out.sort(key=lambda f: (f.cell, f.line, f.col, f.rule, f.status, f.message))
    return out


def _first_line_first(text: str, name: str) -> str:
    """``text`` with the line holding the placeholder ``name`` (a cell magic's) moved to the
    top, should the conversion have put lines before it (imports, in a first cell)."""
    lines = physical_lines(text)
    at = next(i for i, line in enumerate(lines) if line.strip() == name)
    if not any(line.strip() for line in lines[:at]):
        return text
    line = lines.pop(at)
    if not line.endswith(("\n", "\r")):
        line += "\n"
    return line + "".join(lines)


def _split(code: str, segments: list[_Segment], boundary: str, placeholder: str) -> dict[int, str]:
    """New source of each cell whose code changed, by cell number."""
    pattern = re.compile(rf"^{re.escape(boundary)}(\d+)__\r?\n?", re.M)
    parts = pattern.split(code)
    numbers = [int(n) for n in parts[1::2]]
    if numbers != [s.cell.number for s in segments[1:]]:
        raise NotebookError("cell boundaries moved during conversion")
    magic = re.compile(rf"^(?P<indent>[ \t]*){re.escape(placeholder)}(?P<k>\d+)__$", re.M)
    changed: dict[int, str] = {}
    for seg, new in zip(segments, parts[0::2]):
        masked = seg.masked
        magics = masked.magics
        if masked.cell_magic is not None:
            new = _first_line_first(new, f"{placeholder}{masked.cell_magic}__")
        if masked.automagic is not None and sum(1 for line in physical_lines(new) if line.strip()) > 1:
            was, original = magics[masked.automagic]  # no longer a one-line cell: IPython needs the `%`
            magics = {**magics, masked.automagic: (was, original[: len(was)] + "%" + original[len(was):])}
        new, seen = _unmask(new, magics, magic)
        if seen != set(seg.masked.magics):
            raise NotebookError(f"an IPython line of cell {seg.cell.number} was lost during conversion")
        if masked.indent:
            new = _reindent(new, masked)
        old = seg.cell.source
        trailing = len(old) - len(old.rstrip("\r\n"))
        new = new.rstrip("\r\n") + old[len(old) - trailing :] if new.strip() else new.strip("\r\n")
        if new != old:
            changed[seg.cell.number] = new
    return changed


# -- writing: replace source values in the style they had ---------------------------------


def _indent_at(text: str, i: int) -> str:
    start = text.rfind("\n", 0, i) + 1
    line = text[start:i]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _style(text: str) -> tuple[str, str, bool, str]:
    """(newline, one indentation step, ensure_ascii, item separator) the file was written with."""
    newline = "\r\n" if "\r\n" in text else "\n"
    first_break = text.find("\n")
    unit = ""
    if first_break >= 0:
        nxt = text[first_break + 1 :]
        unit = nxt[: len(nxt) - len(nxt.lstrip(" \t"))]
    escapes = (int(m.group(1), 16) for m in re.finditer(r"\\u([0-9a-fA-F]{4})", text))
    ascii_only = text.isascii() and any(code > 127 for code in escapes)
    sep = ", " if '": ' in text else ","
    return newline, unit, ascii_only, sep


def _format_source(nb: Notebook, cell: Cell, source: str, style) -> str:
    newline, unit, ascii_only, sep = style
    dump = lambda s: json.dumps(s, ensure_ascii=ascii_only)  # noqa: E731
    if not cell.as_list:
        return dump(source)
    items = [dump(s) for s in source.splitlines(keepends=True)]
    start, end = cell.span
    old = nb.text[start:end]
    if not items:
        return "[]"
    multiline = "\n" in old if cell.element_starts else bool(unit)
    if not multiline:
        return "[" + sep.join(items) + "]"
    if cell.element_starts:
        item_indent = _indent_at(nb.text, cell.element_starts[0])
        close_indent = _indent_at(nb.text, end - 1)
    else:
        close_indent = _indent_at(nb.text, start)
        item_indent = close_indent + unit
    return "[" + newline + ("," + newline).join(item_indent + item for item in items) + newline + close_indent + "]"


def _replace_sources(nb: Notebook, sources: dict[int, str]) -> str:
    style = _style(nb.text)
    text = nb.text
    for cell in sorted((c for c in nb.cells if c.number in sources), key=lambda c: -c.span[0]):
        start, end = cell.span
        text = text[:start] + _format_source(nb, cell, sources[cell.number], style) + text[end:]
    return text


# -- diffs ----------------------------------------------------------------------------------


def unified_diff(original: bytes, converted: bytes, label: str) -> str:
    """A unified diff of each changed code cell, labelled ``path:cell N``."""
    old_cells, new_cells = cell_sources(original), cell_sources(converted)
    if len(old_cells) != len(new_cells):
        old_text = original.decode("utf-8", "replace").splitlines(keepends=True)
        new_text = converted.decode("utf-8", "replace").splitlines(keepends=True)
        return "".join(difflib.unified_diff(old_text, new_text, f"a/{label}", f"b/{label}"))
    out = []
    for old, new in zip(old_cells, new_cells):
        if old.source == new.source:
            continue
        a = _ensure_final_newline(old.source.splitlines(keepends=True))
        b = _ensure_final_newline(new.source.splitlines(keepends=True))
        out.append("".join(difflib.unified_diff(a, b, f"a/{label}:cell {old.number}", f"b/{label}:cell {new.number}")))
    return "".join(out)


def _ensure_final_newline(lines: list[str]) -> list[str]:
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines
