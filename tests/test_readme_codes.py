"""The README documents every finding code and every rejection code the ledger can emit."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.feed.parse import REJECT_CODES
from ledger.verify.findings import FINDING_CODES

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", sorted(FINDING_CODES))
def test_every_finding_code_is_in_the_readme(code: str) -> None:
    assert f"`{code}`" in README


@pytest.mark.parametrize("code", sorted(REJECT_CODES))
def test_every_rejection_code_is_in_the_readme(code: str) -> None:
    assert f"`{code}`" in README
