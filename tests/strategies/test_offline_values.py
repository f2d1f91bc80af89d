"""Issue 26 item 8: the offline strategy on a KB shape it was not built on — class-like value nodes as
constants, relation choice by the question's own words, bare surnames, values in the KB's own unit.

Two tiny KBs written here (football: positions are nodes, fees are stored in millions; dishes: a type
"Dish" that a relation label resembles), asked with the real offline embedder like the answer-form tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlqa.english import singular
from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.labels import LabelIndex
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.offline.forms import detect_form
from sparqlqa.strategies.offline.mentions import detect_mentions
from sparqlqa.strategies.offline.paths import ValueClasses

FOOTBALL = """@prefix f: <http://f.example/o#> . @prefix p: <http://f.example/id/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
p:Forward a f:Position ; rdfs:label "Forward" .
p:Goalkeeper a f:Position ; rdfs:label "Goalkeeper" .
p:Oslo a f:City ; rdfs:label "Oslo" .
p:c1 a f:Club ; rdfs:label "Fjord United" ; f:basedIn p:Oslo .
p:c2 a f:Club ; rdfs:label "Harbour Athletic" .
p:a a f:Player ; rdfs:label "Lars Haugen" ; f:playsFor p:c1 ; f:position p:Forward ; f:goals 27 ;
    f:transferFee "60.0"^^xsd:decimal .
p:b a f:Player ; rdfs:label "Marco Alvarez" ; f:playsFor p:c2 ; f:position p:Forward ; f:goals 21 ;
    f:transferFee "45.5"^^xsd:decimal .
p:c a f:Player ; rdfs:label "Tiago Souza" ; f:playsFor p:c1 ; f:position p:Goalkeeper ; f:goals 0 ;
    f:transferFee "12.0"^^xsd:decimal .
p:d a f:Player ; rdfs:label "Yuto Tanaka" ; f:playsFor p:c2 ; f:position p:Goalkeeper ; f:goals 1 ;
    f:transferFee "4.0"^^xsd:decimal .
"""

DISHES = """@prefix r: <http://r.example/o#> . @prefix d: <http://r.example/id/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
d:Italian a r:Cuisine ; rdfs:label "Italian" .
d:Mexican a r:Cuisine ; rdfs:label "Mexican" .
d:Vegetarian a r:Diet ; rdfs:label "Vegetarian" .
d:c1 a r:Chef ; rdfs:label "Giulia Romano" .
d:c2 a r:Chef ; rdfs:label "Lucia Flores" .
d:k1 a r:Dish ; rdfs:label "Risotto" ; r:cuisine d:Italian ; r:diet d:Vegetarian ; r:createdBy d:c1 .
d:k2 a r:Dish ; rdfs:label "Tiramisu" ; r:cuisine d:Italian ; r:diet d:Vegetarian ; r:createdBy d:c1 .
d:k3 a r:Dish ; rdfs:label "Mole Negro" ; r:cuisine d:Mexican ; r:createdBy d:c2 .
d:k4 a r:Dish ; rdfs:label "Tostada" ; r:cuisine d:Mexican ; r:createdBy d:c2 .
"""


def _kb(tmp_path: Path, name: str, text: str) -> KnowledgeBase:
    path = tmp_path / f"{name}.ttl"
    path.write_text(text, encoding="utf-8")
    return ingest([path], kb=name)


@pytest.fixture
def onnx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARQLQA_EMBEDDER", "onnx:all-MiniLM-L6-v2")


@pytest.fixture
def football(tmp_path: Path) -> KnowledgeBase:
    return _kb(tmp_path, "football", FOOTBALL)


@pytest.fixture
def dishes(tmp_path: Path) -> KnowledgeBase:
    return _kb(tmp_path, "dishes", DISHES)


def _ask(kb: KnowledgeBase, question: str):  # type: ignore[no-untyped-def]
    return ask(kb, question, strategy="offline", rerank="none", k=10)


def _exact(answer) -> set[str]:  # type: ignore[no-untyped-def]
    return {i.label for i in answer.items if i.source == "filtered"}


# -- which nodes are class-like values, and how plurals name them -------------------------------------


def test_class_like_values_are_the_shared_leaves_of_one_relation(football: KnowledgeBase) -> None:
    values = ValueClasses(football)
    assert values.relation_into("http://f.example/id/Forward") == "http://f.example/o#position"
    assert values.relation_into("http://f.example/id/c1") is None  # a club has relations of its own
    assert values.relation_into("http://f.example/id/Oslo") is None  # the value of one subject only
    assert values.relation_into("http://f.example/id/a") is None  # a player is nobody's value


def test_singular_of_english_plurals() -> None:
    assert [singular(w) for w in ("goalkeepers", "categories", "matches", "class", "bus", "is")] == \
        ["goalkeeper", "category", "match", None, None, None]


def test_a_plural_names_only_class_like_values(football: KnowledgeBase) -> None:
    index, values = LabelIndex.for_kb(football), ValueClasses(football)
    found = detect_mentions("How many goalkeepers play for Fjord United?", index,
                            is_value=lambda n: values.relation_into(n) is not None)
    assert {m.key: m.nodes for m in found}["goalkeeper"] == ["http://f.example/id/Goalkeeper"]
    assert not [m for m in detect_mentions("Which goalkeepers?", index) if m.method == "exact"]  # no predicate
    assert not detect_mentions("Which players are from Oslos?", index,
                               is_value=lambda n: values.relation_into(n) is not None)  # Oslo is no value


# -- class-like values answer every form -------------------------------------------------------------------


def test_a_named_value_is_the_constant_of_its_relation(football: KnowledgeBase, onnx: None) -> None:
    counted = _ask(football, "How many forwards are there?")
    assert (counted.form, counted.value) == ("count", 2)
    assert counted.meta.offline.chosen[0].reading == "'forwards' <-position-"
    assert _exact(_ask(football, "Who are the goalkeepers?")) == {"Tiago Souza", "Yuto Tanaka"}
    both = _ask(football, "How many goalkeepers play for Fjord United?")
    assert (both.form, both.value) == ("count", 1)  # the value's own hop AND the club's


@pytest.mark.parametrize(("question", "value"), [("Is Lars Haugen a forward?", True),
                                                 ("Is Tiago Souza a Forward?", False)])
def test_yes_no_on_a_class_like_value(football: KnowledgeBase, onnx: None, question: str, value: bool) -> None:
    answer = _ask(football, question)
    assert (answer.form, answer.value) == ("boolean", value)


def test_yes_no_on_a_value_the_node_lacks_is_no(dishes: KnowledgeBase, onnx: None) -> None:
    assert (_ask(dishes, "Is Tiramisu vegetarian?").value, _ask(dishes, "Is Mole Negro vegetarian?").value) == \
        (True, False)


# -- relation words ----------------------------------------------------------------------------------------


def test_the_main_verb_alone_says_no_round_trip(football: KnowledgeBase, onnx: None) -> None:
    """"what position does X **play**": not the positions of X's club-mates (``plays for`` out and back)."""
    answer = _ask(football, "What position does Marco Alvarez play?")
    assert answer.meta.offline.chosen[0].reading == "'Marco Alvarez' -position->"
    assert _exact(answer) == {"Forward"}


