/* naivegraph's interactive view: zoom, pan, a details panel per node, and the steps of
 * a walkthrough.  Plain JavaScript, no dependency, no network: the Python side inlines
 * this file into every view (naivegraph/render/interactive.py).
 *
 * A view is a div of class "ngv" holding a toolbar, an inline Graphviz svg, a details
 * panel and a script element of type application/json (class "ngv-data") with
 *   nodes: {"n0": {"title": "w1", "rows": [["shape", "()"], ...]}, ...}
 *   steps: [{"title", "lines", "show", "active", "done", "freed", "grads", "values"}, ...]
 * Node groups of the SVG have the id "VIEW-ID-NAME" (NAME: the DOT name), so two views on a
 * page never share an id.  Every listener is attached to one view: keys act on the focused view.
 */
(function () {
  "use strict";
  if (window.naivegraphView) {
    return; // a page with several views loads this file several times
  }

  var ZOOM_STEP = 1.25;
  // label lines a walkthrough reveals step by step, by their colour (render/walk.py)
  var GRADIENT_FILL = "#c62828"; // gradients: shown from the step that computes them
  var VALUE_FILL = "#0d47a1"; // a static run's values: shown while they are alive

  function init(id) {
    var root = document.getElementById(id);
    if (!root || root.getAttribute("data-ready")) {
      return null;
    }
    root.setAttribute("data-ready", "1");
    var data = JSON.parse(root.querySelector("script.ngv-data").textContent);
    var view = {
      root: root,
      data: data,
      svg: root.querySelector(".ngv-stage svg"),
      panel: root.querySelector(".ngv-panel"),
      step: 0,
    };
    view.home = viewBoxOf(view.svg);
    view.box = view.home.slice();
    view.nodes = nodeGroups(view);
    view.edges = edgeGroups(view);
    bindToolbar(view);
    bindPointer(view);
    bindKeys(view);
    if (data.steps && data.steps.length) {
      bindSteps(view);
      showStep(view, 0);
    }
    return view;
  }

  // ---------------------------------------------------------------- zoom and pan
  function viewBoxOf(svg) {
    return svg.getAttribute("viewBox").trim().split(/[\s,]+/).map(Number);
  }

  function setBox(view, box) {
    view.box = box;
    view.svg.setAttribute("viewBox", box.join(" "));
  }

  // factor > 1 zooms in, around (fx, fy): fractions of the visible width and height
  function zoom(view, factor, fx, fy) {
    var b = view.box;
    var w = b[2] / factor;
    var h = b[3] / factor;
    fx = fx === undefined ? 0.5 : fx;
    fy = fy === undefined ? 0.5 : fy;
    setBox(view, [b[0] + (b[2] - w) * fx, b[1] + (b[3] - h) * fy, w, h]);
  }

  // move by (dx, dy) screen pixels
  function pan(view, dx, dy) {
    var rect = view.svg.getBoundingClientRect();
    var b = view.box;
    var scale = Math.max(b[2] / Math.max(rect.width, 1), b[3] / Math.max(rect.height, 1));
    setBox(view, [b[0] - dx * scale, b[1] - dy * scale, b[2], b[3]]);
  }

  function reset(view) {
    setBox(view, view.home.slice());
  }

  function bindToolbar(view) {
    var actions = {
      "zoom in": function () { zoom(view, ZOOM_STEP); },
      "zoom out": function () { zoom(view, 1 / ZOOM_STEP); },
      "reset": function () { reset(view); },
    };
    view.root.querySelectorAll(".ngv-bar button").forEach(function (button) {
      var action = actions[button.getAttribute("aria-label")];
      if (action) {
        button.addEventListener("click", action);
      }
    });
  }

  function bindPointer(view) {
    var svg = view.svg;
    var drag = null;
    svg.addEventListener("wheel", function (event) {
      if (document.activeElement !== view.root && !event.ctrlKey) {
        // scrolling down a notebook over a drawing scrolls it (and a walkthrough's stage,
        // also after a click on Next); a view focused by a click on its drawing zooms
        return;
      }
      event.preventDefault();
      var rect = svg.getBoundingClientRect();
      var fx = (event.clientX - rect.left) / Math.max(rect.width, 1);
      var fy = (event.clientY - rect.top) / Math.max(rect.height, 1);
      zoom(view, event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, fx, fy);
    }, { passive: false });
    svg.addEventListener("pointerdown", function (event) {
      view.root.focus({ preventScroll: true });
      drag = { x: event.clientX, y: event.clientY, moved: 0 };
    });
    svg.addEventListener("pointermove", function (event) {
      if (!drag) {
        return;
      }
      var dx = event.clientX - drag.x;
      var dy = event.clientY - drag.y;
      drag.moved += Math.abs(dx) + Math.abs(dy);
      drag.x = event.clientX;
      drag.y = event.clientY;
      if (drag.moved > 3) {
        svg.classList.add("ngv-dragging");
        pan(view, dx, dy);
      }
    });
    function end() {
      svg.classList.remove("ngv-dragging");
      view.dragged = drag !== null && drag.moved > 3;
      drag = null;
    }
    svg.addEventListener("pointerup", end);
    svg.addEventListener("pointerleave", end);
    svg.addEventListener("click", function (event) {
      if (view.dragged) {
        return; // the end of a drag is not a click on a node
      }
      var group = event.target.closest ? event.target.closest("g.node") : null;
      var name = group ? nameOf(view, group.id) : null;
      if (name && view.data.nodes[name]) {
        openPanel(view, name, group);
      } else {
        closePanel(view);
      }
    });
  }

  function bindKeys(view) {
    view.root.addEventListener("keydown", function (event) {
      if (event.altKey || event.ctrlKey || event.metaKey) {
        return;
      }
      var handled = true;
      var steps = view.data.steps && view.data.steps.length;
      switch (event.key) {
        case "+": case "=": zoom(view, ZOOM_STEP); break;
        case "-": case "_": zoom(view, 1 / ZOOM_STEP); break;
        case "0": reset(view); break;
        case "Escape": closePanel(view); break;
        case "ArrowLeft": if (steps) { showStep(view, view.step - 1, true); } else { pan(view, 40, 0); } break;
        case "ArrowRight": if (steps) { showStep(view, view.step + 1, true); } else { pan(view, -40, 0); } break;
        case "ArrowUp": pan(view, 0, 40); break;
        case "ArrowDown": pan(view, 0, -40); break;
        default: handled = false;
      }
      if (handled) {
        event.preventDefault();
        event.stopPropagation();
      }
    });
  }

  // ---------------------------------------------------------------- nodes and panel
  function nameOf(view, id) {
    var prefix = view.root.id + "-";
    return id && id.indexOf(prefix) === 0 ? id.slice(prefix.length) : null;
  }

  function nodeGroups(view) {
    var found = {};
    view.svg.querySelectorAll("g.node").forEach(function (group) {
      var name = nameOf(view, group.id);
      if (name) {
        found[name] = group;
        if (view.data.nodes[name]) {
          group.classList.add("ngv-clickable");
        }
      }
    });
    return found;
  }

  // edges as [group, tail name, head name], from their <title> "n1->n0"
  function edgeGroups(view) {
    var found = [];
    view.svg.querySelectorAll("g.edge").forEach(function (group) {
      var title = group.querySelector("title");
      var ends = title ? title.textContent.split("->") : [];
      if (ends.length === 2) {
        found.push([group, ends[0].trim(), ends[1].trim()]);
      }
    });
    return found;
  }

  function openPanel(view, name, group) {
    var entry = view.data.nodes[name];
    var panel = view.panel;
    panel.textContent = "";
    var head = document.createElement("div");
    head.className = "ngv-panel-head";
    var title = document.createElement("b");
    title.textContent = entry.title;
    var close = document.createElement("button");
    close.type = "button";
    close.setAttribute("aria-label", "close details");
    close.textContent = "×";
    close.addEventListener("click", function () { closePanel(view); });
    head.appendChild(title);
    head.appendChild(close);
    panel.appendChild(head);
    var table = document.createElement("table");
    entry.rows.forEach(function (row) {
      var tr = document.createElement("tr");
      var key = document.createElement("th");
      var value = document.createElement("td");
      key.textContent = row[0];
      value.textContent = row[1];
      tr.appendChild(key);
      tr.appendChild(value);
      table.appendChild(tr);
    });
    panel.appendChild(table);
    panel.hidden = false;
    panel.setAttribute("data-node", name);
    placeNear(view, panel, group);
    Object.keys(view.nodes).forEach(function (other) {
      view.nodes[other].classList.toggle("ngv-selected", other === name);
    });
  }

  // under the node (above it when there is no room), on the node's side of the view:
  // a tall drawing scrolled to its bottom still shows the panel next to what was clicked
  function placeNear(view, panel, group) {
    var outer = view.root.getBoundingClientRect();
    var node = group.getBoundingClientRect();
    var height = panel.offsetHeight;
    var top = node.bottom - outer.top + 6;
    if (top + height > outer.height) {
      top = Math.max(0, node.top - outer.top - height - 6);
    }
    panel.style.top = top + "px";
    if ((node.left + node.right) / 2 - outer.left < outer.width / 2) {
      panel.style.left = Math.max(4, node.left - outer.left) + "px";
      panel.style.right = "auto";
    } else {
      panel.style.left = "auto";
      panel.style.right = Math.max(4, outer.right - node.right) + "px";
    }
  }

  function closePanel(view) {
    view.panel.hidden = true;
    view.panel.removeAttribute("data-node");
    Object.keys(view.nodes).forEach(function (name) {
      view.nodes[name].classList.remove("ngv-selected");
    });
  }

  // ---------------------------------------------------------------- walkthrough
  function bindSteps(view) {
    view.root.querySelectorAll(".ngv-steps button").forEach(function (button) {
      var delta = button.getAttribute("aria-label") === "previous step" ? -1 : 1;
      button.addEventListener("click", function () { showStep(view, view.step + delta, true); });
    });
  }

  function asSet(list) {
    var set = {};
    (list || []).forEach(function (name) { set[name] = true; });
    return set;
  }

  // follow: scroll the drawing so that the step's subject is in sight
  function showStep(view, index, follow) {
    var steps = view.data.steps;
    index = Math.max(0, Math.min(steps.length - 1, index));
    view.step = index;
    var step = steps[index];
    var root = view.root;
    root.querySelector(".ngv-label").textContent = "step " + (index + 1) + " of " + steps.length;
    root.querySelector(".ngv-step-title").textContent = step.title;
    var text = root.querySelector(".ngv-step-text");
    text.textContent = "";
    step.lines.forEach(function (line) {
      var p = document.createElement("div");
      p.textContent = line;
      text.appendChild(p);
    });
    root.querySelector("button[aria-label='previous step']").disabled = index === 0;
    root.querySelector("button[aria-label='next step']").disabled = index === steps.length - 1;
    var shown = step.show ? asSet(step.show) : null;
    var active = asSet(step.active);
    var done = asSet(step.done);
    var freed = asSet(step.freed);
    var grads = asSet(step.grads);
    var values = asSet(step.values);
    Object.keys(view.nodes).forEach(function (name) {
      var group = view.nodes[name];
      if (!view.data.nodes[name]) {
        return; // the legend, a note: not part of the graph, always shown
      }
      group.classList.toggle("ngv-hidden", shown !== null && !shown[name]);
      group.classList.toggle("ngv-active", !!active[name]);
      group.classList.toggle("ngv-done", !!done[name]);
      group.classList.toggle("ngv-freed", !!freed[name]);
      if (view.data.revealLabels) {
        group.querySelectorAll("text").forEach(function (line) {
          var fill = (line.getAttribute("fill") || "").toLowerCase();
          if (fill === GRADIENT_FILL) {
            line.classList.toggle("ngv-hidden", !grads[name]);
          } else if (fill === VALUE_FILL) {
            line.classList.toggle("ngv-hidden", !values[name]);
          }
        });
      }
    });
    view.edges.forEach(function (edge) {
      var hidden = shown !== null && (!shown[edge[1]] || !shown[edge[2]]);
      edge[0].classList.toggle("ngv-hidden", hidden);
    });
    if (follow && step.active && step.active.length) {
      bringIntoSight(view, view.nodes[step.active[0]]);
    }
  }

  // A walkthrough's stage has a height limit (the page's CSS) and scrolls inside: the
  // buttons and the step's text stay where the learner clicked while the drawing below
  // shows the step.  The step's first active node is what it is about (the op run, the
  // grad_fn node); the stage scrolls only when that node is out of its sight.
  function bringIntoSight(view, group) {
    var stage = view.root.querySelector(".ngv-stage");
    if (!group || !stage || stage.scrollHeight <= stage.clientHeight) {
      return;
    }
    var margin = 12;
    var box = stage.getBoundingClientRect();
    var node = group.getBoundingClientRect();
    if (node.top < box.top + margin) {
      stage.scrollTop += node.top - box.top - margin;
    } else if (node.bottom > box.bottom - margin) {
      stage.scrollTop += Math.min(node.bottom - box.bottom + margin, node.top - box.top - margin);
    }
  }

  window.naivegraphView = { init: init, showStep: showStep, zoom: zoom, reset: reset };
})();
