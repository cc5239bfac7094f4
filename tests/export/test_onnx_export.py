"""ONNX export of static graphs: the model passes the checker and ONNX Runtime gives
naivegraph's numbers (the reference example, an MLP at several batch sizes in float64
and float32, random programs), every op has an entry in the map, and what cannot be
exported says so."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from default_dtype import float64

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import naivegraph.static as ns  # noqa: E402
from naivegraph.export import ONNX_MAP, NotExportable, markdown_table, to_onnx  # noqa: E402
from naivegraph.ops import OPS  # noqa: E402
from naivegraph.ops.table import F  # noqa: E402  (the op table's functions, as rules use them)

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
    out = run_onnx(model, {"input": np.ones((2, 2), np.float32)})
    assert [float(v) for v in out] == [40.0, 28.0, 8.0, 10.0]
    assert all(v.shape == () and v.dtype == np.float32 for v in out)  # the default dtype


def test_inputs_and_outputs_by_name_and_the_model_saved_to_path(tmp_path):
    g, x, loss, grads = _reference_graph()
    path = tmp_path / "reference.onnx"
    model = to_onnx(g, ["input"], [loss.name], path=path)
    assert path.exists()
    loaded = onnx.load(str(path))
    assert loaded == model
    assert [float(v) for v in run_onnx(loaded, {"input": np.ones((2, 2), np.float32)})] == [40.0]
    # only what the outputs need is exported: no gradient nodes
    assert len(model.graph.node) < 8


def test_a_compiled_function_exports_with_its_own_inputs_and_outputs():
    g, x, loss, grads = _reference_graph()
    f = g.compile([x], [loss, *grads], optimize=False)
    model = to_onnx(f)
    feed = np.arange(4.0, dtype=np.float32).reshape(2, 2)
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
def unmapped(ops) -> str | None:
    """What to write for the ops of ``ops`` the ONNX map lacks (None: it has them all):
    the file, a line to start from for each way, and the docs to regenerate."""
    names = sorted(set(ops) - set(ONNX_MAP))
    if not names:
        return None
    name = names[0]
    return (
        f"ops without an ONNX mapping or NOT_EXPORTABLE entry: {names}. In "
        f"naivegraph/export/onnx_map.py write how ONNX spells the op, e.g. "
        f'emits("{name}", onnx="Exp")(_unary("Exp")) (an emitter adding operators with the '
        f'builder), or why it cannot, e.g. ONNX_MAP["{name}"] = NOT_EXPORTABLE("<why>"); then '
        f"regenerate docs/onnx_ops.md with make onnx-docs"
    )


def test_every_op_of_the_table_has_an_entry_in_the_onnx_map():
    assert unmapped(OPS) is None, unmapped(OPS)
    assert not set(ONNX_MAP) - set(OPS), "entries for ops the table does not have"
    for name, entry in ONNX_MAP.items():
        assert callable(entry) or (isinstance(entry, NotExportable) and entry.reason), name


def test_an_op_the_map_lacks_is_told_the_file_and_the_lines_to_write():
    assert unmapped([*OPS, "softplus_new"]) == (
        "ops without an ONNX mapping or NOT_EXPORTABLE entry: ['softplus_new']. In "
        "naivegraph/export/onnx_map.py write how ONNX spells the op, e.g. "
        'emits("softplus_new", onnx="Exp")(_unary("Exp")) (an emitter adding operators with '
        'the builder), or why it cannot, e.g. ONNX_MAP["softplus_new"] = NOT_EXPORTABLE("<why>"); '
        "then regenerate docs/onnx_ops.md with make onnx-docs"
    )


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


def test_missing_inputs_are_refused_clearly():
    g, inputs, outputs = _mlp(np.float64)
    with pytest.raises(ValueError, match="'labels'"):
        to_onnx(g, inputs[:1], outputs)


def test_an_optimised_function_exports_the_graph_it_was_compiled_from():
    g, x, loss, grads = _reference_graph()
    f = g.compile([x], [loss, *grads])  # optimize=True: fused elementwise chains
    assert any(n.op_name.startswith("fused[") for n in f.graph.nodes)
    model = to_onnx(f)
    feed = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    for a, b in zip(run_onnx(model, {"input": feed}), f(feed)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)  # float32: the default
    fused = next(n for n in f.graph.nodes if n.op_name.startswith("fused["))
    with pytest.raises(NotImplementedError, match="optimize=False"):
        to_onnx(f.graph, [f.graph[p.name] for p in f.inputs], [fused])


def test_import_naivegraph_static_does_not_load_onnx():
    code = "import sys, naivegraph.static, naivegraph.export; print('onnx' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_static_mode_offers_the_exporter_of_the_export_package():
    code = (
        "import naivegraph.static as ns, naivegraph.export as ex; "
        "print(ns.to_onnx is ex.to_onnx, 'to_onnx' in ns.__all__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "True True", done.stderr


def test_outputs_are_named_after_what_they_are():
    g, x, loss, grads = _reference_graph()
    w1, w2, _ = (n for n in g.nodes if n.kind == "variable")
    g.rename(loss, "loss")
    g.rename(grads[2], "dloss_dw3")  # a name given wins over grad_<variable>
    with g:
        doubled = w1 * 2.0  # neither named nor a gradient: its internal name
    model = to_onnx(g, [x], [loss, *grads, doubled])
    names = [o.name for o in model.graph.output]
    assert names == ["loss", f"grad_{w1.name}", f"grad_{w2.name}", "dloss_dw3", doubled.name]
    out = run_onnx(model, {"input": np.ones((2, 2), np.float32)})  # the default dtype
    assert [float(v) for v in out] == [40.0, 28.0, 8.0, 10.0, 4.0]


def test_gradient_names_survive_save_and_load(tmp_path):
    g, x, loss, grads = _reference_graph()
    g.save(tmp_path / "reference.ngraph")
    loaded = ns.load(tmp_path / "reference.ngraph")
    variables = [n.name for n in loaded.nodes if n.kind == "variable"]
    model = to_onnx(loaded, [x.name], [grads[0].name, loss.name])
    assert [o.name for o in model.graph.output] == [f"grad_{variables[0]}", loss.name]


def test_two_outputs_wanting_one_name_get_two(tmp_path):
    g, x, loss, grads = _reference_graph()
    model = to_onnx(g, [x], [grads[0], grads[0]])
    first, second = (o.name for o in model.graph.output)
    assert first.startswith("grad_") and second.startswith(first) and first != second


def test_without_onnx_to_onnx_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    g, x, loss, _ = _reference_graph()
    with pytest.raises(
        ImportError, match=r"pip install onnx onnxruntime, or pip install '\.\[export\]'"
    ):
        to_onnx(g, [x], [loss])


def test_docs_table_is_generated_from_the_map():
    assert DOCS.read_text() == markdown_table(), (
        "docs/onnx_ops.md is out of date: regenerate it with make onnx-docs "
        "(python -m naivegraph.export > docs/onnx_ops.md)"
    )


# ----------------------------------------------------------------------------------
# Op by op: dtypes, special values, unknown sizes (ONNX Runtime against g.compile)
# ----------------------------------------------------------------------------------
SPECIAL = np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 3.0, np.nan, np.inf, -np.inf])


def _arithmetic_float32():
    x = ns.placeholder("x", shape=(None, 3), dtype=np.float32)
    y = ns.placeholder("y", shape=(3,), dtype=np.float64)
    feeds = {x: np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3), y: np.array([0.5, 2, 3])}
    a = ns.abs(x) + 0.25
    outputs = [x * 2.5, x + 1, 3.0 - x, x / 4, 2 / a, ns.maximum(x, 0.5), ns.minimum(x, 0.25)]
    outputs += [x**2, x**3, a**0.5, a**-1, a**1.5, x**1, ns.pow(a, x), ns.pow(2.0, x)]
    outputs += [ns.clamp(x, -0.5, 0.5), ns.clamp(x, min=0.0), ns.where(x > 0, x, 0.0)]
    outputs += [x * y, x - y, x / y, ns.maximum(x, y), ns.where(x > 0, x, y)]
    outputs += [F.reciprocal(a), ns.exp(x), ns.log(a), ns.sqrt(a), ns.sin(x), ns.cos(x)]
    outputs += [ns.tanh(x), ns.sigmoid(x), ns.relu(x), -x, F.sign(x)]
    return feeds, outputs


def _integers():
    i = ns.placeholder("i", shape=(None,), dtype=np.int64)
    j = ns.placeholder("j", shape=(None,), dtype=np.int32)
    feeds = {i: np.array([-3, -1, 0, 2, 7]), j: np.array([1, 2, 3, 4, 5], dtype=np.int32)}
    outputs = [i / 2, i / j, i + 1.5, i * 3, i + j, i - j, ns.exp(i), ns.sqrt(j), -i]
    outputs += [ns.abs(i), i > 1, ns.eq(i, j), ns.sum(i), ns.sum(j), i**2, j**3]
    outputs += [ns.maximum(i, j), ns.minimum(i, 0), ns.relu(i), F.sign(i), ns.clamp(i, 0, 3)]
    outputs += [F.to_copy(i, dtype=np.float32), F.to_copy(j, dtype=np.int64), F.sign(i > 0)]
    outputs += [ns.clamp(i, -0.5, 1.5), ns.argmax(i), ns.argmin(j), ns.max(i), ns.min(j)]
    return feeds, outputs


def _special_values():
    x = ns.placeholder("x", shape=(9,))
    feeds = {x: SPECIAL}
    y = ns.reshape(x, 3, 3)
    outputs = [ns.relu(x), F.sign(x), ns.abs(x), ns.sigmoid(x), ns.clamp(x, -1.0, 1.0)]
    outputs += [ns.maximum(x, 0.0), ns.minimum(0.0, x), ns.maximum(x, ns.sqrt(x))]
    outputs += [x > 0, ns.ne(x, x), ns.eq(x, 0), ns.logical_not(x), ns.logical_and(x, x > 0)]
    outputs += [ns.logical_or(x > 1, x < -1), ns.where(x > 0, x, -x), F.to_copy(x > 0, dtype=float)]
    outputs += [
        ns.tanh(x),
        ns.exp(x),
        x * 0.0,
        ns.max(y, 1).values,
        ns.argmax(x),
        ns.argmin(x),
        ns.argmax(y, 1),
        ns.argmin(y, 0),
        ns.min(y),
        x**0.5,
        x**-0.5,
        ns.clamp(x, min=0.0),
        ns.maximum(x, x * 0.0),  # -0.0 at x < 0, as torch (ONNX Runtime's Where: +0.0)
        ns.minimum(x * 0.0, x),
        ns.where(x < 0, x * 0.0, x),
        ns.clamp(x, min=-0.0),
        ns.clamp(x, max=-0.0),
    ]
    return feeds, outputs


def _reductions():
    x = ns.placeholder("x", shape=(None, 3, 4))
    m = ns.placeholder("m", shape=(None, 3), dtype=np.bool_)
    rng = np.random.default_rng(2)
    feeds = {x: rng.normal(size=(2, 3, 4)), m: rng.normal(size=(2, 3)) > 0}
    outputs = [ns.sum(x), ns.sum(x, 1), ns.sum(x, (0, 2), keepdim=True), ns.mean(x, -1)]
    outputs += [ns.mean(x), ns.mean(x, (1, 2), keepdim=True), ns.max(x, 1).values]
    outputs += [ns.min(x), ns.max(x, dim=2, keepdim=True).values, ns.argmax(x, 2)]
    outputs += [ns.argmin(x), ns.argmax(x, keepdim=True), ns.argmin(x, 0, keepdim=True)]
    outputs += [ns.sum(m), ns.sum(m, 1), ns.mean(x, ()), ns.softmax(x, 1), ns.log_softmax(x, -1)]
    outputs += [F.first_true(m, dim=1), F.count(x, dim=(0, 2)), F.count(x)]
    return feeds, outputs


def _shapes():
    x = ns.placeholder("x", shape=(None, 3, 4))
    s = ns.placeholder("s", shape=(2, 3, 4))
    feeds = {x: np.arange(24.0).reshape(2, 3, 4), s: np.arange(24.0).reshape(2, 3, 4) / 7}
    outputs = [ns.reshape(x, -1, 4), ns.reshape(x, 6, 4) if False else ns.view(s, 6, 4)]
    outputs += [ns.transpose(x, 0, 2), ns.permute(x, 2, 0, 1), ns.t(ns.reshape(s, 4, 6))]
    outputs += [
        ns.squeeze(x[:, :1], 1),
        ns.squeeze(s[:1]),
        ns.unsqueeze(x, -1),
    ]
    outputs += [
        x[1:],
        x[:, ::2, -1],
        x[..., None, 0],
        x[-1],
        s[:, [0, 2]],
        s[s > 1 if False else 0],
    ]
    outputs += [s[[1, 0], :, [3, 1]], s[0, 1, 2], x[:, 1:3, 1:-1:2], ns.cat([x, x * 2], dim=1)]
    outputs += [ns.stack([x, x + 1], dim=-1), ns.stack([s, s], 1), ns.expand(s[:, :1], 2, 3, 4)]
    outputs += [ns.expand(x[:, :, :1], -1, 3, 5), ns.flatten(x, 1), ns.cat([s, x[:1]], 0)]
    return feeds, outputs


def _losses():
    x = ns.placeholder("x", shape=(None, 4))
    t = ns.placeholder("t", shape=(None,), dtype=np.int64)
    y = ns.placeholder("y", shape=(None, 4), dtype=np.float32)
    rng = np.random.default_rng(3)
    feeds = {x: rng.normal(size=(5, 4)), t: rng.integers(0, 4, 5), y: np.ones((5, 4), np.float32)}
    logp = ns.log_softmax(x, 1)
    outputs = [ns.nll_loss(logp, t), ns.nll_loss(logp, t, "sum"), ns.nll_loss(logp, t, "none")]
    outputs += [ns.cross_entropy(x, t), ns.mse_loss(x, y), ns.mse_loss(x, y, "sum")]
    outputs += [
        F.mse_loss(x, 0.5, reduction="none"),
        F.one_hot(t, num_classes=4),
    ]  # the op broadcasts
    outputs += [ns.matmul(x, ns.t(x))]
    outputs += [ns.matmul(x[0], x[1]), F.addmm(x[:, 0], x, ns.t(x)), ns.mm(x, ns.t(x))]
    return feeds, outputs


def _writers():
    x = ns.placeholder("x", shape=(None, 3))
    s = ns.placeholder("s", shape=(4, 3))
    feeds = {x: np.arange(6.0).reshape(2, 3), s: np.arange(12.0).reshape(4, 3)}
    outputs = [F.zeros_like(x), F.fill(x, value=2.5), F.zero(x), F.copy(x, ns.sum(x, 0))]
    outputs += [F.clone(x), F.index_put(s, 7.0, index=(slice(1, 3), 0))]
    outputs += [
        F.index_put(s, s[0], index=([1, 1, 3],)),
        F.index_put(s, -1.0, index=np.arange(12).reshape(4, 3) > 4),
    ]
    outputs += [
        F.scatter(s[0], shape=(4, 3), index=2),
        F.scatter(s, shape=(6, 3), index=[0, 0, 5, 0]),
    ]
    # unknown sizes: positions from a Range of the run-time size
    outputs += [F.index_put(x, 9.0, index=(slice(None), 1)), F.index_put(x, s[0], index=-1)]
    outputs += [
        F.scatter_like(x[:, 0], x, index=(slice(None), 0)),
        F.scatter_like(s[0], x, index=0),
    ]
    mask = x > 2
    outputs += [mask + mask, mask * (x < 4), mask + 1, mask * 2.5, F.sign(mask), ns.exp(mask)]
    outputs += [ns.sigmoid(mask), ns.sum(mask, 0), ns.mean(mask * 1.0), F.reciprocal(mask)]
    return feeds, outputs


def _gradients_with_unknown_batch():
    x = ns.placeholder("x", shape=(None, 3))
    w = ns.Variable(np.array([0.5, -1.0, 2.0]), name="w")
    b = ns.Variable(np.array(0.25), name="b")
    feeds = {x: np.arange(12.0).reshape(4, 3) / 5}
    h = ns.tanh(x * w + b)
    loss = ns.mean(h**2) + ns.sum(ns.max(h, 1).values) + ns.mean(ns.softmax(h, 0)[1:] * x[:-1])
    loss = loss + ns.sum(ns.reshape(h, -1)[::2]) + ns.mean(ns.maximum(h, x))
    grads = ns.gradients(loss, [x, w, b])
    return feeds, [loss, *grads]


def _conv_layers():
    # float32: ONNX Runtime's Conv and ConvTranspose have no double kernels
    x = ns.placeholder("x", shape=(None, 4, 7, 6), dtype=np.float32)
    rng = np.random.default_rng(4)
    feeds = {x: rng.normal(size=(2, 4, 7, 6)).astype(np.float32)}
    w, b = rng.normal(size=(6, 2, 3, 2)).astype(np.float32), rng.normal(size=6).astype(np.float32)
    conv = ns.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    outputs = [conv, ns.conv2d(x, w[:2, :, :, :].repeat(2, 1), padding="same")]
    outputs += [ns.max_pool2d(x, 2), ns.max_pool2d(x, 3, 2, 1, dilation=1, ceil_mode=True)]
    outputs += [ns.max_pool2d(x, (2, 3), 1, dilation=2), ns.avg_pool2d(x, 2)]
    outputs += [ns.avg_pool2d(x, 3, 2, 1), ns.avg_pool2d(x, 3, 2, 1, count_include_pad=False)]
    stats = [rng.normal(size=4).astype(np.float32) for _ in range(3)]
    outputs += [ns.batch_norm(x, None, None, stats[0], stats[1], True)]
    outputs += [ns.batch_norm(x, stats[2], np.abs(stats[0]) + 1, eps=0.1)]
    outputs += ns.gradients(ns.sum(conv * conv), [x])  # conv2d_input_grad: ConvTranspose
    return feeds, outputs


def _rounding_and_losses():
    x = ns.placeholder("x", shape=(None, 3))
    y = ns.placeholder("y", shape=(None, 3))
    i = ns.placeholder("i", shape=(None,), dtype=np.int64)
    t = ns.placeholder("t", shape=(None, 2), dtype=np.int64)
    values = np.array([[5.0, -7.0, 3.5], [-0.0, 0.0, 7.5], [-2.5, 1.0, np.inf]])
    divisors = np.array([[2.0, 2.0, -2.0], [3.0, -3.0, 0.0], [-0.0, 0.1, 2.0]])
    feeds = {
        x: values,
        y: divisors,
        i: np.array([7, -7, 0, 9, -9]),
        t: np.array([[0, 2], [1, 2], [2, 2]]),
    }
    outputs = [x // y, x % y, x % 0.7, i // 2, i % -3, ns.div(x, y, rounding_mode="trunc")]
    outputs += [ns.div(i, -2, rounding_mode="trunc"), ns.div(x, y, rounding_mode="floor")]
    outputs += [ns.div(i, 2, rounding_mode="floor"), ns.div(x, 2.0, rounding_mode=None)]
    outputs += [ns.addmm(x, x, ns.t(y), beta=0.5, alpha=2.0), ns.addmm(x, y, ns.t(x), beta=0)]
    outputs += [ns.sum(i, dtype=np.float64), ns.sum(x, 1, dtype=np.float32)]
    finite = ns.where(ns.abs(x) < 100, x, 1.0)
    outputs += [ns.smooth_l1_loss(finite, y, beta=0.5), ns.huber_loss(finite, y, "none", 2.0)]
    logp = ns.log_softmax(ns.reshape(finite, -1, 3, 1), 1)
    outputs += [ns.nll_loss(ns.reshape(logp, -1, 3), i[:3] % 3, np.array([1.0, 2.0, 0.5]))]
    outputs += [ns.nll_loss(logp, t[:, :1], ignore_index=2, reduction="none")]
    outputs += [ns.cross_entropy(finite, i[:3] % 3, label_smoothing=0.2, ignore_index=1)]
    return feeds, outputs


def _masks_triangles_and_gathers():
    x = ns.placeholder("x", shape=(None, 3))
    v = ns.placeholder("v", shape=())
    i = ns.placeholder("i", shape=(None, 3), dtype=np.int64)
    feeds = {
        x: np.array([[1.5, -2.0, 0.5], [3.0, -0.75, 2.5], [-1.0, 4.0, 0.25]]),
        v: np.array(7.5),
        i: np.array([[-3, 1, 0], [2, 7, -1], [4, 0, 9]]),
    }
    index = np.array([[2, 0, 2], [1, 1, 0]])
    outputs = [x.masked_fill(x > 0, -0.5), x.masked_fill(x < 0, v), i.masked_fill(i > 1, 2.7)]
    outputs += [ns.masked_fill(x, np.array([True, False, True]), 1), x.tril(), x.triu(1)]
    outputs += [ns.tril(x, -1), ns.triu(i, diagonal=-1), x.gather(1, index), i.gather(0, index)]
    outputs += [ns.scatter_add(x, 1, index, x[:2] * 2), i.scatter_add(0, index, i[:2])]
    return feeds, outputs


CASES = [
    _masks_triangles_and_gathers,
    _rounding_and_losses,
    _conv_layers,
    _arithmetic_float32,
    _integers,
    _special_values,
    _reductions,
    _shapes,
    _losses,
    _writers,
    _gradients_with_unknown_batch,
]


# float64 feeds compared to 1e-12: their placeholders and Python floats in float64 too, in
# every case but these two, which run with the float32 default (int / 2 and int + 1.5 give
# float32); named, not sliced, so that a case added anywhere in CASES keeps its dtype
FLOAT32_DEFAULT_CASES = [_arithmetic_float32, _integers]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_ops_match_naivegraph_exactly_in_dtype_and_closely_in_value(case):
    with contextlib.nullcontext() if case in FLOAT32_DEFAULT_CASES else float64():
        with ns.Graph() as g:
            feeds, outputs = case()
        inputs = list(feeds)
        model = to_onnx(g, inputs, outputs)
        got = run_onnx(model, {p.name: v for p, v in feeds.items()})
        want = g.compile(inputs, outputs, optimize=False)(*feeds.values())
    for node, a, b in zip(outputs, got, want):
        what = f"{node.name} ({node.op_name})"
        assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
        assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
        if b.dtype.kind == "f":
            tol = 1e-6 if b.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True, err_msg=what)
            zeros = (a == 0) & (b == 0)  # relu and max keep -0.0, as torch does
            assert (np.signbit(a[zeros]) == np.signbit(b[zeros])).all(), f"{what}: sign of 0"
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


def test_maximum_of_x_and_x_times_zero_is_minus_zero_in_onnx_runtime_as_in_torch():
    # ONNX Runtime's Where gives +0.0 for a -0.0 taken from its second input; the export
    # sends -0.0 through the third
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,), dtype=np.float64)
        outputs = [ns.maximum(x, x * 0.0), ns.where(x < 0, x * 0.0, x), ns.clamp(x, max=-0.0)]
    feeds = np.array([-2.0, 2.0, -0.0])
    got = run_onnx(to_onnx(g, [x], outputs), {"x": feeds})
    assert [np.signbit(v).tolist() for v in got] == [
        [True, False, True],
        [True, False, True],
        [True, True, True],
    ]
    assert got[0].tolist() == [0.0, 2.0, 0.0] and got[2].tolist() == [-2.0, 0.0, 0.0]
    want = g.run(outputs, {x: feeds})
    assert [np.signbit(v).tolist() for v in want] == [np.signbit(v).tolist() for v in got]


def test_gradients_through_a_broadcast_of_unknown_sizes_have_the_fed_shape_in_onnx_runtime():
    with ns.Graph() as g:
        a = ns.placeholder("a", shape=(None, 3), dtype=np.float64)
        b = ns.placeholder("b", shape=(None, 1), dtype=np.float64)
        (grad_a,) = ns.gradients(ns.sum(a * b), [a])
        (second,) = ns.gradients(ns.sum(grad_a * grad_a), [b])
    got = run_onnx(
        to_onnx(g, [a, b], [grad_a, second]), {"a": np.ones((1, 3)), "b": np.ones((4, 1))}
    )
    assert got[0].tolist() == [[4.0, 4.0, 4.0]] and got[1].tolist() == [[24.0]] * 4


def test_gradients_through_a_cat_along_an_unknown_dimension_run_in_onnx_runtime():
    with ns.Graph() as g:
        a = ns.placeholder("a", shape=(None, 3), dtype=np.float64)
        b = ns.placeholder("b", shape=(None, 3), dtype=np.float64)
        joined = ns.cat([a, b, ns.constant(np.zeros(0))], 0)  # with a legacy empty
        grads = ns.gradients(ns.sum(joined * joined), [a, b])
    feeds = {"a": np.arange(3.0).reshape(1, 3), "b": np.arange(6.0).reshape(2, 3)}
    got = run_onnx(to_onnx(g, [a, b], [joined, *grads]), feeds)
    want = g.run([joined, *grads], {a: feeds["a"], b: feeds["b"]})
    assert [v.tolist() for v in got] == [v.tolist() for v in want]
    assert got[1].tolist() == [[0.0, 2.0, 4.0]] and got[0].shape == (3, 3)


def test_an_output_whose_rank_only_the_run_decides_is_refused():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        y = ns.squeeze(x[:, :1])  # rank 1 or 0: the batch size decides
    with pytest.raises(ValueError, match="rank of output 'squeeze_1'"):
        to_onnx(g, [x], [y])


def test_the_gradients_of_an_unknown_batch_use_the_like_ops():
    with ns.Graph() as g:
        _gradients_with_unknown_batch()
    used = {n.op_name for n in g.nodes}
    assert {"sum_to_like", "expand_like", "count"} <= used


# ----------------------------------------------------------------------------------
# Random programs (tests/random_programs.py): values, gradients and second-order
# terms from ONNX Runtime equal those of the compiled graph
# ----------------------------------------------------------------------------------
import random_programs  # noqa: E402

_TRUST = random_programs
from hypothesis import given  # noqa: E402


@_TRUST.FUZZ
@given(program=_TRUST.programs())
def test_random_programs_run_in_onnx_runtime_as_in_naivegraph(program):
    g, B, leaves, pool, loss, grads, second = _TRUST.build_static(program)
    fetch = list(pool) + [loss] + [d for d in grads + second if d is not None]
    inputs = [p for p, _ in B.placeholders]
    arrays = [a for _, a in B.placeholders]
    want = g.compile(inputs, fetch, optimize=False)(*arrays)
    got = run_onnx(to_onnx(g, inputs, fetch), {p.name: a for p, a in B.placeholders})
    for node, a, b in zip(fetch, got, want):
        assert a.dtype == b.dtype, f"{node.name}: dtype {a.dtype} != {b.dtype}"
        _TRUST.assert_close(a, b, f"{node.name} ({node.op_name})")


def test_a_dynamic_mode_function_exports_through_tracing():
    # As PyTorch exports by tracing: the function is written for dynamic mode.
    import naivegraph as ng

    def model(x, w):
        return ng.tanh(x @ w).sum(dim=1)

    rng = np.random.default_rng(0)
    traced = ns.trace(model, rng.normal(size=(3, 2)), rng.normal(size=(2, 4)))
    model_proto = to_onnx(traced)
    onnx.checker.check_model(model_proto, full_check=True)
    session = ort.InferenceSession(model_proto.SerializeToString())
    x, w = rng.normal(size=(3, 2)), rng.normal(size=(2, 4))
    (got,) = session.run(None, {"x": x, "w": w})
    np.testing.assert_allclose(got, model(ng.tensor(x), ng.tensor(w)).numpy(), rtol=1e-12)


def test_the_lessons_mlp_with_its_gradients_runs_in_onnx_runtime_at_any_batch_size():
    # The model of lesson 7: 2-16-2, tanh, cross-entropy on the two-moons data.
    from naivegraph.lessons.datasets import two_moons

    rng = np.random.default_rng(0)
    init = [rng.normal(scale=0.7, size=(2, 16)), np.zeros(16)]
    init += [rng.normal(scale=0.25, size=(16, 2)), np.zeros(2)]
    init = [a.astype(np.float32) for a in init]  # float32, as the data set and placeholders
    with ns.Graph() as g:
        xs = ns.placeholder("X", shape=(None, 2))
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        ws = [ns.Variable(p, name=n) for p, n in zip(init, ("W1", "b1", "W2", "b2"))]
        loss = ns.cross_entropy(ns.tanh(xs @ ws[0] + ws[1]) @ ws[2] + ws[3], ys)
        grads = ns.gradients(loss, ws)
    compiled = g.compile([xs, ys], [loss, *grads])
    session = ort.InferenceSession(to_onnx(g, [xs, ys], [loss, *grads]).SerializeToString())
    for n in (1, 32, 200):
        X, y = two_moons(n, seed=n)
        got = session.run(None, {"X": X, "y": y})
        for a, b in zip(got, compiled(X, y)):
            assert a.dtype == b.dtype == np.float32
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)  # float32 sums


def test_bitwise_operators_export_and_run_as_naivegraph_computes_them():
    g = ns.Graph()
    with g:
        a = ns.placeholder("a", shape=(4,), dtype=np.int64)
        m = ns.placeholder("m", shape=(4,), dtype=np.bool_)
        outputs = [a & 6, a | 1, a ^ 5, ~a, m & (a > 2), m ^ m, ~m, (a > 0) | m]
    feeds = {a: np.array([5, -6, 7, 0]), m: np.array([True, False, True, False])}
    expected = g.run(outputs, feeds)
    found = run_onnx(to_onnx(g, [a, m], outputs), {"a": feeds[a], "m": feeds[m]})
    for want, got in zip(expected, found):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
