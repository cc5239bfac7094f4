"""Hostile probes of the newest static-mode features: symbolic gradients with None
dims, graph updates (``ns.assign``, ``g.run``, ``g.compile(updates=...)``), ``ns.cond``
/ ``ns.while_loop`` and ``ns.optim``, each checked against dynamic mode (or torch)."""

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph as ng
import naivegraph.static as ns

# numpy float64 data, compared with dynamic mode and torch's float64 to 1e-10: placeholders
# and Python floats in float64 too (the default dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)

RTOL = 1e-10


@pytest.fixture
def torch():
    """torch as the oracle, where it is installed (the probes without it still run)."""
    return pytest.importorskip("torch")


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=RTOL, atol=1e-13)


# ----------------------------------------------------------------- None dims + gradients
def _programs():
    """(name, static builder, dynamic builder): each maps (x, w, b) to a scalar loss."""
    return {
        "broadcast_mean": (
            lambda x, w, b: ns.mean((x + b) * (x + b)),
            lambda x, w, b: ((x + b) * (x + b)).mean(),
        ),
        "mean_dim0_then_sum": (
            lambda x, w, b: ns.sum(ns.mean(ns.tanh(x * b), dim=0)),
            lambda x, w, b: (x * b).tanh().mean(dim=0).sum(),
        ),
        "max_all": (
            lambda x, w, b: ns.max(x @ w + b[:2]),
            lambda x, w, b: (x @ w + b[:2]).max(),
        ),
        "reshape_minus_one": (
            lambda x, w, b: ns.sum(ns.reshape(x * b, -1, 1) ** 2) / ns.mean(x + 3.0),
            lambda x, w, b: ((x * b).reshape(-1, 1) ** 2).sum() / (x + 3.0).mean(),
        ),
        "index_column": (
            lambda x, w, b: ns.mean(x[:, 0] * ns.sum(x @ w, dim=1)),
            lambda x, w, b: (x[:, 0] * (x @ w).sum(dim=1)).mean(),
        ),
        "mse": (
            lambda x, w, b: ns.mse_loss(x @ w, x[:, 1:] + b[0]),
            lambda x, w, b: ng.nn.functional.mse_loss(x @ w, x[:, 1:] + b[0]),
        ),
    }


@pytest.mark.parametrize("batch", [1, 2, 7])
@pytest.mark.parametrize("program", list(_programs()))
def test_symbolic_gradients_with_a_none_batch_equal_dynamic_mode(program, batch):
    static_fn, dynamic_fn = _programs()[program]
    rng = np.random.default_rng(batch)
    xv, wv, bv = (
        rng.standard_normal((batch, 3)),
        rng.standard_normal((3, 2)),
        rng.standard_normal(3),
    )
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        w, b = ns.Variable(wv, name="w"), ns.Variable(bv, name="b")
        loss = static_fn(x, w, b)
        grads = ns.gradients(loss, [x, w, b])
    values = g.run([loss, *[gr for gr in grads if gr is not None]], {x: xv})
    xt, wt, bt = (ng.tensor(v, requires_grad=True) for v in (xv, wv, bv))
    out = dynamic_fn(xt, wt, bt)
    out.backward()
    close(values[0], out.item())
    used = [t for gr, t in zip(grads, (xt, wt, bt)) if gr is not None]
    assert [gr is None for gr in grads] == [t.grad is None for t in (xt, wt, bt)]
    for got, t in zip(values[1:], used):
        close(got, t.grad.numpy())


@pytest.mark.parametrize("batch", [1, 2, 7])
def test_cross_entropy_gradient_with_a_none_batch_equals_torch(batch, torch):
    rng = np.random.default_rng(10 + batch)
    xv, wv = rng.standard_normal((batch, 3)), rng.standard_normal((3, 4))
    labels = rng.integers(0, 4, size=batch)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        y = ns.placeholder("y", shape=(None,), dtype=np.int64)
        w = ns.Variable(wv, name="w")
        loss = ns.cross_entropy(x @ w, y)
        gx, gw = ns.gradients(loss, [x, w])
    values = g.run([loss, gx, gw], {x: xv, y: labels})
    xt, wt = torch.tensor(xv, requires_grad=True), torch.tensor(wv, requires_grad=True)
    out = torch.nn.functional.cross_entropy(xt @ wt, torch.tensor(labels))
    out.backward()
    close(values[0], out.item())
    close(values[1], xt.grad.numpy())
    close(values[2], wt.grad.numpy())


