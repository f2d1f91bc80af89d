"""Relation paths: bounded enumeration on the KB, verbalisation from the ontology, scoring."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlqa.embed.embedders import get_embedder
from sparqlqa.english import ScoringSettings
from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.schema import RelationInfo
from sparqlqa.strategies.offline.paths import (
    EXPAND_SAMPLE,
    Hop,
    RelationPath,
    Unit,
    enumerate_paths,
    is_zigzag,
    segmentations,
)
from sparqlqa.strategies.offline.question import Focus, question_focus, question_spans
from sparqlqa.strategies.offline.scoring import QuestionScorer, RelationVectors
from sparqlqa.strategies.offline.verbalise import relation_texts

EX = "https://example.org/movies/"
REL = f"{EX}rel/"


def test_paths_both_directions_up_to_three_hops(movies_kb: KnowledgeBase) -> None:
    paths = {p.arrows(): p for p in enumerate_paths(movies_kb, f"{EX}ridley_scott")}
    assert "<-directed_by-" in paths
    assert "<-directed_by--starred_actors->" in paths
    assert "<-directed_by--starred_actors-><-starred_actors-" in paths
    assert paths["<-directed_by-"].count == 3  # Alien, Blade Runner, Gladiator
    assert max(len(p.hops) for p in paths.values()) == 3
    assert not any("type" in a or "label" in a for a in paths)  # only relations are walked
    assert len(enumerate_paths(movies_kb, f"{EX}ridley_scott", max_hops=1)) == 1


def test_hubs_are_expanded_from_a_bounded_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f"m{i}|has_genre|Drama\nm{i}|directed_by|d{i}\n" for i in range(EXPAND_SAMPLE * 3)]
    source = tmp_path / "kb.txt"
    source.write_text("".join(lines), encoding="utf-8")
    kb = ingest([source], kb="hub", format="triples", options={"sep": "|"})
    queries: list[str] = []
    original = kb.query
    monkeypatch.setattr(kb, "query", lambda q: queries.append(str(q)) or original(q))
    start = kb.manifest.base_iri + "entity/Drama"
    paths = {p.arrows(): p for p in enumerate_paths(kb, start)}
    assert "<-has_genre--directed_by->" in paths
    assert len(queries) == 3  # one aggregate query per level, whatever the fan-out
    assert all(q.count("(1 ") <= EXPAND_SAMPLE for q in queries)


def test_relation_texts_come_from_the_ontology(movies_kb: KnowledgeBase) -> None:
    starred = movies_kb.schema.relation(f"{REL}starred_actors")
    assert starred is not None
    texts = relation_texts(starred)
    assert texts[:3] == ["starred actors", "actor", "starring"]  # label, then aliases
    assert "acted" in texts  # then word forms: the verb of "actor"


@pytest.mark.parametrize(("name", "forms"), [
    ("release_year", ["year"]),  # the head noun of a compound
    ("starred_actors", ["act", "acted"]),  # not "actors": a participle leads the name
    ("directed_by", ["directer", "director", "direct", "directed"]),
    ("place_of_birth", []),  # "of": no single word says it
    ("father", []),  # -er nouns get no verb
])
def test_word_forms_of_relation_names(name: str, forms: list[str]) -> None:
    from sparqlqa.strategies.offline.verbalise import relation_word_forms

    assert relation_word_forms(name.replace("_", " ")) == forms


def test_round_trips_read_as_shared_values_or_co_agents() -> None:
    from sparqlqa.strategies.offline.verbalise import round_trip_texts

    texts = relation_texts(RelationInfo(iri=f"{REL}starred_actors", label="starred actors", count=1))
    assert "same starred actors" in round_trip_texts(texts, forward_first=True)
    inward = round_trip_texts(texts, forward_first=False)
    assert "acted together with" in inward and "co-starred actors" in inward
    assert "same acted" not in round_trip_texts(texts, forward_first=True)  # verbs are not shared values


def test_only_relations_between_things_of_one_kind_repeat(tmp_path: Path) -> None:
    """parents → parents is a grandparent; release year → release year only crosses a film called "1941"."""
    from sparqlqa.strategies.offline.paths import SelfChaining, same_kind, self_chaining_hops

    lines = [f"p{i}|parents|p{i + 1}\np{i}|gender|g{i % 2}\np{i}|nationality|n{i % 3}\n" for i in range(30)]
    lines += [f"m{i}|release_year|{1930 + i}\nm{i}|directed_by|d{i % 4}\nm{i}|has_genre|x{i % 3}\n"
              for i in range(30)]
    lines.append("1941|release_year|1979\n1941|directed_by|d0\n")  # a film titled like a year
    source = tmp_path / "kb.txt"
    source.write_text("".join(lines), encoding="utf-8")
    kb = ingest([source], kb="kinds", format="triples", options={"sep": "|"})
    rel = kb.manifest.base_iri + "relation/"
    relations = [rel + name for name in ("parents", "gender", "nationality", "release_year", "directed_by",
                                         "has_genre")]
    assert same_kind(kb, rel + "parents", relations) > 0.9
    assert same_kind(kb, rel + "release_year", relations) < 0.1
    chaining = self_chaining_hops(kb)
    assert chaining == {Hop(rel + "parents", True), Hop(rel + "parents", False)}
    film = kb.manifest.base_iri + "entity/m11"
    assert "-release_year->-release_year->" in {p.arrows() for p in enumerate_paths(kb, film)}
    assert "-release_year->-release_year->" not in {p.arrows() for p in enumerate_paths(kb, film, chaining=chaining)}
    lazy = SelfChaining(kb)
    assert Hop(rel + "parents") in lazy and Hop(rel + "release_year") not in lazy
    assert set(lazy._known) == {rel + "parents", rel + "release_year"}  # only what was asked


def test_segmentations_offer_round_trips() -> None:
    out, back = Hop("r", forward=True), Hop("r", forward=False)
    cuts = segmentations((out, back, Hop("s")))
    assert (Unit("r", "round-trip-out"), Unit("s", "forward")) in cuts
    assert (Unit("r", "forward"), Unit("r", "backward"), Unit("s", "forward")) in cuts
    assert segmentations((back, out))[-1] == (Unit("r", "round-trip-in"),)


def _scores(kb: KnowledgeBase, question: str, start: str) -> dict[str, float]:
    scorer = QuestionScorer(question, RelationVectors(kb.schema, get_embedder("fake")), ScoringSettings())
    return {p.arrows(): scorer.score(p).score for p in enumerate_paths(kb, start)}


def test_every_hop_must_be_said(movies_kb: KnowledgeBase) -> None:
    one = _scores(movies_kb, "Which movies were directed by X?", f"{EX}ridley_scott")
    assert max(one, key=lambda a: one[a]) == "<-directed_by-"
    two = _scores(movies_kb, "Who is starring in the movies directed by X?", f"{EX}ridley_scott")
    assert max(two, key=lambda a: two[a]) == "<-directed_by--starred_actors->"


def test_better_labels_are_the_lever(tmp_path: Path) -> None:
    """A bare relation name says little; an ontology label and alias make the question match."""
    source = tmp_path / "kb.txt"
    source.write_text("Alien|dir|Ridley Scott\nAlien|cast|Sigourney Weaver\n", encoding="utf-8")
    question = "Which movies were directed by X?"
    bare = ingest([source], kb="bare", format="triples", options={"sep": "|"})
    plain = _scores(bare, question, bare.manifest.base_iri + "entity/Ridley%20Scott")
    ontology = tmp_path / "labels.ttl"
    base = "https://sparqlqa.dev/kb/labelled/relation/"
    ontology.write_text(f'<{base}dir> <http://www.w3.org/2004/02/skos/core#altLabel> "directed by", '
                        '"director" .\n', encoding="utf-8")
    better = ingest([source], kb="labelled", format="triples", options={"sep": "|"}, ontologies=[ontology])
    labelled = _scores(better, question, better.manifest.base_iri + "entity/Ridley%20Scott")
    assert labelled["<-dir-"] > plain["<-dir-"] + 0.2


def test_zigzags_are_not_enumerated(movies_kb: KnowledgeBase) -> None:
    paths = {p.arrows() for p in enumerate_paths(movies_kb, f"{EX}alien")}
    assert "-directed_by-><-directed_by-" in paths  # "movies with the same director"
    assert "-directed_by-><-directed_by--starred_actors->" in paths
    assert "-directed_by-><-directed_by--directed_by->" not in paths  # re-reaches Alien's director
    assert is_zigzag((Hop("r"), Hop("r", forward=False), Hop("r")))
    assert not is_zigzag((Hop("r"), Hop("r", forward=False), Hop("s")))
    assert not is_zigzag((Hop("r"), Hop("r"), Hop("r")))  # spouse of spouse of spouse is a real question


@pytest.mark.parametrize(("question", "focus"), [
    ("what were the release years of the films that share actors with X", Focus(0, "release years")),
    ("the films acted by X were released in which years", Focus(8, "years")),
    ("who directed the movies that X acted in", Focus(0, None)),
    ("when was X released", Focus(0, "date")),
    ("what did X write", Focus(0, None)),
    ("which movies directed by X starred Y", Focus(0, "movies")),
    ("X 's darling 's sex ?", Focus(None, None)),  # no wh-word: no focus, and the name is no phrase
    ("the nation of X 's couple ?", Focus(None, "nation")),
    ("who is the director that directed X", Focus(0, "director")),  # "who is the <noun>"
    ("who are the actors in X", Focus(0, "actors")),
    ("who is X married to", Focus(0, None)),
    ("who is listed as director of X", Focus(0, None)),
])
def test_question_focus(question: str, focus: Focus) -> None:
    assert question_focus(question, "X") == focus


def test_relation_names_also_say_their_values() -> None:
    """"has genre" is asked as "genre", "directed by" as "director", "written by" as "writer"."""
    def texts(name: str) -> list[str]:
        return relation_texts(RelationInfo(iri=f"{REL}{name}", label=name.replace("_", " "), count=1))

    assert "genre" in texts("has_genre")
    assert "director" in texts("directed_by")
    assert "writer" in texts("written_by")
    assert texts("spouse") == ["spouse"]


def test_possessive_chains_mark_their_nouns() -> None:
    spans = {s.text: s.in_chain for s in question_spans("what is the nation of X 's darling ?", "X", 2)}
    assert spans == {"nation": True, "darling": True}
    free = {s.text: s.in_chain for s in question_spans("who directed the film X", "X", 1)}
    assert free == {"directed": False, "film": False}


def test_cheap_hops_in_a_possessive_chain(movies_kb: KnowledgeBase) -> None:
    """A chain noun pays ``chain_hop_cost``, a free word ``hop_cost``."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    settings = ScoringSettings(hop_cost=0.3, chain_hop_cost=0.0)
    unit = (Unit(f"{REL}has_genre", "forward"),)
    chained, _ = QuestionScorer("the genre of X", vectors, settings).align(unit)
    free, _ = QuestionScorer("X genre", vectors, settings).align(unit)
    assert chained == pytest.approx(free + 0.3, abs=1e-6)


