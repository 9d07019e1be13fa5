"""Reports for inspectors: the recall of a table's last rounds and self-contained HTML pages.

- :mod:`ledger.report.recall` — the gaming-standard recall: a table's last rounds, in order,
  each replayed and judged exactly as ``ledger replay`` judges it;
- :mod:`ledger.report.day` — one gaming day per table (rounds, turnover, hold, commission,
  findings), computed from the store without the persisted projections;
- :mod:`ledger.report.glyphs` — the outcome facts of a round (cards, dice, figures, tiles, the
  wheel) as glyphs;
- :mod:`ledger.report.html_round`, :mod:`ledger.report.html_day` — the HTML pages, built with
  :mod:`ledger.report.markup` (everything from the feed is escaped by construction) and
  :mod:`ledger.report.svg` (inline charts). No external resource, no JavaScript.
"""
