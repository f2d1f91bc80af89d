"""Write a synthetic typed knowledge graph as N-Triples (and optionally ``head|rel|tail`` lines).

The graph looks like a STaRK-PRIME-style KB: ``types`` node types, ``relations``
relations each with a fixed domain and range type, and for every node an
``rdf:type``, an ``rdfs:label`` (unique: ``"<type> <n>"``) and an ``sqa:text``
document.  Edge ends are skewed towards low node numbers (a few hubs, a long
tail), like real graphs.  Output is deterministic for a given seed and written
in chunks, so memory stays constant however many edges are asked for.

Reproduce the benchmark graphs::

    .venv/bin/python benchmarks/generate_graph.py --nodes 16000 --edges 952000 --out /tmp/g1m.nt
    .venv/bin/python benchmarks/generate_graph.py --nodes 129000 --edges 8000000 \\
        --types 10 --relations 18 --out /tmp/prime.nt --delimited /tmp/prime.psv

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "g.nt"
>>> stats = write_graph(GraphSpec(nodes=20, edges=50, types=3, relations=4), out)
>>> stats.triples == 20 * 3 + 50 + stats.schema_triples
True
>>> out.read_text().count("\\n") == stats.triples
True
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

import numpy as np

BASE = "https://sparqlqa.dev/kb/bench/"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
RDFS_LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
RDFS_DOMAIN = "<http://www.w3.org/2000/01/rdf-schema#domain>"
RDFS_RANGE = "<http://www.w3.org/2000/01/rdf-schema#range>"
OWL_CLASS = "<http://www.w3.org/2002/07/owl#Class>"
OWL_OBJECT_PROPERTY = "<http://www.w3.org/2002/07/owl#ObjectProperty>"
SQA_TEXT = "<https://sparqlqa.dev/ns#text>"

TYPE_NAMES = ("gene_protein", "drug", "disease", "effect_phenotype", "anatomy", "pathway",
              "biological_process", "molecular_function", "cellular_component", "exposure")
RELATION_WORDS = ("interacts_with", "targets", "indication", "contraindication", "side_effect",
                  "associated_with", "expressed_in", "part_of", "parent_child", "phenotype_present",
                  "linked_to", "carrier", "enzyme", "transporter", "off_label_use", "synergistic",
                  "absent_in", "regulates")
WORDS = ("alpha", "beta", "kinase", "receptor", "binding", "signal", "membrane", "chronic", "acute",
         "cell", "tissue", "response", "pathway", "inhibitor", "factor", "domain", "protein",
         "syndrome", "growth", "immune", "metabolic", "neural", "cardiac", "hepatic", "renal")
CHUNK = 100_000


@dataclass(frozen=True)
class GraphSpec:
    """Size and shape of the graph; same spec and seed → byte-identical files."""

    nodes: int = 16_000
    edges: int = 952_000
    types: int = 10
    relations: int = 18
    seed: int = 0
    text_words: int = 12


@dataclass
class GraphStats:
    """What was written."""

    nodes: int
    edges: int
    triples: int
    schema_triples: int
    nt_bytes: int
    delimited_lines: int = 0


def type_name(index: int) -> str:
    """Name of node type ``index`` (PRIME-like names first, then ``type_N``)."""
    return TYPE_NAMES[index] if index < len(TYPE_NAMES) else f"type_{index}"


def relation_name(index: int) -> str:
    """Name of relation ``index`` (unique even beyond the word list)."""
    word = RELATION_WORDS[index % len(RELATION_WORDS)]
    return word if index < len(RELATION_WORDS) else f"{word}_{index}"


def type_blocks(spec: GraphSpec) -> np.ndarray:
    """``starts`` with ``types + 1`` entries: type ``t`` owns node ids ``starts[t]:starts[t+1]``."""
    per, extra = divmod(spec.nodes, spec.types)
    sizes = [per + (1 if t < extra else 0) for t in range(spec.types)]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def relation_ends(spec: GraphSpec) -> tuple[np.ndarray, np.ndarray]:
    """Domain and range type of each relation (deterministic from the seed)."""
    rng = np.random.default_rng([spec.seed, 1])
    domains = np.arange(spec.relations) % spec.types
    ranges = rng.integers(0, spec.types, size=spec.relations)
    return domains.astype(np.int64), ranges.astype(np.int64)


def node_label(node: int, starts: np.ndarray) -> str:
    """The unique label of ``node``: its type name and its number within the type."""
    t = int(np.searchsorted(starts, node, side="right")) - 1
    return f"{type_name(t).replace('_', ' ')} {node - int(starts[t])}"


def _schema_lines(spec: GraphSpec) -> list[str]:
    """Class and property declarations (labels, domain, range)."""
    domains, ranges = relation_ends(spec)
    lines = []
    for t in range(spec.types):
        name = type_name(t)
        lines.append(f"<{BASE}type/{name}> {RDF_TYPE} {OWL_CLASS} .\n")
        lines.append(f'<{BASE}type/{name}> {RDFS_LABEL} "{name.replace("_", " ")}" .\n')
    for r in range(spec.relations):
        rel = f"<{BASE}relation/{relation_name(r)}>"
        lines.append(f"{rel} {RDF_TYPE} {OWL_OBJECT_PROPERTY} .\n")
        lines.append(f'{rel} {RDFS_LABEL} "{relation_name(r).replace("_", " ")}" .\n')
        lines.append(f"{rel} {RDFS_DOMAIN} <{BASE}type/{type_name(int(domains[r]))}> .\n")
        lines.append(f"{rel} {RDFS_RANGE} <{BASE}type/{type_name(int(ranges[r]))}> .\n")
    return lines


def _node_chunks(spec: GraphSpec) -> Iterator[str]:
    """N-Triples for the nodes (type, label, text), one string per chunk."""
    starts = type_blocks(spec)
    rng = np.random.default_rng([spec.seed, 2])
    for first in range(0, spec.nodes, CHUNK):
        ids = range(first, min(first + CHUNK, spec.nodes))
        words = rng.integers(0, len(WORDS), size=(len(ids), spec.text_words))
        out = []
        for node, row in zip(ids, words, strict=True):
            t = int(np.searchsorted(starts, node, side="right")) - 1
            label = node_label(node, starts)
            subject = f"<{BASE}node/{node}>"
            text = f"{label} is a {type_name(t)}: " + " ".join(WORDS[w] for w in row) + "."
            out.append(f"{subject} {RDF_TYPE} <{BASE}type/{type_name(t)}> .\n"
                       f'{subject} {RDFS_LABEL} "{label}" .\n'
                       f'{subject} {SQA_TEXT} "{text}" .\n')
        yield "".join(out)


def edge_chunks(spec: GraphSpec) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(relation, head, tail)`` arrays, ``CHUNK`` edges at a time."""
    starts = type_blocks(spec)
    sizes = np.diff(starts)
    domains, ranges = relation_ends(spec)
    rng = np.random.default_rng([spec.seed, 3])
    for first in range(0, spec.edges, CHUNK):
        n = min(CHUNK, spec.edges - first)
        rel = rng.integers(0, spec.relations, size=n)
        dom, rng_t = domains[rel], ranges[rel]
        head = starts[dom] + (sizes[dom] * rng.random(n) ** 2).astype(np.int64)
        tail = starts[rng_t] + (sizes[rng_t] * rng.random(n) ** 1.5).astype(np.int64)
        yield rel, head, tail


