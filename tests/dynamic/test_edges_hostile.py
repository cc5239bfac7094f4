"""Hostile tests of the edges of ``where``, ``nll_loss`` and a vector times a matrix.

An input that no gradient can reach (``where``'s condition, ``nll_loss``'s targets) has
no edge in ``grad_fn.next_functions``, as in torch, so a node's gradients are one per
*edge*, not one per input, and a drawing maps input positions to edges.  These tests try
every place where an edge could be paired with the wrong input or gradient: where's
tensor, scalar and broadcast branches, a condition broadcast, one side requiring grad
and not the other, where used twice and inside a double backward, ``autograd.grad``
with ``allow_unused``, Node pre/post hooks, tensor hooks and ``retain_grad``, anomaly
mode, saved tensor hooks, ``_saved_condition``, in-place ops on views, second backward
errors, forward mode, ``ng.func`` transforms, cross_entropy reductions and drawings.
A vector times a matrix records torch's unsqueeze, mm, squeeze_: its result is the
product itself (no view, version 1), so in-place ops on it record what torch records.

Every case runs once with ``lib = naivegraph`` and once with ``lib = torch`` on the same
float64 values and compares the results exactly (or to 1e-12 where the summation order
may differ).  Run with ``NAIVEGRAPH_FAST=0`` too: the results must be the same.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")

# torch's first forward-mode and torch.func use scripts a helper with torch.jit, which
# torch itself deprecates: its own warning, not ours.
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

X = np.array([1.5, -2.0, 0.5])
Y = np.array([3.0, -0.75, 2.5])
W = np.array([1.0, 2.0, 3.0])  # a weight, so each element's gradient is told apart
CONDITION = [True, False, True]
LOGITS = np.array([[1.5, -2.0, 0.5], [3.0, -0.75, 2.5], [0.25, 1.0, -1.25]])
TARGETS = [0, 2, 1]
MATRIX = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]])


def t(lib, values, requires_grad=False):
    """A float64 tensor of ``values`` (torch's default dtype is float32)."""
    return lib.tensor(np.array(values, dtype=np.float64), requires_grad=requires_grad)


def as_array(value):
    """A tensor (or None, or a nested tuple/list of them) as plain numpy for comparing."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return type(value)(as_array(v) for v in value)
    if hasattr(value, "detach"):
        return value.detach().numpy().copy()
    return value


def assert_same(got, want, rtol=0.0, atol=0.0):
    """Equal structure, equal None-ness, equal values (exactly, unless told)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol)
    elif want is None or isinstance(want, (str, bool, int)):
        assert got == want
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)
        assert np.asarray(got).shape == np.asarray(want).shape


def both(run, rtol=0.0, atol=0.0):
    """Run ``run(lib)`` with naivegraph and torch, check they agree, return naivegraph's."""
    got, want = as_array(run(ng)), as_array(run(torch))
    assert_same(got, want, rtol, atol)
    return got


def edge_names(fn):
    """The names of ``fn.next_functions`` (None for an empty edge), torch's prefix off."""
    return tuple(
        None if child is None else child.name().replace("torch::autograd::", "")
        for child, _ in fn.next_functions
    )


def structure(fn, depth=5):
    """The graph under ``fn`` as nested (name, children) tuples."""
    if fn is None or depth == 0:
        return None
    name = fn.name().replace("torch::autograd::", "")
    return name, tuple(structure(child, depth - 1) for child, _ in fn.next_functions)


def error_of(run, lib):
    """(type, message) of the error ``run(lib)`` raises."""
    with pytest.raises(Exception) as caught:
        run(lib)
    return type(caught.value), str(caught.value)


# -- where: the gradients reach the right edges ------------------------------------


def _where_with(lib, x_grad, y_grad, x_kind="tensor", y_kind="tensor"):
    x = 2.0 if x_kind == "scalar" else t(lib, X, x_grad)
    y = 7.0 if y_kind == "scalar" else t(lib, Y, y_grad)
    if x_kind == "column":
        x = t(lib, [[1.5], [-2.0]], x_grad)
    z = lib.where(lib.tensor(CONDITION), x, y)
    weight = t(lib, np.arange(z.numel()).reshape(z.shape) + 1.0)
    (z * weight).sum().backward()
    grads = [v.grad if hasattr(v, "grad") else None for v in (x, y)]
    return edge_names(z.grad_fn), grads


@pytest.mark.parametrize(
    "x_grad, y_grad, x_kind, y_kind",
    [
        (True, True, "tensor", "tensor"),
        (True, False, "tensor", "tensor"),
        (False, True, "tensor", "tensor"),
        (True, False, "tensor", "scalar"),
        (False, True, "scalar", "tensor"),
        (True, True, "column", "tensor"),
        (False, True, "column", "tensor"),
    ],
    ids=["both", "x only", "y only", "scalar y", "scalar x", "broadcast", "broadcast y only"],
)
def test_where_gives_each_branch_its_own_gradient_through_its_own_edge(
    x_grad, y_grad, x_kind, y_kind
):
    names, _ = both(lambda lib: _where_with(lib, x_grad, y_grad, x_kind, y_kind))
    assert len(names) == 2  # x and y only: the condition has no edge


