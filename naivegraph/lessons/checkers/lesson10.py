"""Checkers of lesson 10: static graphs for real."""

from __future__ import annotations

import numpy as np

import naivegraph.static as ns
from naivegraph.static.executor import topological_order  # what the updates read

from ..checking import (
    Result,
    as_array,
    blank_function,
    call_answer,
    cell_computes,
    checker,
    correct,
    failed,
    is_blank,
    not_done,
    not_yet,
)

UPDATE_ANSWER = """new_w1 = w1.assign(w1 - learning_rate * grad_w1) and the same for w2: an
assign node whose value is computed from the graph's own nodes when the graph runs."""


@checker("10-1", answer=UPDATE_ANSWER)
def check_update_nodes(g, x, y, w1, w2, new_w1, new_w2, learning_rate) -> Result:
    """Two assign nodes applying one gradient-descent step to the lesson's network.

    The learning rate typed in as a number (``1e-6``) instead of ``learning_rate`` is
    accepted: the nodes are built with the notebook's own value, so the checker cannot
    run them with another, and an equal number gives the same step."""
    ex = "10-1"
    if is_blank(new_w1) or is_blank(new_w2):
        return not_done(ex)
    for name, node in (("new_w1", new_w1), ("new_w2", new_w2)):
        if not isinstance(node, ns.Node):
            return failed(ex, f"{name} should be a node of the graph; you gave a "
                              f"{type(node).__name__}.")
    for name, var in (("w1", w1), ("w2", w2)):
        if not isinstance(var, ns.Variable):
            op = getattr(getattr(var, "op", None), "name", None)
            return not_yet(
                ex,
                [f"{name} is no longer the Variable: `{name} -= ...` does not change a "
                 f"Variable of a static graph, it builds a new node ({op or 'an op'}) and "
                 f"binds the name {name} to it, while the Variable keeps its value. Re-run "
                 f"the cell that makes {name} (the graph's cell), so that the name is the "
                 "Variable again: an update of a Variable needs an assign node.",
                 "build each update as a node of its own, from the Variable and its "
                 "gradient node, and keep the names w1 and w2 for the Variables."],
                gave=f"{name} = a {op or type(var).__name__} node, not the Variable",
            )
    for name, node in (("new_w1", new_w1), ("new_w2", new_w2)):
        if isinstance(node, ns.Variable):
            return not_yet(
                ex,
                [f"{name} is a Variable, not an update: given an array (a value computed "
                 "now, outside the graph), assign stores it at once and hands back the "
                 "Variable itself, so there is nothing left to run. Given a node of the "
                 "graph, it adds an update node instead, which applies the step each time a "
                 "run fetches it.",
                 "compute the new value with the graph's own nodes, without running "
                 "anything, and give that node to assign."],
                gave=f"{name} = the Variable {node.name!r}",
            )
    targets = {name: _assigned(node) for name, node in (("new_w1", new_w1), ("new_w2", new_w2))}
    if targets["new_w1"] is not None and targets["new_w1"] is targets["new_w2"]:
        who = targets["new_w1"].name
        return not_yet(
            ex,
            [f"new_w1 and new_w2 both update {who}"
             + (" (they are one and the same node)" if new_w1 is new_w2 else "")
             + ": each weight needs an update node of its own, and the other is left "
             "as it was.",
             "build the second update as you built the first, for the other Variable and "
             "its own gradient node."],
            gave=f"two updates of {who}",
        )
    for name, want, other in (("new_w1", w1, w2), ("new_w2", w2, w1)):
        if targets[name] is other:
            return not_yet(
                ex,
                [f"{name} updates {other.name}: the exercise names each update after its "
                 f"weight, so {name} should update {want.name}, with that weight's own "
                 "gradient node (the training loop below reads them by these names).",
                 "swap them back: each update node assigns to the Variable it is "
                 "named after."],
                gave=f"{name} = an update of {other.name}",
            )
    for name, node in (("new_w1", new_w1), ("new_w2", new_w2)):
        if targets[name] is not None and node.inputs[1:2] == (targets[name],):
            who = targets[name].name
            return not_yet(
                ex,
                [f"{name} assigns {who} its own value: running it leaves the weight "
                 "where it was, so nothing is learned.",
                 "a step of gradient descent moves the weight against its gradient: build "
                 "the new value from the weight, its gradient node and the learning rate."],
                gave=f"{name} = {who} assigned to itself",
            )
        if targets[name] is not None and not _reads_the_feeds(g, node, (x, y)):
            return not_yet(
                ex,
                [f"{name}'s new value reads neither x nor y: whatever batch a run feeds, "
                 "the update moves the weight by the same amount, fixed when the node was "
                 "built (a gradient computed now, by a run or by hand, and put into the "
                 "graph as numbers). A step of gradient descent follows the gradient of "
                 "the batch each run feeds.",
                 "build the new value from the gradient NODE of that weight, which the "
                 "graph computes from the fed batch at every run."],
                gave=f"{name} = an update that ignores the fed batch",
            )
    saved = (w1.value.copy(), w2.value.copy())
    try:
        return _check_two_steps(ex, g, x, y, w1, w2, new_w1, new_w2, learning_rate)
    finally:  # the learner's graph is left as it was
        w1.assign(saved[0])
        w2.assign(saved[1])


