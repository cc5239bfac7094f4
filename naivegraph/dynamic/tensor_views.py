"""Tensor's views and in-place ops, a mixin of :class:`~naivegraph.dynamic.tensor.Tensor`:
which results share memory with their input, indexing and ``__setitem__``, and the
in-place ops (``add_``, ``copy_``, ...) with their checks, version bumps and the history
they rewrite (``CopySlices`` on the base, ``AsStridedBackward0`` on its views).

Kept apart because this is the one part of autograd where tensors alias each other:
read it after ``tensor.py`` and ``tensor_autograd.py``.
"""

from __future__ import annotations

import operator
import re
import weakref
from typing import Any

import numpy as np

from ..ops import OPS
from ..ops.core import OpDef, inplace_result_dtype, torch_dtype_name, warn_at_caller
from ..ops.errors import explain
from ..ops.methods import OpMethods, _diagonal, _fill_value, _index_values
from ..ops.shapes import normalize_dims
from . import saved as saved_values
from .anomaly_mode import mode as anomaly
from .anomaly_mode import record_creation
from .forward import dual, propagate_inplace
from .grad_mode import INFERENCE, INFERENCE_INPLACE, _state
from .node import (
    OVERLAPPING_WRITE,
    AsStridedBackward0,
    CopySlices,
    Node,
    has_internal_overlap,
    memory_order,
    memory_owner,
    meta_of,
    writable,
)
from .rng import generator_rng

#: The Tensor class and the function that records an op's node (``tensor._record``),
#: handed over by ``tensor.py`` once Tensor exists (see :func:`bind`).
Tensor: Any = None
_record: Any = None


#: the classes a view made under no_grad takes (``tensor.NoGradView`` and
#: ``tensor.StaleNoGradView``), handed over by ``tensor.py`` (see :func:`bind_no_grad_views`)
NoGradView: Any = None
StaleNoGradView: Any = None


def bind_no_grad_views(fresh: type, stale: type) -> None:
    """Let views made under no_grad take these classes (they subclass Tensor)."""
    global NoGradView, StaleNoGradView
    NoGradView, StaleNoGradView = fresh, stale


def bind(tensor_class: type, record) -> None:
    """Let these methods build tensors of ``tensor_class`` and record their in-place
    ops' nodes with ``record`` (it subclasses :class:`TensorViews`, so this module cannot
    import it)."""
    global Tensor, _record
    Tensor, _record = tensor_class, record


_VIEW_OPS = frozenset(
    {"reshape", "transpose", "t", "permute", "squeeze", "unsqueeze", "expand", "getitem"}
)

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


def no_grad_view_message(view: "Tensor", indirect: bool) -> str:
    """torch's refusal of a view made under no_grad (or inference_mode) once it, its base
    or another view of the base is written: the history it should have is ambiguous.
    A view taken with grad on from such a view is named by its own node."""
    node = Tensor.grad_fn.__get__(view, Tensor)  # the slot: a stale view's property raises
    written = (
        "its base or another view of its base has been modified inplace"
        if indirect
        else "is being modified inplace"
    )
    if view._made_in_no_grad == "multi_output":  # an output of unbind (iteration)
        if node is None:
            head = f"A view was created in no_grad mode and {written} with grad mode enabled."
        else:
            kind = re.sub(r"Backward\d*$", "", node.name())
            head = f"Output {view._output_nr} of {kind} is a view and {written}."
        return (
            f"{head} This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one."
        )
    if node is None:
        prefix = "A view was created in"
    else:
        kind = re.sub(r"Backward\d*$", "", node.name())
        prefix = f"Output {view._output_nr} of {kind} is a view of a view which was created in"
    inference = view._made_in_no_grad == "inference"
    made, block = ("inference mode", "inference_mode") if inference else ("no_grad mode", "no_grad")
    mode = "in normal mode" if inference else "with grad mode enabled"
    return (
        f"{prefix} {made} and {written} {mode}. Given that this use case is ambiguous and "
        "error-prone, it is forbidden. You can clarify your code by moving both the view and "
        f"the inplace either both inside the {block} block (if you don't want the inplace to "
        "be tracked) or both outside (if you want the inplace to be tracked)."
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
    if not _state.enabled or source._made_in_no_grad:
        # the mode it was made in (torch's creation meta): a view of such a view keeps its
        # source's unless it is made in a no-grad mode itself (inference mode sticks)
        made = None if _state.enabled else "inference" if _state.inference else "no_grad"
        inherited = source._made_in_no_grad
        view._made_in_no_grad = inherited if not made or inherited == "inference" else made
        if source._requires_grad and view.grad_fn is None:
            # torch: it requires grad, as its base does, but has no history and no
            # accumulator: no gradient reaches it, nor its base through it
            view._requires_grad = True
            view.__class__ = NoGradView
    base = view._base
    if base._views is None:
        base._views = weakref.WeakSet()
    base._views.add(view)


PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor "
    "refer to a single memory location. Please clone() the tensor before performing the "
    "operation."
)

