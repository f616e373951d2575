"""Writing results: deterministic JSON, written atomically; a run's outputs published as one whole folder.

Every file reportgen writes goes through :func:`write_atomic` (one file) or :func:`publish_folder` (a run's
set), and a failure to write (no space, no permission, a read-only file system) is an :class:`OutputError`
naming the file as the user knows it and what to do: the command line's exit 4, never a traceback
(docs/reference/exit-codes.md, docs/guide/untrusted-inputs.md).
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import shutil
import stat
import tempfile
from pathlib import Path

# what a run writes into its output folder (the rest of a folder's files are carried over by publish_folder)
OUTPUT_NAMES = ("report.html", "report.pdf", "results.json", "replicates.json", "summary.html", "summary.pdf",
                "annotate_next.csv")


def is_output_name(name: str) -> bool:
    """A file name a run writes (annotate_next_<attribute>.csv when several attributes are annotated)."""
    return name in OUTPUT_NAMES or (name.startswith("annotate_next_") and name.endswith(".csv"))

_ADVICE = {
    errno.ENOSPC: "free space or choose another --out",
    errno.EDQUOT: "free space within your disk quota or choose another --out",
    errno.EFBIG: "choose another --out on a file system that allows larger files",
    errno.EROFS: "the file system is read-only; choose another --out",
    errno.EACCES: "fix the folder's permissions or choose another --out",
    errno.EPERM: "fix the folder's permissions or choose another --out",
}


class OutputError(Exception):
    """An output could not be written: ``str()`` is the whole message, ``shown`` the path as the user gave it."""

    def __init__(self, shown: str, cause: OSError | str) -> None:
        if isinstance(cause, OSError):
            what = (cause.strerror or str(cause)).rstrip(".")
            what = what[0].lower() + what[1:] if what else "error"
            advice = _ADVICE.get(cause.errno, "check the folder and the disk, or choose another --out")
            self.errno = cause.errno
            message = f"cannot write {shown}: {what}; {advice}"
        else:
            self.errno = None
            message = f"cannot write {shown}: {cause}"
        super().__init__(message)
        self.shown = shown


def write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to the new file ``path`` and fsync it (the one place the bytes of every output are written;
    tests make it fail at each position)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for any file
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def sha256_file(path: Path) -> str:
    """sha256 of a file, read in 1 MiB blocks (``hashlib.file_digest`` where there is one, Python 3.11+: the
    same digest without a Python call per block)."""
    with open(path, "rb") as f:
        if hasattr(hashlib, "file_digest"):
            return hashlib.file_digest(f, "sha256").hexdigest()
        h = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def jfloat(x) -> float | None:
    """A number for results.json: float, or None for None/NaN/inf; -0.0 becomes 0.0."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x + 0.0


