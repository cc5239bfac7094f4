# %% [markdown]
# # Lesson 6: Static graphs
#
# TensorFlow 1 and Theano worked the other way round from PyTorch: first **build** the
# whole graph, then **run** it, many times, with new inputs. `naivegraph.static` works
# like that. This lesson covers:
#
# * placeholders (inputs fed at run time), Variables (trainable, keep their value) and
#   constants,
# * running: `graph.forward(feeds)` and the numeric `graph.backward(loss)`,
# * symbolic gradients: `ns.gradients` adds the backward pass to the graph as new nodes,
# * whole-graph optimisation passes and `graph.compile`,
# * memory planning: freeing each value after its last use, and what training costs.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Build, then run
#
# The toy model of lesson 1, in static mode. Nothing is computed while building:
# every node's `value` is `None` until the graph runs.

# %%
import naivegraph.static as ns

g = ns.Graph()
with g:
    x = ns.placeholder("input", shape=(2, 2))
    w1 = ns.Variable(2.0, name="w1")
    w2 = ns.Variable(3.0, name="w2")
    w3 = ns.Variable(4.0, name="w3")
    l1 = x * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = ns.mean(l4)
print("before running:", loss.value)
g.forward({x: np.ones((2, 2))})
print("after forward: ", loss.value)
g.backward(loss)
print("grads:", w1.grad, w2.grad, w3.grad)

# %%
ng.render(g)

# %% [markdown]
# `ns.walkthrough(loss, feed_dict)` steps through what you just ran: the build (nodes,
# no values), the run op by op with the values alive while each op runs (the memory
# plan frees an intermediate after its last use unless the backward sweep needs it), then
# the sweep of `g.backward(loss)`. Page through it with **Next** / **Previous** or
# ← / →, and compare with lesson 1's dynamic step: the same 7 reaches `l1` as 5 + 2,
# the same 28 reaches `w1`, but the graph was built once, before any value existed.

# %%
ns.walkthrough(loss, {x: np.ones((2, 2))})

# %% [markdown]
# The same graph runs again with a new feed; nothing is rebuilt. A missing feed, or a
# feed of the wrong shape, is an error that names the placeholder.

# %%
g.forward({x: 2 * np.ones((2, 2))})
print("loss for twos:", loss.value)
for feeds in ({}, {x: np.ones(3)}):
    try:
        g.forward(feeds)
    except Exception as err:
        print(type(err).__name__ + ":", err)

# %% [markdown]
# ### Exercise 06-1: build it yourself
#
# Build the toy model in a **new** graph `g2`, using a placeholder `x` of shape
# (2, 2) (or (None, 2)) and Variables 2, 3, 4. The checker runs your graph with many
# feeds (ones, twos, other numbers) and other values of the weights, and checks its
# gradients too: it must be the model for every input, not only for the ones.

# %% exercise="06-1"
# Exercise 06-1
g2 = ns.Graph()
with g2:
    x = ns.placeholder("x", shape=(2, 2))
    w1, w2, w3 = ns.Variable(2.0, name="w1"), ns.Variable(3.0, name="w2"), ns.Variable(4.0, name="w3")
    ### BEGIN SOLUTION
    loss = ns.mean((x * w1 + w2) * (x * w1 * w3))
    ### END SOLUTION
ex.check_static_model(g2, x, loss)

# %% [markdown]
# ## Symbolic gradients
#
# `graph.backward` sweeps numbers backward, like dynamic mode. `ns.gradients(loss,
# [w1, ...])` instead **adds nodes** to the graph that compute the gradients: the
# backward pass becomes part of the graph, so it can be drawn, optimised, compiled,
# and even differentiated again. Each op's gradient rule is written with the same
# ops, which is how one rule serves both modes.

