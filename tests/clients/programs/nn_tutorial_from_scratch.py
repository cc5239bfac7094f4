# Mirrors: PyTorch tutorial "What is torch.nn really?", sections "Neural net from scratch
# (without torch.nn)" and "Using torch.nn.functional": weights / sqrt(n) with
# requires_grad_(), a hand-written log_softmax and nll, accuracy, the manual training
# loop, then F.cross_entropy giving the same loss -- on synthetic 8x8 "images".
# precision: float64
import math

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(3)
n, d, k = 60, 64, 10
x_train = torch.tensor(rng.random((n, d)))
y_train = torch.tensor(rng.integers(0, k, n))
print(tuple(x_train.shape), y_train.min().item(), y_train.max().item())

weights = torch.tensor(rng.standard_normal((d, k))) / math.sqrt(d)
weights.requires_grad_()
bias = torch.zeros(k, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


bs = 16
xb = x_train[0:bs]
preds = model(xb)
print(preds[0].tolist(), tuple(preds.shape))


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll
yb = y_train[0:bs]
print(loss_func(preds, yb).item())


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


print(accuracy(preds, yb).item())

lr = 0.5
epochs = 2
for _epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()

print(loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item())
print(F.cross_entropy(xb @ weights + bias, yb).item())
