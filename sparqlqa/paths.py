"""Where sparqlqa keeps its files, and atomic writes.

``$SPARQLQA_HOME`` overrides the platform's user data directory.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def sparqlqa_home() -> Path:
    """The root folder for KBs, caches and keys (created on demand)."""
    env = os.environ.get("SPARQLQA_HOME")
    if env:
        home = Path(env).expanduser()
    else:
        import platformdirs

        home = Path(platformdirs.user_data_dir("sparqlqa", appauthor=False))
    home.mkdir(parents=True, exist_ok=True)
    return home


def kbs_dir() -> Path:
    path = sparqlqa_home() / "kbs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def umask_mode() -> int:
    """The permissions a plain ``open(path, "w")`` would give a new file: 0o666 less the user's umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new file, never half of one.

    The file gets ``mode`` when given (keys: 0o600), else the user's umask, like any file
    the user creates (``mkstemp`` alone would leave it 0o600).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, umask_mode() if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")
