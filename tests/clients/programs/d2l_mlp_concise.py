# Mirrors: Dive into Deep Learning, section 5.2 "Implementation of Multilayer Perceptrons",
# the concise implementation (PyTorch): nn.Sequential(nn.Flatten(), nn.Linear(784, 256),
# nn.ReLU(), nn.Linear(256, 10)) initialised by net.apply(init_weights) with
# nn.init.normal_(m.weight, std=0.01), CrossEntropyLoss(reduction='none'), optim.SGD,
# and train_ch3's epoch (l.mean().backward(), the summed loss, accuracy through
# argmax(axis=1) and .type(y.dtype)) with evaluate_accuracy in net.eval(). Small made-up
# 28x28 images replace Fashion-MNIST, 64 hidden units replace 256, the loaders do not
# shuffle, and the normal_ draw is replaced by numpy values of the same scale.
# precision: float64
import numpy as np
import torch
from torch import nn
from torch.utils import data

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(52)

net = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))


def init_weights(m):
    if type(m) == nn.Linear:  # noqa: E721  (d2l's test)
        nn.init.normal_(m.weight, std=0.01)
        with torch.no_grad():  # the same draw on both sides, and biases from numpy too
            m.weight.copy_(torch.from_numpy(rng.normal(0, 0.01, tuple(m.weight.shape))))
            m.bias.copy_(torch.from_numpy(rng.uniform(-0.05, 0.05, tuple(m.bias.shape))))


net.apply(init_weights)
print(net)


def make_images(n):
    """Label k lights a diagonal band k of a noisy 28x28 image."""
    labels = rng.integers(0, 10, n)
    images = rng.uniform(0, 0.3, (n, 1, 28, 28))
    rows, cols = np.indices((28, 28))
    for i, k in enumerate(labels):
        images[i, 0][((rows + cols) // 6) == k] += 0.8
    return torch.from_numpy(images), torch.from_numpy(labels)


batch_size, lr, num_epochs = 50, 0.1, 4
train_iter = data.DataLoader(data.TensorDataset(*make_images(200)), batch_size, shuffle=False)
test_iter = data.DataLoader(data.TensorDataset(*make_images(100)), batch_size, shuffle=False)
loss = nn.CrossEntropyLoss(reduction="none")
trainer = torch.optim.SGD(net.parameters(), lr=lr)


def accuracy(y_hat, y):
    """Compute the number of correct predictions."""
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


def evaluate_accuracy(net, data_iter):
    """Compute the accuracy for a model on a dataset."""
    if isinstance(net, torch.nn.Module):
        net.eval()  # Set the model to evaluation mode
    correct, total = 0.0, 0
    with torch.no_grad():
        for X, y in data_iter:
            correct += accuracy(net(X), y)
            total += y.numel()
    return correct / total


def train_epoch_ch3(net, train_iter, loss, updater):
    """The training loop of d2l's chapter 3."""
    if isinstance(net, torch.nn.Module):
        net.train()
    total_loss, total_correct, count = 0.0, 0.0, 0
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)  # noqa: E741  (d2l's name)
        updater.zero_grad()
        l.mean().backward()
        updater.step()
        total_loss += float(l.sum())
        total_correct += accuracy(y_hat, y)
        count += y.numel()
    return total_loss / count, total_correct / count


for epoch in range(num_epochs):
    train_loss, train_acc = train_epoch_ch3(net, train_iter, loss, trainer)
    test_acc = evaluate_accuracy(net, test_iter)
    print(f"epoch {epoch + 1}: loss {train_loss:.10f}, train acc {train_acc}, test acc {test_acc}")

X, y = next(iter(test_iter))
print("predictions", net(X[:8]).argmax(axis=1).tolist(), "labels", y[:8].tolist())