def _reads_the_feeds(g, update, feeds) -> bool:
    """Whether the value an assign node stores depends on one of the placeholders
    ``feeds`` (True when the graph cannot be followed: the runs decide)."""
    try:
        return any(n in feeds for n in topological_order(g, [update.inputs[1]]))
    except Exception:  # not followed here: the steps below decide
        return True


def _assigned(node):
    """The Variable an assign node updates, or None for any other node."""
    if getattr(node.op, "name", None) != "assign" or not node.inputs:
        return None
    return node.inputs[0]


def _check_two_steps(ex, g, x, y, w1, w2, new_w1, new_w2, lr) -> Result:
    rng = np.random.default_rng(10)
    dtype = w1.value.dtype  # float32 in the lesson, as its placeholders
    # Inputs 10 times the lesson's data: gradients of 1e6 and more, beyond the lesson's
    # own (about 5e5), so that clipping them shows; a batch of 5 rows, then of 7, so
    # that a step that depends on the batch size shows; then the lesson's own scale and
    # batch (64 rows) and a tenth of it on a large batch, so that a step that depends on
    # the data's scale, or is right only on small batches, shows too.
    batches = [(scale * rng.standard_normal((rows, w1.value.shape[0])).astype(dtype),
                rng.standard_normal((rows, w2.value.shape[1])).astype(dtype))
               for scale, rows in _BATCHES]
    rtol = 1e-9 if dtype == np.float64 else 1e-4  # float32: sums of 1000 rounded terms
    start = (w1.value.copy(), w2.value.copy())
    for step, (xs, ys) in enumerate(batches, 1):  # step 2 also catches a frozen update
        prev = (w1.value.copy(), w2.value.copy())
        want = _sgd_step(w1.value, w2.value, xs, ys, lr)
        ok, _ = call_answer(ex, g.run, [new_w1, new_w2], {x: xs, y: ys})
        if not ok:
            return _
        got = (w1.value, w2.value)
        for name, have, expect, before, was in zip(("w1", "w2"), got, want, start, prev):
            if step == 1 and np.array_equal(have, before) and np.array_equal(expect, before):
                return not_yet(
                    ex,
                    [f"{name}'s gradient is exactly 0 at the value {name} holds now"
                     + (" (only zeros: every ReLU is off)" if not np.any(before) else "")
                     + ", so no step of gradient descent can move it and your update "
                     "cannot be checked: did your cell store a new value in a weight "
                     "after building the update nodes (assign given an array stores it at "
                     "once)?",
                     "leave the weights as the cell above made them: the training loop "
                     "starts them from w1_init and w2_init itself."],
                    gave=f"{name} holding a value where its gradient is 0",
                )
            if step == 1 and np.array_equal(have, before):
                return not_yet(
                    ex,
                    [f"running your nodes left {name} unchanged: a node that only computes "
                     "the new value is not an update.",
                     "the lesson's paragraph on assign says which kind of argument makes "
                     "it add an update node to the graph."],
                )
            # float32 rounds the step's sums: compare to a part of the largest step
            scale = float(np.max(np.abs(expect - was)))
            if not np.allclose(have, expect, rtol=rtol, atol=rtol * max(scale, 1e-3)):
                return not_yet(ex, _step_hints(name, step))
            ratio = _step_ratio(have - was, expect - was)
            if (_BATCHES[step - 1][0] == 10.0 and abs(ratio - 1.0) > 2e-6
                    and _has_control_flow(g, (new_w1, new_w2))):
                return _scaled_step(ex, name, ratio)
    w1.assign(start[0])
    w2.assign(start[1])
    xs, ys = batches[0]
    wrong = _in_float64(ex, g, x, y, (w1, w2), (new_w1, new_w2), xs, ys, lr)
    if wrong is not None:
        return wrong
    return _still_at_zero_gradient(ex, g, x, y, w1, w2, new_w1, new_w2, xs, ys)


