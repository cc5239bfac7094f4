"""Lessons 9-13, thirteenth round: a loss right for two classes only, a step that reseeds
the generator, changes the optimizer's lr or writes into its batch, a labels' placeholder
of another integer dtype, a tangent rule wrong for a negative factor, a matmul backward
written for one set of sizes, and hints that now name the mistake made (an integer
division, truncated logits, a float16 placeholder, an exponent read off top, a function
that ignores its input, a clamp, a None answer): each refused with a hint naming that
mistake (and the value or code never given away), while the right forms are still
accepted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from dual_numbers import dual_with, product_rule, quotient_rule
from lesson_answers_10_13 import jacobian_forward

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex
from naivegraph.ops import F as OPS_F  # the op table's F, as lesson 12 imports it

F = ng.nn.functional


# -- 09-1: an integer division, logits made whole numbers -----------------------------------
def _on_arrays(logits, labels):
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def test_09_1_an_integer_division_is_told_the_fraction_was_cut_off(capsys):
    def floored(logits, labels):
        return (np.asarray(logits).argmax(axis=1) == np.asarray(labels)).sum() // len(labels)

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, floored, says="cut off by an integer division"
    )
    assert "largest logit" not in result.message
    never_states(result, "np.mean", "argmax(axis=1)", "/ len(")


def test_09_1_logits_cast_to_int_are_told_they_were_made_whole_numbers(capsys):
    def truncated(logits, labels):
        return float(np.mean(np.asarray(logits).astype(int).argmax(axis=1) == np.asarray(labels)))

    result = rejected_on_first_try(
        capsys, ex.check_accuracy_fn, truncated, says="logits made whole numbers"
    )
    assert "right for two classes" not in result.message
    never_states(result, "argmax(axis=1)", "astype(float)")


def test_09_1_the_right_accuracy_is_still_accepted(capsys):
    def by_true_division(logits, labels):
        return (np.asarray(logits).argmax(axis=1) == np.asarray(labels)).sum() / len(labels)

    for accuracy in (_on_arrays, by_true_division):
        assert outcome(capsys, ex.check_accuracy_fn, accuracy).passed


# -- 09-2: two classes only, a seed, the optimizer's lr, the batch written into -------------
def _step_with(loss_of, before=lambda model, optimizer, X: None):
    def train_step(model, optimizer, X, y):
        before(model, optimizer, X)
        optimizer.zero_grad()
        loss = loss_of(model(X), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    return train_step


def _binary_on_the_difference(z, y):
    return F.binary_cross_entropy_with_logits(z[:, 1] - z[:, 0], y.float())


def _set_lr(model, optimizer, X):
    for group in optimizer.param_groups:
        group["lr"] = 0.01


def _centre_in_place(model, optimizer, X):
    with ng.no_grad():
        X -= X.mean(dim=0)


def test_09_2_a_binary_loss_on_the_logit_difference_is_refused_on_three_classes(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(_binary_on_the_difference),
        says="wrong for one with three classes",
    )
    assert "ALL its classes" in result.message
    never_states(result, "cross_entropy(", "zero_grad()")


def test_09_2_a_seed_set_inside_the_step_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(F.cross_entropy, before=lambda model, optimizer, X: ng.manual_seed(0)),
        says="reseeds the global random generator (ng.manual_seed)",
    )
    never_states(result, "cross_entropy(", "zero_grad()")


def test_09_2_a_learning_rate_changed_in_the_step_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(F.cross_entropy, before=_set_lr),
        says="changed the optimizer's lr (in its param_groups)",
    )
    assert "scaled loss" not in result.message
    never_states(result, "0.5", "cross_entropy(")


def test_09_2_a_batch_written_into_in_place_is_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_train_step,
        _step_with(F.cross_entropy, before=_centre_in_place),
        says="changed the X it was given, in place",
    )
    assert "not the cross-entropy" not in result.message
    never_states(result, "cross_entropy(", "zero_grad()")


@pytest.mark.parametrize(
    "loss_of",
    [
        F.cross_entropy,
        lambda z, y: (z.exp().sum(dim=1).log() - z[ng.arange(len(y)), y]).mean(),
        lambda z, y: F.nll_loss(ng.log(ng.softmax(z, dim=1)), y),
        lambda z, y: F.cross_entropy(z.double(), y),
    ],
    ids=["library", "log-sum-exp", "log of softmax", "in float64"],
)
def test_09_2_a_cross_entropy_over_all_classes_is_still_accepted(capsys, loss_of):
    result = outcome(capsys, ex.check_train_step, _step_with(loss_of))
    assert result.passed, result.message


# -- 09-3: the dtypes of the placeholders ----------------------------------------------------
def _build_static_with(points_dtype, labels_dtype):
    def build_static(init, lr):
        with ns.Graph() as g:
            W1, b1, W2, b2 = (
                ns.Variable(w, name=n) for w, n in zip(init, ("W1", "b1", "W2", "b2"), strict=True)
            )
            xs = ns.placeholder("X", shape=(None, 2), dtype=points_dtype)
            ys = ns.placeholder("y", shape=(None,), dtype=labels_dtype)
            logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
            loss = ns.cross_entropy(logits, ys)
            train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
        return g.compile([xs, ys], [loss, train]), g.compile([xs], [logits])

    return build_static


def test_09_3_a_float16_placeholder_is_told_its_own_dtype(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_classifier,
        _build_static_with("float16", "int64"),
        says="you gave a float16 placeholder for float32 weights",
    )
    assert "float64" not in result.message


@pytest.mark.parametrize("labels_dtype", ["int32", "int16"])
def test_09_3_labels_of_another_integer_dtype_are_refused(capsys, labels_dtype):
    result = rejected_on_first_try(
        capsys,
        ex.check_static_classifier,
        _build_static_with("float32", labels_dtype),
        says=f"your labels' placeholder is {labels_dtype} where the exercise asks for int64",
    )
    assert f"refuses {labels_dtype} ones" in result.message
    never_states(result, "dtype=np.int64", 'placeholder("y"')


def test_09_3_int64_labels_are_still_accepted(capsys):
    for labels_dtype in ("int64", np.int64, ng.int64):
        result = outcome(
            capsys, ex.check_static_classifier, _build_static_with(np.float32, labels_dtype)
        )
        assert result.passed, result.message


# -- 10-3: an exponent read off top, one too low ----------------------------------------------
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
    return ex.check_poly_loop(poly, more, make_body(xp, weights[-1], top), base, xp, top, weights)


def test_10_3_an_exponent_read_off_top_is_told_every_term_has_that_exponent(capsys):
    result = _check_body(lambda xp, e, top: lambda p, y: (p + 1.0, y + e * xp**top))
    assert result.status == "fail"
    assert "every extra term of yours has the same exponent, top" in result.message
    assert "all 2 are x to the 6th" in result.message
    assert "one too high" not in result.message
    never_states(result, "e * xp ** p", "xp**p", "p + 1")


def test_10_3_an_exponent_one_too_low_is_told_so(capsys):
    result = _check_body(lambda xp, e, top: lambda p, y: (p + 1.0, y + e * xp ** (p - 1.0)))
    assert result.status == "fail"
    assert "your exponents are one too low" in result.message
    never_states(result, "e * xp ** p", "xp**p", "p + 1")


def test_10_3_one_too_high_and_the_lessons_body_are_still_told_apart(capsys):
    high = _check_body(lambda xp, e, top: lambda p, y: (p + 1.0, y + e * xp ** (p + 1.0)))
    assert "your exponents are one too high" in high.message
    assert _check_body(lambda xp, e, top: lambda p, y: (p + 1.0, y + e * xp**p)).passed


# -- 11-1: a rule right for a positive first factor only -------------------------------------
def _mul_by_abs(u, v):
    return u.tangent * v.value + abs(u.value) * v.tangent


def _mul_on_a_branch(u, v):
    if u.value > 0:
        return u.tangent * v.value + u.value * v.tangent
    return u.tangent * v.value


def _div_by_abs(u, v):
    return (u.tangent * v.value - abs(u.value) * v.tangent) / v.value**2


@pytest.mark.parametrize(
    "mul, div, op",
    [
        (_mul_by_abs, quotient_rule, "mul"),
        (_mul_on_a_branch, quotient_rule, "mul"),
        (product_rule, _div_by_abs, "div"),
    ],
    ids=["abs in mul", "branch in mul", "abs in div"],
)
def test_11_1_a_rule_right_for_a_positive_u_only_is_refused(capsys, mul, div, op):
    result = rejected_on_first_try(
        capsys,
        ex.check_dual_rules,
        dual_with(mul, div),
        says=f"your {op} is right wherever u's value is positive and wrong at u = -2",
    )
    assert "must not depend on u's sign" in result.message
    never_states(result, "u.tangent * v.value", "u'v + uv'", "v.value ** 2")


def test_11_1_the_rules_by_hand_are_still_accepted_for_every_sign(capsys):
    result = outcome(capsys, ex.check_dual_rules, dual_with(product_rule, quotient_rule))
    assert result.passed, result.message


# -- 11-2 / 11-3: a function that ignores its input, a JVP taken at the seed ------------------
def _columns_of_a_constant(f, x):
    y0 = f(x)
    n = x.shape[0]
    columns = []
    for i in range(n):
        seed = ng.eye(n, dtype=x.dtype)[i]
        columns.append(ng.func.jvp(lambda z: y0 + 0 * z.sum(), (x,), (seed,))[1])
    return ng.stack(columns, dim=1)


def _columns_at_the_seeds(f, x):
    n = x.shape[0]
    seeds = [ng.eye(n, dtype=x.dtype)[i] for i in range(n)]
    return ng.stack([ng.func.jvp(f, (seed,), (seed,))[1] for seed in seeds], dim=1)


def _rows_of_a_constant(f, x):
    y0 = f(x).detach()
    y, vjp_fn = ng.func.vjp(lambda z: y0 + 0 * z.sum(), x)
    eye = ng.eye(y.shape[0], dtype=y.dtype)
    return ng.stack([vjp_fn(eye[i])[0] for i in range(y.shape[0])], dim=0)


def test_11_2_a_function_that_ignores_its_input_is_told_its_columns_are_zero(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_jacobian_forward,
        _columns_of_a_constant,
        says="every one of your columns is zero",
    )
    assert "does not depend on its input" in result.message
    assert "seeded with a different row" not in result.message
    never_states(result, "ng.func.jvp(f, (x,)", "(seed,))")


def test_11_3_a_function_that_ignores_its_input_is_told_its_rows_are_zero(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_jacobian_reverse,
        _rows_of_a_constant,
        says="every one of your rows is zero",
    )
    never_states(result, "ng.func.vjp(f, x)")


def test_11_2_a_jvp_taken_at_the_seed_is_told_where_it_differentiates(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_jacobian_forward,
        _columns_at_the_seeds,
        says="differentiate f at each seed, not at x",
    )
    assert "seeded with a different row" not in result.message
    never_states(result, "ng.func.jvp(f, (x,)", "(x,), (seed,)")


def test_11_2_the_columns_of_jvps_at_x_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_jacobian_forward, jacobian_forward).passed


# -- 12-3: sizes written into the rule -------------------------------------------------------
def _rule_reshaped_to_the_first_sizes(X, W, dY):
    return (dY @ W.T).reshape(5, 3), (X.T @ dY).reshape(3, 2)


def _rule_slicing_dy_to_the_first_width(X, W, dY):
    return dY @ W.T, X.T @ dY[:, :2]


@pytest.mark.parametrize(
    "matmul_backward, says",
    [
        (_rule_reshaped_to_the_first_sizes, "it raises ValueError"),
        (_rule_slicing_dy_to_the_first_width, "it gives shapes (4, 7) and (7, 2)"),
    ],
    ids=["reshape", "slice"],
)
def test_12_3_a_rule_written_for_one_set_of_sizes_is_refused(capsys, matmul_backward, says):
    result = rejected_on_first_try(
        capsys,
        ex.check_matmul_backward,
        matmul_backward,
        says="right for X (5, 3) and W (3, 2), but for X (4, 7), W (7, 6) and dY (4, 6)",
    )
    assert says in result.message
    assert "sizes written into the code" in result.message
    never_states(result, "dY @ W.T", "X.T @ dY", "W.T")


def test_12_3_the_rule_for_every_size_is_still_accepted(capsys):
    def by_einsum(X, W, dY):
        return np.einsum("ik,jk->ij", dY, W), np.einsum("ki,kj->ij", X, dY)

    for rule in (lambda X, W, dY: (dY @ W.T, X.T @ dY), by_einsum):
        result = outcome(capsys, ex.check_matmul_backward, rule)
        assert result.passed, result.message


# -- 12-5: a clamp is no overflow; 12-6: None is no name ---------------------------------------
def test_12_5_a_clamped_x_is_told_the_rule_is_off_not_that_it_overflows(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_softplus_partial,
        lambda g, x, out: g * OPS_F.sigmoid(OPS_F.clamp(x, -10, 10)),
        says="finite, and still not the derivative there",
    )
    assert "a clamp, a cut-off" in result.message
    assert "inf / inf" not in result.message and "overflows to inf" not in result.message
    never_states(result, "sigmoid(x)", "g * F.", "1 - F.exp")


def test_12_5_a_rule_that_overflows_is_still_told_so(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_softplus_partial,
        lambda g, x, out: g * OPS_F.exp(x) / (1 + OPS_F.exp(x)),
        says="inf / inf is nan",
    )
    never_states(result, "sigmoid(x)", "g * F.")


def test_12_6_none_is_told_it_is_no_name(capsys):
    result = rejected_on_first_try(capsys, ex.check_first_nan, None, says="None is no op's name")
    assert "replace every" not in result.message
    never_states(result, "SqrtBackward0", "Sqrt")
    assert outcome(capsys, ex.check_first_nan, "SqrtBackward0").passed


# -- 13-2: a count too large, a negative count ---------------------------------------------------
def test_13_2_a_count_of_every_node_is_told_it_must_be_fewer(capsys):
    result = rejected_on_first_try(capsys, ex.check_nodes_removed, 14, says="fewer than 14 can go")
    assert "between 0 and" not in result.message
    never_states(result, "6 ", " 6.", "8 nodes")


def test_13_2_a_negative_count_is_told_a_count_is_not_negative(capsys):
    result = rejected_on_first_try(capsys, ex.check_nodes_removed, -8, says="0 or more")
    never_states(result, "6 ", " 6.", "8 nodes")
    assert outcome(capsys, ex.check_nodes_removed, 6).passed


# -- 12-5 / 13-2: what the notebook shows before the exercise passes -------------------------------
def _cells_after(lesson: str, exercise: str):
    """The learner's notebook cells that follow the exercise's cell, up to the next exercise."""
    nbformat = pytest.importorskip("nbformat")
    (path,) = (Path(__file__).resolve().parents[2] / "naivegraph" / "course").glob(
        f"{lesson}_*.ipynb"
    )
    cells = nbformat.read(str(path), as_version=4).cells
    start = next(
        i
        for i, c in enumerate(cells)
        if c.cell_type == "code" and c.source.startswith(f"# Exercise {exercise}")
    )
    after = []
    for cell in cells[start + 1 :]:
        if cell.source.startswith(("# Exercise ", "### Exercise ")):
            break
        after.append(cell)
    return after


def test_12_5_the_markdown_after_the_exercise_states_no_accepted_rule():
    markdown = [c.source for c in _cells_after("12", "12-5") if c.cell_type == "markdown"]
    assert markdown
    for text in markdown:
        for rule in ("F.sigmoid(x)", "1 - F.exp(-out)", "sigmoid` and a `mul"):
            assert rule not in text, (rule, text)
    gated = [c.source for c in _cells_after("12", "12-5") if "F.sigmoid(x)" in c.source]
    assert gated and all('if ex.solved("12-5"):' in source for source in gated)


def test_13_2_the_plans_with_fusion_are_printed_only_once_the_exercise_passes():
    after = _cells_after("13", "13-2")
    compiling = [c.source for c in after if c.cell_type == "code" and "optimize=True" in c.source]
    assert compiling and all(
        source.lstrip().startswith('if ex.solved("13-2"):') for source in compiling
    )
    for text in (c.source for c in after if c.cell_type == "markdown"):
        assert "instead of nine" not in text and "mul>exp" not in text