def test_one_compiled_gradient_serves_every_batch_size(torch):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        b = ns.Variable(np.array([1.0, -2.0, 0.5]), name="b")
        loss = ns.mean(ns.mean(x + b, dim=1) ** 2)
        gx, gb = ns.gradients(loss, [x, b])
    f = g.compile([x], [gx, gb])
    for n in (7, 1, 2):
        xv = np.arange(3.0 * n).reshape(n, 3)
        xt = torch.tensor(xv, requires_grad=True)
        bt = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
        ((xt + bt).mean(dim=1) ** 2).mean().backward()
        got_x, got_b = f(xv)
        close(got_x, xt.grad.numpy())
        close(got_b, bt.grad.numpy())


# ----------------------------------------------------------------- assign / run / compile
def test_a_fetched_read_after_an_assign_still_sees_the_old_value():
    with ns.Graph() as g:
        v = ns.Variable(2.0, name="v")
        up = v.assign(v * 3.0)
        later = up + v  # reads v in the same run as the update
    new, total, old = g.run([up, later, v])
    assert (float(new), float(total), float(old)) == (6.0, 8.0, 2.0)
    assert float(v.value) == 6.0


def test_a_fetched_variable_is_not_changed_by_the_commit_of_its_update():
    with ns.Graph() as g:
        v = ns.Variable(np.array([1.0, 2.0]), name="v")
        up = v.assign(v + 1.0)
    old, new = g.run([v, up])
    assert old.tolist() == [1.0, 2.0] and new.tolist() == [2.0, 3.0]
    g.run(up)
    assert old.tolist() == [1.0, 2.0] and v.value.tolist() == [3.0, 4.0]


def test_a_failing_run_commits_none_of_its_updates():
    with ns.Graph() as g:
        a = ns.Variable(1.0, name="a")
        b = ns.Variable(np.ones(2), name="b")
        x = ns.placeholder("x", shape=(None,))
        up_a = a.assign(a + 1.0)
        up_b = b.assign(b + x)  # fails with a wrong feed size, after up_a ran
    with pytest.raises(ValueError):
        g.run([up_a, up_b], {x: np.ones(3)})
    assert float(a.value) == 1.0 and b.value.tolist() == [1.0, 1.0]


def test_a_failing_compiled_call_commits_none_of_its_updates():
    with ns.Graph() as g:
        a = ns.Variable(1.0, name="a")
        b = ns.Variable(np.ones(2), name="b")
        x = ns.placeholder("x", shape=(None,))
    f = g.compile([x], [a + b], updates=[(a, a + 1.0), (b, b + x)])
    with pytest.raises(ValueError):
        f(np.ones(3))
    assert float(a.value) == 1.0 and b.value.tolist() == [1.0, 1.0]
    (out,) = f(np.ones(2))
    assert out.tolist() == [2.0, 2.0] and float(a.value) == 2.0


def test_compile_updates_swap_two_variables_from_their_old_values():
    with ns.Graph() as g:
        a = ns.Variable(1.0, name="a")
        b = ns.Variable(10.0, name="b")
    f = g.compile([], [a - b], updates={a: b, b: a})
    assert [float(f()[0]) for _ in range(3)] == [-9.0, 9.0, -9.0]
    assert (float(a.value), float(b.value)) == (10.0, 1.0)


def test_assign_of_another_variable_does_not_alias_its_storage():
    with ns.Graph() as g:
        a = ns.Variable(np.array([1.0, 2.0]), name="a")
        b = ns.Variable(np.array([5.0, 6.0]), name="b")
        copy = a.assign(b)
        bump = b.assign(b + 1.0)
    g.run(copy)
    g.run(bump)
    assert a.value.tolist() == [5.0, 6.0] and b.value.tolist() == [6.0, 7.0]


def test_assign_of_a_fed_array_does_not_alias_the_callers_array():
    with ns.Graph() as g:
        a = ns.Variable(np.zeros(2), name="a")
        x = ns.placeholder("x", shape=(2,))
        up = a.assign(x)
    feed = np.array([1.0, 2.0])
    g.run(up, {x: feed})
    feed[0] = 99.0
    assert a.value.tolist() == [1.0, 2.0]


def test_assign_of_a_view_of_a_variable_does_not_alias_its_storage():
    with ns.Graph() as g:
        a = ns.Variable(np.zeros((2, 2)), name="a")
        b = ns.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]), name="b")
        copy = a.assign(ns.transpose(b, 0, 1))
    g.run(copy)
    b.assign(np.zeros((2, 2)))  # a plain assign replaces b's storage ...
    assert a.value.tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_a_write_into_a_fetched_update_value_does_not_change_the_variable():
    with ns.Graph() as g:
        a = ns.Variable(np.zeros(2), name="a")
        up = a.assign(a + 1.0)
    out = g.run(up)
    out[0] = 42.0
    assert a.value.tolist() == [1.0, 1.0]


