"""What the learner's cells did with the lesson's objects while they ran
(naivegraph/lessons/cell_reads.py): a value read off the lesson's model travels by
routes no name shows (a bound method kept and called later, a dict's get, a function
that fills the container it is given, heapq, np.copyto, a match statement, an
attribute set on an imported module), and each is refused by the prediction exercise
it reaches, naming what was used; a prediction typed and carried the same ways is
accepted, as is a cell that looked at the model but fed nothing into the answer."""

from __future__ import annotations

import inspect

import pytest
from checker_results import never_states, refused
from lesson_answers_01_05 import CHECK_01_1, CHECK_01_2, MODEL
from lesson_answers_06_07 import notebook_shell

from naivegraph.lessons import cell_reads, checking, earlier_cells

NAMES = "names = {'l1': l1, 'l2': l2, 'l3': l3, 'l4': l4, 'loss': loss}\n"
TYPED = "l1_value, l2_value, l3_value, l4_value = 2.0, 5.0, 8.0, 40.0\n"
FLOW = (
    "x = ng.tensor([1.0, 2.0])\nw = ng.tensor([3.0, 4.0], requires_grad=True)\n"
    "a = x + 1\nb = x * w\nc = b.detach()\n"
)
FLOW_SETUP = (
    "import naivegraph.lessons.checkers.lesson05 as ex5\n"
    "import naivegraph.lessons.checkers.lesson06 as ex6\n"
    "from naivegraph.lessons import training\n"
    "from naivegraph.static.executor import Plan\n"
)
CHAIN = (
    "with ns.Graph() as chain:\n"
    "    xc = ns.placeholder('x', shape=(1000,))\n"
    "    yc = ns.exp(ns.sin(ns.cos(ns.tanh(xc * 2) + 1)) - 3)\n"
)
CHECK_FLOW = "result = ex5.check_requires_grad_flow(a_rg, b_rg, c_rg)"
CHECK_PEAK = "result = ex6.check_memory_plan(peak_intermediates)"
LOOP = "for t in (l1, l2, l3, l4, loss):\n    pass\n"  # a lesson cell's loop variable
LESSON_CELLS = (MODEL, NAMES, FLOW, CHAIN, LOOP)


@pytest.fixture
def shell(monkeypatch):
    # the model cells are the lesson's own, as a shipped notebook's cells are
    monkeypatch.setattr(
        earlier_cells, "_lesson_sources", lambda: frozenset(c.strip() for c in LESSON_CELLS)
    )
    for sh in notebook_shell(FLOW_SETUP):
        for cell in LESSON_CELLS:
            sh.run_cell(cell, store_history=True)
        yield sh


def run_cells(shell, *cells: str, check: str = "result = _check_result"):
    """Run ``cells``; the last one ends with a check whose result it binds to ``result``."""
    checking.TRIES.clear()
    for cell in cells:
        shell.run_cell(cell, store_history=True)
    return shell.user_ns["result"]


def forward(answer_cell: str) -> str:
    return TYPED + answer_cell + "\nresult = " + CHECK_01_1


@pytest.mark.parametrize(
    "earlier, cell, used",
    [
        ("getv = loss.item", "loss_value = getv()", "loss.item"),
        ("get_loss = loss.mean", "loss_value = float(get_loss())", "loss.mean"),
        ("class C:\n    def v(self):\n        return float(loss)\nm = C().v", "loss_value = m()",
         "float(loss)"),
        ("import numpy as np\narr = np.zeros(1)\nnp.copyto(arr, float(loss))",
         "loss_value = arr[0]", "float(loss)"),
        ("import heapq\nh = []\nheapq.heappush(h, float(loss))", "loss_value = h[0]",
         "float(loss)"),
        ("match float(loss):\n    case v:\n        pass", "loss_value = v", "float(loss)"),
        ("vals = {k: float(v.mean()) for k, v in names.items()}", "loss_value = vals['loss']",
         "l1.mean"),
        ("pass", "loss_value = float(names['loss'])", "float(loss)"),
    ],
)
def test_01_1_a_value_read_off_the_model_by_a_route_no_name_shows_is_refused(
    shell, earlier, cell, used
):
    result = refused(run_cells(shell, earlier, forward(cell)), used)
    never_states(result, "40")


def test_01_1_a_value_renamed_through_many_cells_is_still_followed(shell):
    cells = ["v0 = float(loss)"] + [f"v{i} = v{i - 1}" for i in range(1, 20)]
    result = refused(run_cells(shell, *cells, forward("loss_value = v19")), "float(loss)")
    never_states(result, "40")


