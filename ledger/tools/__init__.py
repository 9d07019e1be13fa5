"""The tools layer: simulators and the demo.

``simulators`` (the registry of each game's ``ledger/games/<game>/simulate.py``, which are of
this layer too), ``simulate`` (a simulated feed with chosen errors), ``builder`` (what a
simulator writes) and ``demo``. No production code imports them.

It may import the layers below it: services, projections, proof, verify, storage, codec, games, domain.
"""
