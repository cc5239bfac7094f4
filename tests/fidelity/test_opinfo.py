"""PyTorch's own OpInfo samples, float64, through naivegraph's dynamic and static modes:
values, VJPs, second-order VJPs and JVPs against torch (see ``opinfo_cases.py``).

One test per op, check and sample, named ``<op>-<check>-<sample index>``.  The default run
compares a spread of each op's samples; ``NAIVEGRAPH_OPINFO_FULL=1`` compares all of them.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # op_db's import needs it

from opinfo_cases import (  # noqa: E402
    SPECS,
    Known,
    Refusal,
    Spec,
    assert_agrees,
    describe,
    expectation,
    opinfo_of,
    refusal_problem,
    samples_of,
    scale_of,
    selected,
    terms_of,
)
from opinfo_runs import Results, dynamic, reference, static  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")


def parts_of(spec: Spec, check: str) -> set[str]:
    """Which results a check compares."""
    info = opinfo_of(spec)
    if check == "dynamic" or check == "batch":
        return {"values", "vjp"}
    if check == "double":
        return {"vjp2"}
    if check == "jvp":
        return {"jvp"}
    return {
        "values",
        "vjp",
        *(["vjp2"] if info.supports_gradgrad else []),
        *(["jvp"] if info.supports_forward_ad else []),
    }


def cases():
    for spec in SPECS:
        for check in ("dynamic", "double", "jvp", "static", "batch"):
            for index in selected(spec, check):
                declared = expectation(spec, check, samples_of(spec)[index])
                marks = []
                if isinstance(declared, Known):
                    marks.append(pytest.mark.xfail(strict=True, reason=declared.why))
                yield pytest.param(
                    spec, check, index, id=f"{spec.key}-{check}-{index}", marks=marks
                )


def run_naivegraph(spec: Spec, check: str, sample, parts, draws, expected) -> Results:
    if check in ("static", "batch"):
        return static(spec, sample, parts, draws, expected, batch=check == "batch")
    return dynamic(spec, sample, parts, draws)


@pytest.mark.parametrize("spec, check, index", list(cases()))
def test_naivegraph_agrees_with_torch_on_opinfo_sample(spec: Spec, check: str, index: int):
    sample = samples_of(spec)[index]
    parts = parts_of(spec, check)
    expected, draws = reference(spec, sample, parts, seed=index)
    declared = expectation(spec, check, sample)
    try:
        got = run_naivegraph(spec, check, sample, parts, draws, expected)
    except Exception as error:
        if not isinstance(declared, Refusal):
            raise
        problem = refusal_problem(error, spec)
        assert problem is None, problem
        return
    assert not isinstance(declared, Refusal), (
        f"declared refused ({declared.what}), yet naivegraph ran it: drop the refusal"
    )
    terms, scale = terms_of(sample), scale_of(sample)
    for part in sorted(parts):
        want, have = getattr(expected, part), getattr(got, part)
        assert len(have) == len(want), f"{part}: {len(have)} results, torch {len(want)}"
        how = spec.values if part == "values" else "sum"
        how = how(sample) if callable(how) else how
        rtol = dict(spec.loose).get(part)
        for i, (a, e) in enumerate(zip(have, want)):
            assert_agrees(a, e, how, terms, scale, f"{describe(sample)}: {part}[{i}]", rtol)
