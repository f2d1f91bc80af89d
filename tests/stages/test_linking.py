"""Label index and constant linking on the movie fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from sparqlqa.kb.knowledge_base import KnowledgeBase, open_kb
from sparqlqa.kb.labels import (
    EMBEDDING_MIN_SCORE,
    INDEX_VERSION,
    LabelIndex,
    NodeLookup,
    NodeMatch,
    normalize_label,
    resolve_type,
)
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.kb.vocab import RDFS, SKOS
from sparqlqa.stages.linking import link_constants, link_one

EX = "https://example.org/movies/"


def memory_kb(triples: list[tuple[str, NamedNode, str | NamedNode]]) -> KnowledgeBase:
    store = OxigraphStore.in_memory()
    for s, p, o in triples:
        obj = o if isinstance(o, NamedNode) else Literal(o)
        store.oxstore.add(Quad(NamedNode(s), p, obj))
    return KnowledgeBase.in_memory("mem", store)


@pytest.mark.parametrize(("text", "expected"), [
    ("Harrison Ford", "harrison ford"),
    ("  harrison   FORD. ", "harrison ford"),
    ("sci-fi", "sci fi"),
    ("light_green", "light green"),
    ("O'Brien", "obrien"),
    ("O’Brien", "obrien"),
    ("Beyoncé", "beyonce"),
    ("Ｆｕｌｌ　width", "full width"),
    ("東京タワー", "東京タワー"),
    ("नमस्ते", "नमस्ते"),
    ("!!", "!!"),
])
def test_normalize_label(text: str, expected: str) -> None:
    assert normalize_label(text) == expected


def test_exact_matches_labels_and_aliases_case_and_punctuation_insensitively(movies_kb: KnowledgeBase) -> None:
    index = LabelIndex.for_kb(movies_kb)
    assert [m.iri for m in index.exact("ridley scott!")] == [EX + "ridley_scott"]
    sir = index.exact("Sir Ridley-Scott")
    assert [(m.iri, m.label, m.method, m.score) for m in sir] == [(EX + "ridley_scott", "Ridley Scott", "exact", 1.0)]
    assert [m.label for m in index.exact("SCI FI")] == ["Science Fiction"]
    assert index.exact("Ridley") == []


def test_schema_nodes_are_not_in_the_index(movies_kb: KnowledgeBase) -> None:
    index = LabelIndex.for_kb(movies_kb)
    assert index.exact("movie") == []  # the class ex:Movie
    assert index.exact("directed by") == []  # the relation
    assert "directed by" not in set(index.normalized_keys())
    assert "alien" in set(index.normalized_keys())


def test_exact_restricted_by_type(movies_kb: KnowledgeBase) -> None:
    index = LabelIndex.for_kb(movies_kb)
    assert [m.label for m in index.exact("Alien", EX + "Movie")] == ["Alien"]
    assert index.exact("Alien", EX + "Person") == []
    assert index.exact("Alien", EX + "NoSuchType") == []
    assert index.types_of(EX + "alien") == [EX + "Movie"]
    assert index.types_of(EX + "nobody") == []
    assert index.label_of(EX + "alien") == "Alien"


def test_fuzzy_uses_the_cutoff(movies_kb: KnowledgeBase) -> None:
    index = LabelIndex.for_kb(movies_kb)
    close = index.fuzzy("Sigourney Weavers")
    assert [m.label for m in close] == ["Sigourney Weaver"] and close[0].method == "fuzzy"
    assert 0.95 <= close[0].score < 1.0
    assert index.fuzzy("Alien") and index.fuzzy("Alien")[0].label == "Alien"
    assert "Aliens" not in [m.label for m in index.fuzzy("Alien")]  # 0.91 < 0.95
    assert "Aliens" in [m.label for m in index.fuzzy("Alien", cutoff=0.9)]
    assert index.fuzzy("Sigourney Weavers", EX + "Movie") == []


def test_containing_keeps_broader_labels() -> None:
    kb = memory_kb([("http://x/g", RDFS.label, "Green"), ("http://x/lg", RDFS.label, "Light Green"),
                    ("http://x/r", RDFS.label, "Red")])
    index = LabelIndex.for_kb(kb)
    assert [m.label for m in index.containing("green")] == ["Green", "Light Green"]
    linked, _ = link_one(index, "green", None)
    assert [(m.label, m.method) for m in linked] == [("Green", "exact"), ("Light Green", "fuzzy")]
    assert linked[0].score > linked[1].score


def test_index_is_persisted_and_reloaded_without_the_store(movies_kb: KnowledgeBase, monkeypatch) -> None:
    index = LabelIndex.for_kb(movies_kb)
    directory = movies_kb.artifacts_dir("labels")
    assert directory is not None
    payload = json.loads((directory / "index.json").read_text("utf-8"))
    assert payload["format"] == "sparqlqa-label-index" and len(payload["iris"]) == len(index) == 19
    reopened = open_kb("movies")  # a new opened KB holds no index yet: it reads the saved one
    monkeypatch.setattr(KnowledgeBase, "query", lambda self, q: pytest.fail("the store was queried"))
    again = LabelIndex.for_kb(reopened)
    assert again is not index and [m.iri for m in again.exact("alien")] == [EX + "alien"]
    assert LabelIndex.for_kb(reopened) is again  # remembered by the opened KB


def test_corrupt_index_file_is_rebuilt(movies_kb: KnowledgeBase) -> None:
    directory = movies_kb.artifacts_dir("labels")
    assert directory is not None
    (directory / "index.json").write_text("{not json", "utf-8")
    index = LabelIndex.for_kb(movies_kb)
    assert index.exact("Alien")
    assert json.loads((directory / "index.json").read_text("utf-8"))["version"] == INDEX_VERSION


def _spy_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    queries: list[str] = []
    original = KnowledgeBase.query

    def spy(self: KnowledgeBase, sparql: str):  # type: ignore[no-untyped-def]
        queries.append(str(sparql))
        return original(self, sparql)

    monkeypatch.setattr(KnowledgeBase, "query", spy)
    return queries


def test_build_runs_one_name_query_and_one_scan_for_unnamed_nodes(movies_kb: KnowledgeBase, monkeypatch) -> None:
    queries = _spy_queries(monkeypatch)
    LabelIndex.build(movies_kb)
    assert len(queries) == 3 and "DISTINCT ?n" in queries[2]
    assert "owl#sameAs" in queries[1]  # the owl:sameAs lookup (kb/identity.py): one predicate, not a scan


def test_a_delimited_kb_is_not_scanned_for_unnamed_nodes(tmp_path: Path, monkeypatch) -> None:
    from sparqlqa.ingest import ingest

    (tmp_path / "kb.txt").write_text("a|r|b\nb|r|c\n", "utf-8")
    kb = ingest([tmp_path / "kb.txt"], kb="d", format="triples", options={"sep": "|"})
    queries = _spy_queries(monkeypatch)
    assert len(LabelIndex.build(kb)) == 3
    assert len(queries) == 1


def test_language_profile_filters_labels() -> None:
    from sparqlqa.kb.profile import Profile

    store = OxigraphStore.in_memory()
    node = NamedNode("http://x/paris")
    store.oxstore.add(Quad(node, RDFS.label, Literal("Paris", language="en")))
    store.oxstore.add(Quad(node, RDFS.label, Literal("Parigi", language="it")))
    store.oxstore.add(Quad(node, SKOS.altLabel, Literal("City of Light")))
    kb = KnowledgeBase.in_memory("geo", store, profile=Profile(language="en"))
    index = LabelIndex.for_kb(kb)
    assert index.exact("Paris") and index.exact("city of light") and not index.exact("Parigi")


def test_in_memory_index_is_cached_per_kb() -> None:
    kb = memory_kb([("http://x/a", RDFS.label, "A")])
    assert LabelIndex.for_kb(kb) is LabelIndex.for_kb(kb)


def test_nearest_by_embedding_and_vector_cache(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.embed.embedders import get_embedder

    embedder = get_embedder("fake")
    index = LabelIndex.for_kb(movies_kb)
    near = index.nearest("science fiction stories", embedder)
    assert near[0].label == "Science Fiction" and near[0].method == "embedding"
    typed = index.nearest("science fiction stories", embedder, EX + "Movie")
    assert typed and all(index.types_of(m.iri) == [EX + "Movie"] for m in typed)
    directory = movies_kb.artifacts_dir("labels")
    assert directory is not None and (directory / "vectors-fake.npy").is_file()


def test_resolve_type_loosely(movies_kb: KnowledgeBase) -> None:
    schema = movies_kb.schema
    assert resolve_type(schema, "movie") == EX + "Movie"
    assert resolve_type(schema, "Movies") is None
    assert resolve_type(schema, EX + "Person") == EX + "Person"
    assert resolve_type(schema, "PERSON") == EX + "Person"
    assert resolve_type(schema, None) is None and resolve_type(schema, "  ") is None


class _ScriptedLookup(NodeLookup):
    """A lookup with canned answers: linking works against the interface, not the index."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None]] = []

    def exact(self, text: str, type_iri: str | None = None) -> list[NodeMatch]:
        self.calls.append(("exact", text, type_iri))
        return [NodeMatch("http://x/1", "One", 1.0, "exact")] if type_iri is None else []

    def fuzzy(self, text: str, type_iri: str | None = None, cutoff: float = 0.95,
              limit: int = 5) -> list[NodeMatch]:
        self.calls.append(("fuzzy", text, type_iri))
        return []

    def types_of(self, iri: str) -> list[str]:
        return []


