"""Fuzzing every parser entry point with hypothesis (issue #26, point 12): the text dump, CSV, JSON
lines and one-JD-per-line tables, JSON-LD pages, the ATS JSON pages (Greenhouse, Lever, Ashby),
salary, dates and sections. No exception escapes; for the file parsers every input is stored raw
or quarantined: the raw input comes first, and the records read = postings + quarantined (+ blank
rows and repeated headers, which are counted). Every posting also normalizes, is tagged, becomes rows with
its dedupe keys and is written to a database file: odd values (links to no web page, unreadable URLs,
numbers beyond any count) go into the table cells and JSON-LD links.

A fixed example budget, derandomized, so that CI runs the same examples each time within about a
minute (conftest's ``examples``: a quarter in the fast subset, ``FUZZ_SCALE`` times for a longer local hunt).
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, SEEDS, examples
from crawler.ingest.appdump import BLOCKS, parse_dump, split_pages
from crawler.web.pages.ashby import AshbyPage
from crawler.web.pages.greenhouse import GreenhousePage
from crawler.web.pages.jsonld import JsonLdPage
from crawler.web.pages.lever import LeverPage
from crawler.ingest.table import TableOptions, TableReport, parse_table
from crawler.store.dedupe import key_values
from crawler.store.rows import Batch, posting_row
from crawler.store.schema import open_db
from normalize.skills import tag_posting
from crawler.store.writer import Writer
from normalize.dates import parse_posted, parse_published
from normalize.dedupe import posting_signatures
from normalize.skills import load_taxonomy
from normalize.models import Posting, Quarantined, RawInput, RawPosting, Salary
from normalize.posting import normalize_posting
from normalize.salary import parse_salary, parse_salary_compare, parse_salary_estimate, salary_from_text
from normalize.sections import sections_dict, split_bullets, split_sections
from normalize.text import decode_bytes

T0 = "2026-11-29T04:00:00+00:00"


def budget(n: int):
    return settings(max_examples=examples(n), deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example])


SEED_LINES = sorted({line for path in sorted(SEEDS.glob("*.txt")) for line in path.read_text(encoding="utf-8").splitlines()})
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
PLAIN = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)  # no control characters
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "gb18030"]


def encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding, "replace" if encoding == "gb18030" else "surrogatepass")


def damaged(data: st.DataObject, body: bytes) -> bytes:
    """``body``, or the same with a few bytes replaced, inserted or cut off."""
    for _ in range(data.draw(st.integers(0, 3), label="damages")):
        if not body:
            break
        at = data.draw(st.integers(0, len(body) - 1), label="at")
        junk = data.draw(st.binary(min_size=1, max_size=4), label="junk")
        how = data.draw(st.sampled_from(["replace", "insert", "cut"]), label="how")
        body = body[:at] + junk + body[at + len(junk):] if how == "replace" else (
            body[:at] + junk + body[at:] if how == "insert" else body[:at])
    return body


_STORE: dict = {}


def _writer():
    """One writer on one database file for the whole module (a fresh database per example costs its schema)."""
    if not _STORE:
        folder = tempfile.mkdtemp(prefix="jobcrawl-fuzz-")
        _STORE["writer"] = Writer(open_db(os.path.join(folder, "fuzz.db")))
    return _STORE["writer"]


def check_postings_normalize(items) -> None:
    """Every posting normalizes, is tagged, becomes rows with its dedupe keys, and the writer stores those rows."""
    postings = []
    for item in items:
        if isinstance(item, RawPosting):
            posting = normalize_posting(item)
            assert isinstance(posting, Posting)
            postings.append(tag_posting(posting, load_taxonomy()))
    if postings:
        rows = [posting_row(p, key_values(k)) for p, k in zip(postings, posting_signatures(postings))]
        _writer().write(Batch(None, postings=rows))


# --------------------------------------------------------------------------- the job app's text dumps


DUMP_LINES = st.one_of(st.sampled_from(SEED_LINES), st.sampled_from(sorted(BLOCKS)), st.just("Watch Jobs"), TEXT)


@budget(300)
@given(st.data())
def test_fuzz_text_dump(data):
    if data.draw(st.booleans(), label="bytes"):
        body = data.draw(st.binary(max_size=3000), label="body")
    else:
        text = "\n".join(data.draw(st.lists(DUMP_LINES, max_size=150), label="lines"))
        body = damaged(data, encode(text, data.draw(st.sampled_from(ENCODINGS), label="encoding")))
    items = list(parse_dump(body, locator="fuzz.txt", fetched_at=T0, as_of=T0))
    raw = items[0]
    assert isinstance(raw, RawInput) and all(not isinstance(i, RawInput) for i in items[1:])
    postings = [i for i in items if isinstance(i, RawPosting)]
    pages = [i for i in items if isinstance(i, Quarantined) and i.position is not None]
    whole = [i for i in items if isinstance(i, Quarantined) and i.position is None]
    assert raw.postings == len(postings)
    if whole:  # the file as a whole: one quarantine record, nothing else
        assert len(whole) == 1 and not postings and not pages and raw.status == "quarantined"
    else:  # every page is a posting or a quarantined page
        text, _ = decode_bytes(body)
        assert len(postings) + len(pages) == len(split_pages(text))
        assert raw.status == ("parsed" if not pages else "partial" if postings else "quarantined")
    check_postings_normalize(items)


# --------------------------------------------------------------------------- tables


def read_table(body: bytes, fmt: str, locator: str, **options) -> tuple[list, TableReport]:
    report = TableReport(locator=locator, format=fmt)
    items = list(parse_table(body, locator=locator, fetched_at=T0, as_of=T0, fmt=fmt, report=report,
                             options=TableOptions(**options)))
    return items, report


def check_table(items, report: TableReport, records: int | None) -> None:
    """The raw input comes first; every record is a posting, a quarantined row, a blank row or a
    repeated header, or the file is one quarantine record. ``records``: how many were written
    (None when the input was damaged and the count is unknown)."""
    assert isinstance(items[0], RawInput)
    postings = [i for i in items if isinstance(i, RawPosting)]
    rows = [i for i in items if isinstance(i, Quarantined) and i.position is not None]
    whole = [i for i in items if isinstance(i, Quarantined) and i.position is None]
    if whole:
        assert len(whole) == 1 and not postings and not rows and report.error
        return
    assert report.error is None
    assert (len(postings), len(rows)) == (report.postings, report.quarantined)
    assert report.rows == report.postings + report.quarantined + report.header_rows + report.blank_rows
    assert sum(i.postings for i in items if isinstance(i, RawInput)) == report.postings
    if records is not None:
        assert report.rows == records
    check_postings_normalize(items)


COLUMNS = ["职位名称", "公司名称", "薪资", "工作地点", "职位描述", "福利", "发布时间", "标签", "url", "id"]
# Links that name no web page, or that cannot be read (a port that is no number, a broken IPv6 host, huge numbers).
ODD_VALUES = st.sampled_from(["javascript:alert(1)", "mailto:hr@example.com", "tel:+86-10", "http://a.com:abc/j",
                              "https://a.com:99999/j", "http://[::1/j", "a.com:8080/j", "//a.com/j",
                              "99999999999999999999999人", "约 99999999999999999999 个在招", "9999-12-31", "1e309K"])
CELL = st.one_of(PLAIN, st.sampled_from(SEED_LINES), ODD_VALUES, st.sampled_from(['"', '"x', 'a"b', ",", "\n", "\r\n", "", " "]),
                 st.lists(PLAIN, max_size=3).map("\n".join))


@budget(200)
@given(st.data())
def test_fuzz_csv(data):
    extra = data.draw(st.lists(st.sampled_from(COLUMNS[2:]), unique=True, max_size=5), label="columns")
    header = ["职位名称", "公司名称", *extra]
    rows = data.draw(st.lists(st.lists(CELL, min_size=1, max_size=len(header) + 1), max_size=25), label="rows")
    out = io.StringIO()
    writer = csv.writer(out, delimiter=data.draw(st.sampled_from([",", "\t", ";"]), label="delimiter"))
    writer.writerow(header)
    writer.writerows(rows)
    body = encode(out.getvalue(), data.draw(st.sampled_from(ENCODINGS), label="encoding"))
    broken = damaged(data, body)
    items, report = read_table(broken, "csv", "fuzz.csv")
    if broken == body:
        # a well-formed file: every row written is read as one record, none is taken for a broken quote
        check_table(items, report, len(rows))
        assert not [i for i in items if isinstance(i, Quarantined) and i.reason == "bad_csv"]
    else:
        check_table(items, report, None)


def json_values(leaves=None):
    leaves = leaves if leaves is not None else st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), PLAIN)
    return st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(PLAIN, inner, max_size=4)), max_leaves=12)


JSON_OBJECT = st.fixed_dictionaries(
    {}, optional={"title": json_values(), "company": json_values(), "salary": json_values(), "city": json_values(),
                  "description": json_values(), "tags": json_values(), "id": json_values(), "remote": json_values()})
JSON_LINE = st.one_of(JSON_OBJECT.map(lambda o: json.dumps(o, ensure_ascii=False)),
                      json_values().map(json.dumps), PLAIN.map(lambda s: s.replace("\r", "")), st.just(""))


@budget(200)
@given(st.data())
def test_fuzz_jsonl(data):
    lines = data.draw(st.lists(JSON_LINE, max_size=30), label="lines")
    locator = data.draw(st.sampled_from(["fuzz.jsonl", "fuzz.ndjson"]), label="locator")
    body = encode("".join(line + "\n" for line in lines), data.draw(st.sampled_from(ENCODINGS), label="encoding"))
    broken = damaged(data, body)
    items, report = read_table(broken, "jsonl", locator)
    check_table(items, report, len(lines) if broken == body else None)


@budget(60)
@given(st.data())
def test_fuzz_json_file(data):
    value = data.draw(st.one_of(st.lists(st.one_of(JSON_OBJECT, json_values()), max_size=10), json_values()), label="value")
    body = damaged(data, json.dumps(value, ensure_ascii=False, indent=data.draw(st.sampled_from([None, 1]))).encode())
    items, report = read_table(body, "jsonl", "fuzz.json")
    check_table(items, report, None)


@budget(60)
@given(st.lists(st.one_of(PLAIN, st.sampled_from(SEED_LINES)).map(lambda s: s.replace("\r", "")), max_size=30),
       st.sampled_from(ENCODINGS))
def test_fuzz_lines(lines, encoding):
    body = encode("".join(line + "\n" for line in lines), encoding)
    items, report = read_table(body, "lines", "fuzz.txt", constants={"title": "算法工程师", "company": "某公司"})
    check_table(items, report, len(lines))


# --------------------------------------------------------------------------- web pages


def check_page(items) -> None:
    raw = items[0]
    assert isinstance(raw, RawInput) and all(not isinstance(i, RawInput) for i in items[1:])
    postings = [i for i in items if isinstance(i, RawPosting)]
    assert raw.postings == len(postings)
    assert all(isinstance(i, (RawPosting, Quarantined)) for i in items[1:])
    check_postings_normalize(items)


JOB_POSTING = st.fixed_dictionaries(
    {"@type": st.sampled_from(["JobPosting", "jobposting", ["JobPosting"], "Thing"])},
    optional={"title": json_values(), "description": json_values(st.one_of(PLAIN, st.just("<p>职责</p><ul><li>CUDA</li></ul>"))),
              "hiringOrganization": json_values(), "jobLocation": json_values(), "baseSalary": json_values(),
              "datePosted": json_values(), "validThrough": json_values(), "identifier": json_values(),
              "employmentType": json_values(), "url": json_values(st.one_of(PLAIN, ODD_VALUES))})


@budget(100)
@given(st.data())
def test_fuzz_jsonld_page(data):
    blocks = data.draw(st.lists(st.one_of(
        JOB_POSTING.map(json.dumps),
        st.lists(JOB_POSTING, max_size=3).map(lambda v: json.dumps({"@graph": v})),
        json_values().map(json.dumps), PLAIN), max_size=3), label="blocks")
    html = "<html><head>" + "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks) + "</head></html>"
    body = damaged(data, html.encode())
    items = list(JsonLdPage("https://example.com/jobs/1", body, fetched_at=T0).parse())
    check_page(items)


def fixture_entries(name: str, key: str | None) -> list[dict]:
    data = json.loads((FIXTURES / "web" / "ats" / name).read_text(encoding="utf-8"))
    return data[key] if key else data


ATS = [
    pytest.param(GreenhousePage, "https://boards-api.greenhouse.io/v1/boards/acme/jobs?content=true",
                 fixture_entries("greenhouse_gitlab_jobs.json", "jobs"), lambda jobs: {"jobs": jobs}, id="greenhouse"),
    pytest.param(LeverPage, "https://api.lever.co/v0/postings/acme?mode=json",
                 fixture_entries("lever_matchgroup_postings.json", None), lambda jobs: jobs, id="lever"),
    pytest.param(AshbyPage, "https://api.ashbyhq.com/posting-api/job-board/acme?includeCompensation=true",
                 fixture_entries("ashby_linear_job_board.json", "jobs"), lambda jobs: {"jobs": jobs}, id="ashby"),
]


@pytest.mark.parametrize("page_class, url, real, wrap", ATS)
@budget(60)
@given(data=st.data())
def test_fuzz_ats_page(page_class, url, real, wrap, data):
    """Real entries of each API with some values replaced by any JSON value, or any JSON at all: every
    entry is a posting or a quarantined entry, or the response is one quarantine record."""
    jobs = []
    for _ in range(data.draw(st.integers(0, 3), label="entries")):
        job = json.loads(json.dumps(data.draw(st.sampled_from(real), label="entry")))
        for key in data.draw(st.lists(st.sampled_from(sorted(job)), max_size=4), label="keys"):
            job[key] = data.draw(json_values(), label=key)
        jobs.append(job)
    value = wrap(jobs) if data.draw(st.booleans(), label="shaped") else data.draw(json_values(), label="any")
    body = damaged(data, json.dumps(value).encode())
    items = list(page_class(url, body, fetched_at=T0).parse())
    check_page(items)
    entries = [i for i in items[1:] if not (isinstance(i, Quarantined) and i.position is None)]
    if body == json.dumps(wrap(jobs)).encode() and value == wrap(jobs):
        assert len(entries) == len(jobs)


# --------------------------------------------------------------------------- salary, dates, sections


SALARY_TEXT = st.one_of(TEXT, st.from_regex(r"\$?[0-9.,]{1,9}\s?[kKwW万千]?\s?[-~至–]\s?[0-9.,]{1,9}\s?[kKwW万千]?(/[月年天时]|·1[2-6]薪)?",
                                            fullmatch=True))


@budget(300)
@given(SALARY_TEXT)
def test_fuzz_salary(text):
    salary = parse_salary(text)
    assert isinstance(salary, Salary) and salary.raw == text
    parse_salary_estimate(text)
    parse_salary_compare(text)


PAY_TEXT = st.one_of(TEXT, st.from_regex(
    r"(Salary|Pay range|Base salary|Compensation|薪资)?:? ?(USD |\$|€|£)?[0-9.,]{1,9} ?[kK]?( ?[-–~to]+ ?(\$|€|£)?[0-9.,]{1,9} ?[kK]?)?"
    r"( ?(/|per) ?(hour|hr|year|yr|month|月|年))?( bonus| stipend| 401\(k\))?", fullmatch=True))


@budget(300)
@given(st.lists(st.tuples(st.sampled_from(["compensation", "description", "benefits"]), st.one_of(PAY_TEXT, TEXT)),
                max_size=3))
def test_fuzz_salary_from_text(blocks):
    """Pay read from free text: no exception; when it finds pay, it says so and keeps the amount it read."""
    salary = salary_from_text(blocks)
    if salary is not None:
        assert isinstance(salary, Salary) and salary.source == "text" and salary.raw
        assert salary.min is None or salary.max is None or salary.min <= salary.max


AS_OF = datetime(2026, 11, 29, 4, tzinfo=timezone.utc)
DATE_TEXT = st.one_of(TEXT, st.from_regex(r"(发布于 )?(大约 )?[0-9]{1,6} ?(分钟|小时|天|周|个月|年)前(发布|更新)?", fullmatch=True),
                      st.from_regex(r"[0-9]{1,5}[-/.][0-9]{1,3}([-/.][0-9]{1,3})?(发布)?", fullmatch=True),
                      st.integers(-2**63, 2**63).map(str))


@budget(300)
@given(DATE_TEXT)
def test_fuzz_dates(text):
    posted = parse_posted(text, AS_OF)
    published = parse_published(text, AS_OF)
    for parsed in (posted, published):
        assert parsed.raw == text and (parsed.at is None or datetime.fromisoformat(parsed.at).tzinfo is not None)


@budget(200)
@given(st.lists(st.one_of(st.sampled_from(SEED_LINES), TEXT,
                          st.sampled_from(["岗位职责：", "任职要求", "【加分项】", "Requirements:", "1.", "• ", "-"])),
                max_size=40).map("\n".join))
def test_fuzz_sections(text):
    for key, heading, bullets in split_sections(text):
        assert isinstance(heading, str) and all(isinstance(b, str) for b in bullets)
    assert isinstance(sections_dict(text), dict)
    assert all(isinstance(b, str) for b in split_bullets(text))



# --------------------------------------------------------------------------- through the store


@pytest.mark.slow
def test_damaged_dumps_are_stored_or_quarantined_through_the_store(tmp_path):
    """The count holds past the parser: a real ingest of 24 damaged copies of the seeds (lines cut, lines
    inserted, letters replaced; seeded; two with a byte that is not UTF-8 or a NUL, quarantined whole) stores
    every file raw, and every item the parser gives is stored (new, updated or unchanged) or quarantined, in
    the run report and in the quarantine table alike."""
    import random
    import sqlite3

    from conftest import run_cli

    rng = random.Random(26)
    seeds = [p.read_bytes().split(b"\n") for p in sorted(SEEDS.glob("*.txt"))]
    folder = tmp_path / "in"
    folder.mkdir()
    postings = quarantined = 0
    for i in range(24):
        lines = list(seeds[i % len(seeds)])
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(lines))
            kind = rng.choice(["replace", "insert", "cut"])
            if kind == "replace":
                lines[at] = bytes(rng.choice(b"abcxyz :-0123456789") for _ in range(rng.randint(0, 12)))
            elif kind == "insert":
                lines[at:at] = [rng.choice([b"", "最低要求".encode(), "薪资 20-30K".encode(), "职位详情".encode()])]
            else:
                del lines[at:at + rng.randint(1, 30)]
        body = b"\n".join(lines) + {21: b"\xff", 22: b"\x00"}.get(i, b"")
        (folder / f"{i:02}.txt").write_bytes(body)
        items = list(parse_dump(body, locator=f"{i:02}.txt", fetched_at=T0, as_of=T0))
        postings += sum(isinstance(item, RawPosting) for item in items)
        quarantined += sum(isinstance(item, Quarantined) for item in items)
    db = tmp_path / "jobs.db"
    proc = run_cli("ingest", str(folder), "--db", str(db), "--workers", "1", "--as-of", T0, "--json", "-q")
    assert proc.returncode in (0, 1), proc.stderr
    counts = json.loads(proc.stdout)["counts"]
    assert counts["files"] == 24 and postings >= 12 and quarantined >= 2  # the damage leaves most postings whole
    assert counts["new"] + counts["updated"] + counts["unchanged"] + counts["quarantined"] == postings + quarantined
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM raw_inputs").fetchone()[0] == 24
        assert conn.execute("SELECT count(*) FROM quarantine").fetchone()[0] == counts["quarantined"]


def test_the_corpus_steps_take_everything_fuzzed_above():
    """Last in this module: dedupe and scoring over every posting the fuzz tests above stored (one odd posting that
    failed a step would fail every run after it)."""
    from crawler.procs import Corpus
    from crawler.run.steps import after_run

    if not _STORE:
        pytest.skip("only after the fuzz tests above, which fill the database")
    db = _writer().db
    stored = db["postings"].count
    steps = after_run(db, processes=Corpus())
    assert stored > 20 and steps["dedupe"]["added"] == stored
    assert steps["score"]["scored"] == db.execute("SELECT count(*) FROM postings WHERE closed_at IS NULL").fetchone()[0]


# --------------------------------------------------------------------------- invisible format characters


def _format_characters() -> list[str]:
    import sys
    import unicodedata

    return [chr(cp) for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"]


@st.composite
def with_format_characters(draw, text: str) -> str:
    """``text`` with up to 8 Unicode format characters (category Cf: U+200B, U+00AD, U+E0041 …) put in anywhere."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    pieces, last = [], 0
    for cut in cuts:
        pieces += [text[last:cut], draw(st.sampled_from(_FORMAT_CHARACTERS))]
        last = cut
    return "".join(pieces) + text[last:]


