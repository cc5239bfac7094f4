"""The dynamic-mode Tensor: a numpy array plus the autograd bookkeeping of PyTorch.

Every op computes at once (eager) through the shared op table and, when any input
requires grad and grad mode is on, records a ``grad_fn`` node.  ``backward`` walks
those nodes (see :mod:`naivegraph.dynamic.engine`).

This module holds what a reader needs first: the op table's dynamic backend (``apply``,
``_record``) and the class itself (construction, data, dtype/shape/device, conversion,
repr, its arithmetic where it differs from the shared ``OpMethods``).  Two mixins hold
the rest: autograd's attributes (``tensor_autograd``) and views with in-place ops
(``tensor_views``).
"""

from __future__ import annotations

import math
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from ..ops import OPS
from ..ops.core import (
    OpDef,
    default_complex,
    refuse_complex_result,
    with_default_float,
)
from ..ops.errors import explain
from ..ops.methods import _NO_ATTRS, OpMethods, _is_number, _numpy_names, foreign, shape_arg
from ..ops.shapes import normalize_dims, resolve_shape
from . import saved as saved_values
from .anomaly_mode import mode as anomaly
from .anomaly_mode import record_creation
from .defaults import device, get_default_dtype
from .forward import dual, propagate
from .grad_mode import _state, inference_users, mark_inference
from .node import (
    class_of_op,
    find_node_class,
    meta_of,
    register_tensor_class,
)
from .surface import LEGACY_TYPES, Size, dtype_of_type
from .tensor_autograd import TensorAutograd
from .tensor_autograd import bind as bind_autograd
from .tensor_views import (
    _VIEW_OPS,
    TensorViews,
    _aliases,
    _mark_view,
    bind_no_grad_views,
    no_grad_view_message,
)
from .tensor_views import bind as bind_views

_new = object.__new__
_tuple_new = tuple.__new__  # x.shape: numpy's tuple (ints already) as a Size, unchecked


# ----------------------------------------------------------------------------------
# The dynamic backend of the op table
# ----------------------------------------------------------------------------------


def apply(op: OpDef, args: tuple, attrs: dict) -> "Tensor":
    """Run ``op`` now on numpy and, if needed, record its backward node."""
    inputs = args[0] if op.variadic else args
    datas = []
    any_grad = False
    scalars = False
    for a in inputs:
        if isinstance(a, Tensor):
            datas.append(a._data)
            if a._requires_grad:
                any_grad = True
        else:
            datas.append(a)
            scalars = scalars or isinstance(a, np.generic)
    if scalars:
        inputs = _numpy_scalars_as_numbers(inputs)
        datas = [d._data if isinstance(d, Tensor) else d for d in inputs]
    try:
        if op.variadic:
            out = op.forward(datas, **attrs)
        else:
            out = op.forward(*datas, **attrs) if attrs else op.forward(*datas)
    except (ValueError, TypeError, IndexError) as error:
        raise explain(op.name, op.elementwise, datas, attrs, error) from None
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    result = _new(Tensor)
    result._data = out
    result.grad_fn = None
    result._output_nr = 0
    if any_grad and _state.enabled and op.differentiable:
        if out.dtype.kind == "c":
            refuse_complex_result(op, out)
        result._requires_grad = True
        result.grad_fn = _record(op, inputs, attrs, result)
        if anomaly.enabled:
            record_creation(result.grad_fn)
        if saved_values.hook_stack:  # saved_tensors_hooks: the node keeps the packed form
            saved_values.pack_node(result.grad_fn, result)
    else:
        result._requires_grad = False
    if op.name in _VIEW_OPS and isinstance(inputs[0], Tensor) and _aliases(out, datas[0]):
        if out is datas[0]:  # numpy gave the input back (a no-op squeeze): still a view
            result._data = out.view()
        _mark_view(result, inputs[0], op, attrs)
    if dual.active:  # forward mode: the output's tangent rides along
        propagate(op, inputs, attrs, result)
    if inference_users[0] and _state.inference:
        mark_inference(result)
    return result


