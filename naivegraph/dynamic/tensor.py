"""The dynamic-mode Tensor: a numpy array plus the autograd bookkeeping of PyTorch.

Every op computes at once (eager) through the shared op table and, when any input
requires grad and grad mode is on, records a ``grad_fn`` node.  ``backward`` walks
those nodes (see :mod:`naivegraph.dynamic.engine`).
"""

from __future__ import annotations

import math
import warnings
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from ..ops import OPS
from ..ops.core import (
    OpDef,
    complex_autograd_error,
    default_complex,
    inplace_result_dtype,
    refuse_complex_result,
    torch_dtype_name,
    warn_at_caller,
    with_default_float,
)
from ..ops.errors import explain
from ..ops.methods import _NO_ATTRS, OpMethods, _index_values, _is_number
from ..ops.shapes import normalize_dims
from . import saved as saved_values
from .anomaly_mode import mode as anomaly
from .anomaly_mode import record_creation
from .defaults import device, get_default_dtype
from .engine import backward as _backward
from .forward import dual, propagate, propagate_inplace, tangent_of
from .grad_mode import INFERENCE, INFERENCE_INPLACE, _state, inference_users, mark_inference
from .node import (
    OVERLAPPING_WRITE,
    AccumulateGrad,
    AsStridedBackward0,
    CopySlices,
    _HookDict,
    add_hook,
    class_of_op,
    find_node_class,
    has_internal_overlap,
    memory_order,
    memory_owner,
    meta_of,
    register_tensor_class,
    writable,
)
from .rng import generator_rng
from .surface import LEGACY_TYPES, Size, dtype_of_type

_new = object.__new__
_tuple_new = tuple.__new__  # x.shape: numpy's tuple (ints already) as a Size, unchecked
_VIEW_OPS = frozenset(
    {"reshape", "transpose", "t", "permute", "squeeze", "unsqueeze", "expand", "getitem"}
)

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
NO_GRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked)."
)


class _Counter:
    """A version counter, shared by a tensor, its views and its ``detach()``-ed twins."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


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


def _numpy_scalars_as_numbers(inputs) -> tuple:
    """torch takes a numpy scalar (``np.float64(0.5)``, what ``np.sqrt(2.0)`` gives) as
    the Python number it holds: it does not widen a float32 tensor to float64."""
    return tuple(
        a.item() if isinstance(a, np.generic) and a.dtype.kind in "biufc" else a for a in inputs
    )


def _aliases(out: np.ndarray, source: np.ndarray) -> bool:
    """Whether ``out`` shares ``source``'s memory (reshape of a transposed array copies).

    An empty slice shares no byte, yet numpy made it a view of the same owner, as torch
    makes it a view of the same base."""
    if out is source:
        return True
    if out.base is None:
        return False
    if out.size == 0:
        return memory_owner(out) is memory_owner(source)
    return np.may_share_memory(out, source)


def _same_window(view: np.ndarray, data: np.ndarray) -> bool:
    """Whether ``view`` is all of ``data``: same start, shape and strides."""
    return (
        view.shape == data.shape
        and view.strides == data.strides
        and view.__array_interface__["data"][0] == data.__array_interface__["data"][0]
    )


def _mark_view(view: "Tensor", source: "Tensor", op: OpDef, attrs: dict) -> None:
    """Make ``view`` a view of ``source``'s base, remembering how to rebuild it from there.

    The base keeps a weak set of its views: an in-place op on the base, or on any of
    them, changes what every view reads, so each gets a new history (see ``_rebase_views``).
    """
    link = (op, attrs, meta_of(source._data))
    base = source._base
    if base is None:
        view._base, view._view_chain = source, (link,)
    else:
        view._base, view._view_chain = base, source._view_chain + (link,)
    view._version_counter = source._counter()
    if not _state.enabled:
        view._made_in_no_grad = True
    base = view._base
    if base._views is None:
        base._views = weakref.WeakSet()
    base._views.add(view)


def _is_basic_index(index) -> bool:
    """Integers, slices, None and ``...`` only: numpy (and torch) then give a view."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        p is None
        or p is Ellipsis
        or isinstance(p, slice)
        or isinstance(p, (int, np.integer))
        and not isinstance(p, (bool, np.bool_))
        for p in parts
    )


