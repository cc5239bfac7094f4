"""Differential fuzzing without torch: dynamic mode against every way of running static mode.

The same random program (see ``random_programs``) runs eagerly in dynamic mode and as a
static graph: raw (``graph.forward`` + numeric ``graph.backward``), compiled without
and with optimisation, and through ``ns.optimize`` explicitly.  Values, first
derivatives and Hessian-vector products must agree to float64 precision.

Raise the example count with ``NAIVEGRAPH_FUZZ_EXAMPLES=2000``.
"""

from hypothesis import given
from random_programs import FUZZ, assert_same_results, programs, run_dynamic, run_static

STATIC_MODES = ["forward", "compile", "compile-optimized", "optimize"]


@FUZZ
@given(program=programs())
def test_fuzz_static_matches_dynamic(program):
    want = run_dynamic(program)
    for mode in STATIC_MODES:
        assert_same_results(run_static(program, mode), want, f"static[{mode}] vs dynamic")
