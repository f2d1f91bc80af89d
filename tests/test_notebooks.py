"""Every notebook in notebooks/ runs top to bottom under nbclient, offline, in a scratch folder, with
the test's private $SPARQLQA_HOME and the fake embedder; the remote one against the tests' Virtuoso.
The notebooks check their own results (asserts), so a wrong answer fails here too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from virtuoso import FREEBASE_GRAPH, VirtuosoServer, virtuoso  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = 240


def _execute(path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    nbformat = pytest.importorskip("nbformat", reason="the dev extra installs nbformat/nbclient/ipykernel")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(workdir)}})
    client.execute()
    return notebook


def test_every_notebook_is_tested() -> None:
    assert {p.stem for p in NOTEBOOKS} == {"quickstart", "audit", "evaluation", "remote_endpoint"}


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem != "remote_endpoint"], ids=lambda p: p.stem)
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = _execute(path, tmp_path, monkeypatch)
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]  # type: ignore[attr-defined]
    assert outputs and not [o for o in outputs if o.output_type == "error"]
    if path.stem == "evaluation":
        assert any("image/png" in o.get("data", {}) for o in outputs), "the plots were not shown"
    if path.stem == "audit":
        assert list((tmp_path / "audit").glob("*.rq"))


@pytest.mark.virtuoso
def test_remote_endpoint_notebook_runs_against_virtuoso(virtuoso: VirtuosoServer, tmp_path: Path,  # noqa: F811
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARQLQA_NOTEBOOK_ENDPOINT", virtuoso.sparql_url)
    monkeypatch.setenv("SPARQLQA_NOTEBOOK_GRAPH", FREEBASE_GRAPH)
    _execute(ROOT / "notebooks" / "remote_endpoint.ipynb", tmp_path, monkeypatch)