def test_an_int_variable_assigned_a_float_node_is_refused_with_a_type_error():
    with ns.Graph() as g:
        n = ns.Variable(np.array(3, dtype=np.int64), name="n", trainable=False)
        size = len(g.nodes)
        with pytest.raises(TypeError, match="without losing information"):
            n.assign(n * 0.5)
    assert len(g.nodes) == size + 2 and int(n.value) == 3  # operands built, no assign


def test_two_updates_of_one_variable_through_compile_are_refused():
    with ns.Graph() as g:
        a = ns.Variable(1.0, name="a")
        up = a.assign(a + 1.0)
    with pytest.raises(ValueError, match="twice"):
        g.compile([], [up], updates=[(a, a * 2.0)])
    assert float(a.value) == 1.0


def test_an_update_inside_a_cond_branch_is_refused_and_says_where_to_assign():
    with ns.Graph() as g:
        v = ns.Variable(1.0, name="v")
        p = ns.placeholder("p", shape=(), dtype=np.bool_)
        size = len(g.nodes)
        with pytest.raises(ValueError, match="inside a branch of ns.cond or the body"):
            ns.cond(p, lambda: v.assign(v + 1.0), lambda: v * 1.0)
    assert float(v.value) == 1.0 and len(g.nodes) == size


# ----------------------------------------------------------------- cond / while_loop
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_gradient_with_a_none_batch_equals_a_python_if_in_torch(sign, torch):
    rng = np.random.default_rng(3)
    xv = sign * np.abs(rng.standard_normal((5, 3)))
    wv = rng.standard_normal(3)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        w = ns.Variable(wv, name="w")
        y = ns.cond(ns.sum(x) > 0, lambda: ns.mean((x * w) ** 2), lambda: ns.max(ns.tanh(x + w)))
        gx, gw = ns.gradients(y, [x, w])
    values = g.run([y, gx, gw], {x: xv})
    xt, wt = torch.tensor(xv, requires_grad=True), torch.tensor(wv, requires_grad=True)
    out = ((xt * wt) ** 2).mean() if xt.sum() > 0 else (xt + wt).tanh().max()
    out.backward()
    close(values[0], out.item())
    close(values[1], xt.grad.numpy())
    close(values[2], wt.grad.numpy())


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_while_loop_value_and_gradient_equal_a_python_loop(steps, torch):
    wv, hv = np.array([[0.5, -0.3], [0.2, 0.8]]), np.array([1.0, -2.0])
    with ns.Graph() as g:
        n = ns.placeholder("n", shape=(), dtype=np.int64)
        w = ns.Variable(wv, name="w")
        h0 = ns.placeholder("h0", shape=(2,))
        _, h = ns.while_loop(lambda i, h: i < n, lambda i, h: (i + 1, ns.tanh(w @ h)), [0, h0])
        loss = ns.sum(h * h)
        gw, gh = ns.gradients(loss, [w, h0])
    values = g.run([loss, gw, gh], {n: np.array(steps), h0: hv})
    wt, ht = torch.tensor(wv, requires_grad=True), torch.tensor(hv, requires_grad=True)
    h_t = ht
    for _ in range(steps):
        h_t = torch.tanh(wt @ h_t)
    out = (h_t * h_t).sum()
    out.backward()
    close(values[0], out.item())
    close(values[1], wt.grad.numpy() if wt.grad is not None else np.zeros((2, 2)))
    close(values[2], ht.grad.numpy())


def test_a_loop_variable_used_twice_in_the_loss_gets_both_gradients(torch):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        a, b = ns.while_loop(lambda a, b: a < 10.0, lambda a, b: (a * x, b + a), [1.0, 0.0])
        loss = a * b + a
        (gx,) = ns.gradients(loss, [x])
    xv = 3.0
    xt = torch.tensor(xv, requires_grad=True)
    at, bt = torch.tensor(1.0), torch.tensor(0.0)
    while at < 10.0:
        at, bt = at * xt, bt + at
    (at * bt + at).backward()
    values = g.run([loss, gx], {x: np.array(xv)})
    close(values[0], (at * bt + at).item())
    close(values[1], xt.grad.item())


