"""The fast layer of building, running and differentiating a whole static graph
(``naivegraph.fast.fastbuild``, ``naivegraph.fast.fastgraph``): every node, value,
gradient, recorded shape and error message must be what the readable path gives, so
each test builds and runs the same program with the layer on and off and compares."""

from __future__ import annotations

import numpy as np
import pytest
from fast_switch import both_ways, fast_layer_on

import naivegraph.static as ns
from naivegraph.static.nodes import Constant

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


def structure(graph):
    """Everything a graph says about its nodes, names of inputs instead of nodes."""
    return [
        (
            type(n).__name__,
            n.name,
            n.op_name,
            tuple(i.name for i in n.inputs),
            n.attrs,
            n.shape,
            n.dtype,
            n.is_gradient,
            n.built_at,
            fields(n),
            n._name,  # a number when the name is made on demand, either way
        )
        for n in graph.nodes
    ] + [graph.version, dict(graph._counters)]


def fields(node):
    """The fields a node has set (a node keeps them in slots)."""
    slots = [s for cls in type(node).__mro__ for s in vars(cls).get("__slots__", ())]
    return [s for s in slots if hasattr(node, s)]


def bits(value):
    if value is None:
        return None
    array = np.asarray(value)
    return type(value).__name__, array.dtype, array.shape, array.tobytes()


def run_state(graph):
    shapes = [(n.name, s) for n, s in graph.last_run.shapes.items()]
    variables = [(n.name, bits(v)) for n, v in graph.last_run.variables.items()]
    return shapes, variables


def chain(n, dtype=np.float64):
    with ns.Graph() as g:
        w = ns.Variable(np.array(2.5, dtype), name="w")
        y = w
        for _ in range(n):
            y = -y
    fetched = g.forward(fetches=[y])
    g.backward(y)
    return structure(g), [bits(v) for v in fetched], run_state(g), bits(w.grad)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_negation_chain_is_the_same_graph_values_and_gradient_either_way(dtype):
    on, off = both_ways(lambda: chain(301, dtype))
    assert on == off
    assert on[0][5][1] == "neg_5" and on[0][5][8][1] > 0  # names and the user's line
    assert on[1] == [bits(np.array(-2.5, dtype)[()])]  # 301 sign flips
    assert on[3] == bits(np.array(-1.0, dtype))


def small_network():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        w = ns.Variable(np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2), name="w")
        b = ns.Variable([0.5, -0.25], name="b")  # float32 as the placeholder: the default
        h = (x @ w + b).relu()
        loss = (h * h).mean() + ns.exp(-h).sum() * 0.5
        hidden = h.retain_grad()
        (dw,) = ns.gradients(loss, [w])
    feed = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    fetched = g.forward({x: feed}, fetches=[loss, hidden])
    g.backward(loss)
    whole = g.forward({x: feed})
    return (
        structure(g),
        [bits(v) for v in fetched],
        run_state(g),
        [bits(n.grad) for n in (w, b, hidden)],
        whole,
        [bits(n.value) for n in g.nodes],
        bits(dw.value),
    )


def test_a_network_with_broadcasting_and_symbolic_gradients_is_the_same_either_way():
    on, off = both_ways(small_network)
    assert on == off


def test_a_build_error_is_the_same_either_way_and_adds_no_node():
    def program():
        with ns.Graph() as g:
            a = ns.Variable(np.ones((2, 3)), name="a")
            b = ns.Variable(np.ones((4,)), name="b")
            with pytest.raises(ValueError) as error:
                a + b
        return str(error.value), structure(g)

    on, off = both_ways(program)
    assert on == off
    assert "cannot build add on inputs of shapes (2, 3), (4,)" in on[0]


def test_a_run_error_names_the_node_either_way():
    def program():
        with ns.Graph() as g:
            x = ns.placeholder("x", shape=(None,), dtype=np.bool_)
            y = ns.reshape(x, (2, 2))  # fits 4 elements: the fed size decides
        with pytest.raises(ValueError) as error:
            g.forward({x: np.array([True] * 3)}, fetches=[y])
        return str(error.value), [bits(n.value) for n in g.nodes]

    on, off = both_ways(program)
    assert on == off
    assert on[0].startswith("while running node 'reshape_1' (reshape): cannot reshape")