def _multipliable(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a @ b`` has a value: one dtype, matching inner sizes, batches that
    broadcast (else the single matmul op raises its explained error)."""
    if a.dtype != b.dtype or a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        return False
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return False
    return True


def _numpy_scalars_as_numbers(inputs) -> tuple:
    """torch takes a numpy scalar (``np.float64(0.5)``, what ``np.sqrt(2.0)`` gives) as
    the Python number it holds: it does not widen a float32 tensor to float64."""
    return tuple(
        a.item() if isinstance(a, np.generic) and a.dtype.kind in "biufc" else a for a in inputs
    )


def _record(op: OpDef, inputs: Sequence, attrs: dict, result: "Tensor"):
    """Build the grad_fn of ``result``: edges, saved values, forward-side metadata.

    Kept lean on purpose: it runs once per recorded op, and every object it allocates
    is one more for Python's garbage collector to scan while the graph is alive.
    """
    needs = tuple([isinstance(a, Tensor) and a._requires_grad for a in inputs])
    saves = op.saves_for(needs)
    edges, saved = [], []
    sources = ()  # (position, tensor, version) of each saved tensor
    constants = None  # weak refs to inputs that do not require grad, for drawings
    for i, a in enumerate(inputs):
        if isinstance(a, Tensor):
            if i in saves:
                saved.append(a._data)
                sources += ((i, a, a._saved_version),)
            else:
                saved.append(meta_of(a._data))
            if a._requires_grad:
                fn = a.grad_fn
                edges.append((fn, a._output_nr) if fn is not None else (a._accumulator(), 0))
                continue
            constants = constants or {}
            constants[i] = weakref.ref(a)
        else:
            saved.append(a)
        edges.append(_NO_EDGE)
    if op.edge_inputs is not None:  # inputs no gradient can reach get no edge, as in torch
        edges = [edges[i] for i in op.edge_inputs]
    out = result._data
    if "out" in saves:
        saved_out = out
        counter = result._counter()
        sources += (("out", counter, counter.value),)
    else:
        saved_out = meta_of(out)
    cls = class_of_op.get(op) or find_node_class(op, attrs, saved)  # the lookup, inline
    return cls(
        op,
        attrs,
        tuple(edges),
        saved,
        saved_out,
        sources,
        needs,
        constants,
        weakref.ref(result),
    )


_NO_EDGE = (None, 0)


def _op(name: str, *args, **attrs) -> "Tensor":
    return apply(OPS[name], args, attrs)


def _format_array(data: np.ndarray) -> str:
    """numpy data printed the way PyTorch prints tensors (4 decimals, aligned)."""
    if data.dtype.kind == "b":
        fmt = str
    elif data.dtype.kind in "iu":
        fmt = str
    elif data.dtype.kind == "c":
        fmt = _complex_formatter(data)
    else:
        finite = data[np.isfinite(data)] if data.size else data
        fmt = _float_formatter(finite)
    width = max((len(fmt(v)) for v in data.flat), default=0) if data.size <= 1000 else 0
    pad = lambda v: fmt(v).rjust(width)
    return np.array2string(
        data,
        separator=", ",
        prefix="tensor(",
        max_line_width=80,
        threshold=1000,
        edgeitems=3,
        formatter={"all": pad},
    )


def _complex_formatter(data: np.ndarray) -> Callable:
    """torch's complex style: real and imaginary parts each in their own float format."""
    real, imag = data.real, data.imag
    real_part = _float_formatter(real[np.isfinite(real)])
    imag_part = _float_formatter(imag[np.isfinite(imag)])

    def fmt(v) -> str:
        sign = "-" if np.signbit(v.imag) else "+"
        return f"{real_part(v.real)}{sign}{imag_part(abs(v.imag))}j"

    return fmt


def _float_formatter(finite: np.ndarray) -> Callable:
    if finite.size == 0:
        return lambda v: f"{v:.4f}"
    absolute = np.abs(finite.astype(np.float64))
    nonzero = absolute[absolute > 0]
    if np.all(finite == np.round(finite)):
        if nonzero.size and nonzero.max() >= 1e8:
            return lambda v: f"{v:.4e}"
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    if nonzero.size and (
        nonzero.max() / nonzero.min() > 1000 or nonzero.max() >= 1e8 or nonzero.min() < 1e-4
    ):
        return lambda v: f"{v:.4e}"
    return lambda v: f"{v:.4f}" if np.isfinite(v) else str(v)


def _default_dtype_for(dtype: np.dtype) -> bool:
    # torch leaves out the default dtype, its complex twin, int64 and bool
    return dtype in (get_default_dtype(), default_complex(), np.int64, np.bool_)


class Tensor(TensorAutograd, TensorViews, OpMethods):
    """An n-dimensional array that can record the operations that made it.

    >>> import naivegraph as ng
    >>> a = ng.tensor(2.0, requires_grad=True)
    >>> b = a.exp()
    >>> b
    tensor(7.3891, grad_fn=<ExpBackward0>)
    >>> b.backward()
    >>> a.grad
    tensor(7.3891)
    """

    __slots__ = ("_data", "_requires_grad", "grad_fn", "_output_nr", "__dict__", "__weakref__")
    # Rarely set state lives in __dict__ only when used; these are the defaults.
    _grad = None
    _version_counter = None
    _base = None
    _retains_grad = False
    _hooks = None
    _accumulator_ref = None
    _view_chain = ()  # view ops from _base's array to this one's
    _views = None  # on a base: weak set of its live views
    _defers_foreign = True  # x * [1.0]: Python's TypeError, as torch's operators give
    _made_in_no_grad: bool | str = False  # or the mode a view was made in

    _ng_apply = staticmethod(apply)  # the op table dispatches tensors here
    __array_ufunc__ = None  # numpy defers to our reflected operators
    __array_priority__ = 1000

    def __init__(self, data: Any = (), requires_grad: bool = False, dtype=None) -> None:
        array = _as_array(data, dtype)
        if (
            dtype is None
            and array.dtype.kind in "iubf"
            and isinstance(data, (list, tuple, np.ndarray))
            and type(self) is Tensor
        ):
            # torch's legacy constructor: ng.Tensor([1, 2]), ng.Tensor(np.ones(2)) are of
            # the default dtype
            array = array.astype(get_default_dtype(), copy=False)
        if dtype is None and not isinstance(data, (np.ndarray, np.generic, Tensor)):
            array = with_default_float(array)  # Python floats follow set_default_dtype
        self._data = array
        self._requires_grad = False
        self.grad_fn = None
        self._output_nr = 0
        if inference_users[0] and _state.inference:
            mark_inference(self)
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: bool, grad_fn, output_nr: int) -> "Tensor":
        t = _new(cls)
        t._data = data
        t._requires_grad = requires_grad
        t.grad_fn = grad_fn
        t._output_nr = output_nr
        if inference_users[0] and _state.inference:
            mark_inference(t)
        return t

    # -- attributes -----------------------------------------------------------------

    @property
    def data(self) -> "Tensor":
        """The same storage without history: changes are invisible to autograd."""
        return Tensor._make(self._data, False, None, 0)

    @data.setter
    def data(self, value: "Tensor") -> None:
        array = value._data if isinstance(value, Tensor) else _as_array(value, None)
        if self._requires_grad and array.dtype.kind not in "fc":
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or "
                f"complex dtype (got {array.dtype.name}); set requires_grad=False first, or "
                "assign a floating-point tensor"
            )
        self._data = array

    @property
    def shape(self) -> Size:
        return _tuple_new(Size, self._data.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self):
        """``device(type='cpu')``: naivegraph computes with numpy on the CPU."""
        return device("cpu")

    def size(self, dim: int | None = None):
        """The shape (a ``torch.Size``), or one dimension of it."""
        return _tuple_new(Size, self._data.shape) if dim is None else self._data.shape[dim]

    def type(self, dtype=None, non_blocking: bool = False):
        """Without an argument, torch's legacy type name (``'torch.FloatTensor'``); with a
        dtype, a type name or a legacy type, the tensor in that dtype (itself if it is
        already), as ``to(dtype)``.

        >>> import naivegraph as ng
        >>> ng.ones(2, dtype=ng.float32).type(), ng.tensor([1, 2]).type(ng.float64).dtype
        ('torch.FloatTensor', dtype('float64'))
        """
        if dtype is None:
            return LEGACY_TYPES.get(self.dtype.name, f"torch.{self.dtype.name}")
        return self.to(dtype_of_type(dtype))

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def matmul(self, other):
        # torch runs a vector times a matrix as unsqueeze(0), mm, squeeze_(0), and its
        # graph shows those three nodes: record the same (the squeeze is named as torch's
        # in-place one)
        if self._data.ndim == 1 and isinstance(other, Tensor) and other._data.ndim == 2:
            return self.unsqueeze(0).mm(other)._op("squeeze", dim=0, inplace=True)._unviewed()
        if isinstance(other, Tensor) and max(self._data.ndim, other._data.ndim) >= 3:
            if min(self._data.ndim, other._data.ndim) >= 1:
                return self._batch_product(other)
        return super().matmul(other)

    # -- a batched matmul, recorded as torch's matmul records it ---------------------------
    def _batch_product(self, other: "Tensor") -> "Tensor":
        """``self @ other`` where one is a batch (3-D or more): the nodes torch records.

        A batch times a matrix or a vector folds the batch into the rows of one matrix
        (mm or mv); a matrix or vector that requires grad times a batch folds the
        transposed batch the same way; two batches go through bmm.  Before that, a 3-D
        operand with a batch of one that requires grad, against a larger batch, is
        squeezed to a matrix."""
        a, b = self._data.shape, other._data.shape
        if not _multipliable(self._data, other._data):
            return super().matmul(other)  # its error, about the operands as given
        if len(a) == 3 == len(b) and a[0] != b[0]:
            if b[0] == 1 and other._requires_grad:
                return self.matmul(other.squeeze(0))
            if a[0] == 1 and self._requires_grad:
                return self.squeeze(0).matmul(other)
        if len(a) >= 3 and self._folds(other):
            rows = self.reshape(math.prod(a[:-1]), a[-1])
            return rows.matmul(other)._unsafe_view(a[:-1] + b[1:])
        if len(b) >= 3 and len(a) <= 2 and self._requires_grad:
            # torch folds other.mT against self.t() and transposes the product back
            columns = other.transpose(-2, -1)
            shape = columns._data.shape
            rows = columns.reshape(math.prod(shape[:-1]), shape[-1])
            if len(a) == 1:
                return rows.matmul(self)._unsafe_view(shape[:-1])
            product = rows.matmul(self.t())._unsafe_view(shape[:-1] + a[:1])
            return product.transpose(-2, -1).contiguous()
        return self._bmm_product(other)

    def _folds(self, other: "Tensor") -> bool:
        """torch's should_fold for this batch (3-D or more) times ``other``: a matrix or
        a vector, and either ``other`` requires grad (its gradient is then one product,
        not a sum over the batch) or the batch dimensions fold into rows without a copy."""
        if other._data.ndim not in (1, 2):
            return False
        if other._requires_grad or not self._data.size:
            return True
        shape, strides = self._data.shape, self._data.strides
        return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))

    def _bmm_product(self, other: "Tensor") -> "Tensor":
        """A batch that does not fold: both operands expanded to the broadcast batch and
        reshaped to one batch dimension, multiplied with bmm, the product given its shape
        back (a vector ``other`` as a column, squeezed off the product)."""
        a_shape = self._data.shape if self._data.ndim > 1 else (1,) + self._data.shape
        vector = other._data.ndim == 1
        right = other.unsqueeze(-1) if vector else other
        (*a, n, m1), (*b, m2, p) = a_shape, right._data.shape
        batch = np.broadcast_shapes(tuple(a), tuple(b))
        count = math.prod(batch)
        left = self.expand(*batch, n, m1).reshape(count, n, m1)
        right = right.expand(*batch, m2, p).reshape(count, m2, p)
        product = left._op("bmm", right)
        if vector:
            product = product.squeeze(-1)
        shape = batch + ((n,) if self._data.ndim > 1 else ()) + (() if vector else (p,))
        return product._unsafe_view(shape)

    def _unsafe_view(self, shape: tuple) -> "Tensor":
        """torch's ``_unsafe_view`` of a product nothing else holds: its new shape, as a
        new tensor (no ``_base``, version 0), node ``UnsafeViewBackward0``."""
        return self._op("reshape", shape=shape, kind="unsafe")._unviewed(0)

    def reshape(self, *shape) -> "Tensor":
        """torch's reshape: a view of a contiguous tensor (``ViewBackward0``); of another
        layout, a view where one describes the new shape (``ReshapeAliasBackward0``),
        else a contiguous copy given the new shape (``CloneBackward0``, then
        ``UnsafeViewBackward0``), which is not a view."""
        data = self._data
        if data.flags.c_contiguous:
            return super().reshape(*shape)
        shape = resolve_shape(shape_arg(shape), data.size)
        if np.may_share_memory(np.reshape(data, shape), data):
            return self._op("reshape", shape=shape, kind="alias")
        return self.clone()._unsafe_view(shape)

    def is_floating_point(self) -> bool:
        """True for a float16/32/64 tensor.

        >>> import naivegraph as ng
        >>> ng.tensor([1.0]).is_floating_point(), ng.tensor([1]).is_floating_point()
        (True, False)
        """
        return bool(np.issubdtype(self._data.dtype, np.floating))

    # -- conversion -----------------------------------------------------------------
    def item(self) -> float | int | bool:
        """The single value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self) -> np.ndarray:
        """The underlying array (shared memory). Refused while the tensor requires grad,
        unless grad mode is off (``with ng.no_grad():``), as in torch."""
        if self._requires_grad and _state.enabled:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead."
            )
        return self._data

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def __format__(self, spec: str) -> str:
        # as torch: a one-value tensor formats as its Python number ("{}" too); a larger
        # one prints itself and takes no format spec
        if self._data.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def to(
        self, *args, device=None, dtype=None, non_blocking: bool = False, copy: bool = False
    ) -> "Tensor":
        """This tensor in another dtype (and on the CPU, the only device), as torch's
        ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)``, ``to(dtype=...)``.
        Returns ``self`` when nothing changes, unless ``copy=True``.

        >>> import naivegraph as ng
        >>> ng.tensor([1.5, 2.0]).to("cpu", ng.float64)
        tensor([1.5000, 2.0000], dtype=float64)
        >>> ng.tensor([1.5]).to(ng.tensor([1])).dtype.name
        'int64'
        """
        device, dtype = _to_arguments(args, device, dtype)
        _check_device(device)
        target = self._data.dtype if dtype is None else dtype
        return self._cast(target, copy=copy)

    def _cast(self, dtype: np.dtype, copy: bool = False) -> "Tensor":
        if self._data.dtype == dtype and not copy:
            return self
        if (self._requires_grad or dual.active) and dtype.kind in "fc":  # a tangent, too
            return _op("to_copy", self, dtype=dtype)
        return Tensor._make(self._data.astype(dtype), False, None, 0)

    def float(self) -> "Tensor":
        return self._cast(np.dtype(np.float32))

    def double(self) -> "Tensor":
        return self._cast(np.dtype(np.float64))

    def long(self) -> "Tensor":
        return self._cast(np.dtype(np.int64))

    def int(self) -> "Tensor":
        return self._cast(np.dtype(np.int32))

    def bool(self) -> "Tensor":
        return self._cast(np.dtype(np.bool_))

    def is_contiguous(self) -> bool:
        """Whether the elements lie in row-major order (not after ``t()``, ``expand``, a
        step slice), as torch's default memory format."""
        return bool(self._data.flags.c_contiguous)

    def contiguous(self) -> "Tensor":
        """Itself if its elements lie in row-major order, else a row-major copy
        (``CloneBackward0``), as torch: ``x.transpose(0, 1).contiguous().view(-1)`` works.

        >>> import naivegraph as ng
        >>> x = ng.ones(2, 3)
        >>> x.contiguous() is x, x.t().contiguous().view(6).shape
        (True, torch.Size([6]))
        """
        if self._data.flags.c_contiguous:
            return self
        copy = self.clone()
        copy._data = np.ascontiguousarray(copy._data)  # a fresh copy nothing else holds
        return copy

    def cpu(self) -> "Tensor":
        return self

    def __repr__(self) -> str:
        parts = [_format_array(self._data)]
        if not _default_dtype_for(self._data.dtype):
            parts.append(f"dtype={self._data.dtype.name}")
        if self.grad_fn is not None:
            parts.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._requires_grad:
            parts.append("requires_grad=True")
        return "tensor(" + ", ".join(parts) + ")"

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def clone(self) -> "Tensor":
        return _op("clone", self)

    # -- where tensors differ from the shared OpMethods ------------------------------------
    def __radd__(self, other):
        # torch records ``2 + x`` and ``2 * x`` with the tensor first (a Python number is
        # wrapped as the second operand): next_functions[0] is then the tensor's edge.
        if _is_number(other):
            return apply(OPS["add"], (self, other), _NO_ATTRS)
        if foreign(other):  # a list, a tuple, a string: as torch
            return NotImplemented
        return apply(OPS["add"], (other, self), _NO_ATTRS)

    def __rmul__(self, other):
        if _is_number(other):  # as in __radd__: the tensor first
            return apply(OPS["mul"], (self, other), _NO_ATTRS)
        if foreign(other):
            return NotImplemented
        return apply(OPS["mul"], (other, self), _NO_ATTRS)

    def __sub__(self, other):
        if type(other) is np.bool_:  # torch takes a numpy bool for the number 1 or 0
            other = int(other)
        return OpMethods.__sub__(self, other)

    def __rsub__(self, other):
        if isinstance(other, np.generic) and _is_number(other) or type(other) is np.bool_:
            # a numpy scalar is a Python number to torch: it does not set the dtype
            other = other.item() if type(other) is not np.bool_ else int(other)
        if _is_number(other):  # torch's rsub(Tensor, Scalar): the number is no input
            return apply(OPS["rsub"], (self,), {"other": other})
        if foreign(other):
            return NotImplemented
        return apply(OPS["sub"], (other, self), _NO_ATTRS)

    def __rpow__(self, base):
        if _is_number(base):  # torch's pow(Scalar, Tensor): one edge, PowBackward2
            return apply(OPS["rpow"], (self,), {"base": base})
        return apply(OPS["pow"], (base, self), _NO_ATTRS)

    def __rtruediv__(self, other):
        # PyTorch computes number / tensor as tensor.reciprocal() * number, and names the
        # graph after that (MulBackward0 over ReciprocalBackward0); a Python bool as well.
        if (_is_number(other) or type(other) is bool) and self._data.dtype.kind in "fc":
            return self.reciprocal() * other
        if foreign(other):
            return NotImplemented
        return apply(OPS["div"], (other, self), _NO_ATTRS)

    def __eq__(self, other):  # elementwise, as in torch
        return _op("eq", self, other)

    def __ne__(self, other):
        return _op("ne", self, other)

    def type_as(self, other: "Tensor") -> "Tensor":
        return self._cast(other.dtype)

    # -- PyTorch surface for learner code (no new ops: built from existing ones) -------
    def cuda(self, device=None, non_blocking: bool = False) -> "Tensor":
        """Refused: naivegraph has no GPU (``ng.cuda.is_available()`` is False)."""
        _check_device("cuda" if device is None else f"cuda:{device}")
        return self  # pragma: no cover - _check_device always raises for cuda

    def eq(self, other) -> "Tensor":
        """Elementwise ``==`` as a bool tensor."""
        return _op("eq", self, other)

    def ne(self, other) -> "Tensor":
        return _op("ne", self, other)

    def gt(self, other) -> "Tensor":
        return _op("gt", self, other)

    def lt(self, other) -> "Tensor":
        return _op("lt", self, other)

    def ge(self, other) -> "Tensor":
        return _op("ge", self, other)

    def le(self, other) -> "Tensor":
        return _op("le", self, other)

    def equal(self, other: "Tensor") -> bool:
        """True if ``other`` has the same shape and the same values (a Python bool).

        >>> import naivegraph as ng
        >>> ng.tensor([1, 2]).equal(ng.tensor([1.0, 2.0])), ng.ones(2).equal(ng.ones(3))
        (True, False)
        """
        if not isinstance(other, Tensor):
            raise TypeError(f"equal(): argument 'other' must be Tensor, not {type(other).__name__}")
        return self.shape == other.shape and bool(np.array_equal(self._data, other._data))

    def _count_true(self, dim, keepdim: bool) -> "tuple[Tensor, int]":
        """How many elements are nonzero (along ``dim``), and how many were counted."""
        plain = self.detach()  # a count has no gradient
        nonzero = plain if plain._data.dtype == np.bool_ else plain.ne(0)
        if dim is not None and not isinstance(dim, (int, np.integer)) and len(dim) == 0:
            return nonzero.long(), 1  # torch: all/any over no dims reduce nothing (sum: all)
        axes = normalize_dims(dim, plain.ndim)  # checks dim; None: every element
        shape = plain._data.shape
        counted = plain._data.size if axes is None else math.prod(shape[a] for a in axes)
        return nonzero.long().sum(dim=dim, keepdim=keepdim), counted

    def all(
        self, dim: int | None = None, keepdim: bool = False, *, axis=None, keepdims=None
    ) -> "Tensor":
        """True where every element (along ``dim``) is nonzero, as a bool tensor.

        >>> import naivegraph as ng
        >>> ng.tensor([[1, 0], [1, 1]]).all(dim=1)
        tensor([False,  True])
        """
        dim, keepdim = _numpy_names("all", dim, keepdim, axis, keepdims)
        count, counted = self._count_true(dim, keepdim)
        return count.eq(counted)

    def any(
        self, dim: int | None = None, keepdim: bool = False, *, axis=None, keepdims=None
    ) -> "Tensor":
        """True where some element (along ``dim``) is nonzero, as a bool tensor.

        >>> import naivegraph as ng
        >>> ng.tensor([0.0, 2.0]).any()
        tensor(True)
        """
        dim, keepdim = _numpy_names("any", dim, keepdim, axis, keepdims)
        count, _ = self._count_true(dim, keepdim)
        return count.gt(0)

    def square(self) -> "Tensor":
        """``self ** 2`` (torch records it as ``PowBackward0`` too)."""
        return self.pow(2)


