"""Which point each worker runs next, so that a worker prepares each group of points once.

Points of one group (`_core.lowering_group`: the same cluster and workload, another bandwidth or NIC policy)
share their lowered jobs and prepared model, which a worker keeps from one point to the next. So a worker
works through one group; when it is done, it takes a group no worker has started; when there is none, it
helps with the group that has the most points left (its first point there is prepared anew). The order of
groups and of points within them is the study's, so the schedule depends only on when workers finish.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

P = TypeVar("P")


class Groups(Generic[P]):
    def __init__(self, points: Iterable[P], group: Callable[[P], Hashable]):
        self.left: dict[Hashable, deque[P]] = {}
        for p in points:
            self.left.setdefault(group(p), deque()).append(p)
        self.working_on: dict[Hashable, Hashable] = {}  # worker -> its group

    def __len__(self) -> int:
        return sum(len(q) for q in self.left.values())

    def next(self, worker: Hashable) -> P | None:
        """The point `worker` runs next, or None when every point has been handed out."""
        g = self.working_on.get(worker)
        if g not in self.left:
            started = set(self.working_on.values())
            g = next((k for k in self.left if k not in started), None)
            if g is None:
                g = max(self.left, key=lambda k: len(self.left[k]), default=None)
            if g is None:
                return None
            self.working_on[worker] = g
        points = self.left[g]
        p = points.popleft()
        if not points:
            del self.left[g]
        return p
