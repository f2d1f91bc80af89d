"""The offline strategy: 4StepFocus triplets without an LLM (mentions → relation paths → triplets).

Importing this package registers the ``offline`` strategy in :data:`sparqlqa.strategies.base.strategies`.
See :mod:`sparqlqa.strategies.offline.strategy` for the algorithm and README "Offline answers" for the lever
users have on it (relation labels in an ontology file).
"""

from __future__ import annotations

__all__ = ["Hop", "Mention", "OfflineStrategy", "OfflineTriplets", "RelationPath", "ScoringSettings",
           "detect_mentions", "enumerate_paths", "offline_triplets"]

from sparqlqa.english import ScoringSettings
from sparqlqa.strategies.offline.mentions import Mention, detect_mentions
from sparqlqa.strategies.offline.paths import Hop, RelationPath, enumerate_paths
from sparqlqa.strategies.offline.strategy import OfflineStrategy, OfflineTriplets, offline_triplets
