# %% [markdown]
# # Lesson 1: What a computational graph is
#
# A computational graph has two kinds of nodes: **tensors** (the data) and
# **Functions** (the operations). Data flows forward through the Functions to a loss;
# gradients flow backward, Function by Function, by the chain rule.
#
# In this lesson you will:
#
# * see that every recorded op leaves a backward node (its `grad_fn`) that computes the
#   gradient of the op's inputs from the gradient of its output,
# * build the four-layer toy model used throughout the lab and draw its forward and
#   backward graphs,
# * derive its gradients by hand and check them against autograd,
# * see what `backward()` frees, and what it keeps.
#
# Exercises are code cells marked **Exercise**: replace each `...` with your answer and
# run the cell. The checker prints `✓ correct`, `✗ not yet` (with a hint for the mistake
# you made, a stronger one if you try again) or `○ not done yet`. When you are stuck,
# `ex.reveal("01-2")` prints an exercise's answer.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## A Function has a forward and a backward
#
# In dynamic mode (PyTorch style) an op runs at once and, if one of its inputs
# requires a gradient, records a *backward node* in the result's `grad_fn`. A
# backward node does not undo the op: it computes a **vector-Jacobian product**, the
# gradient of the op's inputs from the gradient of its output. `exp` is the simplest
# example: its forward is $b = e^a$, and its backward turns $\partial L/\partial b$
# into $\partial L/\partial a = \partial L/\partial b \cdot e^a$.

# %%
a = ng.tensor(2.0, requires_grad=True)
b = a.exp()
print(b)
print("grad_fn:", b.grad_fn.name())

# %% [markdown]
# `b` prints as `tensor(7.3891, grad_fn=<ExpBackward0>)`: the value is already
# computed (eager execution), and `ExpBackward0` is the Function that backward will
# call. Calling `b.backward()` starts from $\partial b/\partial b = 1$, runs it and
# stores $\partial b/\partial a = e^2$ in `a.grad`.
#
# The value is a **float32**, as in PyTorch: Python floats become the default dtype,
# float32 (`a.dtype`), while a numpy array keeps its own (often float64). Where the lab
# needs more digits, as for the finite differences of lesson 12, it asks for them:
# `ng.tensor(2.0, dtype=ng.float64)`, or `ng.set_default_dtype(ng.float64)` for all.

# %%
b.backward()
a.grad

# %% [markdown]
# ## The toy model
#
# The lab's running example is a tiny network: an input, three scalar weights and
# four "layers".
#
# ```
# l1 = input * w1
# l2 = l1 + w2
# l3 = l1 * w3
# l4 = l2 * l3
# loss = mean(l4)
# ```
#
# Swap the products for convolutions and it already looks like a neural network.
# `input` does not require a gradient (it is data); the weights do.

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

for name, t in [("w1", w1), ("l1", l1), ("loss", loss)]:
    print(f"{name:5s} grad_fn={t.grad_fn.name() if t.grad_fn else None}")

# %% [markdown]
# ### Exercise 01-1: the forward pass by hand
#
# Every element of `input` is 1, so every element of each layer is the same number.
# Work out one element of each layer (and the loss) on paper, then check.

# %% exercise="01-1"
# Exercise 01-1: one element of each layer, computed by hand
### BEGIN SOLUTION
l1_value = 2.0
l2_value = 5.0
l3_value = 8.0
l4_value = 40.0
loss_value = 40.0
### END SOLUTION
ex.check_forward_values(l1_value, l2_value, l3_value, l4_value, loss_value)

# %% [markdown]
# Once your check passes, compare with what the forward pass computed:

# %%
if ex.solved("01-1"):
    for name, t in [("l1", l1), ("l2", l2), ("l3", l3), ("l4", l4)]:
        print(f"{name} = {t[0, 0].item():g} (every element)")
    print("loss =", loss.item())
else:
    print("(solve exercise 01-1 first: this cell shows its answers)")

