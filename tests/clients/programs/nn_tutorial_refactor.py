# Mirrors: PyTorch tutorial "What is torch.nn really?", sections "Refactor using
# nn.Module", "Refactor using nn.Linear", "Refactor using torch.optim" and "Switch to
# CNN"-free parts (Mnist_Logistic with nn.Parameter, then nn.Linear, fit(), get_model(),
# optim.SGD, model.eval() with validation loss under no_grad) on synthetic data.
# precision: float64
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(4)
n, d, k, bs, lr, epochs = 48, 16, 4, 16, 0.5, 3
x_train = torch.tensor(rng.random((n, d)))
y_train = torch.tensor(rng.integers(0, k, n))
x_valid = torch.tensor(rng.random((16, d)))
y_valid = torch.tensor(rng.integers(0, k, 16))
initial = rng.standard_normal((d, k)) / math.sqrt(d)
loss_func = F.cross_entropy


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(torch.tensor(initial))
        self.bias = nn.Parameter(torch.zeros(k))

    def forward(self, xb):
        return xb @ self.weights + self.bias


model = Mnist_Logistic()
print(loss_func(model(x_train[:bs]), y_train[:bs]).item())


def fit():
    for _epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            xb = x_train[start_i : start_i + bs]
            yb = y_train[start_i : start_i + bs]
            loss = loss_func(model(xb), yb)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= p.grad * lr
                model.zero_grad()


fit()
print(loss_func(model(x_train[:bs]), y_train[:bs]).item())


class Mnist_Logistic_Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(d, k)
        with torch.no_grad():
            self.lin.weight.copy_(torch.tensor(initial.T))
            self.lin.bias.zero_()

    def forward(self, xb):
        return self.lin(xb)


def get_model():
    model = Mnist_Logistic_Linear()
    return model, optim.SGD(model.parameters(), lr=lr)


model, opt = get_model()
print(loss_func(model(x_train[:bs]), y_train[:bs]).item())
for epoch in range(epochs):
    model.train()
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        xb = x_train[start_i : start_i + bs]
        yb = y_train[start_i : start_i + bs]
        loss = loss_func(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    with torch.no_grad():
        valid_loss = sum(loss_func(model(x_valid), y_valid) for _ in range(1))
    print(epoch, valid_loss.item() / 1)
print(model)
