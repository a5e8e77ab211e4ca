"""Rank 1 exits with status 3 at once; rank 0 would wait for ever in a collective without the launcher."""

import sys
import time

import arraylayer.distributed as dist

dist.initialize(timeout=30)
if dist.rank() == 1:
    sys.exit(3)
time.sleep(60)
