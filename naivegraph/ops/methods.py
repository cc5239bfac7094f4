"""Operators and PyTorch-named methods, shared by dynamic tensors and static nodes.

Each method is one op-table call through the class's own backend (``_ng_apply``):
a ``Tensor`` computes at once, a static ``Node`` adds itself to its graph.  A class
overrides a method only where its mode really differs (a tensor divides a number by
itself as torch does, through ``reciprocal``; a static node rejects an index that is
itself a node).
"""

from __future__ import annotations

import numbers
import operator
from collections import namedtuple
from typing import Any, Callable

import numpy as np

from .core import OPS, mixed_modes_error
from .shapes import normalize_dims, resolve_shape

_NO_ATTRS: dict = {}  # shared by attribute-free calls; never mutated
MinMax = namedtuple("MinMax", ["values", "indices"])  # what max(dim) / min(dim) return
Sort = namedtuple("sort", ["values", "indices"])  # type: ignore[name-match]  # torch.return_types.sort


def shape_arg(shape: tuple) -> tuple:
    """Accept ``f(2, 3)`` and ``f((2, 3))`` / ``f([2, 3])`` alike, as torch does."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def dim_arg(dim):
    """None, an int, or a tuple of ints (torch also takes lists)."""
    if dim is None or isinstance(dim, (int, np.integer)):
        return None if dim is None else int(dim)
    return tuple(int(d) for d in dim)


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_integer(part) -> bool:
    return isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_))


def _mixes_integers_and_arrays(index) -> bool:
    return (
        isinstance(index, tuple)
        and any(_is_integer(p) for p in index)
        and any(isinstance(p, (np.ndarray, list)) for p in index)
    )


def _split_integer_index(index: tuple) -> tuple[tuple, tuple]:
    """``x[0, :, [1]]`` as ``x[0, :, :][:, [1]]``: basic part first, arrays after."""
    first = tuple(slice(None) if isinstance(p, (np.ndarray, list)) else p for p in index)
    rest = tuple(
        p if isinstance(p, (np.ndarray, list)) or p is Ellipsis else slice(None)
        for p in index
        if not _is_integer(p)
    )
    return first, rest


def _bound(value, name: str):
    """A clamp bound given as a tensor, as its values: the bound itself gets no gradient."""
    if value is None or not hasattr(type(value), "_ng_apply"):
        return value
    requires = getattr(value, "requires_grad", False)
    if requires or getattr(value, "_carries_tangent", lambda: False)():
        carries = "requires grad" if requires else "carries a forward-mode tangent"
        raise RuntimeError(
            f"clamp: a {name} bound that {carries} is not supported, since "
            "naivegraph does not send derivatives through clamp's bounds; pass "
            f"{name}=bound.detach(), or use maximum/minimum to differentiate "
            "through it"
        )
    try:
        return np.asarray(value)
    except TypeError as error:  # a placeholder: its values exist only while the graph runs
        raise TypeError(
            f"clamp: the {name} bound must be known when the op is built: pass a number "
            "or a numpy array, or use maximum/minimum with a graph node"
        ) from error


def _norm_order(p, dim) -> float:
    """``torch.norm``'s ``p`` as a number: ``'fro'`` is the 2-norm of all the elements
    reduced (torch computes it with linalg.vector_norm too)."""
    if isinstance(p, str):
        if p == "fro":
            return 2.0
        if p == "nuc":
            raise NotImplementedError(
                "norm(p='nuc'): the nuclear norm needs singular values, which naivegraph "
                "does not compute; use p='fro' or a number"
            )
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if p is None:
        return 2.0
    return float(p)


def _index_values(index, name: str) -> np.ndarray:
    """An index argument as an array of its values: a tensor or an array (torch takes
    only tensors, and refuses a list); a static node has no values to take."""
    if hasattr(type(index), "_ng_apply"):
        data = getattr(index, "_data", None)
        if not isinstance(data, np.ndarray):
            raise TypeError(
                f"{name}(): the index must be known when the op is built: pass a numpy "
                "array of integers (a graph node's values exist only while the graph runs)"
            )
        return data
    if isinstance(index, np.ndarray):
        return index
    raise TypeError(
        f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}; "
        "wrap it as ng.tensor([...])"
    )


def _fill_value(value, name: str):
    """``masked_fill``'s value: a Python number or a tensor (0-d, which the op checks)."""
    if isinstance(value, (numbers.Number, np.bool_)) or hasattr(type(value), "_ng_apply"):
        return value
    raise TypeError(
        f"{name}(): argument 'value' must be a number or a 0-d tensor, not {type(value).__name__}"
    )


