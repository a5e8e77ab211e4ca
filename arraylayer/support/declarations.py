"""The declaration data model: how a kernel package says which dtypes its kernels support.

A backend's kernel package declares, per kernel name, *either* the dtypes it supports
(``SUPPORTED``) *or* those it does not (``UNSUPPORTED``), as
``{"<version range>": (dtype or group names)}``. A version range is comma-separated
clauses such as ``">=2.13,<2.14"``; groups are the names of :data:`GROUPS`. The installed
framework's version picks the entry. A version that no declared range covers is said
(a :class:`UnverifiedVersionWarning` naming the kernel and version) and treated as
"no known restriction": never silently mapped to another version's entry.
:func:`check_declarations` lists what is malformed in a package's declarations.
"""

from __future__ import annotations

import operator
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from arraylayer.dtypes import Dtype, all_complex_dtypes, all_dtypes, all_float_dtypes, all_int_dtypes, all_uint_dtypes

__all__ = [
    "Declarations", "GROUPS", "UnverifiedVersionWarning", "expand_dtypes", "version_matches", "covering_range",
    "declared_entry", "declared_unsupported", "check_declarations",
]

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
    if isinstance(names, str):
        raise ValueError(f"Declare dtypes as a tuple of names, not the string {names!r} (write ({names!r},)).")
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


def covering_range(ranges: Mapping[str, Any], version: str) -> str | None:
    """The first range of ``ranges`` that ``version`` satisfies, or None."""
    for spec in ranges:
        if version_matches(version, spec):
            return spec
    return None


def declared_entry(ranges: Mapping[str, tuple[str, ...]], version: str, what: str) -> frozenset[Dtype] | None:
    """The dtypes of the range covering ``version``; None (and a warning) when none does."""
    spec = covering_range(ranges, version)
    if spec is not None:
        return expand_dtypes(ranges[spec])
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
        allowed = declared_entry(supported[name], version, what)
        return frozenset() if allowed is None else frozenset(all_dtypes) - allowed
    if name in unsupported:
        return declared_entry(unsupported[name], version, what) or frozenset()
    return frozenset()


def check_declarations(
    supported: Declarations, unsupported: Declarations, kernel_names: Iterable[str] | None = None
) -> list[str]:
    """Everything malformed in a kernel package's declarations, one sentence each (empty: fine).

    Checks that no kernel declares both ways, that every name is a kernel (of
    ``kernel_names``, default: :data:`~arraylayer.kernels.names.ALL_KERNEL_NAMES`), that every
    range parses, that no two ranges of one kernel overlap at their boundaries, and that every
    dtype or group name exists."""
    if kernel_names is None:
        from arraylayer.kernels.names import ALL_KERNEL_NAMES

        kernel_names = ALL_KERNEL_NAMES
    known = set(kernel_names)
    problems = [f"kernel {name!r} declares both SUPPORTED and UNSUPPORTED dtypes"
                for name in sorted(set(supported) & set(unsupported))]
    for kind, declarations in (("SUPPORTED", supported), ("UNSUPPORTED", unsupported)):
        for name, ranges in declarations.items():
            where = f"{kind}[{name!r}]"
            if name not in known:
                problems.append(f"{where}: {name!r} is not a kernel name")
            if not isinstance(ranges, Mapping) or not ranges:
                problems.append(f"{where}: expected a non-empty {{'<version range>': (dtype names)}} dict")
                continue
            bounds: set[str] = set()
            for spec, names in ranges.items():
                try:
                    version_matches("0", spec)
                    bounds.update(_CLAUSE.match(c).group(2) for c in spec.split(","))  # type: ignore[union-attr]
                except ValueError as error:
                    problems.append(f"{where}: {error}")
                    continue
                try:
                    expand_dtypes(names)
                except ValueError as error:
                    problems.append(f"{where}[{spec!r}]: {error}")
            for bound in sorted(bounds):
                for version in (bound, bound + ".0.0.1"):
                    try:
                        matching = [spec for spec in ranges if version_matches(version, spec)]
                    except ValueError:
                        break
                    if len(matching) > 1:
                        problems.append(f"{where}: version {version} is in several ranges ({'; '.join(matching)})")
                        break
    return problems
