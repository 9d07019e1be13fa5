"""The statistics tests: in a run that includes the slow tier, a fair-family case over a third
of the runs is left out when the same piece and amount run over all of them: the longer run
draws the same pieces first and checks the shorter one's bound at that point
(``test_the_family_flags_fair_equipment_at_most_alpha``)."""

from __future__ import annotations

import pytest

from tests.conftest import deselect_covered

FAMILY = "test_composition_sequential.py::test_the_family_flags_fair_equipment_at_most_alpha["


def _longer(nodeid: str) -> str:
    """The node id of the same piece and amount over every run."""
    from tests.stats.test_composition_sequential import RUNS

    head, runs = nodeid[:-1].rsplit("-", 1)
    return f"{head}-{RUNS}]" if runs == str(RUNS // 3) else nodeid


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselect_covered(config, items, lambda nodeid: _longer(nodeid) if FAMILY in nodeid else None)
