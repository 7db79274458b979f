"""#27.5: a source's own time zone (``settings = { JOBCRAWL_TZ = "…" }`` in the sources file) gives its postings
their ``posted_local`` in that zone, through a real `jobcrawl crawl` of the mock server on 127.0.0.1; another
source of the same run keeps the default (UTC for English postings), and the UTC value is stored unchanged."""

from __future__ import annotations

import pytest

from test_crawl import ATS, crawl, gitlab_listing, server, table, write_sources  # noqa: F401 (server: a fixture)

pytestmark = pytest.mark.slow


def test_a_sources_time_zone_gives_its_postings_their_local_time(server, tmp_path):  # noqa: F811
    boards = server.root / "t" / "tz" / "greenhouse" / "v1" / "boards"
    for board in ("gitlab", "acme"):
        (boards / board).mkdir(parents=True)
    (boards / "gitlab" / "jobs.json").write_bytes((ATS / "greenhouse_gitlab_jobs.json").read_bytes())
    (boards / "acme" / "jobs.json").write_text(gitlab_listing(ids=(1001, 1002), company="Acme"))
    db = tmp_path / "jobs.db"
    sources = write_sources(tmp_path / "sources.toml", f"""
[sources.tokyo]
spider = "greenhouse"
boards = ["gitlab"]
base_url = "{server.base}/t/tz/greenhouse"
settings = {{ JOBCRAWL_TZ = "Asia/Tokyo" }}

[sources.plain]
spider = "greenhouse"
boards = ["acme"]
base_url = "{server.base}/t/tz/greenhouse"
""")
    proc = crawl(db, sources, "--all")
    assert proc.returncode == 0, proc.stderr
    # the fixture's first_published: 2026-04-17T05:58:03-04:00 and 2026-05-29T07:49:29-04:00
    assert table(db, "SELECT source_id, company, posted_at, tz, posted_local FROM postings ORDER BY source_id") == [
        ("1001", "Acme", "2026-04-17T09:58:03+00:00", "UTC", "2026-04-17T09:58:03+00:00"),
        ("1002", "Acme", "2026-05-29T11:49:29+00:00", "UTC", "2026-05-29T11:49:29+00:00"),
        ("8503792002", "GitLab", "2026-04-17T09:58:03+00:00", "Asia/Tokyo", "2026-04-17T18:58:03+09:00"),
        ("8565469002", "GitLab", "2026-05-29T11:49:29+00:00", "Asia/Tokyo", "2026-05-29T20:49:29+09:00"),
    ]