# %%
g = ns.Graph()
with g:
    x = ns.placeholder("input", shape=(2, 2))
    w1, w2, w3 = ns.Variable(2.0, name="w1"), ns.Variable(3.0, name="w2"), ns.Variable(4.0, name="w3")
    # written carelessly on purpose: x * w1 twice, a "* 1.0" and a "+ 0.0"
    loss = ns.mean((x * w1 + w2) * (x * w1 * w3) * 1.0 + 0.0)
    dw1, dw2, dw3 = ns.gradients(loss, [w1, w2, w3])
for node, w in zip((dw1, dw2, dw3), ("w1", "w2", "w3")):
    g.rename(node, f"d loss / d {w}")      # name the outputs by what they compute
print(len(g.nodes), "nodes;  d loss / d w1 =", ns.expression(dw1))
ng.render(g)

# %% [markdown]
# ## Optimisation passes and compile
#
# Because the whole graph exists before it runs, it can be rewritten: constant
# folding, algebraic simplification (`x * 1`, `x - 0`, `x / 1`), common-subexpression
# elimination, dead-node elimination and fusion of elementwise chains. Each pass is a
# function Graph -> Graph that keeps results equal. `g.compile(inputs, outputs)`
# optimises and plans once, and returns a plain function.

# %%
small, report = ns.optimize(g, fetches=[loss, dw1, dw2, dw3])
print(report)

# %% [markdown]
# Each line counts the nodes that pass itself removed; together they make up the
# whole reduction. The `* 1.0` is gone, but the deliberate `+ 0.0` is **kept**, on
# purpose: a pass may only apply identities that hold bit for bit, and `x + 0.0` is
# not one. Floating point has two zeros, and `-0.0 + 0.0` is `+0.0`: at `x = -0.0`
# the program computes `+0.0`, and without the addition it would give `-0.0`, which
# a later `1 / x` turns into `-inf` instead of `inf`:

# %%
minus_zero = np.float64(-0.0)
with np.errstate(divide="ignore"):
    print("x = -0.0:   1 / (x + 0.0) =", 1 / (minus_zero + 0.0), "   1 / x =", 1 / minus_zero)

# %% [markdown]
# So the optimised graph (and the drawing after the passes) still has the constant `0`
# feeding an `add`; `x + (-0.0)` and `x - 0.0`, which do hold bit for bit, are removed.
#
# A pass that keeps results equal must keep results *bit for bit* equal; compilers
# call the rewrites that do not ("fast math") unsafe, and leave them off by default.
#
# Folding replaces a node by a constant without removing anything: the inputs it no
# longer needs go in dead-node elimination. A folded node keeps its
# name, so CSE may then report two *equal constants* merged.
#
# The same graph before and after, side by side:

# %%
from naivegraph.render import render_optimization

render_optimization(g, fetches=[loss, dw1, dw2, dw3])

# %% exercise="06-2"
# Exercise 06-2: compile g into f(x) -> [loss, dloss/dw1, dloss/dw2, dloss/dw3]
### BEGIN SOLUTION
f = g.compile(inputs=[x], outputs=[loss, dw1, dw2, dw3], optimize=True)
### END SOLUTION
ex.check_compiled_step(f, g)

# %%
if ex.solved("06-2"):
    step = f   # your compiled function: a plan, run with a feed of ones
    print(step)
    print([float(v) for v in step(np.ones((2, 2)))])
else:
    print("(solve exercise 06-2 first)")

# %% [markdown]
# ## Memory planning
#
# A static run knows, before it starts, which op reads each value last. The plan
# frees each intermediate right after that op (unless it is fetched). A dynamic graph
# keeps what backward will need until backward runs, because it cannot know what
# comes next.
#
# ### Exercise 06-3
# A chain of seven ops, `y = exp(sin(cos(tanh(x * 2) + 1)) - 3)`, runs with the plan
# (no fusion), for inference: only `y` is fetched. What is the largest number of
# intermediate values alive at once (count `y` too)? Once your answer passes, the cell
# after the exercise counts it from the plan.

# %% exercise="06-3"
# Exercise 06-3
### BEGIN SOLUTION
peak_intermediates = 2
### END SOLUTION
ex.check_memory_plan(peak_intermediates)

# %%
from naivegraph.static.executor import Plan
from naivegraph.lessons import plots, training

