"""Mistakes surface early, with a message that says what was wrong and what to do."""

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph.static as ns

# numpy float64 data fed to placeholders declared without a dtype:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)


@pytest.fixture
def graph():
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", shape=(2, 2))
        w = ns.Variable(2.0, name="w")
        y = ns.sum(x * w)
    return g, x, w, y


def test_missing_feed_names_the_placeholder(graph):
    g, x, w, y = graph
    with pytest.raises(ValueError, match="placeholder 'input' needs a value"):
        g.forward(fetches=[y])


def test_missing_input_at_compile_time_names_the_placeholder(graph):
    g, x, w, y = graph
    with pytest.raises(ValueError, match="placeholder 'input' needs a value"):
        g.compile(inputs=[], outputs=[y])


def test_wrong_feed_shape_names_both_shapes(graph):
    g, x, w, y = graph
    with pytest.raises(ValueError, match=r"has shape \(3,\).*declared with shape \(2, 2\)"):
        g.forward(input=np.ones(3))


def test_compiled_function_checks_feed_shape(graph):
    g, x, w, y = graph
    f = g.compile([x], [y])
    with pytest.raises(ValueError, match=r"has shape \(2, 3\).*declared with shape \(2, 2\)"):
        f(np.ones((2, 3)))


def test_feeding_a_variable_is_a_type_error_pointing_to_assign(graph):
    g, x, w, y = graph
    with pytest.raises(
        TypeError, match=r"only placeholders can be fed, but 'w' is a Variable.*assign"
    ):
        g.forward({x: np.ones((2, 2)), w: 3.0})


def test_unknown_placeholder_name_lists_the_real_ones(graph):
    g, x, w, y = graph
    with pytest.raises(KeyError, match="unknown placeholder name 'inptu'.*are: input"):
        g.forward(inptu=np.ones((2, 2)))


def test_mixing_nodes_of_two_graphs_is_rejected():
    with ns.Graph():
        a = ns.placeholder("a", shape=())
    with ns.Graph():
        b = ns.placeholder("b", shape=())
    with pytest.raises(ValueError, match="nodes of two graphs cannot be mixed: 'a' belongs to"):
        a + b


def test_feeding_a_node_of_another_graph_is_rejected(graph):
    g, x, w, y = graph
    with ns.Graph():
        other = ns.placeholder("input", shape=(2, 2))
    with pytest.raises(ValueError, match="belongs to .* not to"):
        g.forward({other: np.ones((2, 2))})


def test_bool_of_node_explains_control_flow_and_alternatives(graph):
    g, x, w, y = graph
    with pytest.raises(TypeError) as info:
        if y > 0:  # the line the message must quote
            pass
    message = str(info.value)
    assert "data-dependent Python control flow cannot be expressed in a static graph" in message
    assert "ns.where" in message and "dynamic mode" in message
    assert "if y > 0:  # the line the message must quote" in message


def test_incompatible_shapes_fail_at_build_time_naming_both():
    with ns.Graph():
        a = ns.placeholder("a", shape=(2, 3))
        b = ns.placeholder("b", shape=(4,))
        with pytest.raises(ValueError, match=r"\(2, 3\) and \(4,\) cannot be broadcast"):
            a + b
        with pytest.raises(
            ValueError, match=r"cannot build matmul on inputs of shapes \(2, 3\), \(4,\)"
        ):
            a @ b


def test_failed_build_leaves_no_half_built_node():
    g = ns.Graph()
    with g:
        a = ns.placeholder("a", shape=(2, 3))
        before = [n.name for n in g.nodes]
        with pytest.raises(ValueError):
            a + np.ones(4)  # the literal would become a constant: it must not stay behind
        with pytest.raises(RuntimeError, match="invalid for input of size 6"):
            a.reshape(7)  # the same check, and the same error, as in dynamic mode
    assert [n.name for n in g.nodes] == before


def test_failed_symbolic_gradient_rolls_back_every_new_node():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x")  # unknown rank: a reduction's gradient cannot be built
        y = ns.sum(ns.exp(x) * 2.0, dim=1).sum()
        count = len(g.nodes)
        with pytest.raises(ValueError, match="needs the rank of its input"):
            ns.gradients(y, [x])
    assert len(g.nodes) == count