def test_an_error_that_no_unknown_size_can_avoid_is_raised_when_building_either_way():
    def program():
        with ns.Graph():
            x = ns.placeholder("x", shape=(None,), dtype=np.bool_)
            with pytest.raises(RuntimeError) as error:
                -x
        return str(error.value)

    on, off = both_ways(program)
    assert on == off
    assert on.startswith("cannot build neg on inputs of shapes (None,): Negation, the `-`")


def test_a_freed_value_refuses_backward_the_same_way_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(3.0, name="w")
            y = ns.exp(w * 2.0)
            z = y * 1.0
        g.forward(fetches=[z], free_intermediates=True)
        y._value = None  # as if freed
        with pytest.raises(RuntimeError) as error:
            g.backward(z)
        return str(error.value)

    on, off = both_ways(program)
    assert on == off
    assert "the value of 'exp_1' needed to differentiate 'mul_2' was freed" in on


def test_an_unregistered_constant_operand_is_registered_before_its_user_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(1.0, name="w")
            c = Constant(2.0)
            y = c * w
        return structure(g), y.inputs[0] is c, c.graph is g

    on, off = both_ways(program)
    assert on == off
    assert [row[1] for row in on[0][:3]] == ["w", "const_1", "mul_1"]


def multiply_add(n, dtype, numbers):
    """(b)'s chain ``y = y * a + b`` with Python numbers ``a``, ``b``."""
    a, b = numbers
    with ns.Graph("chain") as g:
        w = ns.Variable(np.array(1.5, dtype), name="w")
        y = w
        for _ in range(n):
            y = y * a
            y = b + y if n % 2 else y + b
        z = (y * y - 0.5) / 3.0
    fetched = g.forward(fetches=[z])
    g.backward(z)
    return structure(g), [bits(v) for v in fetched], run_state(g), bits(w.grad), str(g)


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
@pytest.mark.parametrize("numbers", [(0.999, 0.001), (3, True), (2, 0.5), (1 + 1j, 2.0)])
def test_python_number_operands_build_the_same_constants_values_and_gradient_either_way(
    dtype, numbers
):
    def program():
        try:
            return multiply_add(7, dtype, numbers)
        except (TypeError, RuntimeError) as error:  # e.g. an int Variable is not trainable
            return type(error).__name__, str(error)

    on, off = both_ways(program)
    assert on == off


def test_a_python_number_operand_makes_one_constant_node_per_use_at_the_users_line():
    on, off = both_ways(lambda: multiply_add(2, np.float32, (0.999, 0.001)))
    assert on == off
    nodes, fetched, _, grad, listing = on
    assert [row[1] for row in nodes[:5]] == ["w", "const_1", "mul_1", "const_2", "add_1"]
    assert nodes[1][0] == "Constant" and nodes[1][6] == np.dtype(np.float64)
    assert nodes[1][8] == nodes[2][8]  # the constant is built where its user is
    assert "  %const_3 = constant 0.999" in listing and "%mul_2 = mul %add_1 %const_3" in listing
    y = np.float32(np.float32(np.float32(1.5) * 0.999 + 0.001) * 0.999 + 0.001)
    assert fetched == [bits(np.float32((y * y - 0.5) / 3.0))]
    g = np.float32(1.0) / 3.0  # the rules, in float32: div, then y * y's two uses
    g = g * y + g * y
    assert grad == bits(np.array(g * 0.999 * 0.999, np.float32))


def test_the_fast_build_takes_a_python_number_operand_itself(monkeypatch):
    from naivegraph.fast import fastbuild

    monkeypatch.setattr(fastbuild, "readable_apply", lambda *args: pytest.fail(str(args)))
    with ns.Graph() as g:
        w = ns.Variable(2.0, name="w")
        y = 3.0 - (w * 0.5 + 1) / 2.0
    assert [n.name for n in g.nodes] == [
        *("w", "const_1", "mul_1", "const_2", "add_1", "const_3", "div_1"),
        *("const_4", "sub_1"),
    ]
    assert y is g.nodes[-1] and y.inputs[0] is g.nodes[-2] and y.inputs[0].value == 3.0


def test_a_value_read_twice_by_its_last_reader_is_freed_once_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(np.array([1.0, -2.0]), name="w", trainable=False)
            a = -w
            b = a * a  # the last reader of a reads it twice
            c = (b + a.exp()) * b
        fetched = g.forward(fetches=[c])
        kept = [bits(n.value) for n in (a, b)]
        return structure(g), [bits(v) for v in fetched], run_state(g), kept

    on, off = both_ways(program)
    assert on == off
    assert on[3] == [None, None]  # freed: neither is fetched nor saved for a backward


