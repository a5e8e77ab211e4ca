"""One device vocabulary for every backend: ``"cpu"``, ``"gpu:N"``, ``"tpu:N"``.

Adapters map these strings to their framework's device objects. The default device
is a :class:`~arraylayer.context.Setting` (None: each framework's own default).
"""

from __future__ import annotations

import re
from typing import Any, Final

from arraylayer.context import Setting, reads_setting
from arraylayer.errors import DeviceError

__all__ = ["parse_device", "default_device", "set_default_device", "use_device", "DEVICE_KINDS"]

DEVICE_KINDS: Final = ("cpu", "gpu", "tpu")
_PATTERN: Final = re.compile(r"^(cpu|gpu|tpu)(?::(\d+))?$")
# Spellings of other libraries, for the error's suggestion.
_FOREIGN: Final = {"cuda": "gpu", "mps": "gpu", "xla": "tpu", "/cpu": "cpu", "/gpu": "gpu", "/device:gpu": "gpu",
                   "/device:cpu": "cpu"}


# A TensorFlow device string: "/device:GPU:0", "/job:localhost/replica:0/task:0/device:CPU:0".
_TENSORFLOW: Final = re.compile(r"^(?:/job:[^/]+/replica:\d+/task:\d+)?/device:(cpu|gpu|tpu):(\d+)$")
# The platform names of the frameworks' device objects (torch.device.type, jax.Device.platform).
_PLATFORMS: Final = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "rocm": "gpu", "tpu": "tpu"}


def _framework_device(device: Any) -> str | None:
    """The arraylayer spelling of a framework's own device: a torch.device, a jax.Device or a
    TensorFlow device string; None for anything else."""
    if isinstance(device, str):
        match = _TENSORFLOW.match(device.lower())
        return None if match is None else f"{match.group(1)}:{match.group(2)}"
    platform = getattr(device, "type", None) or getattr(device, "platform", None)  # torch, then jax
    kind = _PLATFORMS.get(platform) if isinstance(platform, str) else None
    if kind is None:
        return None
    index = getattr(device, "index", None) if hasattr(device, "type") else getattr(device, "id", 0)
    return f"{kind}:{index or 0}"


def parse_device(device: Any) -> tuple[str, int]:
    """``"gpu:1"`` -> ``("gpu", 1)``; ``"gpu"`` means ``"gpu:0"``. The frameworks' own device
    objects are accepted too (``torch.device("cuda", 1)``, a ``jax.Device``, TensorFlow's
    ``"/device:GPU:1"``). Raises DeviceError otherwise."""
    match = _PATTERN.match(device.lower()) if isinstance(device, str) else None
    if match is None:
        native = _framework_device(device)
        match = None if native is None else _PATTERN.match(native)
    if match is None:
        text = str(device).lower()
        kind = next((ours for theirs, ours in _FOREIGN.items() if text.startswith(theirs)), None)
        index = re.findall(r"\d+", text)
        hint = f" Did you mean {kind}:{index[-1] if index else 0!s}?" if kind else ""
        raise DeviceError(
            f"{device!r} is not an arraylayer device.{hint} Devices are written 'cpu', 'gpu:N' or 'tpu:N'."
        )
    return match.group(1), int(match.group(2) or 0)


def canonical_device(device: Any) -> str:
    """The canonical spelling: ``"cpu"``, ``"gpu:0"``, ``"tpu:1"``."""
    kind, index = parse_device(device)
    return "cpu" if kind == "cpu" else f"{kind}:{index}"


def _validate(device: Any) -> str | None:
    return None if device is None else canonical_device(device)


DEVICE: Final = Setting("default_device", None, _validate)


@reads_setting
def default_device() -> str | None:
    """The device creation functions use when none is given (None: the framework's default)."""
    return DEVICE.var.get(DEVICE.process)


def set_default_device(device: str | None) -> str | None:
    """Set the process-wide default device (None restores each framework's own default)."""
    return DEVICE.set_process(device)


def use_device(device: str | None):  # type: ignore[no-untyped-def]
    """Context manager: the default device for this thread or task, inside the block."""
    return DEVICE.scope(device)
