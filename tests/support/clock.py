"""A clock the test moves by hand, for code that takes its time from an injected clock."""

from __future__ import annotations


class Ticks:
    """Returns `now`, which the test sets."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
