# %% [markdown]
# # Lesson 7: Static vs dynamic, side by side
#
# The same model, trained both ways. A static graph is built once and reused; a
# dynamic graph is rebuilt on every forward and destroyed by backward. This lesson
# measures what that costs, and what the dynamic side buys:
#
# * time and memory per training iteration, and when building + compiling pays off,
# * Python control flow on data (easy in dynamic mode, an error in static mode) and the
#   graph's own control flow (`ns.cond`, `ns.while_loop`),
# * tracing a dynamic-mode function into a static graph, and its pitfalls.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Two ways to run a training step
#
# Dynamic mode builds the graph while the step runs, and backward frees it:
#
# [an animation of one dynamic step](figures/animation_dynamic_step.gif).
#
# Static mode builds the graph once; each run only feeds new inputs through it:
#
# [an animation of static runs](figures/animation_static_runs.gif).
#
# Both, at your pace, on lesson 1's toy model. Page through each walkthrough with
# **Next** / **Previous** (or click it and use ← / →). In the dynamic one, each op runs
# at once and records its node; backward then sends the 7 to `l1` as 5 + 2, adds 28
# into `w1.grad` and frees what the nodes saved.

# %%
input = ng.ones([2, 2])
w1 = ng.tensor(2.0, requires_grad=True)
w2 = ng.tensor(3.0, requires_grad=True)
w3 = ng.tensor(4.0, requires_grad=True)
l1 = input * w1
l2 = l1 + w2
l3 = l1 * w3
l4 = l2 * l3
loss = l4.mean()
ng.walkthrough(loss)

# %% [markdown]
# In the static one, the whole graph exists before any value: the run only feeds
# `input` through it, freeing each intermediate after its last use unless the backward
# sweep needs it, and the sweep reaches the same 7 and 28.

# %%
import naivegraph.static as ns

with ns.Graph():
    input = ns.placeholder("input", shape=(2, 2))
    w1 = ns.Variable(2.0, name="w1")
    w2 = ns.Variable(3.0, name="w2")
    w3 = ns.Variable(4.0, name="w3")
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = ns.mean(l4)
ns.walkthrough(loss, {input: np.ones((2, 2))})

# %% [markdown]
# ## The same model, both ways
#
# A two-layer MLP on a small two-moons data set, trained by gradient descent on
# mini-batches of 32 points. Both start from the same weights and see the same
# batches. The static graph takes a batch of any size (`shape=(None, 2)`), and its
# training step is one node: `ns.optim.SGD(...).minimize(loss)` adds the gradients
# and the weight updates to the graph, as TensorFlow 1 did.

# %%
import time
import tracemalloc

import naivegraph.static as ns
from naivegraph.lessons import datasets, plots

X, y = datasets.two_moons(200, seed=0)
rng = np.random.default_rng(0)
init = [a.astype(np.float32)  # float32, as the data and the placeholders
        for a in (rng.normal(scale=0.7, size=(2, 16)), np.zeros(16),
                  rng.normal(scale=0.25, size=(16, 2)), np.zeros(2))]
lr, steps = 0.5, 150
batches = [rng.choice(len(X), size=32, replace=False) for _ in range(steps)]

# dynamic: the graph is rebuilt by every forward
params = [ng.tensor(p.copy(), requires_grad=True) for p in init]

def dynamic_step(Xb, yb):
    W1, b1, W2, b2 = params
    logits = ng.tanh(ng.tensor(Xb) @ W1 + b1) @ W2 + b2
    loss = ng.nn.functional.cross_entropy(logits, ng.tensor(yb))
    for p in params:
        p.grad = None
    loss.backward()
    with ng.no_grad():
        for p in params:
            p -= lr * p.grad
    return loss.item()

# static: built once (gradients and updates included), compiled once, then only run
t0 = time.perf_counter()
with ns.Graph() as g:
    xs = ns.placeholder("X", shape=(None, 2))
    ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
    Ws = [ns.Variable(p.copy(), name=n) for p, n in zip(init, ("W1", "b1", "W2", "b2"))]
    loss_node = ns.cross_entropy(ns.tanh(xs @ Ws[0] + Ws[1]) @ Ws[2] + Ws[3], ys)
    train_step = ns.optim.SGD(Ws, lr=lr).minimize(loss_node)
compiled = g.compile([xs, ys], [loss_node, train_step])
setup_seconds = time.perf_counter() - t0   # building + optimising + planning, once

