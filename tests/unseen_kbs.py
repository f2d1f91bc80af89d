"""Small knowledge bases in shapes the project was never tuned on, written by the tests.

- :func:`write_worldcup` — a WorldCup2014-style KB (``head TAB rel TAB tail``, five relations and their
  ``_inverse`` twins, names such as ``Alan_PULIDO``) and a question file in the WC2014 shape
  (``question TAB one example answer TAB path TAB full/answer/set``).
- :func:`write_schema_org` — a Turtle KB as a user writes it (schema.org and FOAF names, unnamed cities, dates,
  numbers, blank-node addresses) and JSONL questions of ten plain-English shapes, half asking for values.
- :func:`write_pathquestion_large` — a PathQuestion-Large-style KB with ~400 relations and 2- and 3-hop
  questions (``question TAB answer(alt/alt/) TAB path``).

Everything is deterministic (a seeded ``random.Random``), so a test that reads a figure off these is
reproducible.
"""

from __future__ import annotations

import random
from pathlib import Path

COUNTRIES = ["Mexico", "Netherlands", "Brazil", "Germany", "Spain"]
CLUBS = {"Mexico": ["Club_America", "Tigres_UANL"], "Netherlands": ["AFC_Ajax", "PSV_Eindhoven"],
         "Brazil": ["Santos_FC"], "Germany": ["FC_Bayern_Munich"], "Spain": ["Real_Madrid", "FC_Barcelona"]}
POSITIONS = ["Goalkeeper", "Defender", "Midfielder", "Forward"]
SURNAMES = ["PULIDO", "PERALTA", "OCHOA", "MARQUEZ", "ROBBEN", "SNEIJDER", "KUYT", "NEYMAR", "MULLER",
            "NEUER", "LAHM", "RAMOS", "XAVI", "INIESTA", "CASILLAS", "DE_JONG", "BLIND", "OSCAR", "HULK",
            "KLOSE"]
FIRST = ["Alan", "Oribe", "Guillermo", "Rafael", "Arjen", "Wesley", "Dirk", "Junior", "Thomas", "Manuel",
         "Philipp", "Sergio", "Andres", "Iker", "Nigel", "Daley", "Luiz", "Givanildo", "Miroslav", "Pepe"]
#: relation → (how a question says it forward, the answer's kind)
WC_RELATIONS = ["plays_in_club", "plays_for_country", "plays_position", "wears_number", "is_aged"]


def worldcup_triples(seed: int = 0) -> list[tuple[str, str, str]]:
    """Players with club, country, position, shirt number and age, and every fact's ``_inverse`` twin."""
    rng = random.Random(seed)
    facts: list[tuple[str, str, str]] = []
    for i, (first, last) in enumerate(zip(FIRST, SURNAMES)):
        player = f"{first}_{last}"
        country = COUNTRIES[i % len(COUNTRIES)]
        facts += [(player, "plays_for_country", country),
                  (player, "plays_in_club", rng.choice(CLUBS[country])),
                  (player, "plays_position", POSITIONS[i % len(POSITIONS)]),
                  (player, "wears_number", str(rng.randint(1, 23))),
                  (player, "is_aged", str(rng.randint(19, 36)))]
    return facts + [(t, f"{r}_inverse", h) for h, r, t in facts]


def worldcup_questions(facts: list[tuple[str, str, str]]) -> list[tuple[str, str, str, list[str]]]:
    """(question, example answer, path, answer set) in the WC2014 style, including many-answer ones."""
    forward = [(h, r, t) for h, r, t in facts if not r.endswith("_inverse")]
    by = {(h, r): t for h, r, t in forward}
    players = sorted({h for h, _, _ in forward})
    out: list[tuple[str, str, str, list[str]]] = []
    for p in players[:8]:
        out.append((f"which country does {p} play for ?", by[(p, "plays_for_country")],
                    f"{p}#plays_for_country#{by[(p, 'plays_for_country')]}", [by[(p, "plays_for_country")]]))
        out.append((f"{p} plays in which club ?", by[(p, "plays_in_club")],
                    f"{p}#plays_in_club#{by[(p, 'plays_in_club')]}", [by[(p, "plays_in_club")]]))
        out.append((f"what position does {p} play ?", by[(p, "plays_position")],
                    f"{p}#plays_position#{by[(p, 'plays_position')]}", [by[(p, "plays_position")]]))
    for position in POSITIONS:
        for country in COUNTRIES[:3]:
            answers = [p for p in players if by[(p, "plays_position")] == position
                       and by[(p, "plays_for_country")] == country]
            if answers:
                out.append((f"name a player who plays at {position} from {country} ?", answers[0],
                            f"{answers[0]}#plays_position#{position}", answers))
    for country, clubs in CLUBS.items():
        for club in clubs:
            answers = [p for p in players if by[(p, "plays_in_club")] == club
                       and by[(p, "plays_for_country")] == country]
            if answers:
                out.append((f"which player in {club} is from {country} ?", answers[0],
                            f"{answers[0]}#plays_in_club#{club}", answers))
    return out