def test_duplicate_placeholder_name_is_rejected():
    with ns.Graph():
        ns.placeholder("x", shape=())
        with pytest.raises(ValueError, match="a node named 'x' already exists"):
            ns.placeholder("x", shape=())


def test_assign_with_wrong_shape_names_both_shapes(graph):
    g, x, w, y = graph
    with pytest.raises(ValueError, match=r"shape \(3,\) to Variable 'w' of shape \(\)"):
        w.assign(np.ones(3))


def test_backward_before_forward_says_to_run_forward(graph):
    g, x, w, y = graph
    with pytest.raises(RuntimeError, match=r"has no value: run graph.forward"):
        g.backward(y)


def test_backward_of_non_scalar_needs_a_gradient(graph):
    g, x, w, y = graph
    with g:
        z = x * w
    g.forward(input=np.ones((2, 2)))
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        g.backward(z)
    g.backward(z, grad=np.ones((2, 2)))
    assert float(w.grad) == 4.0


def test_indexing_with_a_node_is_rejected(graph):
    g, x, w, y = graph
    with pytest.raises(TypeError, match="index must be known when the graph is built"):
        x[y]


def test_none_dimension_accepts_any_batch_size():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(None, 3))
        s = ns.sum(x, dim=1)
    assert s.shape == (None,)  # the batch size stays unknown; everything else is inferred
    (out,) = g.forward(x=np.ones((5, 3)), fetches=[s])
    assert out.tolist() == [3.0] * 5
    with pytest.raises(ValueError, match=r"has shape \(5, 4\).*\(None, 3\)"):
        g.forward(x=np.ones((5, 4)))


def test_shapes_below_an_unknown_batch_keep_every_dimension_that_does_not_depend_on_it():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        h = (x @ ns.Variable(np.ones((3, 2)), name="w") + ns.Variable(np.zeros(2), name="b")).relu()
        images = ns.placeholder("images", shape=(None, 3, 4))
        shapes = {
            "h": h.shape,
            "h.T": h.T.shape,
            "mean": h.mean().shape,
            "sum(dim=0)": h.sum(0).shape,
            "x[:2]": x[:2].shape,
            "x[0]": x[0].shape,
            "flatten(1)": images.flatten(1).shape,
            "expand": x.unsqueeze(1).expand(-1, 4, -1).shape,
            "squeeze()": x.squeeze().shape,
        }
    assert shapes == {
        "h": (None, 2),
        "h.T": (2, None),
        "mean": (),
        "sum(dim=0)": (2,),
        "x[:2]": (None, 3),  # 1 row for a batch of 1, 2 for larger ones
        "x[0]": (3,),
        "flatten(1)": (None, 12),
        "expand": (None, 4, 3),
        "squeeze()": None,  # even the rank depends on the batch size (1 is squeezed)
    }
    (out,) = g.forward(x=np.ones((5, 3)), fetches=[h.T])
    assert out.shape == (2, 5)


def test_len_of_a_node_with_an_unknown_first_dimension_says_so():
    with ns.Graph():
        x = ns.placeholder("x", shape=(None, 3))
        with pytest.raises(TypeError, match=r"needs a known first dimension.*\(None, 3\)"):
            len(x)


def test_reset_default_graph_inside_a_block_is_refused():
    with ns.Graph():
        with pytest.raises(RuntimeError, match="leave the block first"):
            ns.reset_default_graph()


def test_default_graph_collects_nodes_outside_blocks():
    g = ns.reset_default_graph()
    a = ns.constant(1.0)
    assert a.graph is g and ns.get_default_graph() is g
    inner = ns.Graph()
    with inner:
        assert ns.get_default_graph() is inner
    assert ns.get_default_graph() is g


# ---------------------------------------------------------------------------------
# Feeds that are not numeric, or not rectangular, are refused naming the placeholder
# ---------------------------------------------------------------------------------
def _values_and_names(g):
    return [n.name for n in g.nodes], [
        None if n.value is None else np.copy(n.value) for n in g.nodes
    ]


def _assert_unchanged(g, before):
    names, values = _values_and_names(g)
    assert names == before[0]
    for now, then in zip(values, before[1]):
        assert (now is None and then is None) or np.array_equal(now, then)