def _drop_leading_ones(value: "Tensor", ndim: int) -> "Tensor":
    """``b[0] = v`` with ``v`` of shape (1, 3) for a (3,) row: torch drops leading 1s."""
    shape = value.shape
    while len(shape) > ndim and shape[0] == 1:
        shape = shape[1:]
    return value.reshape(shape) if shape != value.shape else value


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


def _index_arg(index):
    """Turn tensor indices into numpy ones; keep everything else as numpy takes it.

    A uint8 tensor is a mask, as torch still reads it (with its deprecation warning);
    numpy would take its 0s and 1s as positions."""
    if isinstance(index, Tensor):
        if index._data.dtype == np.uint8:
            warn_at_caller(
                "indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                "torch.bool instead."
            )
            return index._data != 0
        return index._data
    if isinstance(index, list):
        return np.asarray([i._data if isinstance(i, Tensor) else i for i in index])
    if isinstance(index, tuple):
        return tuple(_index_arg(i) for i in index)
    return index


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


class Tensor(OpMethods):
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
    _made_in_no_grad = False

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

    # -- bookkeeping ----------------------------------------------------------------
    def _counter(self) -> _Counter:
        vc = self._version_counter
        if vc is None:
            vc = self._version_counter = _Counter()
        return vc

    def _accumulator(self) -> AccumulateGrad:
        ref = self._accumulator_ref
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accumulator_ref = weakref.ref(acc)
        return acc

    def _edge(self) -> tuple:
        fn = self.grad_fn
        if fn is not None:
            return (fn, self._output_nr)
        if self._requires_grad:
            return (self._accumulator(), 0)
        return (None, 0)

    # -- attributes -----------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self.grad_fn is not None:
            hint = (
                ""
                if value
                else (
                    " If you want to use a computed variable in a subgraph that "
                    "doesn't require differentiation use var_no_grad = var.detach()."
                )
            )
            raise RuntimeError("you can only change requires_grad flags of leaf variables." + hint)
        if value and self._data.dtype.kind == "c":
            raise complex_autograd_error(
                f"a complex tensor ({self._data.dtype}) cannot require grad"
            )
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients "
                f"(this tensor has dtype {self._data.dtype}); create it with floats, e.g. "
                "ng.tensor([1., 2.]) or dtype=ng.float32."
            )
        self._requires_grad = value

    def _carries_tangent(self) -> bool:
        """Whether this tensor is a dual tensor of the active forward-mode level (an op
        that takes it as a plain value, as clamp its bounds, must refuse it)."""
        return dual.level is not None and tangent_of(self) is not None

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place (leaves only) and return self."""
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors the user created, and for any tensor that does not require grad."""
        return self.grad_fn is None

    @property
    def grad(self) -> "Tensor | None":
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got {type(value).__name__}"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: grad has shape "
                    f"{value.shape}, tensor has shape {self.shape}"
                )
            if value.dtype != self.dtype:  # else the next backward fails half-way (torch)
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype {value.dtype} "
                    f"to a tensor of dtype {self.dtype}. The gradient must match "
                    f"the tensor's dtype: use .to({self.dtype})."
                )
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

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
    def _version(self) -> int:
        if self._version_counter is INFERENCE:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter.value if self._version_counter is not None else 0

    @property
    def _saved_version(self) -> int:
        """The version a node records when it saves this tensor: an inference tensor's
        counter refuses to be saved where autograd records, with torch's message."""
        return self._version_counter.value if self._version_counter is not None else 0

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
        return super().matmul(other)

    def is_floating_point(self) -> bool:
        """True for a float16/32/64 tensor.

        >>> import naivegraph as ng
        >>> ng.tensor([1.0]).is_floating_point(), ng.tensor([1]).is_floating_point()
        (True, False)
        """
        return bool(np.issubdtype(self._data.dtype, np.floating))

    def _unviewed(self) -> "Tensor":
        """This view of a product nothing else holds, made the product itself, as after
        torch's ``squeeze_``: no ``_base`` (an in-place op on it then records its own node,
        not a rebased view's ``AsStridedBackward0``), and at version 1 (the squeeze_)."""
        for name in ("_base", "_view_chain", "_version_counter", "_made_in_no_grad"):
            self.__dict__.pop(name, None)
        self._counter().value = 1
        return self

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

    def contiguous(self) -> "Tensor":
        return self

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

    # -- history ---------------------------------------------------------------------
    def detach(self) -> "Tensor":
        """A tensor sharing storage (and version counter) but with no history."""
        t = Tensor._make(self._data, False, None, 0)
        t._version_counter = self._counter()
        return t

    def detach_(self) -> "Tensor":
        """Cut this tensor out of the graph: it becomes a leaf that does not require grad."""
        if self._base is not None:  # torch: a view shares its base's history
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    def clone(self) -> "Tensor":
        return _op("clone", self)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self.grad_fn._retain(self._output_nr, self)
        self._retains_grad = True

    def register_hook(self, hook: Callable) -> Any:
        """Call ``hook(grad)`` whenever this tensor's gradient is computed.

        The hook may return a tensor to use instead of ``grad``.  Returns a handle
        whose ``remove()`` unregisters it.

        >>> import naivegraph as ng
        >>> v = ng.tensor([0., 0., 0.], requires_grad=True)
        >>> h = v.register_hook(lambda grad: grad * 2)
        >>> v.backward(ng.tensor([1., 1., 1.]))
        >>> v.grad
        tensor([2., 2., 2.])
        >>> h.remove()
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = _HookDict()
        return add_hook(self._hooks, hook)

    def backward(
        self,
        gradient=None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs=None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

        >>> import naivegraph as ng
        >>> w = ng.tensor(3.0, requires_grad=True)
        >>> (w * w).backward()
        >>> w.grad
        tensor(6.)
        """
        _backward(
            [self],
            None if gradient is None else [gradient],
            retain_graph,
            create_graph,
            inputs=inputs,
        )

    # -- in-place ops ------------------------------------------------------------------
    def is_inference(self) -> bool:
        """Whether this tensor was made inside ``inference_mode`` (or is a view of one)."""
        return self._version_counter is INFERENCE

    def _check_inplace(self, name: str) -> None:
        """Refuse an in-place op that PyTorch refuses, before anything is changed."""
        if self._version_counter is INFERENCE and not _state.inference:  # before any change
            raise RuntimeError(INFERENCE_INPLACE)
        if name not in ("fill", "zero") and has_internal_overlap(self._data):
            raise RuntimeError(OVERLAPPING_WRITE)  # torch lets fill_/zero_ through
        if not _state.enabled:
            return
        if self._requires_grad and self.grad_fn is None:
            if self._base is not None:  # a view made a leaf by requires_grad_()
                raise RuntimeError(VIEW_OF_LEAF_INPLACE + " Change it inside `with ng.no_grad():`.")
            raise RuntimeError(
                LEAF_INPLACE + " Change leaf values inside `with ng.no_grad():` "
                "or through .data / .detach(), before using them."
            )
        base = self._base
        if base is not None and base._requires_grad:
            if base.grad_fn is None:
                raise RuntimeError(VIEW_OF_LEAF_INPLACE + " Change it inside `with ng.no_grad():`.")
            if self._made_in_no_grad:
                raise RuntimeError(NO_GRAD_VIEW_INPLACE)

    def _inplace(self, name: str, *others, **attrs) -> "Tensor":
        """Run op ``name`` and write its result into this tensor's own storage.

        On a view, the write lands in the base's memory, so the *base's* history is
        rewritten (a ``CopySlices`` node over its old one), as PyTorch does; every view
        of the base then reads through that new history.
        """
        self._check_inplace(name)
        op = OPS[name]
        datas = [self._data] + [o._data if isinstance(o, Tensor) else o for o in others]
        try:
            result = op.forward(*datas, **attrs)
        except (ValueError, TypeError, IndexError) as error:
            raise explain(op.name, op.elementwise, datas, attrs, error) from None
        result = np.asarray(result)
        inplace_result_dtype(self._data.dtype, result)  # torch's casting rule and message
        if result.shape != self._data.shape:
            raise RuntimeError(
                f"output with shape {self._data.shape} doesn't match the broadcast "
                f"shape {result.shape}"
            )
        record = (
            _state.enabled
            and op.differentiable
            and (
                self._requires_grad
                or any(isinstance(o, Tensor) and o._requires_grad for o in others)
            )
        )
        # Save the inputs *before* writing: an operand that is this very tensor
        # (t.mul_(t)) then fails the version check at backward, as in PyTorch.
        node = _record(op, (self._snapshot(op, others),) + others, attrs, self) if record else None
        if record and anomaly.enabled:
            record_creation(node)
        if dual.active:  # forward mode: the tangent of the value about to be written
            propagate_inplace(op, self, others, attrs, result.astype(self._data.dtype))
        np.copyto(writable(self._data), result, casting="same_kind")
        self._counter().value += 1
        if record:
            if op.saves_out:  # the saved output is this tensor after the write
                counter = self._version_counter
                node.sources = node.sources[:-1] + (("out", counter, counter.value),)
            self._rewrite_history(node)
            if saved_values.hook_stack:
                saved_values.pack_node(node, self)
        return self

    def _rewrite_history(self, node) -> None:
        """``node`` (the in-place op just recorded) becomes the history of this tensor, or,
        for a view, of its base through ``CopySlices``; then every view is rebased."""
        base = self._base
        if base is None:
            base, node = self, node
        else:
            inner = node
            node = CopySlices(base._edge(), self._view_chain, inner, memory_order(base._data))
            trace = getattr(inner, "_metadata", {}).get("traceback_")
            if trace:  # anomaly mode: the write's forward site, for both nodes
                node.metadata["traceback_"] = trace
        base._take_history(node)
        base._rebase_views()

    def _take_history(self, node) -> None:
        """``node`` replaces this tensor's history after an in-place op; a retained
        gradient moves with it, so ``.grad`` is the gradient of the new value (torch)."""
        if self._retains_grad:
            self.grad_fn._forget(self._output_nr, self)
            node._retain(0, self)
        self.grad_fn, self._requires_grad, self._output_nr = node, True, 0

    def _rebase_views(self) -> None:
        """Give every live view of this base a history over the base's current one
        (PyTorch regenerates a stale view's grad_fn as ``AsStridedBackward0``)."""
        if not self._views:
            return
        edge = self._edge()
        for view in list(self._views):
            if view._made_in_no_grad:
                continue  # a view made in no_grad mode records no history
            view._take_history(AsStridedBackward0(edge, view._view_chain))

    def _snapshot(self, op: OpDef, others: tuple) -> "Tensor":
        """This tensor as it was before an in-place op (its data copied only if saved)."""
        needs = (self._requires_grad,) + tuple(
            isinstance(o, Tensor) and o._requires_grad for o in others
        )
        data = self._data.copy() if 0 in op.saves_for(needs) else self._data
        old = Tensor._make(data, self._requires_grad, self.grad_fn, self._output_nr)
        old._accumulator_ref = self._accumulator_ref
        if self.grad_fn is None and self._requires_grad:
            old._accumulator_ref = weakref.ref(self._accumulator())
        return old

    def add_(self, other, alpha=1) -> "Tensor":
        if alpha == 1:
            return self._inplace("add", other)
        return self._inplace("add_alpha", other, alpha=alpha)

    def sub_(self, other, alpha=1) -> "Tensor":
        if alpha == 1:
            return self._inplace("sub", other)
        return self._inplace("sub_alpha", other, alpha=alpha)

    def mul_(self, other) -> "Tensor":
        return self._inplace("mul", other)

    def div_(self, other) -> "Tensor":
        return self._inplace("div", other)

    def pow_(self, exponent) -> "Tensor":
        if isinstance(exponent, Tensor):
            return self._inplace("pow", exponent)
        return self._inplace("pow_scalar", exponent=exponent)

    def exp_(self) -> "Tensor":
        return self._inplace("exp")

    def clamp_(self, min=None, max=None) -> "Tensor":
        return self._inplace("clamp", min=min, max=max)

    def fill_(self, value) -> "Tensor":
        return self._inplace("fill", value=value.item() if isinstance(value, Tensor) else value)

    def zero_(self) -> "Tensor":
        return self._inplace("zero")

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> "Tensor":
        """Overwrite with draws from N(mean, std^2) (the global generator or ``generator``),
        as d2l's ``net[0].weight.data.normal_(0, 0.01)``."""
        return self._random_fill(
            "normal", lambda rng, shape: rng.normal(mean, std, shape), generator
        )

    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None) -> "Tensor":
        """Overwrite with draws from the uniform distribution on [from_, to)."""
        return self._random_fill(
            "uniform", lambda rng, shape: rng.uniform(from_, to, shape), generator
        )

    def _random_fill(self, kind: str, draw, generator) -> "Tensor":
        if self._data.dtype.kind not in "fc":
            raise RuntimeError(
                f"\"{kind}_kernel_cpu\" not implemented for '{torch_dtype_name(self._data.dtype)}'"
            )
        values = np.asarray(draw(generator_rng(generator), self._data.shape), self._data.dtype)
        return self.copy_(Tensor._make(values, False, None, 0))

    def copy_(self, src) -> "Tensor":
        return self._inplace("copy", src)

    def index_add_(self, dim: int, index, source, *, alpha=1) -> "Tensor":
        """Add ``alpha * source`` into this tensor at positions ``index`` along ``dim``.

        >>> import naivegraph as ng
        >>> t = ng.zeros(3)
        >>> t.index_add_(0, ng.tensor([1, 1]), ng.tensor([2.0, 3.0]))
        tensor([0., 5., 0.])
        """
        index = _index_values(index, "index_add_")
        return self._inplace("index_add", source, dim=int(dim), index=index, alpha=alpha)

    def __setitem__(self, index, value) -> None:
        index = _index_arg(index)
        if not _is_basic_index(index):  # a mask or integer arrays: the region is a copy
            self._inplace("index_put", value, index=index)
            return
        # As torch: the region is a view, and the value is copied into it, so the write
        # is an in-place op on a view (CopySlices over this tensor's history).
        region = self[index]
        if isinstance(value, Tensor) and value.ndim > region.ndim:
            value = _drop_leading_ones(value, region.ndim)
        if _same_window(region._data, self._data):
            region = self  # torch skips full slices (a[:] = v): a plain copy, no CopySlices
        region.copy_(value)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    def __ipow__(self, exponent) -> "Tensor":
        return self.pow_(exponent)

    # -- where tensors differ from the shared OpMethods ------------------------------------
    def _index(self, index):
        return _index_arg(index)

    def __radd__(self, other):
        # torch records ``2 + x`` and ``2 * x`` with the tensor first (a Python number is
        # wrapped as the second operand): next_functions[0] is then the tensor's edge.
        if _is_number(other):
            return apply(OPS["add"], (self, other), _NO_ATTRS)
        return apply(OPS["add"], (other, self), _NO_ATTRS)

    def __rmul__(self, other):
        if _is_number(other):  # as in __radd__: the tensor first
            return apply(OPS["mul"], (self, other), _NO_ATTRS)
        return apply(OPS["mul"], (other, self), _NO_ATTRS)

    def __rsub__(self, other):
        if _is_number(other):  # torch's rsub(Tensor, Scalar): the number is no input
            return apply(OPS["rsub"], (self,), {"other": other})
        return apply(OPS["sub"], (other, self), _NO_ATTRS)

    def __rpow__(self, base):
        if _is_number(base):  # torch's pow(Scalar, Tensor): one edge, PowBackward2
            return apply(OPS["rpow"], (self,), {"base": base})
        return apply(OPS["pow"], (base, self), _NO_ATTRS)

    def __rtruediv__(self, other):
        # PyTorch computes number / tensor as tensor.reciprocal() * number, and names the
        # graph after that (MulBackward0 over ReciprocalBackward0).
        if _is_number(other) and self._data.dtype.kind in "fc":
            return self.reciprocal() * other
        return apply(OPS["div"], (other, self), _NO_ATTRS)

    def __eq__(self, other):  # elementwise, as in torch
        return _op("eq", self, other)

    def __ne__(self, other):
        return _op("ne", self, other)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def view(self, *shape) -> "Tensor":
        """The same memory with another shape; unlike ``reshape`` it never copies, so it
        refuses a layout that a new shape cannot describe (e.g. after ``.t()``).

        >>> import naivegraph as ng
        >>> ng.arange(6.).view(2, 3).shape
        torch.Size([2, 3])
        """
        result = self.reshape(*shape)
        if self._data.size and not np.may_share_memory(result._data, self._data):
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            )
        return result

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

    def all(self, dim: int | None = None, keepdim: bool = False) -> "Tensor":
        """True where every element (along ``dim``) is nonzero, as a bool tensor.

        >>> import naivegraph as ng
        >>> ng.tensor([[1, 0], [1, 1]]).all(dim=1)
        tensor([False,  True])
        """
        count, counted = self._count_true(dim, keepdim)
        return count.eq(counted)

    def any(self, dim: int | None = None, keepdim: bool = False) -> "Tensor":
        """True where some element (along ``dim``) is nonzero, as a bool tensor.

        >>> import naivegraph as ng
        >>> ng.tensor([0.0, 2.0]).any()
        tensor(True)
        """
        count, _ = self._count_true(dim, keepdim)
        return count.gt(0)

    def square(self) -> "Tensor":
        """``self ** 2`` (torch records it as ``PowBackward0`` too)."""
        return self.pow(2)

    def sin_(self) -> "Tensor":
        return self._inplace("sin")

    def cos_(self) -> "Tensor":
        return self._inplace("cos")

    def register_post_accumulate_grad_hook(self, hook: Callable) -> Any:
        """Call ``hook(tensor)`` each time backward has added to this leaf's ``.grad``.

        Used to update a parameter as soon as its gradient is ready.  Returns a handle
        whose ``remove()`` unregisters it.  (``autograd.grad`` accumulates nothing, so it
        calls no such hook.)

        >>> import naivegraph as ng
        >>> w = ng.tensor([1.0, 2.0], requires_grad=True)
        >>> h = w.register_post_accumulate_grad_hook(lambda t: print(t.grad))
        >>> (w * 3).sum().backward()
        tensor([3., 3.])
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf "
                "tensors: register it on a leaf (a parameter), or use "
                "register_hook on this tensor"
            )
        hooks = self.__dict__.get("_post_accumulate_hooks")
        if hooks is None:
            hooks = self.__dict__["_post_accumulate_hooks"] = _HookDict()
        return add_hook(hooks, hook)


register_tensor_class(Tensor)  # nodes and the engine build tensors of this class


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
