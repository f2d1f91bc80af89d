"""Fault suite, ingest files: empty/BOM/NUL/giant/malformed sources never lose a KB nor crash.

Every case runs through the CLI and checks the exit code, a message naming the file (and line),
no traceback, and the KB's triple count before == after.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from faults.helpers import assert_clean_failure, build_template, cli, copy_kbs, count
from sparqlqa.errors import IngestError
from sparqlqa.ingest import ingest
from sparqlqa.ingest.base import MAX_LINE_BYTES
from sparqlqa.kb.knowledge_base import open_kb

BIG = 50 * 1024 * 1024  # the 50 MB field / literal
OLD_LINES = 200


@pytest.fixture(scope="module")
def old_kb_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """KB 'k' built once from 200 delimited lines in a home of its own: (home, triple count)."""
    home = tmp_path_factory.mktemp("home")
    source = home / "old.txt"
    source.write_text("".join(f"e{i}|linked_to|e{i + 1}\n" for i in range(OLD_LINES)))
    return home, build_template(home, "k", [source])


@pytest.fixture
def old_kb(old_kb_template: tuple[Path, int], sparqlqa_home: Path) -> int:
    """A copy of the template KB 'k' in this test's home; returns its triple count."""
    home, triples = old_kb_template
    copy_kbs(home, sparqlqa_home)
    return triples


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


EMPTY_SOURCES = {
    "empty.nt": b"",
    "empty.txt": b"",
    "blank-lines.txt": b"\n\n  \n",
    "comments.nt": b"# nothing here\n# at all\n",
    "prefixes-only.ttl": b"@prefix ex: <http://example.org/> .\n",
    "bom-only.txt": b"\xef\xbb\xbf",
}


@pytest.mark.parametrize("name", sorted(EMPTY_SOURCES))
def test_replace_with_no_data_is_refused_and_the_kb_kept(old_kb: int, tmp_path: Path, name: str) -> None:
    source = write_bytes(tmp_path / name, EMPTY_SOURCES[name])
    for extra in ([], ["--force"]):  # nothing at all is refused even with --force
        code, output = cli("ingest", str(source), "--kb", "k", "--replace", *extra)
        assert_clean_failure(code, output, IngestError.exit_code, str(source), "no data triples", "old KB is kept")
        assert count("k") == old_kb


def test_shrinking_replace_needs_force(old_kb: int, tmp_path: Path) -> None:
    source = tmp_path / "bom.txt"
    source.write_bytes(b"\xef\xbb\xbfAlien|directed_by|Ridley Scott\n")
    code, output = cli("ingest", str(source), "--kb", "k", "--replace")
    assert_clean_failure(code, output, IngestError.exit_code, str(source), "give 7 data triples",
                         f"it has {OLD_LINES * 3 + 4:,}", "--force")
    assert count("k") == old_kb
    code, output = cli("ingest", str(source), "--kb", "k", "--replace", "--force")
    assert code == 0, output
    assert count("k") < old_kb
    assert open_kb("k").manifest.counts["data_triples"] == 7


