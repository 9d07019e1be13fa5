"""The surveillance targets, measured small and seeded through the same code as the bench
(``python -m bench.surveillance`` measures them at full size; docs/SURVEILLANCE.md)."""

from __future__ import annotations

from bench.surveillance import false_alarms, power


def test_fair_equipment_is_rarely_flagged() -> None:
    measured = false_alarms(tables=60, seed=4, alpha=0.01)
    # Holm bounds each table's chance at alpha = 1 %; allow the noise of 60 tables per kind
    assert sum(kind["flagged"] for kind in measured.values()) <= 4


def test_a_pocket_one_and_a_half_times_as_likely_is_flagged_within_20000_spins() -> None:
    measured = power(runs=25, seed=2, alpha=0.01, weight=1.5)
    assert measured["spins"] == 20_000
    assert measured["share"] >= 0.95
