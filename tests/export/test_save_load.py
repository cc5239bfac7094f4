"""``g.save(path)`` and ``ns.load(path)``: a loaded graph gives the same numbers, and a
file that cannot be a graph is refused with an error that names what is wrong."""

import json
import zipfile

import numpy as np
import pytest
from hypothesis import given
from random_programs import FUZZ, build_static, float64_default, programs

import naivegraph.static as ns


def reference_graph():
    g = ns.Graph(name="reference")
    with g:
        x = ns.placeholder("input", shape=(None, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in ((2.0, "w1"), (3.0, "w2"), (4.0, "w3")))
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
        grads = ns.gradients(loss, [w1, w2, w3])
    return g, [x], [loss, *grads]


def round_trip(graph, tmp_path):
    path = tmp_path / "graph.ngraph"
    graph.save(path)
    return ns.load(path)


def test_the_reference_example_loads_with_loss_40_and_grads_28_8_10(tmp_path):
    g, inputs, outputs = reference_graph()
    loaded = round_trip(g, tmp_path)
    assert loaded.name == "reference" and [n.name for n in loaded.nodes] == [
        n.name for n in g.nodes
    ]
    f = loaded.compile(["input"], [o.name for o in outputs])
    assert [float(v) for v in f(np.ones((2, 2)))] == [40.0, 28.0, 8.0, 10.0]
    assert loaded["input"].shape == (None, 2)  # unknown sizes survive
    assert [loaded[o.name].is_gradient for o in outputs] == [False, True, True, True]


def test_variables_keep_their_current_values_and_trainability(tmp_path):
    with ns.Graph() as g:
        w = ns.Variable(np.arange(3.0), name="w")
        ns.Variable(np.array(7, dtype=np.int64), name="steps", trainable=False)
    w.assign([5.0, 6.0, 7.0])
    loaded = round_trip(g, tmp_path)
    assert loaded["w"].value.tolist() == [5.0, 6.0, 7.0] and loaded["w"].trainable
    assert loaded["steps"].value.dtype == np.int64 and not loaded["steps"].trainable


def test_attributes_of_every_kind_survive(tmp_path):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3, 4), dtype=np.float32)
        picked = x[1:, ..., ::2]  # slices and an ellipsis
        summed = ns.sum(x, dim=(0, 1), keepdim=True)
        cast = picked.sum() * 2 + summed.sum()
        moved = ns.permute(x, 1, 0)
        out = cast + moved.mean()
    loaded = round_trip(g, tmp_path)
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    (want,) = g.compile([x], [out])(data)
    (got,) = loaded.compile(["x"], [out.name])(data)
    assert got.dtype == np.float32 and got == want


def test_control_flow_loads_and_differentiates(tmp_path):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        w = ns.Variable(1.5, name="w")
        y = ns.cond(x > 0, lambda: x * w, lambda: w * w)
        _, z = ns.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w), [0, y])
        (dw,) = ns.gradients(z, [w])
    loaded = round_trip(g, tmp_path)
    for value in (2.0, -1.0):
        want = g.run([z, dw], x=np.array(value))
        got = loaded.run([z.name, dw.name], x=np.array(value))
        assert [float(v) for v in got] == [float(v) for v in want]


@FUZZ
@given(program=programs())
@float64_default()  # the programs are built in float64 (build_static): loaded and run so too
def test_fuzzed_programs_with_gradients_load_with_identical_outputs(program, tmp_path_factory):
    g, backend, leaves, pool, loss, grads, second = build_static(program)
    fetches = [loss] + [d for d in grads + second if d is not None]
    inputs = [p for p, _ in backend.placeholders]
    arrays = [a for _, a in backend.placeholders]
    loaded = round_trip(g, tmp_path_factory.mktemp("fuzz"))
    want = g.compile(inputs, fetches, optimize=False)(*arrays)
    got = loaded.compile([p.name for p in inputs], [f.name for f in fetches], optimize=False)(
        *arrays
    )
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------- bad files
def rewrite(path, change):
    """Load the description of a saved graph, let ``change`` edit it, write it back."""
    with np.load(path) as archive:
        entries = {key: archive[key] for key in archive.files}
    description = json.loads(str(entries["graph.json"]))
    change(description, entries)
    entries["graph.json"] = np.array(json.dumps(description))
    with open(path, "wb") as file:
        np.savez(file, **entries)


@pytest.fixture
def saved(tmp_path):
    g, _, _ = reference_graph()
    path = tmp_path / "graph.ngraph"
    g.save(path)
    return path


def test_a_file_that_is_no_graph_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(ns.GraphFileError, match="is not a naivegraph graph file"):
        ns.load(path)
    other = tmp_path / "arrays.npz"
    np.savez(other, a=np.ones(2))
    with pytest.raises(ns.GraphFileError, match="it has no graph.json"):
        ns.load(other)


