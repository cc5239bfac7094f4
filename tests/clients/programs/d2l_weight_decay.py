# Mirrors: Dive into Deep Learning, section 3.7 "Weight Decay" (PyTorch): synthetic_data
# with true_w = torch.ones((num_inputs, 1)) * 0.01 and true_b = 0.05, 20 training and 100
# test samples of 200 features; from scratch, init_params, l2_penalty(w) =
# torch.sum(w.pow(2)) / 2, linreg, squared_loss and d2l.sgd; concisely, nn.Sequential of
# nn.Linear with param.data.normal_(), MSELoss(reduction='none') and optim.SGD with
# weight_decay on the weight's parameter group only; each run with lambda 0 and 3 and
# evaluate_loss on both sets, and the weight's L2 norm. The data and starting values come
# from numpy; the training loader does not shuffle.
# precision: float64
import numpy as np
import torch
from torch import nn
from torch.utils import data

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(37)

n_train, n_test, num_inputs, batch_size = 20, 100, 200, 5
true_w, true_b = torch.ones((num_inputs, 1)) * 0.01, 0.05


def synthetic_data(w, b, num_examples):
    """Generate y = Xw + b + noise."""
    X = torch.from_numpy(rng.normal(0, 1, (num_examples, len(w))))
    y = torch.matmul(X, w) + b
    y += torch.from_numpy(rng.normal(0, 0.01, tuple(y.shape)))
    return X, y.reshape((-1, 1))


train_data = synthetic_data(true_w, true_b, n_train)
test_data = synthetic_data(true_w, true_b, n_test)
train_iter = data.DataLoader(data.TensorDataset(*train_data), batch_size, shuffle=False)
test_iter = data.DataLoader(data.TensorDataset(*test_data), batch_size, shuffle=False)


def evaluate_loss(net, data_iter, loss):
    """Evaluate the loss of a model on the given dataset."""
    total, count = 0.0, 0
    for X, y in data_iter:
        out = net(X)
        y = y.reshape(out.shape)
        l = loss(out, y)  # noqa: E741  (d2l's name)
        total += float(l.sum())
        count += l.numel()
    return total / count


# -- From scratch ---------------------------------------------------------------------
def init_params():
    w = torch.from_numpy(rng.normal(0, 1, (num_inputs, 1))).requires_grad_(True)
    b = torch.zeros(1, requires_grad=True)
    return [w, b]


def l2_penalty(w):
    return torch.sum(w.pow(2)) / 2


def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def train(lambd):
    w, b = init_params()
    net, loss = lambda X: linreg(X, w, b), squared_loss
    num_epochs, lr = 100, 0.003
    for epoch in range(num_epochs):
        for X, y in train_iter:
            # The L2 norm penalty term has been added, and broadcasting
            # makes l2_penalty(w) a vector whose length is batch_size
            l = loss(net(X), y) + lambd * l2_penalty(w)  # noqa: E741
            l.sum().backward()
            sgd([w, b], lr, batch_size)
        if (epoch + 1) % 25 == 0:
            print(
                epoch + 1,
                evaluate_loss(net, train_iter, loss),
                evaluate_loss(net, test_iter, loss),
            )
    print("L2 norm of w:", torch.norm(w).item())


train(lambd=0)
train(lambd=3)


# -- Concise implementation ---------------------------------------------------------------
def train_concise(wd):
    net = nn.Sequential(nn.Linear(num_inputs, 1))
    for param in net.parameters():
        param.data.normal_()
    with torch.no_grad():  # the draws differ between libraries: numpy values in their place
        for param in net.parameters():
            param.copy_(torch.from_numpy(rng.normal(0, 1, tuple(param.shape))))
    loss = nn.MSELoss(reduction="none")
    num_epochs, lr = 100, 0.003
    # The bias parameter has not decayed
    trainer = torch.optim.SGD(
        [{"params": net[0].weight, "weight_decay": wd}, {"params": net[0].bias}], lr=lr
    )
    for epoch in range(num_epochs):
        for X, y in train_iter:
            trainer.zero_grad()
            l = loss(net(X), y)  # noqa: E741
            l.mean().backward()
            trainer.step()
        if (epoch + 1) % 25 == 0:
            print(
                epoch + 1,
                evaluate_loss(net, train_iter, loss),
                evaluate_loss(net, test_iter, loss),
            )
    print("L2 norm of w:", net[0].weight.norm().item())
    print([g["weight_decay"] for g in trainer.param_groups])


train_concise(0)
train_concise(3)
