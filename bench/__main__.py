"""``python -m bench``: run the harness (see :mod:`bench.run`)."""

from bench.run import main

if __name__ == "__main__":
    raise SystemExit(main())
