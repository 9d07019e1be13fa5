"""Every finding code and every rejection code the ledger can emit is documented in
docs/FEED.md, and the README sends readers there."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.codec.parse import REJECT_CODES
from ledger.domain.findings import FINDING_CODES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FEED = (ROOT / "docs" / "FEED.md").read_text(encoding="utf-8")


def test_the_readme_points_at_the_codes() -> None:
    assert "docs/FEED.md" in README


@pytest.mark.parametrize("code", sorted(FINDING_CODES))
def test_every_finding_code_is_documented(code: str) -> None:
    assert f"`{code}`" in FEED


@pytest.mark.parametrize("code", sorted(REJECT_CODES))
def test_every_rejection_code_is_documented(code: str) -> None:
    assert f"`{code}`" in FEED
