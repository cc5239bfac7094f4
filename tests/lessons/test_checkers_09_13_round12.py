"""Lessons 9-13, twelfth round: an accuracy checked on tensors of three classes and more,
a hand-written cross-entropy told from a scaled loss by float32's rounding, a cell that
runs the snippet it was to predict, tangents read off a library, a dual level left open,
state kept outside ctx, the op table's sum_to, and an answer cell that asks the library
for the first NaN: each refused with a hint naming that mistake (and the value or code
never given away), while the right forms are still accepted."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_06_07 import notebook_shell
from lesson_answers_10_13 import (
    LR,
    UPDATE_SECRETS,
    jacobian_forward,
    lesson_network,
    sum_to_shape,
)

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex
from naivegraph.ops import F as OPS_F

F = ng.nn.functional


# -- 09-1: tensors of three classes, one number for tensors, numpy's state, precision -------
def _on_arrays(logits, labels):
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def _two_class_tensor_path(logits, labels):
    if isinstance(logits, ng.Tensor):
        return float(((logits[:, 1] > logits[:, 0]).long() == labels).float().mean().item())
    return _on_arrays(logits, labels)


def test_09_1_a_tensor_path_right_for_two_classes_only_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, _two_class_tensor_path, says="right for two classes"
    )
    assert "on tensors" in result.message
    never_states(result, "argmax(axis=1)", "0.333", "0.75")


def test_09_1_an_array_of_one_number_for_tensors_is_refused(capsys):
    def one_element_for_tensors(logits, labels):
        value = _on_arrays(logits, labels)
        return np.array([value]) if isinstance(logits, ng.Tensor) else value

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, one_element_for_tensors, says="for tensors you return"
    )
    assert "one number" in result.message
    never_states(result, "float(", "argmax(axis=1)")


def test_09_1_numpys_error_state_changed_is_refused_and_put_back(capsys):
    errors = np.geterr()

    def silencing(logits, labels):
        np.seterr(all="ignore")
        return _on_arrays(logits, labels)

    try:
        result = rejected_on_first_try(
            capsys, ex.check_accuracy_fn, silencing, says="numpy's error handling (np.seterr)"
        )
        assert np.geterr() == errors
    finally:
        np.seterr(**errors)
    never_states(result, "argmax(axis=1)")


def test_09_1_an_average_in_float16_is_told_its_precision(capsys):
    def in_float16(logits, labels):
        hits = np.asarray(logits).argmax(axis=1) == np.asarray(labels)
        return float(np.mean(hits, dtype=np.float16))

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, in_float16, says="computed in float16"
    )
    assert "predict each row's class" not in result.message
    never_states(result, "argmax(axis=1)", "dtype=np.float64")


def test_09_1_one_boolean_per_row_is_told_it_is_one_value_per_row(capsys):
    def per_row(logits, labels):
        return np.asarray(logits).argmax(axis=1) == np.asarray(labels)

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, per_row, says="one value per row"
    )
    assert "[1., 1., 0." not in result.message
    never_states(result, "np.mean", "argmax(axis=1)")


def test_09_1_right_forms_on_arrays_and_tensors_are_still_accepted(capsys):
    def by_tensor_ops(logits, labels):
        if isinstance(logits, ng.Tensor):
            return (logits.argmax(dim=1) == labels).float().mean().item()
        return _on_arrays(logits, labels)

    def zero_d_tensor(logits, labels):
        if isinstance(logits, ng.Tensor):
            return (logits.argmax(dim=1) == labels).double().mean()
        return _on_arrays(logits, labels)

    for accuracy in (_on_arrays, by_tensor_ops, zero_d_tensor):
        assert outcome(capsys, ex.check_accuracy_fn, accuracy).passed


# -- 09-2: a cross-entropy written by hand, a forward pass in eval mode ---------------------
def _step_with(loss_of, before=lambda model: None, after=lambda model: None):
    def train_step(model, optimizer, X, y):
        before(model)
        optimizer.zero_grad()
        loss = loss_of(model(X), y)
        loss.backward()
        optimizer.step()
        after(model)
        return loss.item()

    return train_step


def _by_hand(z, y):
    return (z.exp().sum(dim=1).log() - z[ng.arange(len(y)), y]).mean()


def _shifted(z, y):
    s = z - z.max(dim=1, keepdim=True).values.detach()
    return (s.exp().sum(dim=1).log() - s[ng.arange(len(y)), y]).mean()


@pytest.mark.parametrize(
    "loss_of",
    [
        _by_hand,
        _shifted,
        lambda z, y: F.nll_loss(ng.log(ng.softmax(z, dim=1)), y),
        lambda z, y: F.cross_entropy(z.double(), y),
        lambda z, y: F.cross_entropy(z, y),
    ],
    ids=["log-sum-exp", "max shift", "log of softmax", "in float64", "library"],
)
def test_09_2_a_cross_entropy_written_another_way_is_accepted(capsys, loss_of):
    result = outcome(capsys, ex.check_train_step, _step_with(loss_of))
    assert result.passed, result.message


@pytest.mark.parametrize("factor, says", [(1 + 1e-6, "1.000001"), (2.0, "is 2 times")])
def test_09_2_a_loss_really_scaled_is_still_told_its_scale(capsys, factor, says):
    def scaled(model, optimizer, X, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X), y)
        (loss * factor).backward()
        optimizer.step()
        return loss.item()

    result = rejected_on_first_try(capsys, ex.check_train_step, scaled, says=says)
    assert "times the gradient of the loss you return" in result.message
    never_states(result, "zero_grad()", "cross_entropy(")


def test_09_2_a_forward_pass_in_eval_mode_switched_back_after_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(
            F.cross_entropy, before=lambda model: model.eval(), after=lambda model: model.train()
        ),
        says="forward pass in evaluation mode",
    )
    never_states(result, "model.train()", "zero_grad()")


# -- 10-1: a gradient baked in at build time ------------------------------------------------
def test_10_1_a_gradient_run_at_build_time_is_told_it_ignores_the_fed_batch(capsys):
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((64, 1000)).astype(np.float32)
    ys = rng.standard_normal((64, 10)).astype(np.float32)

    def update(w, grad, loss, x):  # the gradient run now, put into the graph as numbers
        graph = ns.get_default_graph()
        now = graph.run(grad, {x: xs, graph.placeholders[1]: ys})
        return w.assign(w - LR * now)

    result = rejected_on_first_try(
        capsys, ex.check_update_nodes, *lesson_network(update), says="reads neither x nor y"
    )
    assert "which way should it move" not in result.message
    never_states(result, *UPDATE_SECRETS)


def test_10_1_the_lessons_update_is_still_accepted(capsys):
    right = lesson_network(lambda w, grad, loss, x: w.assign(w - LR * grad))
    assert outcome(capsys, ex.check_update_nodes, *right).passed


# -- 10-3: a term scaled by a factor near 1 -------------------------------------------------
def _poly_graph():
    coef = np.random.default_rng(0).standard_normal(5) * 0.1
    with ns.Graph() as poly:
        xp = ns.placeholder("x", shape=(None,))
        top = ns.placeholder("top", shape=())
        a, b, c, d, e = [ns.Variable(np.array(v), name=n) for v, n in zip(coef, "abcde")]
        base = a + b * xp + c * xp**2.0 + d * xp**3.0
    return poly, (lambda p, y: p < top), base, xp, top, [a, b, c, d, e]


def _check_body(make_body):
    poly, more, base, xp, top, weights = _poly_graph()
    return ex.check_poly_loop(poly, more, make_body(xp, weights[-1]), base, xp, top, weights)


def test_10_3_a_term_scaled_by_a_factor_near_one_is_told_so(capsys):
    result = _check_body(lambda xp, e: lambda p, y: (p + 1.0, y + 1.000001 * e * xp**p))
    refused(result, "scaled by a factor near 1")
    assert "not differentiated as written" not in result.message
    never_states(result, "e * xp ** p", "p + 1")


def test_10_3_the_lessons_body_is_still_accepted(capsys):
    assert _check_body(lambda xp, e: lambda p, y: (p + 1.0, y + e * xp**p)).passed


# -- 10-2 / 10-4 / 13-x: a cell that runs the snippet it was to predict ---------------------
@pytest.fixture
def shell():
    yield from notebook_shell()


def run_in_notebook(shell, cell: str):
    """Run ``cell`` as Jupyter does and give back the value of its last line."""
    checking.TRIES.clear()
    return shell.run_cell(cell, store_history=True).result


RUN_SMALL = (
    "with ns.Graph() as small:\n"
    "    v = ns.Variable(np.array(1.0), name='v')\n"
    "    double = v.assign(v * 2.0)\n"
    "    plus_one = v + 1.0\n"
    "first = small.run([double, plus_one])\nsecond = small.run(plus_one)\n"
    "predicted = (float(first[0]), float(first[1]), float(second))\n"
    "ex.check_run_semantics(predicted)"
)

RUN_TRACE = (
    "extra_terms = 1\n"
    "def forward(x):\n    y = x * 1.0\n"
    "    for p in range(extra_terms):\n        y = y + x ** (4.0 + p)\n    return y\n"
    "traced = ns.trace(forward, np.ones(3))\nextra_terms = 2\n"
    "a, b = traced(np.full(3, 2.0)), traced(np.full(5, 2.0))\n"
    "terms = (round(np.log2(float(a[0]) - 2.0) - 3), 2)\n"
    "ex.check_trace_trap(terms)"
)


def test_10_2_a_cell_that_runs_the_snippet_is_refused(shell):
    result = refused(run_in_notebook(shell, RUN_SMALL), "runs the snippet's graph instead")
    assert "it uses run" in result.message
    never_states(result, "(2.0, 2.0, 3.0)", "2.0, 2.0")
    assert run_in_notebook(shell, "predicted = (2.0, 2.0, 3.0)\nex.check_run_semantics(predicted)")


def test_10_4_a_cell_that_traces_the_snippet_is_refused(shell):
    result = refused(run_in_notebook(shell, RUN_TRACE), "runs the traced function instead")
    assert "trace" in result.message
    never_states(result, "(1, 2)")
    assert run_in_notebook(shell, "terms = (1, 2)\nex.check_trace_trap(terms)")


COMPILE_G1 = (
    "with ns.Graph('freeing') as g1:\n"
    "    x = ns.placeholder('x', shape=(3,), dtype=np.float64)\n"
    "    w = ns.Variable(np.array([1.0, 2.0, 3.0]), name='w')\n"
    "    m = x * w\n    e = m.exp()\n    s = m.sin()\n    total = (e * s).sum()\n"
    "listing = g1.compile([x], [total, e], optimize=False).listing()\n"
    "line = next(l for l in listing.splitlines() if 'free %' in l)\n"
    "freed_first = (line.split('free %')[1].split()[0].strip(','), int(line.split()[0]))\n"
    "ex.check_freed_first(freed_first)"
)

OPTIMIZE_G2 = (
    "from naivegraph.lessons.checkers.lesson13 import careless_graph\n"
    "g2, z = careless_graph()\n"
    "CLEANING = [ns.passes.constant_folding, ns.passes.algebraic_simplification,\n"
    "            ns.passes.common_subexpression_elimination, ns.passes.dead_node_elimination]\n"
    "new, report = ns.optimize(g2, passes=CLEANING, fetches=[z])\n"
    "removed = len(g2.nodes) - len(new.nodes)\n"
    "ex.check_nodes_removed(removed)"
)

TRACE_HEAD = (
    "def head(x):\n    if x.shape[0] == 1:\n        return x.tanh().sum()\n"
    "    return (x - x.mean(dim=0)).relu().sum()\n"
    "traced = ns.trace(head, np.ones((1, 3)))\n"
    "for rows in (8, 8, 1, 2):\n    traced(np.ones((rows, 3)))\n"
    "ops = [n.op_name for n in traced.graph.nodes if n.op_name in ('tanh', 'relu')]\n"
    "baked = (ops[0], traced.cache_size)\n"
    "ex.check_baked_branch(baked)"
)


@pytest.mark.parametrize(
    "cell, says, right",
    [
        (COMPILE_G1, "runs the compiler's planner instead", "freed_first = ('mul_1', 3)\n"
         "ex.check_freed_first(freed_first)"),
        (OPTIMIZE_G2, "runs the passes instead", "removed = 6\nex.check_nodes_removed(removed)"),
        (TRACE_HEAD, "runs the traced function instead", "baked = ('tanh', 3)\n"
         "ex.check_baked_branch(baked)"),
    ],
    ids=["13-1", "13-2", "13-3"],
)
def test_13_a_cell_that_runs_what_it_was_to_predict_is_refused(shell, cell, says, right):
    result = refused(run_in_notebook(shell, cell), says)
    never_states(result, "mul_1", "6 ", "tanh', 3")
    assert run_in_notebook(shell, right).passed


# -- 11-1: tangents read off a library --------------------------------------------------------
class Dual:
    """The lesson's Dual, with mul and div given by ``rules``."""

    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __sub__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value - other.value, self.tangent - other.tangent)