register_tensor_class(Tensor)  # nodes and the engine build tensors of this class
bind_autograd(Tensor)
bind_views(Tensor, _record)


class NoGradView(Tensor):
    """A view made under no_grad of a tensor that requires grad (torch's view of creation
    meta NO_GRAD_MODE): it requires grad, as its base does, yet has no history and no
    accumulator, so an op on it records an edge to nothing.

    >>> import naivegraph as ng
    >>> p = ng.ones(3, requires_grad=True)
    >>> with ng.no_grad():
    ...     v = p[1:]
    >>> v.requires_grad, v.is_leaf, v.exp().grad_fn.next_functions
    (True, True, ((None, 0),))
    """

    __slots__ = ()

    def _accumulator(self):  # type: ignore[override]
        return None


class StaleNoGradView(NoGradView):
    """A view made under no_grad whose base (or another view of it) was written since:
    torch refuses to say what its history is, so reading ``grad_fn`` (and any op that
    would record it) raises."""

    __slots__ = ()

    @property  # type: ignore[override]
    def grad_fn(self):
        raise RuntimeError(no_grad_view_message(self, indirect=True))

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        Tensor.grad_fn.__set__(self, node)  # type: ignore[attr-defined]


# they print as what they are to a learner, torch's one Tensor type: type(v) is shown as
# Tensor's (``isinstance(v, ng.Tensor)`` holds, ``type(v) is ng.Tensor`` does not)
for _view_class in (NoGradView, StaleNoGradView):
    _view_class.__name__ = _view_class.__qualname__ = Tensor.__name__
