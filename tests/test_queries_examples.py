"""Every worked query in queries/ says which KB it expects (``# KB:``), and run as its ``# Run:`` line
says on that KB, it returns rows (so the demo KB ``movies`` is never what they mean)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from sparqlqa.cli import main

ROOT = Path(__file__).resolve().parents[1]
QUERIES = sorted((ROOT / "queries").glob("*.rq"))


def _header(path: Path, key: str) -> str:
    found = re.search(rf"^# {key}:\s+(.+)$", path.read_text("utf-8"), re.M)
    assert found is not None, f"{path.name} has no '# {key}:' line"
    return found.group(1).strip()


def _build(kb: str, query: str, shared: Path, tmp_path: Path) -> list[str]:
    """The ingest command for ``kb``: the fixture, or just the MetaQA lines naming the query's entities."""
    if kb == "movie-fixture":
        return ["ingest", str(ROOT / "tests" / "fixtures" / "movies.ttl"), "--kb", kb]
    names = {unquote(n) for n in re.findall(r"/kb/metaqa/entity/([^>]+)>", query)}
    source = shared / "metaqa" / "kb_reconstructed.txt"
    lines = [line for line in source.read_text("utf-8").splitlines() if any(n in line.split("|") for n in names)]
    subset = tmp_path / "metaqa-subset.txt"
    subset.write_text("\n".join(lines) + "\n", "utf-8")
    return ["ingest", str(subset), "--kb", kb, "--format", "triples", "--sep", "|"]


def test_there_are_worked_queries() -> None:
    assert len(QUERIES) >= 4


@pytest.mark.parametrize("path", QUERIES, ids=[p.name for p in QUERIES])
def test_worked_query_returns_rows_on_the_kb_it_names(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      request: pytest.FixtureRequest) -> None:
    kb = _header(path, "KB").split()[0]
    shared_data = request.getfixturevalue("shared_data") if kb == "metaqa" else ROOT
    assert kb != "movies", "the demo KB's name: pick another so the two do not collide"
    assert f"--kb {kb}" in _header(path, "KB")
    run = shlex.split(_header(path, "Run"))
    assert run[:3] == ["sparqlqa", "sparql", kb] and run[3] == f"@queries/{path.name}"
    runner = CliRunner()
    built = runner.invoke(main, _build(kb, path.read_text("utf-8"), shared_data, tmp_path))
    assert built.exit_code == 0, built.output
    monkeypatch.chdir(ROOT)
    result = runner.invoke(main, [*run[1:], "--format", "tsv"])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().splitlines()) > 1, f"{path.name}: no rows on {kb}"