def test_where_with_a_broadcast_condition_reduces_each_branch_to_its_shape():
    def run(lib):
        x = t(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], True)
        y = t(lib, 2.0, True)
        z = lib.where(lib.tensor([[True], [False]]), x, y)
        (z * t(lib, np.arange(6.0).reshape(2, 3))).sum().backward()
        return x.grad, y.grad

    x_grad, y_grad = both(run)
    assert y_grad.tolist() == 12.0  # 3 + 4 + 5: the second row took y


def test_where_used_twice_on_the_same_condition_sums_into_the_right_leaves():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        c = x > 0
        z = lib.where(c, x, y)
        w = lib.where(~c, z * 2, x * 3)
        (w * t(lib, W)).sum().backward()
        return x.grad, y.grad

    assert [g.tolist() for g in both(run)] == [[3.0, 0.0, 9.0], [0.0, 4.0, 0.0]]


def test_where_inside_a_double_backward_matches_torchs_second_derivatives():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        z = lib.where(x > 0, x**3, y**2 * x)
        gx, gy = lib.autograd.grad(z.sum(), (x, y), create_graph=True)
        second = lib.autograd.grad((gx * gy + gx**2).sum(), (x, y), allow_unused=True)
        return gx, gy, second

    both(run, rtol=1e-12)


def test_a_tensor_that_only_made_the_condition_gets_no_gradient_with_allow_unused():
    def run(lib):
        x, y, c = t(lib, X, True), t(lib, Y, True), t(lib, W, True)
        z = lib.where(c > 1.5, x, y)
        return lib.autograd.grad((z * t(lib, W)).sum(), (x, y, c), allow_unused=True)

    gx, gy, gc = both(run)
    assert gc is None


def test_a_tensor_that_only_made_the_condition_is_unused_without_allow_unused():
    def run(lib):
        x, c = t(lib, X, True), t(lib, W, True)
        return lib.autograd.grad(lib.where(c > 1.5, x, 0.0).sum(), (x, c))

    kind, message = error_of(run, ng)
    assert (kind, error_of(run, torch)[0]) == (RuntimeError, RuntimeError)
    assert "appears to not have been used in the graph" in message


# -- hooks -------------------------------------------------------------------------


def test_where_node_hooks_see_one_gradient_per_edge_and_replace_them_in_order():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        z = lib.where(lib.tensor(CONDITION), x, y)
        seen = []
        z.grad_fn.register_prehook(lambda grad_outputs: seen.append(("pre", grad_outputs)))

        def post(grad_inputs, grad_outputs):
            seen.append(("post", grad_inputs, grad_outputs))
            return grad_inputs[0] * 10, grad_inputs[1] * 100

        z.grad_fn.register_hook(post)
        (z * t(lib, W)).sum().backward()
        return seen, x.grad, y.grad

    seen, x_grad, y_grad = both(run)
    assert len(seen[1][1]) == 2
    assert (x_grad.tolist(), y_grad.tolist()) == ([10.0, 0.0, 30.0], [0.0, 200.0, 0.0])


@pytest.mark.parametrize("x_grad, y_grad", [(False, True), (True, False)])
def test_where_node_hooks_see_none_for_the_branch_that_needs_no_gradient(x_grad, y_grad):
    def run(lib):
        x, y = t(lib, X, x_grad), t(lib, Y, y_grad)
        z = lib.where(lib.tensor(CONDITION), x, y)
        seen = []
        z.grad_fn.register_hook(lambda grad_inputs, _: seen.append(grad_inputs))
        (z * t(lib, W)).sum().backward()
        return seen

    (grad_inputs,) = both(run)
    assert [g is None for g in grad_inputs] == [not x_grad, not y_grad]


def test_nll_loss_node_hooks_see_one_gradient_for_the_log_probabilities_only():
    def run(lib):
        x = t(lib, LOGITS, True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(TARGETS))
        seen = []
        loss.grad_fn.register_prehook(lambda grad_outputs: seen.append(grad_outputs))
        loss.grad_fn.register_hook(lambda grad_inputs, _: seen.append(grad_inputs))
        loss.backward()
        return loss.grad_fn.name(), edge_names(loss.grad_fn), seen, x.grad

    name, edges, (grad_outputs, grad_inputs), _ = both(run, rtol=1e-15)
    assert (name, edges, len(grad_outputs), len(grad_inputs)) == (
        "NllLossBackward0",
        ("LogSoftmaxBackward0",),
        1,
        1,
    )


def test_a_nll_loss_post_hook_replacement_reaches_the_log_softmax():
    def run(lib):
        x = t(lib, LOGITS, True)
        loss = lib.nn.functional.nll_loss(x.log_softmax(1), lib.tensor(TARGETS), reduction="sum")
        loss.grad_fn.register_hook(lambda grad_inputs, _: (grad_inputs[0] * 3,))
        loss.backward()
        return x.grad

    both(run, rtol=1e-15)


