"""What a stored fact is: its topic, the model it is read with, its canonical bytes.

- :data:`TOPICS` maps every stored topic (``"RL/spin_result"``, ``"table/round_started"``,
  ``"chain/linked"``) to the model its facts are read with; :func:`topic_of` is the reverse.
  Topics are stable names, never module paths, so stored history survives refactoring.
- :func:`content_of` is a fact's canonical stored bytes: pydantic's JSON, fields in
  declaration order, ``None`` fields left out. The chain digests hash exactly these bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ledger.codec.chain import CHAIN_TOPIC, Linked
from ledger.domain.table import TABLE_TOPIC, RoundStarted
from ledger.feed.envelope import FeedEvent, FeedModel
from ledger.games import GAMES


class TopicRegistry(Mapping[str, type[FeedModel]]):
    """Every stored topic and the model its facts are read with.

    A game's topics (``"RL/spin_result"``) are read from its :class:`Game` on the first lookup
    of one of them, so that only the games a store actually holds get imported
    (``ledger.games`` loads a game's package on first use); iterating loads every game.
    """

    def __init__(self) -> None:
        self._fixed: dict[str, type[FeedModel]] = {TABLE_TOPIC: RoundStarted, CHAIN_TOPIC: Linked}
        self._by_game: dict[str, dict[str, type[FeedModel]]] = {}
        self._known: dict[str, type[FeedModel]] = dict(self._fixed)
        """Every topic loaded so far, for the lookup of each stored row (one dict lookup)."""

    def _game_topics(self, key: str) -> dict[str, type[FeedModel]]:
        topics = self._by_game.get(key)
        if topics is None:
            topics = {f"{key}/{cls.TYPE}": cls for cls in GAMES[key].events}
            self._by_game[key] = topics
            self._known.update(topics)
        return topics

    def get(self, topic: str, default: Any = None) -> Any:
        """The model of ``topic``, else ``default`` (the loaded topics first: one dict lookup)."""
        cls = self._known.get(topic)
        if cls is not None:
            return cls
        try:
            return self[topic]
        except KeyError:
            return default

    def __getitem__(self, topic: str) -> type[FeedModel]:
        cls = self._known.get(topic)
        if cls is not None:
            return cls
        key, slash, _ = topic.partition("/")
        if not slash or key not in GAMES:
            raise KeyError(topic)
        return self._game_topics(key)[topic]

    def __iter__(self) -> Iterator[str]:
        yield from self._fixed
        for key in GAMES:
            yield from self._game_topics(key)

    def __len__(self) -> int:
        return len(self._fixed) + sum(len(self._game_topics(key)) for key in GAMES)


TOPICS: Mapping[str, type[FeedModel]] = TopicRegistry()
"""Every stored topic and the model its facts are read with."""


def topic_of(fact: FeedModel) -> str:
    """The stored topic of a fact."""
    if isinstance(fact, FeedEvent):
        return f"{fact.game}/{fact.type}"
    if isinstance(fact, RoundStarted):
        return TABLE_TOPIC
    if isinstance(fact, Linked):
        return CHAIN_TOPIC
    raise TypeError(f"no topic for {type(fact).__name__}")


def content_of(fact: FeedModel) -> bytes:
    """The canonical bytes of a fact: pydantic's JSON, fields in declaration order."""
    return fact.model_dump_json(exclude_none=True).encode()
