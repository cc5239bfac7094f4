"""A value computed in an earlier cell of the learner's and only named in the checking
cell is followed back to the cell that computed it (naivegraph/lessons/earlier_cells.py):
a prediction exercise refuses it as it refuses the same work in the checking cell, and
still accepts a prediction typed in any cell."""

import ast
import json
from pathlib import Path

import pytest
from checker_results import never_states, refused
from lesson_answers_06_07 import notebook_shell

from naivegraph.lessons import checking, earlier_cells

FLOW_SETUP = (
    "import naivegraph as ng\n"
    "import naivegraph.lessons.checkers.lesson05 as ex5\n"
    "import naivegraph.lessons.checkers.lesson06 as ex6\n"
    "import naivegraph.static as ns\n"
    "from naivegraph.lessons import training\n"
    "from naivegraph.static.executor import Plan\n"
    "x = ng.tensor([1.0, 2.0])\n"
    "w = ng.tensor([3.0, 4.0], requires_grad=True)\n"
    "a = x + 1\nb = x * w\nc = b.detach()\n"
)

CHECK_FLOW = "result = ex5.check_requires_grad_flow(a_rg, b_rg, c_rg)"


@pytest.fixture
def shell():
    yield from notebook_shell(FLOW_SETUP)


def run_cells(shell, *cells: str):
    checking.TRIES.clear()
    for cell in cells:
        shell.run_cell(cell, store_history=True)
    return shell.user_ns["result"]


def test_flags_read_off_in_a_cell_above_are_refused(shell):
    result = run_cells(
        shell,
        "flags = [t.requires_grad for t in (a, b, c)]",
        "a_rg, b_rg, c_rg = flags\n" + CHECK_FLOW,
    )
    refused(result, "in a cell above that set `flags`")
    assert ".requires_grad" in result.message
    never_states(result, "False, True, False")


def test_a_value_followed_through_two_cells_and_a_helper_function_is_refused(shell):
    result = run_cells(
        shell,
        "def flag_of(t):\n    return t.requires_grad\n",
        "seen = [flag_of(t) for t in (a, b, c)]",
        "answer = tuple(seen)",
        "a_rg, b_rg, c_rg = answer\n" + CHECK_FLOW,
    )
    refused(result, ".requires_grad")


def test_the_peak_computed_with_the_planner_in_a_cell_above_is_refused(shell):
    result = run_cells(
        shell,
        "with ns.Graph() as chain:\n"
        "    xc = ns.placeholder('x', shape=(1000,))\n"
        "    yc = ns.exp(ns.sin(ns.cos(ns.tanh(xc * 2) + 1)) - 3)\n"
        "pk = max(training.live_values(Plan(chain, [yc], [xc]), count_fetched=True))",
        "peak_intermediates = pk\nresult = ex6.check_memory_plan(peak_intermediates)",
    )
    refused(result, "in a cell above that set `pk`")
    assert "Plan" in result.message


def test_a_prediction_typed_in_a_cell_above_is_still_accepted(shell):
    result = run_cells(
        shell,
        "my_guess = (False, True, False)",
        "a_rg, b_rg, c_rg = my_guess\n" + CHECK_FLOW,
    )
    assert result.passed, result.message


def test_a_prediction_typed_in_the_checking_cell_is_accepted(shell):
    result = run_cells(shell, "a_rg, b_rg, c_rg = False, True, False\n" + CHECK_FLOW)
    assert result.passed, result.message


def test_the_lessons_own_cells_are_not_blamed(shell, monkeypatch):
    lesson_cell = "shown = [t.requires_grad for t in (a, b, c)]"
    monkeypatch.setattr(earlier_cells, "_lesson_sources", lambda: frozenset([lesson_cell]))
    result = run_cells(shell, lesson_cell, "a_rg, b_rg, c_rg = shown\n" + CHECK_FLOW)
    assert result.passed, result.message


def test_a_name_the_checking_cell_binds_itself_is_not_followed_to_an_earlier_cell(shell):
    result = run_cells(
        shell,
        "a_rg = a.requires_grad",  # an exploration, overwritten below
        "a_rg = False\nb_rg = True\nc_rg = False\n" + CHECK_FLOW,
    )
    assert result.passed, result.message


def test_flags_displayed_by_a_cell_above_and_named_as_underscore_are_refused(shell):
    result = run_cells(
        shell,
        "a.requires_grad, b.requires_grad, c.requires_grad",
        "a_rg, b_rg, c_rg = _\n" + CHECK_FLOW,
    )
    refused(result, "in a cell above whose output is `_`")
    assert ".requires_grad" in result.message