#: in-place ops whose operands torch lets overlap the written tensor: a fill reads one
#: number, index_put reads its values before it writes
_OVERLAP_ALLOWED = frozenset({"fill", "zero", "index_put"})


def _dense(data: np.ndarray) -> bool:
    """torch's is_non_overlapping_and_dense: the elements, in some order of the
    dimensions, fill one gapless block of memory."""
    expected = data.itemsize
    for stride, size in sorted((st, sz) for st, sz in zip(data.strides, data.shape) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _partially_overlaps(out: np.ndarray, operand: np.ndarray) -> bool:
    """torch's partial overlap of an operand with the written-to array: the same memory
    but not the very same elements in the same order.  As torch, layouts that are not
    dense (a column, an expanded row) are too hard to tell and let through."""
    if operand is out or (out.base is None and operand.base is None):
        return False
    if not out.size or not operand.size or memory_owner(out) is not memory_owner(operand):
        return False
    if not (_dense(out) and _dense(operand)):
        return False
    start = out.__array_interface__["data"][0]
    other = operand.__array_interface__["data"][0]
    end, other_end = start + out.nbytes, other + operand.nbytes
    if (start, end) == (other, other_end):
        return out.strides != operand.strides or out.shape != operand.shape
    return start < other_end and other < end


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


class UnbindBackward0(Node):
    """The one node of all the slices ``unbind`` (and iteration) gives: its backward
    stacks their gradients (zeros for a slice no gradient reached) along ``dim``."""

    __slots__ = ("num_outputs", "dim", "meta")

    def __init__(self, base_edge: tuple, count: int, dim: int, meta) -> None:
        Node.__init__(self, (base_edge,))
        self.num_outputs, self.dim, self.meta = count, dim, meta  # meta: one slice's

    def apply(self, grad_outputs: list, create_graph: bool) -> list:
        shape, dtype = self.meta.shape, self.meta.dtype
        parts = [np.zeros(shape, dtype) if g is None else g for g in grad_outputs]
        return [OPS["stack"].dispatch(parts, dim=self.dim)]


class TensorViews:
    """Mixin: views, indexing and in-place ops of a Tensor."""

    __slots__ = ()

    def unbind(self, dim: int = 0) -> tuple:
        """The slices along ``dim``, each a view (``x[i]`` for dim 0), all outputs of one
        ``UnbindBackward0`` node, as torch; iterating a tensor gives them too.  As outputs
        of one node they may not be written in place while a gradient is recorded.

        >>> import naivegraph as ng
        >>> x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> [row.grad_fn.name() for row in x.unbind()], x.unbind(1)[1]
        (['UnbindBackward0', 'UnbindBackward0'], tensor([2., 4.], grad_fn=<UnbindBackward0>))
        """
        data = self._data
        if data.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        (dim,) = normalize_dims(operator.index(dim), data.ndim)  # one dim, in range
        count = data.shape[dim]
        lead = (slice(None),) * dim
        getitem = OPS["getitem"]
        node = None
        if self._requires_grad and _state.enabled and count:
            node = UnbindBackward0(self._edge(), count, dim, meta_of(data[lead + (0, ...)]))
        slices = []
        for i in range(count):
            attrs = {"index": lead + (i,)}
            part = getitem.forward(data, **attrs)  # a view, 0-d ones too
            piece = Tensor._make(part, node is not None, node, i)
            _mark_view(piece, self, getitem, attrs)
            if _state.enabled and not piece._made_in_no_grad:
                piece._made_in_no_grad = "multi_output"
            slices.append(piece)
        return tuple(slices)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        if dual.active:  # forward mode: tangents ride along the readable indexing
            return (self[i] for i in range(self._data.shape[0]))
        return iter(self.unbind(0))

    def view(self, *shape) -> "Tensor":
        """The same memory with another shape; unlike ``reshape`` it never copies, so it
        refuses a layout that a new shape cannot describe (e.g. after ``.t()``).

        >>> import naivegraph as ng
        >>> ng.arange(6.).view(2, 3).shape
        torch.Size([2, 3])
        """
        result = OpMethods.reshape(self, *shape)  # ViewBackward0 whatever the layout
        if self._data.size and not np.may_share_memory(result._data, self._data):
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            )
        return result

    def _index(self, index):
        return _index_arg(index)

    def _unviewed(self, version: int = 1) -> "Tensor":
        """This view of a product nothing else holds, made the product itself, as after
        torch's ``squeeze_`` or ``_unsafe_view``: no ``_base`` (an in-place op on it then
        records its own node, not a rebased view's ``AsStridedBackward0``), at ``version``
        (1 after the squeeze_, 0 after an _unsafe_view)."""
        for name in ("_base", "_view_chain", "_version_counter", "_made_in_no_grad"):
            self.__dict__.pop(name, None)
        self._counter().value = version
        return self

    def _check_inplace(self, name: str, others: tuple = ()) -> None:
        """Refuse an in-place op that PyTorch refuses, before anything is changed."""
        if self._version_counter is INFERENCE and not _state.inference:  # before any change
            raise RuntimeError(INFERENCE_INPLACE)
        if name not in ("fill", "zero") and has_internal_overlap(self._data):
            raise RuntimeError(OVERLAPPING_WRITE)  # torch lets fill_/zero_ through
        if not _state.enabled:
            return
        base = self._base
        if self._made_in_no_grad and base is not None:
            if base._requires_grad or any(
                isinstance(o, Tensor) and o._requires_grad for o in others
            ):
                raise RuntimeError(no_grad_view_message(self, indirect=False))
        if self._requires_grad and self.grad_fn is None:
            if self._base is not None:  # a view made a leaf by requires_grad_()
                raise RuntimeError(VIEW_OF_LEAF_INPLACE + " Change it inside `with ng.no_grad():`.")
            raise RuntimeError(
                LEAF_INPLACE + " Change leaf values inside `with ng.no_grad():` "
                "or through .data / .detach(), before using them."
            )
        if base is not None and base._requires_grad and base.grad_fn is None:
            raise RuntimeError(VIEW_OF_LEAF_INPLACE + " Change it inside `with ng.no_grad():`.")

    def _inplace(self, name: str, *others, **attrs) -> "Tensor":
        """Run op ``name`` and write its result into this tensor's own storage.

        On a view, the write lands in the base's memory, so the *base's* history is
        rewritten (a ``CopySlices`` node over its old one), as PyTorch does; every view
        of the base then reads through that new history.
        """
        self._check_inplace(name, others)
        if name not in _OVERLAP_ALLOWED:
            for value in (*others, *attrs.values()):
                if isinstance(value, Tensor) and _partially_overlaps(self._data, value._data):
                    raise RuntimeError(PARTIAL_OVERLAP)
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
        else:
            # torch regenerates a view's history when it finds its version changed: a
            # write it did not record leaves every view of a base that requires grad over
            # the base's (unchanged) history
            base = self._base if self._base is not None else self
            if base._views and base._requires_grad:
                base._rebase_views()
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
            if view._made_in_no_grad:  # its history is ambiguous: reading it is refused
                view._requires_grad = True
                view.__class__ = StaleNoGradView
            else:
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

    def bitwise_and_(self, other) -> "Tensor":
        return self._inplace("bitwise_and", other)

    def bitwise_or_(self, other) -> "Tensor":
        return self._inplace("bitwise_or", other)

    def bitwise_xor_(self, other) -> "Tensor":
        return self._inplace("bitwise_xor", other)

    def bitwise_not_(self) -> "Tensor":
        return self._inplace("bitwise_not")

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

    def masked_fill_(self, mask, value) -> "Tensor":
        """Write ``value`` into this tensor where the bool ``mask`` is True."""
        if hasattr(type(value), "_ng_apply"):
            return self._inplace("masked_fill_tensor", mask, value)
        return self._inplace("masked_fill", mask, value=_fill_value(value, "masked_fill_"))

    def tril_(self, diagonal: int = 0) -> "Tensor":
        return self._inplace("tril", diagonal=_diagonal(diagonal, "tril_"))

    def triu_(self, diagonal: int = 0) -> "Tensor":
        return self._inplace("triu", diagonal=_diagonal(diagonal, "triu_"))

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
    __iand__ = bitwise_and_
    __ior__ = bitwise_or_
    __ixor__ = bitwise_xor_

    def __ipow__(self, exponent) -> "Tensor":
        return self.pow_(exponent)

    def sin_(self) -> "Tensor":
        return self._inplace("sin")

    def cos_(self) -> "Tensor":
        return self._inplace("cos")
