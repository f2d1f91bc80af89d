"""STaRK SKBs (PRIME, MAG, Amazon) ingested from tiny fixtures in the published ``processed`` layout."""

from __future__ import annotations

import pickle
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pyoxigraph import NamedNode, RdfFormat, parse
from pyoxigraph import Store as OxStore

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sparqlqa.errors import IngestError, MissingExtraError  # noqa: E402
from sparqlqa.ingest import ingest  # noqa: E402
from sparqlqa.ingest.base import IngestTarget, detect_format  # noqa: E402
from sparqlqa.ingest.stark import (  # noqa: E402
    Adjacency,
    DocumentBuilder,
    StarkSKB,
    compact_text,
    download_skb,
    open_layout,
    read_skb,
)
from sparqlqa.kb.knowledge_base import KnowledgeBase, open_kb  # noqa: E402
from sparqlqa.kb.ontologies import ontology_path  # noqa: E402
from sparqlqa.kb.vocab import OWL, RDF, RDFS, SKOS, SQA  # noqa: E402
from tests.stark_fixture import build_skb  # noqa: E402

torch = pytest.importorskip("torch")

BASE = "https://sparqlqa.dev/kb/p/"
NS = {ds: f"https://sparqlqa.dev/stark/{ds}#" for ds in ("prime", "mag", "amazon")}

# What STaRK's get_doc_info(i, add_rel=True, compact=False) returns for one fixture node per dataset.
PRIME_TP53 = """- name: TP53
- type: gene/protein
- source: NCBI
- details:
  - name (gene name): TP53
  - type_of_gene (gene types): protein-coding
  - alias (other gene names): ['p53', 'LFS1']
  - genomic_pos (genomic position): {'chr': '17', 'start': 7661779, 'end': 7687538, 'strand': -1}
  - generif (PubMed text): TP53 mutations drive tumours; p53 binds DNA
  - interpro (protein family and classification information): ['p53 DNA-binding domain']
  - summary (protein summary text): This gene encodes a tumor suppressor protein.
- relations:

  ppi: {gene/protein: (MDM2),}
  associated_with: {disease: (Li-Fraumeni syndrome),}
  interacts_with: {cellular_component: (nucleus),molecular_function: (DNA binding),\
pathway: (Transcriptional Regulation by TP53),biological_process: (apoptotic process),}
  expression_present: {anatomy: (liver),}"""

MAG_PAPER = """ - paper title: Graph neural networks
 - abstract: We study GNNs.
 - publication date: 2019-05-01
 - venue: KDD
- relations:

paper cites paper: ("Semi-structured retrieval"),
paper has_topic field_of_study: (Machine learning),
author writes paper: (Jure Leskovec (Stanford University), Team-1),"""

AMAZON_PRODUCT = "".join(line + "\n" for line in [
    '- product: Trail running shoe',
    '- brand: Salomon',
    '- description: Built for trails. Breathable.',
    '- features: ',
    '#1: Lightweight mesh',
    '#4: Grippy sole',
    '- reviews: ',
    '#3:',
    'summary: Fits great',
    'text: "Perfect fit"',
    '#1:',
    'summary: Great',
    'text: "Love them"',
    '#2:',
    'summary: Too small',
    'text: "Runs small"',
    '- Q&A: ',
    '#1:',
    'question: "Waterproof?"',
    'answer: "No"',
    '- relations:',
    '  products also purchased: ',
    '#1: Trail running shoe v2',
    '  products also viewed: ',
    '#1: Yoga mat',
    '  brand: Salomon',
])

EXPECTED_TEXT: dict[str, tuple[int, str]] = {
    "prime": (0, PRIME_TP53), "mag": (4, MAG_PAPER), "amazon": (0, AMAZON_PRODUCT),
}
EXPECTED_TYPES = {
    "prime": {"gene/protein": 2, "disease": 1, "drug": 1, "effect/phenotype": 1, "pathway": 1, "anatomy": 1,
              "biological_process": 1, "molecular_function": 1, "cellular_component": 1, "exposure": 1},
    "mag": {"author": 2, "institution": 1, "field_of_study": 1, "paper": 2},
    "amazon": {"product": 3, "brand": 2, "category": 2, "color": 1},
}
#: (label, stored edges, one domain→range pair) per dataset
EXPECTED_RELATION = {
    "prime": ("protein protein interaction", 2, ("gene_protein", "gene_protein")),
    "mag": ("writes", 2, ("author", "paper")),
    "amazon": ("has category", 3, ("product", "category")),
}
EDGE_COUNTS = {"prime": 22, "mag": 6, "amazon": 10}


