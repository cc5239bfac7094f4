"""Modules: containers of parameters with a ``forward``, as in ``torch.nn``."""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict, namedtuple
from typing import Iterator, Mapping

import numpy as np

from ..dynamic.defaults import get_default_dtype
from ..dynamic.factories import _random
from ..dynamic.functions import where
from ..dynamic.grad_mode import no_grad
from ..dynamic.tensor import Tensor, _check_device, _to_arguments
from . import functional as F
from . import losses
from .hooks import HookTable, call_with_hooks


class _IncompatibleKeys(namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns; printed as torch prints it."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _shape_of(value) -> list[int]:
    return list(value.shape) if isinstance(value, Tensor) else list(np.shape(value))


class Parameter(Tensor):
    """A tensor that a Module registers as trainable (requires grad by default)."""

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        array = (
            np.zeros(0)
            if data is None
            else (
                data._data
                if isinstance(data, Tensor)
                else np.asarray(data, dtype=get_default_dtype())
            )
        )
        p = Tensor._make.__func__(cls, array, False, None, 0)
        p.requires_grad = requires_grad
        return p

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # print(param) too, as in torch (Tensor binds __str__ to its own)

    def __reduce_ex__(self, protocol):
        """Pickle the values and the flag only, as torch does: the gradient and the graph
        bookkeeping (weak references to autograd nodes) are not part of a parameter."""
        return (_rebuild_parameter, (self._data, self.requires_grad))

    def __deepcopy__(self, memo: dict) -> "Parameter":
        """A new parameter with copied values and no ``.grad``, as in torch: a copied
        model (``copy.deepcopy(model)``) starts with clean gradients.

        >>> import copy, naivegraph as ng
        >>> p = ng.nn.Parameter(ng.ones(2)); (p * p).sum().backward()
        >>> copy.deepcopy(p).grad is None, copy.deepcopy(p).tolist()
        (True, [1.0, 1.0])
        """
        if id(self) in memo:
            return memo[id(self)]
        copied = type(self)(Tensor._make(self._data.copy(), False, None, 0), self.requires_grad)
        memo[id(self)] = copied
        return copied


def _rebuild_parameter(data: np.ndarray, requires_grad: bool) -> Parameter:
    return Parameter(Tensor._make(data, False, None, 0), requires_grad)


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
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        for table in ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks"):
            object.__setattr__(self, table, HookTable())
        object.__setattr__(self, "training", True)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: parameters, submodules and buffers live in
        # the dicts.
        registered = self.__dict__
        for table in ("_parameters", "_modules", "_buffers"):
            if table in registered and name in registered[table]:
                return registered[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign attributes before Module.__init__() call: "
                "call super().__init__() first in your __init__"
            )
        params, modules = self._parameters, self._modules
        if isinstance(value, (Parameter, Module)) and ("." in name or not name):
            raise KeyError(
                f'cannot register "{name}": a parameter or module name must be '
                'non-empty and must not contain "." (dots join nested names)'
            )
        if isinstance(value, Parameter):
            self._forget(name, keep="_parameters")
            params[name] = value  # an existing key keeps its place, as in torch
        elif name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(naivegraph.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            self._refuse_cycle(name, value)
            self._forget(name, keep="_modules")
            modules[name] = value
        elif name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(naivegraph.nn.Module or None expected)"
                )
            modules[name] = None
        elif name in self.__dict__.get("_buffers", {}):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(naivegraph.Tensor or None expected)"
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(
            set(super().__dir__()) | set(self._parameters) | set(self._modules) | set(self._buffers)
        )

    def _forget(self, name: str, keep: str) -> None:
        """Drop ``name`` from the other places an attribute can live before registering it."""
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_modules", "_buffers"):
            if table != keep:
                getattr(self, table).pop(name, None)

    def _refuse_cycle(self, name: str, child: "Module") -> None:
        # A module inside itself would make every walk (repr, train, named_*) endless.
        if any(m is self for _, m in child.named_modules(remove_duplicate=True)):
            raise ValueError(
                f"cannot assign {type(child).__name__} as child module '{name}' "
                f"of {type(self).__name__}: it already contains this module, so "
                "the modules would form a cycle; assign a new module instead"
            )

    def forward(self, *args, **kwargs):  # pragma: no cover - defined by subclasses
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        found = self.__dict__
        if (
            found.get("_forward_pre_hooks")
            or found.get("_forward_hooks")
            or found.get("_backward_hooks")
        ):
            return call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """Call ``hook(module, args)`` before each ``forward``; a returned value replaces
        the positional arguments (a non-tuple is wrapped in one).  With ``with_kwargs``,
        ``hook(module, args, kwargs)`` may return ``(args, kwargs)``.  Returns a handle
        whose ``remove()`` unregisters the hook; ``prepend`` puts it first.

        >>> import naivegraph as ng
        >>> lin = ng.nn.Identity()
        >>> handle = lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        >>> lin(ng.tensor([1.0])).tolist(); handle.remove(); lin(ng.tensor([1.0])).tolist()
        [2.0]
        [1.0]
        """
        return self._forward_pre_hooks.add(hook, prepend, with_kwargs=with_kwargs)

    def register_forward_hook(
        self,
        hook,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ):
        """Call ``hook(module, args, output)`` after each ``forward`` (with ``with_kwargs``,
        ``hook(module, args, kwargs, output)``); a returned value replaces the output.

        >>> import naivegraph as ng
        >>> seen = []
        >>> m = ng.nn.ReLU(); h = m.register_forward_hook(lambda m, a, out: seen.append(out))
        >>> m(ng.tensor([-1.0, 2.0])); seen
        tensor([0., 2.])
        [tensor([0., 2.])]
        """
        return self._forward_hooks.add(hook, prepend, with_kwargs=with_kwargs)

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """Call ``hook(module, grad_input, grad_output)`` when the gradients with respect
        to the module's inputs are computed: ``grad_input`` has one entry per positional
        argument (None for what is not a tensor), ``grad_output`` one per output tensor.
        A returned tuple replaces ``grad_input``.  The module's inputs and outputs pass
        through ``BackwardHookFunctionBackward`` nodes, as in torch.

        >>> import naivegraph as ng
        >>> m = ng.nn.Tanh()
        >>> h = m.register_full_backward_hook(lambda m, gi, go: print(go[0], gi[0]))
        >>> m(ng.zeros(1, requires_grad=True)).backward(ng.ones(1) * 3)
        tensor([3.]) tensor([3.])
        """
        return self._backward_hooks.add(hook, prepend)

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, "Module"]]:
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

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its dotted name, in PyTorch's order.

        Depth-first over submodules in registration order; a shared parameter appears
        once (at its first name) unless ``remove_duplicate=False``; ``recurse=False``
        gives this module's own parameters only.

        >>> import naivegraph as ng
        >>> model = ng.nn.Sequential(ng.nn.Linear(2, 3), ng.nn.ReLU(), ng.nn.Linear(3, 1))
        >>> [name for name, _ in model.named_parameters()]
        ['0.weight', '0.bias', '2.weight', '2.bias']
        """
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def _named_members(self, table: str, prefix: str, recurse: bool, remove_duplicate: bool):
        """``(dotted name, value)`` of each entry of the ``table`` (``_parameters`` or
        ``_buffers``) of this module and, with ``recurse``, of its submodules."""
        owners = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        seen = set()
        for owner_name, owner in owners:
            for name, value in getattr(owner, table).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield _join(owner_name, name), value

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module and its submodules (each once)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def state_dict(self, prefix: str = "") -> "OrderedDict[str, Tensor]":
        """Detached parameters and persistent buffers by dotted name, in torch's order:
        each module's parameters, then its buffers, then its submodules'.

        As in torch, a tensor reachable under two names is stored under both.

        >>> import naivegraph as ng
        >>> list(ng.nn.Linear(2, 1).state_dict())
        ['weight', 'bias']
        >>> list(ng.nn.BatchNorm1d(2).state_dict())
        ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
        """
        return OrderedDict(
            (name, value.detach()) for name, value in self._named_state(prefix).items()
        )

    def _named_state(self, prefix: str = "") -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer (not detached) by its dotted name."""
        state: OrderedDict = OrderedDict()
        for owner_name, owner in self.named_modules(prefix=prefix, remove_duplicate=False):
            for name, p in owner._parameters.items():
                if p is not None:
                    state[_join(owner_name, name)] = p
            for name, b in owner._buffers.items():
                if b is not None and name not in owner._non_persistent_buffers_set:
                    state[_join(owner_name, name)] = b
        return state

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register ``tensor`` as the buffer ``name``: state that is not trained (batch
        norm's running statistics), saved in ``state_dict`` unless ``persistent=False``
        and cast by ``.to()`` / ``.double()`` with the parameters.

        >>> import naivegraph as ng
        >>> m = ng.nn.Module()
        >>> m.register_buffer("steps", ng.zeros(1)); [n for n, _ in m.named_buffers()]
        ['steps']
        """
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name or not name:
            raise KeyError('buffer name can\'t be empty or contain "."')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(naivegraph.Tensor or None required)"
            )
        self._forget(name, keep="_buffers")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """Every buffer with its dotted name, module by module as ``named_parameters``."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer of this module and its submodules (each once)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def load_state_dict(self, state_dict: Mapping[str, Tensor], strict: bool = True):
        """Copy values from ``state_dict`` into the parameters, in place.

        Nothing is copied unless every value fits: a missing or unexpected key (with
        ``strict=True``) or a shape mismatch raises RuntimeError, as in torch.
        Returns ``(missing_keys, unexpected_keys)``.

        >>> import naivegraph as ng
        >>> a, b = ng.nn.Linear(2, 1), ng.nn.Linear(2, 1)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> a.weight.tolist() == b.weight.tolist()
        True
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {_typename(state_dict)}.")
        own = dict(self._named_state())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = [
            f"size mismatch for {k}: copying a param with shape "
            f"{_shape_of(state_dict[k])} from checkpoint, the shape in current model is "
            f"{list(own[k].shape)}."
            for k in own
            if k in state_dict and _shape_of(state_dict[k]) != list(own[k].shape)
        ]
        if strict and unexpected:
            errors.insert(
                0,
                "Unexpected key(s) in state_dict: "
                + ", ".join(f'"{k}"' for k in unexpected)
                + ". ",
            )
        if strict and missing:
            errors.insert(
                0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". "
            )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
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

    def to(self, *args, device=None, dtype=None, non_blocking: bool = False) -> "Module":
        """Cast every floating parameter (and its gradient) to ``dtype``, in place.

        Takes what ``Tensor.to`` takes: ``to(dtype)``, ``to(device)``, ``to(device,
        dtype)``, keywords.  The Parameter objects stay the same, so an optimiser built
        before still holds them.  The device must be the CPU, the only one naivegraph has.

        >>> import naivegraph as ng
        >>> ng.nn.Linear(2, 3, dtype=ng.float32).double().weight.dtype
        dtype('float64')
        >>> ng.nn.Linear(2, 3).to("cpu", ng.float32).weight.dtype
        dtype('float32')
        """
        device, dtype = _to_arguments(args, device, dtype)
        _check_device(device)
        if dtype is None:
            return self
        for p in self.parameters():
            if p._data.dtype.kind in "fc" and p._data.dtype != dtype:
                p._data = p._data.astype(dtype)
                if p._grad is not None:
                    p._grad = p._grad._cast(dtype)
        for b in self.buffers():
            if b._data.dtype.kind == "f" and b._data.dtype != dtype:
                b._data = b._data.astype(dtype)
        return self

    def cpu(self) -> "Module":
        """The module itself: its parameters are on the CPU already."""
        return self

    def cuda(self, device=None) -> "Module":
        """Refused: naivegraph has no GPU (``ng.cuda.is_available()`` is False)."""
        _check_device("cuda" if device is None else f"cuda:{device}")
        return self  # pragma: no cover - _check_device always raises for cuda

    def double(self) -> "Module":
        return self.to(np.float64)

    def float(self) -> "Module":
        return self.to(np.float32)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Register ``module`` as the child ``name``, as ``setattr`` would."""
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        setattr(self, name, module)
        self._modules[name] = module  # also when None: keeps the (empty) slot

    register_module = add_module

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` as the parameter ``name``; ``None`` keeps an empty slot (an
        optional bias that is absent), as in torch.

        >>> import naivegraph as ng
        >>> m = ng.nn.Module()
        >>> m.register_parameter("bias", None); m.bias is None, list(m.state_dict())
        (True, [])
        """
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(naivegraph.nn.Parameter or None required)"
            )
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        setattr(self, name, param)
        self._parameters[name] = param  # also when None: keeps the (empty) slot

    def get_submodule(self, target: str) -> "Module":
        """The submodule at the dotted path ``target`` (``""`` is this module).

        >>> import naivegraph as ng
        >>> ng.nn.Sequential(ng.nn.Sequential(ng.nn.ReLU())).get_submodule("0.0")
        ReLU()
        """
        module = self
        for part in target.split(".") if target else []:
            child = module._modules.get(part)
            if not isinstance(child, Module):
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``, e.g. ``"0.weight"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        param = module._parameters.get(name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"{type(module).__name__} has no parameter `{name}`")
        return param

    def apply(self, fn) -> "Module":
        """Call ``fn`` on every submodule (children first) and then on this module, as
        torch does; used to initialise weights.

        >>> import naivegraph as ng
        >>> def init(m):
        ...     if isinstance(m, ng.nn.Linear):
        ...         ng.nn.init.zeros_(m.weight)
        >>> ng.nn.Sequential(ng.nn.Linear(2, 1)).apply(init)[0].weight
        Parameter containing:
        tensor([[0., 0.]], requires_grad=True)
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def extra_repr(self) -> str:
        """The arguments shown inside ``Name(...)``; subclasses override it."""
        return ""

    def __repr__(self) -> str:
        """PyTorch's layout: ``Name(extra)`` alone, else one ``(name): child`` per line.

        >>> import naivegraph as ng
        >>> ng.nn.Sequential(ng.nn.Linear(2, 3), ng.nn.ReLU())
        Sequential(
          (0): Linear(in_features=2, out_features=3, bias=True)
          (1): ReLU()
        )
        """
        extra_lines = self.extra_repr().split("\n") if self.extra_repr() else []
        child_lines = [
            f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()
        ]
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif extra_lines or child_lines:
            body = "\n  " + "\n  ".join(extra_lines + child_lines) + "\n"
        else:
            body = ""
        return f"{type(self).__name__}({body})"


class Linear(Module):
    """``y = x @ W.T + b`` with PyTorch's default initialisation (uniform ±1/sqrt(in))."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype=None) -> None:
        super().__init__()
        dtype = dtype or get_default_dtype()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        draw = lambda *shape: _random.generator.uniform(-bound, bound, shape).astype(dtype)
        self.weight = Parameter(Tensor._make(draw(out_features, in_features), False, None, 0))
        self.bias = Parameter(Tensor._make(draw(out_features), False, None, 0)) if bias else None

    def reset_parameters(self) -> None:
        """Draw the weight and bias afresh, in place, as the constructor does (uniform
        ±1/sqrt(in_features)), as torch's ``Linear.reset_parameters``."""
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features else 0.0
        with no_grad():
            for p in (self.weight, self.bias):
                if p is not None:
                    fresh = _random.generator.uniform(-bound, bound, p.shape)
                    p.copy_(Tensor._make(fresh.astype(p.detach().numpy().dtype), False, None, 0))

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Sequential(Module):
    """Modules applied one after another."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for m in modules:  # check all first: a bad argument leaves nothing half-built
            if m is not None and not isinstance(m, Module):
                raise TypeError(
                    f"{_typename(m)} is not a Module subclass: Sequential takes "
                    "modules such as nn.Linear(2, 3) or nn.ReLU()"
                )
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __getitem__(self, index: int | slice) -> Module:
        """A layer, or for a slice a Sequential of those layers under their names, as torch.

        >>> import naivegraph as ng
        >>> ng.nn.Sequential(ng.nn.ReLU(), ng.nn.Tanh(), ng.nn.Sigmoid())[1:]
        Sequential(
          (1): Tanh()
          (2): Sigmoid()
        )
        """
        items = list(self._modules.items())
        if isinstance(index, slice):
            part = Sequential()
            part._modules.update(items[index])
            return part
        if not -len(items) <= index < len(items):
            raise IndexError(f"index {index} is out of range")
        return items[index][1]

    def __len__(self) -> int:
        return len(self._modules)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class Identity(Module):
    """Returns its input unchanged (a placeholder layer, e.g. a removed head).

    >>> import naivegraph as ng
    >>> ng.nn.Identity()(ng.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, x):
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
    """Softmax cross-entropy, as ``F.cross_entropy`` with the module's ``weight``,
    ``ignore_index``, ``reduction`` and ``label_smoothing``."""

    def __init__(
        self,
        weight: Tensor | None = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__()
        if isinstance(weight, str):  # naivegraph's older first argument: the reduction
            weight, reduction = None, weight
        self.weight, self.ignore_index = weight, ignore_index
        self.reduction, self.label_smoothing = reduction, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(
            input,
            target,
            self.weight,
            self.ignore_index,
            self.reduction,
            self.label_smoothing,
        )


class Flatten(Module):
    """Flatten dimensions ``start_dim`` to ``end_dim`` (by default all but the batch).

    >>> import naivegraph as ng
    >>> ng.nn.Flatten()(ng.ones(2, 3, 4)).shape
    torch.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def _implicit_dim(name: str, ndim: int) -> int:
    """torch's legacy choice of dim when ``Softmax()`` got none: 0 for 0-, 1- and 3-d
    inputs, else 1; with torch's warning, because it is rarely what was meant."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call "
        "to include dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    """``softmax`` along ``dim``: the values along it become probabilities summing to 1.

    >>> import naivegraph as ng
    >>> ng.nn.Softmax(dim=1)(ng.zeros(1, 4))
    tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x):
        dim = (
            self.dim
            if self.dim is not None
            else _implicit_dim(type(self).__name__.lower(), x.dim())
        )
        return F.softmax(x, dim=dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """``log_softmax`` along ``dim`` (pairs with ``NLLLoss``)."""

    def forward(self, x):
        dim = self.dim if self.dim is not None else _implicit_dim("log_softmax", x.dim())
        return F.log_softmax(x, dim=dim)


class Embedding(Module):
    """A lookup table: ``weight[indices]``, one learnable row of ``embedding_dim`` values
    per index.  Rows start as N(0, 1) draws, as in torch; the row ``padding_idx`` starts
    at zero and gets no gradient.

    >>> import naivegraph as ng
    >>> emb = ng.nn.Embedding(10, 3, padding_idx=0)
    >>> emb(ng.tensor([[0, 2], [4, 0]])).shape, emb.weight[0].tolist()
    (torch.Size([2, 2, 3]), [0.0, 0.0, 0.0])
    """

    def __init__(
        self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None, dtype=None
    ) -> None:
        super().__init__()
        dtype = dtype or get_default_dtype()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        rows = _random.generator.standard_normal((num_embeddings, embedding_dim)).astype(dtype)
        if padding_idx is not None:
            rows[padding_idx] = 0
        self.weight = Parameter(Tensor._make(rows, False, None, 0))

    def forward(self, indices):
        self._check_indices(indices)
        rows = self.weight[indices]
        if self.padding_idx is None:
            return rows
        padded = (indices == self.padding_idx).unsqueeze(-1)
        return where(padded, rows.detach(), rows)  # the padding row's gradient stays zero

    def _check_indices(self, indices) -> None:
        if not isinstance(indices, Tensor) or indices.dtype.kind not in "iu":
            got = indices.dtype if isinstance(indices, Tensor) else _typename(indices)
            raise RuntimeError(
                "Expected tensor for argument #1 'indices' to have one of the "
                f"following scalar types: Long, Int; but got {got} instead "
                "(while checking arguments for embedding): use .long()"
            )
        data = indices._data
        if data.size and (data.min() < 0 or data.max() >= self.num_embeddings):
            raise IndexError(
                f"index out of range in self: indices must be in "
                f"0..{self.num_embeddings - 1}, got {int(data.min())}.."
                f"{int(data.max())}"
            )

    def extra_repr(self) -> str:
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction  # checked when called, as in torch


class NLLLoss(_Loss):
    """Negative log-likelihood of log-probabilities (N, C, ...) at class indices (N, ...)."""

    def __init__(
        self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean"
    ) -> None:
        if isinstance(weight, str):  # naivegraph's older first argument: the reduction
            weight, reduction = None, weight
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, target):
        return losses.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class SmoothL1Loss(_Loss):
    """``F.smooth_l1_loss`` as a module.

    >>> import naivegraph as ng
    >>> ng.nn.SmoothL1Loss()
    SmoothL1Loss()
    """

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """``F.huber_loss`` as a module."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_Loss):
    """Binary cross-entropy of probabilities in [0, 1] (apply ``Sigmoid`` first).

    >>> import naivegraph as ng
    >>> ng.nn.BCELoss()(ng.tensor([0.5, 0.5]), ng.tensor([1.0, 0.0]))
    tensor(0.6931)
    """

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, target):
        return losses.binary_cross_entropy(
            input, target, weight=self.weight, reduction=self.reduction
        )


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of raw scores (logits), stable for any magnitude.

    >>> import naivegraph as ng
    >>> ng.nn.BCEWithLogitsLoss()(ng.tensor([0.0]), ng.tensor([1.0]))
    tensor(0.6931)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input, target):
        return losses.binary_cross_entropy_with_logits(
            input, target, weight=self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )
