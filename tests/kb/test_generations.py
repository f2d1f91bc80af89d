"""Old KB generations: deleted once replaced, kept while a reader still holds them, then deleted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from faults.helpers import CHILD_TIMEOUT, child_env

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import RETIRED, kb_root, open_kb

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


@pytest.fixture
def sources(tmp_path: Path) -> tuple[Path, Path]:
    old = tmp_path / "old.txt"
    old.write_text("".join(f"e{i}|linked_to|e{i + 1}\n" for i in range(20)))
    new = tmp_path / "new.txt"
    new.write_text("".join(f"n{i}|rel|n{i + 1}\n" for i in range(30)))
    ingest([old], kb="k")
    return old, new


def folders() -> list[str]:
    return sorted(p.name for p in kb_root("k").iterdir() if p.is_dir())


def triples(kb_name: str = "k") -> int:
    with open_kb(kb_name) as kb:
        return int(kb.query(COUNT).rows[0][0].value)  # type: ignore[union-attr]


def test_replace_without_readers_leaves_only_the_new_generation(sources: tuple[Path, Path]) -> None:
    old = folders()
    new = ingest([sources[1]], kb="k", replace=True, force=True)
    assert folders() == [new.manifest.generation] and folders() != old


def test_a_reader_keeps_its_generation_until_it_closes(sources: tuple[Path, Path]) -> None:
    reader = open_kb("k")
    before = reader.query(COUNT).rows[0][0]
    [old] = folders()
    new = ingest([sources[1]], kb="k", replace=True, force=True).manifest.generation
    assert sorted(folders()) == sorted([old, new])  # still read: kept, marked
    assert (kb_root("k") / old / RETIRED).exists() and not (kb_root("k") / new / RETIRED).exists()
    assert reader.query(COUNT).rows[0][0] == before  # the reader goes on reading the old data
    reader.close()
    assert folders() == [new]
    assert triples() > int(before.value)  # type: ignore[union-attr]


def test_two_readers_the_last_one_to_close_deletes_it(sources: tuple[Path, Path]) -> None:
    first, second = open_kb("k"), open_kb("k")
    first.query(COUNT)
    second.query(COUNT)
    [old] = folders()
    new = ingest([sources[1]], kb="k", replace=True, force=True).manifest.generation
    first.close()
    assert old in folders()  # the second still reads it
    second.query(COUNT)
    second.close()
    assert folders() == [new]


HOLDER = """
import sys, time
from sparqlqa.kb.knowledge_base import open_kb
kb = open_kb("k")
kb.query("ASK { ?s ?p ?o }")
print("holding", flush=True)
time.sleep(120)
"""


def test_a_killed_readers_generation_goes_at_the_next_open(sources: tuple[Path, Path]) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True, env=child_env())
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        [old] = folders()
        new = ingest([sources[1]], kb="k", replace=True, force=True).manifest.generation
        assert triples() > 0 and old in folders()  # an open while the holder lives deletes nothing
    finally:
        holder.kill()
        holder.communicate(timeout=CHILD_TIMEOUT)
    triples()  # its close never ran: the next open deletes it
    assert folders() == [new]


def test_a_generation_being_built_is_never_swept(sources: tuple[Path, Path]) -> None:
    building = kb_root("k") / "20990101T000000-abcdef"
    building.mkdir()
    (building / "manifest.json").write_text("{}")
    triples()
    assert building.is_dir()  # not marked: only its writer (or the next writer) removes it
