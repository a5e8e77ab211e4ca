"""What arraylayer does when a framework is imported: never importing one, it watches for
their imports (a meta-path finder that wraps the real loader) and runs :data:`PREPARE`'s
entry right after the module has executed, or at once if it already had.

- ``jax`` and ``einops``: ``arraylayer.Array`` is registered with them (a JAX pytree node,
  an einops backend; ``arraylayer.integrations``).

The first arraylayer call in a process may happen inside ``jax.jit``, ``tf.function`` or
``torch.compile(fullgraph=True)``. JAX traces Python as it is, so nothing is needed there.
The other two need arraylayer prepared before they trace, and this module does it when
the framework's compiler is imported (at once if it already is), never importing one:

- ``tensorflow``: AutoGraph is told to leave arraylayer's functions alone (no conversion,
  no warnings), and arraylayer's exceptions pass through it as themselves instead of
  being rewrapped as ``StagingError``.
- ``torch._dynamo`` (imported by the first ``torch.compile``, never by arraylayer): the
  functions that read a setting are marked as constant results (read once per trace: Dynamo
  cannot trace ``ContextVar.get``), the torch backend is loaded and ``torch.Tensor``
  classified, so Dynamo never meets the imports, entry points and ``ContextVar`` reads of a
  first use, which it cannot trace; and a settings scope that a
  trace entered and did not leave (the trace stopped inside the ``with`` block) is left when
  trace attempt ends (``context.at_trace_end``; Dynamo abandons an attempt at a graph break
  and traces the frame again, which must not see the scope's value before the block); and
  :class:`~arraylayer.Dtype` is made one of Dynamo's constant types (as ``torch.dtype`` is), so
  its comparisons, hashes and attributes are evaluated while tracing instead of breaking the graph,
  ``Dtype(...)`` of constants is folded as ``torch.device(...)`` is, and its repr
  (``arraylayer.float32``) is readable in Dynamo's guards as ``torch.float32`` is; and
  ``al.torch_guard_filter`` is made the guard filter of every ``torch.compile`` given none
  (``guard_filter.install_as_default``), so that a plain compile checks no guard on arraylayer's
  own state but ``context.EPOCH``.

Nothing here runs per call.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from types import FunctionType, SimpleNamespace
from typing import Any, Final


def _leave_arraylayer_to_autograph() -> None:
    from tensorflow.python.autograph.core import config

    from arraylayer.errors import ArrayLayerError

    if not any(getattr(rule, "name", None) == "arraylayer" for rule in config.CONVERSION_RULES):
        config.CONVERSION_RULES = (config.DoNotConvert("arraylayer"), *config.CONVERSION_RULES)
    # AutoGraph re-raises an exception carrying this attribute unchanged (impl/api.py).
    ArrayLayerError.ag_pass_through = True


#: The functions whose traced twins Dynamo already has (context.TRACED_TWINS).
_SUBSTITUTED: set[Callable[..., object]] = set()


def _release(version: str) -> tuple[int, ...]:
    """``"2.13.0+cpu"`` -> ``(2, 13)``."""
    return tuple(int(part) for part in version.split("+")[0].split(".")[:2] if part.isdigit())


def _load_torch_for_dynamo() -> None:
    from torch._dynamo.guards import CheckFunctionManager, _get_closure_vars
    from torch._dynamo.output_graph import OutputGraph
    from torch._dynamo.symbolic_convert import InstructionTranslator
    from torch._dynamo.utils import common_constant_types
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable

    from arraylayer.models import fused, leafwise
    from arraylayer.runtime.compiled_dispatch import prepare_for_dynamo
    from arraylayer.context import SETTING_READERS, TABLE_READERS, TRACED_TWINS, at_trace_end, epoch_reading
    from arraylayer.dtypes import Dtype, all_dtypes, all_low_precision_dtypes
    from arraylayer.runtime.guard_filter import install_as_default
    from arraylayer.runtime.registry import prepare_for_tracing

    common_constant_types.add(Dtype)  # immutable, one instance per dtype: Dynamo's own advice for such types
    UserDefinedClassVariable._constant_fold_classes().add(Dtype)  # Dtype("int32") is a constant
    # Guards name dict keys by repr (arraylayer.float32): the name reads a plain namespace of every dtype,
    # not the package, whose __getattr__ refuses a dtype the active backend lacks (uint16 on torch).
    _get_closure_vars()[__name__.partition(".")[0]] = SimpleNamespace(**{str(d): d for d in (*all_dtypes, *all_low_precision_dtypes)})

    torch = sys.modules["torch"]
    for reader in SETTING_READERS:  # read at trace time, as constants (Dynamo cannot trace ContextVar.get),
        torch.compiler.assume_constant_result(reader)  # through a twin that reads context.EPOCH
        if reader not in _SUBSTITUTED:
            copy = FunctionType(reader.__code__, reader.__globals__, reader.__name__, reader.__defaults__,
                                reader.__closure__)
            twin = epoch_reading(torch.compiler.assume_constant_result(copy))
            torch._dynamo.substitute_in_graph(reader, skip_signature_check=True)(twin)
            _SUBSTITUTED.add(reader)
    # and the import-time tables: no guard on each key looked at. Only where verified (torch 2.13): the
    # Dynamo of torch 2.11 (seen on a GPU machine's image) refuses a Policy argument of a constant result
    # ("UserDefinedObjectVariable(Policy) is not a constant"); there the readers are traced and guarded.
    if _release(torch.__version__) >= (2, 13):
        for reader in TABLE_READERS:
            torch.compiler.assume_constant_result(reader)
    for eager in TRACED_TWINS.keys() - _SUBSTITUTED:  # once per process: Dynamo refuses a second rule
        torch._dynamo.substitute_in_graph(eager)(TRACED_TWINS[eager])
        _SUBSTITUTED.add(eager)
    prepare_for_tracing(torch.Tensor, torch.nn.Parameter)
    fused.table("torch")  # filled before the first trace reads it (else the second call compiles again)
    leafwise.prepare("torch")  # likewise: a traced optimizer update reads torch's multi-tensor kernels from it
    prepare_for_dynamo()  # the compiled element-wise functions: Dynamo traces their Python twins
    if not (hasattr(InstructionTranslator, "current_tx") and hasattr(OutputGraph, "add_cleanup_hook")):
        raise AttributeError("torch._dynamo has no per-attempt cleanup hooks")
    at_trace_end(_after_this_attempt)
    install_as_default(CheckFunctionManager)  # last: a torch without the hook has the rest prepared


def _after_this_attempt(cleanup: Callable[[], None]) -> None:
    """Run ``cleanup`` when Dynamo's current trace attempt ends (its output graph's cleanup hooks
    run after every attempt, kept or abandoned)."""
    from torch._dynamo.symbolic_convert import InstructionTranslator

    InstructionTranslator.current_tx().output.add_cleanup_hook(cleanup)


def _integration(name: str) -> Callable[[], None]:
    """Importing ``arraylayer.integrations.<name>``, which registers Array with its library."""

    def register() -> None:
        importlib.import_module(f"arraylayer.integrations.{name}")

    return register


#: module -> what to do once it is imported.
PREPARE: Final[dict[str, Callable[[], None]]] = {
    "tensorflow": _leave_arraylayer_to_autograph,
    "torch._dynamo": _load_torch_for_dynamo,
    "jax": _integration("jax_pytree"),
    "einops": _integration("einops"),
}


_CONSEQUENCE: Final = {"tensorflow": "the first arraylayer call inside tf.function may fail to trace",
                       "torch._dynamo": "the first arraylayer call inside torch.compile may fail to trace"}


def _run(module: str) -> None:
    try:
        PREPARE[module]()
    except Exception as error:  # a framework version without the hooks used: say so, never break its import
        warnings.warn(f"arraylayer could not prepare for {module} ({type(error).__name__}: {error}); "
                      f"{_CONSEQUENCE.get(module, 'arraylayer.Array will not work with it')}.",
                      RuntimeWarning, stacklevel=2)


class _AfterImport:
    """Finds nothing itself: wraps the real loader of a watched module so that its
    preparation runs right after the module has executed. (A meta path finder needs only
    ``find_spec``; importlib.abc's base class would import importlib.resources, ~20 ms.)"""

    def __init__(self, modules: set[str]) -> None:
        self.waiting = modules

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.waiting:
            return None
        # still waiting until the module executes: importlib.util.find_spec (installed_backends
        # asks it) finds a spec without importing anything
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            if fullname in self.waiting:
                self.waiting.discard(fullname)
                _run(fullname)

        loader.exec_module = exec_module
        return spec


def install() -> None:
    """Prepare for each compiler already imported; watch for the others (called once, at import)."""
    waiting = set()
    for module in PREPARE:
        if module in sys.modules:
            _run(module)
        else:
            waiting.add(module)
    if waiting:
        sys.meta_path.insert(0, _AfterImport(waiting))
