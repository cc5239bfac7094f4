from build import code, exercise, md

NAME = "09_capstone"
TITLE = "Lesson 9: Capstone - a classifier in both modes"
INTRO = """
Put it all together: generate a 2-D data set, train a small neural-network classifier
in **dynamic** mode (modules, optimizer, autograd) and in **static** mode (placeholders,
Variables, the optimizer inside the graph, a compiled step), with the same optimizer
settings, compare the loss curves, and draw the decision boundaries.
"""

CELLS = [
    md("""
    ## Data: two spirals

    Two intertwined spirals, generated with numpy from a fixed seed. A straight line
    cannot separate them; a hidden layer with a non-linearity can.
    """),
    code("""
    import naivegraph.static as ns
    from naivegraph.lessons import datasets, plots

    X, y = datasets.spirals(200, turns=1.0, noise=0.1, seed=0)
    print(X.shape, np.bincount(y))
    """),
    md("""
    ### Exercise 09-1: accuracy

    Write `accuracy(logits, labels)`: the fraction of rows whose largest logit is at
    the true label's index. It should accept numpy arrays and tensors
    (`np.asarray(t)` converts a tensor that does not require grad).
    """),
    exercise("09-1", """
    # Exercise 09-1
    def accuracy(logits, labels):
        «return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))»

    ex.check_accuracy_fn(accuracy)
    """),
    md("""
    ### Exercise 09-2: one training step (dynamic mode)

    Write `train_step(model, optimizer, X, y)`: zero the gradients, compute the
    cross-entropy loss of `model(X)` against `y`, backpropagate, step, and return the
    loss as a Python float. The checker trains a fresh model with it.
    """),
    exercise("09-2", """
    # Exercise 09-2
    def train_step(model, optimizer, X, y):
        «optimizer.zero_grad()
        loss = ng.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        optimizer.step()
        return loss.item()»

    ex.check_train_step(train_step)
    """),
    md("""
    ## Dynamic mode: modules and an optimizer

    The notebook uses the reference step of `naivegraph.lessons.training`, so it runs
    whatever state your exercises are in.
    """),
    code("""
    from naivegraph.lessons.training import train_step as reference_step

    ng.manual_seed(0)
    model = ng.nn.Sequential(ng.nn.Linear(2, 32), ng.nn.Tanh(), ng.nn.Linear(32, 2))
    init = [p.detach().numpy().copy() for p in model.parameters()]  # reused by static mode
    optimizer = ng.optim.Adam(model.parameters(), lr=0.05)
    Xt, yt = ng.tensor(X), ng.tensor(y)

    epochs = 300
    dynamic_losses = [reference_step(model, optimizer, Xt, yt) for _ in range(epochs)]
    with ng.no_grad():
        print("dynamic: final loss %.4f, accuracy %.2f"
              % (dynamic_losses[-1], np.mean(model(Xt).numpy().argmax(1) == y)))
    """),
    md("""
    ## Static mode: the same network as a graph

    `nn.Linear` computes `x @ W.T + b`; the static graph writes that out with the same
    initial weights. The batch dimension is `None`, so the same graph takes the
    training set and, later, any grid of points. `ns.optim.Adam(...).minimize(loss)`
    adds the gradients and Adam's update to the graph, with the same settings as the
    dynamic optimizer: both modes take the same steps.
    """),
    code("""
    with ns.Graph() as g:
        xs = ns.placeholder("X", shape=(None, 2))
        ys = ns.placeholder("y", shape=(None,), dtype=np.int64)
        W1, b1, W2, b2 = (ns.Variable(v, name=n) for v, n in zip(init, ("W1", "b1", "W2", "b2")))
        logits = ns.tanh(xs @ ns.t(W1) + b1) @ ns.t(W2) + b2
        loss = ns.cross_entropy(logits, ys)
        train = ns.optim.Adam([W1, b1, W2, b2], lr=0.05).minimize(loss)
    step = g.compile([xs, ys], [loss, train])
    classify = g.compile([xs], [logits])      # the same graph, forward only, any batch size
    print(step)

    static_losses = [float(step(X, y)[0]) for _ in range(epochs)]
    print("static: final loss %.4f, accuracy %.2f"
          % (static_losses[-1], np.mean(classify(X)[0].argmax(1) == y)))
    """),
    code("""
    plots.loss_curves({"dynamic": dynamic_losses, "static": static_losses},
                      title="Two spirals: the same Adam steps in both modes", log=True)
    print("largest difference between the curves:",
          max(abs(a - b) for a, b in zip(dynamic_losses, static_losses)))
    """),
    md("""
    ## Decision boundaries

    `plots.decision_boundary(predict, X, y)` colours the plane by the predicted class.
    For dynamic mode, `predict` runs the model under `no_grad`; for static mode it runs
    the compiled forward graph on the grid (40 000 points: the `None` batch at work).
    """),
    code("""
    def predict_dynamic(points):
        with ng.no_grad():
            return model(ng.tensor(points)).numpy().argmax(axis=1)

    def predict_static(points):
        return classify(points)[0].argmax(axis=1)

    plots.decision_boundary(predict_dynamic, X, y, title="Dynamic mode")
    """),
    code("""
    plots.decision_boundary(predict_static, X, y, title="Static mode")
    """),
    md("""
    ## Where to go from here

    * Swap `Tanh` for `ReLU`, change the width, or use `datasets.two_moons`.
    * Time both loops as in lesson 7, and run `ns.optimize` on the training graph.
    * Draw one training step with `ng.render(loss, kind="both")` in dynamic mode and
      `ng.render(g)` in static mode, and compare them with the drawings of lesson 1.

    ## Further reading

    * TensorFlow 1 "Graphs and Sessions" guide; Theano's `function` with `updates`:
      training as a graph that updates its own weights.
    * PyTorch tutorials, "Learning PyTorch with Examples" (tensors, autograd, `nn`,
      `optim`) and the `torch.fx` / TorchScript documentation on tracing.
    * Andrej Karpathy, *micrograd*, and its "spelled-out intro to neural networks".
    * *Dive into Deep Learning* (d2l.ai), chapters on multilayer perceptrons and
      optimisation algorithms (Adam).
    * CMU 10-414/714 *Deep Learning Systems* (dlsys.cs.cmu.edu).
    """),
]