def _edge_nt(spec: GraphSpec) -> Iterator[str]:
    rel_iris = [f"<{BASE}relation/{relation_name(r)}>" for r in range(spec.relations)]
    for rel, head, tail in edge_chunks(spec):
        yield "".join(f"<{BASE}node/{h}> {rel_iris[r]} <{BASE}node/{t}> .\n"
                      for r, h, t in zip(rel.tolist(), head.tolist(), tail.tolist(), strict=True))


def _edge_delimited(spec: GraphSpec, sep: str) -> Iterator[str]:
    starts = type_blocks(spec)
    labels = [node_label(n, starts) for n in range(spec.nodes)]  # one short string per node
    names = [relation_name(r) for r in range(spec.relations)]
    for rel, head, tail in edge_chunks(spec):
        yield "".join(f"{labels[h]}{sep}{names[r]}{sep}{labels[t]}\n"
                      for r, h, t in zip(rel.tolist(), head.tolist(), tail.tolist(), strict=True))


def _write_chunks(handle: IO[str], chunks: Iterator[str]) -> int:
    lines = 0
    for chunk in chunks:
        handle.write(chunk)
        lines += chunk.count("\n")
    return lines


def write_graph(spec: GraphSpec, out: Path, delimited: Path | None = None, sep: str = "|") -> GraphStats:
    """Write the N-Triples file ``out`` (and the ``head|rel|tail`` file ``delimited``)."""
    if spec.types < 1 or spec.relations < 1 or spec.nodes < spec.types:
        raise ValueError("need at least one type, one relation and one node per type")
    schema = _schema_lines(spec)
    with out.open("w", encoding="utf-8", buffering=1 << 20) as handle:
        handle.writelines(schema)
        triples = len(schema) + _write_chunks(handle, _node_chunks(spec))
        triples += _write_chunks(handle, _edge_nt(spec))
    stats = GraphStats(nodes=spec.nodes, edges=spec.edges, triples=triples,
                       schema_triples=len(schema), nt_bytes=out.stat().st_size)
    if delimited is not None:
        with delimited.open("w", encoding="utf-8", buffering=1 << 20) as handle:
            stats.delimited_lines = _write_chunks(handle, _edge_delimited(spec, sep))
    return stats


def main(argv: list[str] | None = None) -> None:
    """Command line: print the stats as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=GraphSpec.nodes)
    parser.add_argument("--edges", type=int, default=GraphSpec.edges)
    parser.add_argument("--types", type=int, default=GraphSpec.types)
    parser.add_argument("--relations", type=int, default=GraphSpec.relations)
    parser.add_argument("--seed", type=int, default=GraphSpec.seed)
    parser.add_argument("--text-words", type=int, default=GraphSpec.text_words)
    parser.add_argument("--out", type=Path, required=True, help="N-Triples file to write")
    parser.add_argument("--delimited", type=Path, help="also write head|rel|tail lines here")
    parser.add_argument("--sep", default="|")
    args = parser.parse_args(argv)
    spec = GraphSpec(nodes=args.nodes, edges=args.edges, types=args.types, relations=args.relations,
                     seed=args.seed, text_words=args.text_words)
    print(json.dumps(asdict(write_graph(spec, args.out, args.delimited, args.sep))))


if __name__ == "__main__":
    main()