def test_hops_are_said_from_the_name_outwards(movies_kb: KnowledgeBase) -> None:
    """"**who directed** the movies that X **starred** in": the hop said next to the name comes first."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    scorer = QuestionScorer("who directed the movies that X starred in", vectors, ScoringSettings())
    starred, directed = Unit(f"{REL}starred_actors", "backward"), Unit(f"{REL}directed_by", "forward")
    right, _ = scorer.align((starred, directed), ordered=True)
    wrong, _ = scorer.align((directed, starred), ordered=True)
    assert right == pytest.approx(wrong + ScoringSettings().order_penalty, abs=0.02)
    assert scorer.align((directed, starred))[0] == pytest.approx(right, abs=1e-6)  # unordered: no penalty


def test_the_answer_type_picks_the_direction(movies_kb: KnowledgeBase) -> None:
    """"which genre …" asks for the *value* of has_genre: ending forward along it gains, backward loses."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    genre = f"{REL}has_genre"
    forward = RelationPath(f"{EX}alien", (Hop(genre),))
    backward = RelationPath(f"{EX}alien", (Hop(genre), Hop(genre, forward=False)))
    scorer = QuestionScorer("which genre is X", vectors, ScoringSettings())
    assert scorer.type_score(forward) > 0 > scorer.type_score(backward)
    neutral = QuestionScorer("which movies star X", vectors, ScoringSettings())
    assert neutral.type_score(forward) == neutral.type_score(backward) == 0.0


