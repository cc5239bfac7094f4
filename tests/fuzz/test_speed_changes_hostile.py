"""The fast backward pass and the lean static nodes change speed, never results.

Cases probed against the readable path (``fast.disabled()``) and, where PyTorch defines
the answer, torch's numbers worked out by hand: the dtype a static node declares, the
values its run computes, names of many nodes, the state a backward pass leaves behind
when a hook raises, and gradients that must not share memory.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from fast_switch import both_ways, fast_layer_on

import naivegraph as ng
import naivegraph.static as ns

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


# -- static: the build's shape and dtype inference follows the default dtype -----------
def _integer_ops_under_each_default() -> list:
    """Ops that turn int64 operands into the default float, built under float32, then
    float64, then float32 again: declared dtype and the dtype the run computes."""
    found = []
    for default in (np.float32, np.float64, np.float32):
        ng.set_default_dtype(default)
        try:
            with ns.Graph() as g:
                x = ns.placeholder("x", shape=(2,), dtype=np.int64)
                z = ns.placeholder("z", shape=(2,), dtype=np.int64)
                outs = [x / z, x.exp(), x**2.5, x.sqrt(), x / 2]
            values = g.forward({x: np.array([1, 4]), z: np.array([2, 8])}, outs)
        finally:
            ng.set_default_dtype(np.float32)
        found.append(([str(n.dtype) for n in outs], [str(v.dtype) for v in values]))
    return found


def test_static_int_ops_take_the_default_dtype_of_their_build_not_of_an_earlier_one():
    on, off = both_ways(_integer_ops_under_each_default)
    assert on == off
    f32, f64 = ["float32"] * 5, ["float64"] * 5
    assert on == [(f32, f32), (f64, f64), (f32, f32)]  # torch: int / int is the default


def test_static_int_power_declares_the_dtype_its_run_computes_after_a_default_change():
    def program():
        dtypes = []
        for default in (np.float32, np.float64):
            ng.set_default_dtype(default)
            try:
                with ns.Graph() as g:
                    x = ns.placeholder("x", shape=(2,), dtype=np.int32)
                    y = x**2.5
                value = g.forward({x: np.array([1, 2], np.int32)}, [y])[0]
            finally:
                ng.set_default_dtype(np.float32)
            dtypes.append((str(y.dtype), str(value.dtype)))
        return dtypes

    on, off = both_ways(program)
    assert on == off == [("float32", "float32"), ("float64", "float64")]


# -- static: names --------------------------------------------------------------------
def _long_negation_chain():
    with ns.Graph() as g:
        w = ns.Variable(2.0, name="neg_3")  # a name given, in the automatic names' way
        y = w
        for _ in range(10_000):
            y = -y
    names = [n.name for n in g.nodes]
    return names[:4], names[-1], g["neg_10001"] is y, g["neg_3"] is w, len(set(names))


def test_ten_thousand_automatic_names_step_over_a_given_one_and_are_all_found():
    on, off = both_ways(_long_negation_chain)
    assert on == off
    assert on == (["neg_3", "neg_1", "neg_2", "neg_4"], "neg_10001", True, True, 10_001)


def test_renaming_a_node_to_a_future_automatic_name_is_stepped_over():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(2.0, name="w")
            a = -w
            g.rename(a, "neg_3")
            b, c = -a, -(-a)
        return [n.name for n in g.nodes], all(g[n.name] is n for n in g.nodes), b.name, c.name

    on, off = both_ways(program)
    assert on == off
    assert on == (["w", "neg_3", "neg_2", "neg_4", "neg_5"], True, "neg_2", "neg_5")


def test_a_static_node_refuses_an_attribute_of_its_own_with_attribute_error():
    with ns.Graph():
        y = -ns.placeholder("x", shape=())
    with pytest.raises(AttributeError, match="colour"):
        y.colour = "red"


# -- static: gradients through a long chain with Python-number operands ----------------
def test_gradient_through_ten_thousand_nodes_with_number_operands_matches_the_readable_path():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(np.float64(1.0), name="w")
            y = w
            for i in range(10_000):
                y = y * 0.9999 + 0.0001 if i % 2 else -y
        (grad,) = ns.gradients(y, [w])
        return [v.tobytes() for v in g.forward(None, [y, grad])]

    on, off = both_ways(program)
    assert on == off
    grad = np.frombuffer(on[1], np.float64)[0]
    assert grad == pytest.approx(0.9999**5000, rel=1e-12)  # 5000 negations: sign +


# -- dynamic: the state a backward pass leaves when a hook raises ----------------------
@pytest.mark.parametrize("where", ["tensor hook", "post-accumulate hook"])
def test_a_hook_that_raises_leaves_collector_numpy_and_grad_mode_as_they_were(where):
    def program():
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        if where == "tensor hook":
            y.register_hook(lambda g: 1 / 0)
        else:
            x.register_post_accumulate_grad_hook(lambda t: 1 / 0)
        before = np.geterr()
        with pytest.raises(ZeroDivisionError):
            y.sum().backward()
        return gc.isenabled(), np.geterr() == before, ng.is_grad_enabled()

    assert gc.isenabled()
    on, off = both_ways(program)
    assert on == off == (True, True, True)


# -- dynamic: gradients summed to a 0-d input are arrays of their own ------------------
def test_zero_dim_leaves_get_gradients_that_share_no_memory():
    def program():
        a = ng.tensor(1.5, requires_grad=True)
        b = ng.tensor(2.5, requires_grad=True)
        c = ng.tensor([1.0, 2.0, 3.0])
        ((a * c).sum() + (b * c).sum()).backward()
        first = a.grad
        first.add_(100.0)  # must not reach b.grad
        ((a * c).sum()).backward()
        return a.grad.item(), b.grad.item(), first is a.grad

    on, off = both_ways(program)
    assert on == off == (112.0, 6.0, True)  # torch accumulates into the same tensor


def test_second_backward_through_a_released_graph_raises_the_same_error():
    def program():
        x = ng.tensor(2.0, requires_grad=True)
        y = (x * 3.0).exp()
        y.backward()
        with pytest.raises(RuntimeError) as error:
            y.backward()
        return str(error.value)

    on, off = both_ways(program)
    assert on == off
    assert on.startswith("Trying to backward through the graph a second time")