def static_step(Xb, yb):
    loss, _ = compiled(Xb, yb)  # the step's own value is None: it only updates
    return float(loss)

curves = {"dynamic": [], "static": []}
times = {"dynamic": [], "static": []}
for batch in batches:
    for name, step in (("dynamic", dynamic_step), ("static", static_step)):
        t0 = time.perf_counter()
        curves[name].append(step(X[batch], y[batch]))
        times[name].append(time.perf_counter() - t0)
print("final losses:", curves["dynamic"][-1], curves["static"][-1])
plots.loss_curves(curves, title="Same model, same numbers, two execution strategies")


# %% [markdown]
# The curves lie on top of each other: the op table and its gradient rules are
# shared, only *when* things run differs. Now the cost of one iteration.
#
# Memory is measured with `tracemalloc`: the peak of the memory allocated through
# Python's allocators *during* one step, numpy's array buffers included (numpy
# reports them to tracemalloc). It is not the process's total memory (RSS), and
# it leaves out what existed before the step: the weights, and the static graph
# itself.

# %%
def peak_bytes(step):
    tracemalloc.start()
    step(X[batches[0]], y[batches[0]])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak

memory = {"dynamic": peak_bytes(dynamic_step), "static": peak_bytes(static_step)}
for name in times:
    print(f"{name:8s} median {np.median(times[name]) * 1e3:.3f} ms, "
          f"peak {memory[name] / 1024:.0f} KiB")
plots.static_vs_dynamic(times, memory)

# %% [markdown]
# Times change from run to run; what each step *builds* does not. Every dynamic step
# records a fresh graph (`nodes_built` counts it with lesson 2's walk down
# `next_functions`);
# a static step builds nothing, its graph was made once before the first step.
# The figure in the README is this one, drawn by `naivegraph figures`.

# %%
from naivegraph.lessons.training import nodes_built  # lesson 2's walk, counting nodes

W1, b1, W2, b2 = params
Xb, yb = X[batches[0]], y[batches[0]]
loss = ng.nn.functional.cross_entropy(ng.tanh(ng.tensor(Xb) @ W1 + b1) @ W2 + b2,
                                      ng.tensor(yb))
built = {"dynamic": [nodes_built(loss)], "static": [0]}
print("grad_fn nodes built by one step:", built)
plots.static_vs_dynamic(built, memory, time_scale=1, time_label="graph nodes built per step",
                        time_title="graph building")

# %% [markdown]
# A static step is cheaper, but the graph had to be built, optimised and planned
# first, and that is paid once. Compiling pays off after the number of runs at
# which the saving per step has repaid the setup:

# %%
per_step = {name: float(np.median(times[name])) for name in times}
print(f"build + compile: {setup_seconds * 1e3:.1f} ms once; per step: "
      + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in per_step.items()))
plots.amortisation({"dynamic": 0.0, "static": setup_seconds}, per_step, runs=1000)


# %% [markdown]
# The static side skips graph building and the Python bookkeeping of every op, and
# its memory plan frees values as soon as they are dead. That bookkeeping costs the
# same whatever the size of the arrays, while the arithmetic grows with them. On a
# larger batch and hidden layer the arithmetic dominates, both modes run the same
# numpy calls for it, and their times converge. The same step at the toy size and
# at a size where arithmetic dominates, the fastest of a few runs each:

# %%
def step_seconds(batch, hidden, repeats=5):
    """The fastest of a few runs of one training step, in both modes."""
    rng = np.random.default_rng(1)
    Xb, yb = rng.standard_normal((batch, 2)), rng.integers(0, 2, batch)
    start = [rng.normal(scale=0.7, size=(2, hidden)), np.zeros(hidden),
             rng.normal(scale=0.25, size=(hidden, 2)), np.zeros(2)]
    weights = [ng.tensor(p, dtype=ng.float64, requires_grad=True) for p in start]

    def dynamic():
        W1, b1, W2, b2 = weights
        logits = ng.tanh(ng.tensor(Xb, dtype=ng.float64) @ W1 + b1) @ W2 + b2
        loss = ng.nn.functional.cross_entropy(logits, ng.tensor(yb))
        for w in weights:
            w.grad = None
        loss.backward()
        with ng.no_grad():
            for w in weights:
                w -= lr * w.grad

    with ns.Graph() as big:
        xs = ns.placeholder("X", shape=(None, 2), dtype=np.float64)
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        Ws = [ns.Variable(p.copy(), name=n) for p, n in zip(start, ("W1", "b1", "W2", "b2"))]
        loss_node = ns.cross_entropy(ns.tanh(xs @ Ws[0] + Ws[1]) @ Ws[2] + Ws[3], ys)
        step_node = ns.optim.SGD(Ws, lr=lr).minimize(loss_node)
    run = big.compile([xs, ys], [loss_node, step_node])

    def fastest(fn):
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            runs.append(time.perf_counter() - t0)
        return min(runs)

    return fastest(dynamic), fastest(lambda: run(Xb, yb))

