"""``python -m arraylayer``: the command line (see :mod:`arraylayer.cli`)."""

import sys

from arraylayer.cli import main

if __name__ == "__main__":
    sys.exit(main())