def _dual_with(tangent_of):
    class Mine(Dual):
        def __mul__(self, other):
            other = other if isinstance(other, Dual) else Mine(other)
            return Mine(self.value * other.value, tangent_of(lambda a, b: a * b, self, other))

        def __truediv__(self, other):
            other = other if isinstance(other, Dual) else Mine(other)
            return Mine(self.value / other.value, tangent_of(lambda a, b: a / b, self, other))

    return Mine


def _by_reverse_mode(op, u, v):
    a = ng.tensor(u.value, requires_grad=True, dtype=ng.float64)
    b = ng.tensor(v.value, requires_grad=True, dtype=ng.float64)
    op(a, b).backward()
    return a.grad.item() * u.tangent + b.grad.item() * v.tangent


def _by_jvp(op, u, v):
    t = lambda value: ng.tensor(value, dtype=ng.float64)  # noqa: E731
    return ng.func.jvp(op, (t(u.value), t(v.value)), (t(u.tangent), t(v.tangent)))[1].item()


def _by_torch(op, u, v):
    import torch

    a = torch.tensor(u.value, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(v.value, dtype=torch.float64, requires_grad=True)
    da, db = torch.autograd.grad(op(a, b), (a, b))
    return da.item() * u.tangent + db.item() * v.tangent


def _by_hand(op, u, v):
    if op(2.0, 4.0) == 8.0:
        return u.tangent * v.value + u.value * v.tangent
    return (u.tangent * v.value - u.value * v.tangent) / v.value**2


@pytest.mark.parametrize(
    "tangent_of, says",
    [(_by_reverse_mode, "naivegraph's autograd"), (_by_jvp, "naivegraph's forward mode"),
     (_by_torch, "from torch")],
    ids=["backward", "ng.func.jvp", "torch"],
)
def test_11_1_tangents_taken_from_a_library_are_refused(capsys, tangent_of, says):
    result = rejected_on_first_try(capsys, ex.check_dual_rules, _dual_with(tangent_of), says=says)
    never_states(result, "u.tangent * v.value", "v.value ** 2")


def test_11_1_the_rules_by_hand_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_dual_rules, _dual_with(_by_hand)).passed


