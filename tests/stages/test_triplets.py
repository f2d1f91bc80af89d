"""Stage 1: prompting for triplets, parsing structured and arrow answers, garbage handling."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparqlqa.embed.embedders import get_embedder
from sparqlqa.errors import LLMError
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.schema import RelationInfo, Schema, TypeInfo, local_name
from sparqlqa.llm import FakeLLM
from sparqlqa.llm.pricing import estimate_tokens
from sparqlqa.stages.schema_prompt import SCHEMA_PROMPT_TOKENS
from sparqlqa.stages.triplets import (
    TRIPLETS_SCHEMA,
    Term,
    Triplets,
    build_prompt,
    generate_triplets,
    parse_arrow_triplets,
    resolve_relation,
    sanitize_variable,
    schema_summary,
    triplets_from_data,
)

REL = "https://example.org/movies/rel/"
EX = "https://example.org/movies/"

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "movies.ttl"


GOOD = {
    "triplets": [
        {"head": {"kind": "variable", "text": "?x1", "type": "movie"}, "relation": "directed by",
         "tail": {"kind": "constant", "text": "Ridley Scott", "type": "person"}},
        {"head": {"kind": "variable", "text": "?x1", "type": "movie"}, "relation": "has_genre",
         "tail": {"kind": "constant", "text": "sci-fi", "type": None}},
    ],
    "target": "?x1",
    "requirements": ["released before 1990"],
}


def test_generate_triplets_structured(kb: KnowledgeBase) -> None:
    llm = FakeLLM([GOOD])
    result = generate_triplets("Which sci-fi films did Ridley Scott direct before 1990?", kb, llm)
    assert result.source == "llm" and result.target == "?x1" and result.target_type == "movie"
    assert [t.relation_iri for t in result.triplets] == [REL + "directed_by", REL + "has_genre"]
    assert result.triplets[0].tail == Term("constant", "Ridley Scott", "person")
    assert result.requirements == ["released before 1990"] and result.notes == []
    assert len(result.llm_calls) == 1 and result.llm_calls[0].backend == "fake"
    request = llm.requests[0]
    assert request.schema == TRIPLETS_SCHEMA and request.schema_name == "triplets"
    prompt = request.messages[-1].content
    assert "directed by (also: director): movie → person" in prompt
    assert "Ridley Scott direct before 1990" in prompt
    assert result.target_type_iri(kb.schema) == EX + "Movie"


def test_invented_relations_and_types_are_kept_but_flagged(kb: KnowledgeBase) -> None:
    data = {"triplets": [{"head": {"kind": "variable", "text": "?x1", "type": "film"}, "relation": "filmed in",
                          "tail": {"kind": "constant", "text": "Tunisia"}}], "target": "?x1"}
    result = generate_triplets("q", kb, FakeLLM([data]))
    triplet = result.triplets[0]
    assert triplet.relation == "filmed in" and triplet.relation_iri is None
    assert triplet.flags == ["unknown-relation", "unknown-type"]
    assert any("filmed in" in n for n in result.notes)


@pytest.mark.parametrize("reply", [
    "I cannot help with that.",
    '{"triplets": "none", "target": 5}',
    "[1, 2, 3]",
    "",
])
def test_garbage_replies_become_notes(kb: KnowledgeBase, reply: str) -> None:
    result = generate_triplets("q", kb, FakeLLM([reply]))
    assert isinstance(result, Triplets) and result.triplets == [] and result.target is None
    assert result.notes and "could not be used" in result.notes[0]
    assert result.llm_calls and result.llm_calls[0].error


def test_arrow_reply_instead_of_json_is_parsed(kb: KnowledgeBase) -> None:
    reply = "Here you go:\nmovie |?1| -> directed by -> person 'Ridley Scott'"
    result = generate_triplets("q", kb, FakeLLM([reply]))
    assert [t.relation_iri for t in result.triplets] == [REL + "directed_by"]
    assert result.target == "?1" and "arrow format" in result.notes[0]


def test_transport_errors_propagate(kb: KnowledgeBase) -> None:
    with pytest.raises(LLMError):
        generate_triplets("q", kb, FakeLLM([LLMError("down")]))


def test_structured_data_is_read_leniently() -> None:
    data = {"triplets": [
        {"head": "?x 1}", "relation": "r", "tail": {"text": "Alien"}},  # bare strings, missing kind
        {"head": {"kind": "constant", "text": ""}, "relation": "r", "tail": "?x1"},  # empty constant
        "not a triplet",
        {"head": {"kind": "variable", "text": "?x2"}, "relation": None, "tail": {"kind": "constant", "text": "B"}},
    ], "target": "?nope", "requirements": "kid-friendly"}
    result = triplets_from_data(data, "q", None)
    assert [str(t) for t in result.triplets] == ["?x1 -> r -> 'Alien'", "?x2 -> * -> 'B'"]
    assert result.triplets[1].flags == ["any-relation"]
    assert result.requirements == ["kid-friendly"]
    assert result.target == "?x1" and any("'?nope'" in n for n in result.notes)
    assert sum("malformed" in n for n in result.notes) == 2


def test_no_target_and_no_variables() -> None:
    result = triplets_from_data({"triplets": [{"head": "A", "relation": "r", "tail": "B"}], "target": None}, "q",
                                None)
    assert result.target is None and result.triplets[0].flags == ["constant-constant"]
    assert "no target variable was given" in result.notes


def test_target_without_triplets_keeps_its_type() -> None:
    result = triplets_from_data({"triplets": [], "target": "?x1"}, "q", None)
    assert result.target == "?x1" and any("no usable triplets" in n for n in result.notes)


@pytest.mark.parametrize(("text", "expected"), [
    ("drug 'aspirin' -> indication -> disease |?1|",
     [("constant", "aspirin", "drug"), ("variable", "?1", "disease")]),
    ("disease 'Alzheimer's disease' -> indication -> drug |?1|",
     [("constant", "Alzheimer's disease", "disease"), ("variable", "?1", "drug")]),
    ("drug \u2018Crohn\u2019s remedy\u2019 \u2192 indication \u2192 |?1|",
     [("constant", "Crohn\u2019s remedy", "drug"), ("variable", "?1", None)]),
    ('drug "O\'Neil, Jr." --> treats --> x1',
     [("constant", "O'Neil, Jr.", "drug"), ("variable", "?x1", None)]),
    ("  3) |?1| -> 'made by' -> brand: Acme ;", [("variable", "?1", None), ("constant", "Acme", "brand")]),
])
def test_arrow_terms(text: str, expected: list[tuple[str, str, str | None]]) -> None:
    result = parse_arrow_triplets(text)
    assert len(result.triplets) == 1
    head, tail = result.triplets[0].head, result.triplets[0].tail
    assert [(head.kind, head.text, head.type), (tail.kind, tail.text, tail.type)] == expected


def test_arrow_several_per_line_and_paths() -> None:
    text = ("gene 'TP53' -> interacts with -> gene |?2|, |?2| -> associated with -> disease 'Alzheimer's, early'\n"
            "|?1| -> r1 -> |?2| -> r2 -> 'X'")
    result = parse_arrow_triplets(text)
    assert [str(t) for t in result.triplets] == [
        "gene 'TP53' -> interacts with -> gene ?2",
        "?2 -> associated with -> disease \"Alzheimer's, early\"",
        "?1 -> r1 -> ?2",
        "?2 -> r2 -> 'X'",
    ]
    assert result.target == "?1" and result.notes == []


def test_arrow_requirements_target_and_stray_lines(kb: KnowledgeBase) -> None:
    text = ("Triplets:\n- movie |?2| -> directed_by -> person 'ridley scott' | released before 1990\n"
            "- |?2| -> invented -> 'x'\n- -> -> \ntarget: |?2|\nrequirements: rated R; short")
    result = parse_arrow_triplets(text, "q", kb.schema)
    assert result.target == "?2" and result.source == "parsed"
    assert result.requirements == ["released before 1990", "rated R", "short"]
    assert [t.relation_iri for t in result.triplets] == [REL + "directed_by", None]
    assert result.triplets[1].flags == ["unknown-relation"]
    assert any("line 4" in n for n in result.notes)


def test_arrow_unquoted_typed_constant_uses_the_schema(kb: KnowledgeBase) -> None:
    result = parse_arrow_triplets("movie Alien -> directed by -> person |?1|", schema=kb.schema)
    assert result.triplets[0].head == Term("constant", "Alien", "movie")
    assert result.triplets[0].tail == Term("variable", "?1", "person")


@pytest.mark.parametrize("text", ["", "hello", "-> -> ->", "'''", "|?|", "a -> b", "\x00\n\n;;,,"])
def test_arrow_garbage_never_raises(text: str) -> None:
    result = parse_arrow_triplets(text)
    assert result.triplets == [] and result.notes


def test_variable_names_are_sanitised() -> None:
    assert sanitize_variable("?x1 } UNION {") == "?x1UNION"
    result = parse_arrow_triplets("|?a-b| -> r -> 'c'")
    assert result.triplets[0].head.text == "?ab"


def test_resolve_relation_forms(kb: KnowledgeBase) -> None:
    schema = kb.schema
    for name in ("directed by", "Directed_By", REL + "directed_by", "director", "DIRECTED-BY", "directedBy"):
        found = resolve_relation(schema, name)
        assert found is not None and found.iri == REL + "directed_by", name
    assert resolve_relation(schema, "starring").iri == REL + "starred_actors"  # type: ignore[union-attr]
    assert resolve_relation(schema, "composed by") is None and resolve_relation(schema, " ") is None


def test_schema_summary_respects_the_budget() -> None:
    types = [TypeInfo(f"http://x/T{i}", f"type number {i}", 1000 - i) for i in range(200)]
    relations = [RelationInfo(f"http://x/r{i}", f"relation number {i}", 1000 - i,
                              pairs=[(f"http://x/T{i}", f"http://x/T{i + 1}", 3)]) for i in range(500)]
    summary = schema_summary(Schema(types=types, relations=relations), budget_tokens=500)
    assert estimate_tokens(summary) <= 500
    assert "relation number 0:" in summary and "relation number 499" not in summary
    assert "more relations not shown" in summary and "more" in summary.splitlines()[0]
    prompt = build_prompt("q?", Schema(types=types, relations=relations), budget_tokens=500)
    assert len(prompt) < 4500 and prompt.rstrip().endswith("Answer with the JSON object only.")


def big_schema(relations: int = 400) -> Schema:
    """A one-type KB with ``relations`` relations, each also stored as ``X_inverse`` (PathQuestion-Large)."""
    rels = []
    for i in range(relations // 2):
        name = f"attribute_{i}_of_{'abcdefghij'[i % 10]}thing_in_the_collection"
        rels += [RelationInfo(f"http://x/relation/{name}", name.replace("_", " "), 10_000 - i),
                 RelationInfo(f"http://x/relation/{name}_inverse", f"{name.replace('_', ' ')} inverse", 10_000 - i)]
    rels += [RelationInfo("http://x/relation/plays_for_country", "plays for country", 1),
             RelationInfo("http://x/relation/plays_for_country_inverse", "plays for country inverse", 1)]
    return Schema(types=[TypeInfo("http://x/entity", "entity", 5000)], relations=rels)


def test_a_400_relation_schema_fits_the_budget_and_keeps_the_named_relation() -> None:
    schema = big_schema()
    question = "which player plays for country Italy and wears shirt 10 ?"
    section = schema_summary(schema, question, embedder=get_embedder("fake"))
    assert section in build_prompt(question, schema, embedder=get_embedder("fake"))
    assert estimate_tokens(section) <= SCHEMA_PROMPT_TOKENS
    assert "\n- plays for country\n" in section  # folded: no 'inverse' line, no 'entity → entity'
    assert "plays for country inverse\n" not in section and "entity →" not in section and "Node types" not in section
    assert 'Relations (each read head → tail, "head <relation> tail"):' in section  # one direction for every line
    shown = [line for line in section.splitlines() if line.startswith("- ") and "not shown" not in line]
    assert 100 < len(shown) < 201 and all("inverse" not in line for line in shown)
    assert f"{201 - len(shown)} more relations not shown" in section
    assert "201 of them are also stored reversed" in section
    assert "plays for country" in schema_summary(schema, question, budget_tokens=60)  # named: always in


def test_relations_are_chosen_by_relevance_when_they_do_not_fit() -> None:
    schema = big_schema()
    section = schema_summary(schema, "what is the attribute 150 of the athing ?", budget_tokens=300,
                             embedder=get_embedder("fake"))
    assert "- attribute 150 of athing in the collection\n" in section  # the last by frequency, first by relevance
    everything = schema_summary(big_schema(20), "anything", budget_tokens=SCHEMA_PROMPT_TOKENS)
    assert "not shown" not in everything and everything.splitlines()[2] == "- attribute 0 of athing in the collection"


def test_owl_inverse_pairs_fold_into_one_line() -> None:
    schema = Schema(relations=[RelationInfo("http://x/parent_of", "parent of", 9, inverse="http://x/child_of"),
                               RelationInfo("http://x/child_of", "child of", 7, inverse="http://x/parent_of")])
    assert schema_summary(schema).splitlines()[1:] == [
        "(1 of them are also stored reversed, e.g. 'child of': write them in the listed direction)",
        "- parent of (reverse: child of)"]


def test_to_dict_roundtrip(kb: KnowledgeBase) -> None:
    result = generate_triplets("q", kb, FakeLLM([GOOD]))
    data = json.loads(json.dumps(result.to_dict()))
    again = Triplets.from_dict(data)
    assert again.triplets == result.triplets and again.target == "?x1"
    assert again.llm_calls[0].response_data == result.llm_calls[0].response_data


ARROWISH = st.lists(st.sampled_from(["->", "|?1|", "|", "'", '"', "’", ";", ",", "\n", "x1", "?2", " ", "a b",
                                     "drug", "target: ", "requirements:", "→", "--", "}", "{"]), max_size=30)


@settings(max_examples=150, deadline=None, database=None)
@given(parts=ARROWISH, noise=st.text(max_size=30))
def test_arrow_parser_fuzz_never_raises(parts: list[str], noise: str) -> None:
    result = parse_arrow_triplets("".join(parts) + noise)
    for triplet in result.triplets:
        for term in (triplet.head, triplet.tail):
            assert term.text and (not term.is_variable or re.fullmatch(r"\?[A-Za-z0-9_]+", term.text))
    assert result.target is None or re.fullmatch(r"\?[A-Za-z0-9_]+", result.target)


def test_huge_pastes_are_cut() -> None:
    result = parse_arrow_triplets("'a' -> r -> |?1|, " * 5000)
    assert any("cut" in n for n in result.notes) and len(result.triplets) < 2000


def test_ingest_reads_owl_inverse_of_both_ways(tmp_path: Path) -> None:
    from sparqlqa.ingest import ingest

    ttl = tmp_path / "family.ttl"
    ttl.write_text("@prefix ex: <http://x/> . @prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                   "ex:parent_of owl:inverseOf ex:child_of .\n"
                   "ex:a ex:parent_of ex:b . ex:b ex:child_of ex:a . ex:a ex:knows ex:b .\n")
    schema = ingest([ttl], kb="family").schema
    inverse = {local_name(r.iri): r.inverse and local_name(r.inverse) for r in schema.relations}
    assert inverse == {"parent_of": "child_of", "child_of": "parent_of", "knows": None}
