"""The statistics tests: in a run that includes the slow tier, a fair-family case over a third
of the runs is left out when the same piece and amount run over all of them: the longer run
draws the same pieces first and checks the shorter one's bound at that point
(``test_the_family_flags_fair_equipment_at_most_alpha``)."""

from __future__ import annotations

import pytest

from tests.conftest import full_run

FAMILY = "test_composition_sequential.py::test_the_family_flags_fair_equipment_at_most_alpha["


def _longer(nodeid: str) -> str:
    """The node id of the same piece and amount over every run."""
    from tests.stats.test_composition_sequential import RUNS

    head, runs = nodeid[:-1].rsplit("-", 1)
    return f"{head}-{RUNS}]" if runs == str(RUNS // 3) else nodeid


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not full_run(config):
        return
    ids = {item.nodeid for item in items}
    covered = [
        item
        for item in items
        if FAMILY in item.nodeid and _longer(item.nodeid) != item.nodeid and _longer(item.nodeid) in ids
    ]
    if covered:
        config.hook.pytest_deselected(items=covered)
        items[:] = [item for item in items if item not in covered]