def test_a_failing_loop_in_a_run_commits_no_update():
    with ns.Graph() as g:
        v = ns.Variable(1.0, name="v")
        _, y = ns.while_loop(
            lambda i, y: i < 100, lambda i, y: (i + 1, y + v), [0, 0.0], maximum_iterations=5
        )
        up = v.assign(y)
    with pytest.raises(RuntimeError, match="maximum_iterations"):
        g.run(up)
    assert float(v.value) == 1.0


def test_a_loop_reading_a_variable_sees_the_value_from_before_the_run():
    with ns.Graph() as g:
        v = ns.Variable(2.0, name="v")
        _, y = ns.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y + v), [0, 0.0])
        up = v.assign(v + 100.0)
    total, new = g.run([y, up])
    assert (float(total), float(new), float(v.value)) == (6.0, 102.0, 102.0)


# ----------------------------------------------------------------- optimisers
def test_two_minimize_steps_on_one_graph_train_like_two_dynamic_optimisers():
    rng = np.random.default_rng(5)
    wv, xv = rng.standard_normal(3), rng.standard_normal((4, 3))
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        w = ns.Variable(wv, name="w")
        loss = ns.mean(ns.tanh(x @ w) ** 2)
        sgd = ns.optim.SGD([w], lr=0.1, momentum=0.5).minimize(loss)
        adam = ns.optim.Adam([w], lr=0.05).minimize(loss)
    wt = ng.tensor(wv, requires_grad=True)
    o1, o2 = ng.optim.SGD([wt], lr=0.1, momentum=0.5), ng.optim.Adam([wt], lr=0.05)
    for step, opt in [(sgd, o1), (adam, o2), (sgd, o1), (adam, o2)]:
        g.run(step, {x: xv})
        opt.zero_grad()
        (ng.tensor(xv) @ wt).tanh().pow(2).mean().backward()
        opt.step()
    close(w.value, wt.detach().numpy())


def test_running_both_optimiser_steps_in_one_run_is_refused_and_changes_nothing():
    with ns.Graph() as g:
        w = ns.Variable(np.array([1.0, 2.0]), name="w")
        loss = ns.sum(w * w)
        s1 = ns.optim.SGD([w], lr=0.1).minimize(loss)
        s2 = ns.optim.SGD([w], lr=0.2).minimize(loss)
    with pytest.raises(ValueError, match="twice"):
        g.run([s1, s2])
    assert w.value.tolist() == [1.0, 2.0]


def test_adam_on_a_loss_through_cond_and_loop_matches_dynamic_adam():
    wv = np.array([0.3, -0.7])
    with ns.Graph() as g:
        w = ns.Variable(wv, name="w")
        _, h = ns.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, ns.tanh(h * w + 0.1)), [0, w])
        loss = ns.cond(ns.sum(h) > 0, lambda: ns.sum(h * h), lambda: ns.sum(-h))
        step = ns.optim.Adam([w], lr=0.05).minimize(loss)
    wt = ng.tensor(wv, requires_grad=True)
    opt = ng.optim.Adam([wt], lr=0.05)
    for _ in range(6):
        g.run(step)
        opt.zero_grad()
        ht = wt
        for _ in range(3):
            ht = (ht * wt + 0.1).tanh()
        (ht * ht).sum().backward() if ht.sum().item() > 0 else (-ht).sum().backward()
        opt.step()
    close(w.value, wt.detach().numpy())


def test_a_failed_minimize_leaves_no_slot_variables_behind():
    with ns.Graph() as g:
        w = ns.Variable(np.array([1.0, 2.0]), name="w")
        loss = ns.sum(w * w)
        before = list(g.variables)
        with pytest.raises(ValueError):
            ns.optim.Adam([w], lr=0.1).minimize(loss, name="w")  # a taken name
    assert list(g.variables) == before


# ----------------------------------------------------------------- second round
def test_adam_on_a_float32_variable_takes_the_dynamic_optimisers_step():
    start = np.array([1.0, 2.0], dtype=np.float32)
    with ns.Graph() as g:
        w = ns.Variable(start, name="w")
        step = ns.optim.Adam([w], lr=0.1).minimize(ns.sum(w * w))
    wt = ng.tensor(start, requires_grad=True)
    opt = ng.optim.Adam([wt], lr=0.1)
    for _ in range(2):
        g.run(step)
        opt.zero_grad()
        (wt * wt).sum().backward()
        opt.step()
    assert w.value.dtype == np.float32
    np.testing.assert_allclose(w.value, wt.detach().numpy(), rtol=1e-7)


