"""The module-level functions of both modes, written once: ``exp``, ``cat``, ``mse_loss``...

``ng.exp(x)`` and ``ns.exp(x)`` are the same function made twice by
:func:`make_functions`; only one thing differs between the modes, how a plain value
(a number, a list, a numpy array) becomes an operand:

* dynamic mode *lifts* it into a ``Tensor`` (computed at once);
* static mode lifts it into a ``Constant`` of the default graph (computed when the
  graph runs), and refuses a dynamic tensor instead of computing with it.

Everything else, including the argument checks of the losses, is shared, so both
modes refuse the same mistakes with the same messages.  The checks read what is
*known*: a static placeholder may have an unknown batch size (``None`` in its shape)
or an unknown shape altogether, and its values are only known when the graph runs.

>>> import numpy as np
>>> surface = make_functions(lift=np.asarray)  # a toy mode: plain numpy arrays
>>> surface["exp"] is not make_functions(lift=np.asarray)["exp"]
True
>>> is_generated(surface["mse_loss"])
True
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import fast
from .core import OPS

Function = Callable[..., Any]

#: One-operand functions that call the operand's method of the same name.
METHODS = (
    "exp",
    "log",
    "sqrt",
    "reciprocal",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "neg",
    "sign",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "argmin",
    "reshape",
    "view",
    "transpose",
    "permute",
    "t",
    "squeeze",
    "unsqueeze",
    "expand",
    "flatten",
    "softmax",
    "log_softmax",
    "clamp",
    "clone",
    "detach",
    "prod",
    "var",
    "std",
    "norm",
    "sort",
    "argsort",
    "index_select",
    "index_add",
    "dot",
)

#: Two-operand functions: one op each, with numpy broadcasting.
BINARY = (
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "eq",
    "ne",
    "gt",
    "ge",
    "lt",
    "le",
    "logical_and",
    "logical_or",
)

_DOCS = {
    "exp": "Elementwise ``e ** x``.",
    "log": "Elementwise natural logarithm.",
    "sqrt": "Elementwise square root.",
    "reciprocal": "Elementwise ``1 / x``.",
    "sin": "Elementwise sine.",
    "cos": "Elementwise cosine.",
    "tanh": "Elementwise hyperbolic tangent.",
    "sigmoid": "Elementwise ``1 / (1 + exp(-x))``.",
    "relu": "Elementwise ``max(x, 0)``.",
    "abs": "Elementwise absolute value.",
    "neg": "Elementwise ``-x``.",
    "sign": "Elementwise sign: -1, 0 or 1.",
    "sum": "Sum over ``dim`` (all axes when None).",
    "mean": "Mean over ``dim`` (all axes when None).",
    "max": "The largest value; along ``dim``, a ``(values, indices)`` pair, as in torch.",
    "min": "The smallest value; along ``dim``, a ``(values, indices)`` pair, as in torch.",
    "argmax": "Index of the largest value (over ``dim``; of the flattened ``x`` when None).",
    "argmin": "Index of the smallest value (over ``dim``; of the flattened ``x`` when None).",
    "reshape": "``x`` with a new shape (same number of elements; one ``-1`` is inferred).",
    "view": "``x`` with a new shape (same number of elements; one ``-1`` is inferred).",
    "transpose": "Swap two axes.",
    "permute": "Reorder all axes.",
    "t": "Transpose of a matrix (vectors and scalars come back unchanged).",
    "squeeze": "Drop axes of length 1.",
    "unsqueeze": "Insert an axis of length 1 at ``dim``.",
    "expand": "Broadcast ``x`` to ``sizes`` (``-1`` keeps an axis).",
    "flatten": "Merge axes ``start_dim..end_dim`` into one.",
    "softmax": "``exp(x) / sum(exp(x))`` along ``dim`` (numerically shifted).",
    "log_softmax": "``log(softmax(x))`` along ``dim``, computed stably.",
    "clamp": "Limit ``x`` to ``[min, max]`` (either bound may be None).",
    "clone": "A copy of ``x`` that gradients flow through.",
    "detach": "``x`` cut off from the graph of its history (shares its values).",
    "prod": "Product of all elements, or along one ``dim`` (integers in int64).",
    "var": "Variance over ``dim``, dividing by ``n - correction`` (1 unless told).",
    "std": "Standard deviation over ``dim``: the square root of ``var``.",
    "norm": "Vector p-norm over ``dim`` (p = 'fro'/2 by default, 1, inf, -inf, 0, ...).",
    "sort": "``(values, indices)`` sorted along ``dim`` (stable; NaN is the largest).",
    "argsort": "The indices that sort ``x`` along ``dim``.",
    "index_select": "The slices of ``x`` at positions ``index`` along ``dim``.",
    "index_add": "``x`` with ``alpha * source`` added at ``index`` along ``dim``.",
    "dot": "Inner product of two 1-D tensors of one dtype.",
    "add": "``x + y`` with numpy broadcasting.",
    "sub": "``x - y`` with numpy broadcasting.",
    "mul": "``x * y`` with numpy broadcasting.",
    "div": "``x / y`` with numpy broadcasting.",
    "maximum": "Elementwise larger of ``x`` and ``y``.",
    "minimum": "Elementwise smaller of ``x`` and ``y``.",
    "eq": "Elementwise ``x == y`` (booleans, no gradient).",
    "ne": "Elementwise ``x != y`` (booleans, no gradient).",
    "gt": "Elementwise ``x > y`` (booleans, no gradient).",
    "ge": "Elementwise ``x >= y`` (booleans, no gradient).",
    "lt": "Elementwise ``x < y`` (booleans, no gradient).",
    "le": "Elementwise ``x <= y`` (booleans, no gradient).",
    "logical_and": "Elementwise ``x and y`` (booleans, no gradient).",
    "logical_or": "Elementwise ``x or y`` (booleans, no gradient).",
    "logical_not": "Elementwise ``not x`` (booleans, no gradient).",
}

REDUCTIONS = ("mean", "sum", "none")


def is_operand(value: Any) -> bool:
    """Whether ``value`` belongs to a backend already (a dynamic tensor, a static node)."""
    return hasattr(type(value), "_ng_apply")


def is_generated(function: Any) -> bool:
    """Whether ``function`` was made by :func:`make_functions` (the one surface)."""
    return getattr(function, "_made_by", None) is make_functions


# ----------------------------------------------------------------------------------
# Argument checks: they read only what is known (static shapes may hold None)
# ----------------------------------------------------------------------------------
def shape_of(value: Any) -> tuple | None:
    """The shape of an operand or plain value; None when it is not known (yet)."""
    if is_operand(value):
        shape = value.shape
        return None if shape is None else tuple(shape)
    return np.shape(value)


def dtype_of(value: Any) -> np.dtype | None:
    """The dtype of an operand or plain value; None when it is not known (yet)."""
    if is_operand(value):
        dtype = value.dtype
        return None if dtype is None else np.dtype(dtype)
    return np.asarray(value).dtype


def known_values(value: Any) -> np.ndarray | None:
    """The values of a plain value or a dynamic tensor; None for a static node, whose
    values exist only while its graph runs."""
    if not is_operand(value):
        return np.asarray(value)
    data = getattr(value, "_data", None)  # where a dynamic tensor keeps its array
    return data if isinstance(data, np.ndarray) else None


def shapes_match(a: tuple | None, b: tuple | None) -> bool:
    """Whether two shapes can be the same: unknown shapes and dimensions match anything.

    >>> shapes_match((None, 3), (8, 3)), shapes_match((3,), (3, 1)), shapes_match(None, (2,))
    (True, False, True)
    """
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(p is None or q is None or p == q for p, q in zip(a, b))


def check_reduction(reduction: str) -> None:
    """A loss reduces with ``'mean'``, ``'sum'`` or ``'none'``, as in torch."""
    if reduction not in REDUCTIONS:
        raise ValueError(
            f"{reduction} is not a valid value for reduction: use 'mean', 'sum' or 'none'"
        )


def check_same_shape(name: str, input: Any, target: Any) -> None:
    """An elementwise loss compares like with like: broadcasting is almost always a bug."""
    shapes = shape_of(input), shape_of(target)
    if not shapes_match(*shapes):
        raise ValueError(
            f"{name}: input shape {shapes[0]} and target shape {shapes[1]} must "
            "match (broadcasting them is almost always a bug)"
        )


def check_class_dtype(target: Any) -> None:
    """Class indices are integers (when the dtype is known)."""
    dtype = dtype_of(target)
    if dtype is not None and dtype.kind not in "iu":
        raise TypeError(
            f"cross_entropy expects class indices of an integer dtype as target, got "
            f"{dtype}; use target.long()"
        )


def check_class_indices(input: Any, target: Any) -> None:
    """``target`` (N,) holds class indices of ``input`` (N, C): shape, dtype, range."""
    check_class_dtype(target)
    shape, target_shape = shape_of(input), shape_of(target)
    batch = None if shape is None else shape[:1]
    if (shape is not None and len(shape) != 2) or not shapes_match(batch, target_shape):
        raise ValueError(
            f"nll_loss: expected input of shape (N, C) and target of shape (N,), got "
            f"{shape} and {target_shape}"
        )
    check_class_range(target, None if shape is None else shape[1])


def check_class_range(target: Any, classes: int | None) -> None:
    """Class indices lie in ``0..classes-1`` (when the values and the count are known)."""
    values = known_values(target)
    if classes is None or values is None or not values.size:
        return
    if values.max() >= classes or values.min() < 0:
        wrong = values.max() if values.max() >= classes else values.min()
        raise IndexError(f"Target {int(wrong)} is out of bounds: classes are 0..{classes - 1}")


# ----------------------------------------------------------------------------------
# The generator
# ----------------------------------------------------------------------------------
def make_functions(
    lift: Callable[[Any], Any], accepts: Callable[[Any], bool] = is_operand
) -> dict[str, Function]:
    """Every module-level function, for the mode whose operands ``accepts`` recognises
    and which turns any other value into an operand with ``lift``.

    Which argument is lifted: the first one, the operand whose method or op is called
    (``exp(2.0)``, ``add([1, 2], x)``, the ``input`` of a loss), the other arguments
    go to the op as they are (as in ``x + 2.0``); ``where``, ``cat`` and ``stack``
    lift their first value only when none of them is an operand yet.
    """

    def operand(value: Any) -> Any:
        return value if accepts(value) else lift(value)

    def operands(*values: Any) -> list:
        """``values``, the first lifted when none is an operand yet."""
        values_ = list(values)
        if not any(accepts(v) for v in values_):
            values_[0] = lift(values_[0])
        return values_

    functions: dict[str, Function] = {}

    def define(function: Function, name: str | None = None) -> Function:
        name = name or function.__name__
        function.__name__ = function.__qualname__ = name
        function.__doc__ = function.__doc__ or _DOCS[name]
        function._made_by = make_functions  # type: ignore[attr-defined]  # see is_generated
        functions[name] = function
        return function

    def method(name: str) -> Function:
        def function(input: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(operand(input), name)(*args, **kwargs)

        return define(function, name)

    def binary(name: str) -> Function:
        op = OPS[name]

        def function(input: Any, other: Any) -> Any:
            return op.dispatch(operand(input), other)

        return define(function, name)

    def scaled(name: str) -> Function:
        """``add`` / ``sub`` take torch's ``alpha``: ``input + alpha * other``."""
        op = OPS[name]

        def function(input: Any, other: Any, *, alpha: Any = 1) -> Any:
            if alpha == 1:
                return op.dispatch(operand(input), other)
            return getattr(operand(input), name)(other, alpha=alpha)

        return define(function, name)

    for name in METHODS:
        method(name)
    for name in BINARY:
        scaled(name) if name in ("add", "sub") else binary(name)

    @define
    def logical_not(input: Any) -> Any:
        return OPS["logical_not"].dispatch(operand(input))

    @define
    def pow(input: Any, exponent: Any) -> Any:
        """``input ** exponent``; a Python number exponent keeps the op ``pow_scalar``."""
        return operand(input).pow(exponent)

    @define
    def matmul(input: Any, other: Any) -> Any:
        """Matrix product with numpy's ``@`` rules."""
        return operand(input).matmul(other)

    @define
    def mm(input: Any, other: Any) -> Any:
        """Product of two matrices (2-D only; ``matmul`` for other shapes)."""
        return operand(input).mm(other)

    @define
    def addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        """``beta * input + alpha * (mat1 @ mat2)`` for matrices (``input`` broadcasts), as
        ``torch.addmm``; with ``beta=0`` the values of ``input`` are ignored (NaN too)."""
        input = operand(input)
        if beta == 0:
            input = OPS["zeros_like"].dispatch(input)
        elif beta != 1:
            input = input * beta
        if alpha != 1:
            mat2 = operand(mat2) * alpha
        return OPS["addmm"].dispatch(input, mat1, mat2)

    @define
    def where(condition: Any, input: Any, other: Any) -> Any:
        """``input`` where ``condition`` holds, else ``other`` (differentiable in both):
        the graph's way to branch on data.

        >>> import numpy as np, naivegraph as ng, naivegraph.static as ns
        >>> v = ng.tensor([-1.0, 2.0, -3.0])
        >>> ng.where(v > 0, v, 0.0)
        tensor([0., 2., 0.])
        >>> with ns.Graph() as g:
        ...     v = ns.placeholder("v", shape=(3,))
        ...     r = ns.where(v > 0, v, 0.0)
        >>> g.forward(v=np.array([-1.0, 2.0, -3.0]), fetches=[r])[0].tolist()
        [0.0, 2.0, 0.0]
        """
        return OPS["where"].dispatch(*operands(condition, input, other))

    def sequence(name: str, tensors: Any) -> list:
        if accepts(tensors) or not isinstance(tensors, (list, tuple)):
            raise TypeError(
                f"{name}() expects a list or tuple of tensors, got {type(tensors).__name__}"
            )
        if not tensors:
            raise RuntimeError(f"{name}(): expected a non-empty list of Tensors")
        return operands(*tensors)

    @define
    def cat(tensors: Sequence, dim: int = 0) -> Any:
        """Join tensors along an existing dimension."""
        return OPS["cat"].dispatch(sequence("cat", tensors), dim=dim)

    @define
    def stack(tensors: Sequence, dim: int = 0) -> Any:
        """Join tensors along a new dimension."""
        return OPS["stack"].dispatch(sequence("stack", tensors), dim=dim)

    # -- losses -------------------------------------------------------------------------
    @define
    def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Any:
        """Mean (or summed) squared error; ``input`` and ``target`` have one shape.

        >>> import naivegraph as ng
        >>> ng.nn.functional.mse_loss(ng.tensor([1., 2.]), ng.tensor([1., 4.]))
        tensor(2.)
        """
        check_reduction(reduction)
        check_same_shape("mse_loss", input, target)
        return OPS["mse_loss"].dispatch(operand(input), target, reduction=reduction)

    @define
    def nll_loss(input: Any, target: Any, reduction: str = "mean") -> Any:
        """Negative log-likelihood of log-probabilities ``input`` (N, C) at the class
        indices ``target`` (N,): a fixed array, or a tensor or node (e.g. a placeholder
        of integer labels fed with every batch)."""
        check_reduction(reduction)
        if not accepts(target):
            target = np.asarray(target)
        shape = shape_of(input)
        if shape is not None and len(shape) == 1:
            return unbatched(operand(input), shape, target, reduction, "nll_loss")
        check_class_indices(input, target)
        return OPS["nll_loss"].dispatch(operand(input), target, reduction=reduction)

    @define
    def cross_entropy(input: Any, target: Any, reduction: str = "mean") -> Any:
        """Softmax cross-entropy of logits ``input`` (N, C) against class indices
        ``target`` (N,), as torch also for one unbatched sample: logits (C,) and a class
        index of shape (); or against class probabilities of the input's own shape.

        >>> import naivegraph as ng
        >>> loss = ng.nn.functional.cross_entropy(ng.zeros(2, 4), ng.tensor([0, 3]))
        >>> round(loss.item(), 4)  # log(4)
        1.3863
        >>> round(ng.nn.functional.cross_entropy(ng.zeros(4), ng.tensor(3)).item(), 4)
        1.3863
        """
        if (found := fast.cross_entropy(input, target, reduction)) is not None:  # same result
            return found
        check_reduction(reduction)
        input = operand(input)
        shape = shape_of(input)
        if _is_probabilities(target, shape):
            # -sum over classes (dim 1, or 0 unbatched) of p * log_softmax; "mean"
            # averages over the samples (and their positions, for (N, C, d1, ...)) only.
            classes = 1 if shape is None or len(shape) >= 2 else 0
            per_sample = -(target * input.log_softmax(classes)).sum(dim=classes)
            if reduction == "none":
                return per_sample
            return per_sample.mean() if reduction == "mean" else per_sample.sum()
        if not accepts(target):
            target = np.asarray(target)
        if shape is not None and len(shape) == 1:
            return unbatched(input, shape, target, reduction, "cross_entropy")
        check_class_indices(input, target)  # before building anything
        return nll_loss(input.log_softmax(1), target, reduction)

    def unbatched(input: Any, shape: tuple, target: Any, reduction: str, name: str) -> Any:
        """Logits (or log-probabilities, for nll_loss) (C,) of one sample and its class
        index of shape (): a batch of one."""
        check_class_dtype(target)
        target_shape = shape_of(target)
        if not shapes_match(target_shape, ()):
            raise ValueError(
                f"{name}: an input of shape {shape} is one sample, "
                f"so the target is one class index of shape (), got shape "
                f"{target_shape}; for a batch pass an input of shape (N, C)"
            )
        check_class_range(target, shape[0])
        row = input.unsqueeze(0)
        row = row.log_softmax(1) if name == "cross_entropy" else row
        loss = OPS["nll_loss"].dispatch(row, target.reshape(1), reduction=reduction)
        return loss.reshape(()) if reduction == "none" else loss

    return functions


def _is_probabilities(target: Any, shape: tuple | None) -> bool:
    """A floating target of the input's shape holds class probabilities (torch's rule;
    a floating target of another shape is refused as a bad index target)."""
    dtype = getattr(target, "dtype", None)
    return (
        dtype is not None
        and np.dtype(dtype).kind == "f"
        and shape is not None
        and shape_of(target) is not None
        and shapes_match(shape_of(target), shape)  # None: a batch size known at run time
    )


__all__ = [
    "BINARY",
    "METHODS",
    "check_class_indices",
    "check_class_range",
    "check_reduction",
    "check_same_shape",
    "is_generated",
    "is_operand",
    "make_functions",
    "shapes_match",
]
