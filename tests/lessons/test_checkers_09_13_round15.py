"""The prediction exercises of lessons 10, 12 and 13 on answers read through an object
of the library's that an earlier cell made (a graph's bound `run`, a compiled function
or its listing, an optimize report, a trace under another name, a node of the backward
graph), or off a traced function's graph in the checking cell: each is refused, naming
what ran; a prediction typed in any cell is accepted.  The lesson's own cells run first,
as in the notebook."""

from __future__ import annotations

from pathlib import Path

import pytest
from checker_results import never_states, refused
from lesson_answers_06_07 import notebook_shell

import naivegraph as ng
from naivegraph.lessons import checking

SMALL = (
    "with ns.Graph() as small:\n"
    "    v = ns.Variable(np.array(1.0), name='v')\n"
    "    double = v.assign(v * 2.0)\n"
    "    plus_one = v + 1.0\n"
)
CLEANING = (
    "CLEANING = [ns.passes.constant_folding, ns.passes.algebraic_simplification,\n"
    "            ns.passes.common_subexpression_elimination, ns.passes.dead_node_elimination]\n"
    "new, report = ns.optimize(g2, passes=CLEANING, fetches=[z])\n"
)
HEAD = (
    "def head(x):\n    if x.shape[0] == 1:\n        return x.tanh().sum()\n"
    "    return (x - x.mean(dim=0)).relu().sum()\n"
    "traced = ns.trace(head, np.ones((1, 3)))\n"
    "for rows in (8, 8, 1, 2):\n    traced(np.ones((rows, 3)))\n"
)


def _lesson_cells_before(stem: str, exercise: str) -> list[str]:
    nbformat = pytest.importorskip("nbformat")
    path = Path(ng.__file__).parent / "course" / f"{stem}.ipynb"
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    return cells[: next(i for i, c in enumerate(cells) if f"# Exercise {exercise}" in c)]


def run_lesson_then(stem: str, exercise: str, *cells: str):
    """The lesson's cells up to the exercise, then ``cells``; the check's result."""
    for shell in notebook_shell():
        for cell in _lesson_cells_before(stem, exercise):
            shell.run_cell(cell, store_history=True)
        checking.TRIES.clear()
        for cell in cells:
            shell.run_cell(cell, store_history=True)
        return shell.user_ns["result"]


L10, L12, L13 = "10_static_graphs_for_real", "12_write_your_own_op", "13_from_static_graphs_to_compilers"
CHECK_10_2 = "\nresult = ex.check_run_semantics(predicted)"
CHECK_12_6 = "\nresult = ex.check_first_nan(first_nan)"
CHECK_13_1 = "\nresult = ex.check_freed_first(freed_first)"
CHECK_13_2 = "\nresult = ex.check_nodes_removed(removed)"
CHECK_13_3 = "\nresult = ex.check_baked_branch(baked)"


@pytest.mark.parametrize(
    "earlier, cell",
    [
        (SMALL + "go = small.run",
         "a, b = go([double, plus_one]); c = go(plus_one)\npredicted = (float(a), float(b), float(c))"),
        (SMALL + "ff = small.compile([], [double, plus_one])\ngg = small.compile([], [plus_one])",
         "a, b = ff(); (c,) = gg()\npredicted = (float(a), float(b), float(c))"),
    ],
)
def test_10_2_values_run_through_an_object_made_above_are_refused(earlier, cell):
    result = refused(run_lesson_then(L10, "10-2", earlier, cell + CHECK_10_2), "runs")
    never_states(result, "2.0, 2.0, 3.0", "(2, 2, 3)")


def test_10_2_a_prediction_typed_beside_the_snippet_is_accepted():
    result = run_lesson_then(L10, "10-2", SMALL, "predicted = (2.0, 2.0, 3.0)" + CHECK_10_2)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "earlier, cell, says",
    [
        ("node = y.grad_fn.next_functions[0][0].next_functions[0][0]", "first_nan = node.name()",
         "a node of the graph (name)"),
        ("fn = x.sqrt().grad_fn", "first_nan = type(fn).__name__", ".grad_fn"),
        ("nm = y.grad_fn.next_functions[0][0].next_functions[0][0].name", "first_nan = nm()",
         "a node of the graph (name)"),
    ],
)
def test_12_6_a_name_read_off_a_node_kept_above_is_refused(earlier, cell, says):
    result = refused(run_lesson_then(L12, "12-6", earlier, cell + CHECK_12_6), says)
    never_states(result, "SqrtBackward0")


