"""The checkers of lessons 6-9: each accepts the reference answer and equivalent forms,
rejects each typical wrong answer with a hint for that mistake (never the expected
value), reports a blank as "not done yet", and never raises."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_08 import OPS, TABLE, Node, run_backward, static_backward

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex


# ------------------------------------------------------------------------- lesson 6
def static_model(body, scale_feed=True):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)
        loss = body(x, w1, w2, w3)
    return g, x, loss


def test_06_1_accepts_the_model_written_in_steps(capsys):
    def steps(x, w1, w2, w3):
        l1 = x * w1
        return ns.mean((l1 + w2) * (l1 * w3))

    assert outcome(capsys, ex.check_static_model, *static_model(steps))
    assert outcome(capsys, ex.check_static_model, *static_model(
        lambda x, w1, w2, w3: ((x * w1 + w2) * (x * w1 * w3)).mean()))


@pytest.mark.parametrize("body, says", [
    (lambda x, w1, w2, w3: (x * w1 + w2) * (x * w1 * w3), "array of shape (2, 2)"),
    (lambda x, w1, w2, w3: ns.sum((x * w1 + w2) * (x * w1 * w3)), "adds up"),
    (lambda x, w1, w2, w3: ns.mean((1.0 * w1 + w2) * (1.0 * w1 * w3)), "placeholder x"),
    (lambda x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * w3)), "compare"),
])
def test_06_1_rejects_each_mistake_without_the_answer(capsys, body, says):
    result = rejected_on_first_try(capsys, ex.check_static_model, *static_model(body), says=says)
    never_states(result, "40", "112", "ns.mean(")


def test_06_1_a_loss_with_the_weights_typed_in_is_sent_to_the_variables(capsys):
    numbers = static_model(lambda x, *w: ns.mean((x * 2.0 + 3.0) * (x * 2.0 * 4.0)))
    result = rejected_on_first_try(capsys, ex.check_static_model, *numbers, says="Variables")
    never_states(result, "ns.mean(", "x * w1")


def test_06_1_blank_and_non_node(capsys):
    assert outcome(capsys, ex.check_static_model, ..., ..., ...).status == "todo"
    g, x, _ = static_model(lambda x, *w: x)
    rejected_on_first_try(capsys, ex.check_static_model, g, x, 40.0, says="node of your static graph")


def compiled(order):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w = [ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)]
        loss = ns.mean((x * w[0] + w[1]) * (x * w[0] * w[2]))
        outs = [loss, *ns.gradients(loss, w)]
    return g.compile([x], [outs[i] for i in order])


def test_06_2_accepts_the_compiled_function(capsys):
    assert outcome(capsys, ex.check_compiled_step, compiled([0, 1, 2, 3]))


@pytest.mark.parametrize("f, says", [
    (compiled([0, 3, 2, 1]), "different order"),
    (compiled([0, 1]), "one gradient per Variable"),
    (lambda x: [40, 28, 8, 10], "feed its argument"),
    (lambda x: 40.0, "list of numbers"),
    (lambda x: [1, 2, 3, 4], "fetch the loss node"),
])
def test_06_2_rejects_each_mistake_without_the_answer(capsys, f, says):
    result = rejected_on_first_try(capsys, ex.check_compiled_step, f, says=says)
    never_states(result, "[40", "28, 8", "88")


def test_06_2_a_python_function_driving_the_graph_is_sent_to_compile(capsys):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w = [ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)]
        loss = ns.mean((x * w[0] + w[1]) * (x * w[0] * w[2]))

    def by_hand(value):
        g.forward({x: value})
        g.backward(loss)
        return [loss.value, *(v.grad for v in w)]

    result = rejected_on_first_try(capsys, ex.check_compiled_step, by_hand, says="compile itself")
    never_states(result, "g.compile(", "[40", "28, 8")


def test_06_3_accepts_two_and_rejects_the_rest(capsys):
    assert outcome(capsys, ex.check_memory_plan, 2)
    for wrong, says in ((7, "without a plan"), (1, "input must still exist"),
                        (3, "ONE op"), (0, "every op makes a value")):
        result = rejected_on_first_try(capsys, ex.check_memory_plan, wrong, says=says)
        never_states(result, " 2 ", "2.", "two")
    rejected_on_first_try(capsys, ex.check_memory_plan, "two", says="whole number")
    assert outcome(capsys, ex.check_memory_plan, ...).status == "todo"


def test_hints_grow_stronger_and_then_point_to_reveal(capsys):
    for _ in range(2):
        result = outcome(capsys, ex.check_memory_plan, 7)
    assert "exactly one reader" in result.message
    assert 'ex.reveal("06-3")' in result.message


# ------------------------------------------------------------------------- lesson 7
def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x * -1


def test_07_1_accepts_where_and_equivalent_forms(capsys):
    assert outcome(capsys, ex.check_where_fix, lambda x: ng.where(x > 0, x * 2, x * -1))
    assert outcome(capsys, ex.check_where_fix, lambda x: ng.where(x <= 0, -x, 2 * x))


@pytest.mark.parametrize("f, says", [
    (branchy, "tracing failed"),
    (lambda x: x * 2, "negative entries"),
    (lambda x: ng.where(x > 0, x * 2, x), "multiplied by -1"),
])
def test_07_1_rejects_each_mistake_without_the_answer(capsys, f, says):
    result = rejected_on_first_try(capsys, ex.check_where_fix, f, says=says)
    never_states(result, "x * 2, x * -1")


def test_07_1_numpy_where_is_told_numpy_cannot_be_traced_not_about_an_if(capsys):
    result = rejected_on_first_try(capsys, ex.check_where_fix,
                      lambda x: np.where(x > 0, x * 2, x * -1), says="numpy")
    assert "`if`" not in result.message
    never_states(result, "x * 2, x * -1", "ng.where(")


def test_07_1_the_stronger_hint_starts_a_sentence_after_the_library_message(capsys):
    ex.check_where_fix(branchy)
    message = ex.check_where_fix(branchy).message
    assert "exists at once. Choose per element" in message


def test_07_1_a_traced_branch_is_sent_to_ng_where_by_the_library_message(capsys):
    result = rejected_on_first_try(capsys, ex.check_where_fix, branchy, says="ng.where(condition, a, b)")
    assert "ns.where" not in result.message


def test_07_1_static_where_on_tensors_is_reported_at_the_learners_line(capsys):
    def f_fixed(x):
        return ns.where(x > 0, x * 2, x * -1)  # static where on a dynamic tensor: refused

    line = inspect.getsourcelines(f_fixed)[1] + 1
    rejected_on_first_try(capsys, ex.check_where_fix, f_fixed,
             says=f"raised TypeError at line {line} of your code: a static-graph op")


def test_07_2_trace_pitfall(capsys):
    assert outcome(capsys, ex.check_trace_pitfall, [2.0, 4.0], [10.0, 20.0])
    assert outcome(capsys, ex.check_trace_pitfall, (2, 4), [10, 20.0])
    for traced, eager, says in (([10.0, 20.0], [10.0, 20.0], "name SCALE"),
                                ([2.0, 4.0], [2.0, 4.0], "what does SCALE hold now"),
                                ([1.0, 2.0], [10.0, 20.0], "one fixed number")):
        result = rejected_on_first_try(capsys, ex.check_trace_pitfall, traced, eager, says=says)
        never_states(result, "[2, 4]", "[10, 20]", "SCALE = 2")
    rejected_on_first_try(capsys, ex.check_trace_pitfall, "two", "four", says="list of two numbers")
    assert outcome(capsys, ex.check_trace_pitfall, ..., ...).status == "todo"


# ------------------------------------------------------------------------- lesson 8
def test_08_1_table(capsys):
    assert outcome(capsys, ex.check_derivative_table, TABLE)
    for row, says in (
        ({"mul": (lambda a, b: a * b, lambda a, b, i: a if i == 0 else b)}, "first argument"),
        ({"div": (lambda a, b: a / b, lambda a, b, i: 1 / b if i == 0 else a / b ** 2)},
         "second argument"),
        ({"sin": (lambda a: math.sin(a), lambda a, i: -math.cos(a))}, "'sin'"),
        ({"exp": (lambda a: math.exp(a) + 1, lambda a, i: math.exp(a))}, "value"),
    ):
        result = rejected_on_first_try(capsys, ex.check_derivative_table, {**TABLE, **row}, says=says)
        never_states(result, "cos(", "-a / b")
    assert outcome(capsys, ex.check_derivative_table, {**TABLE, "sin": (..., ...)}).status \
        == "todo"


def static_every_input(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is not None:
            for k, inp in enumerate(n.inputs):
                inp.grad += n.grad * OPS[n.op][1](*[i.value for i in n.inputs], k)


def static_overwrite(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is not None:
            for k, inp in enumerate(n.inputs):
                if inp.needs_grad:
                    inp.grad = n.grad * OPS[n.op][1](*[i.value for i in n.inputs], k)


def static_no_reset(nodes, loss):
    for n in nodes:
        n.grad = n.grad or 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is not None and n is not loss:
            pass
        if n.op is not None:
            for k, inp in enumerate(n.inputs):
                if inp.needs_grad:
                    inp.grad += n.grad * OPS[n.op][1](*[i.value for i in n.inputs], k)


def static_forward_order(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in nodes:
        if n.op is not None:
            for k, inp in enumerate(n.inputs):
                if inp.needs_grad:
                    inp.grad += n.grad * OPS[n.op][1](*[i.value for i in n.inputs], k)


def test_08_2_static_backward(capsys):
    assert outcome(capsys, ex.check_static_backward, static_backward)
    for wrong, says in ((static_every_input, "with respect to a constant"),
                        (static_overwrite, "collect both"),
                        (static_no_reset, "start every grad from zero"),
                        (static_forward_order, "got no gradient")):
        result = rejected_on_first_try(capsys, ex.check_static_backward, wrong, says=says)
        never_states(result, "reversed(", "+=")

    def blank(nodes, loss):
        ...
    assert outcome(capsys, ex.check_static_backward, blank).status == "todo"


def variant(**changes):
    """run_backward with one step done the wrong way."""
    def backward(root):
        order, seen = [], set()

        def visit(node):
            if id(node) in seen and not changes.get("revisit"):
                return
            seen.add(id(node))
            if changes.get("preorder"):
                order.append(node)
            for inp in node.inputs:
                if inp.requires_grad or changes.get("constants"):
                    visit(inp)
            if not changes.get("preorder"):
                order.append(node)

        visit(root)
        grads = {id(root): 1.0}
        for node in reversed(order):
            g = grads.pop(id(node), 0.0)
            if node.is_leaf:
                if changes.get("leaf_replace"):
                    node.grad = g
                elif node.requires_grad:
                    node.grad += g
                continue
            if node.saved is None and not changes.get("ignore_freed"):
                raise RuntimeError("the graph was freed")
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad or changes.get("constants"):
                    add = g * OPS[node.grad_fn][1](*(node.saved or (1.0, 1.0)), k)
                    grads[id(inp)] = add if changes.get("replace") else grads.get(id(inp), 0.0) + add
        return order
    return backward


def test_08_3_run_backward(capsys):
    assert outcome(capsys, ex.check_run_backward, run_backward)
    for wrong, says in ((variant(preorder=True), "visited after every node"),
                        (variant(replace=True), "Add into grads"),
                        (variant(leaf_replace=True), "add to a leaf's .grad"),
                        (variant(constants=True), "with respect to a constant"),
                        (variant(ignore_freed=True), "raise RuntimeError"),
                        (lambda root: None, "not done yet")):
        result = outcome(capsys, ex.check_run_backward, wrong)
        assert says in result.message, result.message
        never_states(result, "grads.get(id(inp)", "visit(")


def refusing_freed_only_when(refuses):
    """run_backward whose freed-graph check raises only when ``refuses(node, root, g)``."""
    def backward(root):
        order = run_backward_order(root)
        grads = {id(root): 1.0}
        for node in reversed(order):
            g = grads.pop(id(node), 0.0)
            if node.is_leaf:
                node.grad += g
                continue
            if node.saved is None and refuses(node, root, g):
                raise RuntimeError("the graph was freed")
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    saved = node.saved or (1.0, 1.0)
                    add = g * OPS[node.grad_fn][1](*saved, k)
                    grads[id(inp)] = grads.get(id(inp), 0.0) + add
        return order
    return backward


def run_backward_order(root):
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for inp in node.inputs:
            if inp.requires_grad:
                visit(inp)
        order.append(node)

    visit(root)
    return order


# What a learner working through 08-3 had accepted, although wrong: a freed graph
# refused only at its root, or only where a nonzero gradient arrives.
def test_08_3_a_freed_node_is_refused_inside_the_graph_and_under_a_zero_gradient(capsys):
    only_root = refusing_freed_only_when(lambda node, root, g: node is root)
    result = rejected_on_first_try(capsys, ex.check_run_backward, only_root, says="inside the graph")
    assert "no error for a freed node inside the graph" in result.message
    never_states(result, "node.saved is None", "is root")

    only_nonzero = refusing_freed_only_when(lambda node, root, g: g != 0)
    result = rejected_on_first_try(capsys, ex.check_run_backward, only_nonzero,
                      says="gradient reaching it was zero")
    assert "no error for a freed node that a zero gradient reaches" in result.message
    never_states(result, "node.saved is None", "g != 0")

    always = refusing_freed_only_when(lambda node, root, g: True)
    assert outcome(capsys, ex.check_run_backward, always)


def test_08_4_free_graph(capsys):
    def free_graph(order):
        for node in order:
            if not node.is_leaf:
                node.saved = None

    def unlink(order):
        for node in order:
            if not node.is_leaf:
                node.grad_fn = None
                node.saved = None

    def everything(order):
        for node in order:
            node.saved = None
            node.grad = None

    def nothing(order):
        return None

    assert outcome(capsys, ex.check_free_graph, free_graph)
    for wrong, says in ((unlink, "is_leaf says True"), (everything, "leaves belong to you"),
                        (nothing, "still hold their saved values")):
        result = rejected_on_first_try(capsys, ex.check_free_graph, wrong, says=says)
        never_states(result, "node.saved = None")


def jacobian(F, x0, y0):
    J = []
    for k in range(len(F(Node(x0), Node(y0)))):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        F(x, y)[k].backward()
        J.append([x.grad, y.grad])
    return J


def jacobian_shared_leaves(F, x0, y0):
    x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
    J = []
    for k in range(len(F(x, y))):
        F(x, y)[k].backward()
        J.append([x.grad, y.grad])
    return J


def test_08_5_jacobian(capsys):
    assert outcome(capsys, ex.check_jacobian, jacobian)
    typed = [[2.0, 1.0], [1.0, math.cos(2.0)], [math.e * 2, math.e]]
    wrong_sin = [[2.0, 1.0], [1.0, -math.sin(2.0)], [math.e * 2, math.e]]
    for wrong, says in ((lambda F, x0, y0: typed, "not elsewhere"),
                        (lambda F, x0, y0: np.array(jacobian(F, x0, y0)).T.tolist(), "swapped"),
                        (jacobian_shared_leaves, "accumulates"),
                        (lambda F, x0, y0: wrong_sin, "entry [1][1]"),
                        (lambda F, x0, y0: [[1.0, 2.0]], "one row per output")):
        result = rejected_on_first_try(capsys, ex.check_jacobian, wrong, says=says)
        never_states(result, "0.4161", "5.43", "2.718")
        if says != "accumulates":  # a wrong entry is not a grad-reset problem
            assert "reset" not in result.message and "fresh" not in result.message


def descend(f, x0, y0, lr=0.1, steps=200, zero=True, sign=-1.0):
    x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
    for _ in range(steps):
        if zero:
            x.grad = y.grad = 0.0
        f(x, y).backward()
        x.value += sign * lr * x.grad
        y.value += sign * lr * y.grad
    return x.value, y.value


def test_08_6_gradient_descent(capsys):
    assert outcome(capsys, ex.check_gradient_descent, descend)
    closed_form = lambda f, x0, y0, lr=0.1, steps=200: tuple(  # noqa: E731
        np.linalg.solve([[2.0, 0.5], [0.5, 4.0]], [2.0, -8.0]))
    for wrong, says in ((lambda *a, **k: descend(*a, **k, zero=False), "never reset"),
                        (lambda *a, **k: descend(*a, **k, sign=1.0), "climb"),
                        (lambda f, x0, y0, lr=0.1, steps=200: (x0, y0), "where it started"),
                        (closed_form, "its own f")):
        result = rejected_on_first_try(capsys, ex.check_gradient_descent, wrong, says=says)
        never_states(result, "-= lr", "take more steps", "too large")

    def blank(f, x0, y0, lr=0.1, steps=200):
        return ...
    assert outcome(capsys, ex.check_gradient_descent, blank).status == "todo"


def static_unseeded(nodes, loss):  # zeroes every grad, never gives the loss its 1
    for n in nodes:
        n.grad = 0.0
    for n in reversed(nodes):
        if n.op is not None:
            for k, inp in enumerate(n.inputs):
                if inp.needs_grad:
                    inp.grad += n.grad * OPS[n.op][1](*[i.value for i in n.inputs], k)


def static_seeded_then_zeroed(nodes, loss):  # the seed is wiped by the zeroing after it
    loss.grad = 1.0
    static_unseeded(nodes, loss)


@pytest.mark.parametrize("wrong", [static_unseeded, static_seeded_then_zeroed])
def test_08_2_an_unseeded_sweep_is_told_about_the_seed_not_the_order(capsys, wrong):
    result = rejected_on_first_try(capsys, ex.check_static_backward, wrong, says="loss.grad is 0")
    assert "order" not in result.message
    never_states(result, "loss.grad = 1", "reversed(", "+=")


def test_08_2_the_forward_order_is_still_told_about_the_order(capsys):
    result = rejected_on_first_try(capsys, ex.check_static_backward, static_forward_order, says="order")
    assert "seed" not in result.message


def run_backward_late_dedup(root):
    """No visited set: drops repeats only when appending, after walking every path."""
    order = []

    def visit(node):
        for inp in node.inputs:
            if inp.requires_grad:
                visit(inp)
        if all(n is not node for n in order):
            order.append(node)

    visit(root)
    grads = {id(root): 1.0}
    for node in reversed(order):
        g = grads.pop(id(node), 0.0)
        if node.is_leaf:
            node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("the graph was freed")
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                grads[id(inp)] = grads.get(id(inp), 0.0) + g * OPS[node.grad_fn][1](
                    *node.saved, k)
    return order


def run_backward_stack(root):
    """Unusual but right: Kahn's algorithm on use counts instead of a depth-first walk."""
    users, stack, seen = {}, [root], {id(root)}
    while stack:
        node = stack.pop()
        for inp in node.inputs:
            if inp.requires_grad:
                users[id(inp)] = users.get(id(inp), 0) + 1
                if id(inp) not in seen:
                    seen.add(id(inp))
                    stack.append(inp)
    order, ready, grads = [], [root], {id(root): 1.0}
    while ready:
        node = ready.pop()
        order.append(node)
        g = grads.pop(id(node), 0.0)
        if node.is_leaf:
            node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("the graph was freed")
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                grads[id(inp)] = grads.get(id(inp), 0.0) + g * OPS[node.grad_fn][1](
                    *node.saved, k)
                users[id(inp)] -= 1
                if users[id(inp)] == 0:
                    ready.append(inp)
    return order[::-1]


