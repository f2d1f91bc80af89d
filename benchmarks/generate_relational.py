"""Write a synthetic knowledge graph shaped like a database mapped to RDF (N-Triples).

Rows are typed by their table's IRI, columns are properties with literal values, foreign keys are object
properties to the referenced row, and nothing has an ``rdfs:label`` (as the Spider4SPARQL graphs and the
issue-36 graph: ``<…/customer/id=17> <…/customer#last_name> "Okafor"``).  Four tables::

    country   name, code, continent                                   (50 rows)
    customer  first_name, last_name, email, birth_year, city, ref-country   (n rows)
    product   name, category, price                                   (n / 4 rows)
    orders    ref-customer, ref-product, quantity, order_date, status (2 n rows)

About 20 triples per customer row: ``--triples 40000`` gives ~2,000 customers and ~6,500 rows in all.
Output is deterministic for a given size and written line by line (constant memory)::

    .venv/bin/python benchmarks/generate_relational.py --triples 40000 --out /tmp/rel40k.nt

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "g.nt"
>>> stats = write_relational(40, out)
>>> stats.triples == out.read_text().count("\\n") and stats.rows == 50 + 40 + 10 + 80
True
>>> "rdf-schema#label" in out.read_text()
False
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BASE = "http://bench.example/db/"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
XSD = "http://www.w3.org/2001/XMLSchema#"
#: triples per customer row, its share of products and orders included (for ``--triples``)
TRIPLES_PER_CUSTOMER = 20
COUNTRIES = ("Argentina", "Australia", "Austria", "Belgium", "Brazil", "Canada", "Chile", "China", "Colombia",
             "Croatia", "Czechia", "Denmark", "Egypt", "Estonia", "Finland", "France", "Germany", "Ghana",
             "Greece", "Hungary", "Iceland", "India", "Indonesia", "Ireland", "Israel", "Italy", "Japan",
             "Kenya", "Latvia", "Mexico", "Morocco", "Nepal", "Netherlands", "Nigeria", "Norway", "Peru",
             "Poland", "Portugal", "Romania", "Senegal", "Slovakia", "Spain", "Sweden", "Switzerland",
             "Thailand", "Tunisia", "Turkey", "Uruguay", "Vietnam", "Zambia")
CONTINENTS = ("Europe", "Asia", "Africa", "America", "Oceania")
FIRST = ("Ada", "Amir", "Ana", "Bea", "Bruno", "Chen", "Chloe", "Dara", "David", "Elif", "Emil", "Fatima",
         "Felix", "Grace", "Hana", "Hugo", "Ines", "Ivan", "Jonas", "Kai", "Lena", "Liam", "Maya", "Mateo",
         "Nia", "Noah", "Olga", "Omar", "Paula", "Priya", "Quinn", "Rosa", "Sami", "Sofia", "Tariq", "Uma",
         "Vera", "Wei", "Yara", "Zoe")
LAST = ("Abbott", "Bauer", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova", "Jensen",
        "Kowalski", "Larsen", "Moreau", "Nakamura", "Okafor", "Petrov", "Quispe", "Rossi", "Sato", "Tanaka",
        "Usman", "Varga", "Weber", "Xu", "Yilmaz", "Zhang", "Novak", "Silva", "Horvat", "Mensah")
CITIES = ("Harbor Town", "Riverside", "Hillcrest", "Lakeview", "Stonebridge", "Maplewood", "Eastport",
          "Westfield", "Northgate", "Southend", "Oakridge", "Pinehurst")
ADJECTIVES = ("Red", "Blue", "Quiet", "Rapid", "Solid", "Bright", "Smart", "Tiny", "Grand", "Swift")
NOUNS = ("Kettle", "Lamp", "Chair", "Desk", "Bottle", "Backpack", "Speaker", "Blender", "Jacket", "Clock")
CATEGORIES = ("kitchen", "furniture", "outdoor", "electronics", "clothing", "office")
STATUSES = ("shipped", "delivered", "pending", "returned")


@dataclass
class RelationalStats:
    """What was written: rows and triples."""

    rows: int = 0
    triples: int = 0


def _row(table: str, number: int) -> str:
    return f"<{BASE}{table}/id={number}>"


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _typed(value: object, kind: str) -> str:
    return f'"{value}"^^<{XSD}{kind}>'


def _rows(customers: int, rng: random.Random) -> Iterator[tuple[str, str, list[tuple[str, str]]]]:
    """(table, row IRI, [(column, value term)]) for every row: countries, customers, products, orders."""
    for number, name in enumerate(COUNTRIES):
        yield "country", _row("country", number), [
            ("name", _string(name)), ("code", _string(name[:3].upper())),
            ("continent", _string(CONTINENTS[number % len(CONTINENTS)]))]
    for number in range(customers):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        yield "customer", _row("customer", number), [
            ("first_name", _string(first)), ("last_name", _string(f"{last}{'' if number < 1200 else number}")),
            ("email", _string(f"{first.lower()}.{last.lower()}{number}@example.org")),
            ("birth_year", _typed(rng.randint(1940, 2005), "integer")),
            ("city", _string(rng.choice(CITIES))), ("ref-country", _row("country", rng.randrange(len(COUNTRIES))))]
    products = max(1, customers // 4)
    for number in range(products):
        yield "product", _row("product", number), [
            ("name", _string(f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} {number}")),
            ("category", _string(rng.choice(CATEGORIES))), ("price", _typed(f"{rng.uniform(2, 500):.2f}", "decimal"))]
    for number in range(2 * customers):
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        yield "orders", _row("orders", number), [
            ("ref-customer", _row("customer", rng.randrange(customers))),
            ("ref-product", _row("product", rng.randrange(products))),
            ("quantity", _typed(rng.randint(1, 9), "integer")),
            ("order_date", _typed(f"2024-{month:02d}-{day:02d}", "date")), ("status", _string(rng.choice(STATUSES)))]


def write_relational(customers: int, out: Path, *, seed: int = 0) -> RelationalStats:
    """Write the graph with ``customers`` customer rows to ``out``; same size and seed → the same bytes."""
    stats = RelationalStats()
    rng = random.Random(seed)
    with out.open("w", encoding="utf-8") as handle:
        for table, row, cells in _rows(customers, rng):
            handle.write(f"{row} {RDF_TYPE} <{BASE}{table}> .\n")
            for column, value in cells:
                handle.write(f"{row} <{BASE}{table}#{column}> {value} .\n")
            stats.rows += 1
            stats.triples += 1 + len(cells)
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--triples", type=int, default=40_000, help="about how many triples")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    stats = write_relational(max(1, args.triples // TRIPLES_PER_CUSTOMER), args.out, seed=args.seed)
    print(f"{stats.triples:,} triples, {stats.rows:,} rows → {args.out}")


if __name__ == "__main__":
    main()
