"""``ng.autograd.functional`` against ``torch.autograd.functional`` (torch 2.13 as oracle):
vjp, jvp, vhp, hvp, jacobian, hessian -- values, the exact return structure (a Tensor
or tuples), whether results carry history, and the errors."""

from __future__ import annotations

import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")

# torch's forward-mode jacobian (vectorize=True) scripts a helper with torch.jit, which
# torch itself deprecates: the oracle's own warning, not naivegraph's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


def structure(value):
    """A result in comparable form: tuples kept, tensors as shape, values, history."""
    if isinstance(value, tuple):
        return tuple(structure(v) for v in value)
    if isinstance(value, list):  # torch's forward-mode jacobian returns lists inside
        return ["list"] + [structure(v) for v in value]
    if isinstance(value, (ng.Tensor, torch.Tensor)):
        values = [round(v, 9) for v in value.detach().reshape(-1).tolist()]
        return ("T", tuple(value.shape), values, value.requires_grad)
    return value


def t(lib, values):
    return lib.tensor(values, dtype=lib.float64)


# Each case: (function of lib -> the function to differentiate, inputs, v for vjp, v for jvp)
def cube_sum(lib):
    return lambda x: (x**3).sum()


def square(lib):
    return lambda x: x**2


def mixed(lib):
    return lambda x, y: (x * y.sum() + y[0].exp(), (x**2).sum())


def pair_scalar(lib):
    return lambda x, y: (x**2 * y.sum()).sum() + y.sin().sum()


def constant(lib):
    return lambda x: t(lib, [1.0, 2.0]) * 1.0  # does not depend on x


def run(lib, name, *args, **kw):
    return getattr(lib.autograd.functional, name)(*args, **kw)


def inputs_for(lib, case):
    return {
        "cube_sum": t(lib, [1.0, 2.0]),
        "square": t(lib, [1.0, -2.0, 3.0]),
        "mixed": (t(lib, [1.0, 2.0]), t(lib, [0.5, -1.0, 2.0])),
        "pair_scalar": (t(lib, [1.0, 2.0]), t(lib, [0.5, -1.0])),
        "constant": t(lib, [3.0, 4.0]),
    }[case]


FUNCS = {
    "cube_sum": cube_sum,
    "square": square,
    "mixed": mixed,
    "pair_scalar": pair_scalar,
    "constant": constant,
}


def v_like(lib, value, scale=1.0):
    """A vector shaped like ``value`` (a tensor or a tuple of tensors)."""
    if isinstance(value, tuple):
        return tuple(v_like(lib, v, scale + i) for i, v in enumerate(value))
    n = value.numel()
    return t(lib, [scale * (k + 1) / 2 for k in range(n)]).reshape(tuple(value.shape))


def both(program):
    return structure(program(ng)), structure(program(torch))


def assert_same(program):
    ours, theirs = both(program)
    assert ours == theirs


# -- vjp / jvp ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["square", "mixed", "constant"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_matches_torch(case, create_graph):
    def program(lib):
        f, xs = FUNCS[case](lib), inputs_for(lib, case)
        with lib.enable_grad():
            out = f(*xs) if isinstance(xs, tuple) else f(xs)
        return run(lib, "vjp", f, xs, v_like(lib, out), create_graph=create_graph)

    assert_same(program)


def test_vjp_without_v_for_a_scalar_output():
    assert_same(lambda lib: run(lib, "vjp", cube_sum(lib), inputs_for(lib, "cube_sum")))


