"""Creating tensors: ``ng.tensor``, ``ng.ones``, ``ng.randn``, ... as in PyTorch."""

from __future__ import annotations

import builtins
import functools
import operator
from typing import Any

import numpy as np

from ..ops.core import with_default_float
from ..ops.methods import shape_arg as _shape_arg
from .defaults import _type_name, get_default_dtype
from .grad_mode import _state as _grad_state
from .grad_mode import count_inference_user, no_grad
from .rng import _random, generator_rng
from .tensor import Tensor, _as_array, _check_device

float32, float64, float16 = np.float32, np.float64, np.float16
int64, int32, int16, int8, uint8 = np.int64, np.int32, np.int16, np.int8, np.uint8
complex64, complex128 = np.complex64, np.complex128
bool_ = np.bool_
# torch's other names for the same dtypes (``torch.float`` is float32, as in torch)
float = float32
double = float64
half = float16
long = int64
short = int16
cfloat = complex64
cdouble = complex128


def manual_seed(seed: int) -> None:
    """Make ``rand``/``randn``/``nn.Linear`` initialisation repeatable (per thread)."""
    _random.generator = np.random.default_rng(seed)


def _finish(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(array, False, None, 0)
    if requires_grad:
        t.requires_grad = True
    return t


def tensor(data: Any, requires_grad: bool = False, dtype=None, device=None) -> Tensor:
    """A new leaf tensor holding a copy of ``data``.

    Python floats become the default dtype (float32, as in torch, unless
    ``set_default_dtype`` changed it); numpy arrays and tensors keep their dtype (a
    float64 numpy array stays float64: ``.float()`` makes it float32).

    >>> import naivegraph as ng
    >>> ng.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    # Not Tensor(data): the legacy constructor turns integer lists into floats, while
    # torch.tensor keeps the inferred dtype (int64 for ints, bool for booleans).
    if device is not None:
        _check_device(device)
    if type(data) is builtins.float and dtype is None:  # a scalar program's constant, often
        return float_leaf(data, requires_grad)
    array = _as_array(data, dtype)
    if dtype is None and not isinstance(data, (np.ndarray, np.generic, Tensor)):
        array = with_default_float(array)
    return _finish(array, requires_grad)


def float_leaf(number: float, requires_grad: bool) -> Tensor:
    """``tensor(number, requires_grad=...)`` for a Python float (a seam: the fast layer
    makes the leaf in one call)."""
    return _finish(float_constant(number), requires_grad)


def float_constant(number: float) -> np.ndarray:
    """The array of ``tensor(number)`` for a Python float: a 0-d array of the default
    float dtype (a seam: the fast layer rounds to float32 with one C cast)."""
    return with_default_float(_as_array(number, None))


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return Tensor._make(array, False, None, 0)


def as_tensor(data: Any, dtype: Any = None, device: Any = None):
    """``data`` as a tensor, sharing memory where it can, as ``torch.as_tensor``: a tensor
    of the same dtype comes back itself, a numpy array of that dtype is shared, anything
    else is copied as ``ng.tensor`` would.

    >>> import numpy as np, naivegraph as ng
    >>> a = np.zeros(2); t = ng.as_tensor(a); a[0] = 5.0; t.tolist()
    [5.0, 0.0]
    """
    _check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or np.dtype(dtype) == data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or np.dtype(dtype) == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def _filled(fill, shape, dtype, requires_grad, device=None) -> Tensor:
    """A new leaf of ``shape`` (checked by the caller: :func:`checked_size`) filled with
    ``fill``.  A seam: the fast layer fills a 0 or a 1 with two C calls."""
    if device is not None:
        _check_device(device)
    dtype = dtype or get_default_dtype()
    array = _allocated(lambda dims: np.full(dims, fill, dtype=dtype), _shape_arg(shape))
    return _finish(array, requires_grad)


def _allocated(make, dims: tuple) -> np.ndarray:
    """``make(dims)``, with torch's error where numpy finds the size too big to store."""
    try:
        return make(dims)
    except ValueError as error:
        raise storage_overflowed(dims, error) from None


def storage_overflowed(dims: tuple, error: ValueError) -> Exception:
    """torch's error for a size whose bytes do not fit in an int64, where numpy says
    ``array is too big``; any other error as it was."""
    if "too big" not in str(error):
        return error
    return RuntimeError(
        f"Storage size calculation overflowed with sizes=[{', '.join(map(str, dims))}]: "
        "no tensor can hold that many elements; check the size"
    )


def _shape_or_size(name: str, shape: tuple, size) -> tuple:
    """The shape given positionally (``randn(2, 3)``, ``randn((2, 3))``) or as
    ``size=(2, 3)``, not both, checked as torch checks it: a tuple of plain ints."""
    if size is None and not shape:
        raise TypeError(
            f'{name}() missing 1 required positional arguments: "size" (give the shape: '
            f"{name}(2, 3), {name}((2, 3)), or {name}(size=()) for a single number)"
        )
    if size is not None and shape:
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got both a "
            f"shape {shape} and size={size!r}: give the shape once"
        )
    if size is not None:
        return checked_size(name, size, None)
    if len(shape) == 1:
        return checked_size(name, shape[0], 1)
    return checked_size(name, shape, 1, spread=True)