for batch, hidden in ((32, 16), (2048, 512)):
    dynamic_s, static_s = step_seconds(batch, hidden)
    print(f"batch {batch:5d}, hidden {hidden:4d}: dynamic {dynamic_s * 1e3:8.3f} ms, "
          f"static {static_s * 1e3:8.3f} ms, ratio {dynamic_s / static_s:.2f}")


# %% [markdown]
# At the toy size the static step wins by the bookkeeping it skips. At the large size
# the arithmetic dominates both steps, so the bookkeeping is a small share of the time
# and the ratio says little: timings vary from run to run, and on a busy machine
# either side may come out ahead by a wide margin. The speed of a framework on real
# workloads depends on its kernels, fusion and memory traffic much more than on its
# graph style.
#
# ## Python control flow
#
# In dynamic mode a graph is just a record of what ran, so any Python works: loops
# whose length depends on the data, `if` on values. Each iteration may build a
# different graph.

# %%
def grow(x):
    steps = 0
    while (x * x).sum().sqrt().item() < 10:     # a loop decided by the data
        x = x * 2
        steps += 1
    return x, steps

x = ng.tensor([0.5, 1.0], requires_grad=True)
out, n = grow(x)
out.sum().backward()
print(f"{n} doublings; d sum / dx = {x.grad}")


# %% [markdown]
# A static graph has no values while it is built, so `if node:` cannot be decided.
# naivegraph says so at once, names the line, and points to what works inside a
# graph: `ng.where` in a function you trace (it runs eagerly on tensors and records
# a node on graph nodes), `ns.cond` (run one of two branches) and `ns.while_loop`
# (loop while a condition holds), or to dynamic mode.

# %%
def branchy(x):
    if x.sum() > 0:
        return x * 2
    return x * -1

try:
    ns.trace(branchy, np.ones(2))
except TypeError as err:
    print(str(err))


# %% [markdown]
# ### Exercise 07-1
# Rewrite `branchy` so that it can be traced; read the error message above first.

# %% exercise="07-1"
# Exercise 07-1: rewrite branchy so that it can be traced. It must give x * 2 where
# x > 0 and x * -1 elsewhere (elementwise), in dynamic mode and once traced; the
# result keeps x's dtype.
def f_fixed(x):
    ### BEGIN SOLUTION
    result = ng.where(x > 0, x * 2, x * -1)
    ### END SOLUTION
    return result

ex.check_where_fix(f_fixed)

# %% [markdown]
# `ng.where` computes both branches and chooses per element. To run only one
# branch, or to loop a number of times that is only known at run time, the graph has
# its own control flow; each branch and the loop body is a small graph of its own:

# %%
with ns.Graph() as cg:
    x = ns.placeholder("x", shape=(2,))
    n = ns.placeholder("n", shape=(), dtype=np.int64)
    chosen = ns.cond(x.sum() > 0, lambda: x * 2, lambda: x * -1)
    count, doubled = ns.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 2), [0, x])
for feed in ({x: np.array([1.0, 2.0]), n: np.array(3)},
             {x: np.array([-1.0, -2.0]), n: np.array(5)}):
    print("cond:", cg.run(chosen, feed), "  while_loop:", cg.run(doubled, feed))
ng.render(cg)

# %% [markdown]
# ## Tracing and its pitfall
#
# `ns.trace(fn, example)` runs a dynamic-mode function once on placeholders and
# records the ops it performs: a static graph for free. What it records is **one
# run**. Anything the function reads from Python at that moment (a global, a
# config value, a random number) is frozen into the graph as a constant. The trace
# keeps one graph per input shape and dtype: an input of another shape, or integers
# where the example held floats, makes it run the function again, and read the
# globals again.

# %%
SCALE = 2.0

def scaled(x):
    return x * SCALE

