"""A thread-safe least-recently-used map, shared by the served database's caches."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any


class Lru:
    """Keeps the most recently used entries while their weights add up to at most ``size``.

    An entry weighs ``weight(value)`` (1 by default: ``size`` is then a number of entries)."""

    def __init__(self, size: int, weight: Callable[[Any], int] | None = None):
        self.size, self.weight = size, weight or (lambda value: 1)
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Any) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
            return self._items.get(key)

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            if key in self._items:
                self._total -= self.weight(self._items.pop(key))
            self._items[key] = value
            self._total += self.weight(value)
            while self._total > self.size:
                _, old = self._items.popitem(last=False)
                self._total -= self.weight(old)