def test_a_where_post_hook_returning_one_value_per_input_is_refused_as_in_torch():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        z = lib.where(lib.tensor(CONDITION), x, y)
        z.grad_fn.register_hook(lambda grad_inputs, _: (None, *grad_inputs))
        z.sum().backward()

    assert error_of(run, torch)[0] is RuntimeError
    kind, message = error_of(run, ng)
    assert kind is RuntimeError
    assert "has returned an incorrect number of values (got 3, but expected 2)" in message


def test_a_nll_loss_pre_hook_returning_two_values_is_refused_as_in_torch():
    def run(lib):
        loss = lib.nn.functional.cross_entropy(t(lib, LOGITS, True), lib.tensor(TARGETS))
        loss.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0], grad_outputs[0]))
        loss.backward()

    assert error_of(run, torch)[0] is RuntimeError
    kind, message = error_of(run, ng)
    assert kind is RuntimeError
    assert "has returned an incorrect number of values (got 2, but expected 1)" in message


def test_tensor_hooks_and_retained_gradients_through_where_match_torch():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        a = x * 2
        a.retain_grad()
        b = y * 1
        b.register_hook(lambda g: g * 5)
        z = lib.where(lib.tensor(CONDITION), a, b)
        z.retain_grad()
        z.register_hook(lambda g: g + 1)
        (z * t(lib, W)).sum().backward()
        return a.grad, z.grad, x.grad, y.grad

    a_grad, z_grad, x_grad, y_grad = both(run)
    assert y_grad.tolist() == [0.0, 15.0, 0.0]  # (2 + 1) * 5 at the one element y gave


# -- anomaly mode --------------------------------------------------------------------


def _nan_message(run, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the forward traceback warning
        with lib.autograd.detect_anomaly():
            return error_of(run, lib)


def test_anomaly_mode_names_the_edge_of_where_that_returned_nan_as_torch_does():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        z = lib.where(lib.tensor(CONDITION), x, y)
        z.backward(t(lib, [1.0, float("nan"), 1.0]))

    want = "Function 'WhereBackward0' returned nan values in its 1th output."
    assert _nan_message(run, torch) == (RuntimeError, want)
    kind, message = _nan_message(run, ng)
    assert kind is RuntimeError and message.startswith(want)


def test_anomaly_mode_lets_a_nan_through_where_into_the_branch_that_needs_no_gradient():
    def run(lib):
        x, y = t(lib, X), t(lib, Y, True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                z = lib.where(lib.tensor(CONDITION), x, y)
                z.backward(t(lib, [float("nan"), 1.0, 1.0]))
        return y.grad

    assert both(run).tolist() == [0.0, 1.0, 0.0]


def test_anomaly_mode_names_the_only_edge_of_nll_loss():
    def run(lib):
        loss = lib.nn.functional.nll_loss(t(lib, LOGITS, True), lib.tensor(TARGETS))
        loss.backward(t(lib, float("nan")))

    want = "Function 'NllLossBackward0' returned nan values in its 0th output."
    assert _nan_message(run, torch) == (RuntimeError, want)
    assert _nan_message(run, ng)[1].startswith(want)


# -- saved tensors -------------------------------------------------------------------


def test_where_saves_its_condition_as_torchs_saved_condition():
    def run(lib):
        z = lib.where(lib.tensor(CONDITION), t(lib, X, True), t(lib, Y, True))
        return z.grad_fn._saved_condition

    assert both(run).tolist() == CONDITION


def test_saved_tensor_hooks_that_flip_the_condition_swap_the_branches_gradients():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)

        def unpack(saved):
            return ~saved if saved.dtype == lib.bool else saved

        with lib.autograd.graph.saved_tensors_hooks(lambda saved: saved, unpack):
            z = lib.where(x > 0, x, y)
        (z * t(lib, W)).sum().backward()
        return x.grad, y.grad

    x_grad, y_grad = both(run)
    assert (x_grad.tolist(), y_grad.tolist()) == ([0.0, 2.0, 0.0], [1.0, 0.0, 3.0])


def test_a_raw_saved_condition_with_its_own_hooks_steers_the_gradients():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        z = lib.where(lib.tensor(CONDITION), x, y)
        z.grad_fn._raw_saved_condition.register_hooks(lambda c: c, lambda c: ~c)
        (z * t(lib, W)).sum().backward()
        return x.grad, y.grad

    both(run)


def test_saved_tensor_hooks_that_change_the_targets_move_the_gradient_of_nll_loss():
    def run(lib):
        x = t(lib, LOGITS, True)

        def unpack(saved):
            return lib.tensor([1, 1, 1]) if saved.dtype == lib.int64 else saved

        with lib.autograd.graph.saved_tensors_hooks(lambda saved: saved, unpack):
            loss = lib.nn.functional.cross_entropy(x, lib.tensor(TARGETS))
        loss.backward()
        return x.grad

    both(run, rtol=1e-15)


def test_saved_tensor_hooks_around_where_with_only_y_requiring_grad():
    def run(lib):
        x, y = t(lib, X), t(lib, Y, True)
        with lib.autograd.graph.saved_tensors_hooks(lambda s: s.clone(), lambda s: s):
            z = lib.where(x > 0, x, y)
        (z * t(lib, W)).sum().backward()
        return y.grad

    assert both(run).tolist() == [0.0, 2.0, 0.0]


# -- in-place ops, retain_graph, second backward -------------------------------------


def test_a_where_over_a_view_changed_in_place_gets_its_gradient_through_the_base():
    def run(lib):
        base = t(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], True)
        b = base * 1
        row = b[0]
        row.mul_(t(lib, [2.0, 3.0, 4.0]))
        y = t(lib, Y, True)
        z = lib.where(row > 5, row, y)
        w = lib.where(b > 4, b, 0.0)
        (z * t(lib, W)).sum().backward(retain_graph=True)
        (w * w).sum().backward()
        return base.grad, y.grad, edge_names(z.grad_fn)

    base_grad, _, names = both(run)
    assert names == ("AsStridedBackward0", "AccumulateGrad")
    assert base_grad.tolist() == [[0.0, 42.0, 108.0], [0.0, 10.0, 12.0]]


