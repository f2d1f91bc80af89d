"""CLI: ingest, kbs, schema, sparql — clean errors, --json, formats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sparqlqa.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_ingest_schema_sparql_roundtrip(movies_ttl: Path) -> None:
    code, out, _ = run("ingest", str(movies_ttl), "--kb", "movies", "--json")
    assert code == 0, out
    assert json.loads(out)["counts"]["types"] == 3
    code, out, _ = run("schema", "movies", "--json")
    schema = json.loads(out)
    assert {r["label"] for r in schema["relations"]} == {"directed by", "starred actors", "has genre"}
    code, out, _ = run("sparql", "movies", 'SELECT ?m WHERE { ?m rdfs:label "Alien" }', "--format", "json")
    bindings = json.loads(out)["results"]["bindings"]
    assert bindings == [{"m": {"type": "uri", "value": "https://example.org/movies/alien"}}]
    code, out, _ = run("sparql", "movies", "SELECT (COUNT(*) AS ?n) WHERE { ?s a ?t }", "--format", "csv")
    assert out.splitlines()[0] == "n" and int(out.splitlines()[1]) > 19
    code, out, _ = run("kbs", "--json")
    assert [k["name"] for k in json.loads(out)] == ["movies"]


def test_query_from_file_and_tsv(movies_kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rq = tmp_path / "q.rq"
    rq.write_text('PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nASK { ?m rdfs:label "Avatar" }\n')
    code, out, _ = run("sparql", "movies", f"@{rq}", "--format", "tsv")
    assert code == 0 and out.splitlines() == ["?boolean", "true"]


def test_user_mistakes_exit_cleanly(movies_kb) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run("sparql", "nope", "SELECT * WHERE { ?s ?p ?o }")
    assert code == 1 and "no knowledge base named 'nope'" in err and "Traceback" not in err
    code, _, err = run("sparql", "movies", "DELETE WHERE { ?s ?p ?o }")
    assert code == 1 and "refused" in err
    code, _, err = run("sparql", "movies", "SELECT WHERE {")
    assert code == 1 and "invalid SPARQL" in err
    code, _, err = run("ingest", "/nonexistent.ttl", "--kb", "x")
    assert code == 1 and "no such file" in err


def test_kbs_remove(movies_kb) -> None:  # type: ignore[no-untyped-def]
    code, _, _ = run("kbs", "remove", "movies", "--yes")
    assert code == 0
    code, out, _ = run("kbs", "--json")
    assert json.loads(out) == []


def test_help_is_light() -> None:
    """`sparqlqa --help` must not import torch, sentence-transformers or anthropic."""
    code = ("import sys; from sparqlqa.cli import main\n"
            "heavy = [m for m in ('torch', 'sentence_transformers', 'anthropic', 'matplotlib', 'rdflib')"
            " if m in sys.modules]\n"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_kb_names_are_read_in_their_canonical_spelling(movies_kb, movies_ttl: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 33: a name is trimmed, a group's members each once and sorted, where the CLI reads it."""
    code, out, _ = run("ingest", str(movies_ttl), "--kb", " tiny ", "--json")
    assert code == 0 and json.loads(out)["name"] == "tiny", out
    for spelling in ("tiny + movies", " movies+tiny+movies"):
        code, out, err = run("sparql", spelling, "ASK { ?s ?p ?o }", "--format", "json")
        assert code == 0 and json.loads(out)["boolean"] is True, err
        code, out, err = run("schema", spelling, "--json")
        assert code == 0 and json.loads(out)["kb"] == "movies+tiny", err
    for spelling, words in [("movies+", "an empty member name"), ("movies + movies", "two or more member KBs"),
                            ("movies+ti ny", "invalid knowledge base name 'ti ny'")]:
        code, _, err = run("schema", spelling)
        assert code == 1 and words in err and "hint:" in err and "Traceback" not in err, err


def test_ingest_prepares_the_first_asks_indexes_and_reports_them() -> None:
    """Issue 36: ``ingest`` builds the label index, the table model and the value samples (with a progress
    display; ``--json`` gives their seconds), so the first ``ask`` only opens them."""
    graph = Path(__file__).resolve().parents[1] / "fixtures" / "library_db.nt"
    result = CliRunner().invoke(main, ["ingest", str(graph), "--kb", "library", "--json"])
    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout)["artifacts"]
    assert [b["name"] for b in built] == ["label index", "table model", "value relations"]
    assert all(isinstance(b["seconds"], float) and b["seconds"] >= 0 for b in built)
    assert "prepared 3/3 indexes (100%)" in result.stderr
    from sparqlqa.kb.knowledge_base import open_kb

    kb = open_kb("library")
    try:
        artifacts = kb.directory / "artifacts"  # type: ignore[operator]
        assert (artifacts / "labels" / "index.json").is_file()
        assert (artifacts / "offline" / "table-model.json").is_file()
        assert (artifacts / "offline" / "value-relations.json").is_file()
    finally:
        kb.close()


def test_ingest_keeps_the_kb_when_preparing_its_indexes_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """The KB is built before its indexes: a failure there is a warning, and the first ask builds them."""
    from sparqlqa.errors import QueryError
    from sparqlqa.kb.labels import LabelIndex

    def fail(*_: object) -> None:
        raise QueryError("the scan failed")

    graph = Path(__file__).resolve().parents[1] / "fixtures" / "library_db.nt"
    with monkeypatch.context() as patched:
        patched.setattr(LabelIndex, "build", fail)
        result = CliRunner().invoke(main, ["ingest", str(graph), "--kb", "library", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["artifacts"] == []
    assert "preparing its indexes failed (the scan failed)" in " ".join(result.stderr.split())
    code, out, _ = run("ask", "library", "What is the capacity of Central Library?", "--json")
    assert code == 0 and "120000" in out
