# %% [markdown]
# # Lesson 10: Static graphs for real
#
# Lesson 6 built a static graph and replayed it. Real static-graph systems (TensorFlow 1,
# Theano) went further: the batch size is left open, the weight update is *part of the
# graph*, and loops and branches are graph nodes too. This lesson writes the classic
# TensorFlow 1 program in naivegraph.static, beside the PyTorch-style version:
#
# * placeholders with an unknown batch size, `ns.gradients`, update nodes, `g.run`,
# * optimisers inside the graph (`ns.optim`),
# * control flow as nodes (`ns.cond`, `ns.while_loop`) and the tracing trap,
# * a graph that leaves the lab: save, load, ONNX, ONNX Runtime.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## The two-layer network, TensorFlow 1 style
#
# The program PyTorch's own tutorial puts beside its autograd version: a ReLU network
# `x -> relu(x W1) W2`, squared error, plain gradient descent. Everything is a node;
# nothing is computed until `g.run`. The placeholder's `None` says "any batch size".

# %%
import naivegraph.static as ns

N, D_in, H, D_out = 64, 1000, 100, 10    # the tutorial's sizes
learning_rate = 1e-6
rng = np.random.default_rng(0)
# float32, as TensorFlow's random_normal and the placeholders' default dtype
w1_init, w2_init = (rng.standard_normal(s).astype(np.float32) for s in ((D_in, H), (H, D_out)))
x_data, y_data = (rng.standard_normal(s).astype(np.float32) for s in ((N, D_in), (N, D_out)))

g = ns.Graph()
with g:
    x = ns.placeholder("x", shape=(None, D_in))
    y = ns.placeholder("y", shape=(None, D_out))
    w1 = ns.Variable(w1_init, name="w1")
    w2 = ns.Variable(w2_init, name="w2")
    h_relu = ns.relu(ns.matmul(x, w1))
    y_pred = ns.matmul(h_relu, w2)
    loss = ns.sum((y_pred - y) ** 2.0)
    grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
print(g, "| y_pred's shape:", y_pred.shape)

# %% [markdown]
# `grad_w1` is a node too: `ns.gradients` added the backward pass to the graph,
# symbolically, once. Its shape-dependent parts (how many rows to sum over) read the
# batch size from the values when the graph runs.
#
# ### Exercise 10-1: the update as a node
#
# In TensorFlow 1 a weight update is an **assign node**: `v.assign(node)` makes a node
# that, each time it runs, computes `node` and stores the result in the Variable `v`.
# Build one gradient-descent step for each weight, $w \leftarrow w - \eta\,
# \partial L / \partial w$ with $\eta$ = `learning_rate`, as assign nodes of `g`,
# using the gradient nodes above.

# %% exercise="10-1"
# Exercise 10-1
with g:
    ### BEGIN SOLUTION
    new_w1 = w1.assign(w1 - learning_rate * grad_w1)
    new_w2 = w2.assign(w2 - learning_rate * grad_w2)
    ### END SOLUTION

ex.check_update_nodes(g, x, y, w1, w2, new_w1, new_w2, learning_rate)

# %% [markdown]
# Training is now a loop of `g.run(fetches, feed_dict)`, like `Session.run`: fetch the
# loss to watch it and the update nodes to apply them. Python only feeds data and
# reads numbers.

# %%
if ex.solved("10-1"):
    w1.assign(w1_init); w2.assign(w2_init)   # plain arrays: assigned at once
    static_losses = []
    for step in range(50):
        loss_value, new_w1_value, new_w2_value = g.run([loss, new_w1, new_w2],
                                                       {x: x_data, y: y_data})
        static_losses.append(float(loss_value))
    print("static:  first %.1f, last %.1f" % (static_losses[0], static_losses[-1]))
else:
    print("(solve exercise 10-1 first)")

# %% [markdown]
# `assign` does two different things, depending on what it is given. Given an
# **array** (`w1.assign(w1_init)` above), it stores the value **at once**: nothing to
# run, no node added. Given a **node** (`w1.assign(w1 - learning_rate * grad_w1)`), it
# stores nothing yet: it **adds an update node** to the graph, which stores its value
# each time a run fetches it:

# %%
with ns.Graph("assign") as demo:
    v = ns.Variable(np.float64(1.0), name="v")
v.assign(np.float64(5.0))
print("after v.assign(5.0):          v =", v.value, "(stored at once)")
with demo:
    double = v.assign(v * np.float64(2.0))
print("after v.assign(v * 2.0):      v =", v.value, "(a node:", type(double).__name__ + ")")
demo.run(double)
print("after demo.run(double):       v =", v.value)