def test_a_where_result_copied_into_a_view_hands_each_branch_its_gradient():
    def run(lib):
        base = t(lib, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], True)
        b = base * 1
        y = t(lib, Y, True)
        b[1].copy_(lib.where(lib.tensor(CONDITION), b[0], y))
        (b * t(lib, np.arange(6.0).reshape(2, 3))).sum().backward()
        return base.grad, y.grad

    both(run)


def test_where_of_leaves_refuses_a_second_backward_as_it_freed_its_condition():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        z = lib.where(lib.tensor(CONDITION), x, y)
        z.sum().backward()
        z.sum().backward()

    assert error_of(run, torch)[0] is RuntimeError
    kind, message = error_of(run, ng)
    assert kind is RuntimeError
    assert "Trying to backward through the graph a second time" in message


def test_where_of_leaves_backs_up_twice_with_retain_graph():
    def run(lib):
        x, y = t(lib, X, True), t(lib, Y, True)
        z = lib.where(lib.tensor(CONDITION), x, y)
        z.sum().backward(retain_graph=True)
        z.sum().backward()
        return x.grad, y.grad

    assert [g.tolist() for g in both(run)] == [[2.0, 0.0, 2.0], [0.0, 2.0, 0.0]]


def test_cross_entropy_backs_up_twice_only_with_retain_graph():
    def twice(retain):
        def run(lib):
            x = t(lib, LOGITS, True)
            loss = lib.nn.functional.cross_entropy(x, lib.tensor(TARGETS))
            loss.backward(retain_graph=retain)
            loss.backward()
            return x.grad

        return run

    both(twice(True), rtol=1e-15)
    kind, message = error_of(twice(False), ng)
    assert (kind, error_of(twice(False), torch)[0]) == (RuntimeError, RuntimeError)
    assert "Trying to backward through the graph a second time" in message


def test_reading_the_saved_condition_after_backward_freed_it_is_refused():
    def run(lib):
        z = lib.where(t(lib, X, True) > 0, t(lib, X, True) ** 2, t(lib, Y, True))
        z.sum().backward()
        return z.grad_fn._saved_condition

    assert error_of(run, torch)[0] is RuntimeError
    kind, message = error_of(run, ng)
    assert kind is RuntimeError and "after they have already been freed" in message


# -- forward mode and function transforms --------------------------------------------


def test_forward_mode_tangents_through_where_cross_entropy_and_vector_matrix():
    def run(lib):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(t(lib, X), t(lib, W))
            y = fa.make_dual(t(lib, Y), t(lib, [10.0, 20.0, 30.0]))
            logits = fa.make_dual(t(lib, LOGITS), t(lib, np.arange(9.0).reshape(3, 3) - 4))
            m = fa.make_dual(t(lib, MATRIX), t(lib, np.ones((3, 2))))
            outs = [
                lib.where(x > 0, x * x, y),
                lib.where(lib.tensor(CONDITION), 5.0, y),
                lib.nn.functional.cross_entropy(logits, lib.tensor(TARGETS)),
                lib.nn.functional.cross_entropy(logits, lib.tensor(TARGETS), reduction="sum"),
                x @ t(lib, MATRIX),
                t(lib, X) @ m,
                x @ m,
            ]
            return [fa.unpack_dual(out).tangent for out in outs]

    both(run, rtol=1e-14, atol=1e-15)


def test_jacrev_jacfwd_and_hessian_through_where():
    def run(lib):
        def f(x, y):
            return lib.where(x > 0, x**2 * y, y**3 * x).sum()

        x, y = t(lib, X), t(lib, Y)
        return (
            lib.func.jacrev(f, argnums=(0, 1))(x, y),
            lib.func.jacfwd(f, argnums=(0, 1))(x, y),
            lib.func.hessian(f, argnums=1)(x, y),
        )

    both(run)


def test_jacrev_jacfwd_and_hessian_through_cross_entropy():
    def run(lib):
        targets = lib.tensor(TARGETS)

        def f(x):
            return lib.nn.functional.cross_entropy(x, targets)

        x = t(lib, LOGITS)
        return lib.func.jacrev(f)(x), lib.func.jacfwd(f)(x), lib.func.hessian(f)(x)

    both(run, rtol=1e-12, atol=1e-15)


