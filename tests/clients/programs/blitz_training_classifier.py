# Mirrors: PyTorch 60-minute blitz, "Training a Classifier" (cifar10_tutorial): the
# CIFAR-10 Net (Conv2d, MaxPool2d, torch.flatten, Linear), CrossEntropyLoss, SGD with
# momentum, the running-loss training loop over mini-batches of 4, then the accuracy on a
# test set and per class, with torch.max(outputs, 1) -- on small random 3x32x32 "images"
# made here, since CIFAR-10 cannot be downloaded.
# precision: float64
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.set_default_dtype(torch.float64)
classes = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
batch_size = 4
rng = np.random.default_rng(1)


def batches(count):
    # stand-ins for the CIFAR-10 loaders: images with a class-dependent brightness
    for _ in range(count):
        labels = rng.integers(0, 10, batch_size)
        images = rng.normal(size=(batch_size, 3, 32, 32)) + labels[:, None, None, None] * 0.1
        yield torch.from_numpy(images), torch.from_numpy(labels)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
print(net)
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, tuple(p.shape))))

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

trainloader = list(batches(12))
for epoch in range(2):  # loop over the dataset multiple times
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data
        # zero the parameter gradients
        optimizer.zero_grad()
        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        # print statistics
        running_loss += loss.item()
        if i % 4 == 3:  # print every 4 mini-batches
            print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 4:.6f}")
            running_loss = 0.0
print("Finished Training")

testloader = list(batches(5))
images, labels = testloader[0]
print("GroundTruth: ", " ".join(f"{classes[labels[j]]:5s}" for j in range(4)))
outputs = net(images)
_, predicted = torch.max(outputs, 1)
print("Predicted: ", " ".join(f"{classes[predicted[j]]:5s}" for j in range(4)))
print(outputs.shape, outputs[0].tolist())

correct = 0
total = 0
# since we're not training, we don't need to calculate the gradients for our outputs
with torch.no_grad():
    for data in testloader:
        images, labels = data
        # calculate outputs by running images through the network
        outputs = net(images)
        # the class with the highest energy is what we choose as prediction
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
print(f"Accuracy of the network on the {total} test images: {100 * correct // total} %")

# prepare to count predictions for each class
correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predictions = torch.max(outputs, 1)
        # collect the correct predictions for each class
        for label, prediction in zip(labels, predictions):
            if label == prediction:
                correct_pred[classes[label]] += 1
            total_pred[classes[label]] += 1
for classname, correct_count in correct_pred.items():
    if total_pred[classname]:
        accuracy = 100 * float(correct_count) / total_pred[classname]
        print(f"Accuracy for class: {classname:5s} is {accuracy:.1f} %")
