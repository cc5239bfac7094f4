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

from .conv_functions import add_conv_functions
from .core import OPS, result_type
from .losses import add_loss_functions

_PYTHON_NUMBERS = (bool, int, float, complex)  # what where() takes as weak numbers

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
    "masked_fill",
    "tril",
    "triu",
    "gather",
    "scatter_add",
    "dot",
    "floor_divide",
    "remainder",
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
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
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
    "masked_fill": "``x`` with ``value`` where the bool ``mask`` is True.",
    "tril": "The lower triangle of the last two dims, from ``diagonal`` down.",
    "triu": "The upper triangle of the last two dims, from ``diagonal`` up.",
    "gather": "The entries of ``x`` at ``index`` along ``dim``, one per index position.",
    "scatter_add": "``x`` with ``src`` added at ``index`` along ``dim``.",
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
    "bitwise_and": "Elementwise ``x & y`` of integers or bools (no gradient).",
    "bitwise_or": "Elementwise ``x | y`` of integers or bools (no gradient).",
    "bitwise_xor": "Elementwise ``x ^ y`` of integers or bools (no gradient).",
    "bitwise_not": "Elementwise ``~x`` of integers or bools (no gradient).",
    "floor_divide": "``x // y``: the quotient rounded down (no gradient).",
    "remainder": "``x % y`` with the sign of ``y``, as Python's and torch's.",
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


def known_shape(value: Any, what: str) -> tuple:
    """The shape of ``value``, which ``what`` needs: a static node must know it."""
    shape = shape_of(value)
    if shape is None:
        raise ValueError(
            f"{what} needs the shape of its input, which the graph does not know; give the "
            "placeholder a shape (None marks a size known only at run time)"
        )
    return shape


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