@pytest.mark.parametrize(
    "earlier, cell",
    [
        ("class C:\n    def g(self):\n        return [float(t) for t in ng.autograd.grad("
         "loss, [w1, w2, w3], retain_graph=True)]\nm = C().g", "w1_grad, w2_grad, w3_grad = m()"),
        ("d = dict(zip(['w1', 'w2', 'w3'], ng.autograd.grad(loss, [w1, w2, w3], "
         "retain_graph=True)))\nget = d.get",
         "w1_grad, w2_grad, w3_grad = (float(get(k)) for k in ('w1', 'w2', 'w3'))"),
        ("vals = [float(g) for g in ng.autograd.grad(loss, [w1, w2, w3], retain_graph=True)]\n"
         "pop = vals.pop", "w1_grad, w2_grad, w3_grad = pop(0), pop(0), pop(0)"),
    ],
)
def test_01_2_gradients_computed_above_and_handed_over_by_a_method_are_refused(
    shell, earlier, cell
):
    result = refused(run_cells(shell, earlier, cell + "\nresult = " + CHECK_01_2), "grad")
    never_states(result, "28")


@pytest.mark.parametrize(
    "earlier, cell",
    [
        ("def record(d, t, k):\n    d[k] = t.requires_grad\n",
         "flags = {}\nrecord(flags, a, 'a'); record(flags, b, 'b'); record(flags, c, 'c')\n"
         "a_rg, b_rg, c_rg = flags['a'], flags['b'], flags['c']"),
        ("def record(d, t, k):\n    d[k] = t.requires_grad\nstore = {}\n"
         "for k, t in zip('abc', (a, b, c)):\n    record(store, t, k)",
         "a_rg, b_rg, c_rg = store['a'], store['b'], store['c']"),
        ("def grab(out, t):\n    out.append(t.requires_grad)\n",
         "got = []\nfor t in (a, b, c):\n    grab(got, t)\na_rg, b_rg, c_rg = got"),
        ("flags4 = []\nlist(map(flags4.append, (t.requires_grad for t in (a, b, c))));",
         "a_rg, b_rg, c_rg = flags4"),
        ("class Box:\n    pass\nbox = Box()\ndef fill(bx):\n"
         "    bx.v = [t.requires_grad for t in (a, b, c)]\nfill(box)", "a_rg, b_rg, c_rg = box.v"),
        ("ex5.my_flags = [t.requires_grad for t in (a, b, c)]", "a_rg, b_rg, c_rg = ex5.my_flags"),
    ],
)
def test_05_1_flags_carried_by_a_helper_or_a_module_attribute_are_refused(shell, earlier, cell):
    result = refused(run_cells(shell, earlier, cell + "\n" + CHECK_FLOW), "requires_grad")
    never_states(result, "False, True, False")


@pytest.mark.parametrize(
    "earlier, cell",
    [
        ("def measure(d, graph, out, inp):\n    d['peak'] = max(training.live_values("
         "Plan(graph, [out], [inp]), count_fetched=True))\nres = {}\n"
         "measure(res, chain, yc, xc)", "peak_intermediates = res['peak']"),
        ("training.my_peak = max(training.live_values(Plan(chain, [yc], [xc]), "
         "count_fetched=True))", "peak_intermediates = training.my_peak"),
    ],
)
def test_06_3_a_peak_computed_by_a_helper_or_kept_on_a_module_is_refused(shell, earlier, cell):
    refused(run_cells(shell, earlier, cell + "\n" + CHECK_PEAK), "Plan")


@pytest.mark.parametrize(
    "earlier, cell",
    [
        ("def record(d, k, v):\n    d[k] = v\nstore = {}\n"
         "record(store, 'a', False); record(store, 'b', True); record(store, 'c', False)",
         "a_rg, b_rg, c_rg = store['a'], store['b'], store['c']"),
        ("ex5.my_flags = [False, True, False]", "a_rg, b_rg, c_rg = ex5.my_flags"),
        ("guess = {'a': False, 'b': True, 'c': False}\nget = guess.get",
         "a_rg, b_rg, c_rg = get('a'), get('b'), get('c')"),
        ("print(a, b, c)\nmine = (False, True, False)", "a_rg, b_rg, c_rg = (False, True, False)"),
    ],
)
def test_05_1_a_prediction_typed_and_carried_the_same_ways_is_accepted(shell, earlier, cell):
    result = run_cells(shell, earlier, cell + "\n" + CHECK_FLOW)
    assert result.passed, result.message


def test_01_1_a_cell_that_looked_at_the_model_but_feeds_nothing_in_is_no_reason_to_refuse(shell):
    result = run_cells(shell, "print(float(loss))", "guess = 40.0", forward("loss_value = guess"))
    assert result.passed, result.message


def test_a_checker_reading_the_model_leaves_nothing_in_the_cells_record(shell):
    run_cells(shell, forward("loss_value = 40.0"))
    assert cell_reads.uses_in(shell.execution_count - 1) == []


