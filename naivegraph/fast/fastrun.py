"""The fast layer of static mode: a compiled function's plan as straight-line Python.

:class:`~naivegraph.static.executor.Plan` runs a plan as a loop over a list of slots
(readable: one line per idea).  With the fast layer on (``naivegraph.fast``; off with
``NAIVEGRAPH_FAST=0`` or ``fast.disabled()``), a :class:`CompiledFunction` instead runs
the plan through a :class:`Runner`, which writes one Python function per plan, one
line per step, and ``exec``-s it once.  The results are the same arrays, bit for bit:
each line makes the numpy call the op table's forward makes on the same inputs; only
the bookkeeping around the calls changes.  ``runner_of(f).source`` shows the
generated code (``runner_of(f).source``).  The tricks, which share that one function:

- ``one errstate``: the unwrapped forwards run inside one ``np.errstate`` per run
  instead of one per op (entering one costs more than a small op's arithmetic).
- ``locals, not a slot list``: values live in local variables, released with ``del``
  after their last reader (the readable plan's memory planning); no argument lists.
- ``leaf checks by identity``: a result that views no array (``base is None``) shares
  no storage with a leaf unless it *is* one: one ``id`` lookup, not
  ``np.may_share_memory`` against every leaf.
- ``failures located by line``: a failing step is found from the traceback's line of
  the generated function and re-raised as the readable plan words it.
- ``in-place elementwise``: a ufunc step whose input dies there writes into that
  input's buffer (``out=``) when, at run time, the buffer has the result's shape and
  dtype, owns its memory and nothing else refers to it (``sys.getrefcount``).
- ``recycled update buffers``: the array a Variable update leaves unused takes the next
  run's matrix product of its shape and dtype (``np.matmul(..., out=)``), so a training
  step allocates no large array (glibc's malloc often returns freed large arrays to the
  system, and allocating them anew costs page faults).
- ``direct lines``: what the op table's forwards work out at every run (torch's
  promotion, a mean's count, ``sum_to``'s axes) is known when a plan is compiled for
  the values :class:`Known` tracks from the leaves (array or scalar, dtype, shape);
  where the facts hold, the line makes the forward's numpy call itself, and a function
  whose every result comes from such a line returns them without the leaf checks.

Plans longer than :data:`MAX_STEPS` run on the readable path (compiling a function of
a million lines costs more than it saves).  What each trick saves:
``benchmarks/README.md``, "The straight-line runner" and "The fast layer, module by
module".
"""

from __future__ import annotations

import functools
import math
import operator
import sys
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..ops.core import OPS, promoted, quiet, result_type
from ..ops.shapes import normalize_dims
from ..static.executor import CompiledFunction, _shares_leaf_storage
from . import tricks as fast

#: Longest plan written as one function.
MAX_STEPS = 20_000

_SILENT_CODE = quiet(lambda: None).__code__  # the wrapper every op table forward has


def unquiet(fn: Callable) -> Callable:
    """``fn`` without its ``quiet`` wrapper (the runner sets errstate once per run)."""
    if isinstance(fn, functools.partial):  # a forward with attributes bound
        inner = unquiet(fn.func)
        return fn if inner is fn.func else functools.partial(inner, *fn.args, **fn.keywords)
    if getattr(fn, "__code__", None) is _SILENT_CODE:
        return fn.__wrapped__  # type: ignore[attr-defined]
    return fn


def _probe(value: object) -> int:
    return sys.getrefcount(value)


def _count_in_runner() -> int:
    """``sys.getrefcount`` of a buffer held by one local of the generated function, as
    :func:`_free_buffer` sees it (the local, the argument, getrefcount's own)."""
    namespace: dict[str, Any] = {"probe": _probe}
    exec("def f():\n    v = object()\n    return probe(v)\n", namespace)
    return namespace["f"]()


_UNSHARED = _count_in_runner()


