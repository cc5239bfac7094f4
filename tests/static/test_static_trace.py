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
    assert "test_static_trace.py" in message
    assert "ns.where" in message and "dynamic mode" in message


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
