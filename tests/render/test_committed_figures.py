"""The committed figures (README's figures/ and the course's animations) are what
`make figures` draws today.

Compared by content, not bytes: the bytes change with matplotlib, pillow and Graphviz
versions, the content does not.  An SVG is compared as its elements and texts in order
plus its size within a few percent; a PNG or GIF frame as pixels, within a small mean
difference after scaling to the committed size.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from naivegraph.cli import main

PIL = pytest.importorskip("PIL")
from PIL import Image, ImageSequence  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FIGURES = REPO / "figures"
COURSE_FIGURES = REPO / "naivegraph" / "course" / "figures"
SIZE_TOLERANCE = 0.03  # relative, for an SVG's or image's width and height
PIXEL_TOLERANCE = 0.03  # mean absolute difference, 0..1 per channel


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """Run what `make figures` runs, into a temporary folder."""
    out = tmp_path_factory.mktemp("figures")
    assert (
        main(["figures", "--out", str(out / "figures"), "--course-out", str(out / "course")]) == 0
    )
    return out


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def svg_content(text: str) -> tuple[list[tuple[str, str]], tuple[float, float]]:
    """An SVG's elements as (tag, text) in document order, and its width and height in
    points.  Comments (Graphviz's version line) and coordinates are left out."""
    root = ET.fromstring(text)
    elements = [
        (element.tag.rsplit("}", 1)[-1], " ".join((element.text or "").split()))
        for element in root.iter()
    ]
    size = tuple(float(root.get(side, "0").removesuffix("pt")) for side in ("width", "height"))
    return elements, size


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= SIZE_TOLERANCE * max(abs(a), abs(b), 1.0)


def image_difference(committed: Image.Image, new: Image.Image) -> float:
    """Mean absolute pixel difference (0 same, 1 opposite) after scaling ``new`` to the
    committed image's size; infinity when the sizes differ by more than the tolerance."""
    if not all(_close(a, b) for a, b in zip(committed.size, new.size)):
        return float("inf")
    a = np.asarray(committed.convert("RGB"), dtype=np.float64) / 255
    b = np.asarray(new.convert("RGB").resize(committed.size), dtype=np.float64) / 255
    return float(np.abs(a - b).mean())


def assert_same_figure(committed: Path, new: Path) -> None:
    if committed.suffix == ".svg":
        (elements, size) = svg_content(committed.read_text(encoding="utf-8"))
        (new_elements, new_size) = svg_content(new.read_text(encoding="utf-8"))
        assert new_elements == elements, f"{committed.name}: other nodes or labels"
        assert all(map(_close, size, new_size)), f"{committed.name}: {size} -> {new_size}"
        return
    with Image.open(committed) as old, Image.open(new) as fresh:
        frames = [f.copy() for f in ImageSequence.Iterator(old)]
        new_frames = [f.copy() for f in ImageSequence.Iterator(fresh)]
    assert len(new_frames) == len(frames), f"{committed.name}: number of frames"
    for i, (a, b) in enumerate(zip(frames, new_frames)):
        difference = image_difference(a, b)
        assert difference <= PIXEL_TOLERANCE, f"{committed.name} frame {i}: {difference:.3f}"


def test_make_figures_draws_exactly_the_committed_files(drawn):
    assert _files(drawn / "figures") == _files(FIGURES), "run `make figures` and commit"
    assert _files(drawn / "course") == _files(COURSE_FIGURES), "run `make figures` and commit"


@pytest.mark.parametrize(
    "committed",
    sorted(FIGURES.rglob("*.*")) + sorted(COURSE_FIGURES.rglob("*.*")),
    ids=lambda p: p.relative_to(REPO).as_posix(),
)
def test_committed_figure_has_the_content_make_figures_draws(drawn, committed):
    where = "course" if COURSE_FIGURES in committed.parents else "figures"
    base = COURSE_FIGURES if where == "course" else FIGURES
    assert_same_figure(committed, drawn / where / committed.relative_to(base))


def test_the_comparison_notices_a_drawing_that_lost_a_node():
    before = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="778pt" height="882pt"><!-- dot 14 -->'
        "<g><title>a</title><text x='1'>saved input 1</text></g><g><title>b</title></g></svg>"
    )
    after = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="662pt" height="882pt"><!-- dot 13 -->'
        "<g><title>b</title></g></svg>"
    )
    moved = before.replace("x='1'", "x='2.5'").replace("dot 14", "dot 13")
    assert svg_content(before) == svg_content(moved)  # coordinates and versions do not count
    assert svg_content(before)[0] != svg_content(after)[0]
    assert svg_content(after)[1] == (662.0, 882.0)


def test_the_comparison_tells_similar_images_from_different_ones():
    base = Image.new("RGB", (100, 80), "white")
    speck = base.copy()
    speck.putpixel((5, 5), (0, 0, 0))
    assert image_difference(base, speck) < 0.001
    assert image_difference(base, Image.new("RGB", (100, 80), "black")) == 1.0
    assert image_difference(base, Image.new("RGB", (85, 80), "white")) == float("inf")
