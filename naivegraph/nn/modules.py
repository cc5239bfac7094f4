"""Modules: containers of parameters with a ``forward``, as in ``torch.nn``."""

from __future__ import annotations

import math
from collections import OrderedDict, namedtuple
from typing import Iterator, Mapping

import numpy as np

from ..dynamic.factories import _random
from ..dynamic.grad_mode import no_grad
from ..dynamic.tensor import Tensor
from . import functional as F


_IncompatibleKeys = namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _shape_of(value) -> list[int]:
    return list(value.shape) if isinstance(value, Tensor) else list(np.shape(value))


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


def _typename(value) -> str:
    """How error messages name a type: ``'int'``, ``'naivegraph.Tensor'``, ``'mypkg.Net'``."""
    cls = type(value)
    if cls is Tensor:
        return "naivegraph.Tensor"
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


class Module:
    """Base class: assign Parameters and Modules as attributes, define ``forward``.

    Registration follows ``torch.nn.Module``: parameters and submodules are kept in
    assignment order, re-assigning one keeps its place, ``None`` keeps the slot empty,
    and every listing (``named_parameters``, ``named_modules``, ``state_dict``, ...) walks
    the tree depth-first in that order, each shared object once.

    >>> import naivegraph as ng
    >>> class Net(ng.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.body = ng.nn.Sequential(ng.nn.Linear(2, 2), ng.nn.ReLU())
    ...         self.scale = ng.nn.Parameter(ng.ones(1))
    >>> [name for name, _ in Net().named_parameters()]
    ['scale', 'body.0.weight', 'body.0.bias']
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: parameters and submodules live in the dicts.
        registered = self.__dict__
        for table in ("_parameters", "_modules"):
            if table in registered and name in registered[table]:
                return registered[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() call: "
                                 "call super().__init__() first in your __init__")
        params, modules = self._parameters, self._modules
        if isinstance(value, (Parameter, Module)) and ("." in name or not name):
            raise KeyError(f'cannot register "{name}": a parameter or module name must be '
                           'non-empty and must not contain "." (dots join nested names)')
        if isinstance(value, Parameter):
            self._forget(name, keep="_parameters")
            params[name] = value  # an existing key keeps its place, as in torch
        elif name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(naivegraph.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            self._refuse_cycle(name, value)
            self._forget(name, keep="_modules")
            modules[name] = value
        elif name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(naivegraph.nn.Module or None expected)")
            modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._modules))

    def _forget(self, name: str, keep: str) -> None:
        """Drop ``name`` from the other places an attribute can live before registering it."""
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_modules"):
            if table != keep:
                getattr(self, table).pop(name, None)

    def _refuse_cycle(self, name: str, child: "Module") -> None:
        # A module inside itself would make every walk (repr, train, named_*) endless.
        if any(m is self for _, m in child.named_modules(remove_duplicate=True)):
            raise ValueError(f"cannot assign {type(child).__name__} as child module '{name}' "
                             f"of {type(self).__name__}: it already contains this module, so "
                             "the modules would form a cycle; assign a new module instead")

    def forward(self, *args, **kwargs):  # pragma: no cover - defined by subclasses
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """This module and every submodule, depth-first in registration order.

        A module reachable twice appears once (at its first name) unless
        ``remove_duplicate=False``.

        >>> import naivegraph as ng
        >>> lin = ng.nn.Linear(1, 1)
        >>> [name for name, _ in ng.nn.Sequential(lin, ng.nn.ReLU(), lin).named_modules()]
        ['', '0', '1']
        """
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, _join(prefix, name), remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        """Every module of the tree (this one first), each once."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """The direct submodules with their attribute names, each module once."""
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator["Module"]:
        """The direct submodules, each once."""
        for _, child in self.named_children():
            yield child

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its dotted name, in PyTorch's order.

        Depth-first over submodules in registration order; a shared parameter appears
        once (at its first name) unless ``remove_duplicate=False``; ``recurse=False``
        gives this module's own parameters only.

        >>> import naivegraph as ng
        >>> model = ng.nn.Sequential(ng.nn.Linear(2, 3), ng.nn.ReLU(), ng.nn.Linear(3, 1))
        >>> [name for name, _ in model.named_parameters()]
        ['0.weight', '0.bias', '2.weight', '2.bias']
        """
        owners = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                  if recurse else [(prefix, self)])
        seen = set()
        for owner_name, owner in owners:
            for name, p in owner._parameters.items():
                if p is None or (remove_duplicate and id(p) in seen):
                    continue
                seen.add(id(p))
                yield _join(owner_name, name), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module and its submodules (each once)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def state_dict(self, prefix: str = "") -> "OrderedDict[str, Tensor]":
        """Detached parameters by dotted name, in ``named_parameters`` order.

        As in torch, a parameter reachable under two names is stored under both.

        >>> import naivegraph as ng
        >>> list(ng.nn.Linear(2, 1).state_dict())
        ['weight', 'bias']
        """
        return OrderedDict((name, p.detach()) for name, p
                           in self.named_parameters(prefix, remove_duplicate=False))

    def load_state_dict(self, state_dict: Mapping[str, Tensor], strict: bool = True):
        """Copy values from ``state_dict`` into the parameters, in place.

        Nothing is copied unless every value fits: a missing or unexpected key (with
        ``strict=True``) or a shape mismatch raises RuntimeError, as in torch.
        Returns ``(missing_keys, unexpected_keys)``.

        >>> import naivegraph as ng
        >>> a, b = ng.nn.Linear(2, 1), ng.nn.Linear(2, 1)
        >>> b.load_state_dict(a.state_dict())
        _IncompatibleKeys(missing_keys=[], unexpected_keys=[])
        >>> a.weight.tolist() == b.weight.tolist()
        True
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {_typename(state_dict)}.")
        own = dict(self.named_parameters(remove_duplicate=False))
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = [f"size mismatch for {k}: copying a param with shape "
                  f"{_shape_of(state_dict[k])} from checkpoint, the shape in current model is "
                  f"{list(own[k].shape)}."
                  for k in own if k in state_dict
                  and _shape_of(state_dict[k]) != list(own[k].shape)]
        if strict and unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if strict and missing:
            errors.insert(0, "Missing key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for name, p in own.items():
                if name in state_dict:
                    p.copy_(state_dict[name])
        return _IncompatibleKeys(missing, unexpected)

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
        for m in modules:  # check all first: a bad argument leaves nothing half-built
            if m is not None and not isinstance(m, Module):
                raise TypeError(f"{_typename(m)} is not a Module subclass: Sequential takes "
                                "modules such as nn.Linear(2, 3) or nn.ReLU()")
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

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