_FORMAT_CHARACTERS = _format_characters()


@budget(300)
@given(lines=st.lists(st.one_of(st.sampled_from(SEED_LINES), PLAIN), min_size=1, max_size=6), data=st.data())
def test_format_characters_change_no_matching_form(lines, data):
    """Issue #38: a format character put anywhere in a posting's text changes none of the forms it is matched in:
    fold (blocklists), the search index and a query, the skills tagged (their spans hold the same text but for
    the format characters), the section keys and the dedupe keys."""
    from crawler.store import fts
    from normalize.dedupe import posting_signature
    from normalize.text import drop_format, fold

    def forms(text: str) -> tuple:
        taxonomy = load_taxonomy()
        hits = taxonomy.tag({"requirements": text.split("\n")}, tags=text.split("\n")[:2])
        sections = sections_dict(text)
        posting = {"key": "1", "company": text.split("\n")[0], "title": text.split("\n")[-1], "city": None,
                   "url": None, "sections": sections, "first_seen": T0, "salary": None}
        return (fold(text), fts.index_text(text), fts.fts_query(text),
                [(h.skill, h.section, h.count, drop_format(h.matched)) for h in hits], list(sections),
                posting_signature(posting))

    text = "\n".join(lines)
    assert forms(data.draw(with_format_characters(text))) == forms(text)