def test_jacrev_jacfwd_and_hessian_through_a_vector_times_a_matrix():
    def run(lib):
        def f(v, m):
            return ((v @ m) ** 2).sum()

        v, m = t(lib, X), t(lib, MATRIX)
        return (
            lib.func.jacrev(f, argnums=(0, 1))(v, m),
            lib.func.jacfwd(f, argnums=(0, 1))(v, m),
            lib.func.hessian(f)(v, m),
        )

    both(run)


# -- cross_entropy and nll_loss ------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_reductions_give_torchs_graph_and_gradients(reduction):
    def run(lib):
        x = t(lib, LOGITS, True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(TARGETS), reduction=reduction)
        (loss * t(lib, W) if reduction == "none" else loss).sum().backward()
        return loss, x.grad, structure(loss.grad_fn)

    both(run, rtol=1e-15, atol=1e-16)


def test_cross_entropy_with_class_probabilities_gives_both_operands_gradients():
    def run(lib):
        x = t(lib, LOGITS, True)
        p = t(lib, [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.0, 0.5, 0.5]], True)
        loss = lib.nn.functional.cross_entropy(x, p)
        loss.backward()
        return loss, x.grad, p.grad

    both(run, rtol=1e-15, atol=1e-16)


def test_the_cross_entropy_loss_module_records_nll_loss_over_log_softmax():
    def run(lib):
        x = t(lib, LOGITS, True)
        loss = lib.nn.CrossEntropyLoss()(x, lib.tensor(TARGETS))
        loss.backward()
        return x.grad, structure(loss.grad_fn)

    both(run, rtol=1e-15)


def test_nll_loss_of_one_unbatched_sample_matches_torch():
    def run(lib):
        x = t(lib, [1.0, 2.0, 0.5], True)
        loss = lib.nn.functional.nll_loss(x, lib.tensor(1))
        loss.backward()
        return loss, x.grad, structure(loss.grad_fn)

    both(run)


def test_cross_entropy_of_one_unbatched_sample_records_torchs_graph():
    def run(lib):
        x = t(lib, [1.0, 2.0, 0.5], True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(1))
        loss.backward()
        return loss, x.grad, structure(loss.grad_fn)

    both(run, rtol=1e-15)


def test_nll_loss_gives_positive_zero_to_the_classes_that_are_not_the_target():
    def run(lib):
        x = t(lib, LOGITS, True)
        lib.nn.functional.nll_loss(x, lib.tensor(TARGETS)).backward()
        return np.signbit(x.grad.numpy())

    got, want = run(ng), run(torch)
    assert got.tolist() == want.tolist()


ONE_SAMPLE_OPTIONS = [
    {},
    {"weight": [1.0, 2.0, 3.0]},
    {"ignore_index": 1},
    {"ignore_index": 0},
    {"ignore_index": 1, "weight": [1.0, 2.0, 3.0]},
]


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("options", ONE_SAMPLE_OPTIONS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_unbatched_sample_with_weights_or_an_ignored_class_matches_torch(
    name, options, reduction, dtype
):
    # one node over the (log_softmax of the) row, a 0-d loss (NaN for an ignored
    # target's mean), gradients with +0.0 off the target
    def run(lib):
        x = lib.tensor(np.array([1.0, 2.0, 0.5], dtype=dtype), requires_grad=True)
        kwargs = dict(options, reduction=reduction)
        if "weight" in kwargs:
            kwargs["weight"] = lib.tensor(np.array(kwargs["weight"], dtype=dtype))
        loss = getattr(lib.nn.functional, name)(x, lib.tensor(1), **kwargs)
        (loss * -2.0).backward()
        grad = x.grad.numpy()
        return loss, grad, np.signbit(grad).tolist(), structure(loss.grad_fn), loss.dim()

    got, want = as_array(run(ng)), as_array(run(torch))
    assert got[2:] == want[2:]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-7)
    assert got[1].dtype == want[1].dtype


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"weight": [1.0, 2.0, 3.0]},
        {"ignore_index": 2},
        {"weight": [1.0, 2.0, 3.0], "ignore_index": 2},
    ],
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("upstream", [2.0, -2.0, np.inf])
def test_nll_loss_gives_positive_zero_off_the_targets_whatever_the_upstream_gradient(
    options, reduction, upstream
):
    # torch writes -g at the targets into zeros: +0.0 elsewhere even for an infinite g
    def run(lib):
        x = t(lib, LOGITS, True)
        kwargs = dict(options, reduction=reduction)
        if "weight" in kwargs:
            kwargs["weight"] = t(lib, kwargs["weight"])
        loss = lib.nn.functional.nll_loss(x, lib.tensor(TARGETS), **kwargs)
        loss.backward(lib.full_like(loss, upstream))
        return x.grad.numpy().tolist(), np.signbit(x.grad.numpy()).tolist()

    assert run(ng) == run(torch)


@pytest.mark.parametrize("options", ONE_SAMPLE_OPTIONS)
def test_a_second_backward_through_cross_entropy_of_one_sample_matches_torch(options):
    def run(lib):
        x = t(lib, [1.0, 2.0, 0.5], True)
        kwargs = dict(options)
        if "weight" in kwargs:
            kwargs["weight"] = t(lib, kwargs["weight"])
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(1), **kwargs)
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (g * g * t(lib, W)).sum().backward()
        return loss, g, x.grad, structure(g.grad_fn, depth=2) is not None

    both(run, rtol=1e-12, atol=1e-15)


