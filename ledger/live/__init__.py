"""Following the tables live: ``ledger ingest --follow`` and ``ledger projections update
--follow``.

- :mod:`ledger.live.sources`: a file followed across rotation, standard input, a NATS
  JetStream stream (durable consumer), each read in batches bounded by count and time;
- :mod:`ledger.live.receiver`: the NATS stream received in a process of its own, handed over
  in frames, acknowledged only once committed;
- :mod:`ledger.live.follower`: store each batch with the batch ingest, acknowledge it only
  after it is committed, judge and tell the findings, seal on a timer;
- :mod:`ledger.live.judging`: the verify pass kept open over the log;
- :mod:`ledger.live.judge_process`: that pass in a process of its own (another core), which
  also extends the Merkle tree;
- :mod:`ledger.live.tree`: the Merkle tree extended from rows in hand (on SQLite hashed
  before the write lock is taken);
- :mod:`ledger.live.told`: the row through which findings were told (each told once);
- :mod:`ledger.live.witnessing`: witnesses cosigning the follower's timed checkpoints;
- :mod:`ledger.live.lock`: one follower per store;
- :mod:`ledger.live.metrics`: Prometheus health and metrics;
- :mod:`ledger.live.publish`: a simulated property played in real time onto a stream, and
  the findings and rejects published through JetStream;
- :mod:`ledger.live.run`: the command line's values turned into a running follower;
- :mod:`ledger.live.views`: ``ledger projections update --follow``.
"""