def test_feeding_a_string_names_the_placeholder_and_says_it_is_not_numeric(graph):
    g, x, w, y = graph
    g.forward(input=np.ones((2, 2)))
    before = _values_and_names(g)
    with pytest.raises(TypeError, match=r"placeholder 'input' must be numeric data.*str 'abc'"):
        g.forward({x: "abc"})
    _assert_unchanged(g, before)


def test_feeding_a_ragged_list_names_the_placeholder_and_the_row_lengths(graph):
    g, x, w, y = graph
    g.forward(input=np.ones((2, 2)))
    before = _values_and_names(g)
    with pytest.raises(
        ValueError,
        match=r"placeholder 'input' is ragged: its rows have "
        r"different lengths \(2 and 1\)",
    ):
        g.forward({x: [[1.0, 2.0], [3.0]]})
    _assert_unchanged(g, before)


def test_feeding_a_list_with_a_string_names_the_element_that_is_not_a_number(graph):
    g, x, w, y = graph
    with pytest.raises(TypeError, match=r"placeholder 'input'.*contains str 'a'"):
        g.forward(input=[[1.0, "a"], [2.0, 3.0]])


@pytest.mark.parametrize(
    "value, found",
    [
        (None, "is NoneType None"),
        ([[1.0, None], [2.0, 3.0]], "contains NoneType None"),
        ("1.5", "is str '1.5'"),
        (np.array([["a", "b"], ["c", "d"]]), "dtype <U1"),
    ],
    ids=["None", "list-with-None", "numeric-string", "string-array"],
)
def test_feeding_non_numbers_is_a_type_error_naming_the_placeholder(graph, value, found):
    g, x, w, y = graph
    with pytest.raises(TypeError, match="placeholder 'input' must be numeric data") as info:
        g.forward({x: value}, fetches=[y])
    assert found in str(info.value)


def test_feeding_lists_ragged_deeper_down_says_where():
    with ns.Graph() as g:
        ns.placeholder("x3", shape=(2, 2, None))
    with pytest.raises(ValueError, match=r"placeholder 'x3' is ragged: its lists at depth 2"):
        g.forward(x3=[[[1.0], [2.0]], [[3.0], [4.0, 5.0]]])


def test_compiled_function_refuses_bad_feeds_naming_the_placeholder(graph):
    g, x, w, y = graph
    f = g.compile([x], [y])
    with pytest.raises(TypeError, match="placeholder 'input' must be numeric data"):
        f("abc")
    with pytest.raises(ValueError, match="placeholder 'input' is ragged"):
        f([[1.0, 2.0], [3.0]])


def test_numeric_feeds_of_any_kind_are_still_accepted(graph):
    g, x, w, y = graph
    for value in (
        [[1, 2], [3, 4]],
        [[True, False], [1, 2]],
        np.array([[1, 2], [3, 4]], dtype=object),
        np.arange(4, dtype=np.int32).reshape(2, 2),
        ((1.0, 2.0), (3.0, 4.0)),
    ):
        (result,) = g.forward({x: value}, fetches=[y])
        assert float(result) == pytest.approx(2.0 * float(np.sum(np.asarray(value, dtype=float))))


# ---------------------------------------------------------------------------------
# Constants and Variables hold numbers only
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, found",
    [
        ([1, "a"], "contains str 'a'"),
        ("abc", "is str 'abc'"),
        (None, "is NoneType None"),
        ([1.0, None], "contains NoneType None"),
        (np.array(["a", "b"]), "dtype <U1"),
    ],
    ids=["list-with-string", "string", "None", "list-with-None", "string-array"],
)
def test_constant_of_non_numbers_is_a_type_error_naming_what_was_found(value, found):
    g = ns.Graph()
    with g:
        with pytest.raises(TypeError, match="a constant must be numeric data") as info:
            ns.constant(value)
    assert found in str(info.value)
    assert len(g.nodes) == 0


def test_named_constant_of_a_string_is_refused_by_name():
    with ns.Graph() as g:
        with pytest.raises(TypeError, match="constant 'label' must be numeric data.*str 'cat'"):
            ns.constant("cat", name="label")
    assert len(g.nodes) == 0


