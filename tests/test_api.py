"""crawler/api.py called directly on real SQLite files: ingest and reparse (each in a fresh process: a Twisted reactor
cannot restart), refresh and score in this process, and the usage errors and lock the command line turns into
its messages and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AS_OF, FIXTURES, ROOT, SEEDS, run_cli
from crawler import api

CALL = """
import json, sys
from crawler import api

db, calls = sys.argv[1], json.loads(sys.argv[2])
name, kwargs = calls
if name == "ingest":
    report = api.ingest([kwargs.pop("path")], db, settings={"LOG_LEVEL": "CRITICAL"}, **kwargs)
else:
    report = api.reparse(db, settings={"LOG_LEVEL": "CRITICAL"}, **kwargs)
print(json.dumps({"status": report.status, "counts": report.counts, "steps": report.steps,
                  "alerts": report.alerts.counters()}))
"""


def call(db: Path, name: str, **kwargs) -> dict:
    """``api.<name>(…)`` on ``db`` in a fresh Python process: the report's status, counts, steps and alerts."""
    proc = subprocess.run([sys.executable, "-c", CALL, str(db), json.dumps([name, kwargs])], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def counts(new=0, unchanged=0, files_unchanged=0) -> dict[str, int]:
    return {"files": 2, "found": 2, "new": new, "updated": 0, "unchanged": unchanged, "quarantined": 0, "closed": 0,
            "reopened": 0, "requests": 0, "errors": 0, "files_unchanged": files_unchanged}


FIRST_STEPS = {"dedupe": {"refreshed": 0, "boilerplate": 0, "added": 2, "new_clusters": 2, "clusters": 2,
                          "duplicates": 0},
               "score": {"scored": 2, "unchanged": 0, "market_stats": 10, "salary_groups": 0}}
NO_SIGNALS = {"ghost_open_long": 0, "ghost_reposted": 0, "ghost_reopened": 0, "ghost_mass_agency": 0,
              "likely_employers": 0}
FIRST_STEPS["signals"] = NO_SIGNALS
FIRST_STEPS["velocity"] = {"rows": 61}
SKIPPED = {"dedupe": {"skipped": 1}, "score": {"skipped": 1}, "signals": NO_SIGNALS,  # signals run every time
           "velocity": {"unchanged": 1}}
NO_ALERTS = {"matched": 0, "sent": 0, "pending": 0, "errors": 0}


@pytest.mark.slow
@pytest.mark.parametrize("then, expected", [
    pytest.param(None, None, id="first-ingest"),
    pytest.param(("ingest", {"path": str(SEEDS), "as_of": AS_OF}),
                 {"status": "ok", "counts": counts(unchanged=2, files_unchanged=2), "steps": SKIPPED,
                  "alerts": NO_ALERTS}, id="same-files-again"),
    pytest.param(("ingest", {"path": str(SEEDS), "as_of": AS_OF, "reparse": True}),
                 {"status": "ok", "counts": counts(unchanged=2), "steps": SKIPPED, "alerts": NO_ALERTS},
                 id="ingest-reparse"),
    pytest.param(("reparse", {}),
                 {"status": "ok", "counts": counts(unchanged=2), "steps": SKIPPED, "alerts": NO_ALERTS},
                 id="reparse-raw-inputs"),
    pytest.param(("reparse", {"sources": ["textdump"]}),
                 {"status": "ok", "counts": counts(unchanged=2), "steps": SKIPPED, "alerts": NO_ALERTS},
                 id="reparse-one-source"),
])
def test_ingest_of_the_seeds_then_a_second_run(tmp_path, then, expected):
    db = tmp_path / "jobs.db"
    first = call(db, "ingest", path=str(SEEDS), as_of=AS_OF)
    assert first == {"status": "ok", "counts": counts(new=2), "steps": FIRST_STEPS, "alerts": NO_ALERTS}
    if then:
        assert call(db, then[0], **then[1]) == expected


@pytest.mark.parametrize("paths, options, spider, args", [
    pytest.param([SEEDS], {}, "textdump", {"paths": [str(SEEDS)], "as_of": None}, id="dumps"),
    pytest.param([FIXTURES / "tabular" / "jobspy.csv"], {"preset": "jobspy", "as_of": AS_OF}, "tabular",
                 {"paths": [str(FIXTURES / "tabular" / "jobspy.csv")], "as_of": AS_OF, "format": "auto",
                  "preset": "jobspy", "mapping": [], "constants": []}, id="table"),
])
def test_an_ingest_job_reads_its_files_with_the_spider_of_their_format(tmp_path, paths, options, spider, args):
    job, settings = api.ingest_job(map(str, paths), str(tmp_path / "jobs.db"), batch_size=7, **options)
    assert (job.spidercls.name, job.kind, job.args) == (spider, "ingest", args)
    assert settings == {"JOBCRAWL_BATCH_SIZE": 7, "JOBCRAWL_REPARSE": False, "JOBCRAWL_MAX_FILE_SIZE": 256 * 2**20,
                        "JOBCRAWL_TZ": None, "JOBCRAWL_AS_OF_SOURCE": "as_of" if "as_of" in options else "file_mtime"}


@pytest.fixture
def seeded(tmp_path, monkeypatch) -> str:
    """A database holding the two seed postings as the writer stores them, before any corpus step (no crawl)."""
    from crawler.ingest.appdump import parse_dump
    from crawler.store.rows import Batch, posting_row
    from crawler.store.runs import start_run
    from crawler.store.schema import open_db
    from crawler.store.writer import Writer
    from normalize.models import RawPosting
    from normalize.posting import normalize_posting

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no alerts config of the machine's user
    monkeypatch.delenv("JOBCRAWL_ALERTS_CONFIG", raising=False)
    path = str(tmp_path / "jobs.db")
    db = open_db(path)
    run_id = start_run(db, "ingest", {"paths": ["seeds"]})
    rows = [posting_row(normalize_posting(item)) for seed in sorted(SEEDS.glob("*.txt"))
            for item in parse_dump(seed.read_bytes(), locator=seed.name, fetched_at="2026-11-29T04:00:00+00:00",
                                   as_of="2026-11-29T04:00:00+00:00") if isinstance(item, RawPosting)]
    Writer(db).write(Batch(run_id, postings=rows))
    db.close()
    return path


def test_refresh_runs_its_steps_in_order_and_counts_what_changed(seeded):
    assert api.REFRESH_STEPS == ("dedupe", "score", "signals", "velocity", "alerts")
    first = api.refresh(seeded)
    # keys: the writer alone stored no dedupe keys (the item pipeline makes them in a run), so the step makes them
    assert first.steps == {"dedupe": {"keys": 2, **FIRST_STEPS["dedupe"]}, "score": FIRST_STEPS["score"],
                           "signals": NO_SIGNALS, "velocity": {"rows": 6}}  # no skills: the writer alone tags none
    assert first.alerts.counters() == NO_ALERTS
    again = api.refresh(seeded)
    assert again.steps == {"dedupe": {"refreshed": 0, "clusters": 2, "duplicates": 0},
                           "score": {"scored": 0, "unchanged": 2, "market_stats": 10, "salary_groups": 0},
                           "signals": NO_SIGNALS, "velocity": {"unchanged": 1}}


def test_refresh_delivers_the_new_matches_of_a_watch(seeded, capsys):
    from crawler.alerts.delivery import add_watch
    from crawler.store.schema import open_db
    from normalize.watch import WatchSpec

    db = open_db(seeded)
    add_watch(db, WatchSpec(name="all", destinations=["stdout"]), config=None, include_existing=True)
    db.close()
    capsys.readouterr()
    done = api.refresh(seeded)
    assert done.alerts.counters() == {"matched": 2, "sent": 2, "pending": 0, "errors": 0}
    assert done.alerts.lines() == ["alerts: new matches all 2 · delivered stdout 2"]
    assert capsys.readouterr().out.splitlines() == ["jobcrawl: 2 new postings for all",
                                                    "- AI算子开发工程师 · 吉利汽车 · 杭州 · 43K",
                                                    "- 模型训练优化开发工程师 · 初速度 · 苏州 · 35K"]


def test_refresh_counts_are_the_lines_the_command_line_prints(seeded):
    """The counts refresh returns are the ones the command line prints, in its words."""
    from crawler.cli import dedupe_line

    steps = api.refresh(seeded).steps
    assert dedupe_line(steps["dedupe"]) == ("dedupe: 2 clustered · 0 joined a cluster · 0 clusters merged · "
                                            "2 clusters, 0 duplicates in all")
    assert run_cli("dedupe", "--db", seeded, check=True).stdout == ("dedupe: 0 clustered · 0 joined a cluster · "
                                                                    "0 clusters merged · 2 clusters, "
                                                                    "0 duplicates in all\n")


@pytest.mark.parametrize("options, scored, fit, report", [
    pytest.param({}, 2, None, False, id="scores"),
    pytest.param({"force": True, "report": True}, 2, None, True, id="report"),
    pytest.param({"profile": str(SEEDS / "profile.toml"), "top": 1}, 2,
                 {"scorer": "fit:cuda-infra", "scored": 2, "unchanged": 0, "blocked": 0}, False, id="profile"),
])
def test_score_scores_records_a_run_and_reports(seeded, options, scored, fit, report):
    from crawler.store.schema import open_db

    done = api.score(seeded, **options)
    assert (done.counts["scored"], done.counts["unchanged"], done.counts["scorer"]) == (scored, 0, "jobcrawl-v1")
    assert (done.fit and {k: done.fit[k] for k in ("scorer", "scored", "unchanged", "blocked")}) == fit
    assert [row["id"] for row in done.best_fits] == ([1] if fit else [])
    assert (done.report is not None, done.readonly) == (report, None)
    db = open_db(seeded, readonly=True)
    assert db.execute("SELECT kind, status FROM runs WHERE id = ?", [done.run_id]).fetchone() == ("score", "ok")
    db.close()
    assert api.score(seeded).counts["unchanged"] == 2


@pytest.mark.parametrize("call_api, message, option", [
    pytest.param(lambda db: api.ingest([str(SEEDS)], db, as_of="yesterday"),
                 "--as-of 'yesterday' is not an ISO date or datetime (e.g. 2026-11-29T12:00:00+08:00)", "--as-of",
                 id="as-of"),
    pytest.param(lambda db: api.ingest([str(SEEDS)], db, preset="jobspy"),
                 "--preset, --map and --value apply to csv, jsonl and lines files; PATHS hold only text dumps "
                 "(see --format)", None, id="preset-on-dumps"),
    pytest.param(lambda db: api.ingest([str(SEEDS / "missing.txt")], db),
                 f"{SEEDS / 'missing.txt'}: no such file or folder", None, id="no-such-path"),
    pytest.param(lambda db: api.reparse(db, sources=["lever"]),
                 "no raw input of 'lever' in {db} (its sources: none)", "--source", id="reparse-source"),
    pytest.param(lambda db: api.crawl([], db, sources_file=str(SEEDS / "sources.toml")),
                 "{sources}: no enabled source", None, id="crawl-nothing"),
    pytest.param(lambda db: api.score(db, profile=str(SEEDS / "sources.toml")),
                 "{sources}: name: Field required", None, id="score-bad-profile"),
])
def test_usage_errors_name_the_option(seeded, call_api, message, option):
    with pytest.raises(api.UsageError) as raised:
        call_api(seeded)
    expected = message.format(db=seeded, sources=SEEDS / "sources.toml")
    assert (str(raised.value), raised.value.option) == (expected, option)


def test_a_run_waits_for_no_lock_another_run_holds(seeded):
    from crawler.run.lock import LockHeld, db_lock

    with db_lock(seeded):
        with pytest.raises(LockHeld):
            api.ingest([str(SEEDS)], seeded, as_of=AS_OF)
        with pytest.raises(LockHeld):
            api.refresh(seeded)