def test_an_output_kept_by_its_number_is_followed_too(shell):
    shell.run_cell("flags = [t.requires_grad for t in (a, b, c)]", store_history=True)
    shown = shell.execution_count
    shell.run_cell("flags", store_history=True)
    result = run_cells(shell, f"a_rg, b_rg, c_rg = _{shown}\n" + CHECK_FLOW)
    refused(result, "in a cell above that set `flags`")


def test_a_prediction_displayed_then_named_as_underscore_is_accepted(shell):
    result = run_cells(shell, "False, True, False", "a_rg, b_rg, c_rg = _\n" + CHECK_FLOW)
    assert result.passed, result.message


@pytest.mark.parametrize("reuse", ["Out[{n}]", "_oh[{n}]", "Out.get({n})", "Out[max(Out)]"])
def test_an_output_read_back_through_ipythons_out_is_refused(shell, reuse):
    n = shell.execution_count
    result = run_cells(
        shell,
        "a.requires_grad, b.requires_grad, c.requires_grad",
        f"a_rg, b_rg, c_rg = {reuse.format(n=n)}\n" + CHECK_FLOW,
    )
    refused(result, ".requires_grad")


def test_flags_kept_in_a_class_body_above_are_refused(shell):
    result = run_cells(
        shell,
        "class Flags:\n    seen = [t.requires_grad for t in (a, b, c)]\n",
        "a_rg, b_rg, c_rg = Flags.seen\n" + CHECK_FLOW,
    )
    refused(result, "in a cell above that set `Flags`")


def test_flags_read_through_a_partial_made_above_are_refused(shell):
    result = run_cells(
        shell,
        "import functools\nflag_of = functools.partial(getattr, a)\n"
        "first = functools.partial(lambda t: t.requires_grad, a)\n",
        "a_rg, b_rg, c_rg = first(), True, False\n" + CHECK_FLOW,
    )
    refused(result, "in a cell above that set `first`")


def test_a_prediction_displayed_then_read_through_out_is_accepted(shell):
    n = shell.execution_count
    result = run_cells(shell, "False, True, False", f"a_rg, b_rg, c_rg = Out[{n}]\n" + CHECK_FLOW)
    assert result.passed, result.message


def test_a_typed_prediction_read_back_by_its_number_is_accepted_after_a_computed_output(shell):
    shell.run_cell("a.requires_grad, b.requires_grad, c.requires_grad", store_history=True)
    n = shell.execution_count
    result = run_cells(shell, "False, True, False", f"a_rg, b_rg, c_rg = Out[{n}]\n" + CHECK_FLOW)
    assert result.passed, result.message


def test_a_computed_output_read_back_by_its_number_is_refused_after_many_checks(shell):
    n = shell.execution_count
    shell.run_cell("a.requires_grad, b.requires_grad, c.requires_grad", store_history=True)
    for _ in range(15):  # each check's result is an output too
        shell.run_cell("ex5.check_requires_grad_flow(True, True, True)", store_history=True)
    result = run_cells(shell, f"a_rg, b_rg, c_rg = Out[{n}]\n" + CHECK_FLOW)
    refused(result, f"in a cell above whose output is `_{n}`")


def test_flags_read_off_a_tensors_printed_form_are_refused(shell):
    result = run_cells(
        shell,
        "shown = ['grad_fn' in repr(t) for t in (a, b, c)]",
        "a_rg, b_rg, c_rg = shown\n" + CHECK_FLOW,
    )
    refused(result, "repr (in a cell above that set `shown`)")


