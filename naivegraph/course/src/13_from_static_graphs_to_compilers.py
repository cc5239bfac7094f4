# %% [markdown]
# # Lesson 13: From static graphs to compilers
#
# Static graphs did not end with TensorFlow 1. `jax.jit` turns a Python function into a
# graph (a *jaxpr*) by tracing it, `torch.compile` captures a graph (a `torch.fx` graph)
# from ordinary PyTorch code, and XLA or TorchInductor compile that graph: they fold,
# fuse, plan memory and generate code for one input shape. In this lesson you see those
# steps on the lab's own graphs:
#
# * a graph printed as text, one line per node, in **SSA form** (as a jaxpr or an fx graph
#   prints),
# * the **plan** a compiled function runs, step by step, and what it frees when,
# * the same plan **before and after** `ns.optimize`,
# * **tracing** a dynamic function with `ns.trace` and reading what it recorded,
# * where tracing and compiling **pay off**, and where they do not.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## A graph as text
#
# `print(graph)` lists a static graph the way a compiler's intermediate
# representation is printed: one line per node, `%name = op operands : shape dtype`.
# Every name is defined **once** (static single assignment, SSA) and an op reads only
# names defined above it, so the listing is a topological order. The inputs come
# first (placeholders, then Variables), `return` names the outputs. A jaxpr has the
# same parts: typed input variables, one equation per primitive, and the outputs.
#
# Here is a small model; every dtype is pinned so the listing reads the same on
# any machine:

# %%
import naivegraph.static as ns

F64 = np.float64
with ns.Graph("model") as g:
    x = ns.placeholder("x", shape=(4, 3), dtype=F64)
    w = ns.Variable(np.full((3, 2), 0.5), name="w")
    b = ns.Variable(np.zeros(2), name="b")
    h = (x @ w + b).tanh()
    loss = (h * h).mean()
print(g)

# %% [markdown]
# ## The plan a compiled function runs
#
# `g.compile(inputs, outputs)` orders the nodes the outputs need into a **plan** and
# decides when each intermediate value can be dropped: right after the step that
# reads it last, unless it is an output (a fetched value goes back to the caller).
# `f.listing()` numbers the steps and prints `free %name` after the step where a
# value dies. XLA's buffer assignment and TorchInductor's memory planning make the
# same decision, on real buffers.

# %%
f = g.compile([x], [loss], optimize=False)
print(f.listing())

# %% [markdown]
# ### Exercise 13-1: which value is freed first?
#
# Read this graph's listing (no plan printed yet) and predict the plan of
# `f = g1.compile([x], [total, e], optimize=False)`: which value is freed **first**,
# and after which step (steps count from 1, in the order of the listing's ops)?
# Answer a pair `("name", step)`: the name as a string without its `%`, the step a whole
# number.

# %%
with ns.Graph("freeing") as g1:
    x = ns.placeholder("x", shape=(3,), dtype=F64)
    w = ns.Variable(np.array([1.0, 2.0, 3.0]), name="w")
    m = x * w
    e = m.exp()
    s = m.sin()
    t = e * s
    total = t.sum()
print(g1)

# %% exercise="13-1"
# Exercise 13-1
### BEGIN SOLUTION
freed_first = "mul_1", 3
### END SOLUTION
ex.check_freed_first(freed_first)

# %%
if ex.solved("13-1"):
    print(g1.compile([x], [total, e], optimize=False).listing())
    print()
    print("Why: %mul_1 is read by two steps, exp and sin, so it lives until the second;")
    print("%exp_1 is an output, so it is never freed, however early its last use.")
else:
    print("(solve exercise 13-1 first: this cell prints the plan, and why)")


# %% [markdown]
# ## Before and after `ns.optimize`
#
# A compiler rewrites the graph before it plans it. `ns.optimize` runs the lab's
# passes: **constant folding** (compute what depends on constants alone),
# **algebraic simplification** (`x * 1 -> x`), **common-subexpression elimination**
# (two equal nodes become one), **dead-node elimination** (drop what no output
# needs), and **fusion** of elementwise chains into one step. XLA runs passes of the
# same names, and many more.
#
# Here is a graph written carelessly, and the passes that clean it:

# %%
def careless():
    with ns.Graph("careless") as g2:
        x = ns.placeholder("x", shape=(3,), dtype=F64)
        a = x * F64(1.0)
        c = ns.constant(F64(2.0)) * ns.constant(F64(3.0))
        y = (a * c).exp() + (a * c).exp()
        z = (y + F64(0.0)).sum()
    return g2, z

g2, z = careless()
print(g2)

