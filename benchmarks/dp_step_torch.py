"""The torch steps of bench_dp_step.py (torch.distributed's gloo engine): arraylayer's ``data_parallel``
Adam against ``DistributedDataParallel`` with ``torch.optim.Adam``, eagerly or (``--compile``) both
under ``torch.compile``.

Eager cases: ``arraylayer`` (``al.value_and_grad`` then ``data_parallel(adam).update``: the gradient
tree all-reduced in one call, its signature exchanged first), ``ddp``, ``unchecked`` (the same step with
the engine's all-reduce called directly, no signature exchange: what the check costs) and ``alone`` (plain
Adam, no all-reduce: the local part). Compiled cases: ``arraylayer`` (the whole step in one
``torch.compile(fullgraph=True)``: functional collectives, the in-graph signature check), ``ddp``
(``torch.compile`` of the DDP model, and of ``opt.step`` as torch's tutorial compiles an optimizer) and
``alone`` (the compiled step without the all-reduce).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dp_step_model import SIZES, batch, initial, interleaved, layers, loss_fn, report

import arraylayer as al
import arraylayer.distributed as dist
from arraylayer.distributed.world import current
from arraylayer.models.tree import tree_flatten


def _params() -> dict[str, Any]:
    import torch

    return {k: torch.from_numpy(v.copy()) for k, v in initial().items()}


def _unchecked_mean(grads: Any) -> Any:
    """The gradients averaged by the engine's own all-reduce, without arraylayer's signature exchange."""
    world = current()
    leaves, rebuild = tree_flatten(grads)
    total = world.engine.all_reduce(world.rank, world.size, leaves, "sum", world.timeout)
    return rebuild([t / world.size for t in total])


def arraylayer_step(x: Any, y: Any, average: Callable[[Any], Any] | None, compiled: bool = False) -> Callable[[], float]:
    """``average`` the gradients (None: data_parallel's own all_reduce) then Adam; ``compiled``: one graph."""
    import torch

    adam = al.optim.adam()  # dp_step_model.RATE is its default, 1e-3
    opt = dist.data_parallel(adam) if average is None else adam

    def update(p: Any, state: Any) -> tuple[Any, Any, Any]:
        loss, grads = al.value_and_grad(loss_fn)(p, x, y)
        grads = grads if average is None else average(grads)
        return (loss, *opt.update(grads, state, p))

    run = torch.compile(update, fullgraph=True) if compiled else update
    carry = [_params()]
    carry.append(opt.init(carry[0]))

    def step() -> float:
        loss, carry[0], carry[1] = run(carry[0], carry[1])
        return float(loss)

    return step


def ddp_step(x: Any, y: Any, compiled: bool = False) -> Callable[[], float]:
    import torch
    from torch.nn.parallel import DistributedDataParallel

    p = initial()
    modules: list[Any] = []
    for i in range(layers()):
        linear = torch.nn.Linear(SIZES[i], SIZES[i + 1])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(p[f"w{i}"].T.copy()))
            linear.bias.copy_(torch.from_numpy(p[f"b{i}"]))
        modules += [linear, torch.nn.Tanh()]
    model = DistributedDataParallel(torch.nn.Sequential(*modules[:-1]))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    forward = torch.compile(model) if compiled else model
    apply = torch.compile(opt.step) if compiled else opt.step

    def step() -> float:
        opt.zero_grad()
        loss = torch.mean((forward(x) - y) ** 2)
        loss.backward()
        apply()
        return loss.item()

    return step


def run(compiled: bool) -> None:
    """The eager cases, or (``compiled``) the torch.compile ones; rank 0 reports."""
    import torch

    x, y = (torch.from_numpy(a) for a in batch())
    if compiled:
        cases = {"arraylayer": arraylayer_step(x, y, None, compiled=True), "ddp": ddp_step(x, y, compiled=True),
                 "alone": arraylayer_step(x, y, lambda g: g, compiled=True)}
    else:
        cases = {"arraylayer": arraylayer_step(x, y, None), "ddp": ddp_step(x, y),
                 "unchecked": arraylayer_step(x, y, _unchecked_mean), "alone": arraylayer_step(x, y, lambda g: g)}
    results = interleaved(cases, ("ddp", "arraylayer") + (() if compiled else ("unchecked",)))
    report("torch", "compile" if compiled else "eager", "arraylayer", "ddp", results)