# --------------------------------------------------------------------------- secrets in the alerts config (issue #38)

from test_secrets import ODD, TOKEN, WORD, deliver_once, free_port, leaks, seeded  # noqa: E402,F401 (seeded: a fixture)


@st.composite
def secret_alert_configs(draw, port: int) -> tuple[str, dict[str, str], set[str]]:
    """(an alerts config, its environment, its secrets): a webhook, ntfy or e-mail destination on ``port`` (nothing
    listens) whose credential-bearing values (userinfo, query values, fragment, headers, token, password, the
    browse_url's query) are secrets, written as they are (percent-encoding or not, breaking the URL or not) or as
    ``${NAME}``."""
    env: dict[str, str] = {}
    secrets: set[str] = set()

    def value() -> str:
        secret = draw(st.one_of(WORD, TOKEN, ODD))
        secrets.add(secret)
        if draw(st.booleans()):
            name = f"JC_FUZZ_{len(env)}"
            env[name] = secret
            return "${" + name + "}"
        return secret

    kind = draw(st.sampled_from(["webhook", "ntfy", "email"]))
    head = f'browse_url = "http://127.0.0.1:8001/?token={value()}"\n[destinations.d]\ntype = "{kind}"\ntimeout = 5\n'
    if kind == "email":
        body = f'host = "127.0.0.1"\nport = {port}\nsecurity = "none"\nusername = "{value()}"\npassword = "{value()}"\n' \
               f'sender = "a@example.org"\nto = ["b@example.org"]\n'
    else:
        body = f'retries = 0\nurl = "http://{value()}:{value()}@127.0.0.1:{port}/h?token={value()}#{value()}"\n'
        body += f'headers = {{ Authorization = "Bearer {value()}" }}\n' if kind == "webhook" else f'token = "{value()}"\n'
    return head + body, env, secrets


