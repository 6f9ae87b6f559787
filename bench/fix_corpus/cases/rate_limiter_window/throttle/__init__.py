"""Request throttling helpers."""

from throttle.window import SlidingWindowLimiter

__all__ = ["SlidingWindowLimiter"]
