"""Applications on real databases: `jobcrawl track` sets a job's status (every member of its duplicate cluster shows
it), `track --list` lists one row per job, and the status survives re-ingest, reparse, dedupe --rebuild, a re-crawl
that closes and reopens the posting; `history` shows the changes, the export carries them, watches skip tracked
postings unless --include-tracked (a real webhook receiver)."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES, SEEDS, run_cli
from receivers import Receiver


SEED0 = (SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")  # 吉利汽车 · AI算子开发工程师 · 杭州
SEED3 = (SEEDS / "003_5eabc84b6ca487f0.txt").read_text(encoding="utf-8")  # 初速度 · 模型训练优化开发工程师 · 苏州
SCRIPT_TITLE = "<script>alert(1)</script>模型训练优化开发工程师"
UTC = {"TZ": "UTC"}  # a --at without an offset is local time


def cli(db: Path, *args: str, check: bool = True):
    return run_cli(*args, "--db", str(db), check=check, env=UTC)


def rows(db: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


def listed(db: Path, *args: str) -> list[dict]:
    return [json.loads(line) for line in cli(db, "track", "--list", "--json", *args).stdout.splitlines()]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """Seed 000 and a staffing agency's copy of it in 上海 ingested on 11-29 (postings 1 and 2, one cluster), then
    everything again on 11-30 with seed 003 under a title holding markup (posting 3)."""
    tmp = tmp_path_factory.mktemp("track")
    inputs, db = tmp / "in", tmp / "jobs.db"
    inputs.mkdir()
    (inputs / "000.txt").write_text(SEED0, encoding="utf-8")
    copy = "星云人才" + SEED0[SEED0.index("\n"):]
    (inputs / "agency.txt").write_text(copy.replace("杭州 · 人工智能", "上海 · 人工智能"), encoding="utf-8")
    cli(db, "ingest", str(inputs), "--as-of", "2026-11-29T12:00:00+08:00")
    (inputs / "b.txt").write_text(SEED3.replace("模型训练优化开发工程师", SCRIPT_TITLE), encoding="utf-8")
    cli(db, "ingest", str(inputs), "--as-of", "2026-11-30T12:00:00+08:00")
    assert rows(db, "SELECT p.id, p.company, s.cluster_id FROM postings p JOIN dedupe_signatures s ON s.posting_id = p.id"
                    " ORDER BY p.id") == [(1, "吉利汽车", 1), (2, "星云人才", 1), (3, "初速度", 2)]
    return db


TRACKS = [  # (arguments, the line it prints)
    (("2", "saved", "--note", "looks good", "--at", "2026-11-30T08:00:00+08:00"),
     "#2 AI算子开发工程师 · 星云人才 · 上海: saved at 2026-11-30 00:00 — looks good"),
    (("1", "applied", "--note", "sent CV", "--at", "2026-12-01T10:00:00+00:00"),
     "#1 AI算子开发工程师 · 吉利汽车 · 杭州: applied at 2026-12-01 10:00 — sent CV"),
    (("3", "rejected", "--at", "2026-12-02"),
     f"#3 {SCRIPT_TITLE} · 初速度 · 苏州: rejected at 2026-12-02 00:00"),
    (("2", "saved", "--at", "2026-11-01"),  # backdated: the job keeps its latest status
     "#2 AI算子开发工程师 · 星云人才 · 上海: saved at 2026-11-01 00:00; the job stays applied since 2026-12-01 10:00"
     " (a later change)"),
]


@pytest.fixture(scope="module")
def tracked(template, tmp_path_factory) -> tuple[Path, list[str]]:
    """The template with the statuses of :data:`TRACKS` set, and the lines they printed."""
    db = tmp_path_factory.mktemp("tracked") / "jobs.db"
    shutil.copy(template, db)
    return db, [cli(db, "track", *args).stdout for args, _ in TRACKS]


JOB_1 = {"id": 1, "title": "AI算子开发工程师", "company": "吉利汽车", "city": "杭州", "status": "applied",
         "since": "2026-12-01T10:00:00+00:00", "notes": "looks good\nsent CV", "url": None}
JOB_3 = {"id": 3, "title": SCRIPT_TITLE, "company": "初速度", "city": "苏州", "status": "rejected",
         "since": "2026-12-02T00:00:00+00:00", "notes": None, "url": None}
APPLICATIONS = [(1, "applied", "2026-12-01T10:00:00+00:00", "2026-12-01T10:00:00+00:00", "looks good\nsent CV"),
                (2, "applied", "2026-12-01T10:00:00+00:00", "2026-12-01T10:00:00+00:00", "looks good\nsent CV"),
                (3, "rejected", "2026-12-02T00:00:00+00:00", "2026-12-02T00:00:00+00:00", None)]


def application_rows(db: Path) -> list[tuple]:
    return rows(db, "SELECT posting_id, status, since, updated, notes FROM applications ORDER BY posting_id")


@pytest.mark.parametrize("i", range(len(TRACKS)), ids=["on-a-copy", "on-the-canonical", "date-only", "backdated"])
@pytest.mark.slow
def test_track_prints_one_line(tracked, i):
    assert tracked[1][i] == TRACKS[i][1] + "\n"


@pytest.mark.slow
def test_a_status_belongs_to_the_job_and_shows_on_every_member(tracked):
    assert application_rows(tracked[0]) == APPLICATIONS
    assert rows(tracked[0], "SELECT posting_id, status, note, at FROM application_events ORDER BY id") == [
        (2, "saved", "looks good", "2026-11-30T00:00:00+00:00"), (1, "applied", "sent CV", "2026-12-01T10:00:00+00:00"),
        (3, "rejected", None, "2026-12-02T00:00:00+00:00"), (2, "saved", None, "2026-11-01T00:00:00+00:00")]


@pytest.mark.parametrize(("options", "expected"), [
    pytest.param((), [JOB_3, JOB_1], id="every-job-newest-change-first"),
    pytest.param(("--status", "applied"), [JOB_1], id="applied"),
    pytest.param(("--status", "rejected"), [JOB_3], id="rejected"),
    pytest.param(("--status", "offer"), [], id="none"),
])
@pytest.mark.slow
def test_list_as_json_one_object_a_line_one_row_per_job(tracked, options, expected):
    assert listed(tracked[0], *options) == expected


@pytest.mark.slow
def test_list_as_json_lines_exactly(tracked):
    assert cli(tracked[0], "track", "--list", "--json").stdout == (
        '{"id": 3, "title": "<script>alert(1)</script>模型训练优化开发工程师", "company": "初速度", "city": "苏州", '
        '"status": "rejected", "since": "2026-12-02T00:00:00+00:00", "notes": null, "url": null}\n'
        '{"id": 1, "title": "AI算子开发工程师", "company": "吉利汽车", "city": "杭州", "status": "applied", '
        '"since": "2026-12-01T10:00:00+00:00", "notes": "looks good\\nsent CV", "url": null}\n')


@pytest.mark.parametrize(("options", "expected"), [
    pytest.param((), [f"#3 rejected since 2026-12-02 00:00 · {SCRIPT_TITLE} · 初速度 · 苏州",
                      "#1 applied since 2026-12-01 10:00 · AI算子开发工程师 · 吉利汽车 · 杭州 — looks good / sent CV"],
                 id="all"),
    pytest.param(("--status", "offer"), ["no tracked jobs with status offer (jobcrawl track ID applied)"], id="none-with-status"),
])
@pytest.mark.slow
def test_list_as_lines(tracked, options, expected):
    assert cli(tracked[0], "track", "--list", *options).stdout.splitlines() == expected


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(("99", "applied"), "Error: Invalid value for ID: no posting with id '99' (jobcrawl export or the listing "
                                    "shows ids)", id="unknown-id"),
    pytest.param(("1", "aplied"), "Error: Invalid value for STATUS: unknown status 'aplied' (did you mean applied?); one of "
                                  "saved, applied, interviewing, offer, accepted, rejected, withdrawn", id="unknown-status"),
    pytest.param(("1", "applied", "--at", "next week"), "Error: Invalid value for --at: 'next week' is not an ISO date or "
                 "datetime (e.g. 2026-12-02, 2026-12-02T09:30+08:00)", id="bad-date"),
    pytest.param(("1",), "Error: give ID and STATUS (jobcrawl track 17 applied), or --list", id="no-status"),
    pytest.param(("--list", "1"), "Error: --list takes no ID, STATUS, --note or --at", id="list-with-id"),
    pytest.param(("--list", "--status", "hired"), "Error: Invalid value for --status: unknown status 'hired'; one of "
                 "saved, applied, interviewing, offer, accepted, rejected, withdrawn", id="list-unknown-status"),
    pytest.param(("1", "applied", "--json"), "Error: --status and --json go with --list", id="json-without-list"),
    pytest.param(("1", "applied", "--note", "长" * 2001), "Error: Invalid value for --note: 2,001 characters long, the "
                 "limit is 2,000", id="note-too-long"),
])
@pytest.mark.slow
def test_usage_errors_are_one_line_and_exit_2(tracked, args, message):
    proc = cli(tracked[0], "track", *args, check=False)
    assert (proc.returncode, proc.stderr.splitlines()[-1], proc.stdout) == (2, message, "")


@pytest.mark.slow
def test_history_shows_the_jobs_changes_among_the_versions(tracked):
    assert cli(tracked[0], "history", "2").stdout.splitlines() == [
        "#2 AI算子开发工程师 · 星云人才 · 上海 — 1 version",
        "2026-11-01 00:00: 申请 application: saved",
        "2026-11-29 04:00 v1: 首次出现 first seen",
        "2026-11-30 00:00: 申请 application: saved — looks good",
        "2026-12-01 10:00: 申请 application: applied — sent CV",
    ]
    steps = json.loads(cli(tracked[0], "history", "1", "--json").stdout)["steps"]
    assert [(s["at"], s["event"], s["status"], s["note"]) for s in steps] == [
        ("2026-11-01T00:00:00+00:00", "application", "saved", None),
        ("2026-11-29T04:00:00+00:00", "first_seen", None, None),
        ("2026-11-30T00:00:00+00:00", "application", "saved", "looks good"),
        ("2026-12-01T10:00:00+00:00", "application", "applied", "sent CV")]


EXPORTED = [(1, "applied", "2026-12-01T10:00:00+00:00"), (2, "applied", "2026-12-01T10:00:00+00:00"),
            (3, "rejected", "2026-12-02T00:00:00+00:00")]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.slow
def test_export_carries_the_status_and_since(tracked, template, fmt):
    def exported(db: Path) -> list[tuple]:
        out = cli(db, "export", "--format", fmt, "--columns", "id,application_status,application_since").stdout
        if fmt == "csv":
            return [(int(r["id"]), r["application_status"], r["application_since"])
                    for r in csv.DictReader(io.StringIO(out.lstrip("\ufeff")))]
        return [tuple(json.loads(line).values()) for line in out.splitlines()]

    assert exported(tracked[0]) == EXPORTED
    untracked = ("", "") if fmt == "csv" else (None, None)
    assert exported(template) == [(i, *untracked) for i in (1, 2, 3)]


# --------------------------------------------------------------------------- the status survives


@pytest.mark.parametrize("step", [
    pytest.param(("ingest", "{inputs}", "--as-of", "2026-12-03T12:00:00+08:00"), id="re-ingest"),
    pytest.param(("reparse",), id="reparse"),
    pytest.param(("dedupe", "--rebuild"), id="dedupe-rebuild"),
])
@pytest.mark.slow
def test_the_status_survives(tracked, template, step):
    db = tracked[0]
    cli(db, *(arg.format(inputs=template.parent / "in") for arg in step))
    assert application_rows(db) == APPLICATIONS
    assert listed(db) == [JOB_3, JOB_1]


GITLAB = json.loads((FIXTURES / "web" / "ats" / "greenhouse_gitlab_jobs.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_status_survives_a_re_crawl_that_closes_and_reopens_the_posting(tmp_path):
    """A Greenhouse board on the mock server: crawled, the job tracked, crawled without it (closed), crawled with it
    again (reopened)."""
    from mockserver import MockServer

    root = tmp_path / "www"
    board = root / "greenhouse" / "v1" / "boards" / "gitlab"
    board.mkdir(parents=True)
    db, listing = tmp_path / "jobs.db", board / "jobs.json"
    with MockServer(root, tmp_path / "requests.log") as server:
        sources = tmp_path / "sources.toml"
        sources.write_text(f'contact = "https://example.org/jobcrawl-tests"\n\n[sources.gitlab]\nallow_private = true\n'
                           f'spider = "greenhouse"\nboards = ["gitlab"]\nbase_url = "{server.base}/greenhouse"\n',
                           encoding="utf-8")

        def crawl(jobs: list[dict]) -> None:
            listing.write_text(json.dumps({**GITLAB, "jobs": jobs}), encoding="utf-8")
            cli(db, "crawl", "gitlab", "--sources", str(sources), "-s", "AUTOTHROTTLE_START_DELAY=0.1")

        crawl(GITLAB["jobs"])
        (pid,) = rows(db, "SELECT id FROM postings WHERE source_id = '8565469002'")[0]
        cli(db, "track", str(pid), "interviewing", "--note", "call on Friday", "--at", "2026-12-02T09:00:00+00:00")
        expected = [{"id": pid, "title": "AI Engineer", "company": "GitLab", "city": None, "status": "interviewing",
                     "since": "2026-12-02T09:00:00+00:00", "notes": "call on Friday",
                     "url": "https://job-boards.greenhouse.io/gitlab/jobs/8565469002"}]
        steps = [("closed", [j for j in GITLAB["jobs"] if j["id"] != 8565469002]), ("reopened", GITLAB["jobs"])]
        for event, jobs in steps:
            crawl(jobs)
            assert rows(db, "SELECT event FROM posting_events WHERE posting_id = ? ORDER BY id DESC LIMIT 1", pid) == [(event,)]
            assert listed(db) == expected, event


# --------------------------------------------------------------------------- watches


@pytest.mark.slow
def test_watches_skip_tracked_postings_unless_they_include_them(template, tmp_path):
    """Posting 3 is tracked before the watches match; posting 1 after they matched it but before its alert could be
    delivered (the webhook failed): the watch without --include-tracked delivers neither, the other both."""
    db = tmp_path / "jobs.db"
    shutil.copy(template, db)
    cli(db, "track", "3", "rejected")
    with Receiver(plan=[500]) as hook:
        config = tmp_path / "alerts.toml"
        config.write_text(f'[destinations.hook]\ntype = "webhook"\nurl = "{hook.url("/jobs")}"\nretries = 0\n',
                          encoding="utf-8")
        for name, *flags in (("plain",), ("everything", "--include-tracked")):
            cli(db, "watch", "add", name, "--config", str(config), "--include-existing", *flags)
        assert cli(db, "watch", "deliver", "--config", str(config), check=False).returncode == 1
        cli(db, "track", "1", "applied")
        proc = cli(db, "watch", "deliver", "--config", str(config))
        posted = [[p["id"] for p in json.loads(r.body)["postings"]] for r in hook.requests]
    assert proc.stdout == "alerts: new matches plain 0, everything 0 · delivered hook 2\n"
    assert posted == [[1], [1, 3]]  # the first answered 500
    assert rows(db, "SELECT w.name, d.posting_id, d.status FROM watch_deliveries d JOIN watches w ON w.id = d.watch_id"
                    " ORDER BY w.id, d.posting_id") == [("plain", 1, "cancelled"), ("everything", 1, "sent"),
                                                         ("everything", 3, "sent")]
    listing = cli(db, "watch", "list", "--config", str(config)).stdout.splitlines()
    assert [re.sub(r"since \S+$", "since …", line) for line in listing] == [
        "plain: every posting → hook · delivered 1 postings (0 sent, 0 pending) · baseline 0 · since …",
        "  feed: http://127.0.0.1:8001/jobs/watch_feed.atom?watch=plain",
        "everything: tracked too → hook · delivered 2 postings (2 sent, 0 pending) · baseline 0 · since …",
        "  feed: http://127.0.0.1:8001/jobs/watch_feed.atom?watch=everything",
    ]


@pytest.mark.parametrize(("tracked_job", "include_tracked", "reasons"), [
    pytest.param(0, False, [], id="untracked"),
    pytest.param(1, False, None, id="tracked-skipped"),
    pytest.param(1, True, [], id="tracked-included"),
    pytest.param(None, False, [], id="row-without-the-column"),
])
def test_the_watch_rule(tracked_job, include_tracked, reasons):
    from normalize.watch import WatchSpec, candidate, match

    row = {"id": 7, "city": "北京", "fit": None, "blocked": None, "changed_at": "2026-11-29T04:00:00+00:00",
           "canonical": 1, "cluster_seen": 0, **({} if tracked_job is None else {"tracked": tracked_job})}
    assert match(WatchSpec(name="any", include_tracked=include_tracked), candidate(row, found=True)) == reasons
