"""workbench_recorder: record your own PyTorch training as a Speedup Workbench run folder.

Standard library only (torch is used when your script has imported it; Lightning only by
workbench_recorder.lightning). See Recorder for the plain loop and
workbench_recorder.lightning.WorkbenchCallback for Lightning's Trainer.
"""
from .errors import RecorderError
from .recorder import Recorder
from .schema import EVENT_VERSION

__version__ = "0.1.0"
__all__ = ["Recorder", "RecorderError", "EVENT_VERSION", "__version__"]
