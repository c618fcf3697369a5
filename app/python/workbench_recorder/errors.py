"""The recorder's one exception type."""


class RecorderError(Exception):
    """A run folder the recorder cannot use, or a config it cannot record. The message names the
    argument, field or file, and what to do about it."""
