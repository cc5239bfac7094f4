# Mirrors: yunjey/pytorch-tutorial, tutorials/02-intermediate/convolutional_neural_network/
# main.py (a ConvNet of two nn.Sequential blocks, each nn.Conv2d(kernel_size=5, stride=1,
# padding=2), nn.BatchNorm2d, nn.ReLU and nn.MaxPool2d(kernel_size=2, stride=2), then
# nn.Linear(7*7*32, num_classes) on out.reshape(out.size(0), -1); Adam, CrossEntropyLoss,
# model.eval() for the test so batch norm uses its moving statistics). Made-up 28x28
# images replace MNIST, 4 and 8 channels replace 16 and 32, and the loader does not shuffle.
# The run is in float64, compared to float32's precision: a convolution's bias ahead of
# batch norm has a zero true gradient, and Adam scales the rounding noise it gets instead
# up to lr-sized steps, so the 8th digit of what follows depends on the order of sums.
# precision: float32
import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)
device = torch.device("cpu")

# Hyper parameters
num_epochs = 2
num_classes = 10
batch_size = 20
learning_rate = 0.001

rng = np.random.default_rng(35)


def make_images(n):
    """Label k puts a bright 6x6 square at one of ten places of a noisy image."""
    labels = rng.integers(0, num_classes, n)
    images = rng.uniform(0, 0.3, (n, 1, 28, 28))
    for i, k in enumerate(labels):
        r, c = 2 + 12 * (k // 5), 2 + 5 * (k % 5)
        images[i, 0, r : r + 6, c : c + 6] += 0.7
    return torch.from_numpy(images), torch.from_numpy(labels)


train_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(*make_images(60)), batch_size=batch_size, shuffle=False
)
test_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(*make_images(40)), batch_size=batch_size, shuffle=False
)


# Convolutional neural network (two convolutional layers)
class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super(ConvNet, self).__init__()
        self.layer1 = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=5, stride=1, padding=2),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.layer2 = nn.Sequential(
            nn.Conv2d(4, 8, kernel_size=5, stride=1, padding=2),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.fc = nn.Linear(7 * 7 * 8, num_classes)

    def forward(self, x):
        out = self.layer1(x)
        out = self.layer2(out)
        out = out.reshape(out.size(0), -1)
        out = self.fc(out)
        return out


model = ConvNet(num_classes).to(device)
with torch.no_grad():  # numpy starting values for the convolutions and the linear layer
    for name, p in model.named_parameters():
        if name in ("layer1.0.weight", "layer2.0.weight", "fc.weight"):
            p.copy_(torch.from_numpy(rng.normal(0, 0.1, tuple(p.shape))))
        elif name in ("layer1.0.bias", "layer2.0.bias", "fc.bias"):
            p.copy_(torch.from_numpy(rng.uniform(-0.05, 0.05, tuple(p.shape))))
print(model)

# Loss and optimizer
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

# Train the model
total_step = len(train_loader)
for epoch in range(num_epochs):
    for i, (images, labels) in enumerate(train_loader):
        images = images.to(device)
        labels = labels.to(device)

        # Forward pass
        outputs = model(images)
        loss = criterion(outputs, labels)

        # Backward and optimize
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        print(
            "Epoch [{}/{}], Step [{}/{}], Loss: {:.8f}".format(
                epoch + 1, num_epochs, i + 1, total_step, loss.item()
            )
        )

# Test the model: eval mode (batch norm uses moving mean/variance instead of mini-batch ones)
model.eval()
with torch.no_grad():
    correct = 0
    total = 0
    for images, labels in test_loader:
        images = images.to(device)
        labels = labels.to(device)
        outputs = model(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    print("Test Accuracy of the model on the 40 test images: {} %".format(100 * correct / total))
print(outputs[0].tolist())
print(model.layer1[1].running_mean.tolist(), model.layer2[1].num_batches_tracked.item())
