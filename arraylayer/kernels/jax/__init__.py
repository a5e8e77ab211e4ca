"""The jax kernels (being written)."""

KERNELS: dict = {}
SUPPORTED: dict = {}
UNSUPPORTED: dict = {}
