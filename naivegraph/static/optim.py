"""Optimisers inside the graph: ``ns.optim.SGD(...).minimize(loss)`` builds one step.

TensorFlow 1 and Theano train by running a graph that contains its own updates: the
gradients, the optimiser's arithmetic and the assignments to the weights are all
nodes, built once.  ``minimize(loss)`` adds them and returns one node, the *step*;
every run that fetches it computes the gradients on that run's feeds and stores the
new weights (and the optimiser's slots: momentum buffers, Adam's moments and step
count, which are non-trainable Variables of the graph) when the run ends.

The arithmetic is ``naivegraph.optim``'s (PyTorch's), so both modes take the same
steps on the same data.

>>> import numpy as np, naivegraph.static as ns
>>> with ns.Graph() as g:
...     w = ns.Variable(4.0, name="w")
...     loss = w * w
...     step = ns.optim.SGD([w], lr=0.25).minimize(loss)
>>> for _ in range(2):
...     _ = g.run(step)
>>> float(w.value)  # 4 -> 4 - 0.25 * 8 = 2 -> 2 - 0.25 * 4 = 1
1.0
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from ..ops import OPS
from .gradients import gradients
from .graph import Graph
from .nodes import Node, Operation, Variable, apply, assign


class Optimizer:
    """Base class: which Variables to train, and how to build their updates."""

    def __init__(self, variables: Iterable[Variable], **settings: Any) -> None:
        self.variables = _checked_variables(variables, type(self).__name__)
        self.settings = settings

    def minimize(self, loss: Node, name: str | None = None) -> Operation:
        """Add gradients and updates of every Variable to ``loss``'s graph; return the step.

        Built atomically: if anything is refused, the graph is left as it was.
        """
        graph = _graph_of(loss, self.variables)
        size = len(graph.nodes)
        try:
            with graph:
                grads = gradients(loss, self.variables)
                pairs = [(v, g) for v, g in zip(self.variables, grads) if g is not None]
                if not pairs:
                    raise ValueError(
                        f"{loss.name!r} does not depend on any of the variables given to "
                        f"{type(self).__name__}, so there is nothing to minimise"
                    )
                updates: list[Node] = []
                for variable, grad in pairs:
                    for target, value in self._updates(variable, grad):
                        updates.append(assign(target, value))
                step = apply(OPS["group"], (updates,), {})
                if name is not None:
                    graph.rename(step, name)
        except BaseException:
            graph._rollback(size)
            raise
        return step

    def _updates(self, variable: Variable, grad: Node) -> list[tuple[Variable, Node]]:
        raise NotImplementedError

    def _slot(self, variable: Variable, what: str, value: Any = 0.0) -> Variable:
        """A non-trainable Variable beside ``variable`` (zeros of its shape by default)."""
        initial = np.full(variable.shape, value, dtype=variable.dtype)
        return Variable(initial, name=_slot_name(variable, what), trainable=False)


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, Nesterov and weight decay,
    step for step as ``naivegraph.optim.SGD``."""

    def __init__(
        self,
        variables: Iterable[Variable],
        lr: float = 1e-3,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        _check_nonnegative("learning rate", lr)
        _check_nonnegative("momentum value", momentum)
        _check_nonnegative("weight_decay value", weight_decay)
        if nesterov and momentum <= 0:
            raise ValueError("Nesterov momentum requires a momentum")
        super().__init__(
            variables, lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov
        )

    def _updates(self, variable: Variable, grad: Node) -> list[tuple[Variable, Node]]:
        s = self.settings
        if s["weight_decay"]:
            grad = grad + s["weight_decay"] * variable
        updates = []
        if s["momentum"]:
            buffer = self._slot(variable, "momentum")
            new_buffer = buffer * s["momentum"] + grad  # zeros at first: the first step is grad
            updates.append((buffer, new_buffer))
            grad = grad + s["momentum"] * new_buffer if s["nesterov"] else new_buffer
        updates.append((variable, variable - s["lr"] * grad))
        return updates


class Adam(Optimizer):
    """Adam (Kingma & Ba) with PyTorch's defaults, step for step as ``naivegraph.optim.Adam``."""

    def __init__(
        self,
        variables: Iterable[Variable],
        lr: float = 1e-3,
        betas: Sequence[float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        _check_nonnegative("learning rate", lr)
        _check_nonnegative("epsilon value", eps)
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        super().__init__(variables, lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)

    def _updates(self, variable: Variable, grad: Node) -> list[tuple[Variable, Node]]:
        s = self.settings
        beta1, beta2 = s["betas"]
        if s["weight_decay"]:
            grad = grad + s["weight_decay"] * variable
        # The step count and bias corrections are Python floats in ng.optim and torch:
        # float64 here whatever the default dtype, then in the variable's dtype as numpy
        # would take such a float.
        step = Variable(np.float64(0.0), name=_slot_name(variable, "step"), trainable=False)
        m, v = self._slot(variable, "exp_avg"), self._slot(variable, "exp_avg_sq")
        t = step + 1.0
        new_m = beta1 * m + (1 - beta1) * grad
        new_v = beta2 * v + (1 - beta2) * grad * grad
        m_hat = new_m / _in_dtype(1 - beta1**t, variable.dtype)
        v_hat = new_v / _in_dtype(1 - beta2**t, variable.dtype)
        new_value = variable - s["lr"] * m_hat / (OPS["sqrt"].dispatch(v_hat) + s["eps"])
        return [(step, t), (m, new_m), (v, new_v), (variable, new_value)]


def _slot_name(variable: Variable, what: str) -> str:
    """``w/what``, or ``w/what_1``, ``w/what_2``, ... when another optimiser of the same
    graph already keeps such a slot for ``w`` (TensorFlow 1 numbers them the same way)."""
    base = f"{variable.name}/{what}"
    graph = variable.graph
    if graph is None or not graph._taken(base):
        return base
    return graph._unique_name(base)


def _in_dtype(node: Node, dtype: np.dtype) -> Node:
    return node if node.dtype == dtype else OPS["to_copy"].dispatch(node, dtype=dtype)


def _checked_variables(variables: Any, who: str) -> list[Variable]:
    try:
        found: list[Any] = [variables] if isinstance(variables, Node) else list(variables)
    except TypeError:
        raise TypeError(
            f"{who} takes a list of Variables to train, got {type(variables).__name__}"
        ) from None
    if not found:
        raise ValueError(f"{who} got an empty list of variables: pass the Variables to train")
    for v in found:
        if not isinstance(v, Variable) or not v.trainable:
            what = v.name if isinstance(v, Node) else type(v).__name__
            raise TypeError(
                f"{who} trains trainable Variables, but {what!r} is not one; pass "
                f"ns.Variable(...) nodes (graph.variables lists them)"
            )
    if len({id(v) for v in found}) != len(found):
        raise ValueError(f"{who} got a Variable twice; list each one once")
    return found


def _graph_of(loss: Node, variables: Sequence[Variable]) -> Graph:
    if not isinstance(loss, Node):
        raise TypeError(f"minimize takes the loss node, got {type(loss).__name__}")
    graph = loss.graph
    for v in variables:
        if v.graph is not graph:
            raise ValueError(
                f"Variable {v.name!r} belongs to {getattr(v.graph, 'name', None)}, the loss "
                f"to {getattr(graph, 'name', None)}: nodes of two graphs cannot be mixed"
            )
    assert graph is not None
    return graph


def _check_nonnegative(what: str, value: float) -> None:
    if not value >= 0.0:
        raise ValueError(f"Invalid {what}: {value}")
