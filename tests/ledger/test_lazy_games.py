"""The games' registry loads a game on first use, and gives what the eager tables gave.

``ledger.games.GAMES``, ``ledger.storage.store.TOPICS`` and ``ledger.storage.stream``'s decoders load a game's
package only when one of its keys or topics is looked up (so that a command on an empty store,
or on a store of one game, does not import the six); what they answer is what the tables built
at import answered.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ledger.codec.chain import CHAIN_TOPIC, Linked
from ledger.codec.rows import all_kinds
from ledger.domain.table import TABLE_TOPIC, RoundStarted
from ledger.feed.envelope import FeedEvent, RoundOpened
from ledger.games import GAMES
from ledger.storage.store import TOPICS

_LOADED_GAMES = (
    "import sys\n"
    "{setup}\n"
    "print(sorted(m for m in sys.modules if m.startswith('ledger.games.') and m.count('.') == 2\n"
    "             and m not in ('ledger.games.base', 'ledger.games.money')))\n"
)


def _games_loaded_after(setup: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED_GAMES.format(setup=setup)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])  # a list literal printed above


def test_the_store_and_the_stream_import_no_game_until_one_is_looked_up() -> None:
    setup = (
        "import ledger.storage.store, ledger.storage.stream, projections.updater\n"
        "from ledger.games import GAMES\n"
        "assert list(GAMES) == ['SP9', 'FPC', '3CB', 'MJ', 'RL', 'STUD'] and 'RL' in GAMES"
    )
    assert _games_loaded_after(setup) == []


def test_a_topic_of_one_game_loads_that_game_only() -> None:
    setup = "from ledger.storage.store import TOPICS\nassert TOPICS.get('RL/spin_result') is not None"
    assert _games_loaded_after(setup) == ["ledger.games.roulette"]


def test_the_registry_answers_as_a_dict_of_the_six_games() -> None:
    assert [g.key for g in GAMES.values()] == list(GAMES) == ["SP9", "FPC", "3CB", "MJ", "RL", "STUD"]
    assert len(GAMES) == 6 and "XX" not in GAMES and GAMES.get("XX") is None
    with pytest.raises(KeyError):
        GAMES["XX"]


def test_the_topics_are_the_eager_table() -> None:
    eager = {TABLE_TOPIC: RoundStarted, CHAIN_TOPIC: Linked}
    for key, game in GAMES.items():
        for cls in game.events:
            eager[f"{key}/{cls.TYPE}"] = cls
    assert list(TOPICS.items()) == list(eager.items())
    assert len(TOPICS) == len(eager)
    for missing in ("RL/no_such_type", "XX/spin_result", "no-slash", ""):
        assert TOPICS.get(missing) is None and missing not in TOPICS
        with pytest.raises(KeyError):
            TOPICS[missing]


def test_the_stream_decodes_every_feed_topic_but_the_openings() -> None:
    expected = {
        topic
        for topic, cls in TOPICS.items()
        if issubclass(cls, FeedEvent)
        and not issubclass(cls, RoundOpened)
        and not topic.endswith("/round_opened")
    }
    assert set(all_kinds()) == expected