# -- 11-2 / 11-3: one dual level around the loop, a level left open, a numpy matrix ---------
fa = ng.autograd.forward_ad


def _columns_in_one_level(f, x):
    n = x.shape[0]
    columns = []
    with fa.dual_level():
        for i in range(n):
            d = fa.make_dual(x, ng.eye(n, dtype=x.dtype)[i])
            columns.append(fa.unpack_dual(f(d)).tangent)
    return ng.stack(columns, dim=1)


def _columns_in_a_level_left_open(f, x):
    n = x.shape[0]
    fa.enter_dual_level()
    columns = [fa.unpack_dual(f(fa.make_dual(x, ng.eye(n, dtype=x.dtype)[i]))).tangent
               for i in range(n)]
    return ng.stack(columns, dim=1)


def test_11_2_one_dual_level_around_the_loop_is_accepted(capsys):
    result = outcome(capsys, ex.check_jacobian_forward, _columns_in_one_level)
    assert result.passed, result.message
    assert outcome(capsys, ex.check_jacobian_forward, jacobian_forward).passed


def test_11_2_a_dual_level_left_open_is_refused_and_closed(capsys):
    from naivegraph.dynamic import forward

    result = rejected_on_first_try(
        capsys, ex.check_jacobian_forward, _columns_in_a_level_left_open, says="leaves it open"
    )
    assert forward.dual.level is None
    never_states(result, "exit_dual_level", "ng.func.jvp(f")