def write_worldcup(folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """Write ``wc-kb.txt`` and ``wc-questions.txt`` under ``folder``; returns both paths."""
    facts = worldcup_triples(seed)
    kb = folder / "wc-kb.txt"
    kb.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in facts), "utf-8")
    questions = folder / "wc-questions.txt"
    questions.write_text("".join(f"{q}\t{a}\t{path}\t{'/'.join(answers)}\n"
                                 for q, a, path, answers in worldcup_questions(facts)), "utf-8")
    return kb, questions


def pql_relation_names(count: int = 400) -> list[str]:
    """``count`` distinct Freebase-like relation names (``people.person.place_of_birth`` shapes)."""
    domains = ["people", "film", "music", "sports", "location", "book", "tv", "award", "business", "education"]
    kinds = ["person", "work", "team", "place", "event", "group", "topic", "organization"]
    props = ["place_of_birth", "nationality", "spouse", "children", "parents", "profession", "religion",
             "gender", "ethnicity", "language", "genre", "director", "producer", "founder", "capital",
             "currency", "headquarters", "employer", "school", "award_won", "member_of", "located_in",
             "part_of", "sibling", "cause_of_death", "place_of_death", "influenced_by", "team", "position",
             "release_year", "composer", "author", "publisher", "subject", "owner", "leader", "country",
             "contains", "partner", "instrument"]
    names = [f"{d}.{k}.{p}" for d in domains for k in kinds for p in props]
    return random.Random(1).sample(names, count)


def write_pathquestion_large(folder: Path, seed: int = 0, entities: int = 300,
                             relations: int = 400) -> tuple[Path, Path]:
    """Write ``pql-kb.txt`` (entities × ~relations random edges) and ``pql-questions.txt`` (2- and
    3-hop chains walked in the KB, asked as "<rel> of <rel> of X ?")."""
    rng = random.Random(seed)
    names = pql_relation_names(relations)
    nodes = [f"{rng.choice(FIRST)}_{rng.choice(SURNAMES).title()}_{i}" for i in range(entities)]
    edges: dict[str, list[tuple[str, str]]] = {}
    facts = []
    for relation in names:
        for _ in range(3):
            head, tail = rng.sample(nodes, 2)
            facts.append((head, relation, tail))
            edges.setdefault(head, []).append((relation, tail))
    kb = folder / "pql-kb.txt"
    kb.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in facts), "utf-8")
    lines = []
    for start in sorted(edges)[:60]:
        node, path, said = start, [start], []
        for _ in range(rng.choice([2, 3])):
            if node not in edges:
                break
            relation, node = rng.choice(edges[node])
            path += [relation, node]
            said.append(relation.rsplit(".", 1)[-1].replace("_", " "))
        if len(said) >= 2:
            words = " of ".join(reversed(said))
            lines.append(f"what is the {words} of {start} ?\t{node}({node}/)\t{'#'.join(path)}#<end>#{node}\n")
    questions = folder / "pql-questions.txt"
    questions.write_text("".join(lines), "utf-8")
    return kb, questions


# -- a user's own RDF: schema.org / FOAF names, literal values, blank nodes, unnamed nodes ----------

PEOPLE = ["Alice Smith", "Bob Jones", "Carol King", "David Brown", "Erin Clark", "Frank Lewis", "Grace Hall",
          "Henry Young", "Irene Walker", "Jack Wright", "Karen Scott", "Liam Green", "Mona Baker", "Nina Adams",
          "Oscar Nelson", "Paula Hill", "Quinn Ramirez", "Rosa Campbell", "Sam Mitchell", "Tina Roberts"]