# %% [markdown]
# That makes TensorFlow 1's classic notebook pitfall easy to fall into: a cell that
# builds nodes adds **new** nodes each time it runs. Run the exercise cell above a
# few times while trying answers and `g` holds an update node (and its arithmetic)
# for every attempt; nothing breaks, the graph just grows, and a `g.run` of an old
# node still runs the old update. Here is the same cell run three times:

# %%
with ns.Graph("rerun") as grown:
    v = ns.Variable(np.float64(1.0), name="v")
    (grad_v,) = ns.gradients(v * v, [v])
for attempt in range(1, 4):            # the cell, run again
    with grown:
        step_v = v.assign(v - np.float64(0.1) * grad_v)
    print(f"run {attempt} of the cell: {len(grown.nodes)} nodes")


# %% [markdown]
# The fix is TF1's: build the graph **once** (the building in one cell, the training
# loop in another), or let the cell build a **fresh** `ns.Graph()` every time it
# runs, so that running it again replaces the graph instead of extending it:

# %%
def build():
    with ns.Graph("fresh") as fresh:
        v = ns.Variable(np.float64(1.0), name="v")
        (grad_v,) = ns.gradients(v * v, [v])
        step_v = v.assign(v - np.float64(0.1) * grad_v)
    return fresh, step_v

for attempt in range(1, 4):
    fresh, step_v = build()
    print(f"run {attempt} of the cell: {len(fresh.nodes)} nodes")

# %% [markdown]
# The same model, PyTorch style: the graph is rebuilt on every step, and the update
# happens in Python, outside any graph, under `no_grad`. Same data, same steps, same
# numbers.

# %%
W1 = ng.tensor(w1_init, requires_grad=True)
W2 = ng.tensor(w2_init, requires_grad=True)
X, Y = ng.tensor(x_data), ng.tensor(y_data)
dynamic_losses = []
for step in range(50):
    loss_t = ((X.mm(W1).relu().mm(W2) - Y) ** 2).sum()
    dynamic_losses.append(loss_t.item())
    loss_t.backward()
    with ng.no_grad():
        W1 -= learning_rate * W1.grad
        W2 -= learning_rate * W2.grad
        W1.grad.zero_(); W2.grad.zero_()
print("dynamic: first %.1f, last %.1f" % (dynamic_losses[0], dynamic_losses[-1]))
if ex.solved("10-1"):
    print("same losses:", np.allclose(static_losses, dynamic_losses, rtol=1e-10))

# %% [markdown]
# And because the batch size was left open, the same graph evaluates one example or a
# thousand:

# %%
for batch in (1, 64, 1000):
    value = g.run(y_pred, {x: rng.standard_normal((batch, D_in))})
    print(batch, "->", value.shape)

# %% [markdown]
# `ns.walkthrough(loss, feed_dict)` steps through one run of this graph on the
# tutorial's batch, then the backward sweep. Page through it with **Next** /
# **Previous** or ← / →. Large values are summarised by shape and range. Look at the
# memory plan: `h_relu` and the difference `y_pred - y` stay alive after their last
# forward use because the sweep needs them, while the first product is freed at once.
# The walkthrough commits nothing: the assign nodes do not run, and `w1` and `w2` keep
# their values.

# %%
ns.walkthrough(loss, {x: x_data, y: y_data})

# %% [markdown]
# ## What a run sees
#
# Within one `g.run`, every read of a Variable sees its value from **before** the run,
# and all updates are stored together at its end, only if every step succeeded. This
# makes a run deterministic whatever order the executor picks. (TensorFlow 1 made no
# such promise: a read and an assign of the same Variable in one `Session.run` could
# happen in either order unless `tf.control_dependencies` fixed it.)
#
# ### Exercise 10-2: predict the values
#
# ```python
# with ns.Graph() as small:
#     v = ns.Variable(np.array(1.0), name="v")
#     double = v.assign(v * 2.0)
#     plus_one = v + 1.0
# first = small.run([double, plus_one])
# second = small.run(plus_one)
# ```
#
# Give `first[0]`, `first[1]` and `second` as three numbers.

# %% exercise="10-2"
# Exercise 10-2
### BEGIN SOLUTION
predicted = (2.0, 2.0, 3.0)
### END SOLUTION
ex.check_run_semantics(predicted)

# %%
if ex.solved("10-2"):
    with ns.Graph() as small:
        v = ns.Variable(np.array(1.0), name="v")
        double = v.assign(v * 2.0)
        plus_one = v + 1.0
    print(small.run([double, plus_one]), small.run(plus_one))

# %% [markdown]
# ## Optimisers inside the graph
#
# Writing an assign per weight gets old; TensorFlow's `optimizer.minimize(loss)`
# builds the gradients and all the updates as **one node**, the training step.
# `ns.optim.SGD` and `ns.optim.Adam` do the same, with the same numbers as
# `ng.optim` (their momentum buffers are Variables of the graph too).

