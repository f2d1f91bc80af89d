"""Fault suite, files sparqlqa writes or reads: unwritable paths, a full disk, a corrupt or locked LLM
cache, damaged KB folders, a deleted store.

Every case runs through the CLI and checks the exit code, a message naming the path (or the KB and
its problem), no traceback, and that nothing was lost: the KB's triple count before == after, the
corrupt cache file byte-for-byte as it was.  Tests run as root, where ``chmod`` does not stop
writes, so unwritable paths are under ``/proc`` or go through a file where a folder is needed.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from faults.helpers import assert_clean_failure, build_template, cli, count
from sparqlqa.errors import KBDamaged, LLMCacheError, StorageError
from sparqlqa.kb.knowledge_base import kb_lock, scan_kbs
from sparqlqa.llm.cache import LLMCache

QUESTION = "who directed Alien"
UNWRITABLE = "/proc/nope"  # mkdir fails with ENOENT, even for root


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """KB 'k' built once in a home of its own: (home, triple count)."""
    home = tmp_path_factory.mktemp("home")
    source = home / "k.txt"
    source.write_text("".join(f"Film{i}|directed_by|Director{i % 7}\n" for i in range(40)) +
                      "Alien|directed_by|Ridley Scott\n")
    return home, build_template(home, "k", [source])


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    """A plain file, to stand where a folder is needed."""
    path = tmp_path / "plain.txt"
    path.write_text("not a folder\n")
    return path


def first_json(output: str) -> Any:
    """The JSON document on stdout (``cli`` appends stderr's notes after it)."""
    return json.JSONDecoder().raw_decode(output)[0]


def generation(home: Path, name: str) -> Path:
    root = home / "kbs" / name
    return root / (root / "CURRENT").read_text().strip()


# --- 1. OS errors on files we write ---------------------------------------------------------------


def test_save_sparql_to_an_unwritable_folder(kb: int, a_file: Path) -> None:
    for target, reason in ((UNWRITABLE, "No such file or directory"), (f"{a_file}/sub", "Not a directory")):
        code, output = cli("ask", "k", QUESTION, "--strategy", "offline", "--save-sparql", target)
        assert_clean_failure(code, output, StorageError.exit_code, f"cannot create the folder for the SPARQL "
                             f"files {target}: {reason}", "hint:")
    assert count("k") == kb


def test_eval_out_unwritable_json(kb: int, a_file: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": QUESTION, "answers": ["Ridley Scott"]}) + "\n")
    for target in (UNWRITABLE, f"{a_file}/sub"):
        code, output = cli("eval", "jsonl", str(questions), "--kb", "k", "--strategy", "offline",
                           "--out", target, "--no-plots", "--json")
        assert_clean_failure(code, output, StorageError.exit_code)
        error = first_json(output)
        assert f"cannot create the report folder {target}" in error["error"], output
        assert error["hint"], output
    assert count("k") == kb


@pytest.mark.parametrize("target", [f"{UNWRITABLE}/x.jsonl", "{file}/x.jsonl"])
def test_export_pending_to_an_unwritable_path(a_file: Path, target: str) -> None:
    target = target.format(file=a_file)
    code, output = cli("llm", "export-pending", target)
    assert_clean_failure(code, output, StorageError.exit_code, str(Path(target).parent), "hint:")


@pytest.mark.parametrize("command", [["kbs"], ["kbs", "--json"], ["ingest", "{source}", "--kb", "x"]])
@pytest.mark.parametrize("home", [f"{UNWRITABLE}/home", "{file}"])
def test_unusable_sparqlqa_home(monkeypatch: pytest.MonkeyPatch, a_file: Path, home: str,
                                command: list[str]) -> None:
    home = home.format(file=a_file)
    monkeypatch.setenv("SPARQLQA_HOME", home)
    code, output = cli(*(part.format(source=a_file) for part in command))
    assert_clean_failure(code, output, StorageError.exit_code, f"cannot create the sparqlqa home folder {home}",
                         "set SPARQLQA_HOME to a folder you can write")
    if "--json" in command:
        assert first_json(output)["hint"].startswith("set SPARQLQA_HOME"), output


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``fsync`` fails as on a full disk (atomic writes fsync before the rename)."""
    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)


def test_full_disk_keeps_the_old_file(tmp_path: Path, full_disk: None) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    old = folder / "pending.jsonl"
    old.write_bytes(b'{"old": true}\n')
    code, output = cli("llm", "export-pending", str(old))
    assert_clean_failure(code, output, StorageError.exit_code, f"cannot write {old}: No space left on device",
                         f"free disk space on the drive holding {folder}")
    assert old.read_bytes() == b'{"old": true}\n'
    assert [p.name for p in folder.iterdir()] == ["pending.jsonl"]  # no temporary file left


def test_full_disk_during_ingest_replace_keeps_the_kb(kb: int, tmp_path: Path, sparqlqa_home: Path,
                                                      full_disk: None) -> None:
    source = tmp_path / "new.txt"
    source.write_text("".join(f"New{i}|directed_by|Someone{i}\n" for i in range(60)))
    before = sorted(p.name for p in (sparqlqa_home / "kbs" / "k").iterdir())
    code, output = cli("ingest", str(source), "--kb", "k", "--replace")
    assert_clean_failure(code, output, StorageError.exit_code, "added.nt: No space left on device",
                         "free disk space")
    assert count("k") == kb
    assert sorted(p.name for p in (sparqlqa_home / "kbs" / "k").iterdir()) == before


@pytest.mark.parametrize("as_json", [False, True])
def test_any_os_error_is_a_clean_exit(monkeypatch: pytest.MonkeyPatch, as_json: bool) -> None:
    """The last resort in the CLI: an OSError no command expected still ends in a message, exit 1."""
    def failing() -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO), "/srv/disk/kbs")

    monkeypatch.setattr("sparqlqa.kb.knowledge_base.kbs_dir", failing)
    code, output = cli("kbs", *(["--json"] if as_json else []))
    assert_clean_failure(code, output, 1, f"/srv/disk/kbs: {os.strerror(errno.EIO)}")
    if as_json:
        assert set(first_json(output)) == {"error", "hint"}, output


def test_an_os_error_without_a_file_name_is_a_clean_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing() -> None:  # what Oxigraph raises: no errno, no file name
        raise FileNotFoundError("IO error: While opening a file for sequentially reading: /s/CURRENT")

    monkeypatch.setattr("sparqlqa.kb.knowledge_base.kbs_dir", failing)
    code, output = cli("kbs")
    assert_clean_failure(code, output, 1, "operating system error: IO error: While opening", "hint:")


@pytest.mark.parametrize(("code", "hint"), [
    (errno.EACCES, "change the permissions"), (errno.EROFS, "read-only"), (errno.ENOSPC, "free disk space"),
    (errno.ENOTDIR, "is a file where a folder is needed"), (errno.EISDIR, "is a folder where a file is needed"),
    (errno.EMFILE, "ulimit -n"),
])
def test_storage_error_hints_by_error_number(code: int, hint: str) -> None:
    error = StorageError.from_os_error(OSError(code, os.strerror(code), "/data/x"), "/data/x", doing="write")
    assert error.message == f"cannot write /data/x: {os.strerror(code)}"
    assert hint in (error.hint or "")


# --- 2. a corrupt or locked LLM cache ------------------------------------------------------------------


def cache_path(home: Path) -> Path:
    return home / "llm-cache.sqlite"


def real_cache(home: Path, answers: int = 200) -> Path:
    path = cache_path(home)
    cache = LLMCache(path)
    for i in range(answers):
        cache.put(f"key{i}", backend="fake", model="fake", text="a paid answer " * 50, data={"i": i})
    return path


CACHE_COMMANDS = [["llm", "stats"], ["llm", "stats", "--json"], ["llm", "pending"],
                  ["ask", "k", QUESTION, "--llm", "fake"],
                  ["eval", "jsonl", "{questions}", "--kb", "k", "--strategy", "4step", "--llm", "fake",
                   "--out", "{out}", "--no-plots"]]


@pytest.fixture(params=["garbage", "truncated"])
def corrupt_cache(request: pytest.FixtureRequest, sparqlqa_home: Path) -> Iterator[bytes]:
    """The cache overwritten with text, or a real one cut in half; yields its bytes."""
    if request.param == "garbage":
        sparqlqa_home.mkdir(parents=True, exist_ok=True)
        cache_path(sparqlqa_home).write_text("these are not the answers you paid for\n" * 20)
    else:
        path = real_cache(sparqlqa_home)
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    yield cache_path(sparqlqa_home).read_bytes()


@pytest.mark.parametrize("command", CACHE_COMMANDS, ids=lambda c: " ".join(c[:2] + c[-1:]))
def test_corrupt_llm_cache_is_a_clean_error_and_kept(kb: int, corrupt_cache: bytes, sparqlqa_home: Path,
                                                     tmp_path: Path, command: list[str]) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": QUESTION, "answers": ["Ridley Scott"]}) + "\n")
    args = [part.format(questions=questions, out=tmp_path / "out") for part in command]
    code, output = cli(*args)
    path = cache_path(sparqlqa_home)
    assert_clean_failure(code, output, LLMCacheError.exit_code, f"the LLM cache {path} cannot be used",
                         f"mv {path} {path}.broken", "--llm-cache off")
    if "--json" in command:
        assert "move it aside" in first_json(output)["hint"], output
    assert path.read_bytes() == corrupt_cache
    assert sorted(p.name for p in sparqlqa_home.iterdir()) == ["kbs", "llm-cache.sqlite"]
    assert count("k") == kb


def test_the_move_aside_hint_works(corrupt_cache: bytes, sparqlqa_home: Path) -> None:
    code, output = cli("llm", "stats", "--json")
    command = first_json(output)["hint"].split("move it aside: ")[1].split(";")[0]
    subprocess.run(command, shell=True, check=True, timeout=30)
    assert cache_path(sparqlqa_home).with_name("llm-cache.sqlite.broken").read_bytes() == corrupt_cache
    code, output = cli("llm", "stats", "--json")
    assert code == 0 and first_json(output)["responses"] == 0, output
    (sparqlqa_home / "llm-cache.sqlite").write_text("broken again")  # a second aside keeps the first
    code, output = cli("llm", "stats", "--json")
    assert "llm-cache.sqlite.broken-2" in first_json(output)["hint"], output


def test_locked_llm_cache_says_wait(sparqlqa_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = real_cache(sparqlqa_home, answers=3)
    monkeypatch.setattr("sparqlqa.llm.cache._BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        for command in (["llm", "stats"], ["llm", "pending", "--clear"]):
            code, output = cli(*command)
            assert_clean_failure(code, output, LLMCacheError.exit_code, f"the LLM cache {path} cannot be used: "
                                 "database is locked", "another process holds the LLM cache")
            assert "move it aside" not in output
    finally:
        holder.close()
    assert LLMCache(path).stats()["responses"] == 3


# --- 3. one broken KB among healthy ones -------------------------------------------------------------------


def break_kb(home: Path, name: str, how: str) -> None:
    """Damage copy ``name`` of KB 'k': garbage manifest, CURRENT naming a missing generation, no store."""
    shutil.copytree(home / "kbs" / "k", home / "kbs" / name)
    folder = generation(home, name)
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "name": name}))
    if how == "manifest":
        (folder / "manifest.json").write_text("{ this is not json")
    elif how == "generation":
        shutil.rmtree(folder)
    else:
        shutil.rmtree(folder / "store")


BROKEN = {"bad-manifest": ("manifest", "cannot read KB manifest"),
          "no-generation": ("generation", "which is missing"),
          "no-store": ("store", "store folder")}


@pytest.fixture
def broken(kb: int, sparqlqa_home: Path) -> int:
    """KB 'k' and three damaged copies of it (see :data:`BROKEN`); the count of 'k'."""
    for name, (how, _) in BROKEN.items():
        break_kb(sparqlqa_home, name, how)
    return kb


def test_kbs_lists_the_healthy_and_shows_the_broken(broken: int) -> None:
    code, output = cli("kbs")
    assert_clean_failure(code, output, 0, "│ k ")
    for name, (_, problem) in BROKEN.items():
        assert f"broken KB {name}: " in output and problem in output, output
        assert f"sparqlqa kbs remove {name}" in output and f"--kb {name} --replace" in output, output


def test_kbs_json_lists_the_healthy_and_the_broken(broken: int) -> None:
    code, output = cli("kbs", "--json")
    assert code == 0, output
    rows = {row["name"]: row for row in first_json(output)}
    assert set(rows) == {"k", *BROKEN}
    assert rows["k"]["broken"] is False and rows["k"]["counts"]["triples"] == broken
    for name, (_, problem) in BROKEN.items():
        assert rows[name]["broken"] is True and problem in rows[name]["problem"], rows[name]
        assert f"sparqlqa kbs remove {name}" in rows[name]["hint"]


def test_scan_kbs_reports_broken_ones_separately(broken: int) -> None:
    scan = scan_kbs()
    assert [m.name for m in scan.kbs] == ["k"]
    assert [b.name for b in scan.broken] == sorted(BROKEN)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_kb_is_a_clean_error_to_open(broken: int, name: str) -> None:
    for command in (["ask", name, QUESTION, "--strategy", "offline"], ["sparql", name, "ASK { ?s ?p ?o }"]):
        code, output = cli(*command)
        assert_clean_failure(code, output, KBDamaged.exit_code, f"knowledge base {name!r} is damaged",
                             BROKEN[name][1], f"--kb {name} --replace")
        assert "another sparqlqa process" not in output
    assert count("k") == broken


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_kb_can_be_removed(broken: int, name: str, sparqlqa_home: Path) -> None:
    code, output = cli("kbs", "remove", name, "--yes")
    assert code == 0, output
    assert not (sparqlqa_home / "kbs" / name).exists()
    scan = scan_kbs()
    assert [m.name for m in scan.kbs] == ["k"] and name not in [b.name for b in scan.broken]
    assert count("k") == broken


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_kb_can_be_rebuilt_with_replace(broken: int, name: str, tmp_path: Path) -> None:
    source = tmp_path / "new.txt"
    source.write_text("".join(f"New{i}|directed_by|Someone{i}\n" for i in range(60)))
    code, output = cli("ingest", str(source), "--kb", name)
    assert_clean_failure(code, output, 1, f"a knowledge base named {name!r} already exists", "--replace")
    code, output = cli("ingest", str(source), "--kb", name, "--replace")
    assert code == 0, output
    assert count(name) > 60 and name in [m.name for m in scan_kbs().kbs]
    assert count("k") == broken


# --- 4. a deleted store --------------------------------------------------------------------------------------


def test_missing_store_says_rebuild_not_wait(kb: int, sparqlqa_home: Path) -> None:
    store = generation(sparqlqa_home, "k") / "store"
    shutil.rmtree(store)
    code, output = cli("sparql", "k", "ASK { ?s ?p ?o }")
    assert_clean_failure(code, output, KBDamaged.exit_code, f"its store folder {store} is missing",
                         "sparqlqa ingest FILE --kb k --replace")
    assert "another sparqlqa process" not in output and "wait" not in output


def test_unopenable_store_while_a_writer_holds_the_lock_says_wait(kb: int, sparqlqa_home: Path) -> None:
    store = generation(sparqlqa_home, "k") / "store"
    shutil.rmtree(store)
    with kb_lock("k"):
        code, output = cli("sparql", "k", "ASK { ?s ?p ?o }")
    assert_clean_failure(code, output, 1, "while another sparqlqa process writes it", str(store),
                         "wait for that process to finish")
