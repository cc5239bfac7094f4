# %% [markdown]
# # Lesson 9: Capstone - a classifier in both modes
#
# Put it all together: generate a 2-D data set, and train one small neural-network
# classifier twice, with code you write: in **dynamic** mode (your training step:
# modules, optimizer, autograd) and in **static** mode (your graph: placeholders, the
# loss, the optimizer inside the graph, compiled steps), from the same first weights
# with the same optimizer settings. Then compare the loss curves and draw the decision
# boundaries.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Data: two spirals
#
# Two intertwined spirals, generated with numpy from a fixed seed. A straight line
# cannot separate them; a hidden layer with a non-linearity can.

# %%
import naivegraph.static as ns
from naivegraph.lessons import datasets, plots

X, y = datasets.spirals(200, turns=1.0, noise=0.1, seed=0)
print(X.shape, np.bincount(y))


# %% [markdown]
# ### Exercise 09-1: accuracy
#
# Write `accuracy(logits, labels)`: the fraction of rows whose predicted class is the
# true label. A row predicts the index of its largest logit, as `argmax` picks it (the
# first of them when several tie). It should accept numpy arrays and tensors, and
# leave the arrays it is given as they are (`np.asarray(t)` converts a tensor;
# naivegraph converts one that requires grad as well, but PyTorch refuses it until it
# is detached from the graph, with `t.detach()`; the checker passes tensors that need
# no gradient.)

# %% exercise="09-1"
# Exercise 09-1
def accuracy(logits, labels):
    ### BEGIN SOLUTION
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))
    ### END SOLUTION

ex.check_accuracy_fn(accuracy)


# %% [markdown]
# ### Exercise 09-2: one training step (dynamic mode)
#
# Write `train_step(model, optimizer, X, y)`: zero the gradients, compute the
# cross-entropy loss of `model(X)` against `y`, backpropagate, step, and return the
# loss as a Python float. The checker trains a fresh model with it.

# %% exercise="09-2"
# Exercise 09-2
def train_step(model, optimizer, X, y):
    ### BEGIN SOLUTION
    optimizer.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(X), y)
    loss.backward()
    optimizer.step()
    return loss.item()
    ### END SOLUTION

ex.check_train_step(train_step)

# %% [markdown]
# ## Dynamic mode: modules and an optimizer
#
# Your `train_step` trains the network for 300 steps on the whole set. Data and
# layers are float32, torch's default dtype (the data set hands out float32 points,
# as torch's data sets do). The first weights are kept in `init`: the static graph
# starts from the same ones.
#
# Every cell from here on runs your functions once their check passes; until then
# the lab's own versions stand in for them, so the notebook always runs through. They
# are not in your namespace: `ex.yours_or_labs(exercise, name, ...)` calls yours or
# the lab's inside the call. The checks look for answers that call the lab's versions
# and refuse those they see. Set `use_reference = True` and re-run to compare with the
# lab's.

# %%
use_reference = False


def say_whose(exercise, name):
    if use_reference or not ex.solved(exercise):
        print(f"({name}: the lab's version stands in until exercise {exercise} passes)")


ng.manual_seed(0)
model = ng.nn.Sequential(ng.nn.Linear(2, 32), ng.nn.Tanh(), ng.nn.Linear(32, 2))
init = [p.detach().numpy().copy() for p in model.parameters()]  # W1, b1, W2, b2
optimizer = ng.optim.Adam(model.parameters(), lr=0.05)
Xt, yt = ng.tensor(X), ng.tensor(y)

epochs = 300
say_whose("09-2", "train_step")
dynamic_losses = [ex.yours_or_labs("09-2", "train_step", model, optimizer, Xt, yt,
                                   lab=use_reference) for _ in range(epochs)]
say_whose("09-1", "accuracy")
with ng.no_grad():
    dynamic_accuracy = ex.yours_or_labs("09-1", "accuracy", model(Xt), yt, lab=use_reference)
print("dynamic: final loss %.4f, accuracy %.2f" % (dynamic_losses[-1], dynamic_accuracy))


# %% [markdown]
# ## Static mode: the same network as a graph
#
# Now the same model, TF1 style: a graph built once, a compiled step run 300 times.
#
# ### Exercise 09-3: the static graph
#
# Complete `build_static(init, lr)`. The Variables are made for you from `init`
# (`W1, b1, W2, b2` in `nn.Linear`'s layout: a weight is `(out_features,
# in_features)` and the layer computes `x @ W.T + b`). Inside the graph, write:
#
# * two placeholders: the points, `(batch, 2)` float32 (the dtype of the data and
#   the weights), and the labels, `(batch,)` int64 class indices (the labels' own dtype:
#   torch's cross-entropy refuses int32 ones), with the batch size left open (`None`), so the same graph
#   takes the training set now and a grid of 40 000 points later;
# * the logits of the network (`ns.tanh`, `ns.t` for a transpose), and the
#   cross-entropy loss of the logits against the labels;
# * the training op: `ns.optim.Adam(variables, lr=...).minimize(loss)` adds the
#   gradients and Adam's update to the graph, with the same settings as the
#   dynamic optimizer, so both modes take the same steps.
#
# Then compile two functions from the one graph (`g.compile(inputs, outputs)`):
# `step(X, y)`, one training step, fetching the loss first and the training op
# (a run only updates the Variables when it fetches the update), and
# `classify(points)`, fetching the logits alone. The checker builds the graph with
# its own weights and learning rate and trains it against its own dynamic run.

