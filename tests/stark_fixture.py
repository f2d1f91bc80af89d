"""Tiny STaRK SKBs in the exact published ``processed`` layout (PRIME, MAG, Amazon).

``build_skb(dest, dataset, zipped=False)`` writes ``dest/processed/{node_info.pkl, edge_index.pt,
edge_types.pt, node_types.pt, edge_type_dict.pkl, node_type_dict.pkl}`` (Amazon: also its full graph
under ``processed/cache/brand-category-color/``, as ``AmazonSKB`` reads it) and returns ``dest``, or
zips the same tree to ``dest/processed.zip`` and returns that.  Field names and value shapes follow
STaRK's processing code; the values are made up.  Needs torch (to write ``.pt`` files).

Node ids worth knowing (answer ids in eval fixtures):

* PRIME: 0 TP53 (gene/protein), 1 MDM2, 2 Nutlin-3 (drug), 3 Li-Fraumeni syndrome (disease),
  4 Sarcoma (effect/phenotype), 5 pathway, 6 liver (anatomy), 7 apoptotic process, 8 DNA binding,
  9 nucleus, 10 Benzene (exposure); edges stored in both directions, as PrimeKG's kg.csv.
* MAG: 0-1 authors, 2 institution, 3 field of study, 4-5 papers.
* Amazon: 0-2 products, 3-4 brands, 5-6 categories, 7 color.
"""

from __future__ import annotations

import pickle
import shutil
import zipfile
from pathlib import Path
from typing import Any

PRIME_NODE_TYPES = {0: "disease", 1: "gene/protein", 2: "molecular_function", 3: "drug", 4: "pathway",
                    5: "anatomy", 6: "effect/phenotype", 7: "biological_process", 8: "cellular_component",
                    9: "exposure"}
PRIME_EDGE_TYPES = dict(enumerate([
    "ppi", "carrier", "enzyme", "target", "transporter", "contraindication", "indication", "off-label use",
    "synergistic interaction", "associated with", "parent-child", "phenotype absent", "phenotype present",
    "side effect", "interacts with", "linked to", "expression present", "expression absent",
]))
MAG_NODE_TYPES = {0: "author", 1: "institution", 2: "field_of_study", 3: "paper"}
MAG_EDGE_TYPES = {0: "author___affiliated_with___institution", 1: "paper___cites___paper",
                  2: "paper___has_topic___field_of_study", 3: "author___writes___paper"}
AMAZON_NODE_TYPES = {0: "product", 1: "brand", 2: "category", 3: "color"}
AMAZON_EDGE_TYPES = {0: "also_buy", 1: "also_view", 2: "has_brand", 3: "has_category", 4: "has_color"}


def _prime_nodes() -> dict[int, dict[str, Any]]:
    tp53_details = {
        "_id": "7157", "name": "TP53", "type_of_gene": "protein-coding", "alias": ["p53", "LFS1"],
        "other_names": "", "genomic_pos": [{"chr": "17", "start": 7661779, "end": 7687538, "strand": -1}],
        "generif": [{"pubmed": 1, "text": "TP53 mutations drive tumours"}, {"pubmed": 2, "text": "p53 binds DNA"}],
        "interpro": {"desc": "p53 DNA-binding domain", "id": "IPR011615"},
        "summary": "This gene encodes a tumor suppressor protein.", "entrezgene_id": "7157",
    }
    return {
        0: {"id": 7157, "type": "gene/protein", "name": "TP53", "source": "NCBI", "details": tp53_details},
        1: {"id": 4193, "type": "gene/protein", "name": "MDM2", "source": "NCBI",
            "details": {"name": "MDM2", "alias": "HDM2", "summary": "E3 ubiquitin ligase of p53."}},
        2: {"id": "DB12345", "type": "drug", "name": "Nutlin-3", "source": "DrugBank",
            "details": {"description": "A small-molecule MDM2 inhibitor.", "half_life": float("nan"),
                        "indication": "Investigational, for cancers with wild-type TP53.", "atc_1": ""}},
        3: {"id": "14125", "type": "disease", "name": "Li-Fraumeni syndrome", "source": "MONDO",
            "details": {"mondo_id": 14125, "mondo_name": "Li-Fraumeni syndrome",
                        "mondo_definition": "A cancer predisposition syndrome.", "umls_description": "nan"}},
        4: {"id": "HP:0100242", "type": "effect/phenotype", "name": "Sarcoma", "source": "HPO"},
        5: {"id": "R-HSA-3700989", "type": "pathway", "name": "Transcriptional Regulation by TP53",
            "source": "REACTOME", "details": {"displayName": "Transcriptional Regulation by TP53",
                                              "speciesName": "Homo sapiens"}},
        6: {"id": "UBERON:0002107", "type": "anatomy", "name": "liver", "source": "UBERON"},
        7: {"id": "GO:0006915", "type": "biological_process", "name": "apoptotic process", "source": "GO"},
        8: {"id": "GO:0003677", "type": "molecular_function", "name": "DNA binding", "source": "GO"},
        9: {"id": "GO:0005634", "type": "cellular_component", "name": "nucleus", "source": "GO"},
        10: {"id": "D001554", "type": "exposure", "name": "Benzene", "source": "CTD"},
    }