def test_a_chain_whose_middle_node_is_fetched_and_retains_its_gradient_is_the_same_either_way():
    def program(dtype, numbers):
        a, b = numbers
        with ns.Graph() as g:
            w = ns.Variable(np.array(1.25, dtype), name="w")
            y = w
            for _ in range(5):
                y = y * a + b
            middle = y.retain_grad()
            for _ in range(5):
                y = -(y * a) + b
        fetched = g.forward(fetches=[y, middle])
        g.backward(y)
        values = [bits(n.value) for n in g.nodes]
        return structure(g), [bits(v) for v in fetched], run_state(g), values, bits(middle.grad)

    for dtype in (np.float32, np.float64):
        for numbers in [(0.5, 0.25), (3, True), (2, False), (1.5, 2)]:
            on, off = both_ways(program, dtype, numbers)
            assert on == off
            assert on[3][12] is not None  # the middle node, fetched, keeps its value
            assert on[4] is not None and on[4][1] == np.dtype(dtype)


def test_complex_number_operands_give_the_same_complex_gradient_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(np.array(0.5 - 1j, np.complex64), name="w")
            y = (w * (2 - 1j) + 1j) * 0.5
            loss = y * y
        g.forward(fetches=[loss])
        g.backward(loss)
        return structure(g), run_state(g), bits(w.grad)

    on, off = both_ways(program)
    assert on == off
    assert on[2][1] == np.dtype(np.complex64)


def branches():
    """Saving ops on nodes a gradient flows through and on nodes it does not."""
    with ns.Graph() as g:
        w = ns.Variable(np.array([1.0, -2.0, 0.5]), name="w")
        v = ns.Variable(np.array([0.25, 2.0, -1.0]), name="v", trainable=False)
        p = v * 2.0  # no gradient flows: its saves keep nothing
        q = p * p
        s = (w * q).exp()  # saves w, q and its own value
        t = s + p
        loss = (t * 3.0).sum()
    fetched = g.forward(fetches=[loss])
    kept = [bits(n.value) for n in g.nodes]
    g.backward(loss)
    return structure(g), [bits(f) for f in fetched], run_state(g), kept, bits(w.grad)


def test_values_kept_for_the_backward_are_those_the_flowing_ops_save_either_way():
    on, off = both_ways(branches)
    assert on == off
    names = [row[1] for row in on[0][:-2]]
    kept = {name for name, value in zip(names, on[3]) if value is not None}
    assert kept == {"w", "v", "const_1", "mul_2", "exp_1", "add_1", "const_2", "sum_1"}
    assert [name for name, _ in on[2][0]] == ["mul_3", "mul_1", "mul_4"]  # in the order freed


def test_two_values_last_read_by_one_op_are_freed_in_creation_order_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(np.array([1.0, 2.0]), name="w", trainable=False)
            a = -w
            b = w.exp()
            c = b - a  # the last reader of both, the later one first
            d = ns.stack([-w for _ in range(9)] + [c])  # ten inputs: masks above 8 bits
        fetched = g.forward(fetches=[d])
        return structure(g), [bits(f) for f in fetched], run_state(g)

    on, off = both_ways(program)
    assert on == off
    assert [name for name, _ in on[2][0]][:4] == ["neg_1", "exp_1", "sub_1", "neg_2"]
    assert len(on[2][0]) == 12


def test_the_recorded_shapes_read_as_a_mapping_of_freed_nodes_either_way():
    def program():
        with ns.Graph() as g:
            x = ns.placeholder("x", shape=(None,))
            y = (x * 2.0).exp()
            z = -y
            loss = z.sum()
        g.forward({x: np.ones(3, np.float32)}, fetches=[loss])
        shapes = g.last_run.shapes
        return (
            len(shapes),
            [n.name for n in shapes],
            {n.name: shapes[n] for n in shapes},
            [n in shapes for n in g.nodes],
            shapes.get(z),
            shapes.get(loss, "not freed"),
        )

    on, off = both_ways(program)
    assert on == off
    assert on[:3] == (3, ["mul_1", "exp_1", "neg_1"], {"mul_1": (3,), "exp_1": (3,), "neg_1": (3,)})
    assert on[4] == (3,) and on[5] == "not freed"


