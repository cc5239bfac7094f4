"""Interactive drawings: the HTML view of a Drawing (Jupyter's text/html, to_html, save_html).

What runs in the browser is tested in tests/browser/; here, what Python puts in the page:
the mimebundle, unique ids, the details payload, the layout choice, no external resource.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import tomllib
from drawings import payload
from drawings import reference_float64 as reference

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.render import interactive

ROOT = Path(__file__).resolve().parents[2]


def by_title(data: dict, title: str) -> list[dict]:
    return [n for n in data["nodes"].values() if n["title"] == title]


def rows(node: dict) -> dict:
    return dict(node["rows"])


def test_the_mimebundle_has_the_interactive_html_and_the_plain_svg():
    env = reference()
    bundle = ng.render(env["loss"], params=env)._repr_mimebundle_()
    assert list(bundle) == ["text/html", "image/svg+xml"]
    page = bundle["text/html"]
    assert page.startswith('<div class="ngv" id="ngv-')
    for label in ("zoom in", "zoom out", "reset"):
        assert f'aria-label="{label}"' in page
    assert "window.naivegraphView.init(" in page
    assert bundle["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))
    assert "ngv" not in bundle["image/svg+xml"]  # the plain drawing is Graphviz's own


def test_the_page_loads_nothing_from_outside():
    env = reference()
    page = ng.render(env["loss"], kind="both", params=env).to_html()
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""\b(src|href)\s*=\s*["'](?!#)""", page)  # no script, css, image
    assert "<link" not in page and "@import" not in page and "url(http" not in page
    assert interactive.script_text() in page  # the script itself is inline


def test_two_views_of_one_drawing_share_no_id():
    env = reference()
    drawing = ng.render(env["loss"], kind="both", params=env)
    first, second = drawing.html_fragment(), drawing.html_fragment()
    ids = re.findall(r'\bid="([^"]+)"', first + second)
    assert len(ids) == len(set(ids)) > 20
    view_ids = re.findall(r'<div class="ngv" id="([^"]+)"', first + second)
    assert len(set(view_ids)) == 2
    for view_id in view_ids:  # every id of a view starts with the view's own id
        own = [i for i in ids if i.startswith(view_id)]
        assert len(own) == len(ids) // 2


def test_node_groups_are_named_after_their_dot_names_which_key_the_details():
    env = reference()
    drawing = ng.render(env["loss"], params=env, legend=False)
    fragment = drawing.html_fragment()
    view_id = re.search(r'<div class="ngv" id="([^"]+)"', fragment).group(1)
    groups = re.findall(rf'<g id="{view_id}-(n\d+)" class="node', fragment)
    assert sorted(groups) == sorted(payload(fragment)["nodes"]) == sorted(drawing.details)


def test_the_details_of_the_reference_example_after_backward():
    env = reference()
    data = payload(ng.render(env["loss"], kind="both", params=env).html_fragment())
    w1 = rows(by_title(data, "w1")[0])
    assert w1["value"] == "2." and w1[".grad"] == "28." and w1["dtype"] == "float64"
    assert w1["kind"] == "leaf that requires grad" and w1["_version"] == "0"
    l1 = rows(by_title(data, "l1")[0])
    assert l1["value"] == "[[2., 2.],\n [2., 2.]]" and l1["grad_fn"] == "MulBackward0"
    assert l1["shape"] == "(2, 2)" and ".grad" not in l1
    accumulate = [rows(n) for n in by_title(data, "AccumulateGrad")]
    assert {
        r["adds into"]: r.get("w1.grad", r.get("w2.grad", r.get("w3.grad"))) for r in accumulate
    } == {
        "w1.grad": "28.",
        "w2.grad": "8.",
        "w3.grad": "10.",
    }
    multiplies = [rows(n) for n in by_title(data, "MulBackward0")]
    assert all(r["freed"].startswith("yes") for r in multiplies)
    assert {r.get("saved input 0") for r in multiplies} == {
        "(2, 2): freed by backward()",
    }
    saved = [rows(n) for n in by_title(data, "saved input 1")]
    assert all("freed by backward()" in r["value"] for r in saved)


