"""``sparqlqa serve`` / ``mcp`` on the command line: lazy imports, refusals before binding, a real start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from serve_helpers import QUESTION, free_port

from sparqlqa.cli import main
from sparqlqa.kb.knowledge_base import KnowledgeBase

REPO = Path(__file__).resolve().parents[2]


def test_help_imports_no_server_package() -> None:
    code = ("import sys; from click.testing import CliRunner; from sparqlqa.cli import main; "
            "r = CliRunner().invoke(main, ['--help']); assert 'serve' in r.output and 'mcp' in r.output; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'starlette', 'uvicorn', 'mcp', 'anyio'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
def test_non_loopback_needs_a_token(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARQLQA_SERVE_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["serve", "--host", host])
    assert result.exit_code == 2
    assert f"refusing to serve on {host} without a token" in result.output and "hint: pass --token" in result.output


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    result = CliRunner().invoke(main, ["serve"])
    assert result.exit_code == 1 and "pip install 'sparqlqa[serve]'" in result.output


def test_serve_command_answers_over_http(movies_kb: KnowledgeBase, tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPARQLQA_SERVE_TOKEN": "t0ken"}
    log = (tmp_path / "serve.log").open("w")
    child = subprocess.Popen([sys.executable, "-m", "sparqlqa", "serve", "--kb", "movies", "--port", str(port)],
                             env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30,
                          headers={"Authorization": "Bearer t0ken"}) as http:
            for _ in range(300):
                try:
                    if http.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if child.poll() is not None:
                    break
                subprocess.run(["sleep", "0.1"], check=True)
            answer = http.post("/api/ask", json={"kb": "movies", "question": QUESTION}).json()
            assert answer["strategy"] == "offline" and answer["items"][0]["tier"] == 0
            assert httpx.get(f"http://127.0.0.1:{port}/api/kbs", timeout=10).status_code == 401
    finally:
        child.terminate()
        child.wait(timeout=20)
        log.close()
    assert "serving on http://127.0.0.1:" in (tmp_path / "serve.log").read_text()