def _free_buffer(buffer: Any, other: Any, ufunc: Any) -> Any:
    """``buffer`` if the binary ufunc step ``ufunc(buffer, other)`` (or the other way
    round) may write its result into it, else None: the result would have the buffer's
    shape and dtype, and nothing but the dying local refers to the buffer.  ``other`` is
    an array or a Python number (a constant such as a learning rate)."""
    if (
        type(buffer) is np.ndarray
        and buffer.base is None
        and sys.getrefcount(buffer) <= _UNSHARED
        and buffer.flags.writeable
        and _keeps_dtype(ufunc, buffer.dtype)
        and (
            _scalar_keeps_dtype(buffer.dtype, type(other))
            if type(other) in (float, int)
            else type(other) is np.ndarray
            and other.dtype == buffer.dtype
            and (other.shape == buffer.shape or other.ndim == 0)
        )
    ):
        return buffer
    return None


_SCALAR_KEEPS_DTYPE: dict[tuple, bool] = {}


def _scalar_keeps_dtype(dtype: np.dtype, number_type: type) -> bool:
    """Whether an array of ``dtype`` and a Python number of ``number_type`` give
    ``dtype`` (torch's rule, which the forwards follow: ``lr * grad`` stays float32)."""
    key = (dtype, number_type)
    found = _SCALAR_KEEPS_DTYPE.get(key)
    if found is None:
        found = _SCALAR_KEEPS_DTYPE[key] = result_type(np.empty(0, dtype), number_type(1)) == dtype
    return found


def _matmul_recycling(spare: dict, forward: Callable, x: Any, y: Any) -> Any:
    """``forward(x, y)``, the op table's matmul, written into a spare array of the
    result's shape and dtype when one is kept and nothing else refers to it."""
    if (
        type(x) is np.ndarray
        and type(y) is np.ndarray
        and x.ndim == 2
        and y.ndim == 2
        and x.dtype == y.dtype
        and x.shape[1] == y.shape[0]
    ):
        buffer = spare.pop(((x.shape[0], y.shape[1]), x.dtype), None)
        if buffer is not None and fast.is_unshared(buffer):
            return np.matmul(x, y, out=buffer)
    return forward(x, y)


def _keep_spare(spare: dict, old: Any) -> None:
    """Keep a Variable's replaced array for a later run's matrix product."""
    if (
        type(old) is np.ndarray
        and old.base is None
        and old.dtype.isnative  # a product into '>f8' would come back '>f8', not native
        and old.flags.c_contiguous
        and old.flags.writeable
        and old.ndim == 2
        and old.size >= IN_PLACE_MIN_SIZE
    ):
        spare[(old.shape, old.dtype)] = old


_KEEPS_DTYPE: dict[tuple, bool] = {}


def _keeps_dtype(ufunc: Any, dtype: np.dtype) -> bool:
    """Whether ``ufunc`` of two ``dtype`` operands gives ``dtype`` (not so for a comparison,
    nor for a subtraction of booleans, which the forward refuses)."""
    key = (ufunc, dtype)
    found = _KEEPS_DTYPE.get(key)
    if found is None:
        try:
            found = ufunc.resolve_dtypes((dtype, dtype, None))[2] == dtype
        except (TypeError, ValueError):  # no loop for these operands: never in place
            found = False
        _KEEPS_DTYPE[key] = found
    return found


def _owner_ids(arrays: list) -> set[int]:
    """The ids of the arrays and of the arrays owning their memory."""
    ids = {id(a) for a in arrays}
    ids.update(id(a.base) for a in arrays if a.base is not None)
    return ids


_NO_ATTRS: dict = {}  # keyword arguments of every run (none)


#: ``CompiledFunction.__call__`` itself, which :func:`call` replaces
readable_call = CompiledFunction.__call__


def call(self: CompiledFunction, *arrays: Any) -> list[np.ndarray]:
    """``CompiledFunction.__call__`` (the seam it replaces): the plan through its
    :class:`Runner`, or the readable loop for ``check_numerics`` and long plans."""
    if not fast.enabled or self.check_numerics or len(self.plan.steps) > MAX_STEPS:
        return readable_call(self, *arrays)
    return runner_of(self)(self._convert(arrays))