@pytest.mark.parametrize(
    "earlier, cell",
    [
        ("ff = g1.compile([x], [total, e], optimize=False)",
         "p = ff.plan\ni, s_ = next((i, s_) for i, s_ in enumerate(p.steps) if s_[3])\n"
         "freed_first = (p.order[s_[3][0]].name, i + 1)"),
        ("show = g1.compile([x], [total, e], optimize=False).listing",
         "line = next(l for l in show().splitlines() if 'free %' in l)\n"
         "freed_first = (line.split('free %')[1].strip(), int(line.split()[0]))"),
    ],
)
def test_13_1_a_plan_read_off_a_function_compiled_above_is_refused(earlier, cell):
    refused(run_lesson_then(L13, "13-1", earlier, cell + CHECK_13_1), "compile")


@pytest.mark.parametrize(
    "cell",
    [
        "removed = len(g2.nodes) - len(new.nodes)",
        "removed = len(report.source.nodes) - len(report.result.nodes)",
        "removed = sum(p.removed for p in report.passes)",
    ],
)
def test_13_2_a_count_read_off_the_snippets_result_above_is_refused(cell):
    result = refused(run_lesson_then(L13, "13-2", CLEANING, cell + CHECK_13_2), "optimize")
    never_states(result, " 6 ")


def test_13_2_a_count_parsed_from_the_shown_report_is_refused():
    result = run_lesson_then(
        L13, "13-2", CLEANING, "report",
        "import re\nnums = re.findall(r'(\\d+) nodes', str(_))\n"
        "removed = int(nums[0]) - int(nums[1])" + CHECK_13_2,
    )
    refused(result, "optimize")


@pytest.mark.parametrize(
    "cell",
    [
        "op = next(n.op.name for n in traced.graph.nodes\n"
        "          if getattr(n.op, 'name', None) in ('tanh', 'relu'))\nbaked = (op, 3)",
        "baked = (traced.outputs[0].inputs[0].op_name, 3)",
    ],
)
def test_13_3_the_op_read_off_the_traced_graph_is_refused(cell):
    result = refused(run_lesson_then(L13, "13-3", HEAD, cell + CHECK_13_3), "traced function")
    never_states(result, "tanh")


def test_13_3_a_prediction_typed_after_running_the_snippet_is_accepted():
    result = run_lesson_then(L13, "13-3", HEAD, "baked = ('tanh', 3)" + CHECK_13_3)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "cell",
    [
        "first_nan = 'SqrtBackward' + str(0)",
        "first_nan = 'SqrtBackward{}'.format(0)",
        "n = 0\nfirst_nan = f'SqrtBackward{n}'",
        "first_nan = str('SqrtBackward0')",
    ],
)
def test_12_6_a_name_typed_with_str_or_format_of_plain_values_is_accepted(cell):
    result = run_lesson_then(L12, "12-6", cell + CHECK_12_6)
    assert result.passed, result.message


def test_12_6_the_printed_form_of_a_tensor_is_still_refused():
    result = run_lesson_then(
        L12, "12-6", "r = repr(x.sqrt())",
        "import re\nfirst_nan = re.search(r'grad_fn=<(\\w+)>', r).group(1)" + CHECK_12_6,
    )
    refused(result, "repr")
    never_states(result, "SqrtBackward0")


def test_13_3_a_pair_typed_with_an_f_string_of_literals_is_accepted():
    result = run_lesson_then(L13, "13-3", HEAD, "baked = (f\"{'tan'}h\", int(str(3)))" + CHECK_13_3)
    assert result.passed, result.message


def test_13_3_a_pair_typed_with_format_and_a_numpy_integer_is_accepted():
    result = run_lesson_then(
        L13, "13-3", HEAD, "baked = ('{}'.format('tanh'), np.int32(3))" + CHECK_13_3
    )
    assert result.passed, result.message