@pytest.mark.parametrize("case", ["square", "mixed", "constant", "cube_sum"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp_matches_torch(case, create_graph):
    def program(lib):
        xs = inputs_for(lib, case)
        return run(lib, "jvp", FUNCS[case](lib), xs, v_like(lib, xs), create_graph=create_graph)

    assert_same(program)


def test_jvp_without_v_for_a_single_element_input():
    assert_same(lambda lib: run(lib, "jvp", lambda x: x * 3, t(lib, [2.0])))


def test_products_on_inputs_that_require_grad_with_create_graph_keep_history():
    def program(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        _, g = run(lib, "vjp", lambda x: (x**3).sum(), x, create_graph=True)
        (second,) = lib.autograd.grad(g.sum(), x)
        return g, second

    assert_same(program)


# -- vhp / hvp ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["vhp", "hvp"])
@pytest.mark.parametrize("case", ["cube_sum", "pair_scalar"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_vector_products_match_torch(name, case, create_graph):
    def program(lib):
        xs = inputs_for(lib, case)
        return run(lib, name, FUNCS[case](lib), xs, v_like(lib, xs), create_graph=create_graph)

    assert_same(program)


def test_hessian_vector_product_of_a_linear_function_is_zero():
    assert_same(
        lambda lib: run(lib, "hvp", lambda x: x.sum() * 2, t(lib, [1.0, 2.0]), t(lib, [1.0, 1.0]))
    )


# -- jacobian / hessian ------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["square", "mixed", "constant", "cube_sum"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_matches_torch(case, create_graph, vectorize):
    def program(lib):
        xs = inputs_for(lib, case)
        return run(
            lib, "jacobian", FUNCS[case](lib), xs, create_graph=create_graph, vectorize=vectorize
        )

    assert_same(program)


@pytest.mark.parametrize("case", ["square", "mixed", "cube_sum"])
def test_forward_mode_jacobian_matches_torch(case):
    def program(lib):
        xs = inputs_for(lib, case)
        return run(lib, "jacobian", FUNCS[case](lib), xs, vectorize=True, strategy="forward-mode")

    assert_same(program)


@pytest.mark.parametrize("case", ["cube_sum", "pair_scalar"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_matches_torch(case, create_graph):
    def program(lib):
        return run(
            lib, "hessian", FUNCS[case](lib), inputs_for(lib, case), create_graph=create_graph
        )

    assert_same(program)


@pytest.mark.parametrize("case", ["cube_sum", "pair_scalar"])
def test_hessian_with_forward_mode_outer_jacobian_matches_torch(case):
    def program(lib):
        return run(
            lib,
            "hessian",
            FUNCS[case](lib),
            inputs_for(lib, case),
            vectorize=True,
            outer_jacobian_strategy="forward-mode",
        )

    assert_same(program)


def test_jacobian_of_inputs_that_require_grad_with_create_graph_is_differentiable():
    def program(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        jac = run(lib, "jacobian", lambda x: x**3, x, create_graph=True)
        (second,) = lib.autograd.grad(jac.sum(), x)
        return jac, second

    assert_same(program)


# -- errors ------------------------------------------------------------------------------------


def outcome(program):
    try:
        program()
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return type(error).__name__, str(error)
    return "ok", ""


ERRORS = {
    "input not a tensor": (
        lambda lib: run(lib, "vjp", lambda x: x, [1.0, 2.0]),
        "must be either a Tensor or a tuple of Tensors",
    ),
    "tuple entry not a tensor": (
        lambda lib: run(lib, "jacobian", lambda x, y: x, (t(lib, [1.0]), 2.0)),
        "value at index 1 has type",
    ),
    "output not a tensor": (
        lambda lib: run(lib, "jacobian", lambda x: 3.0, t(lib, [1.0])),
        "outputs of the user-provided function given to jacobian must be",
    ),
    "v of the wrong size": (
        lambda lib: run(lib, "vjp", lambda x: x * 2, t(lib, [1.0, 2.0]), t(lib, [1.0])),
        "v has invalid size",
    ),
    "v tuple of the wrong length": (
        lambda lib: run(
            lib, "jvp", lambda x, y: x * y, (t(lib, [1.0]), t(lib, [2.0])), (t(lib, [1.0]),)
        ),
        "v is a tuple of invalid length: should be 2 but got 1.",
    ),
    "v needed for a vector output": (
        lambda lib: run(lib, "vjp", lambda x: x * 2, t(lib, [1.0, 2.0])),
        "The vector v can only be None if the user-provided function returns a single Tensor",
    ),
    "v needed for a vector input": (
        lambda lib: run(lib, "hvp", lambda x: x.sum(), t(lib, [1.0, 2.0])),
        "The vector v can only be None if the input to the user-provided function",
    ),
    "hvp of a vector function": (
        lambda lib: run(lib, "hvp", lambda x: x * 2, t(lib, [1.0, 2.0]), t(lib, [1.0, 1.0])),
        "The Tensor returned by the function given to hvp should contain a single element",
    ),
    "vhp of a tuple function": (
        lambda lib: run(lib, "vhp", lambda x: (x.sum(),), t(lib, [1.0]), t(lib, [1.0])),
        "The function given to vhp should return a single Tensor",
    ),
    "hessian of a vector function": (
        lambda lib: run(lib, "hessian", lambda x: x * 2, t(lib, [1.0, 2.0])),
        "The Tensor returned by the function given to hessian should contain a single element",
    ),
    "unknown strategy": (
        lambda lib: run(lib, "jacobian", lambda x: x, t(lib, [1.0]), strategy="sideways"),
        'Expected strategy to be either "forward-mode" or "reverse-mode".',
    ),
    "unknown outer strategy": (
        lambda lib: run(
            lib, "hessian", lambda x: x.sum(), t(lib, [1.0]), outer_jacobian_strategy="x"
        ),
        'Expected strategy to be either "forward-mode" or "reverse-mode".',
    ),
    "forward mode needs vectorize": (
        lambda lib: run(lib, "jacobian", lambda x: x, t(lib, [1.0]), strategy="forward-mode"),
        "only implemented for `vectorize=True`",
    ),
    "forward mode with create_graph": (
        lambda lib: run(
            lib,
            "jacobian",
            lambda x: x,
            t(lib, [1.0]),
            create_graph=True,
            vectorize=True,
            strategy="forward-mode",
        ),
        '`create_graph=True` and `strategy="forward-mode"` are not supported together',
    ),
    "forward mode with strict": (
        lambda lib: run(
            lib,
            "jacobian",
            lambda x: x,
            t(lib, [1.0]),
            strict=True,
            vectorize=True,
            strategy="forward-mode",
        ),
        '`strict=True` and `strategy="forward-mode"` are not supported together',
    ),
    "vectorize with strict": (
        lambda lib: run(
            lib, "jacobian", lambda x: x * 2, t(lib, [1.0]), strict=True, vectorize=True
        ),
        "`strict=True` and `vectorized=True` are not supported together",
    ),
    "strict: output without history": (
        lambda lib: run(lib, "vjp", lambda x: t(lib, [1.0]), t(lib, [1.0]), strict=True),
        "Output 0 of the user-provided function does not require gradients.",
    ),
    "strict: output independent of an input": (
        lambda lib: run(
            lib,
            "vjp",
            lambda x, y: x * 2,
            (t(lib, [1.0]), t(lib, [1.0])),
            (t(lib, [1.0]),) * 1,
            strict=True,
        ),
        "The output of the user-provided function is independent of input 1.",
    ),
    "strict: jacobian independent of an input": (
        lambda lib: run(
            lib, "jacobian", lambda x, y: x * 2, (t(lib, [1.0]), t(lib, [1.0])), strict=True
        ),
        "Output 0 of the user-provided function is independent of input 1.",
    ),
    "strict: linear function's hessian": (
        lambda lib: run(lib, "hessian", lambda x: x.sum() * 2, t(lib, [1.0, 2.0]), strict=True),
        "the jacobian of the user-provided function with respect to input 0 is independent",
    ),
    "strict: jvp of an unused input": (
        lambda lib: run(
            lib,
            "jvp",
            lambda x, y: x * 2,
            (t(lib, [1.0]), t(lib, [1.0])),
            (t(lib, [1.0]), t(lib, [1.0])),
            strict=True,
        ),
        "The output of the user-provided function is independent of input 1.",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    program, phrase = ERRORS[case]
    ours, theirs = outcome(lambda: program(ng)), outcome(lambda: program(torch))
    assert ours[0] == theirs[0]
    assert phrase in ours[1], ours[1]
    assert phrase in theirs[1], theirs[1]