def test_sgd_with_momentum_on_a_float32_variable_matches_dynamic_mode_exactly():
    start = np.array([1.0, 2.0], dtype=np.float32)
    with ns.Graph() as g:
        w = ns.Variable(start, name="w")
        step = ns.optim.SGD([w], lr=0.1, momentum=0.9).minimize(ns.sum(w * w * w))
    wt = ng.tensor(start, requires_grad=True)
    opt = ng.optim.SGD([wt], lr=0.1, momentum=0.9)
    for _ in range(3):
        g.run(step)
        opt.zero_grad()
        (wt * wt * wt).sum().backward()
        opt.step()
    assert w.value.dtype == np.float32
    assert w.value.tolist() == wt.detach().numpy().tolist()


def test_a_predicate_of_unknown_shape_fed_a_vector_says_it_must_be_a_single_value():
    with ns.Graph() as g:
        p = ns.placeholder("p", shape=None, dtype=np.bool_)
        x = ns.placeholder("x", shape=())
        z = ns.cond(p, lambda: x * 2.0, lambda: x)
    with pytest.raises(ValueError, match="single value, but it was fed shape \\(2,\\)"):
        g.run(z, {p: np.array([True, False]), x: np.array(1.0)})


def test_max_with_ties_splits_the_gradient_like_torch_and_dynamic_mode(torch):
    xv = np.array([[1.0, 3.0], [3.0, 0.0]])
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 2))
        (gx,) = ns.gradients(ns.max(x), [x])
    xt = torch.tensor(xv, requires_grad=True)
    xt.max().backward()
    xd = ng.tensor(xv, requires_grad=True)
    xd.max().backward()
    close(g.run(gx, {x: xv}), xt.grad.numpy())
    close(xd.grad.numpy(), xt.grad.numpy())


def test_cond_returning_outer_nodes_as_they_are_routes_the_gradient_to_the_chosen_one():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        y = ns.placeholder("y", shape=(2,))
        z = ns.cond(ns.sum(x) > 0, lambda: x, lambda: y)
        gx, gy = ns.gradients(ns.sum(z * 3.0), [x, y])
    for sign, expect_x, expect_y in [(1.0, 3.0, 0.0), (-1.0, 0.0, 3.0)]:
        values = g.run([z, gx, gy], {x: sign * np.ones(2), y: 2 * np.ones(2)})
        assert values[1].tolist() == [expect_x] * 2 and values[2].tolist() == [expect_y] * 2


def test_nested_while_loops_and_a_cond_inside_a_loop_differentiate_like_python_loops(torch):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())

        def outer_body(i, t):
            _, u = ns.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, u * x), [0, t])
            return i + 1, u

        _, nested = ns.while_loop(lambda i, t: i < 3, outer_body, [0, 1.0])
        _, branched = ns.while_loop(
            lambda i, t: i < 4,
            lambda i, t: (i + 1, ns.cond(t > 2.0, lambda: t * 0.5, lambda: t * x)),
            [0, 1.0],
        )
        grads = ns.gradients([nested, branched], [x])
    xt = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    a = b = torch.tensor(1.0, dtype=torch.float64)
    for _ in range(6):
        a = a * xt
    for _ in range(4):
        b = b * 0.5 if b > 2.0 else b * xt
    (a + b).backward()
    values = g.run([nested, branched, *grads], {x: np.array(1.7)})
    close(values[0], a.item())
    close(values[1], b.item())
    close(values[2], xt.grad.item())


@pytest.mark.parametrize("steps", [0, 2])
def test_a_loop_over_a_none_sized_vector_differentiates_for_any_count(steps):
    xv = np.array([2.0, 3.0])
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        n = ns.placeholder("n", shape=(), dtype=np.int64)
        _, t = ns.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t * x), [0, x])
        (gx,) = ns.gradients(ns.sum(t), [x])
    value, grad = g.run([t, gx], {x: xv, n: np.array(steps)})
    close(value, xv ** (steps + 1))
    close(grad, (steps + 1) * xv**steps)


def test_a_loop_that_ends_exactly_at_maximum_iterations_is_not_an_error():
    with ns.Graph() as g:
        _, y = ns.while_loop(
            lambda i, y: i < 3, lambda i, y: (i + 1, y + 1.0), [0, 0.0], maximum_iterations=3
        )
    assert float(g.run(y)) == 3.0