with ns.Graph() as chain:
    x = ns.placeholder("x", shape=(1000,))
    y = ns.exp(ns.sin(ns.cos(ns.tanh(x * 2) + 1)) - 3)
if ex.solved("06-3"):  # the plan holds the count 06-3 asks for: made once it passes
    plan = Plan(chain, [y], [x])
    alive = training.live_values(plan, count_fetched=True)
    print(len(plan.steps), "steps; alive while each op runs:", alive, "-> peak", max(alive))
else:
    print("(solve exercise 06-3 first: this cell prints the count)")


# %% [markdown]
# ## Training is different: backward needs the forward values
#
# That holds for **inference**. Once `ns.gradients` is in the graph, the backward
# nodes read the forward values (the derivative of `tanh` needs its output, the
# derivative of `h * w` needs `h`), and they run only after the whole forward pass.
# So every layer's activation stays alive from its forward step until the backward
# step that reads it: the peak grows with depth. Below, a chain of layers
# `h = tanh(h * w_i)`, planned for inference and for training (the fetched gradients
# themselves are not counted).

# %%
def layers(depth):
    with ns.Graph() as graph:
        x = ns.placeholder("x", shape=(100,))
        ws = [ns.Variable(0.5, name=f"w{i}") for i in range(depth)]
        h = x
        for w in ws:
            h = ns.tanh(h * w)
        loss = ns.mean(h)
        grads = ns.gradients(loss, ws)
    return graph, x, loss, grads

for depth in (5, 10, 20):
    graph, x, loss, grads = layers(depth)
    train = max(training.live_values(Plan(graph, [loss, *grads], [x])))
    if ex.solved("06-3"):
        inference = max(training.live_values(Plan(graph, [loss], [x])), default=0)
        print(f"{depth:2d} layers: peak alive, inference {inference}, training {train}")
    else:
        print(f"{depth:2d} layers: peak alive, training {train} (inference: solve 06-3 first)")

graph, x, loss, grads = layers(10)
timelines = {}
if ex.solved("06-3"):  # the inference line shows the count 06-3 asks for
    timelines["inference"] = training.live_values(Plan(graph, [loss], [x]), count_fetched=True)
timelines["training"] = training.live_values(Plan(graph, [loss, *grads], [x]))
plots.memory_timeline(timelines, title="10 layers: values alive while each op of a planned run runs")

# %% [markdown]
# The training curve climbs during the forward pass (each activation is kept for
# backward) and falls during backward (each is freed after its last reader). This is
# why training needs far more memory than inference, and why it grows with depth.
#
# A planner can trade time for memory: **recomputation** (gradient checkpointing)
# keeps only some activations, say every $\sqrt{n}$-th layer, and recomputes the
# others from the nearest kept one when backward needs them. The peak drops from
# about $n$ to about $2\sqrt{n}$ values for one extra forward pass. Because a static
# graph is known before it runs, this is a rewrite of the graph (duplicate the
# forward nodes a backward segment needs); naivegraph does not implement it, but
# every piece it needs (the plan's last readers, graph rewriting) is here.
#
# ## Summary
#
# * Build first (`value is None`), then run with feeds, as many times as you like.
# * `ns.gradients` puts the backward pass into the graph as nodes.
# * Knowing the whole graph in advance allows optimisation passes and a memory plan.
# * The plan frees values after their last reader: a chain needs almost nothing
#   for inference, but training keeps each layer's activation until backward.
#
# ## Further reading
#
# * TensorFlow 1 "Graphs and Sessions" guide (tensorflow.org, r1 docs): placeholders,
#   `Session.run`, feeds and fetches, the model this lesson follows.
# * Theano documentation, `theano.function` (inputs, outputs, `updates`) and its
#   graph optimisations.
# * Chen et al., "Training Deep Nets with Sublinear Memory Cost" (2016): gradient
#   checkpointing.
# * CMU 10-414/714 *Deep Learning Systems*: lectures on automatic differentiation
#   and memory planning.
