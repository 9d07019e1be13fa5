"""The documents' tests: registers the ``slow`` marker their long examples carry (the project's
own registration in pyproject may come too; registering twice is harmless), and, in a run that
includes the slow tier, leaves out a document's case without its slow blocks when its whole
case (``DOC+slow``) runs: that one runs every block the other does, in the same order."""

from __future__ import annotations

import pytest

from tests.conftest import deselect_covered

WHOLE = "+slow]"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long; runs with -m slow or CI=true")


def _whole(nodeid: str) -> str | None:
    """The document's whole case (``DOC+slow``) for its case without the slow blocks."""
    if "::test_document_examples_run_as_shown[" in nodeid and not nodeid.endswith(WHOLE):
        return nodeid[:-1] + WHOLE
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselect_covered(config, items, _whole)