def test_before_backward_the_details_show_saved_values_and_their_versions():
    env = reference(backward=False)
    data = payload(ng.render(env["loss"], kind="backward", params=env).html_fragment())
    w1 = rows(by_title(data, "w1")[0])
    assert w1[".grad"] == "None (no backward() has reached it yet)"
    node = [rows(n) for n in by_title(data, "MulBackward0") if "saved input 1" in rows(n)]
    texts = {r["saved input 1"] for r in node}
    assert "4.\nw3 at _version 0 (now 0)" in texts  # l3 = l1 * w3 saved w3
    saved = [rows(n) for n in by_title(data, "saved input 0") if rows(n).get("from") == "l1"]
    assert saved[0]["value"] == "[[2., 2.],\n [2., 2.]]"
    assert saved[0]["_version"] == "saved at 0, now 0"


def test_large_values_are_summarised_in_the_details():
    x = ng.arange(1000, dtype=ng.float64).requires_grad_()
    y = (x * 2.0).sum()
    data = payload(ng.render(y, params={"x": x, "y": y}).html_fragment())
    value = rows(by_title(data, "x")[0])["value"]
    assert value.startswith("shape (1000,): min 0, max 999, mean 499.5\n")
    assert len(value) < 120


def test_static_details_give_the_last_runs_value_or_when_the_memory_plan_freed_it():
    with ns.Graph() as g:
        x = ns.placeholder("input", shape=(2, 2))
        w1 = ns.Variable(2.0, name="w1")
        l1 = x * w1
        l2 = l1 * l1
        loss = ns.sum(l2)
    g.forward({x: np.ones((2, 2))}, fetches=[loss])
    g.backward(loss)
    data = payload(ng.render(g).html_fragment())
    l1_rows = rows(by_title(data, l1.name)[0])
    assert l1_rows["value (last run)"] == "[[2., 2.],\n [2., 2.]]"  # kept: l1 * l1 saves it
    assert l1_rows["life span"] == "computed at step 1, last read at step 2"
    l2_rows = rows(by_title(data, l2.name)[0])
    assert l2_rows["value (last run)"] == "freed after step 3 (memory plan)"
    assert rows(by_title(data, loss.name)[0])["life span"] == (
        "computed at step 3, read by no later step"
    )
    assert rows(by_title(data, w1.name)[0])[".grad"] == "16."
    with ns.Graph() as g2:
        a = ns.placeholder("a", shape=(3,))
        b = a * 2.0
        c = b + 1.0
        total = ns.sum(c)
    g2.forward({a: np.ones(3)}, fetches=[total])
    data = payload(ng.render(g2).html_fragment())
    assert rows(by_title(data, b.name)[0])["value (last run)"] == "freed after step 2 (memory plan)"
    assert rows(by_title(data, total.name)[0])["value (last run)"] == "9."


def test_a_wide_both_drawing_stacks_its_halves_to_fit_a_notebook():
    env = reference()
    drawing = ng.render(env["loss"], kind="both", params=env)
    side_by_side, _ = interactive.svg_size_px(drawing.pipe("svg", encoding="utf-8"))
    assert side_by_side > interactive.OUTPUT_WIDTH_PX  # 1360 px: cut in a notebook before
    stacked, _ = interactive.svg_size_px(drawing.fitted_svg())
    assert stacked <= interactive.OUTPUT_WIDTH_PX
    assert "invis" not in drawing.source  # the drawing itself is unchanged


def test_a_drawing_that_fits_keeps_its_layout():
    env = reference()
    drawing = ng.render(env["loss"], kind="forward", params=env)
    assert drawing.fitted_svg() == drawing.pipe("svg", encoding="utf-8")


def test_save_html_writes_the_standalone_page(tmp_path):
    env = reference()
    drawing = ng.render(env["loss"], params=env)
    path = drawing.save_html(tmp_path / "out" / "loss.html")
    text = Path(path).read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "ngv-data" in text
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        drawing.save_html(3)


def test_the_script_is_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = config["tool"]["setuptools"]["package-data"]["naivegraph.render"]
    assert "view.js" in shipped and "view_test.html" in shipped
    for name in shipped:
        assert (ROOT / "naivegraph" / "render" / name).is_file()
    assert "function init(id)" in interactive.script_text()


def test_json_in_the_page_cannot_close_its_script_element():
    x = ng.tensor(1.0, requires_grad=True)
    y = x * 2.0
    fragment = ng.render(y, params={"</script><b>x": x}).html_fragment()
    assert fragment.count("</script>") == 2  # the data's and the code's own ends
    assert payload(fragment)["nodes"]