# (scale of x, rows): the checker's large data on two small batches, the lesson's data
# and batch size, smaller data on a large batch.
_BATCHES = ((10.0, 5), (10.0, 7), (1.0, 64), (0.1, 300))


def _step_ratio(step: np.ndarray, want: np.ndarray) -> float:
    """How many of the lesson's steps ``step`` is, fitted over every entry.  On the
    large data the step is about 1 while float32 rounds a weight by about 1e-7: the
    roundings, of either sign, average out over the thousands of entries, and a right
    step comes out within 1e-7 of 1 (a step scaled by 1.00001, in a branch of ns.cond
    that the float64 evaluation below cannot follow, does not)."""
    step, want = step.astype(np.float64), want.astype(np.float64)
    norm = float(np.vdot(want, want))
    return float(np.vdot(step, want) / norm) if norm > 0 else 1.0


def _has_control_flow(g, updates) -> bool:
    """Whether the updates' values go through ns.cond or a loop, which the float64
    evaluation below cannot follow (the float32 runs decide, by the step's ratio)."""
    try:
        values_of = [u.inputs[1] for u in updates]
        return any(n.op_name in _CONTROL_FLOW for n in topological_order(g, values_of))
    except Exception:  # not assign nodes: refused below with their own hint
        return False


def _scaled_step(ex: str, name: str, ratio: float) -> Result:
    return not_yet(
        ex,
        [f"{name} moves the right way, but its step is {ratio:.12g} times a step of "
         "gradient descent, not exactly one: the difference shows beyond float32's "
         "rounding. What multiplies the gradient in the lesson's rule?",
         "write exactly the lesson's update rule, with nothing scaled or added."],
        gave=f"a step of {name} {ratio:.12g} times the lesson's",
    )


def _in_float64(ex, g, x, y, weights, updates, xs, ys, lr) -> Result | None:
    """The updates' new values computed again in float64, where float32's rounding
    (about 1e-7 of a weight) hides nothing: a weight decay of lr * 1e-4 (1e-10 of a
    weight) or a step scaled by 1.00001 changes the result there.  With x = 0 and
    y = 0 the step is exactly 0; with the feeds above it is the lesson's step, with
    learning_rate as given or rounded to float32 (a float32 constant is right too)."""
    for name, node in zip(("new_w1", "new_w2"), updates):
        if _assigned(node) is None:
            kind = "a group of updates (an optimizer's step?)" if node.op_name == "group" else (
                f"a {node.op_name} node")
            return not_yet(
                ex,
                [f"running {name} updates the weights, but it is {kind}, not an assign "
                 "node: this exercise writes each weight's update itself, as an assign "
                 "node of that weight (the optimizers that build them come later in the "
                 "lesson).",
                 "give assign the Variable's new value, computed with the graph's nodes."],
                gave=f"{name} = {kind}",
            )
    start = [np.asarray(w.value, dtype=np.float64) for w in weights]
    zero = _values_in_float64(g, x, y, updates, np.zeros_like(xs), np.zeros_like(ys))
    if zero is None:  # an update this evaluation cannot follow: the float32 runs decide
        return None
    for name, have, was in zip(("w1", "w2"), zero, start):
        if not np.array_equal(have, was):
            return _moved_at_zero_gradient(ex, name)
    got = _values_in_float64(g, x, y, updates, xs, ys)
    if got is None:
        return None
    x64, y64 = xs.astype(np.float64), ys.astype(np.float64)
    wants = [_sgd_step(start[0], start[1], x64, y64, rate) for rate in (lr, float(np.float32(lr)))]
    for i, name in enumerate(("w1", "w2")):
        step = got[i] - start[i]
        if any(_same_step(step, want[i] - start[i]) for want in wants):
            continue
        want_step = wants[0][i] - start[i]
        ratio = float(np.vdot(step, want_step) / np.vdot(want_step, want_step))
        if ratio <= 0:
            return not_yet(ex, _step_hints(name, 1))
        return not_yet(
            ex,
            [f"{name} moves the right way, but its step is {ratio:.12g} times a step of "
             "gradient descent, not exactly one: computed in float64 the difference shows, "
             "though float32 rounds most of it away. What multiplies the gradient in the "
             "lesson's rule?",
             "write exactly the lesson's update rule, with nothing scaled or added."],
            gave=f"a step of {name} {ratio:.12g} times the lesson's",
        )
    return None


