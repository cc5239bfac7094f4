"""Optimisers: update parameters from their ``.grad`` (``ng.optim.SGD``, ``ng.optim.Adam``,
``RMSprop``, ``Adagrad``); schedules of the learning rate in ``ng.optim.lr_scheduler``."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..dynamic.grad_mode import enable_grad
from ..dynamic.tensor import Tensor


class Optimizer:
    """Holds parameters; ``zero_grad()`` clears their gradients, ``step()`` updates them."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], defaults: dict) -> None:
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = defaults
        self.param_groups = [_param_group(group, defaults) for group in groups]
        _refuse_shared(self.param_groups)
        self.state: dict[int, dict] = {}

    def add_param_group(self, param_group: dict) -> None:
        """Optimise more parameters, with their own settings (missing ones from defaults)."""
        group = _param_group(param_group, self.defaults)
        _refuse_shared(self.param_groups + [group])
        self.param_groups.append(group)

    def _params(self) -> list[Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def state_dict(self) -> dict:
        """The optimiser's state as torch lays it out: ``{"state": {index: {...}},
        "param_groups": [{..., "params": [indices]}]}``, parameters named by position.
        Saved with ``ng.save`` and restored with ``load_state_dict``, training resumes
        exactly.

        >>> import naivegraph as ng
        >>> w = ng.tensor([1.0], requires_grad=True)
        >>> opt = ng.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = ng.tensor([2.0]); opt.step()
        >>> opt.state_dict()["state"]
        {0: {'momentum_buffer': tensor([2.])}}
        """
        index = {id(p): i for i, p in enumerate(self._params())}
        state = {
            index[key]: {name: _export(value) for name, value in entry.items()}
            for key, entry in self.state.items()
            if key in index
        }
        groups = [
            dict(
                {k: v for k, v in g.items() if k != "params"},
                params=[index[id(p)] for p in g["params"]],
            )
            for g in self.param_groups
        ]
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict()``: settings of each group and per-parameter state.

        Everything is checked before anything changes: the number and sizes of the
        groups, and the shape of every saved buffer.
        """
        groups, state = self._checked_state(state_dict)
        params = self._params()
        self.state = {
            id(params[int(i)]): {name: _import(value) for name, value in entry.items()}
            for i, entry in state.items()
        }
        for group, saved in zip(self.param_groups, groups):
            group.update({k: v for k, v in saved.items() if k != "params"})

    def _checked_state(self, state_dict) -> tuple[list, dict]:
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError(
                "optimizer state_dict must be a dict with the keys 'state' and "
                "'param_groups', as optimizer.state_dict() returns"
            )
        groups, state = state_dict["param_groups"], state_dict["state"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(own["params"]) for g, own in zip(groups, self.param_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match "
                "the size of optimizer's group"
            )
        params = self._params()
        for i, entry in state.items():
            if not 0 <= int(i) < len(params):
                raise ValueError(
                    f"loaded state dict has state for parameter {i}, but the "
                    f"optimizer has {len(params)} parameters"
                )
            for name, value in entry.items():
                shape = np.shape(_import(value))
                if shape not in ((), params[int(i)].shape):
                    raise ValueError(
                        f"loaded state dict has {name} of shape {shape} for "
                        f"parameter {i} of shape {tuple(params[int(i)].shape)}"
                    )
        return groups, state

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p._grad = None
                elif p._grad is not None:
                    p._grad._data[...] = 0

    @staticmethod
    def _evaluate(closure):
        """torch's ``step(closure)``: the closure (which recomputes the loss, and usually
        its gradients) runs with grad mode on, before the update; its loss is returned."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _updates(self):
        """(parameter, gradient array, group settings, state) for every parameter that
        has a grad.  A setting given as a numpy number (``lr=np.float64(0.1)``) is used
        as the Python number it holds, as torch turns every setting into a scalar: a
        numpy float64 would otherwise carry a float32 parameter's update to float64."""
        for group in self.param_groups:
            settings = {k: v.item() if isinstance(v, np.generic) else v for k, v in group.items()}
            for p in group["params"]:
                if p._grad is not None:
                    yield p, p._grad._data, settings, self.state.setdefault(id(p), {})

    @staticmethod
    def _write(p: Tensor, delta: np.ndarray) -> None:
        p._data -= delta.astype(p._data.dtype, copy=False)
        p._counter().value += 1  # an in-place change, as torch's optimisers make
        if p._views:  # a write without grad: the views' histories, as after any other
            p._rebase_views()


