"""Retrieval and KGQA metrics with STaRK's semantics, as pure functions.

A *ranking* is the list of answer items a strategy returned, best first.  Each
item is matched to a gold answer with :func:`_gold_key`: by IRI when the gold
set has IRIs, else by label (case-insensitively, ``_`` read as a space).
:func:`gold_ranks` gives the 1-based rank of every gold answer found; every
metric is computed from those ranks and the number of gold answers.

STaRK semantics (per query, then the mean over queries):

* ``hit@k`` = 1 if any gold answer is in the top k, else 0;
* ``recall@k`` = (gold answers in the top k) / (number of gold answers) — not
  ``min(k, #gold)``, so a query with 30 gold answers cannot reach recall@20 = 1;
* ``mrr`` = 1 / rank of the first gold answer over the full returned ranking;
* a gold answer the strategy did not return (outside its candidate set) is a
  miss: it still counts in the recall denominator, it never gets a rank;
* no gold answers or no predictions → every metric is 0.

MRR is computed over what the strategy returned (``k`` items).  STaRK scores
every node, so a gold answer at rank 150 adds 1/150 there and 0 here: our MRR
is a lower bound that differs by less than ``1/(k+1)`` per query.

**Tie rule** (STaRK's own code leaves ties to the sort implementation; ours is
deterministic): the ranking is the strategy's list order.  Inside a maximal run
of *consecutive* items with exactly equal scores, items are ordered by IRI
(Unicode code-point order).  Items without a score (``None`` or NaN) are
unscored candidates: they tie at the bottom, after every scored item, and are
also ordered by IRI.  So the result never depends on hash or thread order,
and a strategy cannot gain by listing tied gold answers first.

>>> items = [RankedItem("n/3", "c", 0.9), RankedItem("n/2", "b", 0.5), RankedItem("n/1", "a", 0.5)]
>>> ranked = apply_tie_rule(items)
>>> [i.iri for i in ranked]
['n/3', 'n/1', 'n/2']
>>> ranks = gold_ranks(ranked, gold_iris={"n/2", "n/9"})
>>> ranks
[3]
>>> hit_at(ranks, 1), hit_at(ranks, 5), recall_at(ranks, 20, n_gold=2), reciprocal_rank(ranks)
(0.0, 1.0, 0.5, 0.3333333333333333)
"""

from __future__ import annotations

__all__ = ["ALL_METRICS", "RETRIEVAL_METRICS", "RankedItem", "answer_f1", "answer_set", "apply_tie_rule", "gold_ranks",
           "hit_at", "mean", "normalize_label", "percentile", "question_metrics", "recall_at", "reciprocal_rank"]

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sparqlqa.stages.modes import ItemSource

#: metric names in report order, for retrieval (STaRK) and KGQA datasets
RETRIEVAL_METRICS: tuple[str, ...] = ("hit@1", "hit@5", "recall@20", "mrr")
KGQA_METRICS: tuple[str, ...] = ("hits@1", "f1")
ALL_METRICS: tuple[str, ...] = (*RETRIEVAL_METRICS, "hits@1", "f1")

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class RankedItem:
    """What the metrics need of an answer item: its node, label and score."""

    iri: str
    label: str = ""
    score: float | None = None
    tier: int | None = None
    source: str = ""


def normalize_label(text: str) -> str:
    """Case-insensitive label key: casefold, ``_`` as space, spaces squeezed.

    >>> normalize_label("  United_Kingdom ") == normalize_label("united kingdom")
    True
    """
    return _SPACES.sub(" ", text.replace("_", " ")).strip().casefold()


def _is_unscored(score: float | None) -> bool:
    return score is None or (isinstance(score, float) and math.isnan(score))


def apply_tie_rule(items: Sequence[RankedItem]) -> list[RankedItem]:
    """The ranking the metrics use (see the module docstring for the rule).

    >>> a, b, c = RankedItem("b", score=None), RankedItem("z", score=1.0), RankedItem("a", score=None)
    >>> [i.iri for i in apply_tie_rule([a, b, c])]
    ['z', 'a', 'b']
    """
    scored = [item for item in items if not _is_unscored(item.score)]
    unscored = sorted((item for item in items if _is_unscored(item.score)), key=lambda i: i.iri)
    ordered: list[RankedItem] = []
    run: list[RankedItem] = []
    for item in scored:
        if run and item.score != run[-1].score:
            ordered.extend(sorted(run, key=lambda i: i.iri))
            run = []
        run.append(item)
    ordered.extend(sorted(run, key=lambda i: i.iri))
    return ordered + unscored


def _gold_keys(gold_iris: Iterable[str] = (), gold_labels: Iterable[str] = ()) -> set[str]:
    """One key per gold answer: ``iri:…`` or ``label:…`` (normalised).

    >>> sorted(_gold_keys({"http://x/1"}, {"Paris", "paris"}))
    ['iri:http://x/1', 'label:paris']
    """
    keys = {f"iri:{iri}" for iri in gold_iris}
    keys.update(f"label:{normalize_label(label)}" for label in gold_labels if label.strip())
    return keys


def _gold_key(item: RankedItem, keys: set[str]) -> str | None:
    """The gold answer ``item`` is, if any: by IRI first, else by label.

    >>> _gold_key(RankedItem("http://x/7", "PARIS"), {"label:paris"})
    'label:paris'
    >>> _gold_key(RankedItem("http://x/7", "Lyon"), {"label:paris"}) is None
    True
    """
    by_iri = f"iri:{item.iri}"
    if by_iri in keys:
        return by_iri
    by_label = f"label:{normalize_label(item.label)}"
    return by_label if item.label and by_label in keys else None


