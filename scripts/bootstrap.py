#!/usr/bin/env python3
"""Set up a fresh machine (only python3 needed) and run the demo or the tests.

    python3 scripts/bootstrap.py demo    # venv + install + ask a question of the bundled movie KB
    python3 scripts/bootstrap.py test    # venv + install + ruff + mypy + the whole test suite
    python3 scripts/bootstrap.py setup   # venv + install only

The virtual environment is ``.venv`` in the repository (``SPARQLQA_VENV`` overrides).
torch is installed first, pinned to the CPU build (2.13.0), so nothing pulls CUDA wheels.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("SPARQLQA_VENV", ROOT / ".venv"))
TORCH_PIN = "torch==2.13.0"
EXTRAS = ".[all,dev]"
DEMO_QUESTION = "who directed the movies that Ginger Rogers acted in"


def venv_bin(name: str) -> str:
    return str(VENV / ("Scripts" if os.name == "nt" else "bin") / name)


def run(*args: str, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(args), flush=True)
    completed = subprocess.run(args, cwd=ROOT, env=env)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def setup() -> None:
    """Create the venv and install sparqlqa with every extra (skipped when already up to date)."""
    stamp = VENV / ".sparqlqa-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + TORCH_PIN.encode()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == wanted:
        return
    if not Path(venv_bin("python")).exists():
        print(f"creating virtual environment {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    pip = [venv_bin("python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    run(*pip, TORCH_PIN)
    run(*pip, "-e", EXTRAS)
    stamp.write_text(wanted + "\n")


def demo() -> None:
    setup()
    sparqlqa = venv_bin("sparqlqa")
    sample = str(ROOT / "sparqlqa" / "data" / "samples" / "movies.txt")
    run(sparqlqa, "ingest", sample, "--kb", "movies", "--format", "triples", "--sep", "|", "--replace")
    run(sparqlqa, "ask", "movies", DEMO_QUESTION)


def test() -> None:
    """Lint (ruff), type-check (mypy), then the whole test suite (extra arguments go to pytest)."""
    setup()
    run(venv_bin("python"), "-m", "ruff", "check", ".")
    run(venv_bin("python"), "-m", "mypy")
    run(venv_bin("python"), "-m", "pytest", *sys.argv[2:])


COMMANDS = {"setup": setup, "demo": demo, "test": test}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(__doc__)
        sys.exit(2)
    COMMANDS[sys.argv[1]]()