# %%
with g:
    train_step = ns.optim.SGD([w1, w2], lr=learning_rate, momentum=0.9).minimize(loss)
w1.assign(w1_init); w2.assign(w2_init)
momentum_losses = [float(g.run([loss, train_step], {x: x_data, y: y_data})[0])
                   for step in range(50)]
print("SGD with momentum: first %.1f, last %.1f" % (momentum_losses[0], momentum_losses[-1]))

W1 = ng.tensor(w1_init, requires_grad=True)
W2 = ng.tensor(w2_init, requires_grad=True)
optimizer = ng.optim.SGD([W1, W2], lr=learning_rate, momentum=0.9)
eager_losses = []
for step in range(50):
    optimizer.zero_grad()
    loss_t = ((X.mm(W1).relu().mm(W2) - Y) ** 2).sum()
    eager_losses.append(loss_t.item())
    loss_t.backward()
    optimizer.step()
print("same losses as ng.optim.SGD:", np.allclose(momentum_losses, eager_losses, rtol=1e-10))

# %% [markdown]
# Momentum does not win here: after 50 steps its loss is a little *higher* than plain
# gradient descent's. With this learning rate, plain steps shrink the loss after a
# bumpy start (it falls, rises for two steps, then falls fast), and momentum's
# velocity overshoots, so its loss falls in waves. (PyTorch's `torch.optim.SGD`
# gives the same numbers.)

# %% [markdown]
# ## Control flow as nodes
#
# PyTorch's tutorial has a model that, on every forward pass, adds a random number
# (0, 1 or 2) of extra polynomial terms that reuse one weight:
# $y = a + bx + cx^2 + dx^3 + \sum_{p=4}^{top-1} e\,x^p$. In dynamic mode that is a
# Python `for` loop: the graph is different on every run. A static graph is built
# once, so the loop has to be a node: `ns.while_loop(cond_fn, body_fn, loop_vars)`
# runs `body_fn` while `cond_fn` holds, **when the graph runs**, and `ns.gradients`
# goes through it.

# %%
coef = rng.standard_normal(5) * 0.1
xs_data = np.linspace(-1.0, 2.0, 200)

def dynamic_poly(x, top, weights):
    a, b, c, d, e = weights
    y = a + b * x + c * x ** 2 + d * x ** 3
    for p in range(4, top):          # a Python loop: a different graph each time
        y = y + e * x ** p
    return y

weights = [ng.tensor(v, requires_grad=True) for v in coef]
print(dynamic_poly(ng.tensor(xs_data), 6, weights)[:3])

# %% [markdown]
# The static version: a graph with the exponent `p` and the running sum `y` as loop
# variables. The loop runs while `p < top`, and `top` is a placeholder: the number of
# terms is decided by the data fed to each run.

# %%
with ns.Graph() as poly:
    xp = ns.placeholder("x", shape=(None,))
    top = ns.placeholder("top", shape=())
    a, b, c, d, e = [ns.Variable(np.array(v), name=n) for v, n in zip(coef, "abcde")]
    base = a + b * xp + c * xp ** 2.0 + d * xp ** 3.0

def more(p, y):
    return p < top


# %% [markdown]
# ### Exercise 10-3: the loop body
#
# Complete `body(p, y)`: it returns the next loop variables, the exponent one higher
# and `y` with the term $e\,x^p$ added (use the graph's nodes `e` and `xp`). The
# checker builds `ns.while_loop(more, body, [4.0, base], maximum_iterations=10)` in
# `poly` and runs it for several values of `top` (`maximum_iterations` stops a loop
# that would never end).

# %% exercise="10-3"
# Exercise 10-3
def body(p, y):
    ### BEGIN SOLUTION
    loop_vars = p + 1.0, y + e * xp ** p
    ### END SOLUTION
    return loop_vars

ex.check_poly_loop(poly, more, body, base, xp, top, [a, b, c, d, e])

# %% [markdown]
# The two loops do not compute in the same precision: the placeholder `xp` has the
# placeholders' default dtype, float32, so the static polynomial's powers of $x$ are
# rounded to float32, while the dynamic one runs on a float64 tensor. "Same" below
# means `np.allclose`: equal to float32's precision (about 7 digits), not bit for bit.

# %%
if ex.solved("10-3"):
    with poly:
        final_p, poly_y = ns.while_loop(more, body, [4.0, base], maximum_iterations=10)
        grads = ns.gradients(ns.sum(poly_y), [a, b, c, d, e])
    for t in (4, 5, 6):
        static_grads = poly.run(grads, {xp: xs_data, top: np.array(float(t))})
        ws = [ng.tensor(v, requires_grad=True) for v in coef]
        dynamic_poly(ng.tensor(xs_data), t, ws).sum().backward()
        # with top = 4, e is never used: dynamic mode leaves e.grad None, static gives 0
        dynamic_grads = [0.0 if w.grad is None else w.grad.numpy() for w in ws]
        same = all(np.allclose(s, d) for s, d in zip(static_grads, dynamic_grads))
        print(f"top = {t}: gradient of e = {float(static_grads[-1]):10.3f}, "
              f"same as dynamic mode: {same}")

