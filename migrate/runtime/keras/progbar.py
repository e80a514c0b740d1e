"""`keras.utils.Progbar`: the progress bar a custom training loop prints, as Keras prints it.

The same arguments and the same averaging: a stateless value (every one unless named in
`stateful_metrics`, or only those named in `stateless_metrics`) is shown as its mean over
the steps so far, each update weighted by the steps it covers (`current` minus the last
`current`); a stateful one as its last value; the final update (`current >= target`, or
`finalize=True`) shows the last values as they are. The line is Keras's: `current/target`,
the bar, the ETA or time taken, the time per step, then `- name: value` with four decimals
(scientific below 1e-3); verbose 1 redraws one line at most every `interval` seconds, verbose
2 prints the final line only, 0 prints nothing. MindSpore tensors and NumPy values are
read as numbers. Under `migrate run -n N` only rank 0 prints, as for `fit`'s progress.
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

from ._tensors import to_numpy


def _number(value):
    """A number to show: a Python number as it is, a tensor's or array's mean."""
    if isinstance(value, (int, float)):
        return value
    return float(np.mean(to_numpy(value)))


def _prints() -> bool:
    from .. import collectives

    try:
        return collectives.replicas().rank == 0
    except Exception:  # noqa: BLE001 - no job formed: a plain one-process run prints
        return True


class Progbar:
    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None, stateless_metrics=None,
                 unit_name="step"):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be provided.")
        self.target, self.width, self.verbose = target, width, verbose
        self.interval, self.unit_name = interval, unit_name
        self.stateful_metrics = set(stateful_metrics) if stateful_metrics is not None else (
            None if stateless_metrics is not None else set())
        self.stateless_metrics = set(stateless_metrics) if stateless_metrics is not None else None
        self._dynamic_display = (hasattr(sys.stdout, "isatty") and sys.stdout.isatty()) or "ipykernel" in sys.modules \
            or "posix" in sys.modules or "PYCHARM_HOSTED" in os.environ
        self._seen_so_far = 0
        self._values: dict = {}
        self._values_order: list = []
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first_step = None
        self._prev_total_width = 0
        self._rank0 = _prints()

    def _stateless(self, name) -> bool:
        if self.stateful_metrics is not None:
            return name not in self.stateful_metrics
        return name in self.stateless_metrics

    def update(self, current, values=None, finalize=None):
        if finalize is None:
            finalize = False if self.target is None else current >= self.target
        for name, value in values or []:
            value = _number(value)
            if name not in self._values_order:
                self._values_order.append(name)
            if self._stateless(name) and not finalize:
                weight = max(current - self._seen_so_far, 1)
                total, count = self._values.get(name, [0.0, 0])
                self._values[name] = [total + value * weight, count + weight]
            else:
                self._values[name] = [value, 1]
        self._seen_so_far = current
        now = time.time()
        per_unit = self._step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return  # (the last draw's time stays: the next update after `interval` draws)
            self._print(self._line(current, now, per_unit, finalize))
        elif self.verbose == 2 and finalize and self.target is not None and self.target > 0:
            digits = int(math.log10(self.target)) + 1
            info = f"%{digits}d/%d - {now - self._start:.0f}s -{self._per_unit(per_unit)}" % (current, self.target)
            self._print(info + self._shown(strict=True) + "\n")
        self._last_update = now

    def add(self, n, values=None):
        self.update(self._seen_so_far + n, values)

    def _line(self, current, now, per_unit, finalize) -> str:
        message = ("\b" * self._prev_total_width + "\r") if self._dynamic_display else "\n"
        special = 0
        if self.target is not None and self.target > 0:
            digits = int(math.log10(self.target)) + 1
            bar = f"\x1b[1m{f'%{digits}d/%d' % (current, self.target)}\x1b[0m "
            special += 8
            done = int(self.width * float(current) / self.target)
            if done > 0:
                bar += f"\33[32m{'━' * done}\x1b[0m"
                special += 9
            bar += f"\33[37m{'━' * (self.width - done)}\x1b[0m"
            special += 9
        else:
            bar = "%7d/Unknown" % current
        if self.target is not None and self.target > 0 and not finalize:
            eta = per_unit * (self.target - current)
            shown = ("%d:%02d:%02d" % (eta // 3600, (eta % 3600) // 60, eta % 60) if eta > 3600
                     else "%d:%02d" % (eta // 60, eta % 60) if eta > 60 else "%ds" % eta)
            info = f" \x1b[1m{shown}\x1b[0m"
        else:
            info = f" \x1b[1m{now - self._start:.0f}s\x1b[0m"
        special += 8
        info += self._per_unit(per_unit) + self._shown(strict=False)
        width = len(bar) + len(info) - special
        message += bar + info
        if self._prev_total_width > width:
            message += " " * (self._prev_total_width - width)
        self._prev_total_width = width
        return message + ("\n" if finalize else "")

    def _shown(self, strict: bool) -> str:
        """`- name: value` for each value, averaged; Keras's verbose-2 line compares the mean
        itself with 1e-3 (`strict`), its verbose-1 line the mean's magnitude."""
        out = ""
        for name in self._values_order:
            total, count = self._values[name]
            mean = total / max(1, count)
            big = mean > 1e-3 if strict else abs(mean) > 1e-3
            out += f" - {name}: {mean:.4f}" if big else f" - {name}: {mean:.4e}"
        return out

    def _per_unit(self, seconds) -> str:
        if seconds >= 1 or seconds == 0:
            return f" {seconds:.0f}s/{self.unit_name}"
        if seconds >= 1e-3:
            return f" {seconds * 1000.0:.0f}ms/{self.unit_name}"
        return f" {seconds * 1000000.0:.0f}us/{self.unit_name}"

    def _step_duration(self, current, now) -> float:
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_unit

    def _print(self, message: str) -> None:
        if self._rank0:
            sys.stdout.write(message)
            sys.stdout.flush()