@pytest.mark.xfail(
    strict=True,
    reason="nll_loss's first derivative does not read its input, so under create_graph it "
    "does not require grad; torch's (NllLossBackwardBackward0) does and backward gives zeros",
)
@pytest.mark.parametrize("logits", [[1.0, 2.0, 0.5], LOGITS], ids=["one-sample", "batch"])
def test_a_second_backward_through_nll_loss_gives_zeros(logits):
    def run(lib):
        x = t(lib, logits, True)
        target = lib.tensor(1) if x.dim() == 1 else lib.tensor(TARGETS)
        (g,) = lib.autograd.grad(lib.nn.functional.nll_loss(x, target), x, create_graph=True)
        (g * g).sum().backward()
        return g, x.grad

    both(run)


def test_nll_loss_of_an_empty_batch_is_nan_without_a_warning():
    def run(lib):
        x = lib.zeros(0, 3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            loss = lib.nn.functional.nll_loss(x, lib.zeros(0, dtype=lib.int64))
        loss.backward()
        return loss, x.grad

    got = both(run)
    assert np.isnan(got[0]) and got[1].shape == (0, 3)


# -- a vector times a matrix ---------------------------------------------------------


@pytest.mark.parametrize(
    "v_grad, m_grad", [(True, True), (True, False), (False, True), (False, False)]
)
def test_a_vector_times_a_matrix_records_torchs_nodes_and_gradients(v_grad, m_grad):
    def run(lib):
        v, m = t(lib, X, v_grad), t(lib, MATRIX, m_grad)
        out = v @ m
        if out.requires_grad:
            (out * t(lib, [1.0, -2.0])).sum().backward()
        return out, v.grad, m.grad, structure(out.grad_fn), out.requires_grad

    out, _, _, graph, requires_grad = both(run)
    assert requires_grad == (v_grad or m_grad)
    assert graph is None or graph[0] == "SqueezeBackward4"


def test_a_vector_times_a_matrix_is_the_product_itself_not_a_view_of_it():
    def run(lib):
        out = t(lib, X, True) @ t(lib, MATRIX, True)
        with lib.no_grad():
            quiet = t(lib, X, True) @ t(lib, MATRIX, True)
        return out._base is None, out._version, quiet._base is None, quiet._version

    assert both(run) == (True, 1, True, 1)  # squeeze_ changed the product: version 1


def test_an_in_place_op_on_a_vector_times_a_matrix_records_its_own_node():
    def run(lib):
        v, m = t(lib, X, True), t(lib, MATRIX, True)
        out = v @ m
        out.retain_grad()
        out.mul_(3)
        (out * out).sum().backward()
        return out.grad_fn.name(), out.grad, v.grad, m.grad

    assert both(run)[0] == "MulBackward0"


def test_writing_into_a_vector_times_a_matrix_records_copy_slices():
    def run(lib):
        v, m = t(lib, X, True), t(lib, MATRIX, True)
        out = v @ m
        out[0] = 5.0
        (out * out).sum().backward()
        return out.grad_fn.name().replace("torch::autograd::", ""), out._version, v.grad, m.grad

    assert both(run)[:2] == ("CopySlices", 2)


def test_a_view_of_a_vector_times_a_matrix_is_rebased_when_it_changes_in_place():
    def run(lib):
        v, m = t(lib, X, True), t(lib, MATRIX, True)
        out = v @ m
        tail = out[1:]
        out.mul_(3)
        (tail * tail).sum().backward()
        return tail._base is out, tail.grad_fn.name(), v.grad, m.grad

    assert both(run)[:2] == (True, "AsStridedBackward0")


def test_a_vector_times_a_matrix_made_without_grad_becomes_a_leaf_that_changes_in_place():
    def run(lib):
        with lib.no_grad():
            out = t(lib, X, True) @ t(lib, MATRIX, True)
        out.mul_(2)
        out.requires_grad_()
        (out * out).sum().backward()
        return out, out.grad, out.is_leaf

    both(run)


def test_an_in_place_op_on_a_vector_times_a_matrix_that_requires_grad_is_a_leaf_error():
    def run(lib):
        out = t(lib, X) @ t(lib, MATRIX)
        out.requires_grad_()
        out.mul_(2)

    assert error_of(run, torch)[0] is RuntimeError
    kind, message = error_of(run, ng)
    assert kind is RuntimeError
    assert message.startswith("a leaf Variable that requires grad is being used in an in-place")


def test_matmul_in_every_spelling_records_the_same_vector_matrix_nodes():
    def run(lib):
        v, m = t(lib, X, True), t(lib, MATRIX, True)
        outs = [v @ m, v.matmul(m), lib.matmul(v, m), m.t().matmul(v), v @ v]
        return [structure(out.grad_fn, depth=3) for out in outs]

    both(run)


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [
        ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)),
        ((3,), (5, 3, 4)),
        ((5, 2, 3), (3,)),
        ((2, 5, 2, 3), (5, 3, 4)),
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((1, 3), (3, 4)),
        ((3,), (3, 1)),
    ],
)
def test_other_matmul_shapes_keep_their_values_gradients_and_output_node(shape_a, shape_b):
    a_values = np.arange(np.prod(shape_a), dtype=float).reshape(shape_a) * 0.1 - 0.3
    b_values = np.arange(np.prod(shape_b), dtype=float).reshape(shape_b) * 0.2 - 1.0

    def run(lib):
        a, b = t(lib, a_values, True), t(lib, b_values, True)
        out = a @ b
        (out * out).sum().backward()
        return out, a.grad, b.grad, out.grad_fn.name()

    both(run, rtol=1e-12, atol=1e-12)