def runner_of(compiled: CompiledFunction) -> Runner:
    """The compiled function's :class:`Runner`, generated at its first fast call."""
    runner = compiled.__dict__.get("_runner")
    if runner is None:
        runner = Runner(compiled.plan, len(compiled.outputs), _shares_leaf_storage)
        compiled._runner = runner  # type: ignore[attr-defined]
    return runner


class Runner:
    """One plan as a generated function; ``runner(feeds)`` -> (outputs, new values)."""

    def __init__(self, plan: Any, n_outputs: int, shares_leaf_storage: Callable) -> None:
        self.plan = plan
        self.n_outputs = n_outputs
        self.shares_leaf_storage = shares_leaf_storage
        self.states = [state for _, state in plan.variables]
        self.constants = [
            v for v in plan.template if isinstance(v, np.ndarray)
        ]  # leaves of every run
        self.update_variables = [variable for _, variable in plan.updates]
        self.spare: dict[tuple, np.ndarray] = {}  # (shape, dtype) -> a replaced array
        self.source, self.function, self.line_step, self.direct = _generate(
            plan, n_outputs, self.spare
        )

    def __call__(self, feeds: Sequence[Any]) -> list[Any]:
        if self.direct:  # the function reads the Variables and returns the results
            try:
                return fast.call_quietly(self.function, feeds, _NO_ATTRS)  # type: ignore[arg-type]
            except Exception as error:
                raise self._located(error) from error
        olds = [state[0] for state in self.states]
        try:
            outputs, news = fast.call_quietly(self.function, (*feeds, *olds), _NO_ATTRS)
        except Exception as error:
            raise self._located(error) from error
        leaves = [a for a in feeds if isinstance(a, np.ndarray)]
        leaves += self.constants
        leaves += [a for a in olds if isinstance(a, np.ndarray)]
        if news:
            self._commit(news, leaves)
            leaves = leaves + list(news)
        return self._fetched(outputs, leaves)

    def _commit(self, news: Sequence[Any], leaves: list) -> None:
        """``Plan._commit``: every new value stored once all steps succeeded."""
        leaf_ids = _owner_ids(leaves)
        for variable, value in zip(self.update_variables, news):
            if self._shares(value, leaves, leaf_ids):
                value = value.copy()
            _keep_spare(self.spare, variable._state[0])
            variable._state[0] = value

    def _fetched(self, outputs: Sequence[Any], leaves: list) -> list[Any]:
        """``Plan.fetched`` then ``as_result``: arrays that no leaf owns or views."""
        leaf_ids = _owner_ids(leaves)
        result: list[Any] = []
        for value in outputs:
            if value is None:
                result.append(None)
                continue
            if self._shares(value, leaves, leaf_ids):
                value = value.copy()
            result.append(np.asarray(value))
        return result

    def _shares(self, value: Any, leaves: list, owners: set) -> bool:
        """``shares_leaf_storage``, decided by identity where it can be: arrays of
        different owners (``base``, which numpy keeps as the owner of the memory) never
        overlap, so only a value whose owner is a leaf's needs the overlap test."""
        if type(value) is np.ndarray:
            owner = value if value.base is None else value.base
            if type(owner) is np.ndarray and owner.base is None and id(owner) not in owners:
                return False
            if value.base is None:
                return True  # the value is a leaf's own array
        return self.shares_leaf_storage(value, leaves)

    def _located(self, error: Exception) -> Exception:
        """The readable plan's error for a failed step: its node named."""
        traceback = error.__traceback__
        step = None
        while traceback is not None:
            if traceback.tb_frame.f_code is self.function.__code__:
                step = self.line_step.get(traceback.tb_lineno)
            traceback = traceback.tb_next
        if step is None:
            return error
        node = self.plan.order[self.plan.steps[step][2]]
        return type(error)(f"while running node {node.name!r} ({node.op_name}): {error}")