def test_the_final_verb_of_a_do_question_goes_with_the_wh_word(movies_kb: KnowledgeBase) -> None:
    """"where **did** the daughter of X **die**": the final verb is the hop nearest the answer, though it
    is said next to the name."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    genre, starred = Unit(f"{REL}has_genre", "forward"), Unit(f"{REL}starred_actors", "forward")
    for question, inverted in [("where did the genre of X starred actors", False),
                               ("where the genre of X starred actors", True)]:
        scorer = QuestionScorer(question, vectors, ScoringSettings())
        ordered = scorer.align((genre, starred), ordered=True)[0]
        free, spans = scorer.align((genre, starred))
        assert [scorer.spans[i].text for i in spans] == ["genre", "starred actors"]
        assert ordered == pytest.approx(free - (ScoringSettings().order_penalty if inverted else 0.0), abs=1e-6)


def test_one_phrase_says_a_relation_once(movies_kb: KnowledgeBase) -> None:
    """Two units of one relation may not split a phrase ("**religious** **belief**") between them."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    genre = f"{REL}has_genre"
    scorer = QuestionScorer("X genre kind", vectors, ScoringSettings())
    assert scorer.align((Unit(genre, "forward"), Unit(genre, "backward")))[0] == float("-inf")
    assert scorer.align((Unit(genre, "forward"), Unit(f"{REL}directed_by", "forward")))[0] > float("-inf")
    apart = QuestionScorer("X genre of the kind", vectors, ScoringSettings())
    assert apart.align((Unit(genre, "forward"), Unit(genre, "backward")))[0] > float("-inf")