def checked_size(
    name: str, size, position: int | None, spread: bool = False, alone: bool = True
) -> tuple:
    """``size`` as a tuple of ints, or torch's error for what it refuses.

    ``position``: where the size is among the arguments (None: given as ``size=``);
    ``spread``: the sizes came one per argument (``ones(2, 3)``); ``alone``: one int
    given positionally is a size (not for ``full``).  As torch's argument parser: one
    int alone is a size given positionally, anything else must be a
    sequence of ints whose first element is no bool (after it a bool counts as an int),
    each within int64; then no size may be negative.
    """
    kind = type(size)
    if kind is tuple or kind is list:  # the commonest first: plain ints, none negative
        for part in size:
            if type(part) is not int or not 0 <= part < 2**63:
                break
        else:
            return tuple(size)
    elif kind is int and alone and position is not None and 0 <= size < 2**63:
        return (size,)
    where = "" if position is None else f" (position {position})"
    if not spread and not isinstance(size, (tuple, list)):
        if position is not None and alone and not _is_bool(size) and _is_index(size):
            return checked_size(name, (size,), position)  # ones(3), ones(np.int64(3))
        raise TypeError(
            f"{name}(): argument 'size'{where} must be tuple of ints, not {_qualified_type(size)}"
        )
    dims = []
    for i, part in enumerate(size):
        if type(part) is int and -(2**63) <= part < 2**63:  # the commonest: plain ints
            dims.append(part)
            continue
        if i == 0 and (_is_bool(part) or not _is_index(part)):
            if spread:
                raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
            if position is None:
                raise TypeError(
                    f"{name}(): argument 'size' must be tuple of ints, not {_qualified_type(size)}"
                )
            raise TypeError(
                f"{name}(): argument 'size'{where} must be tuple of ints, but found element "
                f"of type {_qualified_type(part)} at pos 0"
            )
        if not _is_index(part):
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with "
                f'error "type must be tuple of ints,but got {_qualified_type(part)}"'
            )
        value = operator.index(part)
        if not -(2**63) <= value < 2**63:
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with "
                'error "Overflow when unpacking long long"'
            )
        dims.append(value)
    return _nonnegative(name, tuple(dims))


def _nonnegative(name: str, dims: tuple) -> tuple:
    for dim in dims:
        if dim < 0:
            if name == "zeros":  # torch's zeros checks with words of its own
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {dim}: "
                f"[{', '.join(str(d) for d in dims)}]"
            )
    return dims


def _is_bool(value) -> bool:
    return isinstance(value, (builtins.bool, np.bool_))


def _is_index(value) -> bool:
    """An integer as Python asks (``__index__``): an int, a bool, a numpy integer."""
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _qualified_type(value) -> str:
    """The type's name as torch prints it: ``float``, ``numpy.float64``, ``numpy.bool``."""
    kind = type(value)
    module = kind.__module__
    return kind.__name__ if module == "builtins" else f"{module.split('.')[0]}.{kind.__name__}"


def _fill_dtype(fill_value) -> np.dtype | None:
    """The dtype torch infers from ``full``'s fill: bool, int64, the default float dtype
    or its complex counterpart; None for a value to be checked by numpy.  (This
    module's ``float`` is the dtype alias, so the Python types come from builtins.)"""
    for kind, dtype in (
        (builtins.bool, np.bool_),
        (builtins.int, np.int64),
        (builtins.float, get_default_dtype()),
        (builtins.complex, with_default_float(np.zeros(0, np.complex128)).dtype),
    ):
        if (
            isinstance(fill_value, kind)
            or isinstance(fill_value, np.generic)
            and np.dtype(type(fill_value)).kind == np.dtype(dtype).kind
        ):
            return np.dtype(dtype)
    return None


