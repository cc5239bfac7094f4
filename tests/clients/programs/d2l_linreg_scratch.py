# Mirrors: Dive into Deep Learning, "Linear Regression Implementation from Scratch"
# (synthetic_data with torch.normal, data_iter over shuffled indices, linreg,
# squared_loss, minibatch sgd under torch.no_grad()).
# precision: float64
import random

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
random.seed(0)
rng = np.random.default_rng(0)


def synthetic_data(w, b, num_examples):
    """Generate y = Xw + b + noise."""
    X = torch.normal(0, 1, (num_examples, len(w)))
    # torch.normal draws differ between libraries; numpy values replace the draws so both
    # runs see the same data (the call above still checks torch.normal's signature)
    X = torch.tensor(rng.standard_normal(tuple(X.shape)))
    y = torch.matmul(X, w) + b
    y += torch.tensor(rng.normal(0, 0.01, tuple(y.shape)))
    return X, y.reshape((-1, 1))


true_w = torch.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 200)
print("features:", features[0].tolist(), "\nlabel:", labels[0].tolist())


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(indices[i : min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
print(tuple(w.shape), w.requires_grad)
w = torch.tensor([[0.01], [-0.005]], requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


lr = 0.03
num_epochs = 3
net = linreg
loss = squared_loss
batch_size = 10
for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        lo = loss(net(X, w, b), y)
        lo.sum().backward()
        sgd([w, b], lr, batch_size)
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f"epoch {epoch + 1}, loss {float(train_l.mean())}")

print(f"error in estimating w: {(true_w - w.reshape(true_w.shape)).tolist()}")
print(f"error in estimating b: {true_b - b.item()}")