#: Arrays smaller than this are not written in place: the checks cost more than the
#: allocation they save.
IN_PLACE_MIN_SIZE = 4096


def _known_small(shape: Any) -> bool:
    """Whether a node's static shape is fully known and below ``IN_PLACE_MIN_SIZE``."""
    if shape is None or None in shape:
        return False
    return math.prod(shape) < IN_PLACE_MIN_SIZE


# ------------------------------------------------------------------ specialised steps
# What a value of the generated function is sure to be, whatever is fed: the facts the
# specialised lines below rest on.  Only leaves (a feed is converted to its placeholder's
# dtype and checked against its shape; a Variable keeps its dtype and shape; a constant
# is its value) and the results of specialised lines are known; every other step's
# result is unknown, so a wrong static inference can never pick a wrong line.
ARRAY = "array"  # an ndarray, never a numpy scalar
NUMPY = "numpy"  # an ndarray or a numpy scalar (what a ufunc gives for 0-d operands)
_NUMERIC = (ARRAY, NUMPY)


class Known(NamedTuple):
    """What a value is sure to be: ``kind`` (ARRAY, NUMPY, or ``int`` / ``float`` for a
    Python number), its dtype (None for a Python number), its shape (None when a size
    or the rank is unknown), and whether this run made it (``fresh``: no leaf owns it,
    it views none, and it is writeable)."""

    kind: Any
    dtype: np.dtype | None
    shape: tuple | None
    fresh: bool


def _full(shape: Any) -> tuple | None:
    """``shape`` as Python ints if every size is known, else None."""
    if shape is None or None in shape:
        return None
    try:
        return tuple(operator.index(s) for s in shape)  # np.int64(2) -> 2: the run's sizes
    except TypeError:  # not a size at all: nothing is known
        return None


def _leaf_known(node: Any, value: Any) -> Known | None:
    """A leaf's facts: a fed placeholder's, a Variable's, or a constant's value's."""
    if value is not None:  # a constant: its value is what every run reads
        if type(value) in (int, float):
            return Known(type(value), None, (), False)
        if type(value) is np.ndarray:
            return Known(ARRAY, value.dtype, value.shape, False)
        return None
    if node.dtype is None:
        return None
    # A feed is converted to its placeholder's dtype and checked against its shape
    # (executor.check_feed); a Variable keeps both (Variable.assign, ops' assign).
    return Known(ARRAY, node.dtype, _full(node.shape), False)


_PROMOTED_CODE = promoted(np.add).__code__  # the op table's promoting binary forwards


def _result_known(dtype: np.dtype, shape: tuple | None) -> Known:
    """A fresh result: a ufunc gives a numpy scalar, not an array, for 0-d operands."""
    kind = ARRAY if shape is not None and len(shape) > 0 else NUMPY
    return Known(kind, dtype, shape, True)


def _binary_known(ufunc: Any, x: Known, y: Known) -> Known | None:
    """The result of ``ufunc(x, y)`` when the op table's promoting forward would call
    exactly that (torch's promotion changes neither operand), else None.

    Both numpy operands of one dtype are passed as they are; so is a Python number
    beside a numpy operand whose dtype torch keeps for it (``x * 0.5``, x float32)."""
    if x.kind in _NUMERIC and y.kind in _NUMERIC:
        if x.dtype is None or x.dtype != y.dtype:
            return None
        operands: tuple = (x.dtype, y.dtype)
    elif x.kind in _NUMERIC and y.kind in (int, float):
        if x.dtype is None or not _scalar_keeps_dtype(x.dtype, y.kind):
            return None
        operands = (x.dtype, y.kind)
    elif y.kind in _NUMERIC and x.kind in (int, float):
        if y.dtype is None or not _scalar_keeps_dtype(y.dtype, x.kind):
            return None
        operands = (x.kind, y.dtype)
    else:
        return None
    try:
        dtype = ufunc.resolve_dtypes((*operands, None))[2]
    except (TypeError, ValueError):  # no loop for these operands: the forward's error
        return None
    if x.shape is None or y.shape is None:
        return Known(NUMPY, dtype, None, True)
    try:
        shape = tuple(np.broadcast_shapes(x.shape, y.shape))
    except ValueError:  # the forward raises its own error when it runs
        return None
    return _result_known(dtype, shape)