@budget(25)
@given(data=st.data())
def test_secrets_in_the_alerts_config_are_neither_stored_nor_printed(seeded, tmp_path_factory, data):
    """Whatever a credential-bearing value of the alerts config holds, a config error or a failed delivery shows
    none of it: not on stdout or stderr, not in the database file or its WAL."""
    config_text, env, secrets = data.draw(secret_alert_configs(free_port()))
    folder = tmp_path_factory.mktemp("alerts")
    db, config = folder / "jobs.db", folder / "alerts.toml"
    db.write_bytes(seeded.read_bytes())
    config.write_text(config_text, encoding="utf-8")
    printed, wal, errors = deliver_once(db, config, env, ["d"])
    assert len(errors) == 1
    assert leaks(secrets, printed=printed, db=db, wal=wal) == []


# --------------------------------------------------------------------------- control characters in printed text (issue #38)

from crawler.alerts.transports import Alert  # noqa: E402
import ast  # noqa: E402
import unicodedata  # noqa: E402

from normalize.shown import ESCAPED_CATEGORIES, shown  # noqa: E402
from normalize.watch import WatchSpec  # noqa: E402

HOSTILE = st.text(st.characters(whitelist_categories=("Cc", "Cf", "Zl", "Zp", "Zs", "Lo", "Lu", "Nd", "Po")), max_size=24)
"""Text of controls (CR, LF, ESC, NEL …), format characters (bidi overrides, zero-width), line and paragraph
separators, mixed with ordinary letters, digits and punctuation."""


