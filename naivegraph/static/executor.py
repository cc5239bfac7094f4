"""Running a static graph: feeds, execution plans and memory planning.

A :class:`Plan` is computed once per (graph, fetches, feeds): the nodes the fetches
need in topological order, a slot index per node, and for every step the slots it
reads, the slot it writes, and the slots whose last reader it is.  Running a plan is
then one tight loop; a slot is set to None right after its last reader ran, so numpy
can release the array (memory planning), unless the value is fetched or kept for a
later ``backward``.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .graph import Graph, RunState, describe_site
from .nodes import Constant, Node, Operation, Placeholder, Variable, numeric_data, safe_cast


# -------------------------------------------------------------------------- feeds
def _shape_matches(declared: tuple | None, actual: tuple) -> bool:
    if declared is None:
        return True
    return len(declared) == len(actual) and all(
        d is None or d == a for d, a in zip(declared, actual)
    )


def check_feed(placeholder: Placeholder, value: Any) -> np.ndarray:
    """``value`` as an array of the placeholder's dtype, with its shape checked.

    Data that is not numeric (TypeError) or is a ragged nested list (ValueError) is
    refused with the placeholder named.
    """
    data = np.asarray(numeric_data(value, f"the value fed to placeholder {placeholder.name!r}"))
    array = _cast_feed(placeholder, data)
    if not _shape_matches(placeholder.shape, array.shape):
        raise ValueError(
            f"the value fed to placeholder {placeholder.name!r} has shape {array.shape}, but "
            f"the placeholder was declared with shape {placeholder.shape}; feed an array of "
            f"shape {placeholder.shape} (None in a declared shape accepts any size)"
        )
    return array


def _cast_feed(placeholder: Placeholder, data: np.ndarray) -> np.ndarray:
    """``data`` in the placeholder's dtype; unsafe casts are refused.

    No copy of a feed of the right dtype (memory planning); results are never the
    caller's array or a view of it: ``Plan.fetched`` copies those on the way out.
    """
    return safe_cast(
        data,
        placeholder.dtype,
        f"the value fed to placeholder {placeholder.name!r}",
        "the placeholder",
    )


def collect_feeds(
    graph: Graph, feeds: Mapping | None, named: Mapping[str, Any]
) -> dict[Placeholder, np.ndarray]:
    """Validate ``feeds`` (nodes or names -> arrays) and keyword feeds into one dict."""
    items = list((feeds or {}).items()) + list(named.items())
    result: dict[Placeholder, np.ndarray] = {}
    for key, value in items:
        if isinstance(key, str):
            node = graph._node_named(key)
            if node is None:
                names = ", ".join(p.name for p in graph.placeholders) or "none"
                raise KeyError(
                    f"unknown placeholder name {key!r} in the feeds; the placeholders "
                    f"of {graph.name} are: {names}"
                )
        else:
            node = graph.resolve(key)
        if not isinstance(node, Placeholder):
            hint = " (change a Variable with .assign(value))" if isinstance(node, Variable) else ""
            raise TypeError(
                f"only placeholders can be fed, but {node.name!r} is a {type(node).__name__}{hint}"
            )
        result[node] = check_feed(node, value)
    return result


def ancestors(fetches: Iterable[Node]) -> set[Node]:
    """Every node the ``fetches`` depend on, including themselves (iterative: no
    recursion limit)."""
    seen: set[Node] = set()
    add = seen.add
    todo = list(fetches)
    pop, extend = todo.pop, todo.extend
    while todo:
        node = pop()
        if node not in seen:
            add(node)
            extend(node.inputs)
    return seen


def topological_order(graph: Graph, roots: Iterable[Node]) -> list[Node]:
    """The nodes ``roots`` depend on (themselves included), in topological order.

    One pass backwards over ``graph.nodes`` (creation order, which is topological):
    a node is needed if it is a root or an input of a needed node, and every user of a
    node comes after it, so ``wanted`` knows by then.  It holds only the nodes needed
    and not yet reached (a chain's: one), not every ancestor.  Linear in the size of
    the graph.
    """
    wanted = set(roots)
    order = []
    for node in reversed(graph.nodes):
        if node in wanted:
            wanted.discard(node)
            order.append(node)
            wanted.update(node.inputs)
    order.reverse()
    return order


def missing_feed_error(placeholder: Placeholder, fetch: Node | None = None) -> ValueError:
    needed = (
        f" ({fetch.name!r} depends on it)" if fetch is not None and fetch is not placeholder else ""
    )
    return ValueError(
        f"placeholder {placeholder.name!r} needs a value{needed}: feed it, e.g. "
        f"graph.forward({{{placeholder.name!r}: array}}) or graph.forward({placeholder.name}=array)"
    )


# -------------------------------------------------------------------------- plans
def _step_function(node: Operation):
    fn = node.op.forward
    if node.attrs:
        fn = functools.partial(fn, **node.attrs)
    if node.op.variadic:
        return lambda *xs, _f=fn: _f(list(xs))
    return fn


class Plan:
    """A precomputed schedule for computing ``fetches`` from ``placeholders``.

    Attributes:
        order: the nodes that run or are read, in topological order.
        slot: node -> index into the value list of one run.
        steps: ``(forward, input slots, output slot, slots to free afterwards)``.
    """

    def __init__(
        self,
        graph: Graph,
        fetches: Sequence[Node],
        placeholders: Sequence[Placeholder],
        keep: Iterable[Node] = (),
        free: bool = True,
        order: Sequence[Node] | None = None,
    ) -> None:
        # ``order`` lets a caller that already sorted the needed nodes skip doing it again.
        self.order = topological_order(graph, fetches) if order is None else list(order)
        self.slot = {n: i for i, n in enumerate(self.order)}
        fed = set(placeholders)
        for node in self.order:
            if isinstance(node, Placeholder) and node not in fed:
                user = next((f for f in fetches if node in ancestors([f])), None)
                raise missing_feed_error(node, user)
        self.template: list[Any] = [None] * len(self.order)
        self.variables = []
        for i, node in enumerate(self.order):
            if isinstance(node, Constant):
                self.template[i] = node.value
            elif isinstance(node, Variable):
                self.variables.append((i, node._state))
        self.updates = _updates_of(self.order, self.slot)
        self.placeholder_slots = [self.slot.get(p) for p in placeholders]
        self.fetch_slots = [self.slot[f] for f in fetches]
        self.leaf_slots = [i for i, n in enumerate(self.order) if not isinstance(n, Operation)]
        protected = set(fetches) | set(keep) | {self.order[i] for i, _ in self.updates}
        self.steps = self._schedule(protected, free)

    def _schedule(self, protected: set[Node], free: bool) -> list[tuple]:
        slot = self.slot
        ops = [n for n in self.order if isinstance(n, Operation)]
        frees: dict[Operation, list[int]] = {}
        if free:
            last_reader: dict[Node, Operation] = {}
            for node in ops:
                for inp in node.inputs:
                    last_reader[inp] = node
            for value_node, reader in last_reader.items():
                # Leaves are held by the graph or the caller anyway: freeing their slot
                # saves nothing.
                if isinstance(value_node, Operation) and value_node not in protected:
                    frees.setdefault(reader, []).append(slot[value_node])
        none: tuple = ()
        steps = []
        for n in ops:
            freed = frees.get(n)
            steps.append(
                (
                    _step_function(n),
                    tuple([slot[i] for i in n.inputs]),
                    slot[n],
                    none if freed is None else tuple(sorted(set(freed))),
                )
            )
        return steps

    def run(
        self, feed_values: Sequence[Any], shapes: dict | None = None, check_numerics: bool = False
    ) -> list[Any]:
        """One run: the list of slot values (freed slots are None).

        With ``shapes`` (a dict), the shape of every value freed during the run is
        recorded there: ``graph.backward`` needs the shapes of values it does not keep
        (a kept value carries its own shape).  With ``check_numerics`` the run stops at
        the first value (inputs first, then each step) holding NaN or inf.
        """
        values = self.template.copy()
        for slot, state in self.variables:
            values[slot] = state[0]
        for feed_slot, value in zip(self.placeholder_slots, feed_values):
            if feed_slot is not None:
                values[feed_slot] = value
        order = self.order
        step: Any = None
        if check_numerics:
            for slot in self.leaf_slots:
                check_finite(values[slot], order[slot])
        try:
            if check_numerics:
                for step in self.steps:
                    fn, ins, out, frees = step
                    values[out] = fn(*[values[i] for i in ins])
                    check_finite(values[out], order[out])
                    for slot in frees:
                        if shapes is not None:
                            shapes[order[slot]] = shape_of(values[slot])
                        values[slot] = None
            elif shapes is None:
                for step in self.steps:
                    fn, ins, out, frees = step
                    values[out] = fn(*[values[i] for i in ins])
                    for slot in frees:
                        values[slot] = None
            else:
                for step in self.steps:
                    fn, ins, out, frees = step
                    values[out] = fn(*[values[i] for i in ins])
                    for slot in frees:
                        shapes[order[slot]] = shape_of(values[slot])
                        values[slot] = None
        except Exception as error:
            if step is None or isinstance(error, NumericsError):
                raise
            node = order[step[2]]
            raise type(error)(
                f"while running node {node.name!r} ({node.op_name}): {error}"
            ) from error
        if self.updates:
            self._commit(values)
        return values

    def _commit(self, values: list[Any]) -> None:
        """Store the new values of this run's updates: only once every step succeeded,
        all together, so a failed run changes no Variable."""
        leaves = self.leaf_arrays(values)
        for slot, variable in self.updates:
            value = values[slot]
            # The new storage must be the Variable's own: not a feed, a constant or
            # another Variable's array (``v.assign(w)``), which could change under it.
            variable._state[0] = value.copy() if _shares_leaf_storage(value, leaves) else value

    def fetched(self, values: list[Any]) -> list[Any]:
        """The fetched values, none of them storage a leaf keeps (a Variable's array,
        a constant, a fed array) nor a view of it: writing to a result changes nothing.

        Results computed by the run are handed out as they are (no copy of intermediates).
        """
        leaves = self.leaf_arrays(values) + [values[slot] for slot, _ in self.updates]
        result = []
        for slot in self.fetch_slots:
            value = values[slot]
            if _shares_leaf_storage(value, leaves):
                value = value.copy()
            result.append(value)
        return result

    def leaf_arrays(self, values: list[Any]) -> list[np.ndarray]:
        """The arrays of this run's leaves: Variables' storage, constants, feeds."""
        return [values[i] for i in self.leaf_slots if isinstance(values[i], np.ndarray)]


def _updates_of(order: Sequence[Node], slot: Mapping[Node, int]) -> list[tuple[int, Variable]]:
    """(slot of the new value, Variable) for each assign node of a plan.  Two updates of
    one Variable in one run are refused: which one wins would be arbitrary."""
    updates: list[tuple[int, Variable]] = []
    seen: dict[int, Node] = {}
    for node in order:
        if isinstance(node, Operation) and node.op.name == "assign":
            variable = node.inputs[0]
            assert isinstance(variable, Variable)
            other = seen.setdefault(id(variable._state), node)
            if other is not node:
                raise ValueError(
                    f"one run would update Variable {variable.name!r} twice ({other.name!r} "
                    f"and {node.name!r}), and which value wins would be arbitrary; fetch one "
                    f"of them per run, or combine both changes into one assign"
                )
            updates.append((slot[node], variable))
    return updates


def without_updates(nodes: Sequence[Node]) -> list[Node]:
    """``nodes`` (in topological order) minus the updates and what depends on them:
    a run of the whole graph computes every value but changes no Variable."""
    updating: set[Node] = set()
    for node in nodes:
        if isinstance(node, Operation) and (
            node.op.stateful or any(i in updating for i in node.inputs)
        ):
            updating.add(node)
    return [n for n in nodes if n not in updating] if updating else list(nodes)


def _shares_leaf_storage(value: Any, leaves: Sequence[np.ndarray]) -> bool:
    """``value`` is a leaf's array or a view of one (a fresh result has ``base`` None)."""
    return isinstance(value, np.ndarray) and any(
        value is leaf or (value.base is not None and np.may_share_memory(value, leaf))
        for leaf in leaves
    )


def _read_only_if_view(value: Any, leaves: Sequence[np.ndarray]) -> Any:
    """A node's kept value that views a leaf (``w.reshape(...)``) becomes a read-only
    view, so writing to ``node.value`` cannot change a Variable, constant or feed."""
    if _shares_leaf_storage(value, leaves):
        value = value.view()
        value.flags.writeable = False
    return value


class NumericsError(FloatingPointError):
    """``check_numerics`` found NaN or inf (raised as is, never re-wrapped)."""


def check_finite(value: Any, node: Node, what: str = "value", during: str = "") -> None:
    """Raise :class:`NumericsError` naming ``node``, its op and build line if ``value``
    holds NaN or inf."""
    array = np.asarray(value)
    if array.dtype.kind not in "fc" or np.isfinite(array).all():
        return
    nans = int(np.count_nonzero(np.isnan(array)))
    infs = int(np.count_nonzero(np.isinf(array)))
    raise NumericsError(
        f"check_numerics: the {what} of node {node.name!r} ({node.op_name}) has {nans} NaN and "
        f"{infs} inf of {array.size} element(s){during}; it was "
        f"{describe_site(getattr(node, 'built_at', None))}"
    )


def shape_of(value: Any) -> tuple | None:
    """``np.shape(value)``, without its overhead for arrays and numpy scalars; None for
    a value that is no array (the tuple of a cond or loop, a group's None)."""
    try:
        return value.shape
    except AttributeError:
        return None if isinstance(value, tuple) or value is None else np.shape(value)


# -------------------------------------------------------------------------- graph.forward
def requires_grad_nodes(graph: Graph, within: Iterable[Node] | None = None) -> set[Node]:
    """Nodes a gradient flows through: trainable Variables, retained nodes, and what they feed.

    ``within``, if given, is a topologically ordered part of the graph closed under
    inputs (such as a plan's ``order``): only it is scanned.
    """
    result: set[Node] = set()
    add = result.add
    for node in graph.nodes if within is None else within:
        if (isinstance(node, Variable) and node.trainable) or node.retains_grad:
            add(node)
        elif isinstance(node, Operation) and node.op.differentiable:
            for i in node.inputs:
                if i in result:
                    add(node)
                    break
    return result


def kept_for_backward(graph: Graph, order: Sequence[Node]) -> set[Node]:
    """Values a numeric ``backward`` will read: what each differentiable op ``saves``."""
    grad_nodes = requires_grad_nodes(graph, order)
    keep: set[Node] = set()
    for node in order:
        if node in grad_nodes and isinstance(node, Operation):
            op = node.op
            if op.saves:  # most ops save nothing: skip them quickly
                keep.update(inp for i, inp in enumerate(node.inputs) if op.saves_input(i))
                if op.saves_out:
                    keep.add(node)
    return keep


def run_forward(
    graph: Graph,
    feeds: Mapping | None,
    named: Mapping[str, Any],
    fetches: Sequence | None,
    free_intermediates: bool | None,
    check_numerics: bool = False,
) -> list | None:
    fed = collect_feeds(graph, feeds, named)
    if fetches is None:
        targets = without_updates(graph.nodes)
        free = bool(free_intermediates)  # whole-graph runs keep every value unless asked
    else:
        targets = [graph.resolve(f) for f in fetches]
        free = True if free_intermediates is None else free_intermediates
    placeholders = list(fed)
    order = targets if fetches is None else topological_order(graph, targets)
    keep = kept_for_backward(graph, order) if free else ()
    plan = Plan(graph, targets, placeholders, keep=keep, free=free, order=order)
    shapes: dict[Node, tuple] = {}
    values = plan.run([fed[p] for p in placeholders], shapes, check_numerics)
    for node in graph.nodes:
        if isinstance(node, (Operation, Placeholder)):
            node._value = None
    leaves = plan.leaf_arrays(values)
    for node, value in zip(plan.order, values):
        if isinstance(node, Operation):
            node._value = _read_only_if_view(value, leaves)
        elif isinstance(node, Placeholder):
            node._value = value
    graph.last_run = RunState(
        shapes,
        {node: value for node, value in zip(plan.order, values) if isinstance(node, Variable)},
    )
    return None if fetches is None else plan.fetched(values)


# -------------------------------------------------------------------------- compile
class CompiledFunction:
    """``f(*arrays) -> [arrays]``: a precomputed plan over a (possibly optimised) graph.

    Attributes: ``graph`` (what runs), ``report`` (optimisation report or None),
    ``inputs`` / ``outputs`` (nodes of ``graph``; an input may be None when the
    outputs do not need it), ``plan``.
    """

    def __init__(
        self,
        graph: Graph,
        inputs: Sequence[Placeholder | None],
        outputs: Sequence[Node],
        report: Any = None,
        check_numerics: bool = False,
        updates: Sequence[Node] = (),
    ) -> None:
        self.graph = graph
        self.check_numerics = check_numerics
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.updates = list(updates)  # assign nodes run by every call, not returned
        self.report = report
        used = [p for p in self.inputs if p is not None]
        self.plan = Plan(graph, self.outputs + self.updates, used, free=True)
        # An input the outputs do not need is accepted and ignored (placeholder None).
        self._checks = [
            (p, None, None, False)
            if p is None
            else (p, p.dtype, p.shape, p.shape is not None and None not in p.shape)
            for p in self.inputs
        ]

    def _convert(self, arrays: Sequence[Any]) -> list[Any]:
        if len(arrays) != len(self._checks):
            names = ", ".join(c[0].name if c[0] is not None else "(unused)" for c in self._checks)
            raise TypeError(
                f"this compiled function takes {len(self._checks)} input(s) "
                f"({names}) but got {len(arrays)}"
            )
        converted = []
        for value, (placeholder, dtype, shape, exact) in zip(arrays, self._checks):
            if placeholder is None:
                continue
            if (
                type(value) is np.ndarray
                and value.dtype == dtype
                and (value.shape == shape if exact else _shape_matches(shape, value.shape))
            ):
                converted.append(value)  # the common case: no conversion, one comparison
            else:
                converted.append(check_feed(placeholder, value))
        return converted

    def __call__(self, *arrays: Any) -> list[np.ndarray]:
        feeds = self._convert(arrays)
        values = self.plan.run(feeds, check_numerics=self.check_numerics)
        # numpy reduces to scalars (np.float64); callers get arrays, 0-d or not, always.
        return [as_result(v) for v in self.plan.fetched(values)[: len(self.outputs)]]

    def listing(self) -> str:
        """The plan as text: the leaves, then every step in the order it runs, with the
        values freed right after it (the memory plan); ``return`` names the outputs.

        >>> import numpy as np, naivegraph.static as ns
        >>> with ns.Graph("square") as g:
        ...     x = ns.placeholder("x", shape=(3,), dtype=np.float64)
        ...     y = ((x * x) + x).sum()
        >>> print(g.compile([x], [y], optimize=False).listing())
        compiled (%x) -> (%sum_1), 3 steps on graph square:
              %x = placeholder        : (3,) float64
            1 %mul_1 = mul %x %x      : (3,) float64
            2 %add_1 = add %mul_1 %x  : (3,) float64  free %mul_1
            3 %sum_1 = sum %add_1     : () float64  free %add_1
          return %sum_1
        """
        from . import session  # above this module: imported when it runs

        return session.plan_listing(self)

    def __repr__(self) -> str:
        updates = f", updates {', '.join(u.name for u in self.updates)}" if self.updates else ""
        return (
            f"<CompiledFunction {len(self.plan.steps)} steps: "
            f"({', '.join(p.name for p in self.inputs if p is not None)}) -> "
            f"({', '.join(o.name for o in self.outputs)}){updates}>"
        )


def as_result(value: Any) -> Any:
    """A fetched value as callers get it: an array (numpy reduces to scalars such as
    np.float64), or None for a node that has no value (a group of updates)."""
    return None if value is None else np.asarray(value)
