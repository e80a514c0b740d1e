"""Where a run reads and where it writes.

Reading: :func:`walk_inputs` finds the source files under the paths given, and (for
``--out``) everything else that comes along with them. It follows no symbolic link
below a path given, reads nothing that is not a regular file (a named pipe would block
the run), and sees a file reached twice (``src`` and ``src/sub``, or a directory given
through a link) once. :func:`read_source` opens a file without blocking and refuses
anything but a regular file, should one be swapped in after discovery.

Writing: :class:`OutLayout` decides, before anything is written, where every input
goes under ``--out``, and refuses the run when a destination is an input, when two
inputs would land on one destination, when ``--out`` holds an input, or when a write
would go through a symbolic link inside ``--out`` (out of the tree). :func:`check_report_target`
does the same for a report file. Nothing here writes except :meth:`OutLayout.make_parent`,
which makes ``--out``'s directories one component at a time and never through a link.

:func:`display` gives a path as text that every stream and report format can hold.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
from typing import Iterable

from migrate.config import ConfigError
from migrate.engine.results import FileResult
from migrate.safe_io import display, kind_of

SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", "node_modules",
    ".migrate_cache",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies: converting them would only fight the autosave
}
NOTEBOOK_SUFFIX = ".ipynb"
SOURCE_SUFFIXES = (".py", NOTEBOOK_SUFFIX)

def exclusion(patterns: tuple[str, ...], base: str | None = None):
    """A predicate for ``exclude`` patterns, as ruff reads them.

    A pattern without ``/`` matches any one path component (``*_pb2.py``, ``build``);
    one with ``/`` matches the path relative to ``base`` (the directory holding the
    pyproject.toml, else the current directory) or any directory above it, so
    ``third_party/*`` and ``third_party/vendor`` exclude everything below them.
    """
    root = os.path.abspath(base or os.getcwd())
    plain = [p.strip("/") for p in patterns if "/" not in p.strip("/")]
    nested = [p.strip("/").removeprefix("./") for p in patterns if "/" in p.strip("/")]

    def excluded(path: str) -> bool:
        if not patterns:
            return False
        rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
        parts = rel.split("/")
        if any(fnmatch.fnmatchcase(part, pat) for pat in plain for part in parts):
            return True
        heads = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        return any(fnmatch.fnmatchcase(head, pat) for pat in nested for head in heads)

    return excluded


# A directory entry's identity: its directory's (device, inode) and its name. Two spellings of
# one entry (through a linked directory, or relative and absolute) share it; a rename over a
# path replaces exactly the entry with that identity (a hard link elsewhere is another entry).
Entry = tuple[int, int, str]


@dataclass
class Inputs:
    """What :func:`walk_inputs` found."""

    files: list[str] = field(default_factory=list)  # source files to convert, in order
    passed_over: list[FileResult] = field(default_factory=list)  # skipped, excluded as errors, missing
    # Everything else under the paths, for --out: (path, "file" | "link"), in order.
    others: list[tuple[str, str]] = field(default_factory=list)
    # The entries of every regular file read or copied (sources, excluded sources, others): a
    # report is never written over one, nor is --out.
    entries: set[Entry] = field(default_factory=set)


class _Identities:
    """Directory identities, each looked up once."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[int, int] | None] = {}

    def of(self, directory: str) -> tuple[int, int] | None:
        key = directory or "."
        if key not in self.seen:
            try:
                st = os.stat(key)
                self.seen[key] = (st.st_dev, st.st_ino)
            except OSError:
                self.seen[key] = None
        return self.seen[key]

    def entry(self, path: str) -> Entry | None:
        directory, name = os.path.split(path)
        ident = self.of(directory)
        return None if ident is None else (*ident, name)


def walk_inputs(
    paths: Iterable[str], exclude: tuple[str, ...] = (), base: str | None = None, prune: Iterable[str] = (),
    others: bool = False,
) -> Inputs:
    """The source files under ``paths`` (sorted per path, each once) and results for what was passed over.

    Symbolic links below a path given are never followed (a link to a directory is not
    entered; a link to a file is skipped, and copied as a link under ``--out``): rewriting
    through a link would change a file outside the tree, and an atomic rename would turn the
    link into a plain file. A path given may itself be a link to a directory. Only regular
    files are read: a named pipe, socket or device is reported and skipped. ``exclude``
    applies to files named on the command line too (pre-commit passes files one by one).
    ``prune`` holds directories never entered (an ``--out`` directory inside the tree),
    matched by identity, whatever the spelling. With ``others``, everything else under the
    paths is listed as well (what ``--out`` copies as it is), excluded directories included.
    """
    found = Inputs()
    excluded = exclusion(tuple(exclude), base)
    ids = _Identities()
    pruned = {ident for ident in (ids.of(p) for p in prune) if ident is not None}
    seen: set[Entry] = set()

    def note(path: str) -> Entry | None:
        entry = ids.entry(path)
        if entry is not None:
            found.entries.add(entry)
        return entry

    def source(path: str, st: os.stat_result, named: bool, in_excluded: bool = False) -> None:
        if stat.S_ISLNK(st.st_mode):
            found.passed_over.append(FileResult(path, "skipped", error="symbolic link; convert the file it points to"))
            if others:
                found.others.append((path, "link"))
        elif not stat.S_ISREG(st.st_mode):
            found.passed_over.append(FileResult(path, "skipped", error=f"{kind_of(st.st_mode)}, not a regular file; not read"))
        elif in_excluded or excluded(path):
            # Reported when named on the command line; below a directory, left out quietly (as ruff does).
            if named:
                found.passed_over.append(FileResult(path, "skipped", error="excluded by configuration"))
            note(path)
            if others:
                found.others.append((path, "file"))
        else:
            entry = note(path)
            if entry is None or entry not in seen:
                if entry is not None:
                    seen.add(entry)
                found.files.append(path)

    def other(path: str, st: os.stat_result) -> None:
        if stat.S_ISLNK(st.st_mode):
            found.others.append((path, "link"))
        elif stat.S_ISREG(st.st_mode):
            found.others.append((path, "file"))
            note(path)
        else:
            found.passed_over.append(FileResult(path, "skipped", error=f"{kind_of(st.st_mode)}, not a regular file; not copied"))

    roots = [os.path.normpath(p) for p in paths]
    for top in roots:
        try:
            st = os.lstat(top)
        except OSError:
            found.passed_over.append(FileResult(top, "failed", error="no such file or directory"))
            continue
        if stat.S_ISLNK(st.st_mode) and os.path.isdir(top):
            pass  # a directory given through a link: walked like the directory itself
        elif not stat.S_ISDIR(st.st_mode):
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode) or top.endswith(SOURCE_SUFFIXES):
                source(top, st, True)
            elif others:
                other(top, st)
            continue
        if ids.of(top) in pruned:
            continue
        for root, dirs, names in os.walk(top):
            # Only entered with ``others``: an excluded directory is copied as it is.
            in_excluded = others and root != top and excluded(root)
            keep = []
            for d in sorted(dirs):
                full = os.path.join(root, d)
                if d in SKIP_DIRS or ids.of(full) in pruned or os.path.lexists(os.path.join(full, OUT_MARKER)):
                    continue  # (a converted copy left inside the tree by --out is not a source)
                if os.path.islink(full):  # os.walk does not enter it; --out copies the link
                    if others and not _names_a_root(full, roots):
                        found.others.append((os.path.normpath(full), "link"))
                    continue
                if excluded(full) and not others:
                    continue
                keep.append(d)
            dirs[:] = keep
            for name in sorted(names):
                full = os.path.normpath(os.path.join(root, name))
                try:
                    st = os.lstat(full)
                except OSError:
                    continue  # gone since the directory was read
                if name.endswith(SOURCE_SUFFIXES):
                    source(full, st, False, in_excluded)
                elif others:
                    other(full, st)
    return found


def discover(
    paths: Iterable[str], exclude: tuple[str, ...] = (), base: str | None = None, prune: Iterable[str] = ()
) -> tuple[list[str], list[FileResult]]:
    """The source files under ``paths`` and results for what was passed over (see :func:`walk_inputs`)."""
    found = walk_inputs(paths, exclude, base, prune)
    return found.files, found.passed_over


# Left in an --out directory inside an input directory: the next run knows the directory for a
# copy of its own (left out of the conversion, written over), not a directory of sources.
OUT_MARKER = ".migrate-out"
OUT_MARKER_TEXT = ("This directory holds a converted copy written by `migrate convert --out`.\n"
                   "The next run into it writes over its files; the conversion of the tree around it leaves it out.\n")


def _names_a_root(link: str, roots: list[str]) -> bool:
    """Whether a linked directory is itself a path given, or holds one (then it is converted, not copied as a link)."""
    link = os.path.abspath(link)
    return any(a == link or a.startswith(link + os.sep) for a in (os.path.abspath(r) for r in roots))


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class OutLayout:
    """Where ``--out`` puts every input, checked whole before anything is written.

    A file's place is its path relative to the outermost path given that holds it (a
    directory given) or to that path's directory (a file, or a link to a directory, given).
    """

    def __init__(self, roots: list[str], out: str) -> None:
        self.out = os.path.abspath(out)
        self.out_given = os.path.normpath(out)
        self.out_real = os.path.realpath(out)
        self.roots = [os.path.normpath(r) for r in roots]
        bases = []
        for root in self.roots:
            absolute = os.path.abspath(root)
            is_dir = os.path.isdir(root) and not os.path.islink(root)
            linked_dir = os.path.isdir(root) and os.path.islink(root)
            bases.append((absolute, absolute if is_dir else os.path.dirname(absolute), is_dir or linked_dir))
        self._bases = bases
        self.dests: dict[str, tuple[str, str]] = {}  # destination -> (input, "convert" | "file" | "link")
        self.entry_dests: dict[Entry, tuple[str, str]] = {}  # the same, by identity, where its directory exists
        self.inside_input = False  # --out is inside an input directory (marked as this tool's, see OUT_MARKER)
        self._made: set[str] = set()

    def shown(self, dest: str) -> str:
        """A destination as the user would spell it: under --out as given."""
        return display(os.path.normpath(os.path.join(self.out_given, os.path.relpath(dest, self.out))))

    def destination(self, path: str) -> str:
        p = os.path.abspath(path)
        best = None
        for root, base, is_dir in self._bases:
            if p == root or (is_dir and p.startswith(root + os.sep)):
                if best is None or len(base) < len(best):
                    best = base
        if best is None:  # not under a path given (cannot happen for what walk_inputs found)
            return os.path.join(self.out, os.path.basename(p))
        return os.path.join(self.out, os.path.relpath(p, best))

    @classmethod
    def plan(cls, roots: list[str], out: str, inputs: Inputs) -> "OutLayout":
        """The layout for these inputs, or a :class:`ConfigError` saying why the run must not write at all."""
        layout = cls(roots, out)
        shown = display(out)
        if os.path.lexists(out) and not os.path.isdir(out):
            raise ConfigError(f"--out {shown} is not a directory")
        for root in layout.roots:
            if not os.path.lexists(root):
                continue
            real = os.path.realpath(root)
            linked = os.path.abspath(root) != real or layout.out != layout.out_real
            how = " (through a symbolic link)" if linked else ""
            if real == layout.out_real:
                named = "" if os.path.normpath(out) == root else f" ({display(root)}{', through a symbolic link' if linked else ''})"
                raise ConfigError(f"--out {shown} is the source itself{named}; "
                                  "name another directory (or convert in place)")
            if _within(real, layout.out_real):
                raise ConfigError(f"--out {shown} holds the input {display(root)}{how}: the copy would be written "
                                  "among the sources; name a directory outside the inputs (or one inside an input "
                                  "directory, which the conversion leaves out)")
            if os.path.isdir(root) and _within(layout.out_real, real):
                # Inside an input directory, --out is left out of the conversion: fine for a copy this
                # tool made (it leaves OUT_MARKER there), not for a directory of the user's own.
                layout.inside_input = True
                if os.path.isdir(out) and not os.path.lexists(os.path.join(out, OUT_MARKER)):
                    held = sorted(os.listdir(out))
                    if held:
                        some = ", ".join(display(os.path.join(os.path.normpath(out), n)) for n in held[:3])
                        raise ConfigError(f"--out {shown} is a directory of the input {display(root)} and holds files "
                                          f"this tool did not write ({some}{', ...' if len(held) > 3 else ''}): the "
                                          "conversion would leave them out and could write over them; name a new "
                                          "directory, or empty this one")
        items = [(p, "convert") for p in inputs.files] + list(inputs.others)
        for path, kind in items:
            dest = layout.destination(path)
            if dest in layout.dests:
                first = layout.dests[dest][0]
                raise ConfigError(f"{display(first)} and {display(path)} would both be written to {layout.shown(dest)}; "
                                  "convert them in separate runs, or name the directory that holds both")
            layout.dests[dest] = (path, kind)
        for dest in sorted(layout.dests):
            parent = os.path.dirname(dest)
            while _within(parent, layout.out) and parent != layout.out:
                if parent in layout.dests:
                    inner, outer = layout.dests[dest][0], layout.dests[parent][0]
                    raise ConfigError(f"{display(outer)} is copied to {layout.shown(parent)} as a "
                                      f"{'symbolic link' if layout.dests[parent][1] == 'link' else 'file'}, and "
                                      f"{display(inner)} would be written inside it")
                parent = os.path.dirname(parent)
        ids = _Identities()
        checked: set[str] = set()
        for dest, item in layout.dests.items():
            layout._check_parents(dest, checked)
            entry = ids.entry(dest)
            if entry is not None:
                if entry in inputs.entries:
                    raise ConfigError(f"--out {shown}: {layout.shown(dest)} is the input {display(item[0])}; "
                                      "nothing is written over an input")
                layout.entry_dests[entry] = item
        return layout

    def _check_parents(self, dest: str, checked: set[str]) -> None:
        """No directory between ``--out`` and ``dest`` may be a symbolic link: a write would leave the tree."""
        rel = os.path.relpath(os.path.dirname(dest), self.out)
        if rel == ".":
            return
        current = self.out
        for part in rel.split(os.sep):
            current = os.path.join(current, part)
            if current in checked:
                continue
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                return  # made later, as a directory
            if stat.S_ISLNK(st.st_mode):
                target = os.path.realpath(current)
                raise ConfigError(f"{self.shown(current)} is a symbolic link (to {display(target)}); writing "
                                  f"{self.shown(dest)} would go through it. Nothing is written through links inside "
                                  "--out: remove it, or name another --out")
            if not stat.S_ISDIR(st.st_mode):
                raise ConfigError(f"{self.shown(current)} is a file; {self.shown(dest)} cannot be written under it")
            checked.add(current)

    def make_parent(self, dest: str) -> None:
        """Make ``dest``'s directory under ``--out``, one component at a time; an OSError if a
        component is (now) a link or a file."""
        directory = os.path.dirname(dest)
        if directory in self._made:
            return
        if not self._made:
            os.makedirs(self.out, exist_ok=True)
            marker = os.path.join(self.out, OUT_MARKER)
            if self.inside_input and not os.path.lexists(marker):
                with open(marker, "w", encoding="utf-8") as handle:
                    handle.write(OUT_MARKER_TEXT)
        rel = os.path.relpath(directory, self.out)
        current = self.out
        for part in ([] if rel == "." else rel.split(os.sep)):
            current = os.path.join(current, part)
            if current in self._made:
                continue
            try:
                os.mkdir(current)
            except FileExistsError:
                pass
            st = os.lstat(current)
            if not stat.S_ISDIR(st.st_mode):
                what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a directory"
                raise OSError(0, f"{self.shown(current)} is {what}; nothing is written through it", None)
            self._made.add(current)
        self._made.add(directory)


def check_report_target(target: str, inputs: Inputs, layout: OutLayout | None = None) -> None:
    """A report is never written over an input (a source file, excluded or not, or anything
    ``--out`` copies) nor over a file ``--out`` writes."""
    if target == "-":
        return
    shown = display(target)
    if os.path.isdir(target):
        raise ConfigError(f"the report {shown} is a directory; name a file")
    entry = _Identities().entry(os.path.abspath(target))
    if entry is not None and entry in inputs.entries:
        raise ConfigError(f"the report {shown} is an input of this run; name a report file that is not a source")
    if layout is not None:
        dest = layout.dests.get(os.path.abspath(target))
        if dest is None and entry is not None:
            dest = layout.entry_dests.get(entry)
        if dest is not None:
            raise ConfigError(f"the report {shown} is where --out writes {display(dest[0])}; name another report file")
