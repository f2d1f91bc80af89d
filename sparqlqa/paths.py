"""Where sparqlqa keeps its files, and atomic writes.

``$SPARQLQA_HOME`` overrides the platform's user data directory.
"""

from __future__ import annotations

__all__ = ["atomic_write_bytes", "atomic_write_json", "atomic_write_text", "atomic_writer", "exclusive_lock", "kbs_dir",
           "make_folder", "sparqlqa_home"]

import errno
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from sparqlqa.errors import StorageError

HOME_HINT = "set SPARQLQA_HOME to a folder you can write"


def sparqlqa_home() -> Path:
    """The root folder for KBs, caches and keys (created on demand; :class:`StorageError` when it cannot be)."""
    env = os.environ.get("SPARQLQA_HOME")
    if env:
        home = Path(env).expanduser()
    else:
        import platformdirs

        home = Path(platformdirs.user_data_dir("sparqlqa", appauthor=False))
    hint = f"{HOME_HINT} (it is {env!r} now)" if env else HOME_HINT
    return make_folder(home, what="the sparqlqa home folder", hint=hint)


def kbs_dir() -> Path:
    return make_folder(sparqlqa_home() / "kbs", what="the knowledge base folder", hint=HOME_HINT)


def make_folder(path: Path, *, what: str = "the folder", hint: str | None = None) -> Path:
    """``mkdir -p path``; an OS error becomes a :class:`StorageError` naming ``path`` and the reason.

    >>> import tempfile
    >>> blocker = Path(tempfile.mkdtemp()) / "a-file"
    >>> _ = blocker.write_text("")
    >>> make_folder(blocker / "sub")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparqlqa.errors.StorageError: cannot create the folder .../a-file/sub: Not a directory
    >>> make_folder(blocker)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparqlqa.errors.StorageError: cannot create the folder .../a-file: a file of that name is in the way
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # mkdir's word for a file of that name
        in_the_way = OSError(errno.ENOTDIR, "a file of that name is in the way", exc.filename)
        raise StorageError.from_os_error(in_the_way, path, doing=f"create {what}", hint=hint) from None
    except OSError as exc:
        raise StorageError.from_os_error(exc, path, doing=f"create {what}", hint=hint) from None
    return path


def _unnamed(exc: OSError) -> OSError:
    """``exc`` without its file names (those of our temporary file mean nothing to the user)."""
    return OSError(exc.errno, exc.strerror or str(exc))


def _umask_mode() -> int:
    """The permissions a plain ``open(path, "w")`` would give a new file: 0o666 less the user's umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_writer(path: Path, *, mode: int | None = None) -> Iterator[IO[bytes]]:
    """A binary file to stream into; on leaving the block it replaces ``path`` at once (readers see the
    old file or the whole new one), on an error it is removed and ``path`` is left as it was.

    The file gets ``mode`` when given (keys: 0o600), else the user's umask, like any file
    the user creates (``mkstemp`` alone would leave it 0o600).
    An OS error (disk full, no permission, a file where a folder should be) becomes a
    :class:`StorageError` naming ``path``.
    """
    make_folder(path.parent)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise StorageError.from_os_error(_unnamed(exc), path, doing="write",
                                         hint=f"choose a folder where you may create files ({path.parent} "
                                         "takes none)") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _umask_mode() if mode is None else mode)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise StorageError.from_os_error(_unnamed(exc), path, doing="write") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new file, never half of one
    (:func:`atomic_writer`)."""
    with atomic_writer(path, mode=mode) as handle:
        handle.write(data)


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


@contextmanager
def exclusive_lock(path: Path, *, required: bool = True) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on the file ``path`` (created when missing) while the block runs,
    waiting for whoever holds it (another process, or another thread of this one: each call opens the
    file anew) to let go.  Yields whether the lock is held: where the file cannot be created (a read-only
    folder) ``required=False`` goes on unlocked, since nobody can write beside it either; else
    :class:`StorageError`."""
    import fcntl

    try:
        handle = path.open("a")
    except OSError as exc:
        if not required:
            yield False
            return
        raise StorageError.from_os_error(exc, path, doing="create the lock file") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield True
