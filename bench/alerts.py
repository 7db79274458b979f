"""What the alerts step adds to every ingest and crawl, on N generated postings (default 10,000).

    .venv/bin/python bench/alerts.py [N]

Prints the seconds of: the step with no watch (the cost every run pays), adding a watch (its
baseline), the step with three watches and no profile, and with the example profile (fit scored and
the blocklist applied over every open posting: the first time, then again with nothing changed).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.gen import write_dumps  # noqa: E402


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "crawler.cli", *args], cwd=ROOT, check=True, capture_output=True)


def timed(label: str, fn) -> None:
    start = time.perf_counter()
    fn()
    print(f"{label}: {time.perf_counter() - start:.2f} s", flush=True)


def main() -> None:
    from crawler.alerts.config import load_config
    from crawler.alerts.delivery import add_watch, deliver_new_matches
    from crawler.store.schema import open_db
    from normalize.watch import WatchSpec

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_dumps(tmp / "in", n)
        db = tmp / "jobs.db"
        cli("ingest", str(tmp / "in"), "--db", str(db), "--as-of", "2026-11-29T12:00:00+08:00")
        print(f"{n} postings ingested", flush=True)
        plain = tmp / "plain.toml"
        plain.write_text('[destinations.log]\ntype = "file"\npath = "alerts.jsonl"\n', encoding="utf-8")
        with_profile = tmp / "profile.toml"
        with_profile.write_text(f'profile = "{ROOT / "seeds" / "profile.toml"}"\n'
                                '[destinations.log]\ntype = "file"\npath = "alerts.jsonl"\n', encoding="utf-8")
        timed("alerts step, no watch", lambda: deliver_new_matches(db, config_path=plain))
        database = open_db(db)
        specs = [WatchSpec(name="cuda", search="CUDA 算子", destinations=["log"]),
                 WatchSpec(name="bj", cities=["北京"], min_salary="40k", destinations=["log"]),
                 WatchSpec(name="all", destinations=["log"])]
        timed("watch add (search, baseline)", lambda: add_watch(database, specs[0], config=load_config(plain)))
        for spec in specs[1:]:
            add_watch(database, spec, config=load_config(plain))
        database.close()
        timed("alerts step, 3 watches, no profile", lambda: deliver_new_matches(db, config_path=plain))
        timed("alerts step, 3 watches, profile (fit + blocklist), first", lambda: deliver_new_matches(db, config_path=with_profile))
        timed("alerts step, 3 watches, profile, nothing changed", lambda: deliver_new_matches(db, config_path=with_profile))


if __name__ == "__main__":
    main()