def _top_level_underscore_bindings(source: str) -> list[int]:
    tree = ast.parse(source)
    found = []
    for node in earlier_cells._top_scope(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.For, ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        found += [n.lineno for t in targets for n in ast.walk(t)
                  if isinstance(n, ast.Name) and n.id == "_"]
    return found


def test_no_lesson_cell_binds_underscore_so_ipythons_last_output_stays_reachable():
    bound = {
        path.name: _top_level_underscore_bindings(source)
        for path in sorted(Path(earlier_cells._COURSE).glob("*.ipynb"))
        for source in _code_cells(path)
        if _top_level_underscore_bindings(source)
    }
    assert bound == {}


def _code_cells(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def test_flags_a_function_stored_as_globals_are_refused(shell):
    result = run_cells(
        shell,
        "def read_flags():\n    global seen\n    seen = [t.requires_grad for t in (a, b, c)]\n",
        "read_flags()",
        "a_rg, b_rg, c_rg = seen\n" + CHECK_FLOW,
    )
    refused(result, "in a cell above that set `seen`")


def test_flags_appended_in_a_later_cell_to_a_list_made_above_are_refused(shell):
    result = run_cells(
        shell,
        "kept = []",
        "kept.extend(t.requires_grad for t in (a, b, c))",
        "kept.append('nothing')",
        "a_rg, b_rg, c_rg = kept[:3]\n" + CHECK_FLOW,
    )
    refused(result, "in a cell above that set `kept`")


def test_a_prediction_appended_to_a_list_above_is_accepted(shell):
    result = run_cells(
        shell, "guess = []", "guess.extend([False, True, False])", "a_rg, b_rg, c_rg = guess\n" + CHECK_FLOW
    )
    assert result.passed, result.message


@pytest.mark.parametrize(
    "earlier",
    [
        "import operator\nflag = operator.attrgetter('requires_grad')\n",
        "import functools\nflag = functools.partial(getattr, name='requires_grad')\n"
        "flag = lambda t: getattr(t, 'requires_grad')\n",
    ],
)
def test_flags_read_by_the_attributes_name_are_refused(shell, earlier):
    result = run_cells(shell, earlier, "a_rg, b_rg, c_rg = [flag(t) for t in (a, b, c)]\n" + CHECK_FLOW)
    refused(result, ".requires_grad")


@pytest.mark.parametrize(
    "cell",
    [
        'a_rg, b_rg, c_rg = ("grad_fn" in f"{t}" for t in (a, b, c))\n',
        'a_rg, b_rg, c_rg = ("grad_fn" in t.__repr__() for t in (a, b, c))\n',
        'a_rg, b_rg, c_rg = (format(t).find("grad_fn") >= 0 for t in (a, b, c))\n',
    ],
)
def test_flags_read_off_the_printed_form_in_any_spelling_are_refused(shell, cell):
    refused(run_cells(shell, cell + CHECK_FLOW), "your cell reads the flags off the tensors")


def test_the_peak_counted_from_a_compiled_listing_is_refused(shell):
    result = run_cells(
        shell,
        "with ns.Graph() as chain:\n"
        "    xc = ns.placeholder('x', shape=(1000,))\n"
        "    yc = ns.exp(ns.sin(ns.cos(ns.tanh(xc * 2) + 1)) - 3)\n"
        "cf = chain.compile([xc], [yc], optimize=False)\n",
        "peak_intermediates = sum('free' in line for line in cf.listing().splitlines()) - 4\n"
        "result = ex6.check_memory_plan(peak_intermediates)",
    )
    refused(result, "listing")


@pytest.mark.parametrize(
    "earlier, answer",
    [
        ("class Box:\n    pass\nsetattr(Box, 'seen', [t.requires_grad for t in (a, b, c)])\n",
         "Box.seen"),
        ("class Box:\n    pass\ndef keep():\n    Box.seen = [t.requires_grad for t in (a, b, c)]\n"
         "keep()\n", "Box.seen"),
        ("[(seen := [t.requires_grad for t in (a, b, c)]) for _ in [0]]", "seen"),
        ("import types\nbox = types.ModuleType('box')\n"
         "box.seen = [t.requires_grad for t in (a, b, c)]\n", "box.seen"),
    ],
    ids=["setattr", "attribute-set-in-a-function", "walrus-in-a-comprehension", "module-object"],
)
def test_flags_carried_by_an_object_or_a_walrus_above_are_refused(shell, earlier, answer):
    result = run_cells(shell, earlier, f"a_rg, b_rg, c_rg = {answer}\n" + CHECK_FLOW)
    refused(result, ".requires_grad (in a cell above that set")


def test_a_prediction_carried_by_setattr_above_is_accepted(shell):
    result = run_cells(
        shell,
        "class Box:\n    pass\nsetattr(Box, 'guess', (False, True, False))\n",
        "a_rg, b_rg, c_rg = Box.guess\n" + CHECK_FLOW,
    )
    assert result.passed, result.message


def test_a_flag_read_off_an_f_string_names_the_f_string_not_str(shell):
    cell = 'a_rg, b_rg, c_rg = ("grad_fn" in f"{t}" for t in (a, b, c))\n'
    result = refused(run_cells(shell, cell + CHECK_FLOW), "an f-string")
    assert "uses str" not in result.message, result.message