def values(kb: KnowledgeBase, subject: str, predicate: NamedNode) -> list[str]:
    rows = kb.query(f"SELECT ?v WHERE {{ {NamedNode(subject)} {predicate} ?v }}").rows
    return sorted(row[0].value for row in rows if row[0] is not None)


def memory_load(source: Path, **options: Any) -> tuple[OxStore, dict[str, Any]]:
    store = OxStore()
    report = StarkSKB(**options).load(source, IngestTarget(store=store, base_iri=BASE))
    return store, report


def node_text(store: OxStore, node: int) -> str:
    return next(store.quads_for_pattern(NamedNode(f"{BASE}node/{node}"), SQA.text, None)).object.value


# --- whole ingests ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kbs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeBase]:
    """Each fixture SKB ingested twice, once per test module (ingests are the slow part):
    ``<dataset>-folder`` from the unpacked folder with ``format="stark"``, ``<dataset>-zip`` from
    ``processed.zip`` with the format detected."""
    root = tmp_path_factory.mktemp("stark")
    built: dict[str, KnowledgeBase] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARQLQA_HOME", str(root / "home"))
        patch.setenv("SPARQLQA_EMBEDDER", "fake")
        for dataset in ("prime", "mag", "amazon"):
            folder = build_skb(root / f"{dataset}-folder", dataset)
            built[f"{dataset}-folder"] = ingest([folder], kb=f"{dataset}-folder", format="stark")
            archive = build_skb(root / f"{dataset}-zip", dataset, zipped=True)
            assert archive.name == "processed.zip" and not (archive.parent / "processed").exists()
            assert detect_format(archive) == "stark"
            built[f"{dataset}-zip"] = ingest([archive], kb=f"{dataset}-zip")
        built["home"] = root / "home"  # type: ignore[assignment]
    return built


def node(kb: KnowledgeBase, number: int) -> str:
    return f"{kb.manifest.base_iri}node/{number}"


@pytest.mark.parametrize("dataset", ["prime", "mag", "amazon"])
@pytest.mark.parametrize("layout", ["folder", "zip"])
def test_ingest_folder_and_zip(kbs: dict[str, KnowledgeBase], dataset: str, layout: str) -> None:
    kb = kbs[f"{dataset}-{layout}"]
    number, text = EXPECTED_TEXT[dataset]
    iri = node(kb, number)
    assert iri == f"https://sparqlqa.dev/kb/{dataset}-{layout}/node/{number}"
    assert values(kb, iri, SQA.text) == [text]
    assert values(kb, iri, SQA.sourceId) == [str(number)]
    (type_iri,) = values(kb, iri, RDF.type)
    assert type_iri.startswith(NS[dataset])
    assert values(kb, type_iri, RDFS.label) == values(kb, iri, SQA.nodeType)  # class label = STaRK's spelling
    assert {t.label: t.count for t in kb.schema.types} == EXPECTED_TYPES[dataset]
    label, count, (domain, range_) = EXPECTED_RELATION[dataset]
    relation = next(r for r in kb.schema.object_relations if r.label == label)
    assert relation.count == count
    assert (NS[dataset] + domain, NS[dataset] + range_, count) in relation.pairs
    assert relation.comment and relation.domain == NS[dataset] + domain
    report = kb.manifest.sources[0]
    assert (report["dataset"], report["edges"]) == (dataset, EDGE_COUNTS[dataset])
    assert "ontologies" not in report


def test_prime_labels_aliases_and_edges(kbs: dict[str, KnowledgeBase]) -> None:
    kb = kbs["prime-folder"]
    tp53, mdm2, ppi = node(kb, 0), node(kb, 1), NS["prime"] + "ppi"
    assert values(kb, tp53, RDFS.label) == ["TP53"]
    assert values(kb, tp53, SKOS.altLabel) == ["LFS1", "p53"]
    assert values(kb, mdm2, SKOS.altLabel) == ["HDM2"]
    assert values(kb, node(kb, 2), SKOS.altLabel) == []
    assert kb.query(f"ASK {{ {NamedNode(tp53)} {NamedNode(ppi)} {NamedNode(mdm2)} . "
                    f"{NamedNode(mdm2)} {NamedNode(ppi)} {NamedNode(tp53)} }}").boolean
    assert values(kb, ppi, RDF.type) == [OWL.ObjectProperty.value]
    assert "ppi" in values(kb, ppi, SKOS.altLabel)
    relation = kb.schema.relation("ppi")
    assert relation is not None and relation.label == "protein protein interaction"
    interacts = kb.schema.relation("interacts with")
    assert interacts is not None
    pairs = {(d, r) for d, r, _ in interacts.pairs}
    assert (NS["prime"] + "pathway", NS["prime"] + "gene_protein") in pairs
    assert (NS["prime"] + "gene_protein", NS["prime"] + "pathway") in pairs
    gene = kb.schema.type("gene/protein")
    assert gene is not None and gene.comment