def ones(*shape, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """All ones; ``ng.ones(2, 3)``, ``ng.ones([2, 3])`` and ``ng.ones(size=(2, 3))`` work."""
    return _filled(1, _shape_or_size("ones", shape, size), dtype, requires_grad, device)


def zeros(*shape, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """All zeros."""
    return _filled(0, _shape_or_size("zeros", shape, size), dtype, requires_grad, device)


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Every element equal to ``fill_value``; the dtype follows the fill, as in torch.

    >>> import naivegraph as ng
    >>> ng.full((2,), True), ng.full((2,), 3), ng.full((2,), 0.5)
    (tensor([True, True]), tensor([3, 3]), tensor([0.5000, 0.5000]))
    """
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _fill_dtype(fill_value)
    return _filled(
        fill_value, checked_size("full", size, 1, alone=False), dtype, requires_grad, device
    )


def empty(*shape, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given shape whose values are unspecified (naivegraph gives zeros)."""
    return _filled(0, _shape_or_size("empty", shape, size), dtype, requires_grad, device)


def rand(*shape, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform on [0, 1); ``ng.rand(2, 3)`` or ``ng.rand(size=(2, 3))``.

    >>> import naivegraph as ng
    >>> ng.rand(size=(2, 3)).shape
    torch.Size([2, 3])
    """
    _check_device(device)
    shape = _shape_arg(_shape_or_size("rand", shape, size))
    data = _allocated(_random.generator.random, shape).astype(dtype or get_default_dtype())
    return _finish(data, requires_grad)


def randn(*shape, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal; ``ng.randn(2, 3)`` or ``ng.randn(size=(2, 3))``.

    >>> import naivegraph as ng
    >>> ng.randn(size=(2, 3)).shape
    torch.Size([2, 3])
    """
    _check_device(device)
    shape = _shape_arg(_shape_or_size("randn", shape, size))
    draws = _allocated(_random.generator.standard_normal, shape)
    return _finish(draws.astype(dtype or get_default_dtype()), requires_grad)


def normal(
    mean=0.0,
    std=1.0,
    size=None,
    *,
    dtype=None,
    device=None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Samples from normal distributions, in torch's forms: ``normal(mean, std, size)``
    with numbers (the default dtype), or ``normal(mean, std)`` with a tensor for either,
    one sample per element (the tensor's dtype and broadcast shape).

    The samples come from ``ng.manual_seed``'s generator; no gradient flows to a mean
    or std tensor.

    >>> import naivegraph as ng
    >>> ng.normal(0.0, 1.0, size=(2, 3)).shape, ng.normal(ng.zeros(4), 0.5).shape
    (torch.Size([2, 3]), torch.Size([4]))
    """
    _check_device(device)
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if size is None and not tensors:
        raise TypeError(
            "normal() received an invalid combination of arguments - with a number for "
            "both mean and std, give a size too: ng.normal(0.0, 1.0, size=(2, 3))"
        )
    if size is not None and not isinstance(size, (tuple, list)) and not tensors:
        raise _not_a_tuple_size(
            "normal", "mean, std, size", (mean, std, size), "ng.normal(0.0, 1.0, (2,))"
        )
    if size is not None and tensors:
        raise TypeError(
            "normal() received an invalid combination of arguments - a size goes with "
            "numbers for mean and std; with a tensor, the sample has its shape"
        )
    mean_values, std_values = (
        np.asarray(v._data if isinstance(v, Tensor) else v) for v in (mean, std)
    )
    if (std_values < 0).any():
        if isinstance(std, Tensor):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if tensors:
        shape = np.broadcast_shapes(mean_values.shape, std_values.shape)
        dtype = dtype or np.result_type(*(t.dtype for t in tensors))
    else:
        shape = checked_size("normal", size, None if isinstance(size, (tuple, list)) else 3)
        dtype = dtype or get_default_dtype()
    draws = _allocated(_random.generator.standard_normal, shape)
    return _finish((mean_values + std_values * draws).astype(dtype), requires_grad)


def randint(
    low: int, high=None, size=None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """Integers drawn uniformly from [low, high); ``randint(high, size)`` starts at 0.

    >>> import naivegraph as ng
    >>> ng.randint(3, 4, (2,)).tolist(), ng.randint(1, (2,)).tolist()
    ([3, 3], [0, 0])
    """
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high  # torch's randint(high, size)
    if high is None or size is None:
        raise TypeError(
            "randint() needs high and size: randint(low, high, size) or "
            f"randint(high, size), e.g. {EXAMPLE}"
        )
    if not isinstance(size, (tuple, list)):  # torch takes no bare int here (ones(2) does)
        raise _not_a_tuple_size("randint", "low, high, size", (low, high, size), EXAMPLE)
    _check_device(device)
    shape = checked_size("randint", size, 3)
    data = _allocated(lambda dims: _random.generator.integers(low, high, dims), shape)
    return _finish(data.astype(dtype or np.int64), requires_grad)


EXAMPLE = "ng.randint(0, 10, (3,))"


def _not_a_tuple_size(name: str, names: str, values: tuple, example: str) -> TypeError:
    """torch's refusal of a size that is no tuple where a function also takes numbers
    before it (its overloads then do not match at all)."""
    got = ", ".join("Tensor" if isinstance(v, Tensor) else _qualified_type(v) for v in values)
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but "
        f"expected ({names}) with a tuple of ints for the size: write {example}"
    )


class Generator:
    """A random generator of its own, for the ``generator=`` arguments (``randperm``,
    ``DataLoader``, ``random_split``), as ``torch.Generator``: seeded by
    ``manual_seed``, independent of the global one.  Its draws are numpy's, not torch's.

    >>> import naivegraph as ng
    >>> g = ng.Generator().manual_seed(0)
    >>> first = ng.randperm(5, generator=g).tolist()
    >>> first == ng.randperm(5, generator=g.manual_seed(0)).tolist()
    True
    """

    def __init__(self, device=None) -> None:
        _check_device(device)
        self.manual_seed(67280421310721)  # torch's default seed

    def manual_seed(self, seed: builtins.int) -> "Generator":
        if not isinstance(seed, (builtins.int, np.integer)) or isinstance(seed, builtins.bool):
            raise TypeError(f"manual_seed expected an int seed, got {type(seed).__name__}")
        self._seed = builtins.int(seed)
        self._rng = np.random.default_rng(self._seed & (2**64 - 1))
        return self

    def initial_seed(self) -> builtins.int:
        return self._seed

    def seed(self) -> builtins.int:
        """Reseed from a fresh random number and return it."""
        self.manual_seed(builtins.int(np.random.SeedSequence().entropy % 2**63))
        return self._seed


def randperm(
    n: builtins.int,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64), from the global generator or
    ``generator``.  Which permutation a seed gives is numpy's, not torch's.

    >>> import naivegraph as ng
    >>> sorted(ng.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    _check_device(device)
    if not isinstance(n, (builtins.int, np.integer)) or isinstance(n, builtins.bool):
        raise TypeError(
            f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}"
        )
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    data = generator_rng(generator).permutation(builtins.int(n))
    return _finish(data.astype(dtype or np.int64), requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Evenly spaced values in [start, end); integer arguments give int64, floats the
    default dtype."""
    _check_device(device)
    if end is None:
        start, end = 0, start
    array = np.arange(start, end, step, dtype=dtype)
    return _finish(array if dtype is not None else with_default_float(array), requires_grad)


def linspace(
    start, end, steps: int, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    _check_device(device)
    return _finish(
        np.linspace(start, end, steps, dtype=dtype or get_default_dtype()), requires_grad
    )


def eye(
    n: int, m: int | None = None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    _check_device(device)
    return _finish(np.eye(n, m, dtype=dtype or get_default_dtype()), requires_grad)


def _like(maker):
    def like(t: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        return maker(t.shape, dtype=dtype or t.dtype, device=device, requires_grad=requires_grad)

    like.__name__ = maker.__name__ + "_like"
    like.__doc__ = f"Like ``{maker.__name__}`` with the shape (and dtype) of ``t``."
    return like


ones_like = _like(ones)
zeros_like = _like(zeros)
rand_like = _like(rand)
randn_like = _like(randn)
empty_like = _like(empty)


def full_like(
    t: Tensor, fill_value, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    return full(
        t.shape, fill_value, dtype=dtype or t.dtype, device=device, requires_grad=requires_grad
    )


class _LegacyTensorType(type):
    """The metaclass of ``FloatTensor`` & co.: calling one builds a tensor of its dtype,
    and ``isinstance(t, ng.FloatTensor)`` asks for that dtype, as in torch."""

    dtype: np.dtype

    def __call__(cls, *args, device=None) -> Tensor:
        _check_device(device)
        if not args:
            return _finish(np.zeros(0, cls.dtype), False)
        if all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args):
            return _finish(np.zeros(args, cls.dtype), False)  # a shape: values unspecified
        if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray, Tensor)):
            return _finish(_as_array(args[0], None).astype(cls.dtype), False)
        raise TypeError(
            f"{cls.__name__}() takes a shape of ints ({cls.__name__}(2, 3)) or "
            f"data ({cls.__name__}([1, 2])), but got "
            f"({', '.join(_type_name(a) for a in args)})"
        )

    def __instancecheck__(cls, value) -> builtins.bool:
        return isinstance(value, Tensor) and value.dtype == cls.dtype


class FloatTensor(metaclass=_LegacyTensorType):
    """torch's legacy float32 constructor: ``FloatTensor([1, 2])`` holds the data,
    ``FloatTensor(2, 3)`` has that shape (values unspecified; naivegraph gives zeros).

    >>> import naivegraph as ng
    >>> ng.FloatTensor([1, 2]), ng.FloatTensor(2, 3).shape
    (tensor([1., 2.]), torch.Size([2, 3]))
    """

    dtype = np.dtype(np.float32)


class DoubleTensor(metaclass=_LegacyTensorType):
    """torch's legacy float64 constructor, as ``FloatTensor``.

    >>> import naivegraph as ng
    >>> ng.DoubleTensor([1, 2])
    tensor([1., 2.], dtype=float64)
    """

    dtype = np.dtype(np.float64)


class LongTensor(metaclass=_LegacyTensorType):
    """torch's legacy int64 constructor, as ``FloatTensor``.

    >>> import naivegraph as ng
    >>> ng.LongTensor([1, 2])
    tensor([1, 2])
    """

    dtype = np.dtype(np.int64)


class inference_mode:
    """``torch.inference_mode``: ``no_grad``, and the tensors made inside are inference
    tensors, as torch's: they keep no version counter (reading ``_version`` raises), so
    autograd outside may not save them for backward nor may they be changed in place
    there.  A context manager, a decorator (``@ng.inference_mode()`` or bare);
    ``inference_mode(False)`` records.

    >>> import naivegraph as ng
    >>> w = ng.tensor(2.0, requires_grad=True)
    >>> with ng.inference_mode():
    ...     t = w * 3
    >>> t.requires_grad, t.is_inference(), w.is_inference()
    (False, True, False)
    """

    def __new__(cls, mode=True):
        if callable(mode):  # used bare: @ng.inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: builtins.bool = True) -> None:
        self.mode = builtins.bool(mode)
        self._contexts: list = []

    def __enter__(self) -> None:
        context = no_grad() if self.mode else None
        self._contexts.append((context, _grad_state.inference))
        if context is not None:
            context.__enter__()
        _grad_state.inference = self.mode
        count_inference_user(1)

    def __exit__(self, *exc) -> None:
        context, inference = self._contexts.pop()
        _grad_state.inference = inference
        count_inference_user(-1)
        if context is not None:
            context.__exit__(*exc)

    def __call__(self, function):
        mode = self.mode

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return function(*args, **kwargs)

        return wrapper


# -- questions about tensors (torch's top level; not ops, so not in ng.functions) -------
def numel(t: Tensor) -> int:
    return t.numel()


def allclose(
    a,
    b,
    rtol: builtins.float = 1e-05,
    atol: builtins.float = 1e-08,
    equal_nan: builtins.bool = False,
) -> builtins.bool:
    """``|a - b| <= atol + rtol * |b|`` everywhere; NaNs equal each other only with
    ``equal_nan=True``, as in torch."""
    return builtins.bool(
        np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=equal_nan)
    )


def equal(input: Tensor, other: Tensor) -> builtins.bool:
    """True when both tensors have the same shape and the same values (no broadcasting;
    NaN equals nothing; the dtypes may differ), as ``torch.equal``.

    >>> import naivegraph as ng
    >>> ng.equal(ng.tensor([1, 2]), ng.tensor([1.0, 2.0])), ng.equal(ng.ones(1), ng.ones(2))
    (True, False)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"equal(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.equal(other)


def is_tensor(obj) -> builtins.bool:
    return isinstance(obj, Tensor)
