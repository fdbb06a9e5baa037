"""`Optimizer`: what SGD and Adam share: parameter groups, per-parameter state, saving both.

    opt = minitorch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

[Note: parameter groups and state]
An optimizer holds `param_groups`, a list of dicts: each has "params" (a list of tensors) and
every hyper-parameter ("lr", "momentum", ...), so that groups can differ (a smaller lr for the
first layers, no weight decay for biases). Hyper-parameters a group does not name come from the
optimizer's `defaults`. `state` maps a parameter to what the method remembers about it between
steps (SGD's momentum buffer, Adam's moving averages), made on the first step that sees a grad.

`state_dict()` saves both with each parameter replaced by its position (0, 1, ... through the
groups in order), as PyTorch does, so that it loads into a fresh optimizer over a fresh model.

[Note: updating in place]
`step()` writes the new values into each parameter's own array (`p._data -= ...`) instead of
making new tensors, so the model, the optimizer and anyone else holding the parameter keep
seeing the same object. The arithmetic runs on the arrays themselves (numpy or cupy, whichever
holds the parameter), outside autograd: an update is never part of a graph. Going through the
in-place tensor ops (`p.sub_(...)` under no_grad, as PyTorch's code reads) would dispatch every
line of the formula, several times the cost of the arithmetic on small parameters.

The intermediates of a formula (m̂, √v̂ + ε, ...) go into scratch arrays the optimizer keeps
(`_scratch`), written with numpy's `out=`, instead of a fresh array per operation: each is as
large as the parameter, and the values are the same bits either way (the same operations on
the same operands, in the same order). Adam's step over a small MLP's parameters takes ~10%
less time so.

Like every in-place write, a step bumps the parameter's version counter (minitorch/tensor.py,
[Note: views]): a graph that saved the old value (`loss = model(x)`, then `step()`, then
`loss.backward()`) then refuses to run backward, as in PyTorch, instead of silently using the
new weights.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from minitorch.autograd import enable_grad
from minitorch.device import module_of, move
from minitorch.dtype import bfloat16, round_bfloat16_
from minitorch.errors import InvalidArgumentError, MinitorchError, at_user_line
from minitorch.tensor import Tensor


class Optimizer:
    """Base class: subclasses give `defaults`, `_check(group)` and `_update(p, state, group)`."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], defaults: dict) -> None:
        if isinstance(params, Tensor):
            raise MinitorchError(
                at_user_line(
                    "params argument given to the optimizer should be an iterable of Tensors or "
                    f"dicts, but got {params.__class__.__name__}"
                )
            )
        self.defaults = defaults
        self.param_groups: list[dict] = []
        self.state: dict[Tensor, dict] = {}
        self._opt_called = False  # has step() run? lr_scheduler warns if it steps first
        self._scratch_arrays: dict[tuple, list] = {}  # (shape, dtype, array module) -> arrays
        groups = list(params)
        if not groups:
            raise MinitorchError(at_user_line("optimizer got an empty parameter list"))
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (defaults fill the rest)."""
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, set):
            raise MinitorchError(
                at_user_line(
                    "optimizer parameters need to be organized in ordered collections, but the "
                    "ordering of tensors in sets changes between runs; use a list"
                )
            )
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise MinitorchError(
                    at_user_line(
                        f"optimizer can only optimize Tensors, but one of the params is "
                        f"{type(p).__name__}"
                    )
                )
            if not p.is_leaf:
                raise MinitorchError(at_user_line("can't optimize a non-leaf Tensor"))
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        ids = [id(p) for p in group["params"]]
        if len(set(ids)) != len(ids) or seen.intersection(ids):
            # It would be updated twice per step.
            raise MinitorchError(
                at_user_line(
                    "some parameters appear more than once in the optimizer's parameter groups"
                )
            )
        self._check(group)
        self.param_groups.append(group)

    # ---- the step ------------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient: `.grad = None`, or zeros when set_to_none=False."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    # The same grad tensor, holding a fresh array: writing zeros into the old
                    # one could fail, as a grad may be a read-only broadcast (sum's backward).
                    p.grad._data = module_of(p.grad._data).zeros_like(p.grad._data)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a `.grad`; returns `closure()` (the loss) if given.

        The closure re-runs the model and returns the loss, for methods that need it more than
        once per step (PyTorch's LBFGS); SGD and Adam call it once, before updating.
        """
        self._opt_called = True
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue  # not used by this loss: no update, and no state is made
                if group.get("capturable") and p.device.type != "cuda":
                    raise MinitorchError(
                        at_user_line(
                            f"{type(self).__name__}: If capturable=True, params and state_steps "
                            f"must be on supported devices: ['cuda'] (got a parameter on "
                            f"{p.device.type}; PyTorch refuses this step too)"
                        )
                    )
                self._update(p, self.state.setdefault(p, {}), group)
                if p.dtype is bfloat16:  # [Note: half precision] in minitorch/dtype.py
                    round_bfloat16_(p._data)
                p._shared_version_counter().value += 1  # [Note: updating in place]
        return loss

    def _scratch(self, like, count: int) -> list:
        """`count` arrays shaped like the array `like`, kept between calls: an update's
        intermediates, overwritten by the next parameter of the same shape
        ([Note: updating in place])."""
        xp = module_of(like)
        arrays = self._scratch_arrays.setdefault((like.shape, like.dtype, xp.__name__), [])
        while len(arrays) < count:
            arrays.append(xp.empty_like(like))
        return arrays[:count]

    def _check(self, group: dict) -> None:
        """Raise a MinitorchError for a hyper-parameter out of range."""
        check_nonnegative(group, "lr", "learning rate")

    def _update(self, p: Tensor, state: dict, group: dict) -> None:
        """Write the new value into `p._data`, reading `p.grad` and updating `state`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _update")

    # ---- saving and loading ----------------------------------------------------------------

    def state_dict(self) -> dict:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}.

        As in PyTorch, the state's tensors are the live ones (later steps change them); save a
        copy (`copy.deepcopy`) to keep a snapshot.
        """
        index: dict[int, int] = {}  # id(param) -> its position through all groups
        groups = []
        for group in self.param_groups:
            saved = {k: v for k, v in group.items() if k != "params"}
            saved["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(saved)
        state = {index[id(p)]: dict(s) for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyper-parameters and state saved by `state_dict()` (groups must match)."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise MinitorchError(
                at_user_line(
                    f"loaded state dict has {len(saved_groups)} parameter groups, but the "
                    f"optimizer has {len(self.param_groups)}"
                )
            )
        for i, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise MinitorchError(
                    at_user_line(
                        f"loaded state dict's parameter group {i} has {len(saved['params'])} "
                        f"parameters, but the optimizer's has {len(group['params'])}"
                    )
                )
        param_at = {
            i: p
            for saved, group in zip(saved_groups, self.param_groups)
            for i, p in zip(saved["params"], group["params"])
        }
        self.state = {
            param_at[i]: {name: _copy_like(v, param_at[i]) for name, v in s.items()}
            for i, s in state_dict["state"].items()
        }
        self.param_groups = [
            {**saved, "params": group["params"]}
            for saved, group in zip(saved_groups, self.param_groups)
        ]

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"


def implementation_flags(
    name: str,
    foreach: bool | None = None,
    fused: bool | None = None,
    capturable: bool = False,
    differentiable: bool = False,
) -> dict:
    """PyTorch's choice-of-implementation keywords, checked, as a group's defaults.

    foreach (one kernel per list of tensors), fused (one kernel for the whole step) and
    capturable (a step CUDA graphs can record) pick how PyTorch runs the same update; here
    every step is one loop over numpy arrays, so each is accepted and gives the same values.
    As in PyTorch, a capturable step refuses parameters that are not on cuda (step()).
    differentiable=True asks for a step autograd records, which this update (outside autograd,
    [Note: updating in place]) cannot give: it is refused by name.
    """
    if fused and foreach:
        raise MinitorchError(
            at_user_line(f"{name}: `fused` and `foreach` cannot be `True` together.")
        )
    if fused and differentiable:
        raise MinitorchError(at_user_line(f"{name}: `fused` does not support `differentiable`"))
    if differentiable:
        raise MinitorchError(
            at_user_line(
                f"{name}: differentiable=True is not supported here: minitorch's optimizer step "
                f"runs outside autograd, so no gradient can flow through it"
            )
        )
    return dict(foreach=foreach, fused=fused, capturable=capturable, differentiable=differentiable)


def check_nonnegative(group: dict, key: str, what: str) -> None:
    """A group's `key` must be >= 0: `Invalid learning rate: -0.1`."""
    if not group[key] >= 0:  # also refuses NaN
        raise InvalidArgumentError(at_user_line(f"Invalid {what}: {group[key]}"))


def _copy_like(value, p: Tensor):
    """A copy of a saved state value on `p`'s device; floating tensors also take p's dtype."""
    if not isinstance(value, Tensor):
        return value  # a step count, or another immutable number
    array = move(value._data, p.device)
    dtype = p._data.dtype if array.dtype.kind == "f" else array.dtype
    return Tensor._from_array(array.astype(dtype))  # astype copies: the saved dict stays as is
