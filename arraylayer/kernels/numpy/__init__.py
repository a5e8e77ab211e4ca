"""The numpy kernels (being written)."""

KERNELS: dict = {}
SUPPORTED: dict = {}
UNSUPPORTED: dict = {}
