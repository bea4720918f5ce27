"""A monotonic clock that sleeping advances: the clock and sleep seams of the waiting action plugins."""


class Clock(object):
    """Calling it gives the time; ``sleep`` advances it (no real waiting)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds
