# Mirrors: yunjey/pytorch-tutorial, tutorials/01-basics/logistic_regression/main.py
# (nn.Linear(input_size, num_classes) on flattened 28x28 images, nn.CrossEntropyLoss,
# torch.optim.SGD(lr=0.001), a train_loader of (images, labels) with
# images.reshape(-1, input_size), a loss line every few steps, and the test under
# torch.no_grad() with torch.max(outputs.data, 1) and (predicted == labels).sum().item()).
# MNIST cannot be downloaded: 300 made-up images whose label sets which band is bright,
# in TensorDatasets; the train loader does not shuffle (torch's and numpy's draws differ).
# precision: float64
import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)

# Hyper-parameters
input_size = 28 * 28  # 784
num_classes = 10
num_epochs = 3
batch_size = 50
learning_rate = 0.001

# Made-up "digits": label k lights rows 2k..2k+5, plus noise
rng = np.random.default_rng(33)


def make_images(n):
    labels = rng.integers(0, num_classes, n)
    images = rng.uniform(0, 0.3, (n, 1, 28, 28))
    for i, k in enumerate(labels):
        images[i, 0, 2 * k : 2 * k + 6, :] += 0.7
    return torch.from_numpy(images), torch.from_numpy(labels)


train_dataset = torch.utils.data.TensorDataset(*make_images(300))
test_dataset = torch.utils.data.TensorDataset(*make_images(100))

# Data loader (input pipeline)
train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=batch_size)
test_loader = torch.utils.data.DataLoader(
    dataset=test_dataset, batch_size=batch_size, shuffle=False
)

# Logistic regression model
model = nn.Linear(input_size, num_classes)
with torch.no_grad():
    model.weight.copy_(torch.from_numpy(rng.uniform(-0.03, 0.03, (num_classes, input_size))))
    model.bias.zero_()

# Loss and optimizer: nn.CrossEntropyLoss() computes softmax internally
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

# Train the model
total_step = len(train_loader)
for epoch in range(num_epochs):
    for i, (images, labels) in enumerate(train_loader):
        # Reshape images to (batch_size, input_size)
        images = images.reshape(-1, input_size)

        # Forward pass
        outputs = model(images)
        loss = criterion(outputs, labels)

        # Backward and optimize
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if (i + 1) % 3 == 0:
            print(
                "Epoch [{}/{}], Step [{}/{}], Loss: {:.8f}".format(
                    epoch + 1, num_epochs, i + 1, total_step, loss.item()
                )
            )

# Test the model; in the test phase we don't need to compute gradients
with torch.no_grad():
    correct = 0
    total = 0
    for images, labels in test_loader:
        images = images.reshape(-1, input_size)
        outputs = model(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum()

    print("Accuracy of the model on the 100 test images: {} %".format(100 * correct / total))
print(predicted[:10].tolist(), labels[:10].tolist())
