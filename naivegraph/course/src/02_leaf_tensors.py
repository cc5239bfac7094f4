# %% [markdown]
# # Lesson 2: Leaf tensors
#
# Why did `l1.grad` stay `None` in lesson 1 while `w1.grad` was filled? Because only
# **leaf** tensors keep their gradients. This lesson covers:
#
# * how `requires_grad` spreads from inputs to outputs,
# * what makes a tensor a leaf, and what `grad_fn` and `next_functions` point to,
# * the `AccumulateGrad` node that writes into a leaf's `.grad`,
# * why the gradients of intermediate tensors are thrown away.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## requires_grad spreads forward
#
# An op's output requires a gradient as soon as **one** of its inputs does. A tensor
# is a **leaf** when no recorded op made it: you created it, or it does not require a
# gradient at all (then there is nothing to record).
#
# The example below is the classic one from the old PyTorch tutorials, written with
# the `Variable` wrapper. `Variable` is history: it now simply returns a tensor.

# %%
from naivegraph.autograd import Variable

a = Variable(ng.ones(3, 4), requires_grad=True)
b = Variable(ng.zeros(3, 4))
c = a.add(b)
d = c.sum()
d.backward()
print(type(a).__name__)

# %% [markdown]
# ### Exercise 02-1: predict the flags
#
# Before running the next cell, predict `is_leaf` and `requires_grad` for `a`, `b`,
# `c` and `d`. Give each as a tuple of four booleans, in the order a, b, c, d.

# %% exercise="02-1"
# Exercise 02-1: (a, b, c, d)
### BEGIN SOLUTION
is_leaf = (True, True, False, False)
requires_grad = (True, False, True, True)
### END SOLUTION
ex.check_leaf_flags(is_leaf, requires_grad)

# %%
for name, t in zip("abcd", (a, b, c, d)):
    print(f"{name}: is_leaf={t.is_leaf!s:5}  requires_grad={t.requires_grad!s:5}  "
          f"grad_fn={t.grad_fn.name() if t.grad_fn else None}")
print("a.grad =", a.grad)

# %% [markdown]
# `a.grad` is all ones (d = sum of c = sum of a + b). `c` and `d` also required a
# gradient, but as intermediate results their gradients were used on the way and
# then dropped.
#
# ## grad_fn and next_functions
#
# `t.grad_fn` is the backward node of the op that made `t`. Its `next_functions`
# lists, for each input of that op, where the gradient goes next: a tuple
# `(node, index)` per input. For a leaf that requires grad the node is an
# **AccumulateGrad**, whose only job is to add the incoming gradient into
# `leaf.grad` (that is why gradients accumulate). For an input that needs no
# gradient the entry is `None`. An input that can never receive a gradient, such
# as the condition of `where` or the class labels of a loss, gets no entry at all
# (in PyTorch too).

# %%
x = ng.ones(1)
w = ng.rand(1, requires_grad=True)
b = ng.rand(1, requires_grad=True)
y = w.mul(x)
z = y.add(b)
print("is_leaf      :", x.is_leaf, w.is_leaf, b.is_leaf, y.is_leaf, z.is_leaf)
print("requires_grad:", x.requires_grad, w.requires_grad, b.requires_grad,
      y.requires_grad, z.requires_grad)
print("grad_fn      :", x.grad_fn, w.grad_fn, b.grad_fn, y.grad_fn.name(), z.grad_fn.name())

# %% [markdown]
# ### Exercise 02-2: read next_functions
#
# Write the **names** of the nodes in `z.grad_fn.next_functions` and in
# `y.grad_fn.next_functions`, in order, as lists of strings (use `None` where there
# is no node). Names look like `"MulBackward0"` or `"AccumulateGrad"`.

# %% exercise="02-2"
# Exercise 02-2
### BEGIN SOLUTION
z_next = ["MulBackward0", "AccumulateGrad"]
y_next = ["AccumulateGrad", None]
### END SOLUTION
ex.check_next_functions(z_next, y_next)

# %% [markdown]
# Once your check passes, print them:

