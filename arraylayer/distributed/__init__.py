"""Training beyond one process: a world of ranks and pytree collectives over each framework's own engine.

The folder ``arraylayer/distributed/`` owns the world (``world.py``: ``initialize`` from the launcher's,
torchrun's or no environment), the collectives over trees (``collectives.py``), ``shard`` and
``data_parallel`` (``parallel.py``), several devices in one process or over a jax world's processes (``devices.py``: ``replicated_step``), the
collectives inside ``tf.function`` and ``torch.compile`` (``compiled.py``), the launcher ``python -m arraylayer launch`` (``launch.py``) and
the engines (``engines/``: the table backend -> engine, jax.distributed, TensorFlow's collective ops,
torch.distributed's gloo), each framework's own collectives.

May import: the base modules, ``dtypes``, ``runtime``, ``api``, ``models``, ``cli``, the face ``arraylayer``.
"""

from arraylayer.distributed.checkpoints import save
from arraylayer.distributed.collectives import all_gather, all_reduce, barrier, broadcast
from arraylayer.distributed.devices import replicated_step
from arraylayer.distributed.parallel import data_parallel, data_parallel_transform, shard
from arraylayer.distributed.world import initialize, is_initialized, local_rank, rank, shutdown, world_size
from arraylayer.errors import DistributedError, DistributedMismatchError, DistributedTimeoutError

__all__ = ["initialize", "shutdown", "is_initialized", "rank", "world_size", "local_rank", "barrier",
           "all_reduce", "all_gather", "broadcast", "shard", "data_parallel", "data_parallel_transform", "save",
           "replicated_step",
           "DistributedError", "DistributedMismatchError", "DistributedTimeoutError"]