def _param_group(group: dict, defaults: dict) -> dict:
    """A checked parameter group: its parameters as a list, every setting filled in."""
    if not isinstance(group, dict) or "params" not in group:
        raise TypeError(
            "a parameter group is a dict with a 'params' entry, e.g. "
            "{'params': model.parameters(), 'lr': 0.01}"
        )
    params = group["params"]
    params = [params] if isinstance(params, Tensor) else list(params)
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"optimizer can only optimize Tensors, got {type(p).__name__}")
        if not p.is_leaf:
            raise ValueError("can't optimize a non-leaf Tensor")
    return dict(defaults, **{k: v for k, v in group.items() if k != "params"}, params=params)


def _refuse_shared(groups: list[dict]) -> None:
    ids = [id(p) for group in groups for p in group["params"]]
    if len(ids) != len(set(ids)):
        raise ValueError("some parameters appear in more than one parameter group")


def _store(state: dict, name: str, value: np.ndarray) -> np.ndarray:
    """``state[name] = value``, written into the array already there when it fits: the
    tensors of an earlier ``state_dict()`` share it and see each step, as torch's do."""
    old = state.get(name)
    if (
        isinstance(old, np.ndarray)
        and old.shape == np.shape(value)
        and old.dtype == np.result_type(value)
        and old.flags.writeable
    ):
        old[...] = value
        return old
    state[name] = value
    return value


def _export(value):
    """A state entry for state_dict: an array becomes a tensor sharing it (torch's
    state_dict holds references to the live state, not copies), numbers stay."""
    return Tensor._make(value, False, None, 0) if isinstance(value, np.ndarray) else value


def _import(value):
    """A state entry from a state dict: tensors become arrays (copies)."""
    return np.array(value._data, copy=True) if isinstance(value, Tensor) else value


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum (with dampening or Nesterov),
    weight decay, and ``maximize`` (ascend instead), as ``torch.optim.SGD`` computes it.

    >>> import naivegraph as ng
    >>> w = ng.tensor([1.0], requires_grad=True)
    >>> opt = ng.optim.SGD([w], lr=0.1, momentum=0.9, dampening=0.5)
    >>> for _ in range(2):
    ...     w.grad = ng.tensor([2.0]); opt.step()
    >>> w  # buffers 2.0, then 0.9 * 2.0 + 0.5 * 2.0
    tensor([0.5200], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
    ) -> None:
        # torch's checks, with its messages (a NaN passes them, as in torch)
        for name, value in (
            ("learning rate", lr),
            ("momentum value", momentum),
            ("weight_decay value", weight_decay),
        ):
            if value < 0:
                raise ValueError(f"Invalid {name}: {value}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
            ),
        )

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for p, g, group, state in self._updates():
            if group["maximize"]:
                g = -g
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            if group["momentum"]:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = g.copy()
                else:
                    buf = buf * group["momentum"] + (1 - group["dampening"]) * g
                buf = _store(state, "momentum_buffer", buf)
                g = g + group["momentum"] * buf if group["nesterov"] else buf
            self._write(p, group["lr"] * g)
        return loss