def dumps(results: dict) -> str:
    """Canonical JSON text: fixed key order (as built), no NaN, trailing newline."""
    return json.dumps(results, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_atomic(path: Path, data: bytes, *, shown: str | None = None) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half. An OSError
    becomes an :class:`OutputError` naming ``shown`` (default ``path``)."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        os.unlink(tmp)  # mkstemp's 0600 file replaced by an ordinary one (the umask applies)
        write_new(Path(tmp), data)
        os.replace(tmp, path)
    except OSError as e:
        _discard(tmp)
        raise OutputError(shown or str(path), e) from None
    except BaseException:
        _discard(tmp)
        raise


# --------------------------------------------------------------------------- a run's outputs, one whole folder


def _discard(tmp: str | None) -> None:
    """Remove a temporary file that will not replace its target (if any; one already gone is no error)."""
    if tmp is not None:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _stage_prefix(out: Path) -> str:
    return f".{out.name}.reportgen-"


def folder_problem(out: Path) -> str | None:
    """Why :func:`publish_folder` cannot replace ``out`` as a whole (None: it can). Checked before a run computes
    anything. The folder is replaced by renaming a sibling folder over it, so it must not be the current folder
    (or hold it), a mount point, or hold folders of its own (files beside the outputs are kept)."""
    shown = str(out)
    real = Path(os.path.realpath(out))
    if os.path.lexists(out) and not real.is_dir():
        return f"{shown} exists and is not a folder; give a folder for the outputs (it is created when missing)"
    if not real.is_dir():
        return None
    cwd = Path(os.path.realpath(os.getcwd()))
    if real == cwd or real in cwd.parents:
        return (f"{shown} is the current folder or holds it; reportgen replaces its output folder as a whole, so "
                "give it a folder of its own (e.g. --out report)")
    if os.path.ismount(real):
        return (f"{shown} is a mount point, which cannot be replaced as a whole; write into a folder inside it "
                f"(e.g. --out {os.path.join(shown, 'report')})")
    try:
        folders = sorted(e.name for e in os.scandir(real) if e.is_dir(follow_symlinks=False))
    except OSError as e:
        return f"cannot read {shown} ({e.strerror or e}); fix its permissions or choose another output folder"
    if folders:
        names = ", ".join(f + "/" for f in folders[:5]) + (", ..." if len(folders) > 5 else "")
        return (f"{shown} holds folders reportgen did not write ({names}); reportgen replaces its output folder "
                "as a whole (so that it never holds files of two audits) and keeps only files beside its outputs; "
                "give it a folder of its own (e.g. --out report)")
    return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one step (Linux renameat2 RENAME_EXCHANGE); False where the system or
    the file system cannot."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap(stage: Path, out: Path, old: Path) -> Path:
    """Put the whole folder ``stage`` at ``out``; returns where the previous ``out`` now is (to be removed)."""
    if not os.path.lexists(out):
        os.rename(stage, out)
        return old
    if _exchange(stage, out):
        return stage  # the exchange left the previous audit under the staging name
    # two renames: a crash between them leaves `old` whole and no `out`, which the next publish puts back
    os.rename(out, old)
    os.rename(stage, out)
    return old


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _recover(out: Path) -> None:
    """Leftovers of an interrupted earlier publish beside ``out``: a previous audit moved aside (``-old-``) is put
    back when ``out`` is missing (the swap had not finished), everything else is removed."""
    parent, prefix = out.parent, _stage_prefix(out)
    try:
        names = sorted(n for n in os.listdir(parent) if n.startswith(prefix))
    except OSError:
        return
    for n in names:
        p = parent / n
        if n.startswith(prefix + "old-") and not os.path.lexists(out):
            try:
                os.rename(p, out)
                continue
            except OSError:
                pass
        _rmtree(p)


class _Locked:
    """An exclusive flock on the output's parent folder for one publish (concurrent runs into the same folder
    publish one after the other, and one never removes another's staging folder); nothing where not supported."""

    def __init__(self, parent: Path) -> None:
        self.parent, self.fd = parent, None

    def __enter__(self):
        try:
            import fcntl

            self.fd = os.open(self.parent, os.O_RDONLY)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except (ImportError, OSError):
            if self.fd is not None:
                os.close(self.fd)
            self.fd = None
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the lock


def publish_folder(out: Path, files: dict[str, bytes], *, shown: str | None = None) -> list[Path]:
    """Make the folder ``out`` hold exactly ``files`` (name -> bytes) plus the other files it already held (not
    reportgen's outputs), replacing it as a whole: a reader sees the previous audit or this one, never a mix.

    The files are written into a sibling staging folder and fsynced, the other files of ``out`` linked (or
    copied) beside them, then the staging folder takes ``out``'s place in one step (``renameat2`` with
    ``RENAME_EXCHANGE`` on Linux; elsewhere two renames, and a crash between them leaves the previous folder
    whole beside it, which the next publish puts back) and the previous folder is removed. A failure before the
    swap (no space, no permission) leaves ``out`` as it was and no staging folder; it raises
    :class:`OutputError` naming the file as ``shown/name``. Leftovers of an interrupted earlier publish are
    cleaned up first. Returns the paths of the files written."""
    shown = shown or str(out)
    problem = folder_problem(out)
    if problem:
        raise OutputError(shown, problem)
    target = Path(os.path.realpath(out)) if os.path.islink(out) else Path(os.path.abspath(out))
    parent = target.parent
    current = shown
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(str(Path(shown).parent), e) from None
    import secrets

    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    stage = parent / f"{_stage_prefix(target)}new-{token}"
    old = parent / f"{_stage_prefix(target)}old-{token}"
    with _Locked(parent):
        _recover(target)
        try:
            os.mkdir(stage)
            if target.is_dir():
                os.chmod(stage, stat.S_IMODE(target.stat().st_mode))
            for name, data in files.items():
                current = os.path.join(shown, name)
                write_new(stage / name, data)
            if target.is_dir():
                for entry in sorted(os.scandir(target), key=lambda e: e.name):
                    if entry.name in files or is_output_name(entry.name) or entry.is_dir(follow_symlinks=False) \
                            or _is_temporary(entry.name):
                        continue  # an earlier run's output (or a temporary file of one) is not of these results
                    current = os.path.join(shown, entry.name)
                    _carry(Path(entry.path), stage / entry.name)
            current = shown
            _fsync_dir(stage)
            previous = _swap(stage, target, old)
        except BaseException as e:
            _rmtree(stage)
            if not os.path.lexists(target) and os.path.isdir(old):
                os.rename(old, target)  # the second of two renames failed (or Ctrl-C between them)
            if isinstance(e, OSError):
                raise OutputError(current, e) from None
            raise
        try:
            _fsync_dir(parent)  # the new audit is in place; this makes the swap durable
        except OSError:
            pass
        _rmtree(previous)
    return [target / name for name in files]


def _is_temporary(name: str) -> bool:
    """A temporary file write_atomic (or an older reportgen) left in the folder: ``.report.pdf.XXXX.tmp``."""
    return name.startswith(".") and name.endswith(".tmp") and any(name.startswith(f".{n}.") for n in OUTPUT_NAMES)


def _carry(src: Path, dst: Path) -> None:
    """A file of the output folder that is not reportgen's, kept in the new folder: a hard link (the same file),
    a copied symbolic link, or a copy where linking is not allowed."""
    if src.is_symlink():
        os.symlink(os.readlink(src), dst)
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def write_outputs(out_dir: Path, files: dict[str, bytes]) -> list[Path]:
    """Write a run's outputs into ``out_dir`` as one whole audit (:func:`publish_folder`)."""
    return publish_folder(Path(out_dir), files)
