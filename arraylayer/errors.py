"""The exception types of arraylayer.

Every error subclasses :class:`ArrayLayerError` and also the builtin exception a
user of NumPy, JAX, PyTorch or TensorFlow would already catch for that
situation, so existing ``except TypeError:`` code keeps working. Every message
names the offending values and the way out.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ArrayLayerError",
    "InvalidDtypeError",
    "TypePromotionError",
    "ScalarOverflowError",
    "UnsupportedDtypeError",
    "UnknownBackendError",
    "BackendNotInstalledError",
    "BackendMismatchError",
    "DeviceError",
    "UnsupportedOperationError",
    "GradientError",
    "ControlFlowError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "AxisError",
    "OutOfBoundsIndexError",
    "LinAlgError",
    "CheckpointError",
    "AllocationError",
    "DistributedError",
    "DistributedMismatchError",
    "DistributedTimeoutError",
]


class ArrayLayerError(Exception):
    """Base class of every error raised by arraylayer itself."""


class InvalidDtypeError(ArrayLayerError, TypeError, ValueError):
    """A value that is not one of arraylayer's dtypes was given where a dtype was expected.

    Subclasses both ``TypeError`` (what ``numpy.dtype("flaot32")`` raises) and
    ``ValueError`` (a bad value of the right type), so either ``except`` catches it.
    """


class TypePromotionError(ArrayLayerError, TypeError, ValueError):
    """The active promotion policy has no implicit promotion for these dtypes.

    Subclasses ``TypeError`` (NumPy, Paddle) and ``ValueError`` (JAX's
    ``TypePromotionError``), so code written for any of them catches it.
    """


class ScalarOverflowError(ArrayLayerError, OverflowError):
    """A Python int does not fit the integer dtype it would be converted to.

    Raised instead of the silent wrap-around that torch and TensorFlow perform.
    """


class UnsupportedDtypeError(ArrayLayerError, TypeError):
    """A function has no kernel for this dtype on the active backend and no exact fallback."""


class UnknownBackendError(ArrayLayerError, ValueError):
    """A backend name that is not registered."""


class BackendNotInstalledError(ArrayLayerError, ImportError):
    """A registered backend whose framework cannot be imported here."""


class BackendMismatchError(ArrayLayerError, TypeError):
    """Arrays of two different backends were passed to one call."""


class DeviceError(ArrayLayerError, ValueError):
    """A device string that is malformed or names a device that is not available."""


class UnsupportedOperationError(ArrayLayerError, NotImplementedError):
    """An operation the backend of the arrays cannot do at all (not a matter of dtype), such as
    automatic differentiation on NumPy. The message names the backends that can."""


class GradientError(ArrayLayerError, TypeError, ValueError):
    """:func:`arraylayer.grad` / :func:`arraylayer.value_and_grad` cannot differentiate this call:
    the function's output is not a real floating-point scalar, an input to differentiate is not
    real floating-point, or ``argnums`` does not name positional arguments.

    Subclasses ``TypeError`` (what ``jax.grad`` raises for these) and ``ValueError``.
    """


class ControlFlowError(ArrayLayerError, TypeError, ValueError):
    """A loop or branch of :func:`arraylayer.scan`, ``fori_loop``, ``while_loop``, ``cond`` or
    ``switch`` whose functions break its contract: a body that changes the carry's tree structure,
    shapes or dtypes, branches whose outputs differ, or a predicate that is not a boolean scalar.

    Subclasses ``TypeError`` (what ``jax.lax`` raises for these) and ``ValueError``.
    """


class InvalidArgumentError(ArrayLayerError, ValueError):
    """An argument of the right type with a value the function cannot take (a negative count,
    a ragged nested sequence, a size no backend can allocate, shapes that do not broadcast)."""


class InvalidArgumentTypeError(ArrayLayerError, TypeError):
    """An argument of a type the parameter does not take (a string or None where an array is
    expected, a float where an axis or a count is expected)."""


class AxisError(ArrayLayerError, IndexError, ValueError):
    """An axis out of range for the array's rank, or given twice.

    Subclasses ``IndexError`` (what the Array API specifies) and ``ValueError`` (NumPy's
    ``AxisError`` is both)."""


class OutOfBoundsIndexError(ArrayLayerError, IndexError):
    """An index outside the bounds of the axis it indexes, on every backend (JAX would clamp or
    give NaN, PyTorch and TensorFlow would give zeros or fail on the device)."""


class LinAlgError(ArrayLayerError, ValueError):
    """A linear-algebra function whose input has no answer: a singular matrix to invert or solve
    with, a matrix that is not positive definite to factorise, or a matrix holding NaN or inf.

    Raised on every backend when the call runs eagerly (on dask, when the result is computed);
    under jax.jit, tf.function and torch.compile the matrices without an answer give NaN instead.
    Subclasses ``ValueError``, as ``numpy.linalg.LinAlgError`` does."""


class CheckpointError(ArrayLayerError, ValueError):
    """A checkpoint file that cannot be read as written (truncated, tampered with, not a
    safetensors file), or whose names, shapes or dtypes differ from the tree it is loaded into."""


class AllocationError(ArrayLayerError, MemoryError, RuntimeError):
    """A creation function's array does not fit the memory of its device (NumPy raised
    MemoryError, PyTorch and JAX a RuntimeError, TensorFlow ResourceExhaustedError). Subclasses
    ``MemoryError`` (NumPy's) and ``RuntimeError`` (what torch's and JAX's out-of-memory errors are).
    Shapes of more than ``arguments.MAX_ELEMENTS`` elements are refused before, with
    InvalidArgumentError; dask builds its graph without allocating (the error comes when computed)."""


#: problem -> (what is wrong with the matrix, the way out)
_LINALG_PROBLEMS: dict[str, tuple[str, str]] = {
    "singular": ("is singular (to working precision), so it has no inverse",
                 "use linalg.pinv for a least-squares answer, or check linalg.matrix_rank first"),
    "not_positive_definite": ("is not positive definite, so it has no Cholesky factor",
                              "use linalg.eigh for symmetric indefinite matrices, or add a small multiple of the "
                              "identity"),
    "not_finite": ("holds NaN or inf, so no decomposition of it exists",
                   "replace them first, e.g. arraylayer.where(arraylayer.isfinite(x), x, 0)"),
}


def linalg_error(function: str, problem: str) -> LinAlgError:
    """The :class:`LinAlgError` of ``linalg.<function>`` for ``problem`` (a key of the table above)."""
    what, fix = _LINALG_PROBLEMS[problem]
    return LinAlgError(f"linalg.{function}: the input {what}; {fix}. (Under jax.jit, tf.function and "
                       f"torch.compile such matrices give NaN: test the result with arraylayer.isnan.)")


def unknown_lengths_error(what: str, shape: tuple[Any, ...]) -> InvalidArgumentError:
    """The error for what dask refuses on an array whose lengths are unknown (nan), with the fix."""
    return InvalidArgumentError(
        f"{what} of shape {tuple(shape)}: dask cannot do this on an array whose lengths are unknown (nan) until "
        f"computed (after a boolean mask, nonzero or unique_*). Call x.compute_chunk_sizes() on the dask array "
        f"first (on an arraylayer.Array: x.native.compute_chunk_sizes(); it computes).")


class DistributedError(ArrayLayerError, RuntimeError):
    """A collective of ``arraylayer.distributed`` that cannot complete: the world is not initialised,
    a peer is gone, or the engine failed. Subclasses ``RuntimeError``, as torch.distributed's errors do."""


class DistributedMismatchError(DistributedError, ValueError):
    """The ranks called a collective with trees, shapes, dtypes or operations that differ. Raised on
    every rank (each compares the signatures of all ranks), never a hang."""


class DistributedTimeoutError(DistributedError, TimeoutError):
    """A collective did not complete within its timeout (a rank that never called it, or a dead peer)."""
