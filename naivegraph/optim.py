"""Optimisers: update parameters from their ``.grad`` (``ng.optim.SGD``, ``ng.optim.Adam``)."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .dynamic.tensor import Tensor


class Optimizer:
    """Holds parameters; ``zero_grad()`` clears their gradients, ``step()`` updates them."""

    def __init__(self, params: Iterable[Tensor], defaults: dict) -> None:
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        self.param_groups = [dict(defaults, params=params)]
        self.state: dict[int, dict] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p._grad = None
                elif p._grad is not None:
                    p._grad._data[...] = 0

    def _updates(self):
        """(parameter, gradient array, group, state) for every parameter that has a grad."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    yield p, p._grad._data, group, self.state.setdefault(id(p), {})

    @staticmethod
    def _write(p: Tensor, delta: np.ndarray) -> None:
        p._data -= delta.astype(p._data.dtype, copy=False)
        p._counter().value += 1  # an in-place change, as torch's optimisers make


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum and weight decay."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False) -> None:
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay,
                                      nesterov=nesterov))

    def step(self) -> None:
        for p, g, group, state in self._updates():
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            if group["momentum"]:
                buf = state.get("momentum_buffer")
                buf = g.copy() if buf is None else buf * group["momentum"] + g
                state["momentum_buffer"] = buf
                g = g + group["momentum"] * buf if group["nesterov"] else buf
            self._write(p, group["lr"] * g)


class Adam(Optimizer):
    """Adam (Kingma & Ba), with PyTorch's defaults."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def step(self) -> None:
        for p, g, group, state in self._updates():
            if group["weight_decay"]:
                g = g + group["weight_decay"] * p._data
            beta1, beta2 = group["betas"]
            t = state["step"] = state.get("step", 0) + 1
            m = state["exp_avg"] = beta1 * state.get("exp_avg", 0.0) + (1 - beta1) * g
            v = state["exp_avg_sq"] = beta2 * state.get("exp_avg_sq", 0.0) + (1 - beta2) * g * g
            m_hat = m / (1 - beta1 ** t)
            v_hat = v / (1 - beta2 ** t)
            self._write(p, group["lr"] * m_hat / (np.sqrt(v_hat) + group["eps"]))
