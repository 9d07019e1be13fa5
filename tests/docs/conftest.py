"""The documents' tests: registers the ``slow`` marker their long examples carry (the project's
own registration in pyproject may come too; registering twice is harmless)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long; runs with -m slow or CI=true")
