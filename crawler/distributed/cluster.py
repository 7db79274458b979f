"""What every member of a distributed run shares: the Redis connection, the key names, heartbeats, the plan.

Keys (``P`` is the prefix, ``jobcrawl`` unless ``--prefix``; ``C`` a crawl's id, ``S`` a source name)::

    P:lock                      the coordinator of the running crawl (expires unless its heartbeat renews it)
    P:active                    id of the crawl workers should join (set once every source is seeded)
    P:crawl:C:plan              the plan: each source's spider, arguments, settings and run id (JSON);
                                deleted when the crawl has ended: a worker then pushes and fetches nothing more
    P:crawl:C:S:requests        scrapy-redis priority queue (sorted set) of the source's requests
    P:crawl:C:S:dupefilter      request fingerprints seen in this crawl (set)
    P:crawl:C:S:inflight        requests a worker took and has not acknowledged (hash: worker|n → score, request)
    P:crawl:C:S:members         workers whose crawler of the source is open (set)
    P:crawl:C:S:sent            requests sent to the network, for the per-source cap (counter)
    P:crawl:C:S:capped          set when the cap was reached: every worker closes the source
    P:crawl:C:stop              set when the coordinator was interrupted: workers close every source
    P:crawl:C:joined            workers that joined the crawl (hash: worker → the sources it takes, one a line)
    P:crawl:C:reports           report deltas (pickled CrawlReport per source), pushed with the acknowledgements
    P:crawl:C:host:H:*          per-host politeness: next allowed send time, requests in flight
    P:crawl:C:robots:H          a host's robots.txt body, fetched once for the cluster
    P:worker:W                  heartbeat of worker W (expires when W stops renewing it)
    P:spool                     the item spool: batches of rows waiting for the writer (list)
    P:spool:processing:W        the batch writer W is storing (moved back to the spool when W is gone)
    P:writer                    the writer draining the spool (expires unless renewed)
"""

from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from dataclasses import dataclass
from typing import Any

import redis

from normalize.redact import redact

HEARTBEAT_TTL = float(os.environ.get("JOBCRAWL_HEARTBEAT_TTL") or 10.0)
"""Seconds after which a worker, writer or coordinator that stopped renewing its key counts as gone
(``$JOBCRAWL_HEARTBEAT_TTL``, the same in every process of a cluster; renewed every quarter of it)."""


class RedisUnreachable(RuntimeError):
    """Redis cannot be reached at the URL given (the message is one line naming it)."""


class RedisLost(RedisUnreachable):
    """Redis stopped answering, or refused writes, during a run (the message is one line naming it)."""


def redis_problem(err: BaseException) -> str:
    """What a Redis error means for a run, in a few words: unreachable, out of memory, or its message."""
    import redis

    if isinstance(err, (redis.ConnectionError, redis.TimeoutError)):
        return f"unreachable ({err})"
    if isinstance(err, redis.exceptions.OutOfMemoryError) or str(err).startswith("OOM"):
        return "out of memory (maxmemory reached, writes refused)"
    return f"failed ({err})"


def connect(url: str, *, timeout: float = 5.0) -> redis.Redis:
    """A client of the Redis at ``url``, checked with a PING; :class:`RedisUnreachable` when it does not answer."""
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=30,
                                      health_check_interval=30)
        client.ping()
    except (redis.RedisError, ValueError) as err:
        raise RedisUnreachable(redact(f"cannot reach Redis at {url}: {err}")) from None
    return client