def test_stated_type_is_relaxed_only_when_nothing_matches() -> None:
    lookup = _ScriptedLookup()
    matches, notes = link_one(lookup, "one", "http://x/T")
    assert [(m.iri, m.score) for m in matches] == [("http://x/1", pytest.approx(0.9))]
    assert ("exact", "one", "http://x/T") in lookup.calls and ("exact", "one", None) in lookup.calls
    assert any("stated type" in n for n in notes)


def test_unmatched_constant_is_noted(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.embed.embedders import get_embedder

    index = LabelIndex.for_kb(movies_kb)
    matches, notes = link_one(index, "Qwxyz Zzzq", None, embedder=get_embedder("fake:4096"))
    assert matches == [] and any("no KB node matches" in n for n in notes)
    assert EMBEDDING_MIN_SCORE > 0


def test_labels_file_has_no_pickle(movies_kb: KnowledgeBase) -> None:
    LabelIndex.for_kb(movies_kb)
    directory = movies_kb.artifacts_dir("labels")
    assert directory is not None
    assert sorted(p.name for p in Path(directory).iterdir()) == ["index.json"]


def test_link_constants_over_triplets(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.stages.triplets import Term, Triplet, Triplets

    triplets = Triplets(
        question="q", target="?x1", requirements=[], source="parsed", notes=[], llm_calls=[],
        triplets=[
            Triplet(Term("variable", "?x1", "movie"), "directed by", Term("constant", "ridley scott", "person")),
            Triplet(Term("variable", "?x1", "movie"), "has genre", Term("constant", "Sci-Fi", None)),
            Triplet(Term("constant", "Alien", "film thing"), "x", Term("constant", "Nothing Like It", None)),
        ],
    )
    from sparqlqa.embed.embedders import get_embedder

    linked = link_constants(triplets, movies_kb, embedder=get_embedder("fake:4096"))
    assert linked.iris("ridley scott") == [EX + "ridley_scott"]
    assert linked.iris("Sci-Fi") == [EX + "scifi"]
    assert linked.iris("Alien")[0] == EX + "alien"
    assert linked.links["Nothing Like It"] == []
    assert any("unknown node type 'film thing'" in n for n in linked.notes)
    assert json.loads(json.dumps(linked.to_dict()))["links"]["Sci-Fi"][0]["method"] == "exact"


def test_a_stated_type_is_not_noted_on_a_kb_without_types() -> None:
    """The triplet prompt lists no types for a KB with at most one, so an LLM's type guess is no news."""
    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.stages.triplets import Term, Triplet, Triplets

    kb = memory_kb([("http://x/t3", RDFS.label, "takelot_iii"), ("http://x/o3", RDFS.label, "osorkon_iii"),
                    ("http://x/t3", NamedNode("http://x/parents"), NamedNode("http://x/o3"))])
    triplets = Triplets(question="q", target="?x", requirements=[], source="parsed", notes=[], llm_calls=[],
                        triplets=[Triplet(Term("constant", "takelot_iii", "person"), "parents",
                                          Term("variable", "?x", "person"))])
    linked = link_constants(triplets, kb, embedder=get_embedder("fake"))
    assert linked.iris("takelot_iii") == ["http://x/t3"]
    assert not any("unknown node type" in n for n in linked.notes)