def _same_step(step: np.ndarray, want: np.ndarray) -> bool:
    """Equal up to float64's rounding of w - step (1e-13 of the step at most here)."""
    scale = float(np.max(np.abs(want)))
    return bool(np.allclose(step, want, rtol=1e-10, atol=1e-10 * scale))


_CONTROL_FLOW = ("cond", "while_loop", "while_loop_grad")


def _values_in_float64(g, x, y, updates, xs, ys) -> list | None:
    """The new values the assign nodes ``updates`` would store, computed with the
    feeds and every Variable in float64 (nothing is stored); None when the graph holds
    something this plain evaluation cannot run (another placeholder, control flow)."""
    values_of = [u.inputs[1] for u in updates]
    feeds = {x: xs.astype(np.float64), y: ys.astype(np.float64)}
    values: dict = {}
    try:
        for node in topological_order(g, values_of):
            if node.op_name in _CONTROL_FLOW:  # its branches run in their own dtype
                return None
            if isinstance(node, ns.Placeholder):
                values[node] = feeds[node]
            elif isinstance(node, ns.Variable):
                values[node] = np.asarray(node.value, dtype=np.float64)
            elif isinstance(node, ns.Constant):
                values[node] = node.value
            else:
                inputs = [values[i] for i in node.inputs]
                args = (inputs,) if node.op.variadic else tuple(inputs)
                values[node] = node.op.forward(*args, **node.attrs)
        return [np.asarray(values[v], dtype=np.float64) for v in values_of]
    except Exception:  # any node this cannot follow: the float32 runs decide
        return None


def _still_at_zero_gradient(ex, g, x, y, w1, w2, new_w1, new_w2, xs, ys) -> Result:
    """With x = 0 and y = 0 every gradient is exactly 0, so one step leaves the weights
    exactly as they were: an update that adds anything else (a weight decay, a tiny
    multiple of the weight, too small for the tolerance above) moves them."""
    before = (w1.value.copy(), w2.value.copy())
    ok, _ = call_answer(ex, g.run, [new_w1, new_w2], {x: np.zeros_like(xs), y: np.zeros_like(ys)})
    if not ok:
        return _
    for name, have, was in zip(("w1", "w2"), (w1.value, w2.value), before):
        if not np.array_equal(have, was):
            return _moved_at_zero_gradient(ex, name)
    return correct(ex, "both updates are nodes; one g.run applies them together.")


def _moved_at_zero_gradient(ex, name: str) -> Result:
    return not_yet(
        ex,
        [f"with x = 0 and y = 0 every gradient is exactly 0, so a step of gradient "
         f"descent leaves the weights as they are; your update still moved {name} "
         "(perhaps by very little: float32 may round it away, float64 does not): it adds "
         "something besides the gradient step (a weight decay?).",
         "write exactly the lesson's update rule, with nothing added to it."],
        gave=f"an update that moves {name} when its gradient is 0",
    )


def _step_hints(name: str, step: int) -> list[str]:
    if step >= 2:
        scale, rows = _BATCHES[step - 1]
        whose = "the lesson" if scale == 1.0 else "a tenth of the lesson"
        data = "" if scale == 10.0 else f", x of {whose}'s scale"
        first = (f"the first step of {name} was right (on a batch of 5 rows), step {step} "
                 f"was not (on a batch of {rows} rows{data}, from the weights the steps "
                 "before left): does your update read a value fixed when the node was "
                 "built (like w1.value; use the Variable node itself), or depend on the "
                 "batch size or on the data's scale? The lesson's rule does neither.")
    else:
        first = (f"{name} moved, but not by one step of gradient descent: which way should "
                 "it move, and how far?")
    return [first, "write the lesson's update rule with the graph's nodes: the Variable, "
                   "learning_rate and the gradient node of that weight."]


