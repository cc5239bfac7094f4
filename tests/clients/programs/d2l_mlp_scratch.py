# Mirrors: Dive into Deep Learning, section 5.2.1 "Implementation of Multilayer Perceptrons
# from Scratch" (PyTorch): parameters W1, b1, W2, b2 as nn.Parameter of
# torch.randn(...) * 0.01 and torch.zeros, relu(X) written as torch.max(X, a) with
# a = torch.zeros_like(X), net(X) with X.reshape((-1, num_inputs)) and the @ operator,
# nn.CrossEntropyLoss(reduction='none'), torch.optim.SGD(params, lr=lr) and train_ch3's loop
# (l.mean().backward()), then predictions. Made-up 28x28 images replace Fashion-MNIST, 32
# hidden units replace 256, randn is replaced by numpy, and the loaders do not shuffle.
# precision: float64
import numpy as np
import torch
from torch import nn
from torch.utils import data

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(521)

num_inputs, num_outputs, num_hiddens = 784, 10, 32


def randn(*shape):
    return torch.from_numpy(rng.standard_normal(shape))


W1 = nn.Parameter(randn(num_inputs, num_hiddens) * 0.01)
b1 = nn.Parameter(torch.zeros(num_hiddens, requires_grad=True))
W2 = nn.Parameter(randn(num_hiddens, num_outputs) * 0.01)
b2 = nn.Parameter(torch.zeros(num_outputs, requires_grad=True))

params = [W1, b1, W2, b2]
print([tuple(p.shape) for p in params], all(p.requires_grad for p in params))


def relu(X):
    a = torch.zeros_like(X)
    return torch.max(X, a)


def net(X):
    X = X.reshape((-1, num_inputs))
    H = relu(X @ W1 + b1)  # Here '@' stands for matrix multiplication
    return H @ W2 + b2


loss = nn.CrossEntropyLoss(reduction="none")


def make_images(n):
    """Label k lights the k-th of ten vertical stripes of a noisy 28x28 image."""
    labels = rng.integers(0, 10, n)
    images = rng.uniform(0, 0.3, (n, 1, 28, 28))
    for i, k in enumerate(labels):
        images[i, 0, :, 2 + 2 * k : 4 + 2 * k] += 0.9
    return torch.from_numpy(images), torch.from_numpy(labels)


train_iter = data.DataLoader(data.TensorDataset(*make_images(200)), 50, shuffle=False)
test_iter = data.DataLoader(data.TensorDataset(*make_images(100)), 50, shuffle=False)

num_epochs, lr = 5, 0.5
updater = torch.optim.SGD(params, lr=lr)


def accuracy(y_hat, y):
    y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


for epoch in range(num_epochs):
    total_loss, total_correct, count = 0.0, 0.0, 0
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)  # noqa: E741  (d2l's name)
        updater.zero_grad()
        l.mean().backward()
        updater.step()
        total_loss += float(l.sum().detach())
        total_correct += accuracy(y_hat, y)
        count += y.numel()
    with torch.no_grad():
        test_correct = sum(accuracy(net(X), y) for X, y in test_iter)
    print(
        f"epoch {epoch + 1}: loss {total_loss / count:.10f}, "
        f"train acc {total_correct / count}, test acc {test_correct / 100}"
    )

X, y = next(iter(test_iter))
print("true ", y[:6].tolist())
print("pred ", net(X[:6]).argmax(axis=1).tolist())
print(relu(torch.tensor([-1.0, 0.0, 2.5])).tolist())
