"""Updates as graph nodes: ``ns.assign`` / ``var.assign(node)``, ``g.run`` and
``g.compile(..., updates=...)``, with TensorFlow 1's and Theano's semantics: every read
of a Variable in one run sees its value from before the run, and the updates of a run
are stored together at its end, only if the whole run succeeded."""

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph.static as ns

# numpy float64 data; update steps compared with Python's float arithmetic to 1e-12:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)


def counter_graph():
    g = ns.Graph()
    with g:
        count = ns.Variable(0.0, name="count")
        increment = count.assign(count + 1.0)
    return g, count, increment


def test_assigning_a_node_builds_an_update_and_changes_nothing_yet():
    g, count, increment = counter_graph()
    assert increment.op_name == "assign" and increment in g
    assert float(count.value) == 0.0


def test_each_run_that_fetches_the_update_applies_it_once():
    g, count, increment = counter_graph()
    assert [float(g.run(increment)) for _ in range(3)] == [1.0, 2.0, 3.0]
    assert float(count.value) == 3.0


def test_assigning_a_plain_value_still_happens_at_once():
    g, count, _ = counter_graph()
    assert count.assign(5.0) is count and float(count.value) == 5.0
    assert ns.assign(count, 7.0) is count and float(count.value) == 7.0


def test_every_read_in_a_run_sees_the_value_from_before_the_run():
    with ns.Graph() as g:
        a = ns.Variable(1.0, name="a")
        b = ns.Variable(10.0, name="b")
        swap_a, swap_b = a.assign(b), b.assign(a)  # a swap, as in Theano's updates
        total = a + b
    assert [float(v) for v in g.run([total, swap_a, swap_b])] == [11.0, 10.0, 1.0]
    assert (float(a.value), float(b.value)) == (10.0, 1.0)


def test_run_returns_the_structure_it_was_given_and_accepts_names():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        s = ns.sum(x)
    assert float(g.run(s, x=np.arange(4.0))) == 6.0
    assert float(g.run("sum_1", {x: np.ones(5)})) == 5.0
    values = g.run((s, x), {"x": np.ones(2)})
    assert isinstance(values, list) and float(values[0]) == 2.0
    assert values[1].tolist() == [1.0, 1.0]


def test_run_leaves_node_values_alone_and_forward_runs_no_update():
    g, count, increment = counter_graph()
    g.run(increment)
    assert increment.value is None  # g.run is a pure function of feeds and state
    g.forward()  # the whole graph, for inspection: values, but no update
    assert float(count.value) == 1.0 and increment.value is None


def test_compile_with_updates_runs_them_on_every_call_and_returns_only_outputs():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        w = ns.Variable(0.0, name="w")
        loss = ns.sum((x - w) ** 2)
        (dw,) = ns.gradients(loss, [w])
    for optimize in (True, False):
        w.assign(0.0)
        step = g.compile([x], [loss], updates=[(w, w - 0.1 * dw)], optimize=optimize)
        losses = [float(step(np.array([1.0, 3.0]))[0]) for _ in range(3)]
        # dw = 4w - 8, so w: 0 -> 0.8 -> 1.28 -> 1.568; each loss uses w from before its step
        assert losses == pytest.approx([10.0, 4.88, 3.0368], rel=1e-12)
        assert float(w.value) == pytest.approx(1.568, rel=1e-12)
    assert "updates assign" in repr(step)


def test_compile_accepts_a_dict_of_updates_as_theano_does():
    with ns.Graph() as g:
        w = ns.Variable(1.0, name="w")
    f = g.compile([], [w], updates={w: w * 3.0})
    assert [float(f()[0]) for _ in range(3)] == [1.0, 3.0, 9.0]


