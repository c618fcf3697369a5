"""The workbench's lenet (core/model/src/nets.cpp) in PyTorch, for the side-by-side scripts."""
import torch.nn.functional as F
from torch import nn


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 10, 5), nn.Conv2d(10, 20, 5)
        self.conv2_drop, self.fc1, self.fc2 = nn.Dropout2d(), nn.Linear(320, 50), nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc2(F.dropout(x, 0.5, self.training))