def gold_ranks(ranked: Sequence[RankedItem], gold_iris: Iterable[str] = (),
               gold_labels: Iterable[str] = ()) -> list[int]:
    """1-based ranks of the gold answers found in ``ranked`` (already tie-ruled).

    Each gold answer counts once, at its best rank: when a label matches
    several returned nodes, only the first of them is a hit.

    >>> gold_ranks([RankedItem("1", "male"), RankedItem("2", "Male"), RankedItem("3", "female")],
    ...            gold_labels={"male", "female"})
    [1, 3]
    """
    keys = _gold_keys(gold_iris, gold_labels)
    found: set[str] = set()
    ranks: list[int] = []
    for position, item in enumerate(ranked, start=1):
        key = _gold_key(item, keys)
        if key is not None and key not in found:
            found.add(key)
            ranks.append(position)
    return ranks


def hit_at(ranks: Sequence[int], k: int) -> float:
    """1.0 if any gold answer is ranked ≤ ``k``.

    >>> hit_at([6, 9], 5), hit_at([5], 5), hit_at([], 1)
    (0.0, 1.0, 0.0)
    """
    return 1.0 if any(rank <= k for rank in ranks) else 0.0


def recall_at(ranks: Sequence[int], k: int, n_gold: int) -> float:
    """(gold answers ranked ≤ ``k``) / ``n_gold`` — STaRK's recall, not capped by k.

    >>> recall_at([1, 2, 30], 20, n_gold=4), recall_at([], 20, n_gold=0)
    (0.5, 0.0)
    """
    if n_gold <= 0:
        return 0.0
    return sum(1 for rank in ranks if rank <= k) / n_gold


def reciprocal_rank(ranks: Sequence[int]) -> float:
    """1 / the rank of the first gold answer; 0 when none was returned.

    >>> reciprocal_rank([4, 2]), reciprocal_rank([])
    (0.5, 0.0)
    """
    return 1.0 / min(ranks) if ranks else 0.0


def answer_set(ranked: Sequence[RankedItem]) -> list[RankedItem]:
    """The strategy's answer *set* for KGQA F1.

    The items of the best tier among SPARQL-filtered items (``source ==
    "filtered"``), i.e. what the query itself answered; when nothing was
    filtered, the top-ranked item alone; nothing for an empty ranking.

    >>> items = [RankedItem("a", tier=0, source="filtered"), RankedItem("b", tier=1, source="filtered"),
    ...          RankedItem("c", source="vector")]
    >>> [i.iri for i in answer_set(items)], [i.iri for i in answer_set(items[2:])]
    (['a'], ['c'])
    """
    filtered = [item for item in ranked if item.source == ItemSource.FILTERED]
    if not filtered:
        return list(ranked[:1])
    best = min((item.tier for item in filtered if item.tier is not None), default=None)
    return [item for item in filtered if item.tier == best]


def answer_f1(predicted: Sequence[RankedItem], gold_iris: Iterable[str] = (),
              gold_labels: Iterable[str] = ()) -> float:
    """Answer-set F1 between ``predicted`` items and the gold answers.

    Predictions are deduplicated by the gold answer they match (or their IRI);
    precision = matched / distinct predictions, recall = matched / gold answers.

    >>> gold = {"male", "female"}
    >>> answer_f1([RankedItem("1", "male")], gold_labels=gold)
    0.6666666666666666
    >>> answer_f1([], gold_labels=gold), answer_f1([RankedItem("1", "x")], gold_labels=set())
    (0.0, 0.0)
    """
    keys = _gold_keys(gold_iris, gold_labels)
    if not keys or not predicted:
        return 0.0
    distinct = {_gold_key(item, keys) or f"pred:{item.iri}" for item in predicted}
    matched = len(distinct & keys)
    if matched == 0:
        return 0.0
    precision, recall = matched / len(distinct), matched / len(keys)
    return 2 * precision * recall / (precision + recall)


def question_metrics(items: Sequence[RankedItem], gold_iris: Iterable[str] = (),
                     gold_labels: Iterable[str] = ()) -> dict[str, float | int | None]:
    """Every per-question metric, plus ``rank`` (first gold answer) and ``n_gold``.

    >>> m = question_metrics([RankedItem("x", score=1.0), RankedItem("g", score=0.5)], {"g"})
    >>> m["rank"], m["hit@1"], m["hit@5"], m["recall@20"], m["mrr"], m["hits@1"]
    (2, 0.0, 1.0, 1.0, 0.5, 0.0)
    """
    gold_iris, gold_labels = set(gold_iris), set(gold_labels)
    ranked = apply_tie_rule(items)
    ranks = gold_ranks(ranked, gold_iris, gold_labels)
    n_gold = len(_gold_keys(gold_iris, gold_labels))
    hit1 = hit_at(ranks, 1)
    return {
        "rank": min(ranks) if ranks else None,
        "n_gold": n_gold,
        "hit@1": hit1,
        "hit@5": hit_at(ranks, 5),
        "recall@20": recall_at(ranks, 20, n_gold),
        "mrr": reciprocal_rank(ranks),
        "hits@1": hit1,
        "f1": answer_f1(answer_set(ranked), gold_iris, gold_labels),
    }


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean, 0.0 for no values.

    >>> mean([1.0, 0.0, 0.5]), mean([])
    (0.5, 0.0)
    """
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def percentile(values: Iterable[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation (numpy's default); None if empty.

    >>> percentile([10, 20, 30, 40], 50), percentile([5.0], 95), percentile([], 50)
    (25.0, 5.0, None)
    """
    data = sorted(values)
    if not data:
        return None
    position = (len(data) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (position - low)
