"""Modules: containers of parameters with a ``forward``, as in ``torch.nn``."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Iterator

import numpy as np

from ..dynamic.factories import _random
from ..dynamic.tensor import Tensor
from . import functional as F


class Parameter(Tensor):
    """A tensor that a Module registers as trainable (requires grad by default)."""

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        array = np.zeros(0) if data is None else (data._data if isinstance(data, Tensor)
                                                  else np.asarray(data, dtype=np.float64))
        p = Tensor._make.__func__(cls, array, False, None, 0)
        p.requires_grad = requires_grad
        return p

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class: assign Parameters and Modules as attributes, define ``forward``."""

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() call: "
                                 "call super().__init__() first in your __init__")
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def forward(self, *args, **kwargs):  # pragma: no cover - defined by subclasses
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        seen = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop(0)
            for pname, p in module._parameters.items():
                if id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{name}.{pname}" if name else pname), p
            for mname, child in module._modules.items():
                stack.append((f"{name}.{mname}" if name else mname, child))

    def parameters(self) -> Iterator[Parameter]:
        """Every parameter of this module and its submodules (each once)."""
        for _, p in self.named_parameters():
            yield p

    def children(self) -> Iterator["Module"]:
        return iter(self._modules.values())

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p._grad is not None:
                p._grad._data[...] = 0

    def train(self, mode: bool = True) -> "Module":
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def to(self, dtype=None, *args, **kwargs) -> "Module":
        """Cast every floating parameter (and its gradient) to ``dtype``, in place.

        The Parameter objects stay the same, so an optimiser built before still holds
        them.  A device argument such as ``"cpu"`` is accepted and ignored.

        >>> import naivegraph as ng
        >>> ng.nn.Linear(2, 3, dtype=ng.float32).double().weight.dtype
        dtype('float64')
        """
        if dtype is None or isinstance(dtype, str):
            return self
        dtype = np.dtype(dtype)
        for p in self.parameters():
            if p._data.dtype.kind in "fc" and p._data.dtype != dtype:
                p._data = p._data.astype(dtype)
                if p._grad is not None:
                    p._grad = p._grad._cast(dtype)
        return self

    def double(self) -> "Module":
        return self.to(np.float64)

    def float(self) -> "Module":
        return self.to(np.float32)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"  ({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        body = ("\n" + "\n".join(lines) + "\n") if lines else self.extra_repr()
        return f"{type(self).__name__}({body})"


class Linear(Module):
    """``y = x @ W.T + b`` with PyTorch's default initialisation (uniform ±1/sqrt(in))."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype=np.float64) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        draw = lambda *shape: _random.generator.uniform(-bound, bound, shape).astype(dtype)  # noqa: E731
        self.weight = Parameter(Tensor._make(draw(out_features, in_features), False, None, 0))
        self.bias = Parameter(Tensor._make(draw(out_features), False, None, 0)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Sequential(Module):
    """Modules applied one after another."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def __getitem__(self, index: int) -> Module:
        return list(self._modules.values())[index]

    def __len__(self) -> int:
        return len(self._modules)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class _Activation(Module):
    function = staticmethod(F.relu)

    def forward(self, x):
        return self.function(x)


class ReLU(_Activation):
    function = staticmethod(F.relu)


class Tanh(_Activation):
    function = staticmethod(F.tanh)


class Sigmoid(_Activation):
    function = staticmethod(F.sigmoid)


class MSELoss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.cross_entropy(input, target, reduction=self.reduction)