# %% [markdown]
# ### Exercise 13-2: how many nodes do the cleaning passes remove?
#
# Run only the four cleaning passes, without fusion (which merges nodes into
# steps, a different kind of change):
#
# ```python
# CLEANING = [ns.passes.constant_folding, ns.passes.algebraic_simplification,
#             ns.passes.common_subexpression_elimination, ns.passes.dead_node_elimination]
# new, report = ns.optimize(g2, passes=CLEANING, fetches=[z])
# ```
#
# How many nodes does `new` have fewer than `g2`? Work it out from the listing
# above, pass by pass, before you run anything. (Lesson 6 said which identities the
# simplification keeps on purpose.)

# %% exercise="13-2"
# Exercise 13-2
### BEGIN SOLUTION
removed = 6
### END SOLUTION
ex.check_nodes_removed(removed)

# %%
if ex.solved("13-2"):
    CLEANING = [ns.passes.constant_folding, ns.passes.algebraic_simplification,
                ns.passes.common_subexpression_elimination, ns.passes.dead_node_elimination]
    new, report = ns.optimize(g2, passes=CLEANING, fetches=[z])
    print(report)
    print(new)
    print()
    print("Folding replaced 2.0 * 3.0 by a constant 6.0 (it removes nothing itself: its")
    print("inputs die later), simplification removed x * 1.0, CSE merged the second a * c")
    print("and then the second exp of it, and dead-node elimination dropped the three")
    print("constants nobody reads any more. y + 0.0 stays: at y = -0.0 it gives +0.0, so")
    print("removing it could change a result.")
else:
    print("(solve exercise 13-2 first: this cell runs the passes, and says what each did)")

# %% [markdown]
# The compiled plan before and after, with fusion too (`optimize=True`, the
# default): each fused chain runs as one step. Once 13-2 passes, the cell below
# prints both plans and what fusion merged.

# %%
if ex.solved("13-2"):
    g2, z = careless()
    x2 = g2.nodes[0]
    print(g2.compile([x2], [z], optimize=False).listing())
    print()
    print(g2.compile([x2], [z], optimize=True).listing())
    print()
    print("Each fused chain (mul>exp, add>add) runs as one step: three steps instead of")
    print("nine. The + 0.0 is still there, inside a fused step.")
else:
    print("(solve exercise 13-2 first: this cell compiles the graph with and without the")
    print("passes, fusion included)")

# %% [markdown]
# ## Tracing: a graph from a dynamic function
#
# `jax.jit(f)` and `torch.compile(f)` do not ask you to build a graph: they **trace**
# `f`, running it once on stand-ins that record every op instead of computing. The
# lab's `ns.trace(fn, *examples)` does the same with placeholders shaped like the
# examples, and keeps one graph per input shape and dtype (jit does too: a new shape
# means a new trace and a new compile).
#
# What the trace records is the ops of *one* run. Python code that runs while
# tracing, an `if` on a shape, a loop count, a global, leaves no trace of itself,
# only of the path it chose.
#
# ### Exercise 13-3: which branch did the trace bake in?
#
# ```python
# def head(x):
#     if x.shape[0] == 1:                       # a single example: nothing to centre on
#         return x.tanh().sum()
#     return (x - x.mean(dim=0)).relu().sum()
#
# traced = ns.trace(head, np.ones((1, 3)))
# for rows in (8, 8, 1, 2):
#     traced(np.ones((rows, 3)))
# ```
#
# Without running it: which activation op does `traced.graph` (the graph of the
# example) apply, `"tanh"` or `"relu"`, and how many graphs does `traced` hold at the
# end (`traced.cache_size`)? Answer a pair `(op, count)`.

# %% exercise="13-3"
# Exercise 13-3
### BEGIN SOLUTION
baked = "tanh", 3
### END SOLUTION
ex.check_baked_branch(baked)


# %%
def head(x):
    if x.shape[0] == 1:
        return x.tanh().sum()
    return (x - x.mean(dim=0)).relu().sum()

if ex.solved("13-3"):
    traced = ns.trace(head, np.ones((1, 3)))
    for rows in (8, 8, 1, 2):
        traced(np.ones((rows, 3)))
    print(traced, "\n")
    for signature, graph in traced.graphs.items():
        print(f"input shape {signature[0][0]} -> {graph.name}")
    print()
    print(traced.graph)
else:
    print("(solve exercise 13-3 first: this cell runs the snippet)")


# %% [markdown]
# A branch on a shape is safe: the shape is part of the signature, so each shape gets
# its own trace (jit calls such values *static*). A branch on a **value** is not: the
# value does not exist while tracing. JAX raises an error there, torch.compile
# breaks the graph in two and runs the `if` in Python, and the lab refuses with a
# message that names the line (its first two lines are printed here; the rest says
# what to use instead):

