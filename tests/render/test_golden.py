"""The reference example (l1..l4 of the notes) against a reviewed golden DOT file.

Regenerate after an intended change with ``NAIVEGRAPH_UPDATE_GOLDEN=1 pytest tests/render``,
render the new file to PNG and look at it before committing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from drawings import reference_example

from naivegraph.render import render

GOLDEN = Path(__file__).parent / "golden"


def normalise(source: str) -> str:
    """Renumber node ids by first appearance, so only the structure and styles count."""
    mapping: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        return mapping.setdefault(match.group(0), f"n{len(mapping)}")

    return re.sub(r"\bn\d+\b", rename, source).strip() + "\n"


def _drawings():
    example = reference_example()
    loss = example["loss"]
    yield "reference_both.dot", render(loss, kind="both", params=example)
    yield "reference_gradients.dot", render(loss, gradients=True, params=example)
    loss.backward()
    yield "reference_after_backward.dot", render(loss, kind="backward", params=example)


@pytest.mark.parametrize(
    "name", ["reference_both.dot", "reference_gradients.dot", "reference_after_backward.dot"]
)
def test_reference_example_matches_the_golden_dot(name):
    source = normalise(dict(_drawings())[name].source)
    path = GOLDEN / name
    if os.environ.get("NAIVEGRAPH_UPDATE_GOLDEN"):
        path.write_text(source)
    assert source == path.read_text(), f"{name} changed: inspect it, then regenerate"


def test_normalise_only_renames_ids():
    assert normalise("n7 -> n3\nn3 [label=n3x]") == "n0 -> n1\nn1 [label=n3x]\n"