def test_ragged_constant_is_a_value_error_with_the_row_lengths():
    with ns.Graph() as g:
        with pytest.raises(
            ValueError,
            match=r"a constant is ragged: its rows have different "
            r"lengths \(2 and 1\)",
        ):
            ns.constant([[1, 2], [3]])
    assert len(g.nodes) == 0


def test_string_operand_of_an_op_is_refused_and_adds_no_node(graph):
    g, x, w, y = graph
    count = len(g.nodes)
    with g:
        with pytest.raises(TypeError, match="an operand of add must be numeric data.*str 'abc'"):
            x + "abc"
        with pytest.raises(TypeError, match="an operand of mul must be numeric data.*NoneType"):
            x * None
    assert len(g.nodes) == count


def test_variable_of_non_numbers_is_a_type_error_naming_the_variable():
    with ns.Graph() as g:
        with pytest.raises(TypeError, match="Variable 'w' must be numeric data.*str 'abc'"):
            ns.Variable("abc", name="w")
        with pytest.raises(TypeError, match="a Variable must be numeric data.*contains str 'a'"):
            ns.Variable([1.0, "a"])
    assert len(g.nodes) == 0


def test_assigning_non_numbers_to_a_variable_is_refused_and_keeps_the_value():
    with ns.Graph():
        w = ns.Variable([1.0, 2.0], name="w")
    with pytest.raises(TypeError, match="assigned to Variable 'w' must be numeric data.*str 'a'"):
        w.assign(["a", "b"])
    np.testing.assert_array_equal(w.value, [1.0, 2.0])


def test_numeric_constants_of_every_kind_are_still_accepted():
    with ns.Graph():
        dtypes = [
            ns.constant(v).dtype
            for v in (
                1,
                2.5,
                True,
                1 + 2j,
                [1, 2],
                [[True, False]],
                np.float32(2.0),
                np.array([1, 2], dtype=object),
            )
        ]
    assert [d.kind for d in dtypes] == ["i", "f", "b", "c", "i", "b", "f", "i"]


def test_a_matmul_whose_known_inner_sizes_disagree_is_refused_at_build_with_an_unknown_batch():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 2), dtype=np.float32)
        w = ns.Variable(np.ones((8, 2), np.float32), name="w")
        before = len(g.nodes)
        with pytest.raises(
            ValueError, match=r"cannot build matmul on inputs of shapes \(None, 2\), \(8, 2\)"
        ):
            x @ w
        assert len(g.nodes) == before  # nothing half-built is left in the graph


def test_an_op_that_fails_only_for_some_unknown_sizes_still_builds_and_the_run_decides():
    with ns.Graph() as g:
        z = ns.placeholder("z", shape=(None, 5), dtype=np.float32)
        y = ns.reshape(z, (-1, 4))  # fails for 1, 2, 3 rows; 4 rows reshape to (5, 4)
    assert y.shape is None
    (out,) = g.run([y], z=np.zeros((4, 5), np.float32))
    assert out.shape == (5, 4)


def test_a_node_of_the_graph_optimize_started_from_is_refused_naming_what_to_use_instead():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,), dtype=np.float32)
        y = ns.sum(x * 1.0)
    small, _ = ns.optimize(g)
    with pytest.raises(ValueError, match="belongs to another graph also named graph_") as error:
        small.compile([x], [y])
    assert "ns.optimize returns a new graph" in str(error.value)
    assert "or just the name 'x'" in str(error.value)
    (out,) = small.compile(["x"], [y.name])(np.ones(2, np.float32))
    assert out == 2.0


@pytest.mark.parametrize("where", ["inputs", "outputs"])
def test_compile_given_one_node_instead_of_a_list_says_to_wrap_it(where):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        loss = ns.mean(x * x)
    given = {"inputs": [x], "outputs": [loss]}
    given[where] = x if where == "inputs" else loss
    size = len(g.nodes)
    with pytest.raises(TypeError, match=rf"compile {where} must be a list of nodes .*wrap it"):
        g.compile(**given)
    assert len(g.nodes) == size
    assert float(g.compile(inputs=[x], outputs=[loss])(np.ones(2))[0]) == 1.0
