"""Checkers of lesson 08: build your own."""

from __future__ import annotations

import math

import numpy as np

from ..checking import (
    Result,
    as_array,
    call_answer,
    checker,
    close,
    correct,
    failed,
    is_blank,
    not_done,
    show,
    wrong,
)


@checker("08-1")
def check_derivative_table(table) -> Result:
    """Rows of the scalar engine's table: name -> (function, derivative)."""
    ex = "08-1"
    if is_blank(table) or not isinstance(table, dict):
        return not_done(ex) if is_blank(table) else failed(ex, "expected a dict.")
    points = [(0.7, 1.9), (-1.3, 0.4), (2.1, -0.6)]
    for name in ("mul", "div", "sin", "exp"):
        row = table.get(name)
        if is_blank(row) or row is None:
            return not_done(ex, f"(the row {name!r} is still blank.)")
        fn, dfn = row
        if is_blank(fn) or is_blank(dfn):
            return not_done(ex, f"(the row {name!r} is still blank.)")
        binary = name in ("mul", "div")
        for a, b in points:
            args = (a, b) if binary else (a,)
            ok, value = call_answer(ex, fn, *args)
            if not ok:
                return value
            want_value = {"mul": a * b, "div": a / b, "sin": math.sin(a), "exp": math.exp(a)}[name]
            if value is None or value is Ellipsis:
                return not_done(ex, f"(the function of {name!r} returned None.)")
            if not close(value, want_value):
                return wrong(
                    ex,
                    f"{name}{args} = {want_value:.4g}",
                    show(value),
                    f"the first entry of the {name!r} row computes the value.",
                )
            for i in range(len(args)):
                ok, d = call_answer(ex, dfn, *args, i)
                if not ok:
                    return d
                if d is None or d is Ellipsis:
                    return not_done(ex, f"(the derivative of {name!r} returned None.)")
                eps = 1e-6
                up = list(args)
                dn = list(args)
                up[i] += eps
                dn[i] -= eps
                numeric = (fn(*up) - fn(*dn)) / (2 * eps)
                if not close(d, numeric, atol=1e-5, rtol=1e-4):
                    return wrong(
                        ex,
                        f"d {name}/d arg{i} at {args} = {numeric:.4g}",
                        show(d),
                        f"derivative(*args, i) is the partial derivative with respect "
                        f"to argument i (0 = first); check the {name!r} row.",
                    )
    return correct(ex, "every row's derivative matches finite differences.")


@checker("08-2")
def check_jacobian(J) -> Result:
    """Jacobian of (x*y, x + sin y, exp(x) * y) at (x, y) = (1, 2)."""
    ex = "08-2"
    if is_blank(J):
        return not_done(ex)
    x, y = 1.0, 2.0
    want = np.array([[y, x], [1.0, math.cos(y)], [math.exp(x) * y, math.exp(x)]])
    try:
        got = as_array(J)
    except Exception:  # any error: reported to the learner
        return failed(ex, "expected a 3x2 array (rows: outputs, columns: inputs).")
    if got.shape == (2, 3) and np.allclose(got, want.T, atol=1e-6):
        return wrong(
            ex,
            "a 3x2 matrix (one row per output)",
            "its transpose",
            "row i holds the gradient of output i: J[i, j] = d f_i / d x_j.",
        )
    if got.shape != (3, 2):
        return wrong(
            ex, "shape (3, 2)", f"shape {got.shape}", "one row per output, one column per input."
        )
    if not np.allclose(got, want, atol=1e-6):
        bad = np.argwhere(~np.isclose(got, want, atol=1e-6))[0]
        return wrong(
            ex,
            f"J[{bad[0]}, {bad[1]}] = {want[tuple(bad)]:.4f}",
            f"{got[tuple(bad)]:.4f}",
            "run one backward per output and reset the "
            "input grads (and free or retain the graph) between runs.",
        )
    return correct(ex, "one backward pass per output gives one row of the Jacobian.")


@checker("08-3")
def check_minimum(point) -> Result:
    """Where gradient descent on f(x, y) = (x - 1)**2 + 2 * (y + 2)**2 + x * y / 2 ends."""
    ex = "08-3"
    if is_blank(point):
        return not_done(ex)
    try:
        x, y = point
    except (TypeError, ValueError):
        return failed(ex, f"expected a pair (x, y), got {show(point)}.")
    # grad: 2(x-1) + y/2 = 0, 4(y+2) + x/2 = 0
    A = np.array([[2.0, 0.5], [0.5, 4.0]])
    b = np.array([2.0, -8.0])
    want = np.linalg.solve(A, b)
    got = np.array([float(as_array(x)), float(as_array(y))])
    if np.allclose(got, want, atol=1e-3):
        return correct(ex, f"minimum at ({want[0]:.4f}, {want[1]:.4f}).")
    if np.allclose(got, [1.0, -2.0], atol=1e-3):
        hint = "(1, -2) ignores the x*y/2 coupling term; run the descent on the full f."
    elif np.any(~np.isfinite(got)) or np.abs(got).max() > 1e3:
        hint = "the iterates blew up: the learning rate is too large (try 0.1)."
    else:
        hint = "take more steps, or a larger (but stable) learning rate; stop when the grads ~ 0."
    return wrong(ex, f"({want[0]:.4f}, {want[1]:.4f})", f"({got[0]:.4f}, {got[1]:.4f})", hint)
