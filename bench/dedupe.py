"""Clustering time, peak RSS and scaling of normalize.dedupe.Clusterer on generated postings.

    .venv/bin/python bench/dedupe.py                      # 10k, 50k, 100k (each in a fresh process)
    .venv/bin/python bench/dedupe.py --sizes 2000 5000    # quick run while developing

Postings are generated from the real JD bullets of fixtures/dedupe/bases.jsonl: each distinct posting draws
3–5 responsibilities and 3–6 requirements from the pool of real bullets (≤ 150 characters), then gets a family of 1, 2, 3 or 5
members (55/20/15/10 %, so about half the postings are duplicates): reposts, reordered bullets, synonym
swaps, a bullet added or removed, another city, a staffing-agency copy. Each size runs in its own
subprocess, single-threaded, so the peak RSS figures are separate. Timed: the boilerplate measured on 5,000 of
them (``common_shingles``, as the dedupe step does), then ``Clusterer.add_many`` over all postings (keys:
fingerprints, shingles, signatures; then LSH and verification with the boilerplate left out) and
``Clusterer.from_stored`` over their stored keys. Times are process CPU time (the machine is shared; wall time is printed too). Targets: 100k in ≤ 60 s, peak RSS ≤ 1 GB, ≤ 2.3× time per doubling of N.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from dedupe_accuracy import _AGENCIES, _CITIES, _COMPANY_CORES, _COMPANY_FORMS, _COMPANY_HEADS, _EXTRA_BULLETS, _synonyms, load_bases  # noqa: E402

from normalize.dedupe import REASONS, Clusterer, Record, common_shingles, keys_of  # noqa: E402

FAMILY_SIZES = ((1, 0.55), (2, 0.20), (3, 0.15), (5, 0.10))
MAX_BULLET = 150
BATCH = 1000  # records per Clusterer.add_many, as the dedupe step adds them


def _variant(rng: random.Random, rec: Record, key: str) -> Record:
    req, resp = list(rec.requirements), list(rec.responsibilities)
    company, city = rec.company, rec.city
    kind = rng.choice(("repost", "reordered", "synonyms", "added", "removed", "city", "agency"))
    if kind == "reordered":
        rng.shuffle(req)
        rng.shuffle(resp)
    elif kind == "synonyms":
        req, resp = _synonyms(rng, req, 2), _synonyms(rng, resp, 1)
    elif kind == "added":
        req.append(rng.choice(_EXTRA_BULLETS))
    elif kind == "removed" and len(req) > 3:
        req.pop(rng.randrange(len(req)))
    elif kind == "city":
        city = rng.choice(_CITIES)
    elif kind == "agency":
        company = rng.choice(_AGENCIES)
    return Record(key=key, company=company, title=rec.title, city=city, requirements=req, responsibilities=resp,
                  first_seen=f"2026-11-{rng.randint(1, 28):02d}")


def generate(n: int, seed: int = 1) -> list[Record]:
    """n postings: distinct JDs built from real bullets, each followed by its mutated family members, shuffled."""
    rng = random.Random(seed)
    bases = load_bases()
    # Long "bullets" are run-on benefit or company blocks the one-line source could not split; drawn into
    # random postings they would make unrelated postings near-duplicates.
    req_pool = [b for base in bases for b in base["requirements"] if len(b) <= MAX_BULLET]
    resp_pool = [b for base in bases for b in base["responsibilities"] if len(b) <= MAX_BULLET]
    titles = sorted({base["title"] for base in bases})
    companies = [h + c + f for h in _COMPANY_HEADS for c in _COMPANY_CORES for f in _COMPANY_FORMS]
    sizes, weights = zip(*FAMILY_SIZES)
    out: list[Record] = []
    family = 0
    while len(out) < n:
        family += 1
        head = Record(key=f"f{family}/0", company=rng.choice(companies), title=rng.choice(titles), city=rng.choice(_CITIES),
                      requirements=rng.sample(req_pool, rng.randint(3, 6)), responsibilities=rng.sample(resp_pool, rng.randint(3, 5)),
                      first_seen="2026-11-01")
        out.append(head)
        for i in range(1, rng.choices(sizes, weights)[0]):
            out.append(_variant(rng, head, f"f{family}/{i}"))
    del out[n:]
    rng.shuffle(out)
    return out


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(n: int) -> dict:
    t0 = time.perf_counter()
    records = generate(n)
    gen_s = time.perf_counter() - t0
    rss_before = _rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    common = common_shingles(records[:5000])
    clusterer = Clusterer(common=common)
    reasons = dict.fromkeys(REASONS, 0)
    stored = []
    for i in range(0, n, BATCH):
        batch = records[i : i + BATCH]
        keys = keys_of(batch)
        for record, key, assignment in zip(batch, keys, clusterer.add_keys((r.key, k, r.first_seen) for r, k in zip(batch, keys))):
            reasons[assignment.reason] += 1
            stored.append((record.key, key, assignment.cluster_id, record.first_seen))
    cluster_s, cluster_cpu = time.perf_counter() - t0, time.process_time() - c0
    rss_cluster = _rss_mb()
    families = {r.key.split("/")[0] for r in records}
    del records
    stored = [(key, dk, clusterer.cluster_of(key), seen) for key, dk, _, seen in stored]  # after list cards moved
    t0, c0 = time.perf_counter(), time.process_time()
    rebuilt = Clusterer.from_stored(stored, common=common)
    rebuild_s, rebuild_cpu = time.perf_counter() - t0, time.process_time() - c0
    assert len(rebuilt) == n
    return {
        "n": n, "generate_s": round(gen_s, 2), "cluster_s": round(cluster_s, 2), "cluster_cpu_s": round(cluster_cpu, 2),
        "per_cpu_s": round(n / cluster_cpu), "rebuild_s": round(rebuild_s, 2), "rebuild_cpu_s": round(rebuild_cpu, 2), "rss_before_mb": round(rss_before), "rss_cluster_mb": round(rss_cluster),
        "rss_peak_mb": round(_rss_mb()), "clusters": len(clusterer.clusters()), "families": len(families),
        "boilerplate": len(common), "reasons": reasons,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="dedupe clustering benchmark")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    results = []
    for n in args.sizes:
        out = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True, text=True, env=env, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"N={r['n']:>7}: cluster {r['cluster_cpu_s']:6.2f} s CPU ({r['per_cpu_s']}/s; wall {r['cluster_s']:.2f} s)  "
              f"from_stored {r['rebuild_cpu_s']:.2f} s CPU (wall {r['rebuild_s']:.2f} s)  "
              f"peak RSS {r['rss_peak_mb']} MB (before clustering {r['rss_before_mb']}, after {r['rss_cluster_mb']})  "
              f"clusters {r['clusters']} for {r['families']} families  boilerplate shingles {r['boilerplate']}  "
              f"reasons {' '.join(f'{k} {v}' for k, v in r['reasons'].items() if v)}", flush=True)
    for a, b in zip(results, results[1:]):
        doublings = math.log2(b["n"] / a["n"])
        for what in ("cluster_cpu_s", "cluster_s"):
            growth = b[what] / a[what]
            print(f"scaling {a['n']}→{b['n']} ({what}): ×{growth:.2f} time, ×{growth ** (1 / doublings):.2f} per doubling of N")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