def test_an_assign_inside_a_loop_body_is_refused_at_build_time():
    with ns.Graph() as g:
        v = ns.Variable(1.0, name="v")
        size = len(g.nodes)
        with pytest.raises(ValueError, match="assign the result outside it"):
            ns.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, v.assign(y + 1.0)), [0, 0.0])
    assert float(v.value) == 1.0 and len(g.nodes) == size


def test_a_compiled_output_of_the_updated_variable_is_its_value_before_the_call():
    with ns.Graph() as g:
        a = ns.Variable(np.zeros(2), name="a")
    f = g.compile([], [a], updates=[(a, a + 1.0)])
    (first,) = f()
    (second,) = f()
    assert first.tolist() == [0.0, 0.0] and second.tolist() == [1.0, 1.0]
    assert a.value.tolist() == [2.0, 2.0]


def test_an_update_to_another_variable_or_a_view_of_it_owns_its_storage():
    with ns.Graph() as g:
        a = ns.Variable(np.zeros(4), name="a")
        b = ns.Variable(np.arange(4.0), name="b")
        c = ns.Variable(np.zeros(4), name="c")
        via_view = c.assign(ns.reshape(ns.reshape(b, 2, 2), -1))
    g.compile([], [], updates=[(a, b)])()
    g.run(via_view)
    b.value[0] = 9.0  # an in-place edit of b's storage
    assert a.value.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert c.value.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_a_cond_on_a_variable_sees_its_value_from_before_an_update_in_the_same_run():
    with ns.Graph() as g:
        v = ns.Variable(1.0, name="v")
        y = ns.cond(v > 0, lambda: v * 10.0, lambda: v * -10.0)
        flip = v.assign(-v)
    assert [float(r) for r in g.run([y, flip])] == [10.0, -1.0]
    assert [float(r) for r in g.run([y, flip])] == [10.0, 1.0]


def test_a_refused_compile_with_updates_leaves_the_graph_as_it_was():
    with ns.Graph() as g:
        a = ns.Variable(1.0, name="a")
        x = ns.placeholder("x", shape=())
        first, second = a + x, a * 2.0
    names = [n.name for n in g.nodes]
    with pytest.raises(ValueError, match="twice"):
        g.compile([x], [a], updates=[(a, first), (a, second)])
    assert [n.name for n in g.nodes] == names and float(a.value) == 1.0


def test_a_branch_that_raises_while_built_adds_nothing_to_the_graph():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        pred = x > 0
        names = [n.name for n in g.nodes]

        def broken():
            raise RuntimeError("boom")

        with pytest.raises(RuntimeError, match="boom"):
            ns.cond(pred, lambda: x * 2.0, broken)
        with pytest.raises(TypeError, match="must be numeric data"):
            ns.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t * "a"), [0, x])
    assert [n.name for n in g.nodes] == names


def test_a_minimize_through_a_cond_refused_for_its_name_rolls_back_nodes_and_slots():
    with ns.Graph() as g:
        w = ns.Variable(np.array([1.0]), name="w")
        x = ns.placeholder("x", shape=())
        loss = ns.sum(ns.cond(x > 0, lambda: w * x, lambda: w * w))
        names, variables = [n.name for n in g.nodes], list(g.variables)
        with pytest.raises(ValueError, match="already exists"):
            ns.optim.SGD([w], lr=0.1, momentum=0.9).minimize(loss, name="x")
    assert [n.name for n in g.nodes] == names and list(g.variables) == variables


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("options", [{}, {"weight": [1.0, 2.0, 3.0]}, {"ignore_index": 0}])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_a_loss_of_one_unbatched_sample_and_its_gradient_equal_torch(
    name, options, reduction, torch
):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,), dtype=np.float64)
        y = ns.placeholder("y", shape=(), dtype=np.int64)
        given = {k: np.array(v) if isinstance(v, list) else v for k, v in options.items()}
        loss = getattr(ns, name)(x, y, reduction=reduction, **given)
        (gx,) = ns.gradients(loss.sum() if reduction == "none" else loss, [x])
    xv = np.array([1.0, 2.0, 0.5])
    values = g.run([loss, gx], {x: xv, y: np.array(1)})
    xt = torch.tensor(xv, requires_grad=True)
    taken = {
        k: torch.tensor(v, dtype=torch.float64) if isinstance(v, list) else v
        for k, v in options.items()
    }
    out = getattr(torch.nn.functional, name)(xt, torch.tensor(1), reduction=reduction, **taken)
    out.sum().backward()
    assert np.shape(values[0]) == ()
    close(values[0], out.item())
    close(values[1], xt.grad.numpy())