def test_a_file_from_a_newer_format_names_its_version(saved):
    rewrite(saved, lambda d, e: d.update(version=99))
    with pytest.raises(ns.GraphFileError, match="format version 99, but this naivegraph reads"):
        ns.load(saved)


def test_an_unknown_op_is_named(saved):
    def change(description, entries):
        description["nodes"][-1]["op"] = "teleport"

    rewrite(saved, change)
    with pytest.raises(ns.GraphFileError, match="unknown op 'teleport'"):
        ns.load(saved)


def test_a_missing_key_is_named_with_its_node(saved):
    def change(description, entries):
        del description["nodes"][4]["inputs"]

    rewrite(saved, change)
    with pytest.raises(ns.GraphFileError, match=r"node 4 \(mul_1\): missing 'inputs'"):
        ns.load(saved)


def test_an_array_of_another_shape_than_its_node_says_is_refused(saved):
    def change(description, entries):
        key = description["nodes"][1]["value"]["array"]  # Variable w1
        entries[key] = np.ones(3)

    rewrite(saved, change)
    with pytest.raises(ns.GraphFileError, match=r"says shape \(\), but its parts give \(3,\)"):
        ns.load(saved)


def test_a_missing_array_is_named(saved):
    def change(description, entries):
        del entries[description["nodes"][1]["value"]["array"]]

    rewrite(saved, change)
    with pytest.raises(ns.GraphFileError, match="missing array 'array_0'"):
        ns.load(saved)


def test_loading_never_unpickles(saved):
    with zipfile.ZipFile(saved) as archive:
        assert all(name.endswith(".npy") for name in archive.namelist())
    with np.load(saved, allow_pickle=False) as archive:  # what load does: no object arrays
        assert all(archive[key].dtype != object for key in archive.files)


def test_an_empty_file_is_refused_as_no_graph_file(tmp_path):
    path = tmp_path / "empty.npz"
    path.write_bytes(b"")
    with pytest.raises(ns.GraphFileError, match="is not a naivegraph graph file"):
        ns.load(path)


def test_a_pickled_object_array_in_the_archive_is_refused_and_never_unpickled(saved):
    rewrite(saved, lambda d, e: e.update(evil=np.array([{"run": "code"}], dtype=object)))
    with pytest.raises(ns.GraphFileError, match="entry 'evil' cannot be read as a numeric array"):
        ns.load(saved)


def test_two_nodes_of_one_name_are_refused_naming_the_second(saved):
    def change(description, entries):
        description["nodes"][1]["name"] = description["nodes"][0]["name"]

    rewrite(saved, change)
    with pytest.raises(ns.GraphFileError, match=r"node 1 \(.*\): a second node named"):
        ns.load(saved)


def test_attrs_that_are_no_mapping_are_refused_naming_the_node(saved):
    def change(description, entries):
        description["nodes"][4]["attrs"] = [[[["deep"]]]]

    rewrite(saved, change)
    with pytest.raises(ns.GraphFileError, match=r"node 4 \(mul_1\): attrs must be a mapping"):
        ns.load(saved)


def test_an_attribute_nested_too_deeply_for_the_json_reader_is_refused(saved):
    rewrite(saved, lambda d, e: d["nodes"][4].update(attrs={"dim": "deep"}))
    with np.load(saved) as archive:
        entries = {key: archive[key] for key in archive.files}
    # json.dumps would recurse too deep itself: the nesting is spliced into the text
    deep = '{"list": [' * 5000 + "]}" * 5000
    entries["graph.json"] = np.array(str(entries["graph.json"]).replace('"deep"', deep))
    with open(saved, "wb") as file:
        np.savez(file, **entries)
    with pytest.raises(ns.GraphFileError, match="graph.json is not valid JSON"):
        ns.load(saved)


def test_a_nested_attribute_the_reader_cannot_rebuild_is_refused_naming_its_node(saved):
    value: object = {"tuple": []}
    for _ in range(450):
        value = {"tuple": [value]}
    rewrite(saved, lambda d, e: d["nodes"][4].update(attrs={"dim": value}))
    with pytest.raises(ns.GraphFileError, match=r"node 4 \(mul_1\)"):
        ns.load(saved)


def test_a_file_saved_when_a_cond_result_op_was_called_item_still_loads(tmp_path):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = ns.cond(x > 0, lambda: x * 2.0, lambda: -x)
    path = tmp_path / "graph.ngraph"
    g.save(path)
    with np.load(path) as stored:
        entries = dict(stored)
    description = json.loads(str(entries["graph.json"]))
    renamed = [n for n in description["nodes"] if n.get("op") == "result"]
    assert renamed, "the cond's result node is saved with op 'result'"
    for node in renamed:
        node["op"] = "item"
    entries["graph.json"] = np.array(json.dumps(description))
    with open(path, "wb") as file:
        np.savez_compressed(file, **entries)
    (got,) = ns.load(path).run([y.name], x=np.array(3.0))
    assert float(got) == 6.0