def _sgd_step(w1, w2, x, y, lr):
    """One gradient-descent step of sum((relu(x w1) w2 - y)^2), by hand."""
    h = x @ w1
    relu = np.maximum(h, 0.0)
    d_pred = 2.0 * (relu @ w2 - y)
    grad_w2 = relu.T @ d_pred
    grad_w1 = x.T @ ((d_pred @ w2.T) * (h > 0))
    return w1 - lr * grad_w1, w2 - lr * grad_w2


RUN_ANSWER = """(2.0, 2.0, 3.0): in the first run both fetches read v from before the run
(v = 1), so double gives 2 and plus_one gives 2; the update is stored at the end, so the
second run reads v = 2 and gives 3."""


@checker("10-2", answer=RUN_ANSWER, predicts=True)
def check_run_semantics(predicted) -> Result:
    """first[0], first[1], second of the lesson's two runs."""
    ex = "10-2"
    if is_blank(predicted):
        return not_done(ex)
    got = _numbers(predicted, 3)
    if got is None:
        return failed(ex, "answer with three numbers: first[0], first[1], second.")
    ran = _runs_instead_of_predicting(ex, ("run", "compile"), "the snippet's graph",
                                      "what a read inside a run sees, and when an update "
                                      "is stored.", reads=("value",))
    if ran is not None:
        return ran
    if got == [2.0, 2.0, 3.0]:  # whole numbers: 2.00001 is not 2
        return correct(ex, "reads see the value from before the run; updates land at its end.")
    if not all(v.is_integer() for v in got):
        hint = ("v starts at 1.0 and each run adds or doubles whole numbers: every value "
                "fetched is a whole number, exactly.")
    elif got[1] == 3.0:
        hint = ("plus_one ran in the same run as the update: which value of v does a read "
                "inside a run see?")
    elif got[0] != 2.0:
        hint = ("first[0] is what fetching the assign node gives: the value it stores, "
                "computed from the v this run reads.")
    else:
        hint = "after the first run, is the update stored? Then what does v + 1 give?"
    return not_yet(ex, [hint, "every read in one run sees the value from before the run; "
                              "all updates are stored together when it ends."],
                   gave=str(tuple(got)))


def _runs_instead_of_predicting(ex: str, calls: tuple, what: str, think: str,
                                reads: tuple = ()) -> Result | None:
    """A refusal for a notebook cell that runs ``what`` (it looks up a name of ``calls``,
    or reads an attribute of ``reads``) to read the answer off, where the exercise asks
    for a prediction; None otherwise.  The cell's values are followed back through the
    learner's earlier cells (``cell_computes``)."""
    ran = cell_computes(calls=calls, reads=reads)
    if not ran:
        return None
    return not_yet(
        ex,
        [f"your cell runs {what} instead of predicting: it uses {ran}. The exercise asks "
         "you to PREDICT the answer without running anything, and to type it; the cell "
         "after the check runs the code for you once the check passes.",
         f"work it out from the lesson's rule: {think}"],
        gave=f"a cell that uses {ran}",
    )