def test_a_cells_record_names_what_the_learners_code_used(shell):
    shell.run_cell(
        "v = loss.item()\nflag = a.requires_grad\nn = float(l1[0, 0])\nm = 2 * l1\nk = l2 + 1\n"
        "j = 2 * w1 * 7",  # arithmetic on a leaf takes the input's value, as typing it does
        store_history=True,
    )
    assert cell_reads.uses_in(shell.execution_count - 1) == [
        "loss.item", "a.requires_grad", "l1[...]", "arithmetic on l1", "arithmetic on l2"]


def test_the_lessons_own_cells_are_not_watched(shell):
    shell.run_cell(NAMES, store_history=True)  # a lesson cell again
    assert cell_reads.uses_in(shell.execution_count - 1) == []


# -- a look at the model that feeds nothing into the answer, in the checking cell ----------


@pytest.mark.parametrize(
    "cell",
    [
        TYPED + "loss_value = 40.0\nresult = " + CHECK_01_1 + "\nprint('model:', loss.item())",
        "print('model:', loss.item())\n" + TYPED + "loss_value = 40.0\nresult = " + CHECK_01_1,
        "print(a)\n" + TYPED + "loss_value = 40.0\nresult = " + CHECK_01_1,
    ],
    ids=["after the check", "before the answer", "a tensor printed"],
)
def test_01_1_a_typed_answer_beside_a_look_at_the_model_is_accepted(shell, cell):
    result = run_cells(shell, cell)
    assert result.passed, result.message


def test_01_1_the_check_itself_is_not_named_as_a_use_of_the_model(shell):
    result = refused(run_cells(shell, TYPED + "loss_value = names['loss']\nresult = " + CHECK_01_1),
                     "loss")
    assert "checked" not in result.message, result.message


def test_a_look_on_the_line_of_the_answer_still_counts(shell):
    result = run_cells(shell, TYPED + "loss_value = loss.item()\nresult = " + CHECK_01_1)
    refused(result, ".item")


@pytest.mark.parametrize(
    "cell, says",
    [
        ("with ns.Graph() as g:\n    xs = ns.Variable(3.0)\n    ys = xs ** 2.0\n"
         "    (gxs,) = ns.gradients(ys, [xs])\ngv = g.run(gxs)\na_rg = False\nb_rg = True\n"
         "c_rg = bool(float(gv) == 0)", "ns.gradients"),
        ("from naivegraph.render import render\nd = str(render(b).details)\n"
         "a_rg, b_rg, c_rg = False, 'True' in d, False", "ng.render"),
        ("match b:\n    case object(requires_grad=rg):\n        pass\n"
         "a_rg, b_rg, c_rg = False, rg, False", "requires_grad"),
    ],
    ids=["static gradients", "a drawing's details", "a match on an attribute"],
)
def test_05_1_answers_computed_by_the_static_graph_a_drawing_or_a_match_are_refused(
    shell, cell, says
):
    refused(run_cells(shell, cell + "\n" + CHECK_FLOW), says)


# -- which checks ask for predictions, and the watch only while one is open ---------------


def _names_reached(function) -> set[str]:
    """The names a checker's code looks up, through the functions of the lessons'
    modules it calls (``_not_by_hand``, ``_runs_instead_of_predicting``)."""
    seen, todo, names = set(), [inspect.unwrap(function)], set()
    while todo:
        f = todo.pop()
        if f in seen or not inspect.isfunction(f):
            continue
        seen.add(f)
        code_names = set(f.__code__.co_names)
        for const in f.__code__.co_consts:
            if inspect.iscode(const):
                code_names |= set(const.co_names)
        names |= code_names
        todo += [f.__globals__.get(n) for n in code_names
                 if getattr(f.__globals__.get(n), "__module__", "").startswith("naivegraph.lessons")]
    return names


def test_every_check_that_refuses_a_computed_answer_is_marked_a_prediction():
    computed = {ex for ex, check in checking.CHECKERS.items()
                if "cell_computes" in _names_reached(check)}
    assert computed == checking.PREDICTIONS
    assert {"01-1", "02-1", "04-2", "06-3", "07-2", "12-6", "13-3"} <= checking.PREDICTIONS


def test_a_lesson_whose_predictions_are_all_checked_is_no_longer_watched(monkeypatch):
    lesson_cell = MODEL.strip()
    monkeypatch.setattr(earlier_cells, "_lesson_sources", lambda: frozenset([lesson_cell]))
    monkeypatch.setattr(earlier_cells, "_lessons_by_source", lambda: {lesson_cell: "01"})
    monkeypatch.setattr(checking, "PREDICTIONS", {"01-1"})
    for sh in notebook_shell():
        sh.run_cell(MODEL, store_history=True)
        sh.run_cell("v = loss.item()", store_history=True)
        watched = cell_reads.uses_in(sh.execution_count - 1)
        checking.TRIES.clear()
        sh.run_cell(forward("loss_value = 40.0"), store_history=True)
        assert sh.user_ns["result"].passed
        sh.run_cell("v = loss.item()", store_history=True)
        assert (watched, cell_reads.uses_in(sh.execution_count - 1)) == (["loss.item"], [])


