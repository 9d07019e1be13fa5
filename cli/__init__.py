"""The ``ledger`` command line: thin commands over ``ledger`` (parse, call one function, render)."""
