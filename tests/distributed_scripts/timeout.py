"""Rank 1 never calls the collective: rank 0 raises DistributedTimeoutError after its timeout."""

import time

import numpy as np

import arraylayer.distributed as dist

dist.initialize(timeout=20)
if dist.rank() == 0:
    try:
        dist.all_reduce(np.ones(2, np.float32), timeout=2)
    except dist.DistributedTimeoutError:
        print("TIMEOUT")
else:
    time.sleep(6)