BATCHED_SHAPES = [
    ((5, 2, 3), (3, 4)),  # folded into one mm
    ((5, 2, 3), (3,)),  # folded into one mv
    ((2, 5, 2, 3), (3, 4)),
    ((0, 2, 3), (3, 4)),
    ((5, 2, 0), (0, 4)),
    ((5, 2, 3), (5, 3, 4)),  # bmm
    ((2, 5, 2, 3), (5, 3, 4)),  # bmm of an expanded batch (a copy)
    ((1, 2, 3), (1, 3, 4)),
    ((5, 2, 3), (1, 3, 4)),  # a batch of one that requires grad is squeezed
    ((1, 2, 3), (5, 3, 4)),
    ((3,), (5, 3, 4)),  # the transposed batch folded when the vector requires grad
    ((2, 3), (5, 3, 4)),
    ((2, 3), (2, 5, 3, 1)),
    ((0, 2, 3), (0, 3, 4)),
]


# a transposed batch (its batch dimensions do not fold without a copy) times a matrix
BATCHED_CASES = [(a, b, False) for a, b in BATCHED_SHAPES] + [
    (a, b, True) for a, b in BATCHED_SHAPES if len(a) >= 3 and len(b) <= 2
]


@pytest.mark.parametrize("shape_a, shape_b, transposed", BATCHED_CASES)
@pytest.mark.parametrize("a_grad, b_grad", [(True, True), (True, False), (False, True)])
def test_a_batched_matmul_records_torchs_nodes_values_and_gradients(
    shape_a, shape_b, transposed, a_grad, b_grad
):
    a_values = np.arange(np.prod(shape_a), dtype=float).reshape(shape_a) * 0.1 - 0.3
    b_values = np.arange(np.prod(shape_b), dtype=float).reshape(shape_b) * 0.2 - 1.0

    def run(lib):
        a, b = t(lib, a_values, a_grad), t(lib, b_values, b_grad)
        out = (a.transpose(0, 1) if transposed else a) @ b
        (out * out).sum().backward()
        graph = structure(out.grad_fn, depth=7)
        return out, a.grad, b.grad, graph, out._base is None, out._version

    both(run, rtol=1e-12, atol=1e-12)


def test_the_folded_batch_is_a_new_tensor_an_in_place_op_records_its_own_node():
    def run(lib):
        a, b = t(lib, np.ones((5, 2, 3)), True), t(lib, np.ones((3, 4)), True)
        out = a @ b
        out.mul_(2.0)
        out.sum().backward()
        return a.grad, b.grad, structure(out.grad_fn, depth=3), out._version

    both(run)


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((5, 2, 3), (4, 4)), ((5, 2, 3), (5, 4, 4)), ((2, 3), (5, 4, 4)), ((3,), (5, 4, 4))],
)
def test_a_batched_matmul_of_mismatched_inner_sizes_names_the_operands_as_given(shape_a, shape_b):
    a, b = ng.ones(shape_a, requires_grad=True), ng.ones(shape_b, requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot be multiplied") as caught:
        a @ b
    assert f"({shape_a} and {shape_b})" in str(caught.value)


@pytest.mark.parametrize("shape_a, shape_b", [((5, 2, 3), (3, 3, 4)), ((2, 5, 2, 3), (3, 3, 4))])
def test_batches_that_do_not_broadcast_are_refused_in_torchs_words(shape_a, shape_b):
    def run(lib):
        return lib.ones(shape_a) @ lib.ones(shape_b)

    got, want = error_of(run, ng), error_of(run, torch)
    assert issubclass(got[0], want[0]) and got[1].startswith(want[1])


def test_a_batched_matmul_of_two_dtypes_is_refused():
    a, b = ng.ones(5, 2, 3, dtype=ng.float32), ng.ones(3, 4, dtype=ng.float64)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        a @ b


# -- reshape and contiguous of other layouts --------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.t().reshape(6, 4),  # a view describes it: _reshape_alias
        lambda x: x.t().reshape(-1),  # none does: a copy, then _unsafe_view
        lambda x: x[:, ::2].reshape(12),
        lambda x: x[::2].reshape(2, 6),
        lambda x: x[::2].reshape(12),
        lambda x: x.t().view(6, 4),  # view is ViewBackward0 whatever the layout
        lambda x: x.t().flatten(),
        lambda x: x.t().reshape(6, 4).reshape(24),
        lambda x: x.expand(2, 4, 6).reshape(8, 6),
        lambda x: x[:, :0].reshape(0),
        lambda x: x.reshape(24),
        lambda x: x.t().contiguous(),
        lambda x: x.contiguous(),
        lambda x: x.t().contiguous().view(24),
        lambda x: x.reshape(2, 2, 6).transpose(1, 2).contiguous().view(2, 12),
    ],
)
def test_reshape_and_contiguous_record_torchs_nodes_views_and_gradients(make):
    def run(lib):
        x = t(lib, np.arange(24.0).reshape(4, 6), True)
        out = make(x)
        (out * out).sum().backward()
        is_view = out._base is not None
        return out, x.grad, structure(out.grad_fn, depth=3), is_view, out.is_contiguous()

    both(run)


