"""SPARQL servers on 127.0.0.1 for the endpoint tests: a throw-away Virtuoso, and a stand-in.

:class:`VirtuosoServer` writes a minimal ``virtuoso.ini`` into a temporary folder,
starts ``virtuoso-t`` in the foreground on free loopback ports (SQL and HTTP), loads
N-Triples files into named graphs with ``isql`` (``ld_dir`` + ``rdf_loader_run``),
builds the free-text index ``bif:contains`` needs, and serves ``/sparql``.

Tests use the session fixture :func:`virtuoso` (import it into the test module).  It
skips with a clear reason when Virtuoso is not installed, unless
``SPARQLQA_REQUIRE_VIRTUOSO=1`` (CI), where a missing server is a failure.
Install it with ``scripts/install_virtuoso.sh`` (Debian ``virtuoso-opensource-7-bin``).

:class:`OxigraphSparqlServer` is a stand-in that always runs: a real SPARQL protocol
server (``http.server`` in a thread) answering from an in-memory Oxigraph store, so the
remote code path (HTTP, JSON parsing, sampling, lookups, ``ask``) is tested everywhere.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from fake_servers import LoopbackHTTP
from pyoxigraph import QueryBoolean, QueryResultsFormat, QuerySolutions, RdfFormat, Store

FIXTURES = Path(__file__).resolve().parent / "fixtures"
WIKIDATA_GRAPH = "urn:sparqlqa:test:wikidata"
FREEBASE_GRAPH = "urn:sparqlqa:test:freebase"
SAMPLES = {WIKIDATA_GRAPH: FIXTURES / "wikidata_sample.nt", FREEBASE_GRAPH: FIXTURES / "freebase_sample.nt"}
START_TIMEOUT = 90.0

_INI = """\
[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
MaxCheckpointRemap = 2000
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{sql}
NumberOfBuffers = 2000
MaxDirtyBuffers = 1200
DirsAllowed = ., {d}
CheckpointInterval = 0
ThreadsPerQuery = 1
MaxClientConnections = 4

[HTTPServer]
ServerPort = 127.0.0.1:{http}
ServerRoot = {d}
ServerThreads = 4
MaxClientConnections = 4

[SPARQL]
ResultSetMaxRows = 10000
MaxQueryExecutionTime = 60
MaxQueryCostEstimationTime = 400
"""


def binaries() -> tuple[str, str] | None:
    """(virtuoso-t, isql) paths, or None when Virtuoso is not installed."""
    server = shutil.which("virtuoso-t")
    isql = shutil.which("isql-vt") or shutil.which("isql-v")
    return (server, isql) if server and isql else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VirtuosoServer:
    """One Virtuoso process with its database in ``directory`` (deleted with the folder)."""

    def __init__(self, directory: Path) -> None:
        found = binaries()
        if found is None:
            raise RuntimeError("Virtuoso is not installed (run scripts/install_virtuoso.sh)")
        self.server_bin, self.isql_bin = found
        self.directory = directory
        self.sql_port = _free_port()
        self.http_port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def sparql_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/sparql"

    def start(self) -> VirtuosoServer:
        ini = self.directory / "virtuoso.ini"
        ini.write_text(_INI.format(d=self.directory, sql=self.sql_port, http=self.http_port))
        log = (self.directory / "stdout.log").open("wb")
        self.process = subprocess.Popen([self.server_bin, "-f", "-c", str(ini)], cwd=self.directory,
                                        stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Virtuoso exited at start:\n{self.log_tail()}")
            if self._answers():
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"Virtuoso did not start within {START_TIMEOUT:.0f} s:\n{self.log_tail()}")

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.sparql_url + "?query=ASK%7B%7D", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def log_tail(self, lines: int = 30) -> str:
        text = ""
        for name in ("virtuoso.log", "stdout.log"):
            path = self.directory / name
            if path.is_file():
                text += "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n"
        return text

    def isql(self, sql: str) -> str:
        """Run SQL statements through isql; raises with the output on failure."""
        done = subprocess.run([self.isql_bin, f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={sql}"],
                              capture_output=True, text=True, timeout=120, check=False)
        output = done.stdout + done.stderr
        if done.returncode != 0 or "*** Error" in output:
            raise RuntimeError(f"isql failed ({done.returncode}): {sql}\n{output}")
        return output

    def load(self, files: dict[str, Path]) -> None:
        """Load N-Triples files into named graphs and index literals for ``bif:contains``."""
        data = self.directory / "data"
        data.mkdir(exist_ok=True)
        statements = ["DB.DBA.RDF_OBJ_FT_RULE_ADD(null, null, 'index_local');"]
        for graph, source in files.items():
            folder = data / graph.replace(":", "_")
            folder.mkdir(exist_ok=True)
            shutil.copy(source, folder / source.name)
            statements.append(f"ld_dir('{folder}', '{source.name}', '{graph}');")
        statements += ["rdf_loader_run();", "DB.DBA.VT_INC_INDEX_DB_DBA_RDF_OBJ();", "checkpoint;"]
        self.isql(" ".join(statements))
        failed = self.isql("select ll_file from DB.DBA.load_list where ll_error is not null;")
        if "0 Rows" not in failed:
            raise RuntimeError(f"Virtuoso could not load some files:\n{failed}")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


_SHARED: dict[str, VirtuosoServer] = {}


@pytest.fixture(scope="session")
def virtuoso(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> VirtuosoServer:
    """A Virtuoso holding the Wikidata-shaped and Freebase-shaped samples in two named graphs.

    One server per test session, even when several modules import this fixture; it
    stops when the session ends.
    """
    if binaries() is None:
        reason = "Virtuoso is not installed: run scripts/install_virtuoso.sh (Debian virtuoso-opensource-7-bin)"
        if os.environ.get("SPARQLQA_REQUIRE_VIRTUOSO") == "1":
            pytest.fail(reason + " (SPARQLQA_REQUIRE_VIRTUOSO=1)")
        pytest.skip(reason)
    if "server" not in _SHARED:
        server = VirtuosoServer(tmp_path_factory.mktemp("virtuoso")).start()
        try:
            server.load(SAMPLES)
        except BaseException:
            server.stop()
            raise
        _SHARED["server"] = server
        pytestconfig.add_cleanup(lambda: _SHARED.pop("server").stop())
    return _SHARED["server"]


class OxigraphSparqlServer:
    """A SPARQL 1.1 protocol endpoint (GET and POST) over an in-memory Oxigraph store.

    Every named graph's content is loaded into one store (queries see their union), so
    ``default-graph-uri`` is accepted and ignored.  ``queries`` records what arrived.
    """

    def __init__(self, files: list[Path]) -> None:
        self.store = Store()
        for path in files:
            self.store.load(path=str(path), format=RdfFormat.N_TRIPLES)
        self.queries: list[str] = []
        self.user_agents: list[str] = []
        self.http = LoopbackHTTP(self._answer)

    @property
    def sparql_url(self) -> str:
        return f"http://127.0.0.1:{self.http.port}/sparql"

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.command == "POST":
            form = handler.rfile.read(int(handler.headers.get("content-length") or 0)).decode("utf-8")
        else:
            form = urllib.parse.urlsplit(handler.path).query
        query = (urllib.parse.parse_qs(form).get("query") or [""])[0]
        self.queries.append(query)
        self.user_agents.append(handler.headers.get("user-agent", ""))
        try:
            raw = self.store.query(query, use_default_graph_as_union=True)
        except SyntaxError as exc:
            return self._send(handler, 400, str(exc).encode(), "text/plain")
        if isinstance(raw, (QuerySolutions, QueryBoolean)):
            return self._send(handler, 200, raw.serialize(format=QueryResultsFormat.JSON),
                              "application/sparql-results+json")
        return self._send(handler, 200, raw.serialize(format=RdfFormat.N_TRIPLES), "application/n-triples")

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes | None, content_type: str) -> None:
        payload = body or b""
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def __enter__(self) -> OxigraphSparqlServer:
        self.http.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.__exit__(*exc)


@pytest.fixture(scope="module")
def oxigraph_endpoint() -> Iterator[OxigraphSparqlServer]:
    """The stand-in endpoint holding both samples (Wikidata- and Freebase-shaped IRIs do not overlap)."""
    with OxigraphSparqlServer(list(SAMPLES.values())) as server:
        yield server
