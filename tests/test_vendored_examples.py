"""The repository's copy of shared/examples (for clones without shared/ beside them) is exact."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
VENDORED = HERE / "examples"
SHARED = [HERE.parents[1] / "shared" / "examples", HERE.parent / "shared" / "examples"]


def test_the_vendored_examples_equal_shared_examples_when_both_exist() -> None:
    shared = next((s for s in SHARED if s.is_dir()), None)
    if shared is None:
        pytest.skip("no shared/examples beside this checkout: the vendored copy is what we have")
    names = sorted(p.name for p in shared.glob("*.jsonl"))
    assert names == sorted(p.name for p in VENDORED.glob("*.jsonl"))
    for name in names:
        assert (VENDORED / name).read_bytes() == (shared / name).read_bytes(), name