def new_id() -> str:
    """An id for a worker, writer or coordinator: host, pid and a random part."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class Keys:
    """The Redis key names of one prefix (see the module docstring)."""

    prefix: str = "jobcrawl"

    @property
    def lock(self) -> str:
        return f"{self.prefix}:lock"

    @property
    def active(self) -> str:
        return f"{self.prefix}:active"

    @property
    def spool(self) -> str:
        return f"{self.prefix}:spool"

    @property
    def writer(self) -> str:
        return f"{self.prefix}:writer"

    def processing(self, writer_id: str) -> str:
        return f"{self.prefix}:spool:processing:{writer_id}"

    def worker(self, worker_id: str) -> str:
        return f"{self.prefix}:worker:{worker_id}"

    @property
    def worker_prefix(self) -> str:
        return f"{self.prefix}:worker:"

    def crawl(self, crawl: str, *parts: str) -> str:
        return ":".join((self.prefix, "crawl", crawl, *parts))

    def source(self, crawl: str, source: str, what: str) -> str:
        return self.crawl(crawl, source, what)

    def host(self, crawl: str, host: str, what: str) -> str:
        return self.crawl(crawl, "host", host, what)


class Heartbeat:
    """Keeps ``key`` set to ``value`` with a time to live, renewed by a thread of its own (so a busy
    reactor does not make its process look gone); :meth:`stop` deletes it."""

    def __init__(self, client: redis.Redis, key: str, value: str = "1", ttl: float = HEARTBEAT_TTL):
        self.client, self.key, self.value, self.ttl = client, key, value, ttl
        self._stop = threading.Event()
        self.lost = False
        self.error: BaseException | None = None  # the last renewal's error, until one succeeds
        self.client.set(key, value, px=int(ttl * 1000))
        self._thread = threading.Thread(target=self._run, name=f"heartbeat {key}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.ttl / 4):
            try:
                self.client.set(self.key, self.value, px=int(self.ttl * 1000))
                self.lost, self.error = False, None
            except redis.RedisError as err:
                self.lost, self.error = True, err

    def stop(self, *, delete: bool = True) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if delete:
            try:
                self.client.delete(self.key)
            except redis.RedisError:
                pass


# --------------------------------------------------------------------------- the plan


def save_plan(client: redis.Redis, keys: Keys, crawl: str, plan: dict[str, Any]) -> None:
    client.set(keys.crawl(crawl, "plan"), json.dumps(plan, ensure_ascii=False, default=str))


def load_plan(client: redis.Redis, keys: Keys, crawl: str) -> dict[str, Any] | None:
    data = client.get(keys.crawl(crawl, "plan"))
    return None if data is None else json.loads(data)


def source_keys(keys: Keys, crawl: str, source: str) -> dict[str, str]:
    """The keys of one source of a crawl, by role."""
    return {what: keys.source(crawl, source, what)
            for what in ("requests", "dupefilter", "inflight", "members", "sent", "capped")}


def delete_crawl(client: redis.Redis, keys: Keys, crawl: str) -> int:
    """Delete every key of a crawl; returns how many."""
    doomed = list(client.scan_iter(match=keys.crawl(crawl, "*"), count=500))
    for i in range(0, len(doomed), 500):
        client.delete(*doomed[i:i + 500])
    return len(doomed)


# --------------------------------------------------------------------------- leases

# Take the request with the best score and lease it to a worker in one step: it is in the queue or
# in flight, never in neither. Value in flight: "<score>\n<request>", so it can be put back as it was.
POP_LEASED = """
local r = redis.call('ZPOPMIN', KEYS[1])
if #r == 0 then return false end
redis.call('HSET', KEYS[2], ARGV[1], r[2] .. '\\n' .. r[1])
return r[1]
"""

# Put back the leases of workers whose heartbeat key is gone (fields are "<worker id>|<n>").
REQUEUE_DEAD = """
local moved = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local field = all[i]
  local bar = string.find(field, '|', 1, true)
  local worker = string.sub(field, 1, bar - 1)
  if redis.call('EXISTS', ARGV[1] .. worker) == 0 then
    local v = all[i + 1]
    local nl = string.find(v, '\\n', 1, true)
    redis.call('ZADD', KEYS[2], tonumber(string.sub(v, 1, nl - 1)), string.sub(v, nl + 1))
    redis.call('HDEL', KEYS[1], field)
    moved = moved + 1
  end
end
return moved
"""


# Put back the given leases (a worker closing a source before its requests were done).
REQUEUE_LEASES = """
local moved = 0
for i = 1, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v then
    local nl = string.find(v, '\\n', 1, true)
    redis.call('ZADD', KEYS[2], tonumber(string.sub(v, 1, nl - 1)), string.sub(v, nl + 1))
    redis.call('HDEL', KEYS[1], ARGV[i])
    moved = moved + 1
  end
end
return moved
"""


def requeue_leases(client: redis.Redis, keys: Keys, crawl: str, source: str, leases: list[str]) -> int:
    """Put the given leases' requests back into the source's queue; how many were still in flight."""
    if not leases:
        return 0
    sk = source_keys(keys, crawl, source)
    return int(client.eval(REQUEUE_LEASES, 2, sk["inflight"], sk["requests"], *leases))


def requeue_dead(client: redis.Redis, keys: Keys, crawl: str, source: str) -> int:
    """Put the requests leased by gone workers back into the source's queue; how many."""
    sk = source_keys(keys, crawl, source)
    return int(client.eval(REQUEUE_DEAD, 2, sk["inflight"], sk["requests"], keys.worker_prefix))


def live_members(client: redis.Redis, keys: Keys, crawl: str, source: str) -> list[str]:
    """Workers whose crawler of the source is open and whose heartbeat is alive."""
    members = [m.decode() for m in client.smembers(source_keys(keys, crawl, source)["members"])]
    if not members:
        return []
    alive = client.exists(*[keys.worker(m) for m in members]) if len(members) == 1 else None
    if alive is not None:
        return members if alive else []
    pipe = client.pipeline(transaction=False)
    for m in members:
        pipe.exists(keys.worker(m))
    return [m for m, ok in zip(members, pipe.execute()) if ok]


def pending(client: redis.Redis, keys: Keys, crawl: str, source: str) -> tuple[int, int]:
    """(requests queued, requests in flight) of a source, read together."""
    sk = source_keys(keys, crawl, source)
    pipe = client.pipeline(transaction=True)
    pipe.zcard(sk["requests"])
    pipe.hlen(sk["inflight"])
    queued, inflight = pipe.execute()
    return int(queued), int(inflight)
