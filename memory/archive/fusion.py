"""Words and meaning in one ``discover`` ranking: the seam between the archive's word search
and a ranking by meaning that the archive does not make itself.

``SemanticRanker`` is what ``memory.archive.search.Searcher`` takes (``semantic=``): an async
callable that ranks the messages a viewer may see by closeness in meaning to a query and
answers their ids, best first. The archive never imports a memory provider
(``tests/test_layering.py``); the agent hands one in when its provider can rank
(``agent_core.recall.Recall.ranker``: the local provider's vectors, bounded in time, empty
when they fail). Whatever a ranker answers, the searcher keeps only the ids the viewer's
scope allows, in SQL, as for the words (``memory.archive.indexes.Indexes.by_id``).

``fuse`` is weighted reciprocal-rank fusion of the two message rankings; ``grouped`` puts a
message ranking into session lineages, best first, as ``discover`` shows them. ``Fusion``
holds the weights and counts (tuned on the recall benchmark's ``tune`` bank, see
``bench/README.md``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from memory.archive.results import Hit

__all__ = ["FUSION", "Fusion", "SemanticRanker", "fuse", "fused", "grouped"]


class SemanticRanker(Protocol):
    """Message ids ``viewer`` may see, closest in meaning to ``query`` first, at most
    ``limit``; an empty answer when there is none (or no time to find them). ``names``: what
    the viewer is called, when the caller knows (display names, untrusted text; none
    otherwise), so a question that names them can be read as about them."""

    def __call__(
        self, viewer: str, query: str, limit: int, *, names: Sequence[str]
    ) -> Awaitable[Sequence[int]]: ...


@dataclass(frozen=True, slots=True)
class Fusion:
    """How ``discover`` fuses (reciprocal-rank fusion, ranks from 1): a message scores
    ``words / (k + its rank by words)``, times ``loose`` when only a loose step (any of the
    terms) found it, plus ``meaning / (k + its rank by meaning)``; absent from a ranking, it
    gets nothing from it. Ties go to the words' order. The values are the ``tune`` bank's
    (``bench/README.md``, *session_search with the local provider*)."""

    k: int = 10
    words: float = 1.0
    loose: float = 0.3
    meaning: float = 1.0
    candidates: int = 100  # message ids asked of the ranker
    #: a session's second and third match only from the first ``further_within`` messages
    #: of the fused ranking: a weak match does not push the next session's best down
    further_within: int = 10
    in_period: bool = True  # a question naming a month: messages by meaning from that month


FUSION = Fusion()


def fuse(
    words: Sequence[int],
    meaning: Sequence[int],
    fusion: Fusion = FUSION,
    *,
    loose: Collection[int] = (),
) -> list[int]:
    """Both rankings' ids, best fused score first (``fused``, without the scores)."""
    return [message_id for message_id, _ in fused(words, meaning, fusion, loose=loose)]


def fused(
    words: Sequence[int],
    meaning: Sequence[int],
    fusion: Fusion = FUSION,
    *,
    loose: Collection[int] = (),
) -> list[tuple[int, float]]:
    """Both rankings' ids with their fused scores (see ``Fusion``), best first
    (``loose``: word hits of a loose step); on equal scores the words' order, then the
    meaning's."""
    score: dict[int, float] = {}
    for rank, message_id in enumerate(words, 1):
        weight = fusion.words * (fusion.loose if message_id in loose else 1.0)
        score[message_id] = score.get(message_id, 0.0) + weight / (fusion.k + rank)
    for rank, message_id in enumerate(meaning, 1):
        score[message_id] = score.get(message_id, 0.0) + fusion.meaning / (fusion.k + rank)
    first = {message_id: n for n, message_id in enumerate(dict.fromkeys([*words, *meaning]))}
    ordered = sorted(score, key=lambda message_id: (-score[message_id], first[message_id]))
    return [(message_id, score[message_id]) for message_id in ordered]


def grouped(
    hits: Sequence[Hit], limit: int, per_session: int, *, further_within: int = 0
) -> list[list[Hit]]:
    """``hits`` (best first) by session lineage: at most ``limit`` lineages in the order of
    their best hit, each with at most ``per_session`` hits, the second and later of them
    only from the first ``further_within`` hits (0: from any)."""
    groups: dict[str, list[Hit]] = {}
    for rank, hit in enumerate(hits):
        group = groups.get(hit.root_id)
        if group is None:
            if len(groups) >= limit:
                continue
            group = groups[hit.root_id] = []
        elif len(group) >= per_session or 0 < further_within <= rank:
            continue
        group.append(hit)
    return list(groups.values())
