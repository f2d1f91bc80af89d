"""Shared helpers of the fault suite: run the CLI (in-process or as a child), count a KB's triples."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sparqlqa.cli import main
from sparqlqa.kb.knowledge_base import open_kb

REPO = Path(__file__).resolve().parents[2]
#: every child process gets this long before the test fails (no test waits unbounded)
CHILD_TIMEOUT = 120


def cli(*args: str) -> tuple[int, str]:
    """Run ``sparqlqa ARGS`` in-process: (exit code, stdout + stderr); an escaped exception reads as a traceback."""
    result = CliRunner().invoke(main, list(args))
    output = result.stdout + result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        output += f"\nTraceback (escaped exception): {result.exception!r}"
    return result.exit_code, output


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def spawn(*args: str) -> subprocess.Popen[str]:
    """``sparqlqa ARGS`` as a child process (its own $SPARQLQA_HOME from this test's environment)."""
    return subprocess.Popen([sys.executable, "-c", "from sparqlqa.cli import main; main()", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=child_env())


def run_child(*args: str) -> tuple[int, str]:
    child = spawn(*args)
    output, _ = child.communicate(timeout=CHILD_TIMEOUT)
    return child.returncode, output


def count(kb: str) -> int:
    """All triples of KB ``kb``, counted by a query (the store really answers)."""
    with open_kb(kb) as opened:
        rows = opened.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows
    return int(rows[0][0].value)  # type: ignore[union-attr]


def assert_clean_failure(code: int, output: str, expected_code: int, *fragments: str) -> None:
    """A failure the user can act on: the exit code, the given text (a location), no traceback."""
    assert code == expected_code, output
    assert "Traceback" not in output, output
    for fragment in fragments:
        assert fragment in output, output


def build_template(home: Path, name: str, sources: list[Path]) -> int:
    """Ingest ``sources`` as KB ``name`` under ``home`` (not this test's home); its triple count."""
    import pytest

    from sparqlqa.ingest import ingest

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARQLQA_HOME", str(home))
        ingest(sources, kb=name)
        return count(name)


def copy_kbs(template_home: Path, home: Path) -> None:
    """Give this test's ``$SPARQLQA_HOME`` a copy of the template's KBs (cheaper than ingesting again)."""
    shutil.copytree(template_home / "kbs", home / "kbs")