COMPANIES = ["ACME Corp", "Globex", "Initech", "Umbrella Labs", "Stark Works", "Wayne Foods"]
CITIES = ["Berlin", "Paris", "Madrid", "Lisbon", "Vienna"]  # never named: only their IRIs say who they are
EX = "http://example.org/"


def _iri(kind: str, name: str) -> str:
    return f"<{EX}{kind}/{name.replace(' ', '_')}>"


def schema_org_kb(seed: int = 0) -> tuple[str, dict[str, dict[str, object]]]:
    """A Turtle KB as users write it, and the facts behind it (for gold answers): people named with
    ``schema:name`` (some also ``@de``), companies with ``foaf:name``, cities with no name at all,
    birth dates (``xsd:date``), employee counts, founding years, postal addresses as blank nodes."""
    rng = random.Random(seed)
    lines = ["@prefix schema: <http://schema.org/> .", "@prefix foaf: <http://xmlns.com/foaf/0.1/> .",
             "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> ."]
    facts: dict[str, dict[str, object]] = {}
    for number, company in enumerate(COMPANIES):
        city, size, year = CITIES[number % len(CITIES)], rng.randint(10, 5000), rng.randint(1890, 2015)
        facts[company] = {"city": city, "employees": str(size), "founded": str(year)}
        lines.append(f'{_iri("org", company)} a schema:Organization ; foaf:name "{company}" ; '
                     f'schema:location {_iri("city", city)} ; schema:numberOfEmployees {size} ; '
                     f'schema:foundingDate "{year}"^^xsd:gYear .')
    for number, person in enumerate(PEOPLE):
        company = COMPANIES[rng.randrange(len(COMPANIES))]
        born = f"{rng.randint(1950, 2000)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        friend = PEOPLE[(number + 1 + rng.randrange(len(PEOPLE) - 1)) % len(PEOPLE)]
        postcode = f"{rng.randint(10000, 99999)}"
        facts[person] = {"company": company, "born": born, "friend": friend, "postcode": postcode}
        german = f' , "{person.split()[0]} (de)"@de' if number % 4 == 0 else ""
        lines.append(f'{_iri("person", person)} a schema:Person ; schema:name "{person}"@en{german} ; '
                     f'schema:birthDate "{born}"^^xsd:date ; schema:worksFor {_iri("org", company)} ; '
                     f'schema:knows {_iri("person", friend)} ; '
                     f'schema:address [ schema:postalCode "{postcode}" ] .')
    return "\n".join(lines) + "\n", facts


def schema_org_questions(facts: dict[str, dict[str, object]]) -> list[tuple[str, list[str]]]:
    """Questions in plain English with their gold answers (labels or values), ten shapes."""
    questions: list[tuple[str, list[str]]] = []
    for person in PEOPLE:
        fact = facts[person]
        company = str(fact["company"])
        staff = [p for p in PEOPLE if facts[p]["company"] == company]
        questions += [
            (f"When was {person} born?", [str(fact["born"])]),
            (f"What is the birth date of {person}?", [str(fact["born"])]),
            (f"Which company does {person} work for?", [company]),
            (f"Who works for {company}?", staff),
            (f"How many employees does {company} have?", [str(facts[company]["employees"])]),
            (f"In which city is the employer of {person} located?", [str(facts[company]["city"])]),
            (f"When was the company {person} works for founded?", [str(facts[company]["founded"])]),
            (f"What is the postal code of {person}?", [str(fact["postcode"])]),
            (f"Who does {person} know?", [str(fact["friend"])]),
            (f"Where is {company} located?", [str(facts[company]["city"])]),
        ]
    return questions


def write_schema_org(folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """``people.ttl`` and ``questions.jsonl`` (``{"id", "question", "answers"}``) in ``folder``."""
    import json

    text, facts = schema_org_kb(seed)
    kb_file = folder / "people.ttl"
    kb_file.write_text(text, "utf-8")
    questions = folder / "questions.jsonl"
    rows = [json.dumps({"id": str(n), "question": q, "answers": a})
            for n, (q, a) in enumerate(schema_org_questions(facts))]
    questions.write_text("\n".join(rows) + "\n", "utf-8")
    return kb_file, questions
