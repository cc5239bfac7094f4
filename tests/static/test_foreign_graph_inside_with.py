"""Inside ``with g2:``, an op on nodes of another graph is refused, as a mix of two
graphs is: it does not silently join the other graph."""

from __future__ import annotations

import numpy as np
import pytest
from fast_switch import both_ways

import naivegraph.static as ns


def _graph_with_l4():
    g = ns.Graph(name="first")
    with g:
        x = ns.placeholder("x", shape=(2,))
        l4 = x * 2.0
    return g, x, l4


BUILDS = {
    "mean": lambda n: ns.mean(n),
    "method sum": lambda n: n.sum(),
    "neg": lambda n: -n,
    "times a number": lambda n: n * 3.0,
    "plus a number": lambda n: 1.0 + n,
    "exp": lambda n: ns.exp(n),
    "index": lambda n: n[0],
    "stack": lambda n: ns.stack([n, n]),
    "where": lambda n: ns.where(n > 0, n, 0.0),
}


@pytest.mark.parametrize("build", BUILDS.values(), ids=list(BUILDS))
def test_an_op_on_a_node_of_another_graph_inside_with_is_refused_fast_on_and_off(build):
    def program():
        g, _, l4 = _graph_with_l4()
        g2 = ns.Graph(name="second")
        before = len(g.nodes)
        with g2:
            with pytest.raises(ValueError) as caught:
                build(l4)
        return str(caught.value), len(g.nodes) - before, len(g2.nodes)

    on, off = both_ways(program)
    assert on == off
    message, added_to_g, added_to_g2 = on
    assert message.startswith("nodes of two graphs cannot be mixed: ")
    assert "built inside `with second:`" in message
    assert "its input 'mul_1' belongs to first" in message
    assert "build it inside `with first:`" in message
    assert "or rebuild its inputs in second" in message
    assert (added_to_g, added_to_g2) == (0, 0)  # nothing half-built in either graph


def test_the_same_op_inside_the_graphs_own_with_block_still_builds():
    g, x, l4 = _graph_with_l4()
    with ns.Graph():
        pass
    with g:
        loss = ns.mean(l4)
    assert loss.graph is g
    assert g.forward(x=np.array([1.0, 3.0]), fetches=[loss])[0] == pytest.approx(4.0)


def test_outside_any_with_block_an_op_joins_the_graph_of_its_inputs():
    g, x, l4 = _graph_with_l4()
    loss = ns.mean(l4)
    assert loss.graph is g


def test_gradients_called_inside_another_graphs_block_build_in_the_graph_of_the_loss():
    g, x, l4 = _graph_with_l4()
    with g:
        loss = ns.mean(l4)
    with ns.Graph(name="second"):
        (dx,) = ns.gradients(loss, [x])
    assert dx.graph is g
    assert g.forward(x=np.array([1.0, 3.0]), fetches=[dx])[0].tolist() == [1.0, 1.0]
