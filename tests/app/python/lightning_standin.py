"""Drives the Lightning callback's hooks in the order Trainer.fit calls them, with stand-ins for
the Trainer, its DataLoader and EarlyStopping: the callback's logic without Lightning or torch.

    python3 lightning_standin.py RUN_DIR
"""
import sys
import time

from workbench_recorder.lightning import RecorderHooks


class Loss(float):
    def detach(self):  # a tensor's one method the recorder uses before the log interval
        return float(self)


class Batch:
    shape = (16, 1, 28, 28)


class DataLoader:
    num_workers, pin_memory, batch_size = 3, True, 16
    dataset = list(range(160))


class EarlyStopping:
    patience, monitor, mode, min_delta, check_finite, stopping_threshold = 1, "val_loss", "min", 0.0, True, None
    stopped_epoch = 0


class SingleDeviceStrategy:
    root_device = "cpu"


class Optimizer:
    param_groups = [{"lr": 0.02}]


class Trainer:
    global_rank, world_size, num_nodes = 0, 1, 1
    precision, accumulate_grad_batches = "bf16-mixed", 2
    max_epochs, max_steps, num_training_batches = 5, -1, 10
    sanity_checking, inference_mode = False, True

    def __init__(self):
        self.strategy, self.train_dataloader = SingleDeviceStrategy(), DataLoader()
        self.val_dataloaders = DataLoader()
        self.callbacks = [EarlyStopping()]
        self.optimizers = [Optimizer()]
        self.callback_metrics = {}
        self.current_epoch = 0


class Module:
    def parameters(self):
        return []


def validate(cb, trainer, module, val_loss, sanity=False):
    trainer.sanity_checking = sanity
    cb.on_validation_start(trainer, module)
    time.sleep(0.005)
    trainer.callback_metrics = {"val_loss": val_loss, "val_acc": 100 * (1.0 - val_loss)}  # a percentage
    cb.on_validation_end(trainer, module)
    trainer.sanity_checking = False


def main():
    cb, trainer, module = RecorderHooks(sys.argv[1], {"name": "standin", "data": {"dataset": "fake"}}, log_every=5), Trainer(), Module()
    validate(cb, trainer, module, 9.0, sanity=True)  # Lightning's sanity check: before the recorder starts
    cb.on_train_start(trainer, module)
    for epoch, val_loss in enumerate([0.5, 0.4, 0.45]):  # improves, then not: patience 1 stops after the third
        trainer.current_epoch = epoch
        cb.on_train_epoch_start(trainer, module)
        for i in range(10):
            time.sleep(0.002)  # the batch is fetched between the hooks
            cb.on_train_batch_start(trainer, module, Batch(), i)
            time.sleep(0.001)
            cb.on_before_backward(trainer, module, Loss(1.0))
            time.sleep(0.001)
            cb.on_after_backward(trainer, module)
            cb.on_train_batch_end(trainer, module, {"loss": Loss(1.0 / (epoch + 1))}, Batch(), i)
        validate(cb, trainer, module, val_loss)
        cb.on_train_epoch_end(trainer, module)
    trainer.callbacks[0].stopped_epoch = 2
    cb.on_fit_end(trainer, module)


if __name__ == "__main__":
    main()
