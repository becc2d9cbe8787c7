"""One way to write an output, for every command and the Python API.

``check`` looks at the path before any work starts: standard output (``-``) where the output may go there,
not a folder, an extension that matches the format where the format is chosen by it, a folder that exists
and can be written, never a file the run reads, never an existing file unless the user forces it.
``write_text``, ``write_bytes`` and ``replacing`` write to a temporary file beside the target and rename it
over the target only when the whole output is written, so that a failed or interrupted run leaves the old
file (or none); every I/O error becomes one ``InputError`` line naming the path and the fix.

The CLI (``contend.cli.shared``) checks every output option through ``check``; the pictures, traces and
tables the API writes (``contend.plots``, ``contend.trace``, ``contend.run_parquet``, study reports) go
through ``replacing``.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from contend.errors import InputError

STDOUT = "-"
# Pictures: matplotlib chooses the format by the extension.
PICTURE = (".png", ".svg", ".pdf")
# Files whose names an input may hold (a scenario's cluster and programs, a study's base, a datatype file).
_REFERENCE = re.compile(r"[^\s'\"{}\[\],:]+\.(?:ya?ml|json|csv|otf2|txt|xml|def)\b")
# Inputs larger than this are not searched for the names of further inputs (their own path is still checked).
_SEARCHED = 16 << 20


@dataclass(frozen=True)
class Target:
    """Where one output goes: a file, or standard output (``path`` None). ``flag`` names it in errors."""

    path: Path | None
    flag: str

    @property
    def stdout(self) -> bool:
        return self.path is None

    def __str__(self) -> str:
        return "standard output" if self.path is None else str(self.path)

    def __fspath__(self) -> str:
        if self.path is None:
            raise TypeError("standard output has no path")
        return str(self.path)


def check(
    path: str | os.PathLike | None,
    flag: str,
    *,
    inputs: Iterable[str | os.PathLike] = (),
    force: bool = False,
    suffixes: tuple[str, ...] | None = None,
    stdout: bool = False,
    folder: bool = False,
) -> Target | None:
    """The target of an output option, checked before any work: None when the option was not given.

    ``inputs`` are the files the run reads (files they name are found and checked too); ``suffixes`` the
    extensions the format accepts; ``stdout`` whether ``-`` may mean standard output; ``folder`` that the
    output is a folder of files (a report), which must be empty or new unless forced.
    """
    if path is None:
        return None
    text = os.fspath(path)
    if text == STDOUT:
        if not stdout:
            what = "a folder of files" if folder else "this output"
            raise InputError(f"{flag}: cannot write {what} to standard output; give a {'folder' if folder else 'file'} "
                             "name")
        return Target(None, flag)
    if not text.strip():
        raise InputError(f"{flag}: the path is empty; give a file name")
    p = Path(text)
    if folder:
        return _check_folder(p, flag, inputs, force)
    if p.is_dir() or text.endswith(("/", os.sep)):
        raise InputError(f"{flag}: {p} is a folder; give a file name, e.g. {p / ('out' + (suffixes or ('',))[0])}")
    exists = p.exists() or p.is_symlink()
    what = reads(p, inputs) if exists else None
    if what:
        raise InputError(f"{flag}: {p} is {what}; write the output to another file")
    if suffixes and p.suffix.lower() not in suffixes:
        want = " or ".join(suffixes)
        raise InputError(f"{flag}: {p} does not end in {want}, the formats this output is written in; "
                         f"name it e.g. {p.with_suffix(suffixes[0]).name}")
    parent = p.parent
    if not parent.exists():
        raise InputError(f"{flag}: folder {parent} does not exist; create it or choose another path")
    if not parent.is_dir():
        raise InputError(f"{flag}: {parent} is a file, not a folder; choose another path")
    if exists:
        if not force:
            raise InputError(f"{flag}: {p} exists; add --force to overwrite it, or choose another name")
        if not p.is_file():
            raise InputError(f"{flag}: {p} is not a regular file; choose another name")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{flag}: cannot write in folder {parent} (permission denied); "
                         "choose a folder you can write to")
    return Target(p, flag)


def _check_folder(p: Path, flag: str, inputs: Iterable[str | os.PathLike], force: bool) -> Target:
    if p.exists() and not p.is_dir():
        raise InputError(f"{flag}: {p} is a file; give a folder for the output files")
    parent = p.parent
    if not p.exists() and not parent.is_dir():
        raise InputError(f"{flag}: folder {parent} does not exist; create it or choose another path")
    for i in inputs:
        if os.path.exists(i) and p.exists() and os.path.samefile(i, p):
            raise InputError(f"{flag}: {p} is an input of this command; write the output to another folder")
    if p.exists() and not force and any(p.iterdir()):
        raise InputError(f"{flag}: {p} is not empty; add --force to write over its files, or choose a new folder")
    where = p if p.exists() else parent
    if not os.access(where, os.W_OK | os.X_OK):
        raise InputError(f"{flag}: cannot write in folder {where} (permission denied); "
                         "choose a folder you can write to")
    return Target(p, flag)


def reads(path: Path, inputs: Iterable[str | os.PathLike]) -> str | None:
    """How the run reads ``path``, if it does: one of ``inputs``, or a file one of them names (a scenario's
    cluster file or rank programs, a study's base scenario, a transfers file's datatype), two levels deep."""
    seen: set[str] = set()
    level = [(os.fspath(i), "") for i in inputs if i is not None]
    for _ in range(3):
        nxt: list[tuple[str, str]] = []
        for i, named_in in level:
            if i in seen or not os.path.isfile(i):
                continue
            seen.add(i)
            if os.path.samefile(i, path):
                return f"a file the run reads (named in {named_in})" if named_in else "an input of this command"
            nxt.extend((f, i) for f in _named_in(i, path.name))
        level = nxt
    return None


def _named_in(path: str, name: str) -> list[str]:
    """Files named in the text of ``path`` that exist, when ``name`` (the output's file name) occurs in it."""
    try:
        if os.path.getsize(path) > _SEARCHED:
            return []
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    if name.encode() not in data:
        return []
    text = data.decode("utf-8", errors="replace")
    here = os.path.dirname(path)
    found = []
    for m in _REFERENCE.finditer(text):
        ref = os.path.expanduser(m.group(0))
        for base in (here, "."):
            candidate = os.path.join(base, ref)
            if os.path.isfile(candidate):
                found.append(candidate)
    return found


def io_error(target: Target | str | os.PathLike, e: OSError, flag: str | None = None) -> InputError:
    """One line for an I/O error while writing: the path, what happened, and what to do."""
    if isinstance(target, Target):
        flag = flag or target.flag
    where = f"{flag}: " if flag else ""
    path = os.fspath(target) if not isinstance(target, Target) else str(target)
    fix = {
        errno.ENOSPC: "free some space or write to another disk",
        errno.EDQUOT: "free some space or write to another disk",
        errno.EACCES: "choose a folder you can write to",
        errno.EPERM: "choose a folder you can write to",
        errno.EROFS: "the file system is read-only; choose another folder",
        errno.EISDIR: "give a file name, not a folder",
        errno.ENOENT: "create the folder or choose another path",
        errno.ENOTDIR: "a part of the path is a file; choose another path",
        errno.ENAMETOOLONG: "choose a shorter name",
    }.get(e.errno or 0, "check the path and the disk, then run again")
    return InputError(f"{where}cannot write {path} ({e.strerror or e}); {fix}")


@contextmanager
def replacing(target: Target | str | os.PathLike, flag: str | None = None) -> Iterator[Path]:
    """A temporary path beside ``target`` (same extension, so that a format chosen by it is kept) to write to;
    renamed over ``target`` when the block ends without an error, removed otherwise."""
    final = Path(os.fspath(target))
    tmp = final.with_name(f".{final.stem}.{os.getpid()}.tmp{final.suffix}")
    try:
        yield tmp
        os.replace(tmp, final)
    except OSError as e:
        _remove(tmp)
        raise io_error(target if isinstance(target, Target) else final, e, flag) from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp: Path) -> None:
    try:
        tmp.unlink()
    except OSError:
        pass


def write_text(target: Target | str | os.PathLike, text: str, flag: str | None = None) -> None:
    """Write ``text`` (UTF-8) whole to ``target``, or to standard output for a stdout target."""
    if isinstance(target, Target) and target.stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with replacing(target, flag) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)


def write_bytes(target: Target | str | os.PathLike, data: bytes, flag: str | None = None) -> None:
    if isinstance(target, Target) and target.stdout:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    with replacing(target, flag) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