def fused_cross_entropy(input: Any, target: Any, reduction: str) -> Any:
    """None: ``cross_entropy`` takes its general way (log_softmax, then nll_loss).  A seam:
    the fast layer fuses both for dynamic logits (N, C) and class indices (N,)."""
    return None


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
    def div(input: Any, other: Any, *, rounding_mode: Any = "true") -> Any:
        """``input / other``; ``rounding_mode='trunc'`` or ``'floor'`` rounds the quotient.

        >>> import naivegraph as ng
        >>> ng.div(ng.tensor([7, -7]), 2, rounding_mode="trunc")
        tensor([ 3, -3])
        """
        return operand(input).div(other, rounding_mode=rounding_mode)

    @define
    def logical_not(input: Any) -> Any:
        return OPS["logical_not"].dispatch(operand(input))

    @define
    def bitwise_not(input: Any) -> Any:
        return OPS["bitwise_not"].dispatch(operand(input))

    @define
    def pow(input: Any, exponent: Any) -> Any:
        """``input ** exponent``; a Python number exponent keeps the op ``pow_scalar``."""
        return operand(input).pow(exponent)

    @define
    def matmul(input: Any, other: Any) -> Any:
        """Matrix product with numpy's ``@`` rules."""
        return operand(input).matmul(other)

    @define
    def bmm(input: Any, mat2: Any) -> Any:
        """Products of two batches of matrices (b, n, m) and (b, m, p) (3-D only)."""
        return operand(input).bmm(mat2)

    @define
    def mm(input: Any, other: Any) -> Any:
        """Product of two matrices (2-D only; ``matmul`` for other shapes)."""
        return operand(input).mm(other)

    @define
    def addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        """``beta * input + alpha * (mat1 @ mat2)`` for matrices (``input`` broadcasts),
        as ``torch.addmm``; with ``beta=0`` the input is ignored, NaN included."""
        if beta == 1 and alpha == 1:
            return OPS["addmm"].dispatch(operand(input), mat1, mat2)
        return OPS["addmm_scaled"].dispatch(operand(input), mat1, mat2, beta=beta, alpha=alpha)

    @define
    def where(condition: Any, input: Any = None, other: Any = None) -> Any:
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

        With the condition alone, the positions where it holds, one int64 tensor per
        axis, as ``torch.where(condition)`` (``nonzero(as_tuple=True)``):

        >>> ng.where(ng.tensor([[0, 3], [5, 0]]) > 0)
        (tensor([0, 1]), tensor([1, 0]))
        """
        if input is None and other is None:
            values = known_values(condition)
            if values is None:
                raise TypeError(
                    "where(condition) gives positions whose number only the values decide; "
                    "a static graph's shapes are fixed when it is built: use where(c, x, y)"
                )
            return tuple(lift(np.asarray(axis, dtype=np.int64)) for axis in np.nonzero(values))
        if input is None or other is None:
            raise TypeError("where() takes the condition alone, or the condition, input and other")
        if type(input) in _PYTHON_NUMBERS and type(other) in _PYTHON_NUMBERS:
            # numpy would keep two Python numbers weak and pick float64 / int64; torch
            # gives their result type (a float: the default dtype, float32)
            dtype = result_type(input, other)
            input, other = np.asarray(input, dtype=dtype), np.asarray(other, dtype=dtype)
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
    def nll_loss(
        input: Any,
        target: Any,
        weight: Any = None,
        ignore_index: int = -100,
        reduction: str = "mean",
    ) -> Any:
        """Negative log-likelihood of log-probabilities ``input`` (N, C) or (N, C, d1, ...)
        at the class indices ``target`` (N,) or (N, d1, ...): a fixed array, or a tensor or
        node (e.g. a placeholder of integer labels fed with every batch).  ``weight`` (C,)
        scales each class; targets equal to ``ignore_index`` count for nothing; 'mean'
        divides by the summed weights of the counted targets, as torch.

        >>> import naivegraph as ng
        >>> logp = ng.tensor([[-1.0, -2.0], [-0.5, -3.0]])
        >>> F = ng.nn.functional
        >>> F.nll_loss(logp, ng.tensor([1, 0]), weight=ng.tensor([1.0, 3.0])).item()
        1.625
        """
        if isinstance(weight, str):  # naivegraph's older third argument: the reduction
            weight, reduction = None, weight
        check_reduction(reduction)
        if not accepts(target):
            target = np.asarray(target)
        shape = shape_of(input)
        if shape is not None and len(shape) == 1:
            if weight is None and ignore_index == -100:
                return unbatched(operand(input), shape, target, reduction, "nll_loss")
            target = unbatched_target(target, shape, "nll_loss")
        if weight is None and ignore_index == -100 and (shape is None or len(shape) == 2):
            check_class_indices(input, target)
            return OPS["nll_loss"].dispatch(operand(input), target, reduction=reduction)
        return weighted_nll(operand(input), target, weight, ignore_index, reduction)

    def weighted_nll(input: Any, target: Any, weight: Any, ignore_index: int, reduction: str):
        """nll_loss through op ``nll_loss_nd``: 3-D inputs as torch views them, (N, C, 1, d)."""
        check_class_dtype(target)
        shape, target_shape = shape_of(input), shape_of(target)
        if shape is None or not shape:
            raise ValueError(
                f"nll_loss: expected an input of shape (N, C) or (N, C, d1, ...), got {shape}"
            )
        if len(shape) == 1:  # one unbatched sample (C,), its target checked as one
            shape = (1,) + tuple(shape)
        elif target_shape is not None and not shapes_match(target_shape, shape[:1] + shape[2:]):
            raise ValueError(
                f"nll_loss: expected a target of shape {(shape[0],) + tuple(shape[2:])} for an "
                f"input of shape {shape}, got {target_shape}"
            )
        if shape[1] is None:
            raise ValueError(
                f"nll_loss: weight and ignore_index need the number of classes, but the "
                f"input's shape {shape} leaves it unknown: give that dimension a size"
            )
        weight_shape = None if weight is None else shape_of(weight)
        if weight_shape is not None and weight_shape != (shape[1],):
            raise RuntimeError(
                f"weight tensor should be defined either for all {shape[1]} classes or no "
                f"classes but got weight tensor of shape: {list(weight_shape)}"
            )
        if getattr(weight, "requires_grad", False):
            raise RuntimeError(
                "The function 'nll_loss_forward' is not differentiable with respect to "
                "argument 'weight'. This input cannot have requires_grad True."
            )
        names = {"float32": "Float", "float64": "Double"}
        have, given = dtype_of(input), None if weight is None else dtype_of(weight)
        if have is not None and given is not None and have != given:
            raise RuntimeError(
                f"expected scalar type {names.get(have.name, have.name)} but found "
                f"{names.get(given.name, given.name)}: give the class weights the "
                "input's dtype"
            )
        extra = (weight,) if weight is not None else ()
        attrs = dict(reduction=reduction, ignore_index=ignore_index)
        if len(shape) == 3:
            _, c, d = shape  # the batch size may be unknown (a static placeholder's None)
            flat = OPS["nll_loss_nd"].dispatch(
                input.reshape(-1, c, 1, d), target.reshape(-1, 1, d), *extra, **attrs
            )
            return flat.reshape(-1, d) if reduction == "none" else flat
        return OPS["nll_loss_nd"].dispatch(input, target, *extra, **attrs)

    @define
    def cross_entropy(
        input: Any,
        target: Any,
        weight: Any = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> Any:
        """Softmax cross-entropy of logits ``input`` (N, C) against class indices
        ``target`` (N,), as torch also for one unbatched sample: logits (C,) and a class
        index of shape (); for (N, C, d1, ...) logits and (N, d1, ...) targets; or against
        class probabilities of the input's own shape.  ``weight``, ``ignore_index`` and
        ``label_smoothing`` (mixing ``label_smoothing / C`` of the uniform distribution
        into the target) are torch's.

        >>> import naivegraph as ng
        >>> loss = ng.nn.functional.cross_entropy(ng.zeros(2, 4), ng.tensor([0, 3]))
        >>> round(loss.item(), 4)  # log(4)
        1.3863
        >>> round(ng.nn.functional.cross_entropy(ng.zeros(4), ng.tensor(3)).item(), 4)
        1.3863
        """
        if isinstance(weight, str):  # naivegraph's older third argument: the reduction
            weight, reduction = None, weight
        plain = weight is None and ignore_index == -100 and not label_smoothing
        if plain and (found := fused_cross_entropy(input, target, reduction)) is not None:
            return found  # the fast layer's, the same result
        check_reduction(reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        input = operand(input)
        shape = shape_of(input)
        if _is_probabilities(target, shape):
            return probability_targets(input, target, weight, reduction, label_smoothing)
        if not accepts(target):
            target = np.asarray(target)
        if shape is not None and len(shape) == 1:
            if not plain and not label_smoothing:
                target = unbatched_target(target, shape, "cross_entropy")
                return nll_loss(input.log_softmax(0), target, weight, ignore_index, reduction)
            if not plain:
                loss = cross_entropy(
                    input.unsqueeze(0),
                    target.reshape(1),
                    weight,
                    ignore_index,
                    reduction,
                    label_smoothing,
                )
                return loss.reshape(()) if reduction == "none" else loss
            return unbatched(input, shape, target, reduction, "cross_entropy")
        if plain and (shape is None or len(shape) == 2):
            check_class_indices(input, target)  # before building anything
            return nll_loss(input.log_softmax(1), target, reduction=reduction)
        logp = input.log_softmax(1)
        loss = nll_loss(logp, target, weight, ignore_index, reduction)
        if not label_smoothing:
            return loss
        classes = known_shape(input, "label_smoothing")[1]
        return (1 - label_smoothing) * loss + smoothing_term(
            logp, target, weight, ignore_index, reduction
        ) * (label_smoothing / classes)

    def smoothing_term(logp: Any, target: Any, weight: Any, ignore_index: int, reduction: str):
        """torch's ``-sum over classes of (weight *) logp``, zero at ignored targets, reduced
        as the nll term is (its 'mean' divides by the same summed weights)."""
        rank = len(known_shape(logp, "label_smoothing"))
        per_class = logp if weight is None else logp * weight.reshape((1, -1) + (1,) * (rank - 2))
        counted = OPS["ne"].dispatch(target, ignore_index)  # static nodes compare by identity
        smooth = OPS["where"].dispatch(counted, -per_class.sum(dim=1), 0.0)
        if reduction == "none":
            return smooth
        if reduction == "sum":
            return smooth.sum()
        if weight is None:
            return smooth.sum() / counted.sum()
        picked = OPS["where"].dispatch(counted, weight[target * counted], 0.0)
        return smooth.sum() / picked.sum()

    def probability_targets(input: Any, target: Any, weight: Any, reduction: str, smoothing):
        """-sum over the classes (dim 1, or 0 for one unbatched sample) of p * log_softmax;
        "mean" averages over the samples (and their positions, for (N, C, d1, ...)) only.
        ``label_smoothing`` mixes the uniform distribution into ``p`` first."""
        shape = shape_of(input)
        classes = 1 if shape is None or len(shape) >= 2 else 0
        if smoothing:
            count = known_shape(input, "label_smoothing")[classes]
            target = target * (1 - smoothing) + smoothing / count
        terms = target * input.log_softmax(classes)
        if weight is not None:
            rank = len(known_shape(input, "cross_entropy with class weights"))
            terms = terms * weight.reshape((-1,) + (1,) * (rank - classes - 1))
        per_sample = -terms.sum(dim=classes)
        if reduction == "none":
            return per_sample
        return per_sample.mean() if reduction == "mean" else per_sample.sum()

    def unbatched_target(target: Any, shape: tuple, name: str) -> Any:
        """The target of one unbatched sample (C,): one class index of shape (), or of
        shape (1,), whose loss torch computes (its backward then refuses it)."""
        check_class_dtype(target)
        target_shape = shape_of(target)
        if target_shape is None or target_shape == ():
            return target
        hint = (
            f"{name}: an input of shape {shape} is one sample, so its target is one class "
            "index of shape (); for a batch pass an input of shape (N, C)"
        )
        if len(target_shape) > 1:
            raise RuntimeError(
                f"0D or 1D target tensor expected, multi-target not supported ({hint})"
            )
        if target_shape[0] is not None and target_shape[0] != 1:
            raise ValueError(
                "For 1D input, 1D target must have size 1, but got target size: "
                f"{target_shape[0]} ({hint})"
            )
        return target

    def unbatched(input: Any, shape: tuple, target: Any, reduction: str, name: str) -> Any:
        """Logits (or log-probabilities, for nll_loss) (C,) of one sample and its class
        index of shape ()."""
        target = unbatched_target(target, shape, name)
        check_class_range(target, shape[0])
        # as torch: one nll_loss node straight over the (log_softmax of the) row, whose
        # loss is 0-d whatever the reduction
        logp = input.log_softmax(0) if name == "cross_entropy" else input
        return OPS["nll_loss"].dispatch(logp, target, reduction=reduction)

    add_conv_functions(define, operand, static=lambda value: known_values(value) is None)
    add_loss_functions(
        define,
        operand,
        {"check_reduction": check_reduction, "check_same_shape": check_same_shape},
    )
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