# %% [markdown]
# A branch is a node too: `ns.cond(pred, true_fn, false_fn)` runs only the branch that
# `pred` picks, when the graph runs, and `ns.gradients` goes through that branch.

# %%
with ns.Graph() as branchy:
    u = ns.placeholder("u", shape=())
    out = ns.cond(u > 0.0, lambda: u * u, lambda: -u)
    (d_out,) = ns.gradients(out, [u])
for value in (3.0, -3.0):
    print(f"u = {value}: out = {float(branchy.run(out, u=np.array(value)))}, "
          f"d out/du = {float(branchy.run(d_out, u=np.array(value)))}")

# %% [markdown]
# ### The tracing trap
#
# `ns.trace(fn, example)` builds a static graph by running a dynamic-mode function once
# on placeholders. Python control flow runs **at trace time**: the loop count, an `if`
# on a Python value, a random draw, all get baked into the graph. naivegraph traces
# again only for a new input shape or dtype.
#
# ### Exercise 10-4: what did the trace keep?
#
# ```python
# extra_terms = 1
# def forward(x):
#     y = x * 1.0
#     for p in range(extra_terms):
#         y = y + x ** (4.0 + p)
#     return y
# traced = ns.trace(forward, np.ones(3))
# extra_terms = 2
# ```
#
# How many extra terms does `traced(np.full(3, 2.0))` add, and how many does
# `traced(np.full(5, 2.0))` add? Two integers.

# %% exercise="10-4"
# Exercise 10-4
### BEGIN SOLUTION
terms = (1, 2)
### END SOLUTION
ex.check_trace_trap(terms)

# %%
if ex.solved("10-4"):
    extra_terms = 1
    def forward(x):
        y = x * 1.0
        for p in range(extra_terms):
            y = y + x ** (4.0 + p)
        return y
    traced = ns.trace(forward, np.ones(3))
    extra_terms = 2
    print("same shape: ", traced(np.full(3, 2.0)))   # 2 + 2**4: the trace's one term
    print("new shape:  ", traced(np.full(5, 2.0)))   # traced again, now with two terms
else:
    print("(solve exercise 10-4 first: this cell runs the snippet)")

# %% [markdown]
# The same program gives different answers depending on which shapes it saw first.
# That is why `ns.while_loop` and `ns.cond` exist: a loop count or branch that
# depends on data must be a node, not Python.
#
# ## A graph that leaves the lab
#
# A static graph is a program you can save and ship. `g.save(path)` writes it (JSON for
# the nodes, npz for the arrays, no pickle); `ns.load(path)` reads it back.
# `ns.to_onnx(g, inputs, outputs, path=...)` writes the ONNX format that ONNX Runtime,
# and many other engines, run without naivegraph at all.

# %%
import os, tempfile
folder = tempfile.mkdtemp()
w1.assign(w1_init); w2.assign(w2_init)

g.save(os.path.join(folder, "two_layer.ngraph"))
loaded = ns.load(os.path.join(folder, "two_layer.ngraph"))
print("loaded:", repr(loaded))   # print(loaded) would list every node
print("its inputs and weights:", [n.name for n in loaded.placeholders + loaded.variables])
print("same predictions:", np.allclose(loaded.run(y_pred.name, x=x_data), g.run(y_pred, {x: x_data})))

try:
    import onnxruntime
    ns.to_onnx(g, [x], [y_pred], path=os.path.join(folder, "two_layer.onnx"))
    session = onnxruntime.InferenceSession(os.path.join(folder, "two_layer.onnx"))
    (onnx_pred,) = session.run(None, {"x": x_data[:5]})
    # float32 sums of 1000 products, added in another order: equal to about 1e-5
    print("ONNX Runtime agrees:", np.allclose(onnx_pred, g.run(y_pred, {x: x_data[:5]}), rtol=1e-4))
except ImportError:
    print("onnxruntime is not installed: pip install naivegraph[export]")

# %% [markdown]
# ## Further reading
#
# * TensorFlow 1 guide, "Graphs and Sessions"; `tf.while_loop` and `tf.cond`.
# * Theano documentation, `theano.function` with `updates=` and `scan`.
# * PyTorch tutorial "Learning PyTorch with Examples": the TensorFlow static-graph
#   version of the two-layer network, and the dynamic polynomial model.
# * PyTorch, `torch.fx` and TorchScript tracing: the warnings about control flow.
# * The ONNX operator documentation (`If`, `Loop`) and the ONNX Runtime Python API.