def test_grand_words_say_one_hop_twice(movies_kb: KnowledgeBase) -> None:
    """"grandparent": ``-parents-> -parents->`` as one unit, said only by a "grand-" word."""
    r = Hop("r")
    assert (Unit("r", "twice-forward"),) in segmentations((r, r))
    assert (Unit("r", "twice-forward"),) not in segmentations((r, Hop("s")))
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    twice = (Unit(f"{REL}directed_by", "twice-forward"),)
    assert QuestionScorer("the granddirector of X", vectors, ScoringSettings()).align(twice)[0] > float("-inf")
    assert QuestionScorer("the director of X", vectors, ScoringSettings()).align(twice)[0] == float("-inf")


def test_a_shared_neighbour_cue_asks_for_a_round_trip(movies_kb: KnowledgeBase) -> None:
    """"who starred **together** with X": a reading without an out-and-back loses ``round_trip_cue``."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    starred = f"{REL}starred_actors"
    plain = RelationPath(f"{EX}ridley_scott", (Hop(starred, forward=False),))
    trip = RelationPath(f"{EX}ridley_scott", (Hop(starred, forward=False), Hop(starred)))
    cued = QuestionScorer("who starred together with X", vectors, ScoringSettings())
    bare = QuestionScorer("who starred with X", vectors, ScoringSettings())
    cost = ScoringSettings().round_trip_cue
    with_cue = cued.score(plain)
    assert "no round trip for 'together'" in with_cue.parts
    assert with_cue.score == pytest.approx(bare.score(RelationPath(plain.start, plain.hops)).score - cost, abs=1e-6)
    assert "no round trip for 'together'" not in cued.score(trip).parts


def test_without_a_wh_word_the_chain_after_the_name_comes_first(movies_kb: KnowledgeBase) -> None:
    """"the director of X 's genre": hops are said after the name first (genre), then before it (director)."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    genre, directed = Unit(f"{REL}has_genre", "forward"), Unit(f"{REL}directed_by", "forward")
    scorer = QuestionScorer("the directed by of X 's genre", vectors, ScoringSettings())
    right, spans = scorer.align((genre, directed), ordered=True)
    assert [scorer.spans[i].text for i in spans] == ["genre", "directed"]
    wrong, _ = scorer.align((directed, genre), ordered=True)
    assert right == pytest.approx(wrong + ScoringSettings().order_penalty, abs=1e-6)