def test_contiguous_gives_a_copy_an_in_place_write_to_it_leaves_the_source():
    def run(lib):
        x = t(lib, np.arange(6.0).reshape(2, 3))
        y = x.t().contiguous()
        y.add_(1.0)
        return x, y

    both(run)


def test_a_vector_times_a_matrix_under_no_grad_records_nothing():
    def run(lib):
        v, m = t(lib, X, True), t(lib, MATRIX, True)
        with lib.no_grad():
            out = v @ m
        return out, out.grad_fn is None, out.requires_grad

    assert both(run)[1:] == (True, False)


# -- drawings ------------------------------------------------------------------------


def _operand_edges(source: str, node: str) -> list[str]:
    """The operand labels of the forward edges into the node named ``node``."""
    ids = [line.split()[0] for line in source.splitlines() if f"<<b>{node}</b>" in line]
    return sorted(
        line.rsplit("label=", 1)[1].rstrip("]")
        for line in source.splitlines()
        if "->" in line and line.split()[2] == ids[0] and "label=" in line
    )


@pytest.mark.parametrize("after_backward", [False, True])
def test_a_drawing_of_where_keeps_the_condition_as_operand_zero(after_backward):
    x = ng.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = ng.tensor([0.5, 0.5, 0.5])
    condition = ng.tensor(CONDITION)
    z = ng.where(condition, y, x)
    if after_backward:
        z.sum().backward()
    source = ng.render(z, kind="both").source
    assert _operand_edges(source, "where") == ["0", "1", "2"]
    assert '<<b>condition</b><br/><font point-size="10">(3,) bool</font>' in source
    assert 'tooltip="WhereBackward0: next_functions = None, AccumulateGrad"' in source
    assert "label=2]" in [line.split()[-1] for line in source.splitlines() if "#c62828" in line]


@pytest.mark.parametrize("after_backward", [False, True])
def test_a_drawing_of_cross_entropy_keeps_the_targets_as_operand_one(after_backward):
    logits = ng.tensor(LOGITS, requires_grad=True)
    targets = ng.tensor(TARGETS)
    loss = ng.nn.functional.cross_entropy(logits, targets)
    if after_backward:
        loss.backward()
    source = ng.render(loss, kind="both").source
    assert _operand_edges(source, "nll_loss") == ["0", "1"]
    assert '<<b>targets</b><br/><font point-size="10">(3,) int64</font>' in source
    assert 'tooltip="NllLossBackward0: next_functions = LogSoftmaxBackward0"' in source


@pytest.mark.parametrize("after_backward", [False, True])
def test_a_drawing_of_a_vector_times_a_matrix_shows_unsqueeze_mm_squeeze(after_backward):
    v = ng.tensor(X, requires_grad=True)
    m = ng.tensor(MATRIX, requires_grad=True)
    out = v @ m
    if after_backward:
        out.sum().backward()
    source = ng.render(out, kind="both").source
    for name in ("SqueezeBackward4", "MmBackward0", "UnsqueezeBackward0"):
        assert f"<<b>{name}</b>" in source


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("options", [{}, {"weight": [1.0, 2.0, 3.0]}, {"ignore_index": 0}])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_one_sample_takes_a_target_of_shape_1_as_torch(name, options, reduction):
    # torch computes the loss, 0-d, but its backward refuses the target
    def run(lib):
        x = t(lib, [1.0, 2.0, 0.5], True)
        kwargs = dict(options, reduction=reduction)
        if "weight" in kwargs:
            kwargs["weight"] = t(lib, kwargs["weight"])
        loss = getattr(lib.nn.functional, name)(x, lib.tensor([1]), **kwargs)
        try:
            loss.backward()
        except RuntimeError as error:
            return loss, structure(loss.grad_fn), str(error).split(" (an input")[0]
        return loss, structure(loss.grad_fn), "no error"

    got = both(run, rtol=1e-15)
    assert got[2] == "size mismatch (got input: [3], target: [1])"


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("target", [[1, 2], [[1]]], ids=["two", "2-D"])
def test_one_sample_refuses_other_targets_in_torchs_words(name, target):
    def run(lib):
        return getattr(lib.nn.functional, name)(t(lib, [1.0, 2.0, 0.5]), lib.tensor(target))

    (got_type, got), (want_type, want) = error_of(run, ng), error_of(run, torch)
    assert got_type is want_type and got.startswith(want)
    assert "one class index of shape ()" in got