# %%
if ex.solved("02-2"):
    print(z.grad_fn.next_functions)
    print(y.grad_fn.next_functions)
    print("z's first input node is y.grad_fn:", z.grad_fn.next_functions[0][0] is y.grad_fn)
    acc = z.grad_fn.next_functions[1][0]
    print(acc.name(), "stores into", "b" if acc.variable is b else "?")
else:
    print("(solve exercise 02-2 first: this cell shows its answer)")

# %% [markdown]
# The drawing shows the same structure: the green leaves hang off `AccumulateGrad`
# nodes. `x` has no node of its own in the backward graph, because no gradient needs
# to reach it; it appears only in the dashed box of the value `MulBackward0` saved.

# %%
if ex.solved("02-2"):
    display(ng.render(z, kind="backward", params={"x": x, "w": w, "b": b, "y": y, "z": z}))
else:
    print("(solve exercise 02-2 first: this cell shows its answer)")


# %% [markdown]
# ### Exercise 02-3: walk the graph yourself
#
# `next_functions` is all you need to find every leaf a backward pass will reach.
# Write `find_leaves(t)` returning the list of leaf tensors (each once) whose
# `.grad` a `t.backward()` would fill. `t` is always computed from leaves by recorded
# ops, so it has a `grad_fn` (a leaf `t` is not asked for). Start from `t.grad_fn`, follow
# `next_functions` with a stack, skip `None`, and collect `node.variable` of every
# `AccumulateGrad` (check `node.name() == "AccumulateGrad"`).
#
# The checker also runs it on lesson 1's model, where `l1` feeds two ops: the walk
# reaches `l1`'s node along two paths, and each leaf must still be reported once; and
# on a chain of 300 ops, where a walk that stops at some depth misses the leaf; and on
# diamonds stacked twelve high, where every node is reached along thousands of paths:
# a walk that remembers the nodes it visited reads each one once. The walk
# only reads the graph: it leaves every tensor and node as it found them (no in-place
# change, no hook, no `.grad`), and it is your own walk, not the lab's engine code.

# %% exercise="02-3"
# Exercise 02-3
def find_leaves(t):
    ### BEGIN SOLUTION
    leaves, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves
    ### END SOLUTION

ex.check_find_leaves(find_leaves)

# %% [markdown]
# ## Why non-leaf gradients are not kept
#
# Intermediate tensors are usually many and large (every layer's activations), and
# you rarely look at their gradients. Keeping them would double the memory of a
# training step, so autograd frees each one as soon as it has been passed on. The
# leaves (your parameters) are what an optimizer needs, so their gradients are
# kept. Lesson 3 shows `retain_grad()` and hooks for when you do want an
# intermediate gradient.

# %%
import warnings
# the graph made anew and no .grad left over, so this cell can be run again (a
# backward frees the graph it ran through)
w.grad = b.grad = None
y = w.mul(x)
z = y.add(b)
z.backward()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print("y.grad:", y.grad)
print("warning:", caught[0].message)
print("w.grad:", w.grad, " b.grad:", b.grad)

# %% [markdown]
# ## Summary
#
# * Output requires grad if any input does; leaves are tensors no recorded op made.
# * `grad_fn.next_functions` links each backward node to its inputs' nodes;
#   `AccumulateGrad` writes into a leaf's `.grad`, `None` marks inputs without grad.
# * Only leaves keep `.grad`; intermediate gradients are freed to save memory.
#
# ## Further reading
#
# * PyTorch, [Autograd mechanics](https://pytorch.org/docs/stable/notes/autograd.html),
#   "How autograd encodes the history" and "Saved tensors".
# * PyTorch, [A gentle introduction to `torch.autograd`](https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html):
#   the computational graph and `grad_fn`.
# * A. Karpathy, [micrograd](https://github.com/karpathy/micrograd): its `backward()`
#   walks the graph in topological order with a visited set, as in exercise 02-3.
# * Dive into Deep Learning, [Automatic differentiation](https://d2l.ai/chapter_preliminaries/autograd.html).
# * CMU [Deep Learning Systems](https://dlsyscourse.org/): the automatic
#   differentiation lectures build the same graph walk.