def test_replace_keeping_half_needs_no_force(old_kb: int, tmp_path: Path) -> None:
    source = tmp_path / "half.txt"
    source.write_text("".join(f"f{i}|linked_to|f{i + 1}\n" for i in range(OLD_LINES // 2 + 1)))
    code, output = cli("ingest", str(source), "--kb", "k", "--replace")
    assert code == 0, output


def test_python_ingest_applies_the_same_rule(old_kb: int, tmp_path: Path) -> None:
    source = write_bytes(tmp_path / "one.nt", b'<http://e/s> <http://e/p> "x" .\n')
    with pytest.raises(IngestError, match="less than 50% would remain") as err:
        ingest([source], kb="k", replace=True)
    assert "--force" in (err.value.hint or "")
    assert count("k") == old_kb
    assert ingest([source], kb="k", replace=True, force=True).manifest.counts["data_triples"] == 1


@pytest.mark.parametrize("name, data", [
    ("bom.txt", b"\xef\xbb\xbfAlien|directed_by|Ridley Scott\n"),
    ("bom.nt", b'\xef\xbb\xbf<http://e/alien> <http://www.w3.org/2000/01/rdf-schema#label> "Alien" .\n'),
    ("bom.ttl", b"\xef\xbb\xbf@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                b'<http://e/alien> rdfs:label "Alien" .\n'),
])
def test_a_bom_is_stripped_not_read_into_the_first_name(tmp_path: Path, name: str, data: bytes) -> None:
    source = write_bytes(tmp_path / name, data)
    code, output = cli("ingest", str(source), "--kb", "b")
    assert code == 0, output
    labels = {row[0].value for row in open_kb("b").query(  # type: ignore[union-attr]
        "SELECT ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }").rows}
    assert "Alien" in labels and not any(label.startswith("\ufeff") for label in labels)


def test_a_bom_in_a_gzipped_file_is_stripped(tmp_path: Path) -> None:
    source = tmp_path / "bom.txt.gz"
    source.write_bytes(gzip.compress(b"\xef\xbb\xbfAlien|directed_by|Ridley Scott\n"))
    code, output = cli("ingest", str(source), "--kb", "b")
    assert code == 0, output
    assert open_kb("b").query('ASK { ?s ?p "Alien" }').boolean


def test_nul_inside_a_literal_is_kept_as_a_character(old_kb: int, tmp_path: Path) -> None:
    lines = "".join(f'<http://e/n{i}> <http://e/p> "a\x00b{i}" .\n' for i in range(OLD_LINES * 3))
    source = write_bytes(tmp_path / "nul.nt", lines.encode())
    code, output = cli("ingest", str(source), "--kb", "k", "--replace")
    assert code == 0, output
    values = [row[0].value for row in open_kb("k").query(  # type: ignore[union-attr]
        "SELECT ?v WHERE { <http://e/n0> <http://e/p> ?v }").rows]
    assert values == ["a\x00b0"]


def giant_line(path: Path, head: bytes, size: int, tail: bytes, before: bytes = b"") -> Path:
    """A file with ``before`` then one line of ``size`` filler bytes, written in chunks."""
    with path.open("wb") as handle:
        handle.write(before + head)
        chunk = b"a" * (1 << 20)
        for _ in range(size // len(chunk)):
            handle.write(chunk)
        handle.write(b"a" * (size % len(chunk)) + tail)
    return path


GIANT = {
    "field.txt": (b"", b"|r|b\n"),
    "literal.nt": (b'<http://e/s> <http://e/p> "', b'" .\n'),
    "unterminated.nt": (b'<http://e/s> <http://e/p> "', b"\n"),
    "no-newline.txt": (b"a|r|", b""),
    "iri.nt": (b"<http://e/s> <http://e/p> <http://e/", b"> .\n"),
}


@pytest.mark.parametrize("name", sorted(GIANT))
def test_a_giant_line_is_an_error_naming_it(old_kb: int, tmp_path: Path, name: str) -> None:
    head, tail = GIANT[name]
    before = b"x|r|y\n" * 2 if name.endswith(".txt") else b"<http://e/a> <http://e/b> <http://e/c> .\n" * 2
    source = giant_line(tmp_path / name, head, BIG, tail, before)
    code, output = cli("ingest", str(source), "--kb", "k", "--replace")
    assert_clean_failure(code, output, IngestError.exit_code, f"{source}:3:", "16 MiB maximum")
    assert count("k") == old_kb


def test_a_long_line_under_the_maximum_loads(tmp_path: Path) -> None:
    size = MAX_LINE_BYTES // 4
    source = giant_line(tmp_path / "long.nt", b'<http://e/s> <http://e/p> "', size, b'" .\n')
    code, output = cli("ingest", str(source), "--kb", "long")
    assert code == 0, output
    rows = open_kb("long").query("SELECT (STRLEN(?v) AS ?n) WHERE { <http://e/s> <http://e/p> ?v }").rows
    assert int(rows[0][0].value) == size  # type: ignore[union-attr]


@pytest.mark.parametrize("name, data, line", [
    ("fields.txt", b"a|r|b\na|r\n", 2),
    ("latin1.txt", b"a|r|b\nc|r|caf\xe9\n", 2),
    ("bad.nt", b'<http://e/a> <http://e/b> <http://e/c> .\n<http://e/a> <http://e/b> "x\n', 2),
    ("bad.ttl", b"@prefix e: <http://e/> .\ne:a e:b e:c .\ne:a e:b .\n", 3),
])
def test_malformed_lines_are_named(old_kb: int, tmp_path: Path, name: str, data: bytes, line: int) -> None:
    source = write_bytes(tmp_path / name, data)
    code, output = cli("ingest", str(source), "--kb", "k", "--replace")
    assert_clean_failure(code, output, IngestError.exit_code, f"{source}:{line}:")
    assert count("k") == old_kb


def test_a_missing_source_is_named(old_kb: int, tmp_path: Path) -> None:
    code, output = cli("ingest", str(tmp_path / "nope.nt"), "--kb", "k", "--replace")
    assert_clean_failure(code, output, IngestError.exit_code, "nope.nt")
    assert count("k") == old_kb
