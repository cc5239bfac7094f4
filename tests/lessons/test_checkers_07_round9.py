"""Lesson 7, ninth round: 07-1 refuses a result converted to another dtype either way
and a mask multiplied in (nan at infinity), and names a Python `if` on .any() / .all(),
a result wrapped in a tuple or a list and ns.cond for what they are; an error is said
to name what to use only when it does; 07-2 names None and a function used under its
own name.  Hints never give the rule's code or the predicted numbers away, and right
answers are still accepted."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

RULE_SECRETS = ("x * 2, x * -1", "ng.where(", "x > 0,")


def rule(x):
    return ng.where(x > 0, x * 2, x * -1)


# ------------------------------------------------------------------------- 07-1
@pytest.mark.parametrize(
    "f",
    [
        lambda x: rule(x).double(),
        lambda x: rule(x).to(ng.float64),
        lambda x: rule(x.double()),
    ],
    ids=["double", "to float64", "x converted first"],
)
def test_07_1_a_result_converted_up_to_float64_is_refused(capsys, f):
    result = rejected_on_first_try(
        capsys, ex.check_where_fix, f, says="computes in float64 where x is float32"
    )
    assert "Keep x's dtype, the result has the dtype of x" in result.message
    assert "you gave float64 results for a float32 x" in result.message
    never_states(result, *RULE_SECRETS)


def test_07_1_a_result_converted_down_to_float32_gets_the_same_hint(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: rule(x).float(),
        says="computes in float32 where x is float64",
    )
    assert "Keep x's dtype, the result has the dtype of x" in result.message
    never_states(result, *RULE_SECRETS)


@pytest.mark.parametrize(
    "f",
    [
        lambda x: (lambda m: m * x * 2 + (1 - m) * x * -1)((x > 0).float()),
        lambda x: (x > 0).float() * x * 2 + (x <= 0).float() * x * -1,
        lambda x: x * 2 * (x > 0) + x * -1 * (x <= 0),
        lambda x: (x > 0).type_as(x) * 3 * x - x,
        lambda x: 0.5 * x + 1.5 * ng.abs(x),
    ],
    ids=["float mask", "two float masks", "bool masks", "type_as", "abs formula"],
)
def test_07_1_a_mask_multiplied_in_is_refused_at_infinity(capsys, f):
    result = rejected_on_first_try(
        capsys, ex.check_where_fix, f, says="0 * inf and inf - inf are nan"
    )
    assert "right for finite entries, but traced at x = [inf, -inf]" in result.message
    assert "a mask multiplied in" in result.message
    never_states(result, *RULE_SECRETS)


@pytest.mark.parametrize(
    "f",
    [
        rule,
        lambda x: (x * 2).where(x > 0, x * -1),
        lambda x: ng.where(x >= 0, x * 2, x * -1),
        lambda x: x * ng.where(x > 0, 2.0, -1.0),
        lambda x: ng.maximum(x * 2, x * -1),
    ],
    ids=["ng.where", "Tensor.where", "x >= 0", "factor chosen", "maximum"],
)
def test_07_1_the_rule_keeping_infinity_and_nan_is_accepted(capsys, f):
    assert outcome(capsys, ex.check_where_fix, f).status == "pass"


@pytest.mark.parametrize("method", ["any", "all"])
def test_07_1_a_python_if_on_any_or_all_is_named_as_an_if(capsys, method):
    def f(x):
        return x * 2 if getattr(x > 0, method)() else x * -1

    result = rejected_on_first_try(
        capsys, ex.check_where_fix, f, says=f"decides with a Python `if` on .{method}() of x"
    )
    assert "The rule chooses per element" in result.message
    assert "The error says what to use instead" not in result.message
    assert "no attribute" not in result.message
    never_states(result, *RULE_SECRETS)


@pytest.mark.parametrize(
    "f, name, kind",
    [
        (lambda x: rule(x).detach(), "detach", "a method"),
        (lambda x: rule(x.data), "data", "an attribute"),
        (lambda x: x.mul_(2), "mul_", "an in-place method"),
        (lambda x: rule(x) * x.numel() / x.numel(), "numel", "a method"),
    ],
)
def test_07_1_an_error_that_names_no_remedy_is_not_said_to(capsys, f, name, kind):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        f,
        says=f"uses .{name}, {kind} of tensors that a traced graph node does not have",
    )
    assert "The error says what to use instead" not in result.message
    assert (
        f"The error:\nAttributeError: 'Placeholder' object has no attribute '{name}'"
        in (result.message)
        or f"no attribute '{name}'" in result.message
    )
    never_states(result, *RULE_SECRETS)


def test_07_1_an_error_that_names_what_to_use_is_still_said_to(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: x * 2 if x.sum() > 0 else x * -1,
        says="The error says what to use instead",
    )
    assert "a Python `if` needs a value" in result.message


@pytest.mark.parametrize(
    "f, kind, count",
    [
        (lambda x: (rule(x),), "tuple", "1 value"),
        (lambda x: [rule(x)], "list", "1 value"),
        (lambda x: (rule(x), x), "tuple", "2 values"),
    ],
)
def test_07_1_a_result_wrapped_in_a_tuple_or_list_is_named(capsys, f, kind, count):
    result = rejected_on_first_try(
        capsys, ex.check_where_fix, f, says=f"your function returns a {kind} of {count}"
    )
    assert "return the tensor alone" in result.message
    assert "reduction" not in result.message
    never_states(result, *RULE_SECRETS)


def test_07_1_ns_cond_is_told_it_picks_one_branch_for_the_whole_tensor(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_where_fix,
        lambda x: ns.cond(x.sum() > 0, lambda: x * 2, lambda: x * -1),
        says="ns.cond picks one branch for the whole tensor",
    )
    assert "an op of static mode" in result.message
    assert "needs a boolean node" not in result.message
    never_states(result, *RULE_SECRETS)


# ------------------------------------------------------------------------- 07-2
@pytest.mark.parametrize(
    "traced, eager, says",
    [
        (None, [10.0, 20.0], "traced_result is None"),
        ([2.0, 4.0], None, "eager_result is None"),
        (None, None, "traced_result and eager_result are None"),
    ],
)
def test_07_2_none_is_named_as_none(capsys, traced, eager, says):
    result = rejected_on_first_try(capsys, ex.check_trace_pitfall, traced, eager, says=says)
    assert "nan" not in result.message
    never_states(result, "[2, 4]", "[10, 20]", "2.0, 4.0", "10.0, 20.0")


def test_07_2_right_predictions_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_trace_pitfall, [2, 4], [10.0, 20.0]).status == "pass"


@pytest.fixture
def shell():
    """A notebook shell whose cells the checker can read, as in Jupyter."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    sh = InteractiveShell.instance(config=config)
    sh.run_cell(
        "import numpy as np\nimport naivegraph as ng\nimport naivegraph.static as ns\n"
        "from naivegraph.lessons import exercises as ex\n"
        "SCALE = 2.0\ndef scaled(x):\n    return x * SCALE\n"
        "traced = ns.trace(scaled, np.ones(2))\n",
        store_history=True,
    )
    yield sh
    InteractiveShell.clear_instance()


def test_07_2_a_function_traced_again_under_its_own_name_is_not_said_renamed(shell):
    checking.TRIES.clear()
    shell.run_cell(
        "SCALE = 10.0\ntraced_result = ns.trace(scaled, np.ones(2))(np.array([1.0, 2.0]))"
        ".tolist()\neager_result = [10.0, 20.0]\n"
        "result = ex.check_trace_pitfall(traced_result, eager_result)\n",
        store_history=True,
    )
    result = shell.user_ns["result"]
    assert result.status == "fail"
    assert "your answer cell uses scaled (or its graph)" in result.message
    assert "under another name" not in result.message