bind_no_grad_views(NoGradView, StaleNoGradView)


def _as_array(data: Any, dtype) -> np.ndarray:
    """Convert user data to a numpy array, with PyTorch's errors for bad input."""
    if isinstance(data, Tensor):
        array = data._data.copy()
    elif data is None:
        raise TypeError(
            "Could not infer dtype of NoneType: pass a number, a (nested) list of "
            "numbers or a numpy array"
        )
    else:
        try:
            array = np.array(data, dtype=dtype)
        except ValueError as error:
            if "inhomogeneous" in str(error) or "sequence" in str(error):
                raise ValueError(
                    f"expected a rectangular (nested) list of numbers, but the rows "
                    f"have different lengths: {_short(data)}"
                ) from None
            raise TypeError(f"could not convert {_short(data)} to a tensor: {error}") from None
        except TypeError as error:
            raise TypeError(f"could not convert {_short(data)} to a tensor: {error}") from None
    if array.dtype.kind not in "biufc":
        raise TypeError(
            f"new(): invalid data type '{type(_first_non_number(data)).__name__}': a tensor holds "
            "numbers (or booleans) only"
        )
    if dtype is not None:
        array = array.astype(dtype, copy=False)
    elif array.dtype.kind == "c":
        pass
    return array


def _to_arguments(args: tuple, device, dtype) -> tuple:
    """(device, dtype) from ``to``'s arguments: a string or device is a device, a tensor
    lends its dtype, anything else must be a dtype."""
    if len(args) > 2:
        raise TypeError(
            f"to() takes at most a device and a dtype (or one tensor), but got "
            f"{len(args)} positional arguments"
        )
    for arg in args:
        if arg is None:  # torch's to(None): nothing to change
            continue
        if isinstance(arg, Tensor):
            if len(args) > 1:
                raise TypeError(
                    "to(other) takes the tensor alone: its dtype and device are the ones to use"
                )
            found = ("dtype", arg.dtype)
        elif isinstance(arg, str) or type(arg).__name__ == "device":
            found = ("device", arg)
        else:
            found = ("dtype", _dtype_arg(arg))
        if found[0] == "device":
            if device is not None:
                raise TypeError("to() got two devices; pass one device and/or one dtype")
            device = found[1]
        else:
            if dtype is not None:
                raise TypeError("to() got two dtypes; pass one device and/or one dtype")
            dtype = found[1]
    return device, (None if dtype is None else _dtype_arg(dtype))


