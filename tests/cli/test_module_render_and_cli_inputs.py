"""Trust: nn module registration, render's input checks and the CLI's error handling.

nn listings are compared name for name with torch.nn on the same nested models.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import naivegraph as ng
from naivegraph import nn


# --------------------------------------------------------------------- nn registration
def _nested(lib, ones):
    """The same model in torch.nn or naivegraph.nn: nesting, a shared layer, late params."""

    class Block(lib.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.Parameter(ones(2))
            self.inner = lib.Sequential(lib.Linear(2, 2), lib.ReLU(), lib.Linear(2, 2, bias=False))
            self.shift = lib.Parameter(ones(2))

    class Net(lib.Module):
        def __init__(self):
            super().__init__()
            self.first = lib.Linear(2, 2)
            self.blocks = lib.Sequential(Block(), lib.Tanh(), Block())
            self.gain = lib.Parameter(ones(1))
            self.tied = self.first  # the same layer under a second name
            self.head = lib.Linear(2, 1)

    return Net()


def _listings(model):
    return {
        "named_parameters": [n for n, _ in model.named_parameters()],
        "all_parameters": [n for n, _ in model.named_parameters(remove_duplicate=False)],
        "own_parameters": [n for n, _ in model.named_parameters(recurse=False)],
        "prefixed": [n for n, _ in model.named_parameters(prefix="net")],
        "named_modules": [n for n, _ in model.named_modules()],
        "all_modules": [n for n, _ in model.named_modules(remove_duplicate=False)],
        "named_children": [n for n, _ in model.named_children()],
        "children": [type(m).__name__ for m in model.children()],
        "parameters": [tuple(p.shape) for p in model.parameters()],
        "state_dict": list(model.state_dict()),
    }


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_nested_model_lists_names_depth_first_in_torch_order(torch):
    ours = _listings(_nested(nn, ng.ones))
    theirs = _listings(_nested(torch.nn, torch.ones))
    assert ours == theirs
    assert ours["named_parameters"] == [
        "gain",
        "first.weight",
        "first.bias",
        "blocks.0.scale",
        "blocks.0.shift",
        "blocks.0.inner.0.weight",
        "blocks.0.inner.0.bias",
        "blocks.0.inner.2.weight",
        "blocks.2.scale",
        "blocks.2.shift",
        "blocks.2.inner.0.weight",
        "blocks.2.inner.0.bias",
        "blocks.2.inner.2.weight",
        "head.weight",
        "head.bias",
    ]


def _edit(lib, ones, steps):
    m = lib.Module()
    for step in steps:
        step(m, lib, ones)
    return [n for n, _ in m.named_parameters()], [n for n, _ in m.named_modules()]


EDITS = {
    "reassigned parameter keeps its place": [
        lambda m, lib, ones: setattr(m, "a", lib.Parameter(ones(1))),
        lambda m, lib, ones: setattr(m, "b", lib.Parameter(ones(1))),
        lambda m, lib, ones: setattr(m, "a", lib.Parameter(ones(2))),
    ],
    "parameter set to None is skipped and refilled in place": [
        lambda m, lib, ones: setattr(m, "a", lib.Parameter(ones(1))),
        lambda m, lib, ones: setattr(m, "b", lib.Parameter(ones(1))),
        lambda m, lib, ones: setattr(m, "a", None),
        lambda m, lib, ones: setattr(m, "c", lib.Parameter(ones(1))),
        lambda m, lib, ones: setattr(m, "a", lib.Parameter(ones(1))),
    ],
    "deleted parameter goes and comes back at the end": [
        lambda m, lib, ones: setattr(m, "a", lib.Parameter(ones(1))),
        lambda m, lib, ones: setattr(m, "b", lib.Parameter(ones(1))),
        lambda m, lib, ones: delattr(m, "a"),
        lambda m, lib, ones: setattr(m, "a", lib.Parameter(ones(1))),
    ],
    "submodule replaced keeps its place, None hides it": [
        lambda m, lib, ones: setattr(m, "x", lib.Linear(1, 1)),
        lambda m, lib, ones: setattr(m, "y", lib.Linear(1, 1)),
        lambda m, lib, ones: setattr(m, "x", lib.Linear(1, 2)),
        lambda m, lib, ones: setattr(m, "y", None),
    ],
    "plain attribute turned into a parameter": [
        lambda m, lib, ones: setattr(m, "a", 5),
        lambda m, lib, ones: setattr(m, "b", lib.Parameter(ones(1))),
        lambda m, lib, ones: setattr(m, "a", lib.Parameter(ones(1))),
    ],
    "submodule replaced by a parameter": [
        lambda m, lib, ones: setattr(m, "x", lib.Linear(1, 1)),
        lambda m, lib, ones: setattr(m, "x", lib.Parameter(ones(1))),
    ],
}


@pytest.mark.parametrize("case", list(EDITS))
def test_attribute_edits_register_as_in_torch(torch, case):
    assert _edit(nn, ng.ones, EDITS[case]) == _edit(torch.nn, torch.ones, EDITS[case])


def test_reassigned_parameter_keeps_its_place():
    m = nn.Module()
    m.a, m.b = nn.Parameter(ng.ones(1)), nn.Parameter(ng.ones(1))
    new = nn.Parameter(ng.zeros(1))
    m.a = new
    assert [n for n, _ in m.named_parameters()] == ["a", "b"]
    assert m.a is new


def test_plain_tensor_over_a_parameter_is_refused_and_keeps_the_parameter(torch):
    m = nn.Module()
    p = nn.Parameter(ng.ones(1))
    m.a = p
    with pytest.raises(
        TypeError,
        match=r"^cannot assign 'naivegraph.Tensor' as parameter 'a' "
        r"\(naivegraph.nn.Parameter or None expected\)$",
    ):
        m.a = ng.ones(1)
    assert m.a is p and [n for n, _ in m.named_parameters()] == ["a"]
    t = torch.nn.Module()
    t.a = torch.nn.Parameter(torch.ones(1))
    with pytest.raises(TypeError, match="as parameter 'a'"):
        t.a = torch.ones(1)


def test_non_module_over_a_submodule_is_refused_and_keeps_the_submodule(torch):
    m = nn.Module()
    child = nn.Linear(1, 1)
    m.c = child
    with pytest.raises(
        TypeError,
        match=r"^cannot assign 'int' as child module 'c' "
        r"\(naivegraph.nn.Module or None expected\)$",
    ):
        m.c = 3
    assert m.c is child and [n for n, _ in m.named_parameters()] == ["c.weight", "c.bias"]
    t = torch.nn.Module()
    t.c = torch.nn.Linear(1, 1)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'c'"):
        t.c = 3


def test_module_over_a_parameter_is_refused_with_the_type_named():
    m = nn.Module()
    m.p = nn.Parameter(ng.ones(1))
    with pytest.raises(
        TypeError, match="cannot assign 'naivegraph.nn.modules.Linear' as parameter 'p'"
    ):
        m.p = nn.Linear(1, 1)
    assert [n for n, _ in m.named_parameters()] == ["p"] and list(m.children()) == []


def test_deleted_parameter_and_submodule_are_gone():
    m = nn.Module()
    m.a, m.c = nn.Parameter(ng.ones(1)), nn.Linear(1, 1)
    del m.a
    del m.c
    assert list(m.named_parameters()) == [] and list(m.named_modules()) == [("", m)]
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'a'"):
        m.a
    with pytest.raises(AttributeError, match="no attribute 'zz'"):
        del m.zz


def test_parameter_set_to_none_reads_none_and_is_not_listed():
    m = nn.Linear(2, 1)
    m.bias = None
    assert m.bias is None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert list(m.state_dict()) == ["weight"]


def test_parameter_shared_between_submodules_appears_once_at_its_first_name(torch):
    def build(lib, ones):
        a, b = lib.Linear(2, 2), lib.Linear(2, 2)
        b.weight = a.weight
        return lib.Sequential(a, b)

    ours, theirs = build(nn, ng.ones), build(torch.nn, torch.ones)
    assert [n for n, _ in ours.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    assert _listings(ours) == _listings(theirs)
    assert len(list(ours.parameters())) == 3


def test_zero_grad_reaches_every_nested_and_shared_parameter():
    model = _nested(nn, ng.ones)
    for p in model.parameters():
        p.grad = ng.ones(p.shape)
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_module_containing_itself_is_refused_before_anything_changes():
    outer, inner = nn.Module(), nn.Module()
    outer.inner = inner
    with pytest.raises(ValueError, match="would form a cycle"):
        inner.back = outer
    with pytest.raises(ValueError, match="would form a cycle"):
        outer.me = outer
    assert list(inner.children()) == [] and [n for n, _ in outer.named_modules()] == ["", "inner"]
    assert "me" not in outer.__dict__


def test_state_dict_round_trip_copies_values_in_place():
    a, b = _nested(nn, ng.ones), _nested(nn, ng.ones)
    weight = b.first.weight
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.first.weight is weight
    assert [p.tolist() for p in b.parameters()] == [p.tolist() for p in a.parameters()]


def test_load_state_dict_with_a_bad_key_or_shape_changes_nothing(torch):
    model = nn.Linear(2, 1)
    before = (model.weight.tolist(), model.bias.tolist())
    state = {"weight": ng.zeros(1, 3), "bias": ng.zeros(1), "extra": ng.zeros(1)}
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(state)
    message = str(info.value)
    assert message.startswith("Error(s) in loading state_dict for Linear:")
    assert 'Unexpected key(s) in state_dict: "extra".' in message
    assert (
        "size mismatch for weight: copying a param with shape [1, 3] from checkpoint, "
        "the shape in current model is [1, 2]."
    ) in message
    assert (model.weight.tolist(), model.bias.tolist()) == before
    t = torch.nn.Linear(2, 1)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        t.load_state_dict(
            {"weight": torch.zeros(1, 3), "bias": torch.zeros(1), "extra": torch.zeros(1)}
        )
    missing = nn.Linear(2, 1)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        missing.load_state_dict({"weight": ng.zeros(1, 2)})
    loose = missing.load_state_dict({"weight": ng.zeros(1, 2)}, strict=False)
    assert loose.missing_keys == ["bias"] and missing.weight.tolist() == [[0.0, 0.0]]


# --------------------------------------------------------------------- render inputs
ACCEPTS = (
    "render\\(\\) draws a naivegraph Tensor or a list of Tensors \\(dynamic mode\\), "
    "or a static Graph, Node or list of Nodes; got "
)


@pytest.fixture
def leaf():
    return ng.tensor([1.0, 2.0], requires_grad=True)


@pytest.mark.parametrize(
    "bad, shown",
    [
        (None, "None"),
        ({"a": 1}, "a dict \\(to draw its tensors pass a list"),
        ([], "an empty list"),
        ((), "an empty tuple"),
        (3.0, "float 3.0"),
        ("loss", "str 'loss'"),
        (ng.nn, "module <module 'naivegraph.nn'"),
    ],
)
def test_render_refuses_what_it_cannot_draw_and_says_what_it_accepts(bad, shown):
    with pytest.raises(TypeError, match=ACCEPTS + shown):
        ng.render(bad)


def test_render_names_the_bad_item_of_a_list(leaf):
    with pytest.raises(TypeError, match=ACCEPTS + "item 1 of the list is int 3$"):
        ng.render([leaf, 3])


def test_render_refuses_a_list_mixing_modes_and_a_graph_inside_a_list(leaf):
    import naivegraph.static as ns

    graph = ns.Graph()
    with graph:
        a = ns.placeholder("a")
    with pytest.raises(TypeError, match="mixing Tensors and static Nodes"):
        ng.render([a, leaf])
    with pytest.raises(TypeError, match=ACCEPTS + "item 0 of the list is Graph"):
        ng.render([graph])
    assert ng.render(graph).stats["shown"] == 1 and ng.render([a]).stats["shown"] == 1


def test_render_refuses_an_unknown_kind(leaf):
    with pytest.raises(
        ValueError,
        match="kind must be one of forward, backward, both \\(or None\\), not 'sideways'",
    ):
        ng.render(leaf, kind="sideways")


def test_backward_drawing_of_a_tensor_without_grad_graph_says_how_to_get_one():
    with pytest.raises(
        ValueError,
        match="kind='backward' draws the grad_fn graph, but nothing "
        "given has one.*requires_grad=True",
    ):
        ng.render(ng.ones(2) * 2, kind="backward")
    assert ng.render(ng.ones(2) * 2, kind="forward").stats["shown"] == 1


@pytest.mark.parametrize(
    "option, error, phrase",
    [
        ({"params": ["w"]}, TypeError, "params must be a dict of names to tensors"),
        ({"max_nodes": "5"}, TypeError, "max_nodes must be an int"),
        ({"max_nodes": True}, TypeError, "max_nodes must be an int"),
        ({"max_nodes": 1}, ValueError, "max_nodes must be at least 2"),
        ({"rankdir": "sideways"}, ValueError, "rankdir must be one of TB, LR, BT, RL"),
        ({"backend": "matplotlib"}, ValueError, "unknown backend 'matplotlib'"),
        ({"title": 3}, TypeError, "title must be a str or None"),
    ],
)
def test_render_refuses_bad_options_before_drawing(leaf, option, error, phrase):
    with pytest.raises(error, match=phrase):
        ng.render(leaf * 2, **option)


# --------------------------------------------------------------------- the CLI
def _one_error_line(capsys, status, expected_status, phrase):
    err = capsys.readouterr().err
    assert status == expected_status
    assert err.startswith("naivegraph: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert phrase in err, err
    return err


def test_cli_unknown_example_lists_the_names(capsys, tmp_path):
    from naivegraph.cli import main

    status = main(["render", "nosuch", "--out", str(tmp_path)])
    _one_error_line(
        capsys,
        status,
        2,
        "unknown example 'nosuch'; choose from reference, exp, mlp, static-reference",
    )
    assert list(tmp_path.iterdir()) == []


def test_cli_render_help_lists_the_examples(capsys):
    from naivegraph.cli import main

    with pytest.raises(SystemExit) as done:
        main(["render", "--help"])
    assert done.value.code == 0
    assert "examples: reference, exp, mlp, static-reference" in capsys.readouterr().out


@pytest.mark.parametrize(
    "out, reason",
    [("/proc/naivegraph-x", "No such file or directory"), ("FILE/sub", "Not a directory")],
)
def test_cli_unwritable_out_is_one_line_before_any_work(capsys, tmp_path, out, reason):
    from naivegraph.cli import main

    a_file = tmp_path / "a_file"
    a_file.write_text("")
    out = out.replace("FILE", str(a_file))
    status = main(["render", "exp", "--out", out])
    _one_error_line(capsys, status, 2, f"cannot write into --out {out}: {reason}; pass --out")


def test_cli_missing_package_is_one_line_saying_what_to_install(capsys, tmp_path, monkeypatch):
    from naivegraph.cli import main

    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "matplotlib", None)
        status = main(["figures", "--out", str(tmp_path)])
    _one_error_line(
        capsys, status, 1, "needs the Python package 'matplotlib', which cannot be imported"
    )
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "PIL", None)
        status = main(["tour", "--out", str(tmp_path)])
    _one_error_line(capsys, status, 1, "install it with `pip install pillow`")
    assert list(tmp_path.iterdir()) == []


def test_cli_missing_package_met_late_is_still_one_line(capsys, tmp_path, monkeypatch):
    import naivegraph.cli as cli

    def render_needing_a_lost_package(out, names):
        import naivegraph_lost_package  # noqa: F401

    monkeypatch.setattr(cli, "_render_examples", render_needing_a_lost_package)
    status = cli.main(["render", "exp", "--out", str(tmp_path)])
    _one_error_line(capsys, status, 1, "pip install naivegraph_lost_package")


@pytest.mark.parametrize(
    "folder, phrase",
    [
        (
            "/no/such/lessons",
            "lessons folder /no/such/lessons does not exist; "
            "run `naivegraph lessons --copy /no/such/lessons` to make it",
        ),
        ("EMPTY", "no lesson notebooks (NN_name.ipynb) in EMPTY; pass --dir"),
        ("FILE", "lessons folder FILE is not a folder"),
    ],
)
def test_cli_check_without_lessons_says_so_and_exits_2(capsys, tmp_path, folder, phrase):
    from naivegraph.cli import main

    (tmp_path / "file.txt").write_text("")
    folder = folder.replace("EMPTY", str(tmp_path)).replace("FILE", str(tmp_path / "file.txt"))
    phrase = phrase.replace("EMPTY", str(tmp_path)).replace("FILE", str(tmp_path / "file.txt"))
    status = main(["check", "--lessons", folder])
    err = _one_error_line(capsys, status, 2, phrase)
    assert "correct" not in err


def test_cli_errors_through_a_real_process_have_no_traceback(tmp_path):
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "naivegraph.cli", "render", "nosuch", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("naivegraph: error: unknown example 'nosuch'")
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------- layout-cost guard
def _chain(ops: int):
    x = ng.ones(2, requires_grad=True)
    y = x
    for _ in range(ops):
        y = y * 1.01
    return y.sum()


@pytest.fixture
def no_layout(monkeypatch):
    """Engines that fail the test if a layout is ever started."""
    from naivegraph.render import engine

    def started(source, fmt):
        raise AssertionError("a layout engine was started")

    monkeypatch.setattr(engine, "_ENGINES", {"dot": started, "pygraphviz": started})
    return engine


def test_layout_cost_counts_nodes_edges_and_ranks_skipped():
    from naivegraph.render.engine import SKIP_WEIGHT, layout_cost

    cost = layout_cost("digraph {\n a [label=x]\n a -> b\n b -> c\n a -> c\n c -> d\n a -> d\n}")
    assert cost == (4, 5, 3)
    assert cost.total == 4 + 5 + SKIP_WEIGHT * 3
    drawing = ng.render(_chain(10), max_nodes=None, params={}, legend=False)
    assert layout_cost(drawing.source) == (33, 32, 0)  # sum, output, 10 x (mul, result, 1.01), leaf


def test_huge_drawing_is_refused_before_layout_with_its_size_and_the_ways_out(no_layout):
    import time

    drawing = ng.render(_chain(20_000), max_nodes=None, params={})
    started = time.perf_counter()
    with pytest.raises(no_layout.LayoutTooLarge) as refused:
        drawing.pipe("svg")
    assert time.perf_counter() - started < 10  # the estimate only reads the DOT text
    message = str(refused.value)
    assert message.startswith(
        "refusing to lay out a drawing of 60,004 nodes and 60,002 edges (layout cost 120,006"
    )  # 60,003 + the legend
    assert "max_nodes=500" in message and "force=True" in message
    assert isinstance(refused.value, no_layout.RenderError)
    with pytest.raises(no_layout.LayoutTooLarge):
        drawing.render("/nonexistent-never-written/x", format="png")


def test_force_lays_out_a_refused_drawing(no_layout, monkeypatch):
    drawing = ng.render(_chain(6_000), max_nodes=None, params={})
    monkeypatch.setitem(no_layout._ENGINES, "pygraphviz", lambda source, fmt: b"<svg/>")
    monkeypatch.setattr(no_layout, "BACKENDS", ("pygraphviz",))
    with pytest.warns(UserWarning, match="laying out a drawing of 18,004 nodes"):
        assert drawing.pipe("svg", force=True) == b"<svg/>"


def test_large_drawing_warns_and_small_one_is_silent(no_layout, monkeypatch):
    import warnings

    monkeypatch.setitem(no_layout._ENGINES, "pygraphviz", lambda source, fmt: b"<svg/>")
    monkeypatch.setattr(no_layout, "BACKENDS", ("pygraphviz",))
    large = ng.render(_chain(1_000), max_nodes=None, params={})
    with pytest.warns(
        UserWarning,
        match=r"\(layout cost 6,0\d\d, 0 ranks skipped by long "
        r"edges\) may take a while.*max_nodes=500",
    ):
        large.pipe("svg")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ng.render(_chain(20_000), params={}).pipe("svg") == b"<svg/>"  # collapsed


def test_input_reused_far_down_the_graph_counts_as_costly(no_layout):
    x = ng.ones(2, requires_grad=True)
    y = x
    for step in range(400):
        y = y * 1.01 + x if step % 2 else y * 1.01
    drawing = ng.render(y.sum(), max_nodes=None, params={})
    assert no_layout.layout_cost(drawing.source).nodes < 2_000
    with pytest.raises(no_layout.LayoutTooLarge, match="ranks skipped by long edges"):
        drawing.pipe("png")


def test_refused_drawing_shows_the_reason_in_jupyter(no_layout):
    bundle = ng.render(_chain(20_000), max_nodes=None, params={})._repr_mimebundle_()
    assert bundle["text/plain"].startswith("refusing to lay out a drawing of 60,004 nodes")


# --------------------------------------------------------------------- hostile inputs
def test_sequential_refuses_a_non_module_like_torch(torch):
    with pytest.raises(TypeError, match="^int is not a Module subclass"):
        nn.Sequential(nn.ReLU(), 3)
    with pytest.raises(TypeError, match="^int is not a Module subclass"):
        torch.nn.Sequential(torch.nn.ReLU(), 3)
    assert (
        [n for n, _ in nn.Sequential(None, nn.ReLU()).named_children()]
        == [n for n, _ in torch.nn.Sequential(None, torch.nn.ReLU()).named_children()]
        == ["1"]
    )


def test_dotted_or_empty_names_cannot_register(torch):
    m = nn.Module()
    for name in ("a.b", ""):
        with pytest.raises(KeyError, match='must be non-empty and must not contain "."'):
            setattr(m, name, nn.Parameter(ng.ones(1)))
        with pytest.raises(KeyError, match='must be non-empty and must not contain "."'):
            setattr(m, name, nn.ReLU())
    assert list(m.named_parameters()) == [] and list(m.children()) == []
    with pytest.raises(KeyError, match="parameter name can"):
        torch.nn.Module().register_parameter("a.b", torch.nn.Parameter(torch.ones(1)))


def test_load_state_dict_refuses_a_non_mapping(torch):
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got list"):
        nn.Linear(1, 1).load_state_dict([1])
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        torch.nn.Linear(1, 1).load_state_dict([1])


def test_longer_cycle_of_submodules_is_refused():
    a, b, c = nn.Module(), nn.Module(), nn.Module()
    a.b, b.c = b, c
    with pytest.raises(ValueError, match="cannot assign Module as child module 'a' of Module"):
        c.a = a
    assert [n for n, _ in a.named_modules(remove_duplicate=False)] == ["", "b", "b.c"]
    assert "Module(" in repr(a)


def test_render_optimization_entries_refuse_wrong_types(leaf):
    from naivegraph.render import render_gradient_optimization, render_optimization

    for bad in (None, 3, leaf):
        with pytest.raises(TypeError, match="render_optimization\\(\\) draws a static ns.Graph"):
            render_optimization(bad)
    with pytest.raises(TypeError, match="gradient nodes returned by ns.gradients; got NoneType"):
        render_gradient_optimization(None)
    with pytest.raises(TypeError, match="got a list holding Tensor"):
        render_gradient_optimization([leaf])


def test_drawing_outputs_refuse_wrong_types(leaf, tmp_path):
    drawing = ng.render(leaf * 2)
    with pytest.raises(TypeError, match="outfile must be a path"):
        drawing.render(outfile=3)
    with pytest.raises(ValueError, match="unsupported output format 3"):
        drawing.pipe(3)
    with pytest.raises(TypeError, match="force must be True or False, not 'no'"):
        drawing.pipe("svg", force="no")


def test_render_examples_takes_one_name_as_a_string_and_refuses_a_bad_folder(tmp_path):
    from naivegraph.render.examples import render_examples

    written = render_examples(tmp_path, names="exp", formats=("dot",))
    assert sorted(Path(p).name for p in written) == [
        "exp_after_backward.dot",
        "exp_backward.dot",
        "exp_forward.dot",
    ]
    with pytest.raises(TypeError, match="outdir must be a folder path, not NoneType"):
        render_examples(None, names=["exp"])


def test_cli_file_error_met_while_writing_is_one_line(capsys, tmp_path, monkeypatch):
    import naivegraph.cli as cli

    def disk_full(out, names):
        raise OSError(28, "No space left on device", str(out / "exp_forward.svg"))

    monkeypatch.setattr(cli, "_render_examples", disk_full)
    status = cli.main(["render", "exp", "--out", str(tmp_path)])
    _one_error_line(
        capsys,
        status,
        1,
        f"{tmp_path / 'exp_forward.svg'}: No space left on device; check the path",
    )