# -- walk 8: a drawing above does not taint `ng`; an update that reveals a gradient -------


def test_05_1_a_drawing_made_above_does_not_taint_every_later_use_of_ng(shell):
    result = run_cells(shell, "from naivegraph.render import render\nimport naivegraph as ng\n"
                       "ng.render(b)", "a_rg, b_rg, c_rg = (bool(v) for v in ng.tensor([0, 1, 0]))\n"
                       + CHECK_FLOW)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "cell",
    [
        "x3 = ng.tensor([1.0, 2.0], requires_grad=True)\n(x3 * w).sum().backward()\n"
        "a_rg, b_rg, c_rg = False, bool(x3.grad[0] > 0), False",
        "x3 = ng.tensor([1.0, 2.0], requires_grad=True)\n(x3 * w).sum().backward()\n"
        "ng.optim.SGD([x3], lr=1.0).step()\n"
        "a_rg, b_rg, c_rg = False, bool(float(x3[0]) < 1.0), False",
    ],
    ids=["backward on a copy", "an optimizer's step"],
)
def test_05_1_a_backward_or_a_step_on_the_answers_own_tensor_in_the_cell_is_refused(shell, cell):
    refused(run_cells(shell, cell + "\n" + CHECK_FLOW), "a backward")


# -- walk 8: earlier cells judged by the statements that make the value --------------------


def test_01_2_values_typed_in_the_01_1_cell_beside_a_look_at_the_model_are_accepted(shell):
    run_cells(shell, TYPED + "loss_value = 40.0\nresult = " + CHECK_01_1
              + "\nprint('model:', loss.item())")
    cell = ("w1_grad = 4 * 0.25 * (l3_value + l2_value * 4)\nw2_grad = 4 * 0.25 * l3_value\n"
            "w3_grad = 4 * 0.25 * l2_value * l1_value\nresult = " + CHECK_01_2)
    result = run_cells(shell, cell)
    assert result.passed, result.message


def test_01_1_a_look_on_its_own_line_above_a_typed_value_is_accepted(shell):
    result = run_cells(shell, "print(float(loss))\nv = 40", forward("loss_value = v"))
    assert result.passed, result.message


def test_01_1_a_use_is_named_by_the_lessons_own_name_not_a_loops_variable(shell):
    result = refused(run_cells(shell, "v = float(loss)", forward("loss_value = v")), "float(loss)")
    assert "(t)" not in result.message, result.message


def test_01_3_a_derivative_by_a_symbolic_library_is_refused(shell):
    pytest.importorskip("sympy")
    result = run_cells(
        shell,
        "import sympy as sp\nu = sp.Symbol('u')\nd = float(sp.diff((u + 3) * (u * 4) / 4, u).subs(u, 2))",
        "l1_grad = d\nresult = ex.check_l1_grad(l1_grad)",
    )
    refused(result, "sympy")
    never_states(result, "7")


def test_05_1_flags_kept_on_another_name_of_the_same_module_are_refused(shell):
    result = run_cells(
        shell,
        "import naivegraph.lessons.checkers.lesson05 as ex5b\n"
        "ex5b.keep = [t.requires_grad for t in (a, b, c)]",
        "a_rg, b_rg, c_rg = ex5.keep\n" + CHECK_FLOW,
    )
    refused(result, "requires_grad")


@pytest.mark.parametrize(
    "earlier",
    [
        "x3 = ng.tensor([1.0, 2.0], requires_grad=True)\n(x3 * w).sum().backward()\n"
        "ng.optim.SGD([x3], lr=1.0).step()",
        "x3 = ng.tensor([1.0, 2.0], requires_grad=True)\nopt = ng.optim.SGD([x3], lr=1.0)\n"
        "(x3 * w).sum().backward()\nopt.step()",
    ],
)
def test_05_1_a_value_a_step_moved_in_a_cell_above_is_refused(shell, earlier):
    result = run_cells(shell, earlier,
                       "a_rg, b_rg, c_rg = False, bool(float(x3[0]) < 1.0), False\n" + CHECK_FLOW)
    refused(result, "in a cell above that set `x3`")


def test_01_1_values_typed_in_a_class_body_are_accepted(shell):
    result = run_cells(
        shell,
        "class P:\n    l1 = 2; l2 = l1 + 3; l3 = l1 * 4; l4 = l2 * l3",
        "l1_value, l2_value, l3_value, l4_value = P.l1, P.l2, P.l3, P.l4\nloss_value = 40.0\n"
        "result = " + CHECK_01_1,
    )
    assert result.passed, result.message