def test_a_run_whose_ops_save_nothing_frees_the_same_values_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(np.array([1.0, 2.0]), name="w")
            a = -w
            b = a + w
            c = b - a  # the last reader of a and b
            d = ns.stack([-c for _ in range(9)] + [b + c])  # ten inputs: masks above 8 bits
        fetched = g.forward(fetches=[d, b])
        g.backward(d, grad=np.ones((10, 2)))
        return structure(g), [bits(f) for f in fetched], run_state(g), bits(w.grad)

    on, off = both_ways(program)
    assert on == off
    assert [name for name, _ in on[2][0]] == [
        "neg_1",
        "sub_1",
        *(f"neg_{k}" for k in range(2, 11)),
        "add_2",
    ]


def test_a_failed_run_leaves_the_values_of_the_run_before_either_way():
    def program():
        with ns.Graph() as g:
            x = ns.placeholder("x", shape=(None,))
            w = ns.Variable(np.array([0.5, 2.0, -1.0, 3.0], np.float32), name="w")
            a = x * 2.0
            b = ns.reshape(a, (2, 2))  # fits 4 elements: the fed size decides
            c = -(b * ns.reshape(w, (2, 2)))
        g.forward({x: np.arange(4.0)}, fetches=[c])
        first = [bits(n.value) for n in g.nodes]
        with pytest.raises(ValueError) as error:
            g.forward({x: np.arange(3.0)}, fetches=[c])
        return first, [bits(n.value) for n in g.nodes], run_state(g), str(error.value)

    on, off = both_ways(program)
    assert on == off
    assert on[0] == on[1]  # nothing of the failed run is left behind
    assert on[3].startswith("while running node 'reshape_1' (reshape)")


def test_a_run_of_part_of_the_graph_clears_the_values_of_the_rest_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(np.array([1.0, -2.0]), name="w")
            a = w.exp()
            b = a * 3.0
            c = -w
            d = (b + c).sum()
        g.forward()  # every node, every value kept
        whole = [bits(n.value) for n in g.nodes]
        fetched = g.forward(fetches=[c, b])
        return (
            whole,
            [bits(f) for f in fetched],
            [bits(n.value) for n in g.nodes],
            run_state(g),
            d.name,
        )

    on, off = both_ways(program)
    assert on == off
    assert on[0][-1] is not None and on[2][-1] is None  # d is not in the second run


def test_nodes_of_two_ops_numbered_alike_share_the_number_and_keep_their_names():
    with ns.Graph() as g:
        y = ns.Variable(1.0, name="w")
        for _ in range(300):  # numbers above 256: ints of their own
            y = y * 0.5 + 0.25
    mul, add = g["mul_300"], g["add_300"]
    assert (mul.name, add.name, mul._name, add._name) == ("mul_300", "add_300", 300, 300)
    assert mul._name is add._name  # one int: the build keeps 32 bytes less
    assert g["const_600"].inputs == () and g.nodes[-1] is add


def test_the_recorded_shapes_stay_those_of_the_run_when_the_graph_grows_after_it_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(np.array([1.0, 2.0]), name="w")
            y = w
            for _ in range(4):
                y = -y * 2.0
        g.forward(fetches=[y])  # every node runs: the order is the graph's own list
        with g:
            z = (y + 1.0).exp()
            with pytest.raises(ValueError):
                ns.gradients(z, [w], grad_ys=[np.ones(3)])  # a failed build, rolled back
        return structure(g), run_state(g), [n in g.last_run.shapes for n in g.nodes]

    on, off = both_ways(program)
    assert on == off
    assert [name for name, _ in on[1][0]] == ["mul_1", "mul_2", "mul_3"]  # neg_k: mul saves it


def test_a_constant_that_retains_its_gradient_gets_it_either_way():
    def program():
        with ns.Graph() as g:
            w = ns.Variable(np.array([1.5, -2.0], np.float32), name="w")
            c = ns.constant(np.array([3.0, 0.5], np.float32)).retain_grad()
            loss = ((w * c) + c).sum()
        g.forward(fetches=[loss])
        g.backward(loss)
        return structure(g), bits(w.grad), bits(c.grad)

    on, off = both_ways(program)
    assert on == off
    assert on[2] == bits(np.array([2.5, -1.0], np.float32))  # w + 1