def _int_argument(value, name: str, argument: str) -> int:
    """torch's int arguments: an int or a 0-d integer tensor, not a bool or a float
    (1.5 is not rounded)."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    position = {"diagonal": 1, "dim": 1}[argument]
    raise TypeError(
        f"{name}(): argument '{argument}' (position {position}) must be int, not "
        f"{type(value).__name__}"
    )


def _diagonal(diagonal, name: str) -> int:
    return _int_argument(diagonal, name, "diagonal")


def _same_mode(self, others) -> None:
    """A dynamic tensor and a static node meeting in an operator is a clear TypeError."""
    for other in others:
        if type(other) is not type(self) and getattr(type(other), "_ng_apply", None) not in (
            None,
            self._ng_apply,
        ):
            raise mixed_modes_error((self, *others))


def foreign(other) -> bool:
    """An operand torch's operators do not take (a list, a tuple, a string, None): the
    operator returns NotImplemented, so Python asks the other operand and then raises
    its TypeError.  A numpy scalar is a number; a numpy array is taken on either side
    (torch refuses one on the left, but the rules under create_graph write ``g / y``
    with an array ``g`` and a tensor ``y``)."""
    return not isinstance(other, (numbers.Number, np.generic, np.ndarray, OpMethods))


def not_a_tensor(dunder: str, self) -> TypeError:
    """torch's error for an operator called on the class with a ``self`` of another type
    (``Tensor.__mul__(2.0, x)``)."""
    return TypeError(
        f"descriptor '{dunder}' for 'Tensor' objects doesn't apply to a "
        f"'{type(self).__name__}' object: call it on a tensor, or write the operator"
    )


def _operator(name: str, dunder: str):
    """``x <op> y`` and its reflected twin ``y <op> x``, bound to the op once."""
    op = OPS[name]

    def forward(self, other):
        if type(other) is not type(self):  # the common same-type case skips the checks
            if not isinstance(self, OpMethods):
                raise not_a_tensor(f"__{dunder}__", self)
            if self._defers_foreign and foreign(other):
                return NotImplemented
            _same_mode(self, (other,))
        return self._ng_apply(op, (self, other), _NO_ATTRS)

    def reflected(self, other):
        if type(other) is not type(self):
            if not isinstance(self, OpMethods):
                raise not_a_tensor(f"__r{dunder}__", self)
            if self._defers_foreign and foreign(other):
                return NotImplemented
            _same_mode(self, (other,))
        return self._ng_apply(op, (other, self), _NO_ATTRS)

    forward.__name__, reflected.__name__ = f"__{dunder}__", f"__r{dunder}__"
    # Python names a function by its qualified name in the errors of a call
    forward.__qualname__, reflected.__qualname__ = forward.__name__, reflected.__name__
    return forward, reflected


class OpMethods:
    """Mixin: the arithmetic, reductions and shape methods both modes speak."""

    __slots__ = ()

    #: whether an operator returns NotImplemented for an operand torch's do not take
    #: (dynamic mode, as torch); a static node's op names the operand in its own error
    _defers_foreign = False

    # Provided by each mode's class (dynamic Tensor, static Node):
    _ng_apply: Callable
    shape: Any
    dtype: Any

    def _op(self, name: str, *others, **attrs):
        if others:
            _same_mode(self, others)
        return self._ng_apply(OPS[name], (self, *others), attrs or _NO_ATTRS)

    def _known_shape(self, what: str) -> tuple:
        """This value's shape; static subclasses explain when it is not known yet."""
        return tuple(self.shape)

    def _index(self, index):
        """Hook: turn an index into what numpy accepts."""
        return index

    # -- operators ------------------------------------------------------------------
    __add__, __radd__ = _operator("add", "add")
    __sub__, __rsub__ = _operator("sub", "sub")
    __mul__, __rmul__ = _operator("mul", "mul")
    __truediv__, __rtruediv__ = _operator("div", "truediv")
    __floordiv__, __rfloordiv__ = _operator("floor_divide", "floordiv")
    __rmod__ = _operator("remainder", "mod")[1]

    def __mod__(self, other):
        if _is_number(other):  # torch's Scalar overload: one edge, RemainderBackward0
            return self._op("remainder_scalar", divisor=other)
        return self._op("remainder", other)

    def __pow__(self, exponent):
        return self.pow(exponent)

    def __rpow__(self, base):
        return self._ng_apply(OPS["pow"], (base, self), _NO_ATTRS)

    def __matmul__(self, other):
        return self.matmul(other)

    def __rmatmul__(self, other):
        return self._ng_apply(OPS["matmul"], (other, self), _NO_ATTRS)

    def __neg__(self):
        return self._op("neg")

    def __abs__(self):
        return self._op("abs")

    def __pos__(self):
        return self

    # Comparisons build boolean values (no gradient).  __eq__/__ne__ are left to the
    # subclasses: static nodes keep identity equality because they are dict keys.
    def __lt__(self, other):
        return self._op("lt", other)

    def __le__(self, other):
        return self._op("le", other)

    def __gt__(self, other):
        return self._op("gt", other)

    def __ge__(self, other):
        return self._op("ge", other)

    def __invert__(self):
        try:
            return self._op("bitwise_not")
        except NotImplementedError:  # torch's operator words it so
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type "
                "tensors; for the mask of a comparison use logical_not()"
            ) from None

    # & | ^ are torch's bitwise operators: on bool masks the logical ones
    __and__, __rand__ = _operator("bitwise_and", "and")
    __or__, __ror__ = _operator("bitwise_or", "or")
    __xor__, __rxor__ = _operator("bitwise_xor", "xor")

    def bitwise_and(self, other):
        return self._op("bitwise_and", other)

    def bitwise_or(self, other):
        return self._op("bitwise_or", other)

    def bitwise_xor(self, other):
        return self._op("bitwise_xor", other)

    def bitwise_not(self):
        return self._op("bitwise_not")

    def __getitem__(self, index):
        index = self._index(index)
        if _mixes_integers_and_arrays(index):
            # PyTorch applies the integers first (a select), then the array part; numpy
            # would treat them together and can move the indexed dimensions to the front.
            first, rest = _split_integer_index(index)
            return self._op("getitem", index=first)._op("getitem", index=rest)
        return self._op("getitem", index=index)

    # -- elementwise ------------------------------------------------------------------
    def exp(self):
        return self._op("exp")

    def reciprocal(self):
        return self._op("reciprocal")

    def log(self):
        return self._op("log")

    def sqrt(self):
        return self._op("sqrt")

    def sin(self):
        return self._op("sin")

    def cos(self):
        return self._op("cos")

    def tanh(self):
        return self._op("tanh")

    def sigmoid(self):
        return self._op("sigmoid")

    def relu(self):
        return self._op("relu")

    def abs(self):
        return self._op("abs")

    def neg(self):
        return self._op("neg")

    def sign(self):
        return self._op("sign")

    def pow(self, exponent):
        if _is_number(exponent):
            return self._op("pow_scalar", exponent=exponent)
        return self._op("pow", exponent)

    def where(self, condition, other):
        """``self`` where ``condition`` holds, else ``other``: torch's ``Tensor.where``,
        the same as ``where(condition, self, other)``.

        >>> import naivegraph as ng
        >>> x = ng.tensor([-1.0, 2.0])
        >>> (x * 2).where(x > 0, x * -1)
        tensor([1., 4.])
        """
        _same_mode(self, (condition, other))
        return OPS["where"].dispatch(condition, self, other)

    def clamp(self, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
        return self._op("clamp", min=_bound(min, "min"), max=_bound(max, "max"))

    def maximum(self, other):
        return self._op("maximum", other)

    def minimum(self, other):
        return self._op("minimum", other)

    def softmax(self, dim: int):
        return self._op("softmax", dim=dim)

    def log_softmax(self, dim: int):
        return self._op("log_softmax", dim=dim)

    def add(self, other, alpha=1):
        return self + other if alpha == 1 else self._op("add_alpha", other, alpha=alpha)

    def sub(self, other, alpha=1):
        return self - other if alpha == 1 else self._op("sub_alpha", other, alpha=alpha)

    def mul(self, other):
        return self * other

    def div(self, other, *, rounding_mode="true"):
        """``self / other``; ``rounding_mode`` 'trunc' or 'floor' rounds the quotient (an
        explicit None is true division recorded as torch's DivBackward2)."""
        if rounding_mode == "true":
            return self / other
        return self._op("div_rounding", other, rounding_mode=rounding_mode)

    divide = div

    def floor_divide(self, other):
        return self // other

    def remainder(self, other):
        return self % other

    # -- reductions -------------------------------------------------------------------
    def sum(self, dim=None, keepdim: bool = False, *, dtype=None, axis=None, keepdims=None):
        """Sum over ``dim`` (all when None); torch also takes numpy's and TF's names
        ``axis`` and ``keepdims``, as do :meth:`mean`, :meth:`max`, :meth:`min`,
        :meth:`prod`, :meth:`var` and :meth:`std`.

        >>> import naivegraph as ng
        >>> ng.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(axis=0, keepdims=True)
        tensor([[4., 6.]])
        """
        dim, keepdim = _numpy_names("sum", dim, keepdim, axis, keepdims)
        if dtype is not None and np.dtype(dtype) != np.dtype(self.dtype):
            return self._op("sum_typed", dim=dim_arg(dim), keepdim=keepdim, dtype=np.dtype(dtype))
        return self._op("sum", dim=dim_arg(dim), keepdim=keepdim)

    def mean(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        dim, keepdim = _numpy_names("mean", dim, keepdim, axis, keepdims)
        dtype = self.dtype
        if dtype is not None and np.dtype(dtype).kind not in "fc":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either "
                f"a floating point or complex dtype. Got: {np.dtype(dtype)}"
            )
        return self._op("mean", dim=dim_arg(dim), keepdim=keepdim)

    def max(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        """The largest value; along ``dim``, a ``(values, indices)`` pair as in torch; with
        another tensor, the elementwise maximum."""
        dim, keepdim = _numpy_names("max", dim, keepdim, axis, keepdims)
        return self._extreme("max", "argmax", "maximum", dim, keepdim)

    def min(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        """The smallest value; along ``dim``, a ``(values, indices)`` pair as in torch; with
        another tensor, the elementwise minimum."""
        dim, keepdim = _numpy_names("min", dim, keepdim, axis, keepdims)
        return self._extreme("min", "argmin", "minimum", dim, keepdim)

    def _extreme(self, name: str, position: str, elementwise: str, dim, keepdim: bool):
        if dim is None:
            return self._op(name, dim=None, keepdim=keepdim)
        if not isinstance(dim, (int, np.integer)):
            return self._op(elementwise, dim)
        dim = int(dim)
        return MinMax(
            self._op(name, dim=dim, keepdim=keepdim), self._op(position, dim=dim, keepdim=keepdim)
        )

    def argmax(self, dim: int | None = None, keepdim: bool = False, *, axis: int | None = None):
        """Index of the largest element (of all, or along ``dim``; torch also takes
        numpy's name ``axis``, as d2l writes ``y_hat.argmax(axis=1)``).

        >>> import naivegraph as ng
        >>> ng.tensor([[1.0, 3.0], [5.0, 0.0]]).argmax(axis=1)
        tensor([1, 0])
        """
        dim = _dim_or_axis("argmax", dim, axis)
        return self._op("argmax", dim=None if dim is None else int(dim), keepdim=keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False, *, axis: int | None = None):
        dim = _dim_or_axis("argmin", dim, axis)
        return self._op("argmin", dim=None if dim is None else int(dim), keepdim=keepdim)

    def prod(self, dim: int | None = None, keepdim: bool = False, *, axis=None, keepdims=None):
        """Product of all elements, or along one ``dim``; integers multiply in int64.

        >>> import naivegraph as ng
        >>> ng.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(1)
        tensor([ 2., 12.])
        """
        dim, keepdim = _numpy_names("prod", dim, keepdim, axis, keepdims)
        if dim is not None and not isinstance(dim, (int, np.integer)):
            raise TypeError(
                f"prod(): argument 'dim' must be int, not {type(dim).__name__}: torch's prod "
                "reduces one dimension at a time (call it once per dimension)"
            )
        return self._op("prod", dim=None if dim is None else int(dim), keepdim=keepdim)

    def var(
        self,
        dim=None,
        unbiased=None,
        keepdim: bool = False,
        *,
        correction=None,
        axis=None,
        keepdims=None,
    ):
        """Variance over ``dim`` (all when None), dividing by ``n - correction``
        (``correction=1`` by default; ``unbiased=False`` is ``correction=0``).

        >>> import naivegraph as ng
        >>> ng.tensor([1.0, 2.0, 3.0, 4.0]).var()
        tensor(1.6667)
        """
        dim, keepdim = _numpy_names("var", dim, keepdim, axis, keepdims)
        return self._spread("var", dim, unbiased, keepdim, correction)

    def std(
        self,
        dim=None,
        unbiased=None,
        keepdim: bool = False,
        *,
        correction=None,
        axis=None,
        keepdims=None,
    ):
        """Standard deviation over ``dim``: the square root of :meth:`var`.

        >>> import naivegraph as ng
        >>> ng.tensor([1.0, 3.0]).std(correction=0)
        tensor(1.)
        """
        dim, keepdim = _numpy_names("std", dim, keepdim, axis, keepdims)
        return self._spread("std", dim, unbiased, keepdim, correction)

    def _spread(self, name: str, dim, unbiased, keepdim: bool, correction):
        if isinstance(dim, (bool, np.bool_)):  # torch's var(unbiased) overload
            dim, unbiased = None, bool(dim)
        if unbiased is not None and correction is not None:
            raise TypeError(
                f"{name}() received an invalid combination of arguments: pass either "
                "unbiased or correction, not both (unbiased=False is correction=0)"
            )
        if correction is None:
            correction = 0 if unbiased is False else 1
        return self._op(name, dim=dim_arg(dim), correction=correction, keepdim=keepdim)

    def norm(self, p="fro", dim=None, keepdim: bool = False):
        """The vector p-norm over ``dim`` (all elements when None), as ``torch.norm``:
        p = 2 (``'fro'``, the default), 1, inf, -inf, 0 or any other number.

        >>> import naivegraph as ng
        >>> ng.tensor([3.0, -4.0]).norm(), ng.tensor([3.0, -4.0]).norm(1)
        (tensor(5.), tensor(7.))
        """
        return self._op("norm", p=_norm_order(p, dim), dim=dim_arg(dim), keepdim=keepdim)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        """``(values, indices)``: the values sorted along ``dim`` and where each came from.

        The sort is always stable (equal values keep their order, which is what torch
        gives with ``stable=True``); NaN sorts as the largest value.

        >>> import naivegraph as ng
        >>> ng.tensor([3.0, 1.0, 2.0]).sort(descending=True)
        sort(values=tensor([3., 2., 1.]), indices=tensor([0, 2, 1]))
        """
        attrs = {"dim": int(dim), "descending": bool(descending)}
        return Sort(self._op("sort", **attrs), self._op("argsort", **attrs))

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        """The indices that sort ``self`` along ``dim`` (``sort(...).indices``)."""
        return self._op("argsort", dim=int(dim), descending=bool(descending))

    def index_select(self, dim: int, index):
        """The slices at positions ``index`` (a 1-D integer tensor) along ``dim``.

        >>> import naivegraph as ng
        >>> ng.tensor([[1, 2], [3, 4], [5, 6]]).index_select(0, ng.tensor([2, 0]))
        tensor([[5, 6],
                [1, 2]])
        """
        return self._op("index_select", dim=int(dim), index=_index_values(index, "index_select"))

    def masked_fill(self, mask, value):
        """A copy of ``self`` with ``value`` (a number or a 0-d tensor) where the bool
        ``mask``, broadcast with ``self``, is True.

        >>> import naivegraph as ng
        >>> x = ng.tensor([-1.0, 2.0, -3.0])
        >>> x.masked_fill(x < 0, 0.0)
        tensor([0., 2., 0.])
        """
        if hasattr(type(value), "_ng_apply"):
            return self._op("masked_fill_tensor", mask, value)
        _same_mode(self, (mask,))
        return self._op("masked_fill", mask, value=_fill_value(value, "masked_fill"))

    def tril(self, diagonal: int = 0):
        """The lower triangle of the last two dims: entries on and below ``diagonal``
        (0 the main diagonal, 1 one above it, -1 one below), zeros elsewhere.

        >>> import naivegraph as ng
        >>> ng.ones(2, 3).tril()
        tensor([[1., 0., 0.],
                [1., 1., 0.]])
        """
        return self._op("tril", diagonal=_diagonal(diagonal, "tril"))

    def triu(self, diagonal: int = 0):
        """The upper triangle of the last two dims: entries on and above ``diagonal``.

        >>> import naivegraph as ng
        >>> ng.ones(2, 3).triu(1)
        tensor([[0., 1., 1.],
                [0., 0., 1.]])
        """
        return self._op("triu", diagonal=_diagonal(diagonal, "triu"))

    def gather(self, dim: int, index):
        """``out[i][j] = self[i][index[i][j]]`` for ``dim=1`` (and so on): an integer
        ``index`` of ``self``'s rank picks one entry along ``dim`` per position.

        >>> import naivegraph as ng
        >>> ng.tensor([[1, 2], [3, 4]]).gather(1, ng.tensor([[1], [0]]))
        tensor([[2],
                [3]])
        """
        dim = _int_argument(dim, "gather", "dim")
        return self._op("gather", dim=dim, index=_index_values(index, "gather"))

    def scatter_add(self, dim: int, index, src):
        """A copy of ``self`` with each entry of ``src`` added at its ``index`` along
        ``dim`` (``out[i][index[i][j]] += src[i][j]`` for ``dim=1``); repeated positions
        add up.  ``src`` has the index's shape.

        >>> import naivegraph as ng
        >>> ng.zeros(3).scatter_add(0, ng.tensor([0, 2, 0]), ng.tensor([1.0, 2.0, 3.0]))
        tensor([4., 0., 2.])
        """
        dim = _int_argument(dim, "scatter_add", "dim")
        return self._op("scatter_add", src, dim=dim, index=_index_values(index, "scatter_add"))

    def index_add(self, dim: int, index, source, *, alpha=1):
        """A copy of ``self`` with ``alpha * source`` added at positions ``index`` along
        ``dim``; repeated positions add up.

        >>> import naivegraph as ng
        >>> ng.zeros(3).index_add(0, ng.tensor([0, 2, 0]), ng.tensor([1.0, 2.0, 3.0]))
        tensor([4., 0., 2.])
        """
        index = _index_values(index, "index_add")
        return self._op("index_add", source, dim=int(dim), index=index, alpha=alpha)

    # -- linear algebra -----------------------------------------------------------------
    def dot(self, other):
        """Inner product of two 1-D tensors of one dtype.

        >>> import naivegraph as ng
        >>> ng.tensor([1.0, 2.0]).dot(ng.tensor([3.0, 4.0]))
        tensor(11.)
        """
        return self._op("dot", other)

    def matmul(self, other):
        _same_mode(self, (other,))
        dims = (self.ndim, np.ndim(other) if not hasattr(other, "_ng_apply") else other.ndim)
        if 0 in dims:
            raise RuntimeError(
                "both arguments to matmul need to be at least 1D, but they are "
                f"{dims[0]}D and {dims[1]}D"
            )
        return self._ng_apply(OPS["matmul"], (self, other), _NO_ATTRS)

    def bmm(self, mat2):
        """Products of two batches of matrices, (b, n, m) and (b, m, p): 3-D only, one batch
        size (``matmul`` broadcasts other shapes).

        >>> import naivegraph as ng
        >>> ng.ones(2, 1, 3).bmm(ng.ones(2, 3, 4)).shape
        torch.Size([2, 1, 4])
        """
        _same_mode(self, (mat2,))
        for name, value in (("batch1", self), ("batch2", mat2)):
            ndim = getattr(value, "ndim", np.ndim(value))
            if ndim is not None and ndim != 3:
                raise RuntimeError(
                    f"{name} must be a 3D tensor, got {ndim}-D: bmm multiplies (b, n, m) by "
                    "(b, m, p); use matmul for other shapes"
                )
        shape, other = self.shape, getattr(mat2, "shape", np.shape(mat2))
        if shape is not None and other is not None:
            want, got = [shape[0], shape[2]], [other[0], other[1]]
            if None not in want + got and want != got:
                raise RuntimeError(
                    f"Expected size for first two dimensions of batch2 tensor to be: {want} "
                    f"but got: {got}."
                )
        return self._op("bmm", mat2)

    def mm(self, other):
        dims = (self.ndim, getattr(other, "ndim", np.ndim(other)))
        if any(d is not None and d != 2 for d in dims):
            raise RuntimeError(
                "mm: both arguments must be 2-D matrices; use matmul for other shapes"
            )
        return self.matmul(other)

    # -- shape ---------------------------------------------------------------------------
    def reshape(self, *shape):
        shape = shape_arg(shape)
        known = self.shape
        if known is not None and all(isinstance(s, (int, np.integer)) for s in known):
            shape = resolve_shape(shape, int(np.prod(known)))
        return self._op("reshape", shape=shape)

    view = reshape

    def view_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        shape = self._known_shape("flatten")
        # torch's range checks (a 0-d tensor takes dims -1 and 0), not Python's modulo
        ((start,), (end,)) = (normalize_dims(d, len(shape)) or (0,) for d in (start_dim, end_dim))
        if not shape:
            return self.reshape(1)
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        group = shape[start : end + 1]
        merged = -1 if None in group else int(np.prod(group))
        # An unknown size (a static placeholder's None) is left for reshape's -1 to find.
        new = tuple(-1 if d is None else d for d in shape[:start] + (merged,) + shape[end + 1 :])
        if new.count(-1) > 1:
            raise ValueError(
                f"flatten({start_dim}, {end_dim}) of shape {shape} leaves more than "
                "one size unknown; declare more of the placeholder's shape"
            )
        if -1 in new and 0 in new:  # no element tells reshape what the -1 stands for
            raise ValueError(
                f"flatten({start_dim}, {end_dim}) of shape {shape}: beside a size-0 "
                "dimension the unknown size cannot be inferred when the graph runs; "
                "declare the placeholder's full shape"
            )
        return self.reshape(new)

    def transpose(self, dim0: int, dim1: int):
        return self._op("transpose", dim0=dim0, dim1=dim1)

    def permute(self, *dims):
        return self._op("permute", dims=shape_arg(dims))

    def t(self):
        ndim = self.ndim
        if ndim is not None and ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
        return self._op("t")

    @property
    def T(self):
        ndim = len(self._known_shape(".T"))
        return self if ndim < 2 else self.permute(*reversed(range(ndim)))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def squeeze(self, dim=None):
        return self._op("squeeze", dim=dim_arg(dim))

    def unsqueeze(self, dim: int):
        return self._op("unsqueeze", dim=dim)

    def expand(self, *sizes):
        return self._op("expand", shape=shape_arg(sizes))  # -1 keeps a size, as in torch

    def expand_as(self, other):
        return self.expand(other.shape)


def _numpy_names(name: str, dim, keepdim, axis, keepdims) -> tuple:
    """``dim`` and ``keepdim``, or their numpy / TF names ``axis`` and ``keepdims``
    (torch accepts either spelling of each, not both)."""
    if keepdims is not None:
        if keepdim is not False:
            raise TypeError(f"{name}() got both keepdim and its alias keepdims: give one of them")
        keepdim = keepdims
    return _dim_or_axis(name, dim, axis), keepdim


def _dim_or_axis(name: str, dim, axis):
    """``dim``, or its numpy alias ``axis`` (torch accepts either, not both)."""
    if axis is None:
        return dim
    if dim is not None:
        raise TypeError(f"{name}() got both dim and its alias axis: give one of them")
    return axis
