"""Which dtypes each backend's kernels support, from declarations keyed by framework version.

A backend's kernel package declares, per kernel name, *either* the dtypes it supports
(``SUPPORTED``) *or* those it does not (``UNSUPPORTED``), as
``{"<version range>": (dtype or group names)}``. A version range is comma-separated
clauses such as ``">=2.13,<2.14"``; groups are the names of :data:`GROUPS`. The installed
framework's version picks the entry. A version that no declared range covers is said
(a :class:`UnverifiedVersionWarning` naming the function and version) and treated as
"no known restriction": never silently mapped to another version's entry.

Answers are computed once per backend and kernel, then served from a dict.
"""

from __future__ import annotations

import operator
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Final

from .dtypes import Dtype, all_complex_dtypes, all_dtypes, all_float_dtypes, all_int_dtypes, all_uint_dtypes

if TYPE_CHECKING:
    from .backend import Backend

__all__ = ["GROUPS", "UnverifiedVersionWarning", "expand_dtypes", "version_matches", "kernel_unsupported_dtypes"]

Declarations = Mapping[str, Mapping[str, tuple[str, ...]]]

#: Group names usable in declarations.
GROUPS: Final[dict[str, tuple[Dtype, ...]]] = {
    "bool": (Dtype("bool"),),
    "signed": all_int_dtypes,
    "unsigned": all_uint_dtypes,
    "integer": all_int_dtypes + all_uint_dtypes,
    "float": all_float_dtypes,
    "complex": all_complex_dtypes,
    "numeric": all_int_dtypes + all_uint_dtypes + all_float_dtypes + all_complex_dtypes,
    "all": all_dtypes,
}


class UnverifiedVersionWarning(UserWarning):
    """The installed framework's version is outside every range declared for a function."""


def expand_dtypes(names: Iterable[str]) -> frozenset[Dtype]:
    """Dtype and group names as a set of dtypes (ValueError for an unknown name)."""
    result: set[Dtype] = set()
    for name in names:
        if name in GROUPS:
            result.update(GROUPS[name])
        elif name in all_dtypes:
            result.add(Dtype(name))
        else:
            raise ValueError(f"Unknown dtype or group {name!r} in a support declaration; groups: {', '.join(GROUPS)}.")
    return frozenset(result)


_CLAUSE: Final = re.compile(r"^\s*(>=|<=|==|!=|<|>)\s*([0-9][0-9.]*)\s*$")
_COMPARE: Final[dict[str, Callable[[object, object], bool]]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt,
}


def _release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string: ``"2.13.0+cpu"`` -> ``(2, 13, 0)``."""
    match = re.match(r"[0-9]+(\.[0-9]+)*", version)
    if match is None:
        raise ValueError(f"Cannot read the version {version!r}.")
    return tuple(int(part) for part in match.group(0).split("."))


def version_matches(version: str, spec: str) -> bool:
    """True if ``version`` satisfies every clause of ``spec`` (``">=2.13,<2.14"``).

    Releases compare numerically, padded with zeros (``2.13`` == ``2.13.0``)."""
    have = _release(version)
    for clause in spec.split(","):
        match = _CLAUSE.match(clause)
        if match is None:
            raise ValueError(f"Bad version clause {clause!r} in {spec!r}; write e.g. '>=2.13,<2.14'.")
        want = _release(match.group(2))
        width = max(len(have), len(want))
        padded_have, padded_want = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
        if not _COMPARE[match.group(1)](padded_have, padded_want):
            return False
    return True


def _entry_for(ranges: Mapping[str, tuple[str, ...]], version: str, what: str) -> frozenset[Dtype] | None:
    """The dtypes of the range covering ``version``; None (and a warning) when none does."""
    for spec, names in ranges.items():
        if version_matches(version, spec):
            return expand_dtypes(names)
    warnings.warn(
        f"{what}: version {version} is outside every declared range ({'; '.join(ranges)}); its dtype "
        f"support is unverified. Run `python -m arraylayer probe` to see what it supports.",
        UnverifiedVersionWarning,
        stacklevel=4,
    )
    return None


def declared_unsupported(
    name: str, supported: Declarations, unsupported: Declarations, version: str, backend_name: str
) -> frozenset[Dtype]:
    """The dtypes kernel ``name`` does not support at ``version``, from either kind of declaration."""
    what = f"{backend_name} kernel {name!r}"
    if name in supported and name in unsupported:
        raise ValueError(f"The {what} declares both supported and unsupported dtypes; keep one.")
    if name in supported:
        allowed = _entry_for(supported[name], version, what)
        return frozenset() if allowed is None else frozenset(all_dtypes) - allowed
    if name in unsupported:
        return _entry_for(unsupported[name], version, what) or frozenset()
    return frozenset()


def kernel_unsupported_dtypes(backend: Backend, name: str) -> frozenset[Dtype]:
    """The dtypes for which ``backend``'s kernel ``name`` has no implementation at the
    installed version (cached per backend)."""
    cache = backend.unsupported_cache
    found = cache.get(name)
    if found is None:
        backend.load()
        found = declared_unsupported(
            name, backend.supported, backend.unsupported, backend.version, backend.name
        )
        cache[name] = found
    return found
