"""Surveillance statistics: is a wheel, a dice shaker, a shoe or a wall fair, and which tables
and croupiers make the most errors (``ledger stats``).

- :mod:`ledger.stats.tests` — the pure statistics (chi-square goodness of fit with its own
  p-value, the Wald–Wolfowitz runs test, serial correlation within a shoe, Holm's correction);
- :mod:`ledger.stats.collect` — what each piece of equipment contributes, folded round by round
  into small counters (memory does not grow with the number of rounds);
- :mod:`ledger.stats.survey` — one streaming pass over the store: counters per table and gaming
  day, findings and money per table and croupier, then the tests and the correction.
"""