def test_other_labels_and_aliases(kbs: dict[str, KnowledgeBase]) -> None:
    mag, amazon = kbs["mag-zip"], kbs["amazon-zip"]
    assert values(mag, node(mag, 4), RDFS.label) == ["Graph neural networks"]
    assert values(mag, node(mag, 4), SKOS.altLabel) == ["GRAPH NEURAL NETWORKS"]
    assert values(mag, node(mag, 1), RDFS.label) == ["Team-1"]
    assert values(amazon, node(amazon, 2), RDFS.label) == ["Yoga mat"]
    assert values(amazon, node(amazon, 7), RDFS.label) == ["black"]
    assert values(amazon, node(amazon, 7), SQA.text) == ["color name: black"]


def test_failed_reingest_leaves_kb_intact(kbs: dict[str, KnowledgeBase], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARQLQA_HOME", str(kbs["home"]))
    bad = build_skb(tmp_path / "bad", "prime")
    torch.save(torch.LongTensor([0, 1]), bad / "processed" / "edge_types.pt")
    with pytest.raises(IngestError, match=r"edge_types\.pt"):
        ingest([bad], kb="prime-folder", format="stark", replace=True)
    kb = open_kb("prime-folder")
    assert kb.manifest.generation == kbs["prime-folder"].manifest.generation
    assert values(kb, node(kb, 0), RDFS.label) == ["TP53"]


# --- documents -------------------------------------------------------------------------------


def builder(tmp_path: Path, dataset: str, **options: bool) -> DocumentBuilder:
    with open_layout(build_skb(tmp_path, dataset)) as files:
        return DocumentBuilder(read_skb(files), **options)


def test_mag_documents_follow_stark_per_type(tmp_path: Path) -> None:
    docs = builder(tmp_path, "mag")
    assert docs.document(0) == "- author name: Jure Leskovec\n- author paper count: 300\n" \
                               "- author citation count: 50000\n"
    assert docs.document(1) == "- author name: TeamUnknown\n- author paper count: 7\n"  # STaRK's '-1' replace
    assert docs.document(2) == " - institution: Stanford University\n- institution paper count: 1000\n"
    assert docs.document(5) == (' - paper title: Semi-structured retrieval\n - abstract: A benchmark.\n'
                                ' - journal: JMLR\n- relations:\n\npaper cites paper: ("Graph neural networks"),'
                                '\npaper has_topic field_of_study: (Machine learning),')


def test_amazon_documents_for_meta_nodes_and_dimensions(tmp_path: Path) -> None:
    docs = builder(tmp_path, "amazon")
    assert docs.document(3) == "brand name: Salomon"
    assert docs.document(7) == "color name: black"
    assert docs.document(1) == ("- product: Trail running shoe v2\n- brand: Salomon\n"
                                "- dimensions: 12 x 8 x 5 inches\n- weight: 1.1 pounds\n- relations:\n"
                                "  products also purchased: \n#1: Trail running shoe\n  brand: Salomon\n")


def test_text_options_add_rel_and_compact(tmp_path: Path) -> None:
    store, report = memory_load(build_skb(tmp_path, "prime"), add_rel="false", compact=True)
    assert report["text"] == {"add_rel": False, "compact": True}
    assert node_text(store, 1) == ("name: MDM2. type: gene/protein. source: NCBI. details: name (gene name): MDM2. "
                                   "alias (other gene names): HDM2. summary (protein summary text): "
                                   "E3 ubiquitin ligase of p53. ")
    assert compact_text(PRIME_TP53).startswith(
        "name: TP53. type: gene/protein. source: NCBI. details: name (gene name): TP53. ")
    assert "relations: . ppi: {gene/protein: (MDM2),}. associated_with" in compact_text(PRIME_TP53)


def test_adjacency_merges_multi_typed_pairs_like_stark() -> None:
    one_way = Adjacency(np.array([[0, 0, 1, 0], [1, 1, 0, 2]]), np.array([0, 1, 1, 1]), 3)
    assert one_way.by_type(0) == {0: [1], 1: [2]}  # floor(mean(0, 1, 1)) = 0 for the pair 0-1
    assert one_way.by_type(2) == {1: [0]}
    symmetric = Adjacency(np.array([[0, 1, 0, 1], [1, 0, 1, 0]]), np.array([0, 0, 1, 1]), 2)
    assert symmetric.by_type(1) == {0: [0], 1: [0]}  # already undirected: types kept as stored


# --- layouts and options ---------------------------------------------------------------------


def test_recognises_folders_zips_and_hf(tmp_path: Path) -> None:
    root = build_skb(tmp_path / "f", "prime")
    archive = build_skb(tmp_path / "z", "mag", zipped=True)
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as handle:
        handle.writestr("data/node_info.pkl", b"")
    for source in (root, root / "processed", archive, Path("hf:prime"), Path("hf:amazon")):
        assert StarkSKB.recognises(source), source
    for source in (tmp_path, other, Path("hf:wikidata"), tmp_path / "f" / "processed" / "node_info.pkl"):
        assert not StarkSKB.recognises(source), source


def test_mag_without_type_dicts_uses_stark_defaults(tmp_path: Path) -> None:
    root = build_skb(tmp_path, "mag")
    for name in ("node_type_dict.pkl", "edge_type_dict.pkl"):
        (root / "processed" / name).unlink()
    store, report = memory_load(root)
    assert report["dataset"] == "mag"
    assert node_text(store, 4) == MAG_PAPER


def test_amazon_product_only_layout(tmp_path: Path) -> None:
    root = build_skb(tmp_path, "amazon")
    for path in sorted((root / "processed" / "cache").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    store, report = memory_load(root)
    assert (report["dataset"], report["nodes"], report["edges"]) == ("amazon", 3, 4)
    assert node_text(store, 2) == "- product: Yoga mat\n- description: Non-slip.\n- relations:\n" \
                                  "  products also viewed: \n#1: Trail running shoe\n"


def test_types_missing_from_the_ontology_are_declared(tmp_path: Path) -> None:
    root = build_skb(tmp_path, "mag")
    renamed = {0: "author___affiliated_with___institution", 1: "paper___cites___paper",
               2: "paper___has_topic___field_of_study", 3: "author___co_wrote___paper"}
    _dump(root / "processed" / "edge_type_dict.pkl", renamed)
    store, _ = memory_load(root / "processed" / "node_info.pkl")  # the file itself names its folder
    prop = NamedNode(NS["mag"] + "author_co_wrote_paper")
    assert [q.object.value for q in store.quads_for_pattern(prop, RDFS.label, None)] == ["author___co_wrote___paper"]
    assert list(store.quads_for_pattern(prop, RDF.type, OWL.ObjectProperty))
    assert len(list(store.quads_for_pattern(None, prop, None))) == 2
    known = NamedNode(NS["mag"] + "paper_cites_paper")  # labelled by the bundled ontology, not here
    assert not list(store.quads_for_pattern(known, RDFS.label, None))


def test_unknown_dataset_option_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="unknown STaRK dataset 'wikidata'"):
        memory_load(build_skb(tmp_path, "prime"), dataset="wikidata")


# --- malformed input -------------------------------------------------------------------------


def _dump(path: Path, value: Any) -> None:
    path.write_bytes(pickle.dumps(value))


MALFORMED = {
    "missing edge types": (lambda p: (p / "edge_types.pt").unlink(), r"edge_types\.pt: missing file"),
    "node_info a list": (lambda p: _dump(p / "node_info.pkl", [{"name": "x"}]), r"node_info\.pkl: expected a dict"),
    "node ids with a gap": (lambda p: _dump(p / "node_info.pkl", {0: {}, 5: {}}), r"node_info\.pkl: node 5"),
    "unsafe pickle": (lambda p: _dump(p / "node_info.pkl", {0: print}), r"node_info\.pkl: .*refusing.*print"),
    "edge_index not [2, E]": (lambda p: torch.save(torch.zeros(3, 22, dtype=torch.long), p / "edge_index.pt"),
                              r"edge_index\.pt: expected shape \[2, E\]"),
    "edge types too short": (lambda p: torch.save(torch.LongTensor([0]), p / "edge_types.pt"),
                             r"edge_types\.pt: 1 edge types for 22 edges"),
    "edge type not in dict": (lambda p: torch.save(torch.full((22,), 99, dtype=torch.long), p / "edge_types.pt"),
                              r"edge_types\.pt: type ids \[99\] are not in edge_type_dict\.pkl"),
    "node type not in dict": (lambda p: torch.save(torch.full((11,), 42, dtype=torch.long), p / "node_types.pt"),
                              r"node_types\.pt: type ids \[42\] are not in node_type_dict\.pkl"),
    "node id out of range": (lambda p: torch.save(torch.full((2, 22), 11, dtype=torch.long), p / "edge_index.pt"),
                             r"edge_index\.pt: node ids outside 0\.\.10"),
    "not a tensor file": (lambda p: (p / "edge_index.pt").write_bytes(b"garbage"),
                          r"edge_index\.pt: not a readable torch tensor file"),
    "type dict wrong shape": (lambda p: _dump(p / "edge_type_dict.pkl", ["ppi"]),
                              r"edge_type_dict\.pkl: expected a dict"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_layout_names_the_file(tmp_path: Path, case: str) -> None:
    root = build_skb(tmp_path, "prime")
    damage, message = MALFORMED[case]
    damage(root / "processed")
    with pytest.raises(IngestError, match=message) as info:
        memory_load(root)
    assert str(root / "processed") in str(info.value)


def test_malformed_zip_names_the_member(tmp_path: Path) -> None:
    root = build_skb(tmp_path, "amazon")
    (root / "processed" / "cache" / "brand-category-color" / "node_types.pt").unlink()
    with zipfile.ZipFile(tmp_path / "processed.zip", "w") as archive:
        for path in (root / "processed").rglob("*.p*"):
            archive.write(path, path.relative_to(root).as_posix())
    with pytest.raises(IngestError, match=r"processed\.zip!processed/cache/brand-category-color/node_types\.pt"):
        memory_load(tmp_path / "processed.zip")


def test_missing_torch_names_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = build_skb(tmp_path, "mag")
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingExtraError, match="torch") as info:
        memory_load(root)
    assert info.value.hint == "install it with: pip install torch==2.13.0"


# --- download --------------------------------------------------------------------------------


def test_hf_download_error_is_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    calls: list[dict[str, Any]] = []

    def offline(**kwargs: Any) -> str:
        calls.append(kwargs)
        raise OSError("Network is unreachable")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    with pytest.raises(IngestError, match=r"hf:prime: could not download skb/primekg/processed\.zip") as info:
        memory_load(Path("hf:prime"))
    assert "Network is unreachable" in str(info.value) and "network" in (info.value.hint or "")
    assert calls[0]["repo_id"] == "snap-stanford/stark" and calls[0]["repo_type"] == "dataset"
    with pytest.raises(IngestError, match="could not download"):
        download_skb("mag", tmp_path)


def test_hf_source_downloads_then_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    archive = build_skb(tmp_path, "mag", zipped=True)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda **kwargs: str(archive))
    _, report = memory_load(Path("hf:mag"))
    assert (report["dataset"], report["nodes"]) == ("mag", 6)
    kb = ingest(["hf:mag"], kb="mag-from-hub")  # through the orchestrator: format detected, then downloaded
    assert kb.manifest.sources[0]["path"] == str(archive.resolve())


def test_missing_huggingface_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(MissingExtraError, match="huggingface_hub") as info:
        download_skb("amazon", tmp_path)
    assert "sparqlqa[stark]" in (info.value.hint or "")


# --- ontologies ------------------------------------------------------------------------------


@pytest.mark.parametrize(("dataset", "classes", "relations"), [("prime", 10, 18), ("mag", 4, 4), ("amazon", 4, 5)])
def test_ontology_declares_every_stark_type(dataset: str, classes: int, relations: int) -> None:
    store = OxStore()
    store.extend(parse(path=str(ontology_path(f"stark-{dataset}")), format=RdfFormat.TURTLE))

    def subjects(kind: NamedNode) -> set[str]:
        return {q.subject.value for q in store.quads_for_pattern(None, RDF.type, kind)}

    props, types = subjects(OWL.ObjectProperty), subjects(OWL.Class) - {NS[dataset] + "Node"}
    assert (len(types), len(props)) == (classes, relations)
    for term in props | types:
        for predicate in (RDFS.label, RDFS.comment):
            assert list(store.quads_for_pattern(NamedNode(term), predicate, None)), (term, predicate)
    for prop in props:
        for predicate in (RDFS.domain, RDFS.range):
            assert list(store.quads_for_pattern(NamedNode(prop), predicate, None)), (prop, predicate)
