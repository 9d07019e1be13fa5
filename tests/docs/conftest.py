"""The documents' tests: registers the ``slow`` marker their long examples carry (the project's
own registration in pyproject may come too; registering twice is harmless), and, in a run that
includes the slow tier, leaves out a document's case without its slow blocks when its whole
case (``DOC+slow``) runs: that one runs every block the other does, in the same order."""

from __future__ import annotations

import pytest

from tests.conftest import full_run

WHOLE = "+slow]"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long; runs with -m slow or CI=true")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not full_run(config):
        return
    ids = {item.nodeid for item in items}
    covered = [
        item
        for item in items
        if "::test_document_examples_run_as_shown[" in item.nodeid
        and not item.nodeid.endswith(WHOLE)
        and item.nodeid[:-1] + WHOLE in ids
    ]
    if covered:
        config.hook.pytest_deselected(items=covered)
        items[:] = [item for item in items if item not in covered]