def test_a_typed_kb_says_where_a_hop_ends(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.strategies.offline.scoring import end_type_shares

    directed = movies_kb.schema.relation(f"{REL}directed_by")
    assert directed is not None
    assert end_type_shares(directed, forward=True) == {f"{EX}Person": 1.0}
    assert end_type_shares(directed, forward=False) == {f"{EX}Movie": 1.0}
    assert end_type_shares(RelationInfo(iri="r", label="r", count=1), forward=True) == {}


def test_the_answer_class_of_a_typed_kb(movies_kb: KnowledgeBase) -> None:
    """"who …" asks for a person, "which movies …" for movies: paths ending at that type gain, others lose."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake"))
    starred, genre = Hop(f"{REL}starred_actors"), Hop(f"{REL}has_genre")
    to_person = RelationPath(f"{EX}alien", (starred,))
    to_genre = RelationPath(f"{EX}alien", (genre,))
    to_movie = RelationPath(f"{EX}alien", (genre, Hop(genre.relation, forward=False)))
    who = QuestionScorer("who starred in X", vectors, ScoringSettings())
    assert who.class_phrase == "person"
    assert who.class_score(to_person) > 0 > who.class_score(to_genre)
    which = QuestionScorer("which movie has the genre of X", vectors, ScoringSettings())
    assert which.class_score(to_movie) > 0 > which.class_score(to_person)
    assert "answer class ~ 'person'" in who.score(to_person).parts


def test_an_untyped_kb_has_no_answer_class(tmp_path: Path) -> None:
    source = tmp_path / "kb.txt"
    source.write_text("a|knows|b\nb|knows|c\n", encoding="utf-8")
    kb = ingest([source], kb="untyped", format="triples", options={"sep": "|"})
    vectors = RelationVectors(kb.schema, get_embedder("fake"))
    path = RelationPath(kb.manifest.base_iri + "entity/a", (Hop(kb.manifest.base_iri + "relation/knows"),))
    assert QuestionScorer("who does X know", vectors, ScoringSettings()).class_score(path) == 0.0


def test_a_kind_of_noun_is_one_span_asking_for_its_category() -> None:
    spans = {s.text: s.category_of for s in question_spans("what sort of movie is X", "X", 3)}
    assert spans == {"movie": None, "sort of movie": "movie"}  # "sort" alone says nothing here
    kept = {s.text: s.category_of for s in question_spans("what kind of X is it", "X", 3)}
    assert kept == {"kind": None}  # no noun after "of": "kind" stays a plain word


def test_a_kind_of_noun_is_read_as_relation_of_noun(movies_kb: KnowledgeBase) -> None:
    """"kind of film" is compared with "genre of film", not with "genre" (which shares no word with it)."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake:4096"))
    scorer = QuestionScorer("what kind of film is X", vectors, ScoringSettings())
    at = next(i for i, s in enumerate(scorer.spans) if s.category_of == "film")
    genre = Unit(f"{REL}has_genre", "forward")
    expected = vectors.embedder.embed(["kind of film", "genre of film"])
    assert scorer._raw_row(genre)[at] == pytest.approx(float(expected[0] @ expected[1]), abs=1e-5)
    bare = vectors.embedder.embed(["kind of film", "genre"])
    assert float(bare[0] @ bare[1]) < 0.05 < scorer._raw_row(genre)[at]


@pytest.mark.parametrize(("question", "verb"), [
    ("where does X 's mother come from", "come"),
    ("what movie did X write the story for", "write"),
    ("what does X 's father do", None),  # no content word: nothing to demand
    ("who directed X", None),  # no do-support
    ("what X films did he do", None),  # the wh-word after the name? no: before, but no verb after the name
])
def test_the_main_verb_of_a_do_question(question: str, verb: str | None) -> None:
    from sparqlqa.strategies.offline.question import main_verb

    words = [w.casefold() for w in question.replace("'", "").split()]
    found = main_verb(words, question_focus(question, "X").position, question_focus(question, "X").phrase,
                      words.index("x"))
    assert (words[found] if found is not None else None) == verb


def test_a_do_question_must_say_its_main_verb(movies_kb: KnowledgeBase) -> None:
    """"what did X 's director **act** in": stopping at the director leaves the verb unsaid and loses
    ``unsaid_verb``; going on to the films the director acted in does not."""
    vectors = RelationVectors(movies_kb.schema, get_embedder("fake:4096"))
    directed, starred = Hop(f"{REL}directed_by"), Hop(f"{REL}starred_actors", forward=False)
    scorer = QuestionScorer("what did X 's director act in", vectors, ScoringSettings())
    stop = scorer.score(RelationPath(f"{EX}alien", (directed,)))
    go_on = scorer.score(RelationPath(f"{EX}alien", (directed, starred)))
    assert stop.parts["main verb unsaid"] == -ScoringSettings().unsaid_verb
    assert "main verb unsaid" not in go_on.parts
    plain = QuestionScorer("who is X 's director", vectors, ScoringSettings())
    assert "main verb unsaid" not in plain.score(RelationPath(f"{EX}alien", (directed,))).parts