def _numbers(answer, count: int) -> list[float] | None:
    """``answer`` as ``count`` floats, or None when it is not that many numbers (a
    string such as "223" is not three numbers, though float() reads each character)."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__len__"):
        return None
    if len(answer) != count:
        return None
    values = []
    for v in answer:
        if isinstance(v, (str, bytes, bool, np.bool_)):
            return None
        try:
            values.append(float(v))
        except (TypeError, ValueError):
            return None
    return values


POLY_ANSWER = """body returns (p + 1.0, y + e * xp ** p): the next exponent, and y with one
more term; the loop runs while p < top, so top - 4 extra terms."""


@checker("10-3", answer=POLY_ANSWER)
def check_poly_loop(graph, more, body, base, xp, top, weights) -> Result:
    """The while_loop polynomial equals the dynamic loop for 0, 1 and 2 extra terms."""
    ex = "10-3"
    bad = blank_function(ex, body)
    if bad is not None:
        return bad
    if _returns_blank(graph, more, body, base):  # the cell's source was not at hand
        return not_done(ex)
    if _swapped_builds(graph, more, body, base):
        return not_yet(
            ex,
            ["body returns the new loop variables in the order of loop_vars, [p, y]: "
             "yours come swapped, so while_loop finds y where p belongs.",
             "return the next exponent first, then the next running sum."],
            gave="the loop variables swapped",
        )
    fixed = _term_without_placeholder(graph, body, xp)
    if fixed is not None:
        return not_yet(
            ex,
            [f"the term your body adds does not depend on the placeholder xp: {fixed} "
             "The loop must read x from xp, which each run feeds.",
             "write the term with the graph's nodes e and xp, and the loop variable p."],
            gave="a term that uses no placeholder",
        )
    if not _p_grows(graph, body, xp):
        return not_yet(
            ex,
            ["your body hands the loop back the exponent p as it got it, so the "
             "condition never turns false and only maximum_iterations ends the loop. The "
             "loop stops once p reaches top: p must grow by one per pass, both to stop "
             "and to give each pass's term the next power of x.",
             "the first loop variable body returns is the exponent of the next pass."],
            gave="a body whose p never grows",
        )
    ok, poly_y = call_answer(ex, _build_loop, graph, more, body, base)
    if not ok:
        return poly_y
    e_node = weights[-1]

    def lessons_body(p, y):  # the lesson's rule, to compare with in the same precision
        return p + 1.0, y + e_node * xp**p

    with graph:
        _, want_y = ns.while_loop(more, lessons_body, [4.0, base], maximum_iterations=10)
        grads = ns.gradients(ns.sum(poly_y), [e_node, xp])
        want_grads = ns.gradients(ns.sum(want_y), [e_node, xp])
    wrong = _compare_poly(ex, graph, (poly_y, grads), (want_y, want_grads), xp, top, weights)
    if wrong is not None:
        return wrong
    # Again with another value of e: a body that copied e's number, not the node, fails.
    saved = np.array(e_node.value, copy=True)
    e_node.assign(saved + 1.0)
    try:
        wrong = _compare_poly(ex, graph, (poly_y, grads), (want_y, want_grads), xp, top,
                              weights, changed_e=True)
    finally:
        e_node.assign(saved)
    if wrong is not None:
        return wrong
    return correct(ex, "the loop is a node: its count is decided by top when the graph runs.")


_COPIED_E = ("right while e keeps its value, wrong once e changes: does your body use a "
             "number copied from e instead of the node e? Training could never change it.")


def _p_grows(graph, body, xp) -> bool:
    """Whether the body, called once on stand-in nodes, changes p = 4 (True when it
    cannot run this way: the loop's own run decides; a p that grows by another step is
    told by the values the loop gives)."""
    size = len(graph.nodes)
    try:
        with graph:
            p_in = ns.placeholder(graph._unique_name("p_probe"), shape=())
            y_in = ns.placeholder(graph._unique_name("y_probe"), shape=(None,))
            new_p = body(p_in, y_in)[0]
        if not isinstance(new_p, ns.Node):
            return True
        got = graph.run(new_p, {p_in: np.float32(4.0), y_in: np.zeros(3, np.float32),
                                xp: np.ones(3, np.float32)})
    except Exception:  # a body that cannot run this way: the loop's own run decides
        return True
    finally:  # the stand-ins and what the body built on them leave the learner's graph
        graph._rollback(size)
    return not bool(np.all(np.asarray(got) == 4.0))


def _term_without_placeholder(graph, body, xp) -> str | None:
    """What the body's new running sum reads instead of the placeholder xp, when it does
    not read xp at all (``e * xs_data ** p``: a data array, fixed when the graph was
    built), or None.  The body is called once on stand-in nodes, outside any loop."""
    size = len(graph.nodes)
    try:
        with graph:
            p_in = ns.placeholder(graph._unique_name("p_probe"), shape=())
            y_in = ns.placeholder(graph._unique_name("y_probe"), shape=(None,))
            out = body(p_in, y_in)
            new_y = out[1]
        if not isinstance(new_y, ns.Node):
            return None
        read = list(topological_order(graph, [new_y]))
    except Exception:  # a body that cannot run this way: the loop's own run decides
        return None
    finally:  # the stand-ins and what the body built on them leave the learner's graph
        graph._rollback(size)
    if xp in read or y_in not in read:
        return None
    arrays = [n for n in read if isinstance(n, ns.Constant) and np.ndim(n.value) >= 1]
    if arrays:
        return (f"it reads an array of {np.size(arrays[0].value)} numbers fixed when the "
                "graph was built (the data array, xs_data?) instead of the placeholder.")
    return "no x at all appears in it."


def _compare_poly(ex, graph, got_nodes, want_nodes, xp, top, weights,
                  changed_e=False) -> Result | None:
    """The loop's values, and its gradients with respect to e and x, for 0 to 10 extra
    terms (and top = 3, no extra term), for x from -3 to 3, against the lesson's body run
    in the same graph and precision: equal to a few float32 roundings."""
    a, b, c, d, e = (float(as_array(w.value)) for w in weights)
    xs = np.linspace(-3.0, 3.0, 13)  # the lesson's x (up to 2.0) and beyond
    for t in range(3, 15):  # every top maximum_iterations=10 allows (4 + 10 terms)
        feed = {xp: xs, top: np.array(float(t))}
        fetched = [got_nodes[0], *(n for n in got_nodes[1] if n is not None)]
        ok, values = call_answer(ex, graph.run, fetched, feed)
        if not ok:
            return values
        want = graph.run([want_nodes[0], *want_nodes[1]], feed)
        rest = iter(values[1:])  # a gradient None (no path to e or x) is 0
        got = [values[0], *(np.zeros_like(w) if n is None else next(rest)
                            for n, w in zip(got_nodes[1], want[1:]))]
        if _close(got[0], want[0]):
            if not changed_e and not all(_close(g_, w) for g_, w in zip(got[1:], want[1:])):
                which = "e" if not _close(got[1], want[1]) else "x"
                if which == "e" and got_nodes[1][0] is None:  # no path to e at all
                    return not_yet(ex, [_COPIED_E])
                k = 1 if which == "e" else 2
                if np.allclose(got[k], want[k], rtol=1e-4, atol=0):
                    return not_yet(
                        ex,
                        [f"with top = {t} the values look right (float32 rounds the "
                         f"difference away), but the gradient with respect to {which} is "
                         "close to the polynomial's without being equal, beyond float32's "
                         "rounding: is the term scaled by a factor near 1, or something "
                         "tiny added to it?",
                         "add exactly the term of the dynamic loop, with nothing scaled "
                         "or added."],
                        gave=f"a loop whose gradient with respect to {which} is off by a hair",
                    )
                return not_yet(
                    ex,
                    [f"with top = {t} the values are right but the gradient with respect "
                     f"to {which} is not the polynomial's: part of your term is not "
                     "differentiated as written (a floor, a rounding, a comparison, a "
                     "stopped gradient?).",
                     "add the term e * x**p itself, so that ns.gradients can follow it."],
                    gave=f"a loop whose gradient with respect to {which} is off",
                )
            continue
        got = got[0]
        if changed_e:
            return not_yet(ex, [_COPIED_E])
        ok, later = call_answer(ex, graph.run, got_nodes[0],
                                {xp: xs, top: np.array(float(t + 1))})
        return not_yet(ex, _poly_hints(t, got, xs, a, b, c, d, e,
                                       later=np.asarray(later) if ok else None))
    return None


def _close(got, want) -> bool:
    """Equal up to a few roundings of ``want``'s dtype (float32 here): a term scaled by
    1.000001 is not."""
    want = np.asarray(want)
    got = np.asarray(got)
    if got.shape != want.shape:
        return False
    eps = float(np.finfo(want.dtype if want.dtype.kind == "f" else np.float64).eps)
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    return bool(np.all(np.abs(got - want) <= 4 * eps * np.maximum(np.abs(want), scale * 1e-3)))


def _build_loop(graph, more, body, base):
    with graph:
        _, y = ns.while_loop(more, body, [4.0, base], maximum_iterations=10)
    return y


def _returns_blank(graph, more, body, base) -> bool:
    """Whether ``body`` hands while_loop a ``...`` still: the blank left in the template,
    caught even where the cell's source cannot be read (code run by exec)."""
    returned = []

    def recorded(p, y):
        out = body(p, y)
        returned.append(out)
        return out

    try:
        _build_loop(graph, more, recorded, base)
    except Exception:  # while_loop refuses a blank; any other error is reported later
        pass
    return any(is_blank(out, none_is_blank=False) for out in returned)