PRIME_NODE_TYPE_IDS = [1, 1, 3, 0, 6, 4, 5, 7, 2, 8, 9]
#: (x, relation, y) once; written in both directions like PrimeKG's kg.csv
PRIME_EDGES = [(0, "ppi", 1), (2, "target", 1), (3, "associated with", 0), (3, "phenotype present", 4),
               (5, "interacts with", 0), (6, "expression present", 0), (7, "interacts with", 0),
               (8, "interacts with", 0), (9, "interacts with", 0), (10, "linked to", 3), (2, "side effect", 4)]


def _mag_nodes() -> dict[int, dict[str, Any]]:
    def paper(title: str, abstract: str, date: Any, venue: Any, journal: Any, mag_id: int) -> dict[str, Any]:
        return {"id": mag_id % 1000, "mag_id": mag_id, "Rank": 15000, "DocType": "Conference",
                "OriginalTitle": title.upper(), "Year": 2019, "Date": date, "Publisher": -1, "JournalId": -1,
                "ReferenceCount": 30, "CitationCount": 12, "OriginalVenue": venue, "JournalDisplayName": journal,
                "ConferenceSeriesDisplayName": -1, "ConferenceInstancesDisplayName": -1, "type": "paper",
                "title": title, "abstract": abstract}

    return {
        0: {"id": 10, "mag_id": 2100, "Rank": 9000, "DisplayName": "Jure Leskovec", "LastKnownAffiliationId": 97018004,
            "PaperCount": 300, "CitationCount": 50000, "type": "author"},
        1: {"id": 11, "mag_id": 2101, "Rank": 9500, "DisplayName": "Team-1", "LastKnownAffiliationId": -1,
            "PaperCount": 7, "CitationCount": -1, "type": "author"},
        2: {"id": 3, "mag_id": 97018004, "Rank": 100, "DisplayName": "Stanford University", "PaperCount": 1000,
            "CitationCount": -1, "type": "institution"},
        3: {"id": 4, "mag_id": 119857082, "Rank": 500, "DisplayName": "Machine learning", "Level": 1,
            "PaperCount": 5, "CitationCount": 10, "type": "field_of_study"},
        4: paper("Graph neural networks", "We study GNNs.\r\n", "2019-05-01", "KDD", -1, 3001),
        5: paper("Semi-structured retrieval", "A benchmark.", -1, -1, "JMLR", 3002),
    }


MAG_NODE_TYPE_IDS = [0, 0, 1, 2, 3, 3]
#: stored once, in the direction the relation name reads
MAG_EDGES = [(0, "author___affiliated_with___institution", 2), (4, "paper___cites___paper", 5),
             (4, "paper___has_topic___field_of_study", 3), (5, "paper___has_topic___field_of_study", 3),
             (0, "author___writes___paper", 4), (1, "author___writes___paper", 4)]


def _review(summary: str, text: str, vote: Any) -> dict[str, Any]:
    return {"reviewerID": "A" + summary[:3].upper(), "summary": summary, "style": {"Color:": " Black"},
            "reviewText": text, "vote": vote, "overall": 5.0, "verified": True, "reviewTime": "05 4, 2016"}