@pytest.mark.parametrize("wrong, says", [
    (variant(revisit=True), "lists 16381 entries for its 37 nodes"),
    (run_backward_late_dedup, "read node inputs"),
])
def test_08_3_a_walk_without_a_visited_set_is_refused(capsys, wrong, says):
    result = rejected_on_first_try(capsys, ex.check_run_backward, wrong, says=says)
    assert "stacked diamonds" in result.message
    never_states(result, "id(node) in seen", "seen.add", "visit(")


def test_08_3_an_unseeded_sweep_is_told_about_the_seed_not_the_order(capsys):
    def unseeded(root):
        order = run_backward(root)  # right order; then redo the sweep without a seed
        for node in order:
            if node.is_leaf:
                node.grad = 0.0
        grads = {}
        for node in reversed(order):
            g = grads.pop(id(node), 0.0)
            if node.is_leaf:
                node.grad += g
                continue
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    grads[id(inp)] = grads.get(id(inp), 0.0) + g * OPS[node.grad_fn][1](
                        *node.saved, k)
        return order

    result = rejected_on_first_try(capsys, ex.check_run_backward, unseeded, says="starts from nothing")
    assert "visited after" not in result.message
    never_states(result, "{id(root): 1.0}", "grads.get(id(inp)")
    preorder = rejected_on_first_try(capsys, ex.check_run_backward, variant(preorder=True),
                        says="visited after")
    assert "starts from nothing" not in preorder.message