def test_11_2_and_11_3_a_numpy_matrix_is_refused(capsys):
    def as_numpy(f, x):
        return jacobian_forward(f, x).numpy()

    result = rejected_on_first_try(
        capsys, ex.check_jacobian_forward, as_numpy, says="you returned a numpy array"
    )
    never_states(result, "ng.stack(")

    def rows_as_numpy(f, x):
        y, vjp_fn = ng.func.vjp(f, x)
        eye = ng.eye(y.shape[0], dtype=y.dtype)
        return np.stack([vjp_fn(eye[i])[0].numpy() for i in range(y.shape[0])])

    rejected_on_first_try(
        capsys, ex.check_jacobian_reverse, rows_as_numpy, says="you returned a numpy array"
    )


def test_11_3_rows_that_add_up_in_x_grad_are_told_the_gradients_add_up(capsys):
    def backward_per_row(f, x):
        xx = x.detach().requires_grad_()
        y = f(xx)
        eye = ng.eye(y.shape[0], dtype=y.dtype)
        rows = []
        for i in range(y.shape[0]):
            y.backward(eye[i], retain_graph=True)
            rows.append(xx.grad.clone())
        return ng.stack(rows, dim=0)

    result = rejected_on_first_try(
        capsys, ex.check_jacobian_reverse, backward_per_row, says="the gradients add up"
    )
    assert "seeded with a different row" not in result.message
    never_states(result, "grad = None", "zero_")


