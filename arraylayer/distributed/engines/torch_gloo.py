"""torch.distributed with gloo: the engine of torch, NumPy and dask worlds (and of none named).

Leaves of any backend travel as torch tensors (zero-copy from NumPy); bools as uint8, complex numbers
as (real, imag) pairs, and the integers gloo lacks through wider ones (``_wire``), all exact. Each
collective is asynchronous and waited on with the timeout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import arraylayer as al
from arraylayer.distributed.engines.common import as_numpy, env, fail, timedelta
from arraylayer.errors import DistributedError

__all__ = ["launch_envs", "join", "leave", "gather_digest", "all_reduce", "all_gather", "broadcast"]


def launch_envs(ranks: range, world: int, addr: str, ports: list[int]) -> list[dict[str, str]]:
    """Nothing beyond the launcher's MASTER_ADDR / MASTER_PORT, which gloo's TCP store uses."""
    return [{} for _ in ranks]


def join(rank: int, size: int, timeout: float) -> None:
    import torch.distributed as dist

    addr = env("ARRAYLAYER_MASTER_ADDR", "MASTER_ADDR") or "127.0.0.1"
    port = env("ARRAYLAYER_MASTER_PORT", "MASTER_PORT")
    if port is None:
        raise DistributedError("WORLD_SIZE > 1 but no MASTER_PORT: start the script with "
                               "'python -m arraylayer launch' or torchrun.")
    try:
        dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=rank, world_size=size,
                                timeout=timedelta(timeout))
    except Exception as error:  # the store's own timeout or a refused connection
        raise DistributedError(f"rank {rank} could not join the world of {size} at {addr}:{port}: {error}") from error


def leave() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def _wait(work: Any, rank: int, what: str, timeout: float) -> None:
    try:
        work.wait(timeout=timedelta(timeout))
    except Exception as error:
        fail(error, rank, what, timeout)


def _tensor(x: Any, copy: bool = True) -> Any:
    """``x`` as a torch tensor: a copy the collective may write into, or (``copy=False``) a read-only view
    of a torch leaf (the collective then writes into a buffer of its own)."""
    import torch

    if isinstance(x, torch.Tensor):
        return x.detach().clone() if copy else x.detach()
    host = as_numpy(x)
    if host.dtype.kind not in "biufc":  # ml_dtypes' bfloat16, which torch.from_numpy refuses: arraylayer's move
        return al.to_backend(host, "torch").clone()
    return torch.from_numpy(np.array(host))


#: torch dtype -> the wider dtype it travels as (gloo refuses it: "Invalid scalar type"); each cast back is exact
_WIDER = {"int16": "int32", "uint16": "int32", "uint32": "int64"}
_ORDERED = ("max", "min")


def _name(t: Any) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _flip(bits: Any) -> Any:
    """uint64 bits as int64 with the sign bit flipped: the order of the unsigned values (for max and min)."""
    import torch

    return torch.bitwise_xor(bits, torch.tensor(torch.iinfo(torch.int64).min, dtype=torch.int64))


def _wire(t: Any, op: str = "sum") -> Any:
    """``t`` in a dtype gloo carries: bools as uint8, complex numbers as (real, imag) pairs, int16 / uint16
    as int32, uint32 as int64, uint64 as its int64 bits (sign bit flipped for max and min)."""
    import torch

    name = _name(t)
    if t.dtype == torch.bool:
        return t.to(torch.uint8)
    if t.is_complex():
        return torch.view_as_real(t)
    if name in _WIDER:
        return t.to(getattr(torch, _WIDER[name]))
    if name == "uint64":
        bits = t.view(torch.int64)
        return _flip(bits) if op in _ORDERED else bits
    return t


def _unwire(w: Any, like: Any, op: str = "sum") -> Any:
    import torch

    name = _name(like)
    if like.dtype == torch.bool:
        return w.to(torch.bool)
    if like.is_complex():  # not view_as_complex: a part of a flat buffer may start at an odd offset
        return torch.complex(w[..., 0], w[..., 1])
    if name in _WIDER:
        return w.to(like.dtype)  # modular: a sum wraps as the narrow dtype does
    if name == "uint64":
        return (_flip(w) if op in _ORDERED else w).view(torch.uint64)
    return w


def gather_digest(rank: int, size: int, digest: bytes, timeout: float) -> list[bytes]:
    import torch
    import torch.distributed as dist

    mine = torch.frombuffer(bytearray(digest), dtype=torch.uint8).clone()
    rows = [torch.empty_like(mine) for _ in range(size)]
    _wait(dist.all_gather(rows, mine, async_op=True), rank, "the signature exchange", timeout)
    return [row.numpy().tobytes() for row in rows]


def all_reduce(rank: int, size: int, leaves: list, op: str, timeout: float) -> list:
    """One all-reduce per wire dtype: the leaves of a dtype travel concatenated in one flat buffer (as
    DDP's buckets do), so a tree costs one round trip per dtype, not one per leaf. The concatenation is
    the one copy of the leaves (a torch leaf is read in place, never cloned first)."""
    import torch
    import torch.distributed as dist

    reduce_op = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[op]
    tensors = [_tensor(x, copy=False) for x in leaves]
    wires = [_wire(t, op) for t in tensors]
    groups: dict[Any, list[int]] = {}
    for i, w in enumerate(wires):
        groups.setdefault(w.dtype, []).append(i)
    for members in groups.values():
        flat = torch.cat([wires[i].reshape(-1) for i in members])
        _wait(dist.all_reduce(flat, reduce_op, async_op=True), rank, f"all_reduce[{op}]", timeout)
        for i, part in zip(members, flat.split([wires[i].numel() for i in members]), strict=True):
            wires[i] = part.reshape(wires[i].shape)
    return [_unwire(w, t, op).to(t.dtype) for w, t in zip(wires, tensors, strict=True)]


def all_gather(rank: int, size: int, leaves: list, timeout: float) -> list:
    import torch
    import torch.distributed as dist

    out = []
    for x in leaves:
        t = _tensor(x, copy=False)  # only read: the rows are new buffers
        wire = _wire(t)
        rows = [torch.empty_like(wire) for _ in range(size)]
        _wait(dist.all_gather(rows, wire, async_op=True), rank, "all_gather", timeout)
        out.append(_unwire(torch.stack(rows), t))
    return out


def broadcast(rank: int, size: int, leaves: list, root: int, timeout: float) -> list:
    import torch.distributed as dist

    out = []
    for x in leaves:
        t = _tensor(x)
        wire = _wire(t)
        _wait(dist.broadcast(wire, src=root, async_op=True), rank, "broadcast", timeout)
        out.append(_unwire(wire, t))
    return out