def _mean_kernel(fn: Any, x: Known) -> tuple[str, Known] | None:
    """``ops.table._mean`` with its axes and count worked out now: the same reduce and
    the same division by the same integer."""
    attrs = fn.keywords
    dim, keepdim = attrs.get("dim"), attrs.get("keepdim", False)
    if (
        set(attrs) - {"dim", "keepdim"}
        or fn.args
        or x.kind not in _NUMERIC
        or x.dtype is None
        or x.dtype.kind not in "fc"  # integers are summed in int64 first
        or not x.dtype.isnative  # the sum of '>f8' is native float64
        or x.shape is None
        or type(keepdim) is not bool
    ):
        return None
    try:
        axes = normalize_dims(dim, len(x.shape))
    except IndexError:  # the forward raises it when it runs
        return None
    reduced = range(len(x.shape)) if axes is None else axes
    count = math.prod(x.shape[a] for a in reduced)
    if count == 0:  # the forward divides by zero quietly: left to it
        return None
    if keepdim:
        shape = tuple(1 if a in reduced else s for a, s in enumerate(x.shape))
    else:
        shape = tuple(s for a, s in enumerate(x.shape) if a not in reduced)
    return f"add_reduce({{}}, {axes!r}, None, None, {keepdim!r}) / {count}", _result_known(
        x.dtype, shape
    )


def _sum_to_kernel(fn: Any, x: Known) -> tuple[str, Known] | None:
    """``ops.shapes.sum_to`` with its axes worked out now, when it sums something."""
    target = fn.keywords.get("shape")
    if (
        set(fn.keywords) != {"shape"}
        or fn.args
        or x.kind != ARRAY  # sum_to reads np.asarray(x): x itself only for an ndarray
        or x.dtype is None
        or x.dtype.kind not in "fc"
        or not x.dtype.isnative  # the sum of '>f8' is native float64
        or x.shape is None
        or type(target) is not tuple
        or not all(type(s) is int for s in target)
    ):
        return None
    lead = len(x.shape) - len(target)
    if lead < 0:
        return None
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(target) if s == 1 and x.shape[lead + i] != 1
    )
    if not axes:  # x itself, or reshape's own error: left to the forward
        return None
    kept = tuple(1 if a in axes else s for a, s in enumerate(x.shape))
    if math.prod(kept) != math.prod(target):
        return None
    return f"add_reduce({{}}, {axes!r}, None, None, True).reshape({target!r})", Known(
        ARRAY, x.dtype, target, True
    )


def _kernel(fn: Callable, args: list[str], known: dict[str, Known]) -> tuple[str, Known] | None:
    """A line's right-hand side that calls numpy directly, and its result's facts; None
    when not every fact it needs is known (the op table's forward runs instead)."""
    inner = unquiet(fn)
    facts = [known.get(a) for a in args]
    if None in facts:
        return None
    if getattr(inner, "__code__", None) is _PROMOTED_CODE and len(args) == 2:
        ufunc = inner.ufunc  # type: ignore[attr-defined]  # set by ops.core.writes_like
        result = _binary_known(ufunc, facts[0], facts[1])  # type: ignore[arg-type]
        if result is None or ufunc not in _UFUNCS:
            return None
        return f"{_UFUNCS[ufunc]}({args[0]}, {args[1]})", result
    if isinstance(inner, functools.partial) and len(args) == 1:
        for op, kernel in (("mean", _mean_kernel), ("sum_to", _sum_to_kernel)):
            if inner.func is unquiet(OPS[op].forward):
                found = kernel(inner, facts[0])  # type: ignore[arg-type]
                return None if found is None else (found[0].format(args[0]), found[1])
    return None


