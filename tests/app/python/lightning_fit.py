"""A small Trainer.fit recorded by WorkbenchCallback, with an unchanged LightningModule.

    python3 lightning_fit.py RUN_DIR
"""
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl

from workbench_recorder.lightning import WorkbenchCallback


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        out = self.net(x)
        self.log("val_loss", nn.functional.cross_entropy(out, y))
        self.log("val_acc", (out.argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    torch.manual_seed(0)
    x = torch.randn(512, 8, 8)
    y = (x.mean(dim=(1, 2)) > 0).long() + 2 * (x[:, 0, 0] > 0).long()
    train = DataLoader(TensorDataset(x[:384], y[:384]), batch_size=32, shuffle=True, num_workers=0)
    val = DataLoader(TensorDataset(x[384:], y[384:]), batch_size=64)
    trainer = pl.Trainer(max_epochs=3, accelerator="cpu", devices=1, accumulate_grad_batches=2, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         callbacks=[WorkbenchCallback(sys.argv[1], {"name": "lightning-fit"}, log_every=4)])
    trainer.fit(Classifier(), train, val)


if __name__ == "__main__":
    main()