# %% [markdown]
# ## Drawing the graph both ways
#
# `ng.render(tensor, kind=...)` draws the graph. The **forward** graph shows tensors
# and the ops between them, edges in the direction data flows. The **backward**
# graph shows the `grad_fn` nodes that `loss.backward()` will visit, edges in the
# direction gradients flow. Leaves are green. The dashed boxes are the values each
# backward node **saved** for later (a product needs its factors to compute its
# gradient): `input` does not require a gradient, so it gets no node of its own in the
# backward graph, only such a box on the `MulBackward0` that saved it.

# %%
names = {"input": input, "w1": w1, "w2": w2, "w3": w3,
         "l1": l1, "l2": l2, "l3": l3, "l4": l4, "loss": loss}
if ex.solved("01-1"):  # the forward drawing labels each tensor with its value
    display(ng.render(loss, kind="forward", params=names))
else:
    print("(solve exercise 01-1 first: the forward drawing shows its answers)")

# %%
if ex.solved("01-1"):  # the saved values it draws are 01-1's answers too
    display(ng.render(loss, kind="backward", params=names))
else:
    print("(solve exercise 01-1 first: the backward drawing shows its answers)")

# %% [markdown]
# ## Gradients by hand
#
# Go backward from the loss with the chain rule, one element at a time:
#
# * $\partial\,loss / \partial\,l4 = 1/4$ for each element (the mean of four numbers);
# * $l4 = l2 \cdot l3$, so $\partial l4/\partial l2 = l3$ and
#   $\partial l4/\partial l3 = l2$ (your values from exercise 01-1);
# * $l1$ feeds **two** paths: through $l2$ (derivative 1) and through $l3$
#   (derivative $w3$); the chain rule adds the two.
#
# The weights are scalars *broadcast* over the 2x2 input: each one touches all four
# elements, so its gradient is the **sum** of four per-element contributions.
#
# ### Exercise 01-2: the gradients of the weights

# %% exercise="01-2"
# Exercise 01-2: d loss / d w1, w2, w3 (scalars), derived by hand
### BEGIN SOLUTION
w1_grad = 28.0
w2_grad = 8.0
w3_grad = 10.0
### END SOLUTION
ex.check_leaf_grads(w1_grad, w2_grad, w3_grad)

# %% [markdown]
# ### Exercise 01-3: the gradient of an intermediate tensor

# %% exercise="01-3"
# Exercise 01-3: d loss / d l1 for ONE element of l1, derived by hand
### BEGIN SOLUTION
l1_grad = 7.0
### END SOLUTION
ex.check_l1_grad(l1_grad)

# %% [markdown]
# Once your checks of 01-2 and 01-3 pass, the drawing can show your answers on the
# graph: `gradients=True` labels every backward node with the gradient that arrives at
# it, $\partial loss/\partial$ (its output), and each `AccumulateGrad` with what it
# will add to its leaf. It computes them without touching any `.grad`.

# %%
if ex.solved("01-2") and ex.solved("01-3"):
    display(ng.render(loss, gradients=True, params=names))
else:
    print("(solve exercises 01-2 and 01-3 first: this cell shows their answers)")

# %% [markdown]
# Now let autograd do it for real.
# `loss.backward()` walks the backward graph from `loss` to the leaves and
# *accumulates* into each leaf's `.grad`. The drawing after it writes each leaf's
# gradient on its node.

# %%
loss.backward()
print("autograd: w1.grad =", w1.grad.item(), " w2.grad =", w2.grad.item(),
      " w3.grad =", w3.grad.item())
print("yours:   ", *(f"{n}.grad = {'(not done yet)' if v is ... else v}"
                    for n, v in (("w1", w1_grad), ("w2", w2_grad), ("w3", w3_grad))))
ng.render(loss, kind="forward", params=names)