#: numpy ufuncs a promoting forward may call -> their names in the generated code
_UFUNCS = {
    u: f"np_{u.__name__}"
    for u in (
        np.add,
        np.multiply,
        np.equal,
        np.not_equal,
        np.greater,
        np.greater_equal,
        np.less,
        np.less_equal,
        np.logical_and,
        np.logical_or,
    )
}


def kernel_namespace() -> dict[str, Any]:
    """The names the lines of :func:`_kernel` call."""
    return {"add_reduce": np.add.reduce} | {name: ufunc for ufunc, name in _UFUNCS.items()}


def _generate(plan: Any, n_outputs: int, spare: dict) -> tuple[str, Callable, dict[int, int], bool]:
    """The source of ``run(feeds..., variables...)``, the function, line -> step, and
    whether it returns the results as callers get them (``run(feeds...)`` then reads
    the Variables itself: see :meth:`Runner.__call__`)."""
    namespace: dict[str, Any] = {
        "free_buffer": _free_buffer,
        "ndarray": np.ndarray,
        "matmul_recycling": _matmul_recycling,
        "spare": spare,
        "asarray": np.asarray,
        **kernel_namespace(),
    }
    names: dict[int, str] = {}
    known: dict[str, Known] = {}
    params = []
    for k, slot in enumerate(plan.placeholder_slots):
        if slot is None:  # fed but not needed: accepted and ignored
            params.append(f"unused{k}")
        else:
            names[slot] = f"a{slot}"
            params.append(f"a{slot}")
            _remember(known, names[slot], _leaf_known(plan.order[slot], None))
    for slot, _ in plan.variables:
        names[slot] = f"s{slot}"
        _remember(known, names[slot], _leaf_known(plan.order[slot], None))
    for slot, value in enumerate(plan.template):
        if slot not in names and value is not None:
            names[slot] = f"c{slot}"
            namespace[f"c{slot}"] = value
            _remember(known, names[slot], _leaf_known(plan.order[slot], value))
    lines: list[str] = []  # the body; numbered from 0 until the header is known
    line_step: dict[int, int] = {}

    def call(
        k: int, fn: Callable, args: list[str], out: str, frees: list[str], shape: Any, op: str
    ) -> None:
        """One line computing ``out``; in place into a dying input where allowed."""
        namespace[f"f_{out}"] = unquiet(fn)
        ufunc = getattr(fn, "ufunc", None)
        joined = ", ".join(args)
        dying = [a for a in args if a in frees]
        kernel = _kernel(fn, args, known)
        if op == "matmul" and plan.updates and not _known_small(shape):
            line_step[len(lines)] = k
            lines.append(f"    {out} = matmul_recycling(spare, f_{out}, {joined})")
        elif (
            ufunc is not None
            and len(args) == 2
            and dying
            and args[0] != args[1]
            and not _known_small(shape)
        ):
            namespace[f"u_{out}"] = ufunc
            other = args[1] if dying[0] == args[0] else args[0]
            lines.append(f"    b = free_buffer({dying[0]}, {other}, u_{out})")
            line_step[len(lines)] = k
            # The forward itself, given out=: its own checks (no bool subtraction) hold.
            lines.append(
                f"    {out} = f_{out}({joined}) if b is None else f_{out}({joined}, out=b)"
            )
            lines.append("    b = None")
            if kernel is not None:  # the same facts, but maybe in a dying input's buffer
                _remember(known, out, kernel[1]._replace(fresh=False))
        elif kernel is not None:
            line_step[len(lines)] = k
            lines.append(f"    {out} = {kernel[0]}")
            _remember(known, out, kernel[1])
        else:
            line_step[len(lines)] = k
            lines.append(f"    {out} = f_{out}({joined})")
        if frees:
            lines.append(f"    del {', '.join(frees)}")

    for k, (fn, ins, out, frees) in enumerate(plan.steps):
        names[out] = f"v{out}"
        args = [names[i] for i in ins]
        program = getattr(fn, "program", None)
        if program is None:
            node = plan.order[out]
            call(k, fn, args, names[out], [names[i] for i in frees], node.shape, node.op_name)
            continue
        # A fused chain: its members inline, named v<out>_<index in the chain>.
        members, n_external, result = program
        local = {r: a for r, a in enumerate(args)}
        # An input the plan frees at this step dies at its last reader in the chain, so
        # that member may write in place into it.
        step_frees = [names[i] for i in frees]
        last_reader = {r: m for m, member in enumerate(members) for r in member[2]}
        for m, (member_fn, writer, refs, index, member_frees, reuse) in enumerate(members):
            local[index] = f"v{out}_{index}"
            dead = [local[r] for r in member_frees if r != index]
            for r in dict.fromkeys(refs):
                if r < n_external and local[r] in step_frees and last_reader[r] == m:
                    dead.append(local[r])
                    step_frees.remove(local[r])
            args = [local[r] for r in refs]
            if reuse is None:  # members are elementwise: they keep the chain's shape
                call(k, member_fn, args, local[index], dead, plan.order[out].shape, "member")
                continue
            # The chain's own choice of buffer (passes._fused_program), as it makes it.
            joined = ", ".join(args)
            kernel = _kernel(member_fn, args, known)
            buffer = known.get(local[reuse])
            if (
                kernel is not None
                and kernel[0].startswith("np_")  # a ufunc's call, which takes out=
                and buffer is not None
                and buffer.kind == ARRAY  # an ndarray and this run's own: writeable
                and buffer.fresh
                and (buffer.dtype, buffer.shape) == (kernel[1].dtype, kernel[1].shape)
            ):
                # passes._fused_program's test (an ndarray, writeable) holds: its ufunc
                # call with out=, which the forward makes for these operands.
                line_step[len(lines)] = k
                lines.append(f"    {local[index]} = {kernel[0][:-1]}, out={local[reuse]})")
                _remember(known, local[index], kernel[1])
            else:
                namespace[f"f_{local[index]}"] = unquiet(member_fn)
                namespace[f"w_{local[index]}"] = unquiet(writer)
                lines.append(f"    b = {local[reuse]}")
                line_step[len(lines)] = k
                lines.append(
                    f"    {local[index]} = w_{local[index]}({joined}, out=b) if type(b) is "
                    f"ndarray and b.flags.writeable else f_{local[index]}({joined})"
                )
                lines.append("    b = None")
            if dead:
                lines.append(f"    del {', '.join(dead)}")
        lines.append(f"    v{out} = {local[result]}")
        _remember(known, f"v{out}", known.get(local[result]))
        lines.append(f"    del {', '.join([local[result]] + step_frees)}")
    fetched = [names[s] for s in plan.fetch_slots[:n_outputs]]
    direct = not plan.updates and all(getattr(known.get(name), "fresh", False) for name in fetched)
    if direct:
        # Every result is this run's own array or numpy scalar: no leaf to copy it from;
        # ``as_result`` (np.asarray) is all that is left to do.
        reads = [
            f"    s{slot} = state{slot}[0]"
            for slot, _ in plan.variables  # the Variables' arrays of this run
        ]
        namespace.update({f"state{slot}": state for slot, state in plan.variables})
        results = "".join(f"asarray({name}), " for name in fetched)
        lines.append(f"    return [{results}]")
    else:
        reads = []
        fetches = "".join(f"{name}, " for name in fetched)
        news = "".join(f"{names[s]}, " for s, _ in plan.updates)
        lines.append(f"    return ({fetches}), ({news})")
        params += [f"s{slot}" for slot, _ in plan.variables]
    header = 1 + len(reads)  # the def line, the reads of the Variables
    source = "\n".join([f"def run({', '.join(params)}):", *reads, *lines]) + "\n"
    exec(compile(source, "<naivegraph compiled plan>", "exec"), namespace)
    # + 1: exec numbers lines from 1
    line_step = {line + header + 1: k for line, k in line_step.items()}
    return source, namespace["run"], line_step, direct


def _remember(known: dict[str, Known], name: str, facts: Known | None) -> None:
    if facts is not None:
        known[name] = facts
