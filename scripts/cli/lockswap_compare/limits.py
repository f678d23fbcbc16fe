"""When a run is stopped: its time limit, and the hang detector.

Slow is not a hang. A run past its time limit is "over-limit", its elapsed
time kept as a lower bound. A run is a "hang" only if it makes no progress for
the hang time: no CPU time used, no thread runnable and no byte of output.
"""


def median_us(values):
    """The median of whole microseconds, truncated to a whole microsecond."""
    v = sorted(values)
    n = len(v)
    if n % 2:
        return v[n // 2]
    return int((v[n // 2 - 1] + v[n // 2]) / 2)


def limit_us(glibc_us, factor, timeout_us, min_us):
    """The limit of a run: timeout_us, or factor x the median of the glibc
    runs of its group so far (glibc_us) if sooner, but never under min_us.
    A median, so that one noisy glibc run cannot move it. Factor 0: off."""
    if not glibc_us or factor == 0:
        return timeout_us
    limit = median_us(glibc_us) * factor
    if limit < min_us:
        limit = min_us
    if limit > timeout_us:
        limit = timeout_us
    return int(limit)


class Watch:
    """Decides, sample by sample, whether a run must be stopped.

    observe() takes the time (microseconds, any steady clock), the CPU ticks
    its process tree has used so far, whether any of its threads is runnable
    (running or in uninterruptible sleep) and the size of its output so far,
    and returns None (let it run), "over-limit" or "hang"."""

    def __init__(self, start_us, limit_us, hang_us):
        self.start = start_us
        self.limit = limit_us
        self.hang = hang_us
        self.progress = start_us
        self.last = None

    def observe(self, now_us, ticks, runnable, out_bytes):
        if now_us - self.start > self.limit:
            return "over-limit"
        if runnable or self.last != (ticks, out_bytes):
            self.progress = now_us
            self.last = (ticks, out_bytes)
        elif now_us - self.progress > self.hang:
            return "hang"
        return None