def test_a_type_named_by_the_focus_is_the_answer_type(dishes: KnowledgeBase, onnx: None) -> None:
    """"which **dishes**": Dish is a type of the KB, so the answer is dishes, not their cuisines (which
    the word "dishes" resembles)."""
    answer = _ask(dishes, "Which dishes did Lucia Flores create?")
    assert _exact(answer) == {"Mole Negro", "Tostada"}


def test_a_bare_surname_links_to_the_person(football: KnowledgeBase, onnx: None) -> None:
    index = LabelIndex.for_kb(football)
    assert index.ending_with("Haugen") == ["http://f.example/id/a"]
    assert index.ending_with("Haugen", limit=0) == []  # more nodes than the limit: no link
    answer = _ask(football, "Which club does Haugen play for?")
    assert [i.label for i in answer.items[:1]] == ["Fjord United"]


# -- forms on an unseen shape --------------------------------------------------------------------------------


def test_an_ordering_with_no_type_word_takes_the_value_s_subjects(football: KnowledgeBase, onnx: None) -> None:
    answer = _ask(football, "Who scored the most goals?")  # no person type in this KB
    assert answer.items[0].label == "Lars Haugen" and answer.items[0].source == "filtered"


def test_a_filter_figure_in_the_unit_the_kb_stores(football: KnowledgeBase, onnx: None) -> None:
    cue = detect_form("Which players cost more than 20 million?", [])
    assert (cue.filters[0].value, cue.filters[0].figure, cue.filters[0].unit) == ("20000000", "20", 1_000_000)
    answer = _ask(football, "Which players cost more than 20 million?")  # fees are stored in millions
    assert _exact(answer) == {"Lars Haugen", "Marco Alvarez"}


def test_have_more_noun_than_is_a_comparison(football: KnowledgeBase, onnx: None) -> None:
    answer = _ask(football, "Does Tiago Souza have more goals than Yuto Tanaka?")
    assert (answer.form, answer.value) == ("boolean", False)
    answer = _ask(football, "Does Lars Haugen have more goals than Marco Alvarez?")
    assert (answer.form, answer.value) == ("boolean", True)


def test_value_relations_read_the_data_once_per_generation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36: what ``value_relations`` samples from the data is kept with the generation, so a cold ask runs
    none of those queries; a damaged file is read anew."""
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.strategies.offline.form_triplets import ValueSamples, value_relations

    source = tmp_path / "films.ttl"
    source.write_text('@prefix e: <http://e/> .\ne:a a e:Film ; e:year 1999 ; e:budget "2500000" .\n'
                      'e:b a e:Film ; e:year 2001 ; e:budget "300" .\n')
    kb = ingest([source], kb="vals")

    def seen(found: list) -> list:  # type: ignore[type-arg]
        return sorted((v.iri, v.label, v.datatype, sorted(v.domains), v.numeric_text) for v in found)

    first = seen(value_relations(kb))
    assert [(iri.rsplit("/", 1)[1], kind, number) for iri, _, kind, _, number in first] == \
        [("budget", "http://www.w3.org/2001/XMLSchema#string", True),
         ("year", "http://www.w3.org/2001/XMLSchema#integer", False)]
    path = kb.artifacts_dir("offline") / ValueSamples.FILE  # type: ignore[operator]
    assert path.is_file()

    def no_query(*_: object, **__: object) -> None:
        raise AssertionError("value_relations ran a query")

    with open_kb("vals") as again:
        monkeypatch.setattr(again, "query", no_query)
        assert seen(value_relations(again)) == first
    path.write_text("{not json")
    with open_kb("vals") as damaged:
        assert seen(value_relations(damaged)) == first
        assert ValueSamples.stored(damaged).values.keys() == {iri for iri, *_ in first}  # written again