def escaped_anywhere(lines: list[str]) -> list[str]:
    return [ch for line in lines for ch in line if unicodedata.category(ch) in ESCAPED_CATEGORIES]


@budget(200)
@given(postings=st.lists(st.fixed_dictionaries({
    "id": st.integers(1, 10**6), "title": HOSTILE, "company": HOSTILE, "city": HOSTILE, "salary": HOSTILE,
    "url": st.one_of(st.none(), HOSTILE.map(lambda s: "https://example.org/" + s)),
    "page": st.one_of(st.none(), HOSTILE.map(lambda s: "http://127.0.0.1:8001/jobs/postings/" + s)),
    "fit": st.one_of(st.none(), st.integers(0, 100)), "reasons": st.lists(HOSTILE, max_size=3)}), min_size=1, max_size=3),
    watch=HOSTILE)
def test_control_characters_in_every_field_stay_inside_their_line_of_an_alert(postings, watch):
    lines = Alert(watch, postings).text().split("\n")
    assert len(lines) == 1 + sum(1 + bool(p["url"]) + bool(p["page"]) + bool(p["reasons"]) for p in postings)
    assert escaped_anywhere(lines) == []
    assert lines[0] == shown(f"jobcrawl: {len(postings)} new posting{'s' if len(postings) != 1 else ''} for {watch}")


@budget(300)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_shown_is_one_visible_line_that_names_the_text_exactly(text):
    assert escaped_anywhere([shown(text)]) == []
    quoted = shown(text, quoted=True)
    assert (quoted if quoted == text else ast.literal_eval(quoted)) == text


@budget(200)
@given(name=HOSTILE.filter(lambda s: s and not any(c.isspace() or c == "/" for c in s)))
def test_a_watch_name_is_taken_only_as_it_is_shown(name):
    try:
        spec = WatchSpec(name=name)
    except ValueError:
        assert shown(name) != name or len(name) > 60
    else:
        assert shown(spec.name) == spec.name
