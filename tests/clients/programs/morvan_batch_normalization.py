# Mirrors: MorvanZhou/PyTorch-Tutorial, tutorial-contents/504_batch_normalization.py (a
# deep tanh MLP built in a loop with setattr(self, 'fc%i' % i, ...), an input
# nn.BatchNorm1d(1, momentum=0.5) and nn.BatchNorm1d(10, momentum=0.5) between the Linear
# layers, init.normal_/init.constant_ in _set_init, a forward returning the output with the
# layer inputs and pre-activations; a net without and one with batch norm trained side by
# side by Adam on MSELoss; net.eval() for the test loss each epoch and net.train() after).
# Smaller: 400 samples, 3 epochs, 5 hidden layers; the data noise and the normal_ draws
# come from numpy, and the loader does not shuffle. The run is in float64 (the original's
# .float() tensors), compared to float32's precision: a Linear bias ahead of batch norm
# has a zero true gradient, and Adam scales the rounding noise it gets instead up to
# lr-sized steps, so the 8th digit of what follows depends on the order of sums.
# precision: float32
import numpy as np
import torch
import torch.utils.data as Data
from torch import nn
from torch.nn import init

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(504)

# Hyper parameters
N_SAMPLES = 400
BATCH_SIZE = 64
EPOCH = 3
LR = 0.03
N_HIDDEN = 5
ACTIVATION = torch.tanh
B_INIT = -0.2  # use a bad bias constant initializer

# training data
x = np.linspace(-7, 10, N_SAMPLES)[:, np.newaxis]
noise = rng.normal(0, 2, x.shape)
y = np.square(x) - 5 + noise

# test data
test_x = np.linspace(-7, 10, 200)[:, np.newaxis]
noise = rng.normal(0, 2, test_x.shape)
test_y = np.square(test_x) - 5 + noise

train_x, train_y = torch.from_numpy(x), torch.from_numpy(y)
test_x = torch.from_numpy(test_x)
test_y = torch.from_numpy(test_y)

train_dataset = Data.TensorDataset(train_x, train_y)
train_loader = Data.DataLoader(dataset=train_dataset, batch_size=BATCH_SIZE, shuffle=False)


class Net(nn.Module):
    def __init__(self, batch_normalization=False):
        super(Net, self).__init__()
        self.do_bn = batch_normalization
        self.fcs = []
        self.bns = []
        self.bn_input = nn.BatchNorm1d(1, momentum=0.5)  # for input data

        for i in range(N_HIDDEN):  # build hidden layers and BN layers
            input_size = 1 if i == 0 else 10
            fc = nn.Linear(input_size, 10)
            setattr(self, "fc%i" % i, fc)  # IMPORTANT set layer to the Module
            self._set_init(fc)  # parameters initialization
            self.fcs.append(fc)
            if self.do_bn:
                bn = nn.BatchNorm1d(10, momentum=0.5)
                setattr(self, "bn%i" % i, bn)  # IMPORTANT set layer to the Module
                self.bns.append(bn)

        self.predict = nn.Linear(10, 1)  # output layer
        self._set_init(self.predict)  # parameters initialization

    def _set_init(self, layer):
        init.normal_(layer.weight, mean=0.0, std=0.1)
        init.constant_(layer.bias, B_INIT)
        with torch.no_grad():  # the same normal draw on both sides
            layer.weight.copy_(torch.from_numpy(rng.normal(0.0, 0.1, tuple(layer.weight.shape))))

    def forward(self, x):
        pre_activation = [x]
        if self.do_bn:
            x = self.bn_input(x)  # input batch normalization
        layer_input = [x]
        for i in range(N_HIDDEN):
            x = self.fcs[i](x)
            pre_activation.append(x)
            if self.do_bn:
                x = self.bns[i](x)  # batch normalization
            x = ACTIVATION(x)
            layer_input.append(x)
        out = self.predict(x)
        return out, layer_input, pre_activation


nets = [Net(batch_normalization=False), Net(batch_normalization=True)]
print(*nets)

opts = [torch.optim.Adam(net.parameters(), lr=LR) for net in nets]

loss_func = torch.nn.MSELoss()

losses = [[], []]  # recode loss for two networks
for epoch in range(EPOCH):
    print("Epoch: ", epoch)
    for net, l in zip(nets, losses):  # noqa: E741  (the original's name)
        net.eval()  # set eval mode to fix moving_mean and moving_var
        pred, layer_input, pre_act = net(test_x)
        l.append(loss_func(pred, test_y).data.item())
        net.train()  # free moving_mean and moving_var
    print([round(h[-1], 8) for h in losses])
    print([float(a.std()) for a in layer_input][:3])

    for _step, (b_x, b_y) in enumerate(train_loader):
        for net, opt in zip(nets, opts):  # train for each network
            pred, _, _ = net(b_x)
            loss = loss_func(pred, b_y)
            opt.zero_grad()
            loss.backward()
            opt.step()  # it will also learns the parameters in Batch Normalization

bn_net = nets[1]
print(bn_net.bn_input.running_mean.tolist(), bn_net.bn_input.running_var.tolist())
# (bn0's running mean follows fc0's bias, the value Adam steps on rounding noise)
print(bn_net.bn0.running_var[:4].tolist(), int(bn_net.bn0.num_batches_tracked))
bn_net.eval()
print(bn_net(test_x[::40])[0][:, 0].tolist())
