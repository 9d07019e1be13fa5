"""The domain layer: the values and aggregates every other layer speaks in.

Money (``money``), findings (``findings``), the exception tree (``errors``), citations of the
regulation (``citations``), rulebooks (``rulebook``), equipment values such as cards and tiles
(``equipment``), and the two aggregates, which only record facts: a round (``round``) and a
table (``table``). Together with ``ledger.feed`` (the feed's vocabulary: envelope and field
types) this is the bottom layer of ``docs/ARCHITECTURE.md``. Nothing here computes an outcome;
``ledger.verify`` is the one place that recomputes.

It may import the layers below it: none. (Only the standard library, pydantic and the
eventsourcing aggregate, and the other modules of this layer.)
"""