def _amazon_products() -> dict[int, dict[str, Any]]:
    return {
        0: {"review": [_review("Great", "Love them", "3"), _review("Too small", "Runs small", float("nan")),
                       _review("Fits great", "Perfect fit", "1,204")],
            "qa": [{"questionType": "yes/no", "answerType": "N", "question": "Waterproof?", "answer": "No",
                    "answerTime": "Jan 1, 2015"}],
            "asin": "B00TRAIL01", "title": "Trail running shoe", "global_category": "Sports and Outdoors",
            "price": "$59.99", "brand": "Salomon", "feature": ["Lightweight mesh", "ASIN: B00TRAIL01", "",
                                                              "Grippy sole"],
            "rank": "12,345 in Sports", "details": {"product_dimensions": "12 x 8 x 5 inches ; 1.2 pounds"},
            "description": ["Built for trails.", "Breathable."], "category": ["running"], "color": ["black"]},
        1: {"review": [], "qa": [], "asin": "B00TRAIL02", "title": "Trail running shoe v2",
            "global_category": "Sports and Outdoors", "price": "$69.99", "brand": "Salomon", "feature": [],
            "rank": "", "details": {"dictionary": {"product_dimensions": "12 x 8 x 5 inches ; 1.1 pounds"}},
            "description": [], "category": ["running"]},
        2: {"review": [], "qa": [], "asin": "B00YOGA001", "title": "Yoga mat", "global_category": "Sports and Outdoors",
            "price": "$20.00", "feature": [], "rank": "", "details": {}, "description": ["Non-slip."],
            "category": ["yoga"]},
    }


AMAZON_NODE_TYPE_IDS = [0, 0, 0, 1, 1, 2, 2, 3]
#: product lists first (also_buy, also_view), then the meta links STaRK adds
AMAZON_EDGES = [(0, "also_buy", 1), (0, "also_view", 1), (1, "also_view", 0), (0, "also_view", 2),
                (0, "has_brand", 3), (1, "has_brand", 3), (0, "has_category", 5), (1, "has_category", 5),
                (2, "has_category", 6), (0, "has_color", 7)]


def _amazon_nodes() -> dict[int, dict[str, Any]]:
    nodes = _amazon_products()
    nodes.update({3: {"brand_name": "Salomon"}, 4: {"brand_name": "Gaiam"}, 5: {"category_name": "running"},
                  6: {"category_name": "yoga"}, 7: {"color_name": "black"}})
    return nodes


def _write(folder: Path, node_info: dict[int, Any], node_types: list[int] | None,
           edges: list[tuple[int, str, int]], node_dict: dict[int, str] | None, edge_dict: dict[int, str]) -> None:
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    ids = {name: key for key, name in edge_dict.items()}
    files: dict[str, Any] = {
        "node_info": node_info, "edge_type_dict": edge_dict,
        "edge_index": torch.LongTensor([[h for h, _, _ in edges], [t for _, _, t in edges]]),
        "edge_types": torch.LongTensor([ids[r] for _, r, _ in edges]),
    }
    if node_types is not None and node_dict is not None:
        files.update(node_types=torch.LongTensor(node_types), node_type_dict=node_dict)
    for name, value in files.items():
        if isinstance(value, torch.Tensor):
            torch.save(value, folder / f"{name}.pt")
        else:
            with (folder / f"{name}.pkl").open("wb") as handle:
                pickle.dump(value, handle)


def _zip(root: Path) -> Path:
    target = root / "processed.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((root / "processed").rglob("*")):
            archive.write(path, path.relative_to(root).as_posix() + ("/" if path.is_dir() else ""))
    shutil.rmtree(root / "processed")
    return target


def build_skb(dest: Path, dataset: str, zipped: bool = False) -> Path:
    """Write the tiny ``dataset`` SKB (prime|mag|amazon) under ``dest``; return ``dest`` or the zip."""
    dest = Path(dest)
    processed = dest / "processed"
    if dataset == "prime":
        both = PRIME_EDGES + [(t, r, h) for h, r, t in PRIME_EDGES]
        _write(processed, _prime_nodes(), PRIME_NODE_TYPE_IDS, both, PRIME_NODE_TYPES, PRIME_EDGE_TYPES)
    elif dataset == "mag":
        _write(processed, _mag_nodes(), MAG_NODE_TYPE_IDS, MAG_EDGES, MAG_NODE_TYPES, MAG_EDGE_TYPES)
    elif dataset == "amazon":
        products = [e for e in AMAZON_EDGES if e[1] in ("also_buy", "also_view")]
        _write(processed, _amazon_products(), None, products, None, {0: "also_buy", 1: "also_view"})
        _write(processed / "cache" / "brand-category-color", _amazon_nodes(), AMAZON_NODE_TYPE_IDS,
               AMAZON_EDGES, AMAZON_NODE_TYPES, AMAZON_EDGE_TYPES)
    else:
        raise ValueError(f"unknown STaRK dataset {dataset!r}")
    return _zip(dest) if zipped else dest
