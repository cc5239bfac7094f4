# Mirrors: Dive into Deep Learning, section 8.5 "Batch Normalization", the concise
# implementation: LeNet with nn.BatchNorm2d after each convolution and nn.BatchNorm1d after
# the hidden linear layers (Sigmoid, AvgPool2d, Flatten), trained with SGD and
# CrossEntropyLoss; then the learned scale and shift and the running statistics of the
# first batch-norm layer, and predictions in eval mode -- on small random 28x28 images
# made here instead of Fashion-MNIST, iterated by hand.
# precision: float64
import numpy as np
import torch
from torch import nn

torch.set_default_dtype(torch.float64)
net = nn.Sequential(
    nn.Conv2d(1, 6, kernel_size=5), nn.BatchNorm2d(6), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Conv2d(6, 16, kernel_size=5), nn.BatchNorm2d(16), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
    nn.Linear(256, 120), nn.BatchNorm1d(120), nn.Sigmoid(),
    nn.Linear(120, 84), nn.BatchNorm1d(84), nn.Sigmoid(),
    nn.Linear(84, 10))  # fmt: skip
print(net)

rng = np.random.default_rng(5)
with torch.no_grad():  # the same start on both sides; batch norm keeps gamma 1, beta 0
    for layer in net:
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            layer.weight.copy_(torch.from_numpy(rng.normal(0, 0.2, tuple(layer.weight.shape))))
            layer.bias.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, tuple(layer.bias.shape))))

X = torch.from_numpy(rng.normal(size=(1, 1, 28, 28)))
for layer in net:
    X = layer(X) if not isinstance(layer, nn.BatchNorm1d) else X
    print(layer.__class__.__name__, "output shape:\t", X.shape)

lr, num_epochs, batch_size = 0.9, 3, 8
features = rng.normal(size=(32, 1, 28, 28))
labels = rng.integers(0, 10, 32)
features += labels[:, None, None, None] * 0.05
loss = nn.CrossEntropyLoss()
trainer = torch.optim.SGD(net.parameters(), lr=lr)
for epoch in range(num_epochs):
    net.train()
    total, count = 0.0, 0
    for i in range(0, len(labels), batch_size):
        X = torch.from_numpy(features[i : i + batch_size])
        y = torch.from_numpy(labels[i : i + batch_size])
        trainer.zero_grad()
        l = loss(net(X), y)  # noqa: E741  (d2l's name)
        l.backward()
        trainer.step()
        total += l.item() * len(y)
        count += len(y)
    print(f"epoch {epoch + 1}, loss {total / count:.8f}")

bn = net[1]
print(bn.gamma if hasattr(bn, "gamma") else bn.weight.reshape((-1,)).tolist())
print(bn.bias.reshape((-1,)).tolist())
print(bn.running_mean.tolist())
print(bn.running_var.tolist())
print(int(bn.num_batches_tracked))
print(net[10].running_mean[:5].tolist())

net.eval()
with torch.no_grad():
    logits = net(torch.from_numpy(features[:6]))
print(logits.argmax(dim=1).tolist())
print(logits[0].tolist())
print(bn.running_mean.tolist() == net[1].running_mean.tolist())