class Adam(Optimizer):
    """Adam (Kingma & Ba), with PyTorch's defaults; ``amsgrad`` divides by the largest
    second moment seen so far, ``maximize`` ascends, as in ``torch.optim.Adam``.

    >>> import naivegraph as ng
    >>> w = ng.tensor([1.0], dtype=ng.float64, requires_grad=True)
    >>> opt = ng.optim.Adam([w], lr=0.1, maximize=True)
    >>> w.grad = ng.tensor([2.0], dtype=ng.float64); opt.step(); round(w.item(), 6)
    1.1
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        for name, value in (("learning rate", lr), ("epsilon value", eps)):
            _check_positive(name, value)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        _check_positive("weight_decay value", weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
            ),
        )

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for p, g, group, state in self._updates():
            if group["maximize"]:
                g = -g
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            beta1, beta2 = group["betas"]
            t = state["step"] = state.get("step", 0) + 1
            m = _store(state, "exp_avg", beta1 * state.get("exp_avg", 0.0) + (1 - beta1) * g)
            v = beta2 * state.get("exp_avg_sq", 0.0) + (1 - beta2) * g * g
            v = _store(state, "exp_avg_sq", v)
            if group["amsgrad"]:
                v = _store(state, "max_exp_avg_sq", np.maximum(state.get("max_exp_avg_sq", v), v))
            m_hat = m / (1 - beta1**t)
            v_hat = v / (1 - beta2**t)
            self._write(p, group["lr"] * m_hat / (np.sqrt(v_hat) + group["eps"]))
        return loss


def _check_positive(name: str, value: float) -> None:
    if not value >= 0.0:
        raise ValueError(f"Invalid {name}: {value}")


def _lerp(start: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """``torch.lerp``, in the same two forms so that the rounding is the same."""
    if weight < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


class RMSprop(Optimizer):
    """RMSprop (Hinton), with PyTorch's defaults and update, step for step.

    ``v = alpha * v + (1 - alpha) * g^2``;  ``p -= lr * g / (sqrt(v) + eps)``
    (``centered`` divides by the estimated variance instead; ``momentum`` keeps a buffer).

    >>> import naivegraph as ng
    >>> w = ng.tensor([1.0], requires_grad=True)
    >>> opt = ng.optim.RMSprop([w], lr=0.1)
    >>> w.grad = ng.tensor([2.0]); opt.step(); round(w.item(), 4)  # 1 - 0.1 * 2 / sqrt(0.04)
    0.0
    """

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
    ) -> None:
        for name, value in (
            ("learning rate", lr),
            ("epsilon value", eps),
            ("momentum value", momentum),
            ("weight_decay value", weight_decay),
            ("alpha value", alpha),
        ):
            _check_positive(name, value)
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
            ),
        )

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for p, g, group, state in self._updates():
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            alpha = group["alpha"]
            state["step"] = state.get("step", 0) + 1
            square_avg = (
                state.get("square_avg", np.zeros_like(p._data)) * alpha + (1 - alpha) * g * g
            )
            square_avg = _store(state, "square_avg", square_avg)
            if group["centered"]:
                grad_avg = _lerp(state.get("grad_avg", np.zeros_like(p._data)), g, 1 - alpha)
                grad_avg = _store(state, "grad_avg", grad_avg)
                avg = np.sqrt(square_avg - grad_avg * grad_avg) + group["eps"]
            else:
                avg = np.sqrt(square_avg) + group["eps"]
            if group["momentum"] > 0:
                buf = state.get("momentum_buffer", np.zeros_like(p._data))
                buf = buf * group["momentum"] + g / avg
                buf = _store(state, "momentum_buffer", buf)
                self._write(p, group["lr"] * buf)
            else:
                self._write(p, group["lr"] * (g / avg))
        return loss


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), with PyTorch's defaults and update, step for step.

    ``s += g^2``;  ``p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)``.

    >>> import naivegraph as ng
    >>> w = ng.tensor([1.0], requires_grad=True)
    >>> opt = ng.optim.Adagrad([w], lr=0.5)
    >>> w.grad = ng.tensor([2.0]); opt.step(); round(w.item(), 4)  # 1 - 0.5 * 2 / 2
    0.5
    """

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
    ) -> None:
        for name, value in (
            ("learning rate", lr),
            ("lr_decay value", lr_decay),
            ("weight_decay value", weight_decay),
            ("initial_accumulator_value value", initial_accumulator_value),
            ("epsilon value", eps),
        ):
            _check_positive(name, value)
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                eps=eps,
            ),
        )
        for group in self.param_groups:  # filled at once, as torch does
            for p in group["params"]:
                self.state[id(p)] = {
                    "step": 0,
                    "sum": np.full_like(p._data, group["initial_accumulator_value"]),
                }

    def step(self, closure=None):
        loss = self._evaluate(closure)
        for p, g, group, state in self._updates():
            if "sum" not in state:  # a parameter of a group added later
                state["sum"] = np.full_like(p._data, group["initial_accumulator_value"])
            t = state["step"] = state.get("step", 0) + 1
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            clr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
            _store(state, "sum", state["sum"] + g * g)
            self._write(p, clr * (g / (np.sqrt(state["sum"]) + group["eps"])))
        return loss


from . import lr_scheduler  # noqa: E402  (the schedulers need Optimizer defined above)

__all__ = ["Adagrad", "Adam", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
