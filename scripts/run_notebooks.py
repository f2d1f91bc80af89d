#!/usr/bin/env python3
"""Re-execute notebooks/*.ipynb and store their outputs (stderr left out: loader bars, local paths).

    .venv/bin/python scripts/run_notebooks.py [NAME ...]     # default: every notebook

Each runs in a scratch folder with a scratch $SPARQLQA_HOME and the default embedder. The remote one
needs Virtuoso (scripts/install_virtuoso.sh): a throw-away server is started as in the tests.
The test suite (tests/test_notebooks.py) executes the same notebooks without storing anything.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(names: list[str]) -> None:
    import nbclient
    import nbformat

    names = names or sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    os.environ["SPARQLQA_HOME"] = tempfile.mkdtemp(prefix="sparqlqa-notebooks-")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    server = _start_virtuoso() if "remote_endpoint" in names else None
    try:
        for name in names:
            path = ROOT / "notebooks" / f"{name}.ipynb"
            notebook = nbformat.read(path, as_version=4)
            nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", record_timing=False,
                                    resources={"metadata": {"path": tempfile.mkdtemp()}}).execute()
            for cell in notebook.cells:
                if cell.cell_type == "code":
                    cell.outputs = [o for o in cell.outputs if o.get("name") != "stderr"]
            nbformat.write(notebook, path)
            print(f"stored {path.relative_to(ROOT)}", flush=True)
    finally:
        if server is not None:
            server.stop()


def _start_virtuoso():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "tests"))
    from virtuoso import FREEBASE_GRAPH, SAMPLES, VirtuosoServer

    server = VirtuosoServer(Path(tempfile.mkdtemp(prefix="virtuoso-"))).start()
    server.load(SAMPLES)
    os.environ["SPARQLQA_NOTEBOOK_ENDPOINT"] = server.sparql_url
    os.environ["SPARQLQA_NOTEBOOK_GRAPH"] = FREEBASE_GRAPH
    return server


if __name__ == "__main__":
    main(sys.argv[1:])