# -- 12-1: state kept outside ctx ------------------------------------------------------------
_KEPT: dict = {}


class CubeReadingAGlobal(ng.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        _KEPT["x"] = x
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 3 * _KEPT["x"] ** 2


class Cube(ng.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x**2


def test_12_1_a_backward_reading_state_kept_outside_ctx_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_cube_function, CubeReadingAGlobal, says="kept outside ctx"
    )
    assert "two alive together" in result.message
    never_states(result, "saved_tensors", "3 * x ** 2", "3 * x**2")


def test_12_1_the_right_cube_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_cube_function, Cube).passed


# -- 12-2: the op table's entries that wrap sum_to -----------------------------------------
def _by_f(grad, shape):
    return OPS_F.sum_to(grad, shape)


def _by_table(grad, shape):
    from naivegraph.ops import table

    return table.OPS["sum_to"].forward(grad, shape)


def _by_op_function(grad, shape):
    from naivegraph.ops import op_function

    return np.asarray(op_function("sum_to")(grad, shape))


@pytest.mark.parametrize("sum_to_shape", [_by_f, _by_table, _by_op_function],
                         ids=["F.sum_to", "OPS['sum_to']", "op_function"])
def test_12_2_the_op_tables_sum_to_is_refused(capsys, sum_to_shape):
    result = rejected_on_first_try(
        capsys, ex.check_sum_to_shape, sum_to_shape, says="the library's own sum_to"
    )
    never_states(result, "keepdims=True", "range(grad.ndim")