# %% [markdown]
# The intermediate tensors do not keep their gradients: `l1.grad` is `None` (and
# naivegraph warns, as PyTorch does, that you probably meant a leaf). Lesson 2
# explains why; lesson 3 shows `retain_grad()`, which keeps them (and draws
# $\partial loss/\partial l1$ on the `l1` node).

# %%
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(l1.grad, l4.grad, loss.grad)

# %% [markdown]
# ## What backward frees, and what it keeps
#
# The backward nodes are still there after `backward()`: `loss.grad_fn` still exists
# and still links to the nodes of its inputs. What is gone are the values they
# **saved** for the backward pass (the factors of each product): only their shape is
# left. A second `loss.backward()` would need those values, so it raises, and the
# error says what to do (lesson 3 shows `retain_graph`). The drawing fades the saved
# values that were freed and marks their nodes "saved values freed"; the nodes stay.

# %%
print("loss.grad_fn:", loss.grad_fn.name(), "->",
      [fn.name() for fn, _ in loss.grad_fn.next_functions])
print("l4's node saved for input 0:", l4.grad_fn.saved_array(0))
try:
    loss.backward()
except RuntimeError as err:
    print("RuntimeError:", err)
ng.render(loss, kind="both", params=names)

# %% [markdown]
# PyTorch does the same. The scalar library of the reference articles (*NaiveGraph*,
# which you rebuild in lesson 8) goes further: after a backward pass without
# `retain_graph` it deletes every non-leaf node from the graph, with its links, and
# keeps only the leaves.
#
# ## One training step, animated
#
# The graph grows op by op during the forward pass, gradients flow back through it,
# and backward frees what the non-leaf part saved. The next forward pass builds a new
# graph (lesson 7 compares this with a static graph, built once).
#
# [An animation](figures/animation_dynamic_step.gif) plays it at its own pace.
#
# ## One training step, at your pace
#
# `ng.walkthrough` steps through a training step of your own program, with its numbers
# (among them your answers to 01-2 and 01-3, so it waits until both checks pass).
# The graph above was freed by its backward, so build the toy model once more: a new
# forward pass, a new graph.

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
names = {"input": input, "w1": w1, "w2": w2, "w3": w3,
         "l1": l1, "l2": l2, "l3": l3, "l4": l4, "loss": loss}
if ex.solved("01-2") and ex.solved("01-3"):
    display(ng.walkthrough(loss, params=names))
else:
    print("(solve exercises 01-2 and 01-3 first: this cell shows their answers)")

# %% [markdown]
# Page through it with **Next** and **Previous**, or click the view and use the ← / →
# keys. First the graph grows, one node per op, in the order the forward pass ran; then
# backward runs its nodes one by one. Look for the 7 arriving at `l1` as the sum
# 5 + 2 of what its two consumers, `l3` and `l2`, send back (your answer to exercise
# 01-3), and for 28 accumulating into `w1.grad`. The last step shows what backward
# frees. The walkthrough runs nothing for real: `w1.grad` is still `None` afterwards.
#
# ## Summary
#
# * Tensors and Functions form a graph; every recorded op has a `grad_fn`, which
#   computes the gradient of the op's inputs from the gradient of its output.
# * Forward computes values now (eager); backward applies the chain rule from the
#   loss to the leaves.
# * A broadcast weight collects the sum of the gradients of every element it touched.
# * Backward frees the values the graph saved, not the graph's nodes.
#
# ## Further reading
#
# * PyTorch, [Autograd mechanics](https://pytorch.org/docs/stable/notes/autograd.html):
#   how autograd encodes the history.
# * PyTorch, [A gentle introduction to `torch.autograd`](https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html).
# * A. Karpathy, [micrograd](https://github.com/karpathy/micrograd): a scalar autograd
#   engine in about 100 lines.
# * Dive into Deep Learning, [Automatic differentiation](https://d2l.ai/chapter_preliminaries/autograd.html).
# * CMU [Deep Learning Systems](https://dlsyscourse.org/) (10-414/714): the lectures on
#   automatic differentiation.