def test_the_new_value_is_the_variables_own_array():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable(np.zeros(2), name="w")
        copy_in = w.assign(x + 0.0)
        take_feed = ns.assign(w, x)
    fed = np.array([1.0, 2.0])
    result = g.run(take_feed, {x: fed})
    fed[0] = 99.0
    result[1] = -1.0
    assert w.value.tolist() == [1.0, 2.0]  # neither the feed nor the fetched array is shared
    assert g.run(copy_in, {x: np.ones(2)}).tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------- bad input
def test_assigning_a_node_of_another_shape_is_refused_and_adds_nothing():
    with ns.Graph() as g:
        w = ns.Variable(np.zeros((2, 3)), name="w")
        wrong, total = ns.constant(np.zeros((3, 2))) * 1.0, w.sum()
        size = len(g.nodes)
        with pytest.raises(ValueError, match=r"of shape \(3, 2\) to Variable 'w' of shape"):
            w.assign(wrong)
        with pytest.raises(ValueError, match="a variable keeps its shape"):
            ns.assign(w, total)
        assert len(g.nodes) == size


def test_assigning_a_node_of_a_lossy_dtype_is_refused():
    with ns.Graph() as g:
        counter = ns.Variable(np.zeros(2, dtype=np.int64), name="n", trainable=False)
        size = len(g.nodes)
        with pytest.raises(TypeError, match="float64 to Variable 'n' of dtype int64"):
            counter.assign(counter * 0.5)
        assert len(g.nodes) == size + 2  # the product was built; the assign was not


def test_assign_to_something_that_is_not_a_variable_is_a_type_error():
    with ns.Graph():
        x = ns.placeholder("x", shape=(2,))
        with pytest.raises(TypeError, match="assign updates a Variable, but got placeholder 'x'"):
            ns.assign(x, x * 2.0)


def test_an_update_with_an_unknown_size_is_checked_when_it_runs_and_commits_nothing():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        w = ns.Variable(np.zeros(2), name="w")
        v = ns.Variable(0.0, name="v")
        bump_v = v.assign(v + 1.0)
        set_w = w.assign(x * 2.0)
    with pytest.raises(ValueError, match=r"cannot assign a value of shape \(3,\)"):
        g.run([bump_v, set_w], {x: np.ones(3)})
    assert float(v.value) == 0.0 and w.value.tolist() == [0.0, 0.0]  # nothing half-done
    g.run([bump_v, set_w], {x: np.ones(2)})
    assert float(v.value) == 1.0 and w.value.tolist() == [2.0, 2.0]


def test_a_run_missing_a_feed_an_update_needs_names_the_placeholder_and_changes_nothing():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        w = ns.Variable(1.0, name="w")
        update = w.assign(w + x)
    with pytest.raises(ValueError, match="placeholder 'x' needs a value"):
        g.run(update)
    assert float(w.value) == 1.0


def test_two_updates_of_one_variable_in_one_run_are_refused():
    with ns.Graph() as g:
        w = ns.Variable(1.0, name="w")
        double, halve = w.assign(w * 2.0), w.assign(w / 2.0)
    with pytest.raises(ValueError, match="would update Variable 'w' twice"):
        g.run([double, halve])
    assert float(w.value) == 1.0


def test_updates_must_be_pairs():
    with ns.Graph() as g:
        w = ns.Variable(1.0, name="w")
        doubled = w * 2.0
        size = len(g.nodes)
    with pytest.raises(TypeError, match=r"updates are \(variable, new_value\) pairs"):
        g.compile([], [w], updates=[(w, doubled), w])
    assert len(g.nodes) == size  # the first, valid update was rolled back too


def test_run_reuses_its_plan_until_the_graph_changes():
    g, count, increment = counter_graph()
    g.run(increment)
    (plan,) = [entry[1] for entry in g.run_plans.values()]
    g.run(increment)
    assert [entry[1] for entry in g.run_plans.values()] == [plan]
    with g:
        double = count.assign(count * 2.0)  # the graph changed: plans are made anew
    assert float(g.run(double)) == 4.0 and float(g.run(increment)) == 5.0
    assert all(entry[1] is not plan for entry in g.run_plans.values())