def _swapped_builds(graph, more, body, base) -> bool:
    """Whether ``body`` fails as given but builds with its two results swapped."""
    try:
        _build_loop(graph, more, body, base)
        return False
    except Exception:  # the learner's loop refused: maybe its results are swapped
        pass

    def swapped(p, y):
        first, second = body(p, y)
        return second, first

    try:
        _build_loop(graph, more, swapped, base)
    except Exception:  # another mistake: the build's own error is reported
        return False
    return True


def _poly_hints(t, got, xs, a, b, c, d, e, later=None) -> list[str]:
    """The hint for the loop's values ``got`` at top = ``t`` (``later``: at top = t + 1,
    which tells an exponent read off top from one a pass too high: at top = 5 both add
    e * x ** 5 alone)."""
    base = a + b * xs + c * xs**2 + d * xs**3
    extra = range(4, t)
    by_top = [base + (k - 4) * e * xs**k for k in (t, t + 1)]
    if np.allclose(got, base + sum(e * xs**p for p in extra), rtol=1e-4, atol=0):
        first = (f"with top = {t} your result is close to the polynomial but not equal to "
                 "it, beyond float32's rounding: is the term scaled by a factor near 1, or "
                 "something tiny added to it?")
    elif np.allclose(got, base + 10 * e * xs**4):
        first = ("your loop ran until maximum_iterations: does body return the exponent one "
                 "higher?")
    elif np.allclose(got, base + (t - 4) * e * xs**4):
        first = "every extra term uses x to the 4th: the exponent is the loop variable p."
    elif t > 4 and np.allclose(got, by_top[0]) and (
        later is None or np.allclose(later, by_top[1])
    ):
        now = "your one extra term is" if t == 5 else f"all {t - 4} of your extra terms are"
        first = (f"every extra term of yours has the same exponent, top: with top = {t} "
                 f"{now} x to the {t}th, with top = {t + 1} all {t - 3} are x to the "
                 f"{t + 1}th. top is where the loop stops; each pass adds the power of its "
                 "own pass, one higher than the pass before.")
    elif np.allclose(got, base + sum(e * xs ** (p + 1) for p in range(4, t))):
        first = ("your exponents are one too high: on the first pass p holds its starting "
                 "value, and that is the exponent of the first extra term.")
    elif np.allclose(got, base + sum(e * xs ** (p - 1) for p in range(4, t))):
        first = ("your exponents are one too low: on the first pass p holds its starting "
                 "value, and that is the exponent of the first extra term, as it is.")
    elif np.allclose(got, e * xs ** (t - 1)):
        first = ("with top = {t} only the last term is left: y is the running sum, so the "
                 "body adds the new term to it.").format(t=t)
    elif np.allclose(got, base - sum(e * xs**p for p in extra)):
        first = ("the extra terms come out with the wrong sign: the polynomial ADDS each "
                 "term to the running sum.")
    elif any(np.allclose(got, base + sum(w * xs**p for p in extra)) for w in (a, b, c, d, 1.0)):
        first = ("the extra terms have the right powers but the wrong coefficient: which "
                 "weight multiplies every term beyond the cubic, in the dynamic loop above?")
    elif np.allclose(got, base + sum(e * xs**p for p in range(4, t, 2))):
        first = ("your loop skips terms: the exponent must go up by exactly one per pass, "
                 "so that every power below top gets its term.")
    else:
        first = (f"with top = {t} the result is off: compare the term your body adds on "
                 "each pass with the term the dynamic loop above adds.")
    return [first, "one pass of the dynamic loop's for is one call of body: what does "
                   "that pass change, p and y?"]