def test_08_3_an_order_built_another_way_is_accepted(capsys):
    assert outcome(capsys, ex.check_run_backward, run_backward_stack)


def test_08_4_cutting_the_inputs_is_refused_and_success_says_the_structure_remains(capsys):
    def cut_inputs(order):
        for node in order:
            if not node.is_leaf:
                node.saved = None
                node.inputs = ()

    result = rejected_on_first_try(capsys, ex.check_free_graph, cut_inputs, says="cut the links")
    never_states(result, "node.saved = None", "the structure and the leaves remain")

    def free_with_setattr(order):  # unusual but right
        for node in (n for n in order if n.grad_fn is not None):
            setattr(node, "saved", None)

    right = outcome(capsys, ex.check_free_graph, free_with_setattr)
    assert right and "the structure and the leaves remain" in right.message


def test_08_6_returning_the_nodes_is_refused(capsys):
    def nodes(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x, y

    result = rejected_on_first_try(capsys, ex.check_gradient_descent, nodes, says="Node objects")
    never_states(result, "x.value, y.value", "-= lr")

    def numpy_pair(f, x0, y0, lr=0.1, steps=200):  # unusual but right: an array of two
        return np.array(descend(f, x0, y0, lr, steps))

    assert outcome(capsys, ex.check_gradient_descent, numpy_pair)


def test_08_1_a_derivative_that_returns_a_function_is_told_to_call_it(capsys):
    table = {**TABLE, "exp": (lambda a: math.exp(a), lambda a, i: math.exp)}
    result = rejected_on_first_try(capsys, ex.check_derivative_table, table, says="returned a function")
    never_states(result, "math.exp(a)")


def test_08_4_emptying_the_list_frees_nothing(capsys):
    result = rejected_on_first_try(capsys, ex.check_free_graph, lambda order: order.clear(),
                      says="still hold their saved values")
    assert "emptying the list frees nothing" in result.message


def test_08_4_freeing_only_the_root_is_refused(capsys):
    def root_only(order):
        order[-1].saved = None

    rejected_on_first_try(capsys, ex.check_free_graph, root_only, says="still hold their saved values")


# What a learner working through 08-4 had accepted, although wrong: saved freed, and
# with it something that stays.
def test_08_4_freeing_that_wipes_more_than_the_saved_values_says_what_it_wiped(capsys):
    def values_to_none(order):
        for n in order:
            n.saved = None
            n.value = None if not n.is_leaf else n.value

    def values_to_nan(order):
        for n in order:
            n.saved = None
            n.value = float("nan")

    def requires_grad_off(order):
        for n in order:
            if not n.is_leaf:
                n.saved = None
                n.requires_grad = False

    for wrong, whose, second in (
        (values_to_none, "computed nodes' value", "except the one holding"),
        (values_to_nan, "leaves' value", "Still stuck?"),
        (requires_grad_off, "computed nodes' requires_grad", "except the one holding"),
    ):
        result = rejected_on_first_try(capsys, ex.check_free_graph, wrong, says=f"changed the {whose}:")
        never_states(result, "node.saved = None", "the structure and the leaves remain")
        assert " and " not in result.message.split("changed the ")[1].split(":")[0]
        again = outcome(capsys, ex.check_free_graph, wrong)  # the second try's hint
        assert again.status == "fail" and second in again.message
        never_states(again, "node.saved = None")


def test_08_5_one_graph_kept_alive_with_the_grads_zeroed_between_rows_is_accepted(capsys):
    def one_graph(F, x0, y0):  # unusual but right: the graph is kept for every output
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        rows = []
        for out in F(x, y):
            x.grad = y.grad = 0.0
            out.backward(retain_graph=True)
            rows.append([x.grad, y.grad])
        return rows

    assert outcome(capsys, ex.check_jacobian, one_graph)


def test_08_5_one_graph_freed_by_the_first_output_is_refused_for_outputs_sharing_a_node(
    capsys,
):
    def one_graph(F, x0, y0):  # right only while the outputs share no computed node
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        rows = []
        for out in F(x, y):
            x.grad = y.grad = 0.0
            out.backward()
            rows.append([x.grad, y.grad])
        return rows

    result = rejected_on_first_try(capsys, ex.check_jacobian, one_graph, says="outputs share a node")
    never_states(result, "retain_graph=True", "range(len(")


def test_08_5_a_jacobian_that_counts_on_three_outputs_is_told_so(capsys):
    def three_rows(F, x0, y0):
        rows = []
        for k in range(3):
            x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
            F(x, y)[k].backward()
            rows.append([x.grad, y.grad])
        return rows

    result = rejected_on_first_try(capsys, ex.check_jacobian, three_rows, says="an F of another size")
    never_states(result, "len(F(")


def test_08_6_a_typed_in_learning_rate_or_step_count_is_told_so(capsys):
    def lesson_lr(f, x0, y0, lr=0.1, steps=200):
        return descend(f, x0, y0, 0.1, steps)

    def one_more(f, x0, y0, lr=0.1, steps=200):
        return descend(f, x0, y0, lr, steps + 1)

    for wrong, says in ((lesson_lr, "learning rate of their own"), (one_more, "one step")):
        result = rejected_on_first_try(capsys, ex.check_gradient_descent, wrong, says=says)
        never_states(result, "0.05", "60")


def test_08_6_a_leaf_rebuilt_from_itself_or_a_loss_built_once_is_told_why_backward_refuses(
    capsys,
):
    def rebuilt(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            x = x - lr * x.grad
            y = y - lr * y.grad
        return x.value, y.value

    def built_once(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        loss = f(x, y)
        for _ in range(steps):
            x.grad = y.grad = 0.0
            loss.backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x.value, y.value

    for wrong in (rebuilt, built_once):
        result = rejected_on_first_try(capsys, ex.check_gradient_descent, wrong,
                          says="ran into a graph that an earlier backward had freed")
        never_states(result, "-= lr")


# ------------------------------------------------------------------------- lesson 9
def accuracy(logits, labels):
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def test_09_1_accuracy(capsys):
    assert outcome(capsys, ex.check_accuracy_fn, accuracy)
    for wrong, says in (
        (lambda l, y: int(np.sum(np.asarray(l).argmax(1) == np.asarray(y))), "count"),
        (lambda l, y: float(np.mean(np.asarray(l).argmin(1) == np.asarray(y))), "largest logit"),
        (lambda l, y: np.mean(np.asarray(l).argmax(1) == np.asarray(y)) > 0, "every batch"),
        (lambda l, y: np.array([accuracy(l, y)]), "one number"),
        (lambda l, y: accuracy(l, y) if isinstance(l, np.ndarray) else 0.0, "tensors"),
    ):
        result = rejected_on_first_try(capsys, ex.check_accuracy_fn, wrong, says=says)
        never_states(result, "0.6", "3/5")


def test_09_1_a_percentage_is_told_accuracy_is_a_fraction(capsys):
    result = rejected_on_first_try(capsys, ex.check_accuracy_fn,
                      lambda l, y: 100 * accuracy(l, y), says="a fraction, a number in [0, 1]")
    never_states(result, "0.6", "3/5")


def test_09_1_a_crash_inside_numpy_is_reported_at_the_learners_line(capsys):
    def broken(logits, labels):
        return float(np.mean(np.asarray(logits).argmax(axis=3) == labels))

    line = inspect.getsourcelines(broken)[1] + 1
    rejected_on_first_try(capsys, ex.check_accuracy_fn, broken, says=f"at line {line} of your code")


def train_ok(model, opt, X, y):
    opt.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    return loss.item()


def train_variant(zero=True, step=True, item=True, mse=False):
    def train(model, opt, X, y):
        if zero:
            opt.zero_grad()
        out = model(X)
        if mse:
            loss = ((out[:, 1] - y.float()) ** 2).mean()
        else:
            loss = ng.nn.functional.cross_entropy(out, y)
        loss.backward()
        if step:
            opt.step()
        return loss.item() if item else loss
    return train


def test_09_2_train_step(capsys):
    assert outcome(capsys, ex.check_train_step, train_ok)
    for wrong, says in ((train_variant(zero=False), "clear them"),
                        (train_variant(step=False), "never changed"),
                        (train_variant(item=False), "Python float"),
                        (train_variant(mse=True), "not the cross-entropy"),
                        (lambda m, o, X, y: "loss", "Python float")):
        result = rejected_on_first_try(capsys, ex.check_train_step, wrong, says=says)
        never_states(result, "zero_grad()", "loss.item()")


def train_zero_before_step(model, opt, X, y):
    loss = ng.nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.zero_grad()
    opt.step()
    return loss.item()


def train_summed(model, opt, X, y):
    opt.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(X), y, reduction="sum")
    loss.backward()
    opt.step()
    return loss.item()


def test_09_2_zero_grad_between_backward_and_step_is_told_so(capsys):
    result = rejected_on_first_try(capsys, ex.check_train_step, train_zero_before_step,
                      says="cleared after backward, before the optimizer's step")
    assert "must take its step" not in result.message
    never_states(result, "zero_grad()", "loss.item()")


def test_09_2_a_summed_loss_is_told_about_the_reduction(capsys):
    result = rejected_on_first_try(capsys, ex.check_train_step, train_summed, says="SUM")
    assert "reduction" in result.message and "raw logits" not in result.message
    never_states(result, "zero_grad()", "loss.item()", "reduction='mean'", 'reduction="mean"')


def test_09_2_zeroing_at_the_end_of_the_step_is_accepted(capsys):
    def zero_last(model, opt, X, y):  # right too: the next step starts from zero
        loss = ng.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return float(loss)

    assert outcome(capsys, ex.check_train_step, zero_last)


def test_09_1_an_accuracy_that_only_works_on_arrays_is_told_to_convert(capsys):
    result = rejected_on_first_try(capsys, ex.check_accuracy_fn, lambda l, y: (l.argmax(1) == y).mean(),
                      says="not on tensors")
    never_states(result, "0.6", "3/5")


def test_09_3_float_labels_and_outputs_in_another_order_are_told_so(capsys):
    result = rejected_on_first_try(capsys, ex.check_static_classifier,
                      static_variant(label_dtype=np.float64), says="integer dtype (int64")
    assert "target.long()" not in result.message
    result = rejected_on_first_try(capsys, ex.check_static_classifier,
                      static_variant(step_fetches_loss=False), says="a first output that is not")


def test_09_2_the_step_written_with_autograd_grad_is_accepted(capsys):
    def manual(model, opt, X, y):  # unusual but right: gradients set by hand, then step
        opt.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        params = list(model.parameters())
        for p, g in zip(params, ng.autograd.grad(loss, params)):
            p.grad = g
        opt.step()
        return float(loss)

    assert outcome(capsys, ex.check_train_step, manual)


def static_variant(batch=None, transpose=True, act=ns.tanh, optimizer="Adam", lr=None,
                   fetch_train=True, reduction="mean", classify_updates=False,
                   label_dtype=np.int64, step_fetches_loss=True, points_dtype=np.float32):
    """A learner's build_static for 09-3: right by default, or with one mistake."""

    def build_static(init, given_lr):
        with ns.Graph() as g:
            names = ("W1", "b1", "W2", "b2")
            W1, b1, W2, b2 = (ns.Variable(w, name=n) for w, n in zip(init, names))
            xs = ns.placeholder("X", shape=(batch, 2), dtype=points_dtype)
            ys = ns.placeholder("y", shape=(batch,), dtype=label_dtype)
            t = ns.t if transpose else (lambda w: w)
            logits = act(xs @ t(W1) + b1) @ t(W2) + b2
            loss = ns.cross_entropy(logits, ys, reduction=reduction)
            opt = getattr(ns.optim, optimizer)([W1, b1, W2, b2], lr=lr or given_lr)
            train = opt.minimize(loss)
        fetched = [loss, train] if fetch_train else [loss]
        step = g.compile([xs, ys], fetched if step_fetches_loss else [train, loss])
        classify = g.compile([xs], [logits, train] if classify_updates else [logits])
        return step, classify

    return build_static


def test_09_3_the_static_graph_is_accepted_in_its_usual_forms(capsys):
    assert outcome(capsys, ex.check_static_classifier, static_variant())

    def methods(init, lr):  # W.T and ns.matmul, no names, updates= in compile
        with ns.Graph() as g:
            W1, b1, W2, b2 = (ns.Variable(w) for w in init)
            xs = ns.placeholder("points", shape=(None, 2))
            ys = ns.placeholder("labels", shape=(None,), dtype=np.int64)
            logits = ns.matmul(ns.tanh(ns.matmul(xs, W1.T) + b1), W2.T) + b2
            loss = ns.cross_entropy(logits, ys, reduction="mean")
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
        return [g.compile([xs, ys], [loss, train]), g.compile([xs], [logits])]

    assert outcome(capsys, ex.check_static_classifier, methods)


@pytest.mark.parametrize("mistake, says", [
    ({"batch": 32}, "declare the batch dimension as None"),
    ({"transpose": False}, "transpose W1"),
    ({"act": ns.relu}, "is not that of the model"),
    ({"reduction": "sum"}, "SUM of the per-example losses"),
    ({"fetch_train": False}, "the loss never changes"),
    ({"optimizer": "SGD"}, "SGD steps"),
    ({"lr": 0.05}, "learning rate of their own"),
    ({"classify_updates": True}, "placeholder 'y' needs a value"),
    ({"label_dtype": np.float64}, "class indices, which cross-entropy takes as integers"),
    ({"points_dtype": np.float64}, "declare the points as float32"),
    ({"step_fetches_loss": False}, "fetch the loss first"),
])
def test_09_3_a_wrong_static_graph_is_told_its_mistake(capsys, mistake, says):
    result = rejected_on_first_try(capsys, ex.check_static_classifier, static_variant(**mistake), says=says)
    never_states(result, "ns.placeholder(", "minimize(loss)", "g.compile(", "0.03", "0.720")


def test_09_3_a_classify_that_also_trains_is_told_so(capsys):
    def build_static(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (ns.Variable(w) for w in init)
            xs = ns.placeholder("X", shape=(None, 2))
            ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
        both = g.compile([xs, ys], [logits, train])
        return g.compile([xs, ys], [loss, train]), lambda p: both(p, np.zeros(len(p), int))

    rejected_on_first_try(capsys, ex.check_static_classifier, build_static,
             says="classify changed the weights")


def test_09_3_a_blank_or_a_non_pair_is_not_accepted(capsys):
    def blank(init, lr):
        with ns.Graph():
            xs = ...
        return xs

    assert outcome(capsys, ex.check_static_classifier, blank).status == "todo"
    rejected_on_first_try(capsys, ex.check_static_classifier, lambda init, lr: 3,
             says="the pair (step, classify)")


def test_lesson_9_reference_pieces_are_the_labs_and_unknown_names_are_refused():
    from naivegraph.lessons.checkers.lesson09 import reference
    from naivegraph.lessons.training import build_static_classifier, train_step

    assert reference("build_static") is build_static_classifier
    assert reference("train_step") is train_step
    assert reference("accuracy")(np.array([[0.0, 1.0], [2.0, 1.0]]), np.array([1, 1])) == 0.5
    with pytest.raises(KeyError, match="lesson 9 has no function 'step'"):
        reference("step")


def test_lesson_8_reference_engine_passes_the_lessons_own_checks(capsys, monkeypatch):
    from naivegraph.lessons.checkers import lesson08

    # the reference reads the lab's table, not a global OPS: it checks like a learner's
    # (with the watch told every run is the checker's own: handed in by a learner, the
    # lab's code is refused)
    monkeypatch.setattr(lesson08.LabCalls, "_exempt", lambda self, frame, name: True)
    for check, name in ((ex.check_static_backward, "static_backward"),
                        (ex.check_run_backward, "run_backward"),
                        (ex.check_free_graph, "free_graph")):
        lab = lesson08.reference(name)
        assert outcome(capsys, check, lambda *args, lab=lab: lab(*args))
    with pytest.raises(TypeError, match="pass the notebook's Node class"):
        lesson08.reference("jacobian")
    with pytest.raises(KeyError, match="lesson 8 has no function 'backward'"):
        lesson08.reference("backward")


# ------------------------------------------------------------------------- all of them
LESSONS = ("06", "07", "08", "09")


def test_every_checker_of_lessons_6_to_9_has_a_revealable_answer(capsys):
    ours = sorted(k for k in ex.CHECKERS if k[:2] in LESSONS)
    assert ours == ["06-1", "06-2", "06-3", "07-1", "07-2", "08-1", "08-2", "08-3", "08-4",
                    "08-5", "08-6", "09-1", "09-2", "09-3"]
    for exercise in ours:
        ex.reveal(exercise)
        assert capsys.readouterr().out.startswith(f"answer [{exercise}]: ")


@pytest.mark.parametrize("exercise", ["07-1", "08-2", "08-3", "08-4", "08-5", "08-6", "09-1",
                                      "09-2", "09-3"])
def test_a_function_left_blank_is_not_done_yet(exercise, capsys):
    def empty(*args):
        ...
    assert outcome(capsys, ex.CHECKERS[exercise], empty).status == "todo"


@pytest.mark.parametrize("exercise", ["06-2", "07-1", "08-2", "08-3", "08-4", "08-5", "08-6",
                                      "09-1", "09-2", "09-3"])
def test_a_function_that_raises_is_reported_not_raised(exercise, capsys):
    def crashes(*args):
        raise ValueError("boom")
    result = outcome(capsys, ex.CHECKERS[exercise], crashes)
    assert result.status == "fail" and "raised ValueError" in result.message


# ------------------------------------------------- answers that skip the exercise's point
def lesson_6_graph():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w = [ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)]
        loss = ns.mean((x * w[0] + w[1]) * (x * w[0] * w[2]))
        grads = ns.gradients(loss, w)
    return g, x, [loss, *grads]


def test_06_2_a_graph_is_told_to_be_compiled_not_to_define_a_function(capsys):
    g, x, fetches = lesson_6_graph()
    small, report = ns.optimize(g, fetches=fetches)
    for wrong, says in ((g, "you gave a graph, not a function"),
                        (small, "you gave a graph, not a function"),
                        ((small, report), "what ns.optimize returns"),
                        (report, "what ns.optimize returns")):
        result = rejected_on_first_try(capsys, ex.check_compiled_step, wrong, says=says)
        assert "def name" not in result.message
        never_states(result, "g.compile(", "[40", "28, 8")


def test_06_2_a_compiled_function_without_the_optimisation_is_still_a_compiled_step(capsys):
    g, x, fetches = lesson_6_graph()
    assert outcome(capsys, ex.check_compiled_step, g.compile([x], fetches, optimize=False))


def finite_difference(f, h=1e-6):
    """A derivative column estimated from the function: not the VJP rule."""
    def derivative(*args):
        *values, i = args
        up, down = list(values), list(values)
        up[i] += h
        down[i] -= h
        return (f(*up) - f(*down)) / (2 * h)
    return derivative


def test_08_1_a_finite_difference_in_the_table_is_refused_as_an_estimate(capsys):
    for h in (1e-6, 1e-4, 1e-8):
        estimated = {k: (f, finite_difference(f, h)) for k, (f, _) in TABLE.items()}
        result = rejected_on_first_try(capsys, ex.check_derivative_table, estimated,
                          says="estimate")
        never_states(result, "cos(", "-a / b", "1 / b")
    one_row = {**TABLE, "exp": (math.exp, finite_difference(math.exp))}
    result = rejected_on_first_try(capsys, ex.check_derivative_table, one_row, says="'exp'")
    assert "estimates the derivative numerically" in result.message


def test_08_1_the_exact_rule_written_another_way_is_accepted(capsys):
    other = {**TABLE,
             "div": (lambda a, b: a / b, lambda a, b, i: 1.0 / b if i == 0 else -(a / b) / b),
             "sin": (math.sin, lambda a, i: math.sin(a + math.pi / 2))}
    result = outcome(capsys, ex.check_derivative_table, other)
    assert result and "exact" in result.message


def run_backward_listing_constants(root):
    """The depth-first walk follows every input, constants too, and lists them; only the
    inputs that require grad are handed gradients, and a constant leaf adds nothing."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for inp in node.inputs:
            visit(inp)
        order.append(node)

    visit(root)
    grads = {id(root): 1.0}
    for node in reversed(order):
        g = grads.pop(id(node), 0.0)
        if node.is_leaf:
            if node.requires_grad:
                node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("the graph was freed")
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                grads[id(inp)] = grads.get(id(inp), 0.0) + g * OPS[node.grad_fn][1](
                    *node.saved, k)
    return order


def test_08_3_an_order_that_also_lists_the_constants_is_right_and_told_they_have_no_place(
    capsys,
):
    # The constants of (x - 3) ** 2 land between the nodes that read them: wherever they
    # stand, they get no gradient and free_graph skips them as leaves, so the gradients and
    # what is freed are the lab's.
    x = Node(1.0, requires_grad=True)
    order = run_backward_listing_constants((x - 3.0) ** 2.0)
    assert [n.value for n in order if not n.requires_grad] == [3.0, 2.0] and x.grad == -4.0
    result = outcome(capsys, ex.check_run_backward, run_backward_listing_constants)
    assert result and "also lists the constants: harmless" in result.message
    plain = outcome(capsys, ex.check_run_backward, run_backward)
    assert plain and "constants: harmless" not in plain.message


def test_08_6_moving_before_the_backward_is_told_so_not_to_count_its_steps(capsys):
    def move_first(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps):
            x.value -= lr * x.grad
            y.value -= lr * y.grad
            x.grad = y.grad = 0.0
            f(x, y).backward()
        return x.value, y.value

    result = rejected_on_first_try(capsys, ex.check_gradient_descent, move_first,
                      says="before the loop's backward")
    assert "take exactly" not in result.message
    never_states(result, "-= lr")


def test_08_6_returning_one_node_or_the_last_gradients_is_told_what_it_returned(capsys):
    def last_node(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps):
            x.grad = y.grad = 0.0
            loss = f(x, y)
            loss.backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return loss

    def last_grads(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for _ in range(steps):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x.grad, y.grad

    result = rejected_on_first_try(capsys, ex.check_gradient_descent, last_node, says="you returned one Node")
    assert "pair (x, y) of numbers, got" not in result.message
    rejected_on_first_try(capsys, ex.check_gradient_descent, last_grads, says="the last gradients")


def test_09_2_the_loss_computed_again_after_the_step_is_told_so(capsys):
    def loss_after_step(model, opt, X, y):
        opt.zero_grad()
        ng.nn.functional.cross_entropy(model(X), y).backward()
        opt.step()
        return ng.nn.functional.cross_entropy(model(X), y).item()

    result = rejected_on_first_try(capsys, ex.check_train_step, loss_after_step, says="after the step")
    assert "raw logits" not in result.message
    never_states(result, "loss.item()", "zero_grad();")


def test_09_3_the_stronger_hint_does_not_write_the_logits_out(capsys):
    wrong = static_variant(act=ns.sigmoid)
    outcome(capsys, ex.check_static_classifier, wrong)
    second = outcome(capsys, ex.check_static_classifier, wrong)
    assert "layer by layer" in second.message
    never_states(second, "W1ᵀ", "ns.t(W1)", "tanh(X")


# ------------------------------------------- wrong answers that used to pass, and their hints
@pytest.mark.parametrize("body", [
    lambda x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * w1 * 4.0)),
    lambda x, w1, w2, w3: ns.mean((x * w1 + 3.0) * (x * w1 * w3)),
])
def test_06_1_one_weight_typed_in_is_refused_naming_the_unread_variable(capsys, body):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0, name="w1"), ns.Variable(3.0, name="w2"), \
            ns.Variable(4.0, name="w3")
        loss = body(x, w1, w2, w3)
    result = rejected_on_first_try(capsys, ex.check_static_model, g, x, loss, says="does not read the Variable")
    assert ("w3" in result.message) != ("w2" in result.message)
    never_states(result, "ns.mean(", "x * w1")


def test_06_1_a_loss_right_for_ones_only_is_told_the_feed_of_twos_differs(capsys):
    body = lambda x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * x * w1 * w3))  # noqa: E731
    result = rejected_on_first_try(capsys, ex.check_static_model, *static_model(body),
                      says="right for a feed of ones, wrong for a feed of twos")
    assert "for a feed of twos" in result.message.split("hint")[0]
    never_states(result, "40", "112", "ns.mean(")


def test_06_2_updates_in_the_compiled_function_are_refused_and_the_weights_put_back(capsys):
    g, x, fetches = lesson_6_graph()
    w1 = next(n for n in g.nodes if isinstance(n, ns.Variable))
    dw1 = fetches[1]
    moving = g.compile([x], fetches, updates=[(w1, w1 - 0.01 * dw1)])
    result = rejected_on_first_try(capsys, ex.check_compiled_step, moving, says="updates the weights")
    assert "the same numbers whatever it is fed" not in result.message
    never_states(result, "[40", "28, 8")
    assert float(w1.value) == 2.0
    assert outcome(capsys, ex.check_compiled_step, g.compile([x], fetches))


def test_06_3_six_is_not_called_the_count_without_a_plan_and_a_whole_float_is_accepted(capsys):
    result = rejected_on_first_try(capsys, ex.check_memory_plan, 6, says="nearly the whole chain")
    assert "without a plan" not in result.message
    assert outcome(capsys, ex.check_memory_plan, 2.0)
    assert outcome(capsys, ex.check_memory_plan, np.float64(2.0))
    rejected_on_first_try(capsys, ex.check_memory_plan, 2.5, says="whole number")


@pytest.mark.parametrize("f", [
    lambda x: ng.where(x > 0.5, x * 2, x * -1),
    lambda x: ng.where(x >= 1, x * 2, x * -1),
    lambda x: ng.where(x > -0.5, x * 2, x * -1),
])
def test_07_1_a_wrong_threshold_is_refused_showing_the_case_that_failed(capsys, f):
    result = rejected_on_first_try(capsys, ex.check_where_fix, f, says="exactly where the rule does")
    assert "for x = [3, -1]" not in result.message
    never_states(result, "x * 2, x * -1", "x > 0,")


def test_07_1_forms_that_agree_at_zero_are_accepted(capsys):
    assert outcome(capsys, ex.check_where_fix, lambda x: ng.where(x >= 0, x * 2, x * -1))
    assert outcome(capsys, ex.check_where_fix, lambda x: x * ng.where(x > 0, 2.0, -1.0))


def test_07_1_a_method_traced_nodes_lack_is_not_called_an_if(capsys):
    result = rejected_on_first_try(capsys, ex.check_where_fix,
                      lambda x: ng.where(x > 0, x * 2, x * -1).detach(),
                      says="a method of tensors that a traced graph node does not have")
    assert "`if`" not in result.message


def test_07_2_results_computed_by_running_are_refused_as_not_predicted(capsys):
    # a 1-D numpy array is typed in as easily as a list (and a notebook cell that runs
    # the traced function is caught by its trace): tensors are refused (a 2-D array is
    # told its shape: see test_checkers_05_08_round13)
    SCALE = 10.0  # noqa: N806
    scaled = lambda x: x * SCALE  # noqa: E731
    traced = ns.trace(lambda x: x * 2.0, np.ones(2))
    for got in ((ng.tensor(traced(np.array([1.0, 2.0]))), [10.0, 20.0]),
                ([2.0, 4.0], scaled(ng.tensor([1.0, 2.0])))):
        result = rejected_on_first_try(capsys, ex.check_trace_pitfall, *got, says="predict")
        never_states(result, "[2, 4]", "[10, 20]", "traced(np.array")


def test_07_2_right_numbers_in_the_wrong_shape_are_told_the_shape(capsys):
    for eager in ([[10.0, 20.0]], 10.0):
        result = rejected_on_first_try(capsys, ex.check_trace_pitfall, [2.0, 4.0], eager,
                          says="one entry per element")
        assert "what does SCALE hold" not in result.message
        never_states(result, "[10, 20]")


def five_point(f, h=1e-3):
    def derivative(*args):
        *values, i = args

        def at(step):
            moved = list(values)
            moved[i] = moved[i] + step * h
            return f(*moved)

        return (-at(2) + 8 * at(1) - 8 * at(-1) + at(-2)) / (12 * h)
    return derivative


def test_08_1_a_five_point_stencil_a_complex_step_and_autograd_are_refused(capsys):
    import cmath

    import torch

    stencil = {k: (f, five_point(f)) for k, (f, _) in TABLE.items()}
    complex_step = {**TABLE, "sin": (TABLE["sin"][0],
                                     lambda a, i: cmath.sin(a + 1e-30j).imag / 1e-30)}

    def ng_sin(a, i):
        t = ng.tensor(a, requires_grad=True)
        t.sin().backward()
        return float(t.grad)

    def torch_sin(a, i):
        t = torch.tensor(a, requires_grad=True, dtype=torch.float64)
        t.sin().backward()
        return float(t.grad)

    for table, says in ((stencil, "shifted a little"), (complex_step, "complex step"),
                        ({**TABLE, "sin": (TABLE["sin"][0], ng_sin)}, "naivegraph's autograd"),
                        ({**TABLE, "sin": (TABLE["sin"][0], torch_sin)}, "torch's autograd")):
        result = rejected_on_first_try(capsys, ex.check_derivative_table, table, says=says)
        never_states(result, "cos(", "-a / b")
    assert outcome(capsys, ex.check_derivative_table, TABLE)
    assert outcome(capsys, ex.check_derivative_table, {
        **TABLE, "div": (TABLE["div"][0], lambda a, b, i: [1.0 / b, -a / (b * b)][i]),
        "exp": (TABLE["exp"][0], lambda a, i: math.e ** a)})


def static_seeding_the_last_node(nodes, loss):
    for n in nodes:
        n.grad = 0.0
    nodes[-1].grad = 1.0
    for n in reversed(nodes):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            if inp.needs_grad:
                inp.grad += n.grad * OPS[n.op][1](*args, k)


def test_08_2_seeding_the_last_node_instead_of_the_loss_is_refused(capsys):
    result = rejected_on_first_try(capsys, ex.check_static_backward, static_seeding_the_last_node,
                      says="seeded the last node of the list, not the loss")
    never_states(result, "loss.grad = 1.0")
    assert outcome(capsys, ex.check_static_backward, static_backward)


def run_backward_with(values=None, chain=True, preorder=False):
    """run_backward reading current input values, dropping g, or in stack pre-order."""
    def backward(root):
        order, seen = [], set()
        if preorder:
            stack = [root]
            while stack:
                node = stack.pop()
                if id(node) in seen:
                    continue
                seen.add(id(node))
                order.insert(0, node)
                stack.extend(i for i in node.inputs if i.requires_grad)
        else:
            order = run_backward_order(root)
        grads = {id(root): 1.0}
        for node in reversed(order):
            g = grads.pop(id(node), 0.0)
            if node.is_leaf:
                node.grad += g
                continue
            if node.saved is None:
                raise RuntimeError("the graph was freed")
            args = tuple(j.value for j in node.inputs) if values == "current" else node.saved
            for k, inp in enumerate(node.inputs):
                if inp.requires_grad:
                    d = OPS[node.grad_fn][1](*args, k)
                    grads[id(inp)] = grads.get(id(inp), 0.0) + (g * d if chain else d)
        return order
    return backward


def test_08_3_current_values_instead_of_the_saved_ones_are_refused(capsys):
    result = rejected_on_first_try(capsys, ex.check_run_backward, run_backward_with(values="current"),
                      says="the ones kept in node.saved")
    never_states(result, "*node.saved, k")


def test_08_3_a_gradient_not_multiplied_in_is_told_the_chain_rule(capsys):
    result = rejected_on_first_try(capsys, ex.check_run_backward, run_backward_with(chain=False),
                      says="the chain rule")
    assert "instead of replacing" not in result.message
    never_states(result, "g * ", "OPS[node.grad_fn]")


def test_08_3_a_stack_pre_order_is_told_about_the_order(capsys):
    result = rejected_on_first_try(capsys, ex.check_run_backward, run_backward_with(preorder=True),
                      says="lists a node before one of its inputs")
    assert "instead of replacing" not in result.message


def test_08_4_deleting_the_saved_attribute_is_reported_not_raised(capsys):
    def free_graph(order):
        for n in order:
            del n.saved

    result = rejected_on_first_try(capsys, ex.check_free_graph, free_graph,
                      says="deleted the attribute saved itself")
    never_states(result, "saved = None")


def jacobian_by_central_difference(F, x0, y0, h=1e-6):
    n = len(F(Node(x0), Node(y0)))
    rows = []
    for k in range(n):
        dx = (F(Node(x0 + h), Node(y0))[k].value - F(Node(x0 - h), Node(y0))[k].value) / (2 * h)
        dy = (F(Node(x0), Node(y0 + h))[k].value - F(Node(x0), Node(y0 - h))[k].value) / (2 * h)
        rows.append([dx, dy])
    return rows


def test_08_5_a_finite_difference_jacobian_is_refused(capsys):
    result = rejected_on_first_try(capsys, ex.check_jacobian, jacobian_by_central_difference,
                      says="finite difference")
    never_states(result, "range(len(")


def test_08_5_returning_the_leaves_is_told_numbers_are_asked(capsys):
    def leaves(F, x0, y0):
        J = []
        for k in range(len(F(Node(x0), Node(y0)))):
            x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
            F(x, y)[k].backward()
            J.append([x, y])
        return J

    result = rejected_on_first_try(capsys, ex.check_jacobian, leaves, says="rows hold Node objects")
    assert "entry [0][0]" not in result.message


def descend_by_finite_difference(f, x0, y0, lr=0.1, steps=200, h=1e-6):
    x, y = x0, y0
    for _ in range(steps):
        gx = (f(x + h, y) - f(x - h, y)) / (2 * h)
        gy = (f(x, y + h) - f(x, y - h)) / (2 * h)
        x, y = x - lr * gx, y - lr * gy
    return x, y


def test_08_6_finite_difference_gradients_are_refused(capsys):
    result = rejected_on_first_try(capsys, ex.check_gradient_descent, descend_by_finite_difference,
                      says="finite difference")
    never_states(result, "-= lr")


def test_08_6_a_loop_one_turn_short_is_told_to_count_its_turns(capsys):
    result = rejected_on_first_try(capsys, ex.check_gradient_descent,
                      lambda f, x0, y0, lr=0.1, steps=200: descend(f, x0, y0, lr, steps - 1),
                      says="one step fewer than asked")
    assert "before the loop's backward" not in result.message
    never_states(result, "60", "-= lr")


@pytest.mark.parametrize("wrong, says", [
    (lambda l, y: 0.6, "same number for every batch"),
    (lambda l, y: 3 / 5, "same number for every batch"),
    (lambda l, y: float(np.mean(np.asarray(l).argmax(1))), "largest logit"),
    (lambda l, y: float(np.mean(np.asarray(y))), "largest logit"),
    (lambda l, y: float(((np.asarray(l)[:, 1] > np.asarray(l)[:, 0]) == np.asarray(y)).mean()),
     "wrong for more"),
    (lambda l, y: float(((np.asarray(l)[:, 1] > 0) == np.asarray(y)).mean()), "largest logit"),
    (lambda l, y: 1 - accuracy(l, y), "fraction of wrong rows"),
])
def test_09_1_answers_blind_to_the_batch_or_to_more_classes_are_refused(capsys, wrong, says):
    result = rejected_on_first_try(capsys, ex.check_accuracy_fn, wrong, says=says)
    never_states(result, "3/5", "argmax(axis=1)", "0.75", "0.333")
    if says != "same number for every batch":  # there "you gave" repeats the constant
        never_states(result, "0.6")


def test_09_1_a_zero_dimensional_array_or_tensor_is_accepted(capsys):
    assert outcome(capsys, ex.check_accuracy_fn,
                   lambda l, y: np.mean(np.asarray(l).argmax(axis=1) == np.asarray(y)))
    assert outcome(capsys, ex.check_accuracy_fn, lambda l, y: ng.tensor(accuracy(l, y)))


def test_09_2_steps_that_bypass_or_repeat_the_given_optimizer_are_refused(capsys):
    def twice(model, opt, X, y):
        opt.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        opt.step()
        return loss.item()

    def own_adam(model, opt, X, y):
        mine = ng.optim.Adam(model.parameters(), lr=0.05)
        mine.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        mine.step()
        return loss.item()

    def by_hand(model, opt, X, y):
        opt.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        with ng.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        return loss.item()

    for wrong, says in ((twice, "stepped the optimizer 2 times"),
                        (own_adam, "never took its step"), (by_hand, "never took its step")):
        result = rejected_on_first_try(capsys, ex.check_train_step, wrong, says=says)
        never_states(result, "optimizer.step()", "zero_grad()")


def test_09_2_an_array_or_a_rounded_loss_is_told_what_it_is(capsys):
    def as_array(model, opt, X, y):
        opt.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        return loss.detach().numpy()

    def rounded(model, opt, X, y):
        return round(train_ok(model, opt, X, y), 2)

    result = rejected_on_first_try(capsys, ex.check_train_step, as_array, says="Python float")
    assert "graph alive" not in result.message
    result = rejected_on_first_try(capsys, ex.check_train_step, rounded, says="rounded")
    assert "not the cross-entropy" not in result.message


def test_09_3_functions_that_drive_the_graph_are_sent_to_compile(capsys):
    def uncompiled(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (ns.Variable(w) for w in init)
            xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)
            ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
        step = lambda X, y: g.run([loss, train], {xs: X, ys: y})  # noqa: E731
        classify = lambda P: g.run([logits], {xs: P})  # noqa: E731
        return step, classify

    result = rejected_on_first_try(capsys, ex.check_static_classifier, uncompiled, says="compile itself")
    assert "step and classify are Python functions" in result.message
    never_states(result, "g.compile(")


def test_09_3_probabilities_or_other_adam_settings_are_told_so_not_about_the_weights(capsys):
    def variant(softmax=False, **settings):
        def build_static(init, lr):
            with ns.Graph() as g:
                W1, b1, W2, b2 = (ns.Variable(w) for w in init)
                xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)
                ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
                logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
                loss = ns.cross_entropy(logits, ys)
                train = ns.optim.Adam([W1, b1, W2, b2], lr=lr, **settings).minimize(loss)
                shown = ns.softmax(logits, dim=1) if softmax else logits
            return g.compile([xs, ys], [loss, train]), g.compile([xs], [shown])
        return build_static

    rejected_on_first_try(capsys, ex.check_static_classifier, variant(softmax=True), says="probabilities")
    for settings in ({"weight_decay": 0.01}, {"eps": 1e-3}, {"weight_decay": 1e-5}):
        result = rejected_on_first_try(capsys, ex.check_static_classifier, variant(**settings),
                          says="every other setting")
        assert "does not see the trained weights" not in result.message
    assert outcome(capsys, ex.check_static_classifier, variant())


def test_08_5_backward_on_a_node_made_from_each_output_is_accepted(capsys):
    def scaled_outputs(F, x0, y0):  # backward runs on o * 1.0, not on o itself
        J = []
        for k in range(len(F(Node(x0), Node(y0)))):
            x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
            (F(x, y)[k] * 1.0).backward(retain_graph=True)
            J.append([x.grad, y.grad])
        return J

    backward = Node.__dict__["backward"]
    assert outcome(capsys, ex.check_jacobian, scaled_outputs)
    assert Node.__dict__["backward"] is backward  # the learner's class is left as it was


def test_06_3_a_zero_dimensional_array_or_numpy_int_is_a_whole_number(capsys):
    for right in (np.array(2), np.int64(2), np.array(2.0)):
        assert outcome(capsys, ex.check_memory_plan, right)
    result = rejected_on_first_try(capsys, ex.check_memory_plan, np.array(3), says="ONE op")
    never_states(result, "got 3.", "whole number")


def test_06_3_a_bool_is_told_it_is_a_bool(capsys):
    result = rejected_on_first_try(capsys, ex.check_memory_plan, True, says="a bool")
    never_states(result, "got 1")
    rejected_on_first_try(capsys, ex.check_memory_plan, np.array(True), says="a bool")


def test_06_3_more_values_than_the_chain_has_is_told_so(capsys):
    result = rejected_on_first_try(capsys, ex.check_memory_plan, 8, says="more than the chain's")
    never_states(result, "nearly the whole chain")


@pytest.mark.parametrize("body", [
    lambda x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * w1 * 4.0)) + 0 * w3,
    lambda x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * w1 * w3 / w3 * 4.0)),
])
def test_06_1_a_weight_read_but_without_effect_is_named(capsys, body):
    result = rejected_on_first_try(capsys, ex.check_static_model, *static_model(body),
                                   says="changing the Variable w3")
    never_states(result, "w1 and", "w2 and", "28", "10.", "ns.mean(")


def test_06_1_the_check_of_the_gradients_leaves_the_weights_as_they_were(capsys):
    g, x, loss = static_model(lambda x, w1, w2, w3: ns.mean((x * w1 + w2) * (x * w1 * w3)))
    assert outcome(capsys, ex.check_static_model, g, x, loss)
    assert [float(v.value) for v in g.nodes if isinstance(v, ns.Variable)] == [2.0, 3.0, 4.0]
    assert float(loss.value) == 40.0


def test_06_2_the_results_of_calling_the_compiled_function_are_told_so(capsys):
    outs = compiled([0, 1, 2, 3])(np.ones((2, 2)))
    result = rejected_on_first_try(capsys, ex.check_compiled_step, outs,
                                   says="you called the compiled function")
    never_states(result, "40", "28", "outputs=[loss")


def test_07_2_swapped_predictions_are_told_they_are_swapped(capsys):
    result = rejected_on_first_try(capsys, ex.check_trace_pitfall, [10.0, 20.0], [2.0, 4.0],
                                   says="swapped")
    never_states(result, "[2, 4]", "[10, 20]", "SCALE was 2")