def _dtype_arg(dtype) -> np.dtype:
    """``dtype`` as a numeric numpy dtype, or a TypeError that says what a dtype is."""
    try:
        found = np.dtype(dtype)
    except TypeError:
        found = None
    if dtype is None or found is None or found.kind not in "biufc":
        raise TypeError(
            f"to() expected a dtype such as ng.float32 or ng.int64, a device such "
            f"as 'cpu', or a tensor, but got {_short(dtype)}"
        )
    return found


def _check_device(device) -> None:
    """naivegraph computes with numpy on the CPU: any other device is an error."""
    if device is None:
        return
    name = str(device)
    if name in ("cpu", "cpu:0"):
        return
    if _names_a_dtype(name):
        raise RuntimeError(
            f"Invalid device string: {name!r}; a string names a device. For a "
            f"dtype pass ng.{name}, e.g. x.to(ng.{name})"
        )
    raise RuntimeError(
        f"naivegraph runs on the CPU only, so it cannot move a tensor to "
        f"{name!r}; use 'cpu' or leave the device out"
    )


def _names_a_dtype(name: str) -> bool:
    try:
        return np.dtype(name).kind in "biufc"
    except TypeError:
        return False


def _first_non_number(data):
    """The first element of nested lists that is not a number (what to blame)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif not isinstance(item, (int, float, complex, bool, np.number, np.bool_)):
            return item
    return data


def _short(data) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:57] + "..."