TRACE_ANSWER = """(1, 2): the first call has the traced shape, so the graph built when
extra_terms was 1 runs; a new shape traces again, reading extra_terms = 2 now."""


@checker("10-4", answer=TRACE_ANSWER, predicts=True)
def check_trace_trap(terms) -> Result:
    """Extra terms used by the traced function for the traced shape and a new one."""
    ex = "10-4"
    if is_blank(terms):
        return not_done(ex)
    numbers = _numbers(terms, 2)
    if numbers is None or not all(v.is_integer() for v in numbers):
        return failed(ex, "answer with two integers: the terms of the first call, then of "
                          "the second.")
    ran = _runs_instead_of_predicting(ex, ("trace", "traced"), "the traced function",
                                      "what extra_terms holds each time the Python "
                                      "function runs, and when a call traces again.")
    if ran is not None:
        return ran
    got = tuple(int(v) for v in numbers)
    if got == (1, 2):
        return correct(ex, "Python ran at trace time; a new shape traced again and saw 2.")
    if got[0] != 1:
        hint = ("the first call has the shape the function was traced with: no new trace. "
                "What was extra_terms when the trace ran?")
    else:
        hint = ("a new input shape makes ns.trace run the Python function again. What does "
                "it read now?")
    return not_yet(ex, [hint, "the loop ran in Python while tracing: its count is whatever "
                              "extra_terms held at that moment."], gave=str(got))