# %% exercise="09-3"
# Exercise 09-3
def build_static(init, lr):
    with ns.Graph() as g:
        W1, b1, W2, b2 = (ns.Variable(w, name=n) for w, n in zip(init, ("W1", "b1", "W2", "b2")))
        ### BEGIN SOLUTION
        xs = ns.placeholder("X", shape=(None, 2), dtype=np.float32)
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
        loss = ns.cross_entropy(logits, ys)
        train = ns.optim.Adam([W1, b1, W2, b2], lr=lr).minimize(loss)
        ### END SOLUTION
    ### BEGIN SOLUTION
    step = g.compile([xs, ys], [loss, train])
    classify = g.compile([xs], [logits])
    ### END SOLUTION
    return step, classify

ex.check_static_classifier(build_static)

# %% [markdown]
# ## The two modes, side by side
#
# Your graph, from the same first weights, for the same 300 steps. Printed, the
# compiled step says what it takes, what it gives back, and how many steps its plan
# runs: the forward pass, the gradients and Adam's update in one list, run from
# start to end without Python choosing anything in between.

# %%
say_whose("09-3", "build_static")
static_step, classify = ex.yours_or_labs("09-3", "build_static", init, lr=0.05,
                                         lab=use_reference)
print(static_step)

static_losses = [float(static_step(X, y)[0]) for _ in range(epochs)]
static_accuracy = ex.yours_or_labs("09-1", "accuracy", classify(X)[0], y, lab=use_reference)
print("static: final loss %.4f, accuracy %.2f" % (static_losses[-1], static_accuracy))

# %%
print("largest difference between the curves:",
      max(abs(a - b) for a, b in zip(dynamic_losses, static_losses)))
plots.loss_curves({"dynamic": dynamic_losses, "static": static_losses},
                  title="Two spirals: the same Adam steps in both modes", log=True)


# %% [markdown]
# The curves lie on top of each other: the same ops from the same table, in the same
# order, on the same float32 numbers. The largest difference printed above may well
# be exactly 0.0; where differences do appear, they come from rounding: the static
# graph may group a sum or fuse a step differently (`ns.optimize` rewrites it before
# compiling), and in floating point $(a + b) + c$ need not equal $a + (b + c)$. After
# 300 steps of Adam any such difference stays at the level of rounding, far below
# what the plot can show.

# %% [markdown]
# ## Decision boundaries
#
# `plots.decision_boundary(predict, X, y)` colours the plane by the predicted class.
# For dynamic mode, `predict` runs the model under `no_grad`; for static mode it runs
# your compiled forward graph on the grid (40 000 points: the `None` batch at work).

# %%
def predict_dynamic(points):
    with ng.no_grad():
        return model(ng.tensor(points)).numpy().argmax(axis=1)

def predict_static(points):
    return classify(points)[0].argmax(axis=1)

plots.decision_boundary(predict_dynamic, X, y, title="Dynamic mode")

# %%
plots.decision_boundary(predict_static, X, y, title="Static mode")

# %% [markdown]
# ## Where to go from here
#
# * Swap `Tanh` for `ReLU`, change the width, or use `datasets.two_moons`.
# * Time both loops as in lesson 7, and run `ns.optimize` on the training graph.
# * Draw one training step with `ng.render(loss, kind="both")` in dynamic mode and
#   `ng.render(g)` in static mode, and compare them with the drawings of lesson 1.
#
# ## Further reading
#
# * TensorFlow 1 "Graphs and Sessions" guide; Theano's `function` with `updates`:
#   training as a graph that updates its own weights.
# * PyTorch tutorials, "Learning PyTorch with Examples" (tensors, autograd, `nn`,
#   `optim`) and the `torch.fx` / TorchScript documentation on tracing.
# * Andrej Karpathy, *micrograd*, and its "spelled-out intro to neural networks".
# * *Dive into Deep Learning* (d2l.ai), chapters on multilayer perceptrons and
#   optimisation algorithms (Adam).
# * CMU 10-414/714 *Deep Learning Systems* (dlsys.cs.cmu.edu).
