"""ns.trace: functions written for dynamic mode become static graphs."""

import numpy as np
import pytest

import naivegraph.static as ns


def affine_tanh(x, w):
    return ns.tanh(x @ w).sum(dim=1)


def test_trace_uses_parameter_names_shapes_and_dtypes():
    traced = ns.trace(affine_tanh, np.ones((4, 3), dtype=np.float32), np.ones((3, 2), np.float32))
    assert [(p.name, p.shape, p.dtype.name) for p in traced.inputs] == [
        ("x", (4, 3), "float32"),
        ("w", (3, 2), "float32"),
    ]
    assert traced.outputs[0].shape == (4,)
    assert all(n.value is None for n in traced.graph.nodes)  # tracing computed nothing


def test_traced_function_runs_on_new_inputs_like_the_original():
    traced = ns.trace(affine_tanh, np.ones((4, 3)), np.ones((3, 2)))
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    np.testing.assert_allclose(traced(x, w), np.tanh(x @ w).sum(axis=1), rtol=1e-14)


def test_tuple_outputs_come_back_as_a_tuple():
    traced = ns.trace(lambda a: (a * 2.0, a.sum()), np.ones(3))
    doubled, total = traced(np.arange(3.0))
    assert doubled.tolist() == [0.0, 2.0, 4.0] and float(total) == 3.0


def branchy(x):
    if x.sum() > 0:
        return x
    return -x


def test_data_dependent_branch_names_the_source_line():
    with pytest.raises(TypeError) as info:
        ns.trace(branchy, np.ones(2))
    message = str(info.value)
    assert "while tracing branchy" in message
    assert "if x.sum() > 0:" in message
    assert "test_trace.py" in message
    assert "ng.where" in message and "dynamic mode" in message


def test_data_dependent_branch_points_to_graph_cond_and_while_loop():
    with pytest.raises(TypeError) as info:
        ns.trace(branchy, np.ones(2))
    message = str(info.value)
    assert "ns.cond(pred, true_fn, false_fn)" in message
    assert "ns.while_loop(cond_fn, body_fn, loop_vars)" in message
    assert "ng.where(condition, a, b)" in message  # a traced function is dynamic-mode code


def test_a_branch_while_building_a_graph_points_to_ns_where():
    with ns.Graph():
        x = ns.placeholder("x", shape=(2,))
        with pytest.raises(TypeError, match=r"ns\.where\(condition, a, b\)"):
            bool(x.sum() > 0)


def test_item_inside_a_trace_is_a_clear_error_naming_the_line():
    def scaled_by_total(x):
        return x * x.sum().item()

    with pytest.raises(TypeError) as info:
        ns.trace(scaled_by_total, np.ones(2))
    message = str(info.value)
    assert "the Python number (.item()) of node 'sum_1' is needed while tracing" in message
    assert "return x * x.sum().item()" in message


def test_where_is_the_traceable_branch():
    traced = ns.trace(lambda x: ns.where(x.sum() > 0, x, -x), np.ones(2))
    assert traced(np.array([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert traced(np.array([-1.0, -2.0])).tolist() == [1.0, 2.0]


def test_trace_accepts_dynamic_tensors_and_dynamic_functions():
    ng = pytest.importorskip("naivegraph")
    if not hasattr(ng, "tensor"):
        pytest.skip("dynamic mode (naivegraph.tensor) is not available yet")

    def f(x, w):
        return ng.exp(x * w).sum() + ng.tanh(x).mean()

    traced = ns.trace(f, ng.tensor([1.0, 2.0]), ng.tensor([0.5, 0.5]))
    assert [n.op_name for n in traced.graph.nodes if n.kind == "operation"] == [
        "mul",
        "exp",
        "sum",
        "tanh",
        "mean",
        "add",
    ]
    x, w = np.array([0.3, -1.0]), np.array([2.0, 1.5])
    expected = f(ng.tensor(x), ng.tensor(w)).item()
    assert float(traced(x, w)) == pytest.approx(expected, rel=1e-14)


def test_same_signature_reuses_one_graph():
    traced = ns.trace(affine_tanh, np.ones((4, 3)), np.ones((3, 2)))
    first = traced.graph
    rng = np.random.default_rng(2)
    for _ in range(3):
        x, w = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
        np.testing.assert_allclose(traced(x, w), np.tanh(x @ w).sum(axis=1), rtol=1e-14)
    assert traced.cache_size == 1 and len(traced.graphs) == 1
    assert list(traced.graphs.values()) == [first]
    assert list(traced.graphs) == [(((4, 3), np.dtype("float64")), ((3, 2), np.dtype("float64")))]


def test_new_batch_size_traces_a_second_graph_with_correct_values():
    traced = ns.trace(affine_tanh, np.ones((4, 3)), np.ones((3, 2)))
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(7, 3)), rng.normal(size=(3, 2))
    out = traced(x, w)
    assert out.shape == (7,)
    np.testing.assert_allclose(out, np.tanh(x @ w).sum(axis=1), rtol=1e-14)
    assert traced.cache_size == 2
    assert [sig[0][0] for sig in traced.graphs] == [(4, 3), (7, 3)]
    # the example graph stays the one behind .graph/.inputs, and still runs
    assert traced.inputs[0].shape == (4, 3)
    x4 = rng.normal(size=(4, 3))
    np.testing.assert_allclose(traced(x4, w), np.tanh(x4 @ w).sum(axis=1), rtol=1e-14)
    traced(rng.normal(size=(7, 3)), w)
    assert traced.cache_size == 2
    assert repr(traced) == (
        f"<Traced affine_tanh: 2 graphs, {len(traced.graph.nodes)} nodes in the first>"
    )


def test_new_dtype_traces_another_graph_in_that_dtype():
    traced = ns.trace(lambda a, b: a * b + 1.0, np.ones(3), np.ones(3))
    a32 = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    b32 = np.array([2.0, 3.0, 4.0], dtype=np.float32)
    out32 = traced(a32, b32)
    assert out32.dtype == np.float32 and out32.tolist() == [4.0, -5.0, 2.0]
    out64 = traced(a32.astype(np.float64), b32.astype(np.float64))
    assert out64.dtype == np.float64 and out64.tolist() == [4.0, -5.0, 2.0]
    assert traced.cache_size == 2
    assert [[dtype.name for _, dtype in sig] for sig in traced.graphs] == [
        ["float64", "float64"],
        ["float32", "float32"],
    ]


def test_python_numbers_are_0d_default_float_and_int64_signatures():
    traced = ns.trace(lambda a: a * 2, 1.5)
    assert float(traced(2.5)) == 5.0 and traced(2.5).dtype == np.float32  # as ng.tensor(2.5)
    assert int(traced(3)) == 6 and traced(3).dtype == np.int64
    assert [sig[0] for sig in traced.graphs] == [((), np.dtype("float32")), ((), np.dtype("int64"))]


def test_wrong_argument_count_names_the_expected_count():
    traced = ns.trace(affine_tanh, np.ones((4, 3)), np.ones((3, 2)))
    with pytest.raises(
        TypeError, match=r"traced affine_tanh takes 2 argument\(s\) \(x, w\) but got 1"
    ):
        traced(np.ones((4, 3)))
    with pytest.raises(TypeError, match=r"takes 2 argument\(s\) .* but got 3"):
        traced(np.ones((4, 3)), np.ones((3, 2)), np.ones(2))
    assert traced.cache_size == 1


def test_repr_of_a_single_graph():
    traced = ns.trace(lambda a: a + 1.0, np.ones(2))
    assert repr(traced) == f"<Traced <lambda>: 1 graph, {len(traced.graph.nodes)} nodes>"