traced = ns.trace(scaled, np.ones(2))
print(traced, "->", traced(np.array([1.0, 2.0])))
ng.render(traced.graph)

# %% exercise="07-2"
# Exercise 07-2: now SCALE changes. Predict, without running them, what traced and
# scaled give for x = [1, 2]: type each result in as a list of numbers.
SCALE = 10.0
### BEGIN SOLUTION
traced_result = [2.0, 4.0]
eager_result = [10.0, 20.0]
### END SOLUTION
ex.check_trace_pitfall(traced_result, eager_result)

# %%
SCALE = 10.0
if ex.solved("07-2"):
    print("traced:", traced(np.array([1.0, 2.0])), "  eager:", scaled(ng.tensor([1.0, 2.0])))
else:
    print("(solve exercise 07-2 first: this cell runs both)")

# %% [markdown]
# The classic form of this pitfall is control flow on a Python value: a loop count
# or a flag read while tracing runs once, and the trace records the ops of *that*
# path. Nothing warns you: the loop below is unrolled three times into the graph.

# %%
REPEATS = 3

def repeat(x):
    for _ in range(REPEATS):       # a Python loop: unrolled while tracing
        x = x * 2
    return x

traced_repeat = ns.trace(repeat, np.ones(2))
REPEATS = 5
print("eager:", repeat(ng.tensor([1.0, 1.0])), "  traced:", traced_repeat(np.ones(2)),
      f"({len(traced_repeat.graph.nodes)} nodes: three multiplications baked in)")


# %% [markdown]
# To keep the count a run-time value, make it an input and loop inside the graph:

# %%
def repeat_in_graph(x, n):
    _, out = ns.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 2), [0, x])
    return out

looped = ns.trace(repeat_in_graph, np.ones(2), np.array(3))
print("n = 3:", looped(np.ones(2), np.array(3)), "  n = 5:", looped(np.ones(2), np.array(5)))


# %% [markdown]
# Reading a value out of the graph while tracing, with `.item()`, cannot work either:
# the number does not exist yet. The error says where and what to do instead:

# %%
def normalise(x):
    return x / x.sum().item()

try:
    ns.trace(normalise, np.ones(2))
except TypeError as err:
    print("TypeError:", err)
print("kept as a node, it traces:", ns.trace(lambda x: x / x.sum(), np.ones(2))(np.ones(4)))

# %% [markdown]
# ## Looking at gradients
#
# In dynamic mode the drawing of the backward graph can carry the gradients:
# `gradients=True`, before `backward`, labels every node with the gradient arriving
# at it and each `AccumulateGrad` with what it adds to its leaf (the cell below runs no
# `backward`: drawn after one instead, the saved values it freed would appear faded).

# %%
W1, b1, W2, b2 = params
Xb, yb = X[batches[0][:4]], y[batches[0][:4]]
small_loss = ng.nn.functional.cross_entropy(ng.tanh(ng.tensor(Xb) @ W1 + b1) @ W2 + b2,
                                            ng.tensor(yb))
for p in params:
    p.grad = None
ng.render(small_loss, gradients=True, params={"W1": W1, "b1": b1, "W2": W2, "b2": b2})

# %% [markdown]
# ## Summary
#
# | | static | dynamic |
# |---|---|---|
# | graph | built once, reused | rebuilt every forward, freed by backward |
# | per-iteration cost | run only | build + run + bookkeeping |
# | optimisation | whole-graph passes, memory plan | none |
# | control flow | `ng.where` (traced), `ns.where`, `ns.cond`, `ns.while_loop`; no Python `if` on data | any Python |
# | debugging | values appear only when run | every value exists at once |
#
# Tracing gets a static graph from dynamic code, but only of the path it saw:
# Python values (globals, flags, loop counts) are frozen in as constants.
# Building and compiling cost time once; they pay off over many runs.
#
# ## Further reading
#
# * TensorFlow 1 "Graphs and Sessions" guide, and "Better performance with
#   tf.function" (TensorFlow 2): tracing, retracing and Python side effects.
# * PyTorch documentation, `torch.jit.trace` (its warnings about data-dependent
#   control flow) and `torch.fx` symbolic tracing and its limitations.
# * Theano documentation, `scan` and `ifelse`: control flow as graph nodes.
# * CMU 10-414/714 *Deep Learning Systems*: lectures on graph execution and
#   hardware acceleration.
