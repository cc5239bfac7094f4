"""ONNX export of static graphs: the model passes the checker and ONNX Runtime gives
naivegraph's numbers (the reference example, an MLP at several batch sizes in float64
and float32, random programs), every op has an entry in the map, and what cannot be
exported says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import naivegraph.static as ns  # noqa: E402
from naivegraph.ops import OPS  # noqa: E402
from naivegraph.ops.onnx_map import ONNX_MAP, NotExportable, markdown_table  # noqa: E402
from naivegraph.static.onnx import to_onnx  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs" / "onnx_ops.md"


def run_onnx(model, feeds: dict) -> list[np.ndarray]:
    """Check the model (full check: shapes and types inferred) and run it."""
    onnx.checker.check_model(model, full_check=True)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)


# ----------------------------------------------------------------------------------
# The lab's reference example
# ----------------------------------------------------------------------------------
def _reference_graph():
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
        grads = ns.gradients(loss, [w1, w2, w3])
    return g, x, loss, grads


def test_reference_example_gives_loss_40_and_grads_28_8_10():
    g, x, loss, grads = _reference_graph()
    model = to_onnx(g, [x], [loss, *grads])
    out = run_onnx(model, {"input": np.ones((2, 2))})
    assert [float(v) for v in out] == [40.0, 28.0, 8.0, 10.0]
    assert all(v.shape == () and v.dtype == np.float64 for v in out)


def test_inputs_and_outputs_by_name_and_the_model_saved_to_path(tmp_path):
    g, x, loss, grads = _reference_graph()
    path = tmp_path / "reference.onnx"
    model = to_onnx(g, ["input"], [loss.name], path=path)
    assert path.exists()
    loaded = onnx.load(str(path))
    assert loaded == model
    assert [float(v) for v in run_onnx(loaded, {"input": np.ones((2, 2))})] == [40.0]
    # only what the outputs need is exported: no gradient nodes
    assert len(model.graph.node) < 8


def test_a_compiled_function_exports_with_its_own_inputs_and_outputs():
    g, x, loss, grads = _reference_graph()
    f = g.compile([x], [loss, *grads], optimize=False)
    model = to_onnx(f)
    feed = np.arange(4.0).reshape(2, 2)
    for got, want in zip(run_onnx(model, {"input": feed}), f(feed)):
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------------
# An MLP with an unknown batch size
# ----------------------------------------------------------------------------------
def _mlp(dtype):
    rng = np.random.default_rng(0)
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(None, 4), dtype=dtype)
        labels = ns.placeholder("labels", shape=(None,), dtype=np.int64)
        w1 = ns.Variable(rng.normal(size=(4, 16)).astype(dtype), name="w1")
        b1 = ns.Variable(rng.normal(size=16).astype(dtype), name="b1")
        w2 = ns.Variable(rng.normal(size=(16, 8)).astype(dtype), name="w2")
        b2 = ns.Variable(rng.normal(size=8).astype(dtype), name="b2")
        w3 = ns.Variable(rng.normal(size=(8, 3)).astype(dtype), name="w3")
        b3 = ns.Variable(rng.normal(size=3).astype(dtype), name="b3")
        h = ns.relu(ns.matmul(x, w1) + b1)
        h = ns.tanh(ns.matmul(h, w2) + b2)
        logits = ns.matmul(h, w3) + b3
        loss = ns.cross_entropy(logits, labels)
        weights = [w1, b1, w2, b2, w3, b3]
        grads = ns.gradients(loss, weights)
    return g, [x, labels], [loss, logits, *grads]


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_mlp_matches_compiled_naivegraph_at_every_batch_size(dtype, rtol):
    g, inputs, outputs = _mlp(dtype)
    model = to_onnx(g, inputs, outputs)
    batch = model.graph.input[0].type.tensor_type.shape.dim[0]
    assert batch.dim_param == "N0" and not batch.HasField("dim_value")
    f = g.compile(inputs, outputs)
    rng = np.random.default_rng(1)
    for n in (1, 5, 32):
        x = rng.normal(size=(n, 4)).astype(dtype)
        labels = rng.integers(0, 3, size=n).astype(np.int64)
        got = run_onnx(model, {"x": x, "labels": labels})
        want = f(x, labels)
        assert len(got) == len(want)
        for k, (a, b) in enumerate(zip(got, want)):
            assert a.dtype == b.dtype and a.shape == b.shape, (n, k)
            # float32 round-off (matmul order, ORT's exp/tanh) is relative to the output's
            # scale: an entry near 0 that comes from cancelling terms shares their error
            scale = float(np.max(np.abs(b)))
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=f"{n}, {k}")


# ----------------------------------------------------------------------------------
# The map covers the op table; what cannot be exported says so
# ----------------------------------------------------------------------------------
def test_every_op_of_the_table_has_an_entry_in_the_onnx_map():
    missing = sorted(set(OPS) - set(ONNX_MAP))
    assert not missing, f"ops without an ONNX mapping or NOT_EXPORTABLE entry: {missing}"
    assert not set(ONNX_MAP) - set(OPS), "entries for ops the table does not have"
    for name, entry in ONNX_MAP.items():
        assert callable(entry) or (isinstance(entry, NotExportable) and entry.reason), name


def test_an_op_without_a_mapping_raises_naming_the_op_and_its_nodes(monkeypatch):
    monkeypatch.delitem(ONNX_MAP, "tanh")
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        y = ns.tanh(x) * 2.0
    with pytest.raises(NotImplementedError, match=r"'tanh'.*'tanh_1'"):
        to_onnx(g, [x], [y])


def test_a_not_exportable_op_raises_with_its_reason():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        w = ns.Variable(np.zeros(3), name="w")
        update = ns.assign(w, w + x)
    with pytest.raises(NotImplementedError, match=r"'assign'.*no state"):
        to_onnx(g, [x], [update])


def test_missing_inputs_and_fused_graphs_are_refused_clearly():
    g, inputs, outputs = _mlp(np.float64)
    with pytest.raises(ValueError, match="'labels'"):
        to_onnx(g, inputs[:1], outputs)
    fused = g.compile(inputs, outputs, optimize=True)
    if any(n.op_name.startswith("fused[") for n in fused.graph.nodes):
        with pytest.raises(NotImplementedError, match="optimize=False"):
            to_onnx(fused)


def test_import_naivegraph_static_does_not_load_onnx():
    code = "import sys, naivegraph.static, naivegraph.static.onnx; print('onnx' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_without_onnx_to_onnx_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    g, x, loss, _ = _reference_graph()
    with pytest.raises(ImportError, match=r"pip install naivegraph\[export\]"):
        to_onnx(g, [x], [loss])


def test_docs_table_is_generated_from_the_map():
    assert DOCS.read_text() == markdown_table(), (
        "docs/onnx_ops.md is out of date: regenerate it with "
        "python -c 'from naivegraph.ops.onnx_map import markdown_table; "
        'print(markdown_table(), end="")\' > docs/onnx_ops.md'
    )
