"""The client corpus: PyTorch learner programs run unchanged on naivegraph.

Each script in ``programs/`` mirrors one public PyTorch program (named in its header)
and prints the numbers it computes.  It runs twice, in subprocesses: with real torch,
and with naivegraph posing as torch (``shim/torch``).  The printed text must be the same
and every printed number equal, to 1e-10 relative for a ``# precision: float64``
program and 1e-5 for a ``# precision: float32`` one.  One process per side runs the
whole corpus (``run_programs.py``), so torch is imported once, not once per program.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
ROOT = HERE.parents[1]  # the checkout whose naivegraph is under test

# Programs blocked only by a feature being built elsewhere: each must fail today, and
# passes (so strict xfail fails) once the feature lands -- then it leaves this list.
# None today: every program of the corpus runs.
PENDING: dict[str, str] = {}

# relative tolerance, and an absolute one for values that are zero up to rounding
TOLERANCES = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6)}
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b")


def _scripts() -> list:
    names = sorted(p.name for p in PROGRAMS.glob("*.py"))
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=PENDING[n]))
        if n in PENDING
        else n
        for n in names
    ]


def _precision(script: Path) -> str:
    found = re.search(r"^# precision: (float64|float32)$", script.read_text(), re.M)
    assert found, f"{script.name} must say '# precision: float64' or '# precision: float32'"
    return found.group(1)


def _run_all(pythonpath: list[Path], target: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in pythonpath))
    env["OMP_NUM_THREADS"] = "1"  # tiny tensors: torch's thread pool only adds overhead
    paths = [str(p) for p in sorted(PROGRAMS.glob("*.py"))]
    return subprocess.Popen(
        [sys.executable, str(HERE / "run_programs.py"), str(target), *paths],
        env=env,
        cwd=PROGRAMS,
    )


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, dict]:
    """What each program printed, under "torch" and "naivegraph": both runs at once."""
    folder = tmp_path_factory.mktemp("clients")
    runs = {
        "torch": _run_all([ROOT], folder / "torch.json"),
        "naivegraph": _run_all([HERE / "shim", ROOT], folder / "naivegraph.json"),
    }
    results = {}
    for mode, process in runs.items():
        assert process.wait() == 0, f"the {mode} run of the corpus crashed"
        by_path = json.loads((folder / f"{mode}.json").read_text())
        results[mode] = {Path(path).name: result for path, result in by_path.items()}
    return results


def _printed(outputs: dict, mode: str, name: str) -> str:
    result = outputs[mode][name]
    assert result["error"] is None, f"{name} failed under {mode}:\n{result['error']}"
    return result["stdout"]


def _split(output: str) -> tuple[str, list[float]]:
    """The text with each number replaced by '#', and the numbers in order."""
    numbers = [float(n) for n in NUMBER.findall(output)]
    return NUMBER.sub("#", output), numbers


def _differences(expected: list[float], got: list[float], precision: str) -> list[str]:
    rel, absolute = TOLERANCES[precision]
    return [
        f"number {i}: torch {e!r}, naivegraph {g!r}"
        for i, (e, g) in enumerate(zip(expected, got))
        if not (math.isclose(e, g, rel_tol=rel, abs_tol=absolute) or (e != e and g != g))
    ]


@pytest.mark.parametrize("name", _scripts())
def test_program_prints_the_same_numbers_on_naivegraph_as_on_torch(
    name: str, outputs: dict
) -> None:
    precision = _precision(PROGRAMS / name)
    torch_text, torch_numbers = _split(_printed(outputs, "torch", name))
    ng_text, ng_numbers = _split(_printed(outputs, "naivegraph", name))
    assert torch_numbers, f"{name} printed no numbers"
    assert ng_text == torch_text
    assert len(ng_numbers) == len(torch_numbers)
    assert _differences(torch_numbers, ng_numbers, precision) == []