# %%
def branchy(x):
    if x.sum() > 0:
        return x * 2.0
    return -x

try:
    ns.trace(branchy, np.ones(2))
except TypeError as err:
    print("TypeError:", *str(err).splitlines()[:2], sep="\n")

# %% [markdown]
# `ng.where` (both branches, chosen per element) or `ns.cond` (one branch, chosen
# when the graph runs) keep the choice inside the graph (lesson 7).
#
# ## Where tracing and compiling pay off
#
# Tracing, optimising and planning cost time once; each run then skips Python's
# bookkeeping: no graph is built, no op is dispatched through the engine, no
# gradient node is allocated. A **training step** on a small model, run many times
# with one shape, is the case that pays off:

# %%
import time

rng = np.random.default_rng(0)
X = rng.standard_normal((8, 3))
W1, W2 = rng.standard_normal((3, 16)), rng.standard_normal((16, 1))

def mlp(x, w1, w2):
    return ((x @ w1).tanh() @ w2).mean()

def eager_step():
    w1 = ng.tensor(W1, dtype=ng.float64, requires_grad=True)
    w2 = ng.tensor(W2, dtype=ng.float64, requires_grad=True)
    loss = mlp(ng.tensor(X, dtype=ng.float64), w1, w2)
    loss.backward()
    return loss, w1.grad, w2.grad

def compile_step():
    traced = ns.trace(mlp, X, W1, W2)
    with traced.graph:
        grads = ns.gradients(traced.outputs[0], traced.inputs[1:])
    return traced.graph.compile(traced.inputs, [traced.outputs[0], *grads])

def seconds(fn, runs=20, repeats=5):
    """Time per call, the fastest of a few repeats (other work only adds time)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(runs):
            fn()
        best = min(best, (time.perf_counter() - start) / runs)
    return best

setup = seconds(compile_step, runs=1, repeats=3)
step = compile_step()
per_step = {"dynamic": seconds(eager_step), "traced + compiled": seconds(lambda: step(X, W1, W2))}
print(f"trace + gradients + compile: {setup * 1e3:.2f} ms once")
for name, t in per_step.items():
    print(f"one step, {name:18}: {t * 1e6:8.1f} µs")

# %%
from naivegraph.lessons import plots

plots.amortisation({"dynamic": 0.0, "traced + compiled": setup}, per_step, runs=200,
                   title="Tracing and compiling once, then running many steps")

# %% [markdown]
# Both give the same numbers (the same numpy calls do the arithmetic); the compiled
# step only leaves out the work around them. Read the figure from the left: a graph
# run **once** never repays its setup, and neither does a model whose shapes change
# every call (each new shape is a new trace). On large arrays the arithmetic
# dominates both, and the saving per step shrinks to nothing (lesson 7 measures
# it). What a static plan keeps at every size is its **memory plan**: it knows in
# advance which values die when.
#
# Where they do not pay off, or do not apply:
#
# * **data-dependent control flow**: an `if` or a loop count that depends on values
#   cannot be traced; it needs `cond` / `while_loop` in the graph, or stays in Python
#   (torch.compile's graph breaks), which cuts the graph the compiler sees;
# * **small graphs run once**, and **shapes that keep changing** (a retrace each
#   time);
# * **debugging**: a compiled step has no Python line per op to stop at; run it
#   eagerly until it is right (`jax.disable_jit`, or simply not compiling).

# %% [markdown]
# ## Further reading
#
# * JAX documentation, "How JAX primitives work": what a primitive needs (an
#   evaluation rule, an abstract evaluation for shapes, a JVP, a transpose, a
#   lowering) and how `jit` and `grad` use them: the lab's op table, entry by entry.
# * JAX documentation, "Autodidax: JAX core from scratch": builds tracing, jaxprs,
#   `jit`, forward and reverse mode in a few hundred lines; a good companion to
#   lessons 8, 11 and this one.
# * PyTorch tutorials, "Introduction to torch.compile": compiling a function and a
#   module, the speed-up after the first (slow) call, and graph breaks.
# * PyTorch documentation, "torch.fx": symbolic tracing of a module into a graph you
#   can print, inspect and rewrite, with its own notes on control-flow limits.
# * PyTorch documentation, "Dynamo Overview" and "Guards Overview" (the
#   `torch.compiler` pages): how Dynamo captures an fx graph from Python bytecode, and
#   how guards on each input's dtype and shape decide when to reuse a compiled graph
#   and when to recompile, the equivalent of the lab's one graph per input signature.