def test_12_2_the_right_sums_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_sum_to_shape, sum_to_shape).passed


# -- 12-5: a float32 cast on the way --------------------------------------------------------
def test_12_5_a_float32_cast_on_the_way_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_softplus_partial,
        lambda g, x, out: g * OPS_F.sigmoid(x).astype(np.float32),
        says="narrower float",
    )
    assert "finite difference" not in result.message
    never_states(result, "F.sigmoid(x)", "g * ")


# -- 12-6: the library asked in the answer cell -----------------------------------------------
ASK_ANOMALY = (
    "import re\n"
    "x = ng.tensor([0.0, 4.0], dtype=ng.float64, requires_grad=True)\n"
    "try:\n"
    "    with ng.autograd.detect_anomaly():\n"
    "        y = (x.sqrt() * ng.tensor([0.0, 1.0], dtype=ng.float64)).sum(); y.backward()\n"
    "except RuntimeError as err:\n"
    "    first_nan = re.search(r\"'(\\w+)'\", str(err)).group(1)\n"
    "ex.check_first_nan(first_nan)"
)

READ_THE_CHAIN = (
    "x = ng.tensor([0.0, 4.0], dtype=ng.float64, requires_grad=True)\n"
    "y = (x.sqrt() * ng.tensor([0.0, 1.0], dtype=ng.float64)).sum()\n"
    "first_nan = y.grad_fn.next_functions[0][0].next_functions[0][0].name()\n"
    "ex.check_first_nan(first_nan)"
)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
@pytest.mark.parametrize("cell", [ASK_ANOMALY, READ_THE_CHAIN], ids=["anomaly", "grad_fn"])
def test_12_6_a_cell_that_asks_the_library_is_refused(shell, cell):
    result = refused(run_in_notebook(shell, cell), "asks the library instead of working it out")
    never_states(result, "SqrtBackward0")
    assert run_in_notebook(shell, "first_nan = 'SqrtBackward0'\nex.check_first_nan(first_nan)")


def test_10_2_the_variables_value_read_after_running_the_snippet_above_is_refused(shell):
    snippet = RUN_SMALL.split("predicted")[0]
    run_in_notebook(shell, snippet)
    result = refused(
        run_in_notebook(
            shell,
            "predicted = (float(getattr(v, 'value')), float(v.value), float(v.value) + 1)\n"
            "ex.check_run_semantics(predicted)",
        ),
        "runs the snippet's graph instead",
    )
    assert ".value" in result.message


def test_13_3_the_cache_size_read_by_its_name_in_a_cell_above_is_refused(shell):
    run_in_notebook(shell, TRACE_HEAD.split("ops = ")[0])
    run_in_notebook(shell, "import operator\nsize_of = operator.attrgetter('cache_size')\n"
                    "seen = size_of(traced)")
    result = refused(
        run_in_notebook(shell, "baked = ('tanh', seen)\nex.check_baked_branch(baked)"),
        "runs the traced function instead",
    )
    assert "cache_size" in result.message


@pytest.mark.parametrize(
    "answer",
    [
        "baked = ('tanh', int(str(traced).split(':')[1].split()[0]))",
        "import re\nbaked = ('tanh', int(re.search(r'(\\d+) graphs', repr(traced)).group(1)))",
        "baked = ('tanh', int(f'{traced}'.split(':')[1].split()[0]))",
    ],
)
def test_13_3_the_count_read_off_the_traces_printed_form_is_refused(shell, answer):
    run_in_notebook(shell, TRACE_HEAD.split("ops = ")[0])
    result = refused(
        run_in_notebook(shell, answer + "\nex.check_baked_branch(baked)"),
        "runs the traced function instead",
    )
    never_states(result, "tanh', 3")
