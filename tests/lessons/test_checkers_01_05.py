"""The checkers of lessons 1-5 teach and refuse wrong work.

Each checker accepts the reference answer and its equivalent correct forms; refuses
each known wrong answer with a hint for THAT mistake; never puts the expected answer
in a rejection (hints get stronger with each try, the answer comes only from
``ex.reveal``); reports a blank as "not done yet"; and never raises.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from lesson_answers_01_05 import (
    derivatives,
    find_leaves,
    predict_ok,
    reset_data,
    reset_detach,
    reset_no_grad,
)

import naivegraph as ng
from naivegraph.lessons import exercises as ex
from naivegraph.lessons.checking import ANSWERS, TRIES

COURSE = Path(__file__).resolve().parents[2] / "naivegraph" / "course"
MINE = [f"0{lesson}-{i}" for lesson in range(1, 6) for i in range(1, 4)]
MINE += ["03-4", "03-5"]


# -- right answers ------------------------------------------------------------------------


def find_leaves_recursive(t):  # dedup by leaf, recursion instead of a stack
    found, visited = {}, set()

    def visit(node):
        if node is None or id(node) in visited:
            return
        visited.add(id(node))
        if node.name() == "AccumulateGrad":
            found[id(node.variable)] = node.variable
        for child, _ in node.next_functions:
            visit(child)

    visit(t.grad_fn)
    return list(found.values())


def find_leaves_is(t):  # unusual but right: leaves told apart with `is`, a list of nodes
    leaves, seen, stack = [], [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or any(node is n for n in seen):
            continue
        seen.append(node)
        v = getattr(node, "variable", None)
        if v is not None and not any(v is k for k in leaves):
            leaves.append(v)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


def double_mul(grad):
    return grad * 2


def double_add(grad):
    return grad + grad


def gradf(x):
    return 2 * x * ng.exp(x) + x**2 * ng.exp(x)


def gradf_factored(x):
    return (x**2 + 2 * x) * x.exp()


def derivatives_floats(f, x):
    (first,) = ng.autograd.grad(f(x), x, create_graph=True)
    (second,) = ng.autograd.grad(first, x)
    return first.item(), second.item()


def derivatives_of_x_data(f, x):  # f of a copy cut from the graph: nothing to differentiate
    (first,) = ng.autograd.grad(f(x.data), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first, second


def derivatives_func_grad(f, x):  # unusual but right: the functional transform, twice
    return ng.func.grad(f)(x), ng.func.grad(ng.func.grad(f))(x)


def setup_ok(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def setup_requires_grad_(model, n):
    model.requires_grad_(False) if hasattr(model, "requires_grad_") else [
        p.requires_grad_(False) for p in model.parameters()
    ]
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(list(model.fc.parameters()), lr=0.1, momentum=0.9)


@ng.no_grad()
def predict_decorated(model, x):
    return model(x)


RIGHT = {
    "01-1": (
        ex.check_forward_values,
        [(2, 5, 8, 40, 40), (2.0, 5.0, 8.0, 40.0, 40.0), (np.float64(2), 5, 8, 40, np.array(40.0))],
    ),
    "01-2": (
        ex.check_leaf_grads,
        [(28, 8, 10), (28.0, 8.0, 10.0), (np.float64(28), np.float32(8), 10)],
    ),
    "01-3": (ex.check_l1_grad, [(7,), (7.0,), (np.float64(7.0),)]),
    "02-1": (
        ex.check_leaf_flags,
        [
            ((True, True, False, False), (True, False, True, True)),
            ([True, True, False, False], [True, False, True, True]),
        ],
    ),
    "02-2": (
        ex.check_next_functions,
        [
            (["MulBackward0", "AccumulateGrad"], ["AccumulateGrad", None]),
            (("MulBackward0", "AccumulateGrad"), ("AccumulateGrad", None)),
        ],
    ),
    "02-3": (ex.check_find_leaves, [(find_leaves,), (find_leaves_recursive,), (find_leaves_is,)]),
    "03-1": (ex.check_double_hook, [(double_mul,), (double_add,), (lambda g: 2 * g,)]),
    "03-2": (ex.check_accumulated_grad, [(12,), (12.0,), (np.float64(12.0),)]),
    "03-3": (ex.check_vector_backward, [([2.0, 0.4, 0.06],), (np.array([2, 0.4, 0.06]),)]),
    "03-4": (ex.check_manual_gradient, [(gradf,), (gradf_factored,)]),
    "03-5": (
        ex.check_second_derivative,
        [(derivatives,), (derivatives_floats,), (derivatives_func_grad,)],
    ),
    "04-1": (ex.check_versions, [([0, 1, 2, 2, 3],), ((0, 1, 2, 2, 3),)]),
    "04-2": (ex.check_inplace_predictions, [((True, False, True),), ([True, False, True],)]),
    "04-3": (ex.check_reset_leaf, [(reset_no_grad,), (reset_detach,), (reset_data,)]),
    "05-1": (ex.check_requires_grad_flow, [(False, True, False)]),
    "05-2": (ex.check_finetune_setup, [(setup_ok,), (setup_requires_grad_,)]),
    "05-3": (ex.check_inference, [(predict_ok,), (predict_decorated,)]),
}


def test_every_exercise_of_lessons_1_to_5_is_covered_and_has_an_answer():
    mine = {e for e in ex.CHECKERS if e[:2] in {"01", "02", "03", "04", "05"}}
    assert mine == set(MINE) == set(RIGHT)
    assert all(ANSWERS.get(e) for e in mine)


@pytest.mark.parametrize("exercise", sorted(RIGHT))
def test_accepts_the_reference_answer_and_equivalent_forms(exercise, capsys):
    check, forms = RIGHT[exercise]
    for args in forms:
        result = check(*args)
        assert result.status == "pass", (args, result.message)
    assert capsys.readouterr().out.startswith(f"✓ correct [{exercise}]")


# -- wrong answers: each refused with a hint for that mistake ------------------------------


def find_leaves_no_seen(t):  # the lesson's recipe without the visited set
    leaves, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


def find_leaves_direct(t):  # only the direct inputs
    return [
        n.variable
        for n, _ in t.grad_fn.next_functions
        if n is not None and n.name() == "AccumulateGrad"
    ]


def find_leaves_nodes(t):  # the AccumulateGrad nodes instead of their tensors
    return [n for n, _ in t.grad_fn.next_functions if n is not None]


def double_in_place(grad):
    grad *= 2
    return grad


def double_mul_(grad):
    grad.mul_(2)


def derivatives_no_create_graph(f, x):
    (first,) = ng.autograd.grad(f(x), [x])
    (second,) = ng.autograd.grad(first, [x])
    return first, second


def derivatives_through_grad(f, x):  # x.grad accumulates the second into the first
    f(x).backward(create_graph=True)
    first = x.grad
    first.backward()
    return first.item(), x.grad.item()


def derivatives_same_twice(f, x):
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    return first, first


def derivatives_swapped(f, x):
    first, second = derivatives(f, x)
    return second, first


def derivatives_finite_difference(f, x, h=1e-4):  # an estimate, not autograd's f''
    def first_at(v):
        v = ng.tensor(v, dtype=ng.float64, requires_grad=True)
        return ng.autograd.grad(f(v), [v])[0].item()

    (first,) = ng.autograd.grad(f(x), [x])
    return first, (first_at(x.item() + h) - first_at(x.item() - h)) / (2 * h)


def derivatives_no_autograd(f, x, h=1e-4):  # both by finite differences of f
    def at(v):
        return f(ng.tensor(v, dtype=ng.float64)).item()

    v = x.item()
    return (at(v + h) - at(v - h)) / (2 * h), (at(v + h) - 2 * at(v) + at(v - h)) / h**2


def derivatives_data(f, x):  # recorded with create_graph, then cut off by .data
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first.data, [x])
    return first, second


def gradf_autograd(x):  # not derived by hand
    x = x.detach().requires_grad_(True)
    return ng.autograd.grad((x**2 * ng.exp(x)).sum(), [x])[0]


def gradf_backward(x):  # not derived by hand, and crashes on an x without grad
    y = x**2 * ng.exp(x)
    y.backward(ng.ones(y.shape))
    return x.grad


def reset_inplace_leaf(a):
    a[:] = 10.0
    return a


def reset_new_tensor(a):
    return ng.full([4], 10.0, requires_grad=True)


def reset_detach_(a):
    a.detach_()
    a.fill_(10.0)
    return a


def reset_switch_off(a):
    a.requires_grad = False
    a.fill_(10.0)
    return a


def setup_not_frozen(model, n):
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def setup_all_params(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def setup_hard_coded(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, 3)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def setup_frozen_after(model, n):
    model.fc = ng.nn.Linear(8, n)
    for p in model.parameters():
        p.requires_grad = False
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def setup_keeps_old_fc(model, n):
    for p in model.parameters():
        p.requires_grad = False
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def predict_detach(model, x):
    return model(x).detach()


def predict_freezes_model(model, x):
    for p in model.parameters():
        p.requires_grad = False
    return model(x)


def predict_switching_to_eval(model, x):
    model.eval()
    with ng.no_grad():
        return model(x)


def predict_numpy(model, x):
    with ng.no_grad():
        return model(x).numpy()


def predict_grad_left_off(model, x):
    ng.set_grad_enabled(False)
    return model(x)


# exercise, wrong args, a phrase of the hint that this mistake must get
WRONG = [
    ("01-1", (2, 5, 8, 40, 160), "not l4.sum()"),
    ("01-1", (2, 3, 8, 40, 40), "w2 alone"),
    ("01-1", (1, 5, 8, 40, 40), "w1 is not 1"),
    ("01-1", (2, 5, 8, 13, 13), "product, not a sum"),
    ("01-2", (7, 2, 2.5), "ONE element"),
    ("01-2", (20, 8, 10), "TWO paths"),
    ("01-2", (112, 8, 10), "1/4 is missing"),
    ("01-2", (28, 5, 10), "OTHER factor"),
    ("01-3", (28.0,), "4 times too big"),
    ("01-3", (2.0,), "two ops"),
    ("01-3", (1.75,), "counted twice"),
    ("02-1", ((True, True, True, True), (True, False, True, True)), "recorded history"),
    ("02-1", ((True, True, False, False), (True, True, True, True)), "b was created without"),
    ("02-1", ((True, False, False, False), (True, False, True, True)), "always a leaf"),
    ("02-1", (("True", "True", "False", "False"), (True, False, True, True)), "without quotes"),
    ("02-1", ([1, 1, 0, 0], [1, 0, 1, 1]), "not 1 / 0"),
    ("02-1", (tuple(ng.tensor([True, True, False, False])), (True, False, True, True)), ".item()"),
    ("02-1", ((True, True, False), (True, False, True, True)), "4 values"),
    ("02-2", (["AddBackward0", "AccumulateGrad"], ["AccumulateGrad", None]), "z's own node"),
    (
        "02-2",
        (["MulBackward0", "AccumulateGrad"], ["AccumulateGrad", "AccumulateGrad"]),
        "without requires_grad",
    ),
    ("02-2", (["MulBackward0", None], ["AccumulateGrad", None]), "stored somewhere"),
    ("02-2", (["MulBackward0", "AccumulateGrad"], ["MulBackward0", None]), "leaf, made by you"),
    ("02-2", (["MulBackward0", "AccumulateGrad"], ["AccumulateGrad", "None"]), "without quotes"),
    ("02-3", (find_leaves_no_seen,), "more than once"),
    ("02-3", (find_leaves_direct,), "missing"),
    ("02-3", (find_leaves_nodes,), "node.variable"),
    ("02-3", (lambda t: t.grad_fn,), "returned"),
    ("03-1", (double_in_place,), "IN PLACE"),
    ("03-1", (double_mul_,), "IN PLACE"),
    ("03-1", (lambda g: g + 2,), "added 2"),
    ("03-1", (lambda g: g * 3,), "twice as big"),
    ("03-1", (lambda g: g.clone(),), "unchanged"),
    ("03-2", (6.0,), "ONE backward"),
    ("03-2", (18.0,), "2x, not x**2"),
    ("03-2", (0.0,), "nothing zeroes"),
    ("03-3", ([2.0, 4.0, 6.0],), "weighted"),
    ("03-3", ([1.0, 0.2, 0.03],), "2x, not x"),
    ("03-3", (2.46,), "shape of x"),
    ("03-4", (lambda x: 2 * x * ng.exp(x),), "is missing"),
    ("03-4", (lambda x: x**2 * ng.exp(x),), "f(x) itself"),
    ("03-5", (derivatives_no_create_graph,), "not recorded"),
    ("03-5", (derivatives_through_grad,), "accumulates"),
    ("03-5", (derivatives_same_twice,), "equals the first"),
    ("03-5", (derivatives_swapped,), "swapped"),
    ("03-5", (lambda f, x: (27.0, 18.0),), "first derivative is wrong"),
    ("03-5", (derivatives_finite_difference,), "finite difference"),
    ("03-5", (derivatives_no_autograd,), "finite difference"),
    ("03-5", (derivatives_data,), "cut from the graph"),
    ("03-5", (derivatives_of_x_data,), "first autograd.grad raised"),
    ("03-4", (gradf_autograd,), "asks autograd"),
    ("03-4", (gradf_backward,), "asks autograd"),
    ("03-3", ([4.0, 4.4, 6.06],), "assume a fresh x"),
    ("04-1", ([0, 1, 2, 3, 4],), "NEW tensor"),
    ("04-1", ([1, 2, 3, 3, 4],), "starts at version 0"),
    ("04-1", ([0, 1, 1, 1, 2],), "mul_"),
    ("04-1", ([0, 1, 2, 2, 2],), "unlike on a Python int"),
    ("04-1", ([0, 0, 1, 1, 2],), "b[0] = 1000"),
    ("04-2", ((True, True, True),), "(2)"),
    ("04-2", ((True, False, False),), "(3)"),
    ("04-2", ((False, False, True),), "(1)"),
    ("04-2", ((1, 0, 1),), "not 1 / 0"),
    ("04-3", (reset_inplace_leaf,), "refuses them"),
    ("04-3", (reset_new_tensor,), "different tensor"),
    ("04-3", (reset_detach_,), "no longer requires grad"),
    ("04-3", (reset_switch_off,), "no longer requires grad"),
    ("05-1", (True, True, False), "either of its inputs"),
    ("05-1", (False, True, True), "no_grad"),
    ("05-1", (False, False, False), "ONE input"),
    ("05-1", (0, 1, 0), "not 1 / 0"),
    ("05-2", (setup_not_frozen,), "not frozen"),
    ("05-2", (setup_all_params,), "only the new layer"),
    ("05-2", (setup_hard_coded,), "n_classes argument"),
    ("05-2", (setup_frozen_after,), "frozen too"),
    ("05-2", (setup_keeps_old_fc,), "old layer"),
    ("05-3", (lambda m, x: m(x),), "records history"),
    ("05-3", (predict_detach,), "recording on"),
    ("05-3", (predict_freezes_model,), "frozen for any training"),
    ("05-3", (predict_grad_left_off,), "grad mode is still off"),
    ("05-3", (lambda m, x: m(x).sum(),), "unchanged"),
    ("05-3", (predict_switching_to_eval,), "eval mode"),
    ("05-3", (predict_numpy,), "a tensor"),
]


def _number(value: str) -> str:
    """A number as a word of the message: 40 matches "40" and "40.0", not "140" or "4"."""
    return rf"(?<![\w.]){re.escape(value)}(?:\.0+)?(?![\w]|\.\d)"


# What a rejection must never show: the expected answer (numbers, tuples, solution code).
FORBIDDEN = {
    "01-1": [_number(v) for v in ("2", "5", "8", "40")],
    "01-2": [_number(v) for v in ("28", "10")] + [r"w2\.grad = 8"],
    "01-3": [_number("7")],
    "02-1": [re.escape("(True, True, False, False)"), re.escape("(True, False, True, True)")],
    "02-2": [r"\[.MulBackward0., .AccumulateGrad.\]", r"\[.AccumulateGrad., None\]"],
    "02-3": [r"id\(node\) in seen", r"seen\.add"],
    "03-1": [re.escape("[2, 4, 6]"), r"grad \* 2", r"2 \* grad"],
    "03-2": [_number("12")],
    "03-3": [_number("0.4"), _number("0.06")],
    "03-4": [re.escape("2x e^x + x^2 e^x"), re.escape("2 * x * ng.exp(x) +")],
    "03-5": [_number("-9"), re.escape("grad(first, [x])\n")],
    "04-1": [re.escape("[0, 1, 2, 2, 3]")],
    "04-2": [re.escape("(True, False, True)")],
    "04-3": [r"a\.fill_\(10", r"with ng\.no_grad\(\):\s+a"],
    "05-1": [re.escape("(False, True, False)")],
    "05-2": [re.escape("Linear(8, n_classes)"), re.escape("SGD(model.fc.parameters()")],
    "05-3": [r"with ng\.no_grad\(\):\s+return"],
}


def assert_teaches(result, exercise: str, phrase: str) -> None:
    assert result.status == "fail", result.message
    assert result.message.startswith(f"✗ not yet [{exercise}]"), result.message
    assert phrase in result.message, result.message
    for pattern in FORBIDDEN[exercise]:
        assert not re.search(pattern, result.message), (pattern, result.message)


@pytest.mark.parametrize(
    ("exercise", "args", "phrase"), WRONG, ids=[f"{e}-{i}" for i, (e, _, _) in enumerate(WRONG)]
)
def test_refuses_each_wrong_answer_with_a_hint_for_that_mistake(exercise, args, phrase, capsys):
    assert_teaches(ex.CHECKERS[exercise](*args), exercise, phrase)
    assert ng.is_grad_enabled()  # a learner's mistake does not leak out of the checker


@pytest.mark.parametrize("exercise", sorted(FORBIDDEN))
def test_hints_get_stronger_and_then_point_to_reveal_never_to_the_answer(exercise, capsys):
    args = next(a for e, a, _ in WRONG if e == exercise)
    messages = [ex.CHECKERS[exercise](*args).message for _ in range(4)]
    for message in messages:
        assert message.startswith(f"✗ not yet [{exercise}]")
        for pattern in FORBIDDEN[exercise]:
            assert not re.search(pattern, message), (pattern, message)
    assert f'ex.reveal("{exercise}")' in messages[-1]
    if not messages[0].startswith(f"✗ not yet [{exercise}]: hint: write"):  # form errors
        assert len(set(messages)) >= 2 or f'ex.reveal("{exercise}")' in messages[0]


@pytest.mark.parametrize("exercise", MINE)
def test_reveal_prints_the_answer_on_request(exercise, capsys):
    ex.reveal(exercise)
    out = capsys.readouterr().out
    assert out.startswith(f"answer [{exercise}]: ") and len(out) > 40


def test_the_lessons_own_model_needs_the_visited_set(capsys):
    """The no-visited-set walk reports 4 leaves for lesson 1's 3 (w1 twice)."""
    w1, w2, w3 = (ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = ng.ones([2, 2]) * w1
    loss = ((l1 + w2) * (l1 * w3)).mean()
    assert len(find_leaves_no_seen(loss)) == 4 and len(find_leaves(loss)) == 3
    result = ex.check_find_leaves(find_leaves_no_seen)
    assert "lesson 1's loss" in result.message and "'w1', 'w1'" in result.message


@pytest.mark.parametrize("wrong", [derivatives_data, derivatives_of_x_data])
def test_03_5_data_is_not_blamed_on_create_graph(wrong, capsys):
    result = ex.check_second_derivative(wrong)
    assert ".data" in result.message and "create_graph" not in result.message


def test_03_5_a_finite_difference_never_gets_the_create_graph_success_line(capsys):
    for wrong in (derivatives_finite_difference, derivatives_no_autograd):
        TRIES.clear()
        result = ex.check_second_derivative(wrong)
        assert not result and "create_graph=True recorded" not in result.message


def test_03_3_every_hint_says_to_assume_a_fresh_x(capsys):
    messages = [
        ex.check_vector_backward([4.0, 4.4, 6.06]).message,
        ex.check_vector_backward([5.0, 5.0, 5.0]).message,
    ]
    assert all("fresh x" in m for m in messages), messages


def test_missing_create_graph_is_recognised_not_shown_as_a_raw_error(capsys):
    first = ex.check_second_derivative(derivatives_no_create_graph)
    second = ex.check_second_derivative(derivatives_no_create_graph)
    assert "raised RuntimeError" not in first.message
    assert "create_graph" in second.message and "Still stuck?" in second.message


# -- blanks and things that are not answers at all -----------------------------------------

BLANK = {
    "01-1": (..., ..., ..., ..., ...),
    "01-2": (..., ..., ...),
    "01-3": (...,),
    "02-1": (..., ...),
    "02-2": (..., ...),
    "02-3": (...,),
    "03-1": (...,),
    "03-2": (...,),
    "03-3": (...,),
    "03-4": (...,),
    "03-5": (...,),
    "04-1": (...,),
    "04-2": (...,),
    "04-3": (...,),
    "05-1": (..., ..., ...),
    "05-2": (...,),
    "05-3": (...,),
}


@pytest.mark.parametrize("exercise", sorted(BLANK))
def test_a_blank_answer_is_not_done_yet(exercise, capsys):
    result = ex.CHECKERS[exercise](*BLANK[exercise])
    assert result.status == "todo" and not result.done
    assert capsys.readouterr().out.startswith(f"○ not done yet [{exercise}]")


@pytest.mark.parametrize("exercise", ["02-3", "03-1", "03-4", "03-5", "04-3", "05-2", "05-3"])
def test_a_function_left_with_an_empty_body_is_not_done_yet(exercise, capsys):
    def empty(*args): ...

    assert ex.CHECKERS[exercise](empty).status == "todo"


def _raises(*args):
    raise ValueError("boom")


JUNK = ["seven", None, object(), [], {}, np.nan, _raises, lambda *a: "text", lambda *a: [...]]


@pytest.mark.parametrize("exercise", sorted(BLANK))
def test_never_raises_whatever_it_is_given(exercise, capsys):
    arity = len(BLANK[exercise])
    for junk in JUNK:
        result = ex.CHECKERS[exercise](*([junk] * arity))
        assert result.status in {"fail", "todo"}, (junk, result.message)
        for pattern in FORBIDDEN[exercise]:
            assert not re.search(pattern, result.message), (pattern, result.message)
    assert ng.is_grad_enabled()


# -- the lessons themselves ---------------------------------------------------------------

SOURCES = sorted((COURSE / "src").glob("0[1-5]_*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_lessons_print_error_messages_whole_and_end_with_further_reading(path):
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"str\((err|exc|e)\)\[:\d+\]", text)
    assert not re.search(r"message\)\[:\d+\]", text)
    assert "## Further reading" in text


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_exercises_appear_in_the_order_of_their_numbers(path):
    numbers = re.findall(r'^# %% exercise="(\d\d-\d)"', path.read_text(encoding="utf-8"), re.M)
    assert numbers == sorted(numbers) and len(numbers) >= 3


def test_lessons_link_the_animations_and_every_linked_file_ships_with_the_course():
    links = {}
    for path in sorted((COURSE / "src").glob("[0-9][0-9]_*.py")):
        text = path.read_text(encoding="utf-8")
        links[path.stem[:2]] = re.findall(r"\]\(([\w./-]+\.[a-z]{2,5})\)", text)  # files, not URLs
        for target in links[path.stem[:2]]:
            assert (COURSE / target).resolve().is_file(), target
            assert (COURSE / target).resolve().is_relative_to(COURSE), "ships with the course"
    assert "figures/animation_dynamic_step.gif" in links["01"]
    assert "figures/animation_static_runs.gif" in links["03"]


@pytest.mark.parametrize(
    "path", sorted((COURSE / "src").glob("[0-9][0-9]_*.py")), ids=lambda p: p.stem
)
def test_no_lesson_shows_a_picture_by_relative_path(path):
    # JupyterLab puts a markdown cell's HTML in the page before it resolves relative
    # addresses, so the browser first asks for the picture at the wrong address (a 404).
    # Link the file instead, or draw it with code.
    text = path.read_text(encoding="utf-8")
    relative = r"(?![a-z][a-z0-9+.-]*:)"  # no scheme: not https:, not an embedded data:
    assert re.findall(rf"!\[[^\]]*\]\({relative}[^)]+\)|<img\b[^>]*\bsrc=.{relative}", text) == []


def test_a_retry_with_another_mistake_hears_about_that_mistake_first(capsys):
    first = ex.check_inplace_predictions((True, True, True))  # wrong about snippet (2)
    second = ex.check_inplace_predictions((True, False, False))  # now wrong about (3)
    assert "snippet (2)" in first.message and "Still stuck?" not in first.message
    assert "snippet (3)" in second.message and "which ops save which tensors" in second.message
    assert 'ex.reveal("04-2")' in second.message


# -- answers that skip the exercise's point ------------------------------------------------


def toy_model():
    """Lesson 1's model: the leaves (w1, w2, w3), the layers (l1..l4) and the loss."""
    w1, w2, w3 = (ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = ng.ones([2, 2]) * w1
    l2, l3 = l1 + w2, l1 * w3
    l4 = l2 * l3
    return (w1, w2, w3), (l1, l2, l3, l4), l4.mean()


def test_01_values_read_off_the_model_are_refused_as_not_worked_out_by_hand(capsys):
    _, layers, loss = toy_model()
    elements = [t[0, 0] for t in layers]
    assert_teaches(ex.check_forward_values(*elements, loss), "01-1", "work out by hand")

    (w1, w2, w3), (l1, *_), loss = toy_model()
    l1.retain_grad()
    loss.backward()
    # a .grad read in the cell that calls the check (the notebook's form: a cell is
    # top-level code of its own module) is refused; one number with no history alone
    # cannot be told from one typed in
    cell = {"ex": ex, "w1": w1, "w2": w2, "w3": w3, "l1": l1}
    exec(compile("r = ex.check_leaf_grads(w1.grad, w2.grad, w3.grad)", "<cell>", "exec"), cell)
    assert_teaches(cell["r"], "01-2", "worked out by hand")
    exec(compile("r = ex.check_l1_grad(l1.grad[0, 0])", "<cell>", "exec"), cell)
    assert_teaches(cell["r"], "01-3", "worked out by hand")
    assert_teaches(ex.check_l1_grad(l1.grad), "01-3", "not one read off the model")


def test_01_the_whole_tensor_where_one_element_is_asked_is_refused(capsys):
    whole = np.full((2, 2), 40.0)
    assert_teaches(ex.check_forward_values(2, 5, 8, whole, 40), "01-1", "ONE number is asked")
    assert_teaches(ex.check_l1_grad([[7.0, 7.0], [7.0, 7.0]]), "01-3", "ONE number is asked")
    second = ex.check_l1_grad(np.full((2, 2), 7.0))
    assert "chain rule on paper" in second.message


@pytest.mark.parametrize("args", [(28, -2, 10), (28, 8, -2.5), (-20, 8, 10)])
def test_01_2_a_sign_error_is_told_to_check_the_sign(args, capsys):
    assert_teaches(ex.check_leaf_grads(*args), "01-2", "check the sign")


@pytest.mark.parametrize("l1_grad", [-28.0, -2.0, -20.0])
def test_01_3_a_sign_error_is_told_to_check_the_sign(l1_grad, capsys):
    assert_teaches(ex.check_l1_grad(l1_grad), "01-3", "check the sign")


def test_01_3_even_the_negated_answer_is_told_to_check_the_sign(capsys):
    result = ex.check_l1_grad(-7.0)
    assert not result and "check the sign" in result.message


def test_01_3_the_stronger_hint_names_the_steps_not_the_formula(capsys):
    ex.check_l1_grad(2.0)
    second = ex.check_l1_grad(2.0).message
    assert "add the two paths" in second
    assert "l3 + l2 * w3" not in second and "d l2/d l1" not in second


def test_02_2_the_nodes_themselves_are_refused_where_names_are_asked(capsys):
    x, w, b = ng.ones(1), ng.rand(1, requires_grad=True), ng.rand(1, requires_grad=True)
    y = w.mul(x)
    z = y.add(b)
    entries = (z.grad_fn.next_functions, y.grad_fn.next_functions)
    assert_teaches(ex.check_next_functions(*entries), "02-2", "write each node's NAME")
    nodes = ([n for n, _ in entries[0]], [n for n, _ in entries[1]])
    assert_teaches(ex.check_next_functions(*nodes), "02-2", "node objects")


def test_03_2_x_grad_read_after_running_backward_again_is_refused(capsys):
    x = ng.tensor(3.0, requires_grad=True)
    y = x**2
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    assert_teaches(ex.check_accumulated_grad(x.grad), "03-2", "PREDICT the value")


def test_03_3_x_grad_from_running_backward_with_the_gradient_is_refused(capsys):
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(ng.tensor([1.0, 0.1, 0.01]))
    assert_teaches(ex.check_vector_backward(x.grad), "03-3", "worked out by hand")
    assert_teaches(ex.check_vector_backward(list(x.grad)), "03-3", "worked out by hand")


def test_03_4_the_stronger_hint_does_not_write_out_the_derivatives(capsys):
    wrong = lambda x: 2 * x * ng.exp(x)  # noqa: E731
    ex.check_manual_gradient(wrong)
    second = ex.check_manual_gradient(wrong).message
    assert "product rule" in second
    assert "u' = 2x" not in second and "v' = e^x" not in second


def test_04_3_data_is_accepted_as_the_lesson_lists_it_and_the_message_prefers_no_grad(capsys):
    result = ex.check_reset_leaf(reset_data)
    assert result and "prefers no_grad or detach()" in result.message
    assert "prefers" not in ex.check_reset_leaf(reset_no_grad).message


# -- answers that only looked right on the checker's first test values ---------------------


def test_01_numbers_typed_as_text_are_refused(capsys):
    assert_teaches(ex.check_forward_values("2", "5", "8", "40", "40"), "01-1", "not text")
    assert_teaches(ex.check_leaf_grads("28", 8, 10), "01-2", "not text")
    result = ex.check_l1_grad("seven")
    assert_teaches(result, "01-3", "hint: type the number, not text")
    assert "differentiate" not in result.message


def test_01_1_a_stronger_hint_does_not_start_its_sentence_with_code(capsys):
    ex.check_forward_values(2, 5, 8, 40, 10)
    second = ex.check_forward_values(2, 5, 8, 40, 10).message
    assert "Loss =" not in second and "that is l4.mean()" in second


def find_leaves_by_backward(t):  # asks backward which leaves get a .grad
    t.backward(ng.ones(t.shape), retain_graph=True)
    leaves, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == "AccumulateGrad" and node.variable.grad is not None:
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


def find_leaves_detached(t):  # copies of the leaves, not the leaves
    return [leaf.detach() for leaf in find_leaves(t)]


def find_leaves_cloned(t):
    return [leaf.clone() for leaf in find_leaves(t)]


def test_02_3_a_walk_that_runs_backward_is_told_to_follow_next_functions_only(capsys):
    assert_teaches(ex.check_find_leaves(find_leaves_by_backward), "02-3", "only read the graph")


@pytest.mark.parametrize("copies", [find_leaves_detached, find_leaves_cloned])
def test_02_3_copies_of_the_leaves_are_told_to_return_the_leaves_themselves(copies, capsys):
    result = ex.check_find_leaves(copies)
    assert_teaches(result, "02-3", "copies of the leaves")
    assert "AccumulateGrad nodes lead" not in result.message


def test_02_2_name_index_pairs_get_a_hint_about_the_form_not_about_node_objects(capsys):
    pairs = ((("MulBackward0", 0), ("AccumulateGrad", 0)), (("AccumulateGrad", 0), (None, 0)))
    result = ex.check_next_functions(*pairs)
    assert_teaches(result, "02-2", "name alone")
    assert "node objects" not in result.message


@pytest.mark.parametrize("slip", ["MulBackward", "mulbackward0", "Mulbackward0"])
def test_02_2_a_misspelt_name_of_the_right_node_is_told_to_spell_it_exactly(slip, capsys):
    result = ex.check_next_functions([slip, "AccumulateGrad"], ["AccumulateGrad", None])
    assert_teaches(result, "02-2", "is the right one")
    assert "which op made y" not in result.message and "Backward0) is part of it" in result.message


def test_02_2_a_misspelt_accumulategrad_is_told_about_capitals_only(capsys):
    result = ex.check_next_functions(["MulBackward0", "accumulategrad"], ["AccumulateGrad", None])
    assert_teaches(result, "02-2", "the same capitals.")


def test_02_2_one_string_of_names_is_refused_as_not_a_list(capsys):
    result = ex.check_next_functions("MulBackward0, AccumulateGrad", ["AccumulateGrad", None])
    assert_teaches(result, "02-2", "give a list of names")


def test_03_1_a_typed_in_gradient_is_refused_on_another_incoming_gradient(capsys):
    result = ex.check_double_hook(lambda grad: ng.tensor([2.0, 4.0, 6.0]))
    assert_teaches(result, "03-1", "same gradient whatever arrives")


def test_03_1_a_hook_that_loses_the_sign_is_refused(capsys):
    assert_teaches(ex.check_double_hook(lambda grad: 2 * grad.abs()), "03-1", "signs are lost")


def test_03_1_the_hook_is_tried_on_another_shape(capsys):
    def double_three(grad):  # right only for a gradient of three elements
        return grad * ng.tensor([2.0, 2.0, 2.0])

    result = ex.check_double_hook(double_three)
    assert result.status == "fail" and "same shape" in result.message


@pytest.mark.parametrize("answer", [None, "error", "12"])
def test_03_2_no_number_is_told_a_number_is_asked_and_that_the_second_backward_runs(answer, capsys):
    result = ex.check_accumulated_grad(answer)
    assert_teaches(result, "03-2", "a number is asked")
    assert "retain_graph=True" in result.message


def test_03_3_the_right_numbers_in_another_shape_get_a_shape_hint(capsys):
    result = ex.check_vector_backward([[2], [0.4], [0.06]])
    assert_teaches(result, "03-3", "shape of x")
    assert "(3, 1)" in result.message


def test_03_3_numbers_typed_as_text_are_refused(capsys):
    assert_teaches(ex.check_vector_backward(["2", "0.4", "0.06"]), "03-3", "not text")


def f_03_4(x):
    return x**2 * ng.exp(x)


def gradf_central_difference(x, h=1e-5):
    return (f_03_4(x + h) - f_03_4(x - h)) / (2 * h)


def gradf_forward_mode(x):
    import naivegraph.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        dual = fwAD.make_dual(x, ng.ones(x.shape, dtype=x.dtype))
        return fwAD.unpack_dual(f_03_4(dual)).tangent


def gradf_jacfwd(x):
    return ng.func.vmap(ng.func.jacfwd(f_03_4))(x.reshape(-1)).reshape(x.shape)


def gradf_numpy(x):
    a = x.detach().numpy()
    return 2 * a * np.exp(a) + a**2 * np.exp(a)


def test_03_4_a_finite_difference_is_refused_as_close_but_not_exact(capsys):
    assert_teaches(ex.check_manual_gradient(gradf_central_difference), "03-4", "not exact")


@pytest.mark.parametrize("forward_mode", [gradf_forward_mode, gradf_jacfwd])
def test_03_4_forward_mode_autodiff_is_refused_as_autograd(forward_mode, capsys):
    from naivegraph.dynamic import forward

    assert_teaches(ex.check_manual_gradient(forward_mode), "03-4", "forward-mode autodiff")
    assert forward.dual.level is None  # no dual level left open


def test_03_4_forward_mode_left_open_by_a_crash_is_closed(capsys):
    import naivegraph.autograd.forward_ad as fwAD
    from naivegraph.dynamic import forward

    def crashes(x):
        fwAD.enter_dual_level()
        raise ValueError("boom")

    assert_teaches(ex.check_manual_gradient(crashes), "03-4", "forward-mode autodiff")
    assert forward.dual.level is None


def test_03_4_a_numpy_result_is_refused_saying_a_tensor_is_expected(capsys):
    result = ex.check_manual_gradient(gradf_numpy)
    assert_teaches(result, "03-4", "must return a tensor (ng.Tensor)")
    assert "numpy.ndarray" in result.message


def test_04_1_versions_must_be_whole_numbers_not_text(capsys):
    assert_teaches(ex.check_versions([0, 1.9, 2, 2, 3]), "04-1", "whole number")
    assert_teaches(ex.check_versions("01223"), "04-1", "give a list of numbers")
    assert_teaches(ex.check_versions(["0", "1", "2", "2", "3"]), "04-1", "give a list of numbers")
    assert ex.check_versions([0.0, 1.0, 2.0, 2.0, np.int64(3)])  # integral floats are numbers


def test_04_2_too_few_predictions_are_counted_per_snippet(capsys):
    result = ex.check_inplace_predictions((True, False))
    assert_teaches(result, "04-2", "one per snippet")
    assert "tensor" not in result.message


def reset_slice_from_one(a):
    a.detach()[1:] = 10.0
    return a


def reset_slice_one_to_four(a):
    with ng.no_grad():
        a[1:4] = 10.0
    return a


def reset_clamp(a):
    with ng.no_grad():
        a.clamp_(min=10.0)
    return a


def reset_fill_with_max(a):
    with ng.no_grad():
        a.fill_(a.max().item())
    return a


@pytest.mark.parametrize(
    ("reset", "phrase"),
    [
        (reset_slice_from_one, "missed part of `a`"),
        (reset_slice_one_to_four, "missed part of `a`"),
        (reset_clamp, "above 10 kept their values"),
        (reset_fill_with_max, "must become 10"),
    ],
)
def test_04_3_a_reset_that_misses_or_computes_elements_is_refused(reset, phrase, capsys):
    assert_teaches(ex.check_reset_leaf(reset), "04-3", phrase)


def test_04_3_the_reset_is_tried_on_a_leaf_of_another_shape(capsys):
    def reset_four(a):  # right for the four-element leaf only
        a.detach()[:4] = 10.0
        return a

    assert not ex.check_reset_leaf(reset_four)


def setup_lr_zero(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(model.fc.parameters(), lr=0.0)


def setup_two_layer_head(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Sequential(ng.nn.Linear(8, 16), ng.nn.ReLU(), ng.nn.Linear(16, n))
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def setup_two_layer_head_fixed(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Sequential(ng.nn.Linear(8, 16), ng.nn.ReLU(), ng.nn.Linear(16, 3))
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def test_05_2_an_optimizer_that_does_not_move_the_head_is_refused(capsys):
    assert_teaches(ex.check_finetune_setup(setup_lr_zero), "05-2", "left the new fc exactly")


def test_05_2_a_head_of_several_layers_is_refused_for_its_layers(capsys):
    assert_teaches(ex.check_finetune_setup(setup_two_layer_head), "05-2", "2 linear layers")
    assert_teaches(ex.check_finetune_setup(setup_two_layer_head_fixed), "05-2", "2 linear layers")


def predict_back_to_train(model, x):
    model.eval()
    with ng.no_grad():
        out = model(x)
    model.train()
    return out


def predict_restores_the_mode(model, x):  # right: eval for the call, the old mode after
    was = model.training
    model.eval()
    with ng.no_grad():
        out = model(x)
    model.train(was)
    return out


def predict_grad_back_on(model, x):
    ng.set_grad_enabled(False)
    out = model(x)
    ng.set_grad_enabled(True)
    return out


def predict_set_grad_enabled_restored(model, x):  # right: the old grad mode after
    was = ng.is_grad_enabled()
    ng.set_grad_enabled(False)
    try:
        return model(x)
    finally:
        ng.set_grad_enabled(was)


def predict_freeze_then_unfreeze(model, x):
    for p in model.parameters():
        p.requires_grad = False
    out = model(x)
    for p in model.parameters():
        p.requires_grad = True
    return out


def predict_freeze_and_restore_flags(model, x):
    flags = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad = False
    out = model(x)
    for p, flag in zip(model.parameters(), flags):
        p.requires_grad = flag
    return out


def test_05_3_an_eval_mode_model_must_stay_in_eval_mode(capsys):
    result = ex.check_inference(predict_back_to_train)
    assert_teaches(result, "05-3", "leaves it in training mode")
    assert ex.check_inference(predict_restores_the_mode)


def test_05_3_grad_mode_off_before_the_call_must_stay_off(capsys):
    result = ex.check_inference(predict_grad_back_on)
    assert_teaches(result, "05-3", "leaves it ON")
    assert ex.check_inference(predict_set_grad_enabled_restored)
    with ng.no_grad():  # the checker restores the caller's mode whatever the answer did
        ex.check_inference(predict_ok)
    assert ng.is_grad_enabled()


def test_05_3_freezing_for_the_call_is_told_it_unfreezes_a_frozen_parameter(capsys):
    result = ex.check_inference(predict_freeze_then_unfreeze)
    assert_teaches(result, "05-3", "unfreezes what the caller had frozen")
    assert "detached after the forward pass" not in result.message


def test_05_3_freezing_with_flags_restored_still_records_an_input_that_requires_grad(capsys):
    result = ex.check_inference(predict_freeze_and_restore_flags)
    assert_teaches(result, "05-3", "input x that requires grad")
    assert "detached after the forward pass" not in result.message


# -- answers once accepted, or told about another mistake than theirs ------------------


def test_01_one_number_typed_as_a_0d_tensor_counts_as_the_number_a_list_of_one_does_not(capsys):
    assert ex.check_forward_values(2, ng.tensor(5.0), 8, 40, 40).passed
    assert_teaches(ex.check_forward_values(2, [5.0], 8, 40, 40), "01-1", "inside a list")
    assert_teaches(ex.check_l1_grad(ng.tensor(3.0)), "01-3", "product rule")
    assert_teaches(ex.check_l1_grad([3.0]), "01-3", "inside a list")


def test_02_2_the_op_alone_is_told_to_write_its_node_s_name(capsys):
    for op in ("Mul", "mul", "Mul()"):
        TRIES.clear()
        result = ex.check_next_functions([op, "AccumulateGrad"], ["AccumulateGrad", None])
        assert_teaches(result, "02-2", "the op you name for y is the right one")
        assert "which op made y" not in result.message and "MulBackward" not in result.message


def _walk_merging(key):
    """The lesson's walk, that keeps one leaf per ``key`` instead of per tensor."""

    def find(t):
        leaves, seen, stack = [], set(), [t.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            v = getattr(node, "variable", None)
            if node.name() == "AccumulateGrad" and not any(key(v, k) for k in leaves):
                leaves.append(v)
            stack.extend(fn for fn, _ in node.next_functions)
        return leaves

    return find


find_leaves_by_value = _walk_merging(
    lambda v, k: tuple(v.shape) == tuple(k.shape) and float(v.sum()) == float(k.sum())
)
find_leaves_by_equality = _walk_merging(
    lambda v, k: tuple(v.shape) == tuple(k.shape) and bool((v == k).all())
)
find_leaves_by_shape = _walk_merging(lambda v, k: tuple(v.shape) == tuple(k.shape))


@pytest.mark.parametrize(
    "merging", [find_leaves_by_value, find_leaves_by_equality, find_leaves_by_shape]
)
def test_02_3_leaves_merged_by_value_or_shape_are_told_to_compare_identity(merging, capsys):
    result = ex.check_find_leaves(merging)
    assert_teaches(result, "02-3", "merged distinct leaves that look alike")
    assert "keep walking" not in result.message


def test_02_3_a_walk_that_stops_early_is_still_told_leaves_are_missing(capsys):
    result = ex.check_find_leaves(find_leaves_direct)
    assert_teaches(result, "02-3", "keep walking")
    assert "look alike" not in result.message


def test_02_3_leaves_of_another_graph_are_named_as_such(capsys):
    w, b = ng.tensor(1.0, requires_grad=True), ng.tensor(2.0, requires_grad=True)
    result = ex.check_find_leaves(lambda t: [w, b])
    assert_teaches(result, "02-3", "not leaves of this graph")
    assert "not a leaf" not in result.message and "a leaf of another graph" in result.message


def double_if_positive(grad):
    return grad * 2 if float(grad.sum()) > 0 else grad


def double_elements_above_zero(grad):
    return ng.where(grad > 0, grad * 2, grad)


def double_first_call_only():
    calls = []

    def hook(grad):
        calls.append(grad)
        return grad * 2 if len(calls) == 1 else grad

    return hook


@pytest.mark.parametrize(
    "make", [lambda: double_if_positive, lambda: double_elements_above_zero, double_first_call_only]
)
def test_03_1_a_hook_that_doubles_some_gradients_only_is_told_to_double_every_one(make, capsys):
    result = ex.check_double_hook(make())
    assert_teaches(result, "03-1", "doubled some gradients but not others")
    assert "return the NEW gradient" not in result.message


def gradf_in_place(x):  # written into the caller's x
    x.mul_(x + 2)
    return x * ng.exp(x)


def gradf_in_place_right_values(x):
    e = ng.exp(x)
    x.mul_(x + 2)
    return x * e


def gradf_through_numpy(x):
    v = x.numpy()
    return ng.tensor(v * (v + 2) * np.exp(v))


def gradf_through_detached_numpy(x):
    v = x.detach().numpy()
    return ng.tensor(v * (v + 2) * np.exp(v), dtype=x.dtype)


@pytest.mark.parametrize("writes", [gradf_in_place, gradf_in_place_right_values])
def test_03_4_a_gradf_that_changes_its_input_in_place_is_refused(writes, capsys):
    assert_teaches(ex.check_manual_gradient(writes), "03-4", "changed its input in place")


@pytest.mark.parametrize("outside", [gradf_through_numpy, gradf_through_detached_numpy])
def test_03_4_a_result_computed_with_numpy_is_refused(outside, capsys):
    assert_teaches(ex.check_manual_gradient(outside), "03-4", "not numpy")


def test_03_4_tensor_methods_and_functions_of_naivegraph_are_accepted(capsys):
    assert ex.check_manual_gradient(lambda x: ng.mul(x.pow(2) + x.mul(2), x.exp()))
    assert ex.check_manual_gradient(lambda x: x * (x + 2) * ng.exp(x))


def test_03_4_the_evidence_is_a_point_where_the_answer_is_wrong(capsys):
    result = ex.check_manual_gradient(lambda x: (x**2 + 2) * ng.exp(x))  # right at x = 1
    assert_teaches(result, "03-4", "gradf(0) = 2")
    assert "gradf(1)" not in result.message


def test_03_4_a_missing_term_of_the_product_rule_is_a_nudge_not_the_term(capsys):
    result = ex.check_manual_gradient(lambda x: 2 * x * ng.exp(x))
    assert_teaches(result, "03-4", "which one is missing?")
    assert "(e^x)'" not in result.message and "x^2" not in result.message


def derivatives_zeroing_x_grad(f, x):  # calls f, but returns x.grad, zeroed afterwards
    f(x).backward(create_graph=True)
    first = x.grad
    x.grad.zero_()
    first.backward()
    return first, x.grad


def derivatives_scaled(f, x):  # calls f, takes the right derivative, then scales it
    first, second = derivatives(f, x)
    return 2 * first, second


def test_03_5_a_first_derivative_changed_by_a_later_backward_is_told_so(capsys):
    result = ex.check_second_derivative(derivatives_zeroing_x_grad)
    assert_teaches(result, "03-5", "is x.grad itself")
    assert "formula of your own" not in result.message


def test_03_5_a_function_that_calls_f_is_not_told_to_call_it(capsys):
    result = ex.check_second_derivative(derivatives_scaled)
    assert_teaches(result, "03-5", "first derivative is wrong")
    assert "call f" not in result.message and "formula of" not in result.message
    never = ex.check_second_derivative(lambda f, x: (27.0, 18.0))
    assert "never calls f" in never.message


def test_04_1_all_zeros_is_told_nothing_was_counted(capsys):
    result = ex.check_versions([0, 0, 0, 0, 0])
    assert_teaches(result, "04-1", "nothing was counted")
    assert "not a's" in result.message and "b[0] = 1000 writes" not in result.message


def reset_data_float64(a):
    a.data = ng.tensor(np.full(tuple(a.shape), 10.0))
    return a


def reset_data_other_shape(a):
    a.data = ng.full((1, *a.shape), 10.0)
    return a


def reset_data_same_kind(a):  # unusual but right: a new tensor of a's shape and dtype
    a.data = ng.full(tuple(a.shape), 10.0, dtype=a.dtype)
    return a


def test_04_3_a_reset_that_changes_the_dtype_is_refused(capsys):
    result = ex.check_reset_leaf(reset_data_float64)
    assert_teaches(result, "04-3", "changed the dtype of `a` from float32 to float64")
    assert ex.check_reset_leaf(reset_data_same_kind)


def test_04_3_a_reset_that_changes_the_shape_is_told_the_shape_changed(capsys):
    result = ex.check_reset_leaf(reset_data_other_shape)
    assert_teaches(result, "04-3", "changed the shape of `a` from (4,) to (1, 4)")
    assert "must become 10" not in result.message


def setup_maximize(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, maximize=True)


def setup_adam(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.Adam(model.fc.parameters())


def setup_weight_only(model, n):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n)
    return ng.optim.SGD([model.fc.weight], lr=0.1, momentum=0.9)


def test_05_2_an_optimizer_that_climbs_the_loss_is_refused(capsys):
    assert_teaches(ex.check_finetune_setup(setup_maximize), "05-2", "UP the gradient")


def test_05_2_another_optimizer_than_sgd_is_refused_naming_sgd(capsys):
    result = ex.check_finetune_setup(setup_adam)
    assert_teaches(result, "05-2", "asks for an SGD optimizer, and yours is Adam")


def test_05_2_a_forgotten_bias_is_named_and_counted_in_good_grammar(capsys):
    result = ex.check_finetune_setup(setup_weight_only)
    assert_teaches(result, "05-2", "a parameter of the new layer is missing")
    assert "(bias)" in result.message and "1 tensor of" in result.message
    assert "1 tensors" not in result.message


def predict_requires_grad_afterwards(model, x):
    with ng.no_grad():
        out = model(x)
    return out.requires_grad_()


def test_05_3_an_output_switched_to_require_grad_is_refused(capsys):
    result = ex.check_inference(predict_requires_grad_afterwards)
    assert_teaches(result, "05-3", "your output requires grad")


def test_05_the_lesson_says_frozen_parameters_stop_recording_only_without_such_inputs():
    text = (COURSE / "src" / "05_excluding_subgraphs.py").read_text(encoding="utf-8")
    assert "would also stop the recording" not in text
    assert "only when no\n# input requires grad" in text
    model = ng.nn.Linear(2, 2)
    model.requires_grad_(False)
    assert model(ng.randn(3, 2, requires_grad=True)).grad_fn is not None
