"""Tensor's autograd side, a mixin of :class:`~naivegraph.dynamic.tensor.Tensor`:
``requires_grad``, ``grad``, ``is_leaf``, ``backward``, hooks, ``detach`` and the
version counter that catches a saved tensor changed in place.

Kept apart so that ``tensor.py`` reads as what a tensor *is* (data, dtype, shape, the
op it came from); these methods are what autograd asks of it.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any, Callable

from ..ops.core import complex_autograd_error
from .engine import backward as _backward
from .forward import dual, tangent_of
from .grad_mode import INFERENCE
from .node import AccumulateGrad, _HookDict, add_hook

#: The Tensor class, handed over by ``tensor.py`` once it exists (see :func:`bind`).
Tensor: Any = None


def bind(tensor_class: type) -> None:
    """Let these methods build and recognise tensors of ``tensor_class`` (it subclasses
    :class:`TensorAutograd`, so this module cannot import it)."""
    global Tensor
    Tensor = tensor_class


class _Counter:
    """A version counter, shared by a tensor, its views and its ``detach()``-ed twins."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class TensorAutograd:
    """Mixin: the autograd attributes and methods of a Tensor."""

    __slots__ = ()

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
    def _version(self) -> int:
        if self._version_counter is INFERENCE:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter.value if self._version_counter is not None else 0

    @property
    def _saved_version(self) -> int:
        """The version a node records when it saves this tensor: an inference tensor's
        counter refuses to be saved where autograd records, with torch's message."""
        return self._version_counter.value if self._version_counter is not None else 0

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

    def is_inference(self) -> bool:
        """Whether this tensor was made inside ``inference_mode`` (or is a view of one)."""
        return self._version_counter is INFERENCE

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
