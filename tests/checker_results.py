"""Reading what an exercise checker returned: that it refused, what its hint says, and
that the hint gives none of the answer away."""

from __future__ import annotations

from naivegraph.lessons import checking


def outcome(capsys, checker, *args):
    """The checker's result, after checking it printed exactly its message."""
    result = checker(*args)
    printed = capsys.readouterr().out
    assert printed.strip() == result.message
    return result


def rejected_on_first_try(capsys, checker, *args, says: str):
    """The result of a first try that fails with a hint containing ``says``."""
    checking.TRIES.clear()  # each case is a first try: its first hint
    return refused(outcome(capsys, checker, *args), says)


def refused(result, says: str):
    """``result`` itself, after checking it is a failure whose hint contains ``says``."""
    assert result.status == "fail", result.message
    assert says in result.message, result.message
    return result


def never_states(result, *values: str):
    """Check the message of ``result`` contains none of ``values``."""
    for value in values:
        assert value not in result.message, (value, result.message)


def rejection_message(result, *secrets: str) -> str:
    """The message of a rejection, after checking it gives none of ``secrets`` away."""
    assert result.status == "fail", result.message
    for secret in secrets:
        assert secret not in result.message, (secret, result.message)
    return result.message
