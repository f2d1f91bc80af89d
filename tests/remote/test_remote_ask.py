"""The same questions over an endpoint and over the same data ingested locally give the same answers.

Endpoints: the Oxigraph stand-in (always) and a real Virtuoso (when installed; required in CI).
Strategies: 4step with a scripted FakeLLM, and the offline strategy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from virtuoso import (  # noqa: F401 - fixtures
    FREEBASE_GRAPH,
    SAMPLES,
    WIKIDATA_GRAPH,
    oxigraph_endpoint,
    virtuoso,
)

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm import FakeLLM
from sparqlqa.remote import add_remote_kb, load_profile
from sparqlqa.stages.answer import Answer

WD = "http://www.wikidata.org/entity/"
NS = "http://rdf.freebase.com/ns/"
GRAPHS = {"wikidata": WIKIDATA_GRAPH, "freebase": FREEBASE_GRAPH}


def _t(kind: str, text: str, type_: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "text": text, "type": type_}


def _script(*triplets: tuple[dict[str, Any], str, dict[str, Any]], target: str = "?x1") -> dict[str, Any]:
    return {"triplets": [{"head": h, "relation": r, "tail": t} for h, r, t in triplets], "target": target,
            "requirements": []}


#: (profile, question, what an LLM would answer, the expected filtered answers)
CASES: list[tuple[str, str, dict[str, Any], set[str]]] = [
    ("wikidata", "Which films did Ridley Scott direct?",
     _script((_t("variable", "?x1", "film"), "director", _t("constant", "Ridley Scott", "human"))),
     {f"{WD}Q103569", f"{WD}Q184843", f"{WD}Q128518"}),
    ("wikidata", "Which films starring Ginger Rogers did Mark Sandrich direct?",
     _script((_t("variable", "?x1", "film"), "director", _t("constant", "mark sandrich", "human")),
             (_t("variable", "?x1", "film"), "cast member", _t("constant", "Ginger Rogers", "human"))),
     {f"{WD}Q1216287", f"{WD}Q1425245"}),
    ("freebase", "Which films did Ridley Scott direct?",
     _script((_t("variable", "?x1", "film"), "directed by", _t("constant", "Ridley Scott", "film director"))),
     {f"{NS}m.0dtfn", f"{NS}m.01hp5", f"{NS}m.0bdjd"}),
    ("freebase", "Who acted in Top Hat?",
     _script((_t("constant", "Top Hat", "film"), "starring", _t("variable", "?x2", "film performance")),
             (_t("variable", "?x2", "film performance"), "actor", _t("variable", "?x1", "film actor"))),
     {f"{NS}m.0f4vbz", f"{NS}m.02bkg"}),
]
OFFLINE_QUESTIONS = {"wikidata": "Which films did Ridley Scott direct?", "freebase": "Who directed Top Hat?"}


@pytest.fixture(params=["oxigraph-http", "virtuoso"])
def endpoint_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The SPARQL URL of each endpoint kind (Virtuoso skips, or fails in CI, when missing)."""
    server = request.getfixturevalue("oxigraph_endpoint" if request.param == "oxigraph-http" else "virtuoso")
    yield server.sparql_url


def _pair(profile: str, url: str) -> tuple[KnowledgeBase, KnowledgeBase]:
    """(remote KB on the endpoint, local KB ingested from the same file with the same profile)."""
    remote = add_remote_kb(f"{profile}-remote", url, profile, default_graphs=[GRAPHS[profile]], timeout=30)
    local = ingest([SAMPLES[GRAPHS[profile]]], kb=f"{profile}-local", profile=load_profile(profile))
    return remote, local


def _filtered(answer: Answer) -> list[tuple[str, int | None, str]]:
    """The SPARQL-filtered answers with their labels (in the profile's language on both sides)."""
    return sorted((i.iri, i.tier, i.label) for i in answer.items if i.source == "filtered")


@pytest.mark.parametrize(("profile", "question", "script", "expected"), CASES,
                         ids=[f"{c[0]}-{n}" for n, c in enumerate(CASES)])
def test_4step_answers_match_the_local_copy(endpoint_url: str, profile: str, question: str,
                                            script: dict[str, Any], expected: set[str]) -> None:
    from sparqlqa.strategies.ask import ask

    remote, local = _pair(profile, endpoint_url)
    answers = [ask(kb, question, llm=FakeLLM([script]), k=5, rerank="none") for kb in (remote, local)]
    on_endpoint, on_local = (_filtered(a) for a in answers)
    assert {iri for iri, _, _ in on_endpoint} == expected
    assert on_endpoint == on_local
    assert all(q.store.startswith("endpoint:") for q in answers[0].queries if q.stage == "sparql")
    assert [i.iri for i in answers[0].items][:2] == [i.iri for i in answers[1].items][:2]


@pytest.mark.parametrize("profile", ["wikidata", "freebase"])
def test_offline_answers_match_the_local_copy(endpoint_url: str, profile: str) -> None:
    from sparqlqa.strategies.ask import ask
    from sparqlqa.strategies.base import strategies

    if "offline" not in strategies:
        pytest.skip("the offline strategy is not registered (sparqlqa.strategies.offline is not written yet)")
    remote, local = _pair(profile, endpoint_url)
    question = OFFLINE_QUESTIONS[profile]
    on_endpoint, on_local = (ask(kb, question, strategy="offline", k=5) for kb in (remote, local))
    assert _filtered(on_endpoint) == _filtered(on_local)
    assert [i.iri for i in on_endpoint.items][:1] == [i.iri for i in on_local.items][:1]


def test_cli_kbs_add_registers_the_endpoint(oxigraph_endpoint: Any, tmp_path: Path) -> None:  # noqa: F811
    from click.testing import CliRunner

    from sparqlqa.cli import main
    from sparqlqa.kb.knowledge_base import open_kb

    result = CliRunner().invoke(main, ["kbs", "add", "wd-cli", "--endpoint", oxigraph_endpoint.sparql_url,
                                       "--profile", "wikidata"])
    assert result.exit_code == 0, result.output
    assert open_kb("wd-cli").manifest.store["kind"] == "endpoint"


def test_cli_ask_endpoint_directly(oxigraph_endpoint: Any) -> None:  # noqa: F811
    """`sparqlqa ask --endpoint URL --profile P QUESTION`: no saved KB, same offline answers as a saved one."""
    import json

    from click.testing import CliRunner

    from sparqlqa.cli import main
    from sparqlqa.strategies.ask import ask

    question = OFFLINE_QUESTIONS["wikidata"]
    result = CliRunner().invoke(main, ["ask", "--endpoint", oxigraph_endpoint.sparql_url, "--profile", "wikidata",
                                       "--llm", "offline", "--json", question])
    assert result.exit_code == 0, result.output
    direct = json.loads(result.stdout)
    assert all(q["store"].startswith("endpoint:") for q in direct["queries"] if q.get("stage") == "sparql")
    remote, _ = _pair("wikidata", oxigraph_endpoint.sparql_url)
    saved = ask(remote, question, strategy="offline", k=5)
    filtered = [i["iri"] for i in direct["items"] if i["source"] == "filtered"]
    assert filtered and filtered == [i.iri for i in saved.items if i.source == "filtered"]
    misuse = CliRunner().invoke(main, ["ask", "--endpoint", oxigraph_endpoint.sparql_url, "kb", question])
    assert misuse.exit_code == 2 and "only the question" in misuse.stderr
