"""``Uses``: one row of the function tables (what a public function needs, as data), in a module of its
own so that :mod:`.table` and :mod:`.model_table` both import it without importing each other."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Uses"]


class Uses(NamedTuple):
    """What a public function needs, as data.

    ``kinds``: the kind letters (b i u f c) the Array API defines it for; other kinds are
    refused by the api layer on every backend. ``kernels``: the kernel names it calls.
    ``rule``: the dtype those kernels run in, for an input dtype (see :data:`RULES`).
    ``refused``: dtypes of those kinds that the function itself refuses on every backend, with
    InvalidDtypeError naming the cast (``view_as_complex`` of float16 parts: torch's rule).
    """

    kernels: tuple[str, ...]
    kinds: str = "biufc"
    rule: str = "same"
    refused: tuple[str, ...] = ()
