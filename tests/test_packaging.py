"""The built wheel works outside the checkout: bundled ontologies and the sample KB are package data.

The wheel is built from a copy of the sources (pyproject.toml, README.md, sparqlqa/) with the
test environment's setuptools (no network), installed with ``--no-deps`` into a fresh venv that
sees this environment's packages through a ``.pth`` file, and run from a folder outside the checkout.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DATA = ROOT / "sparqlqa" / "data"


def test_the_top_level_ontologies_are_the_packaged_ones() -> None:
    human = ROOT / "ontologies"
    packaged = PACKAGE_DATA / "ontologies"
    assert sorted(p.name for p in human.glob("*.ttl")), "no ontology in the top-level ontologies/ folder"
    assert packaged.resolve() == human.resolve(), "sparqlqa/data/ontologies must be a link to ontologies/"
    comparison = filecmp.dircmp(human, packaged)
    assert not (comparison.left_only or comparison.right_only or comparison.diff_files), comparison.report()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("setuptools", reason="building the wheel needs setuptools (the dev extra installs it)")
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "sparqlqa", source / "sparqlqa", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                    "--disable-pip-version-check", "-w", str(dist), str(source)], check=True, capture_output=True)
    (built,) = dist.glob("sparqlqa-*.whl")
    return built


def test_wheel_carries_the_package_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"sparqlqa/{p.relative_to(ROOT / 'sparqlqa').as_posix()}" for p in PACKAGE_DATA.rglob("*")
                if p.is_file()}
    assert expected <= names, sorted(expected - names)
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("sparqlqa/data/ontologies/")}
    assert shipped == {p.name for p in (ROOT / "ontologies").glob("*.ttl")}, "the wheel must carry ontologies/"
    assert {"sparqlqa/data/ontologies/sparqlqa.ttl", "sparqlqa/data/samples/movies.txt",
            "sparqlqa/py.typed"} <= names


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with only the wheel installed; this environment's site-packages (the dependencies)
    come after its own on sys.path."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "-q", "--disable-pip-version-check", str(wheel)], check=True, capture_output=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "outer-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _run(python: Path, *args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(SPARQLQA_HOME=str(home), SPARQLQA_EMBEDDER="fake", PYTHONNOUSERSITE="1")
    script = python.parent / ("sparqlqa.exe" if os.name == "nt" else "sparqlqa")
    return subprocess.run([str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_wheel_install_ingests_the_sample_and_answers_from_outside_the_checkout(installed: Path,
                                                                                   tmp_path: Path) -> None:
    elsewhere, home = tmp_path / "elsewhere", tmp_path / "home"
    elsewhere.mkdir()
    where = subprocess.run([str(installed), "-c", "import sparqlqa; print(sparqlqa.__file__)"], cwd=elsewhere,
                           capture_output=True, text=True, check=True, env={"PYTHONNOUSERSITE": "1"}).stdout
    assert Path(where).resolve().is_relative_to(installed.parent.parent.resolve()), where
    listed = _run(installed, "samples", "--json", cwd=elsewhere, home=home)
    assert listed.returncode == 0, listed.stderr
    (movies,) = [s for s in json.loads(listed.stdout) if s["name"] == "movies"]
    assert not Path(movies["path"]).resolve().is_relative_to(ROOT)
    built = _run(installed, "ingest", movies["path"], "--kb", "m", "--format", "triples", "--sep", "|",
                 cwd=elsewhere, home=home)
    assert built.returncode == 0, built.stderr
    answer = _run(installed, "ask", "m", "who directed the movies that Ginger Rogers acted in", "--json",
                  cwd=elsewhere, home=home)
    assert answer.returncode == 0, answer.stderr
    labels = [item["label"] for item in json.loads(answer.stdout)["items"]]
    assert "Mark Sandrich" in labels[:5], labels
