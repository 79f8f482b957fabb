"""The `fetch` bench case (issue 28): fetch-through (`GET /fetch/http/127.0.0.1:P/...`) against the tools it stands in
front of, all to `/dev/null` with `curl`:

- a miss (a fresh query string each round, so a fresh cache key: Ferry fetches and streams while it writes the
  spool) against `curl` straight from the origin: time to first byte within 5 ms of curl's, throughput ≥ 0.9×;
- a hit (the file already cached) against nginx serving the same file: ≥ 0.9×;
- 16 concurrent clients of one fresh URL: one job (one origin transfer, counted in `/api/v1/jobs?tag=fetch`), each
  client ≥ 0.8× of one client alone (the miss's throughput in the same round).

For reference (no target), `curl -o FILE` straight from the origin onto the spool's file system: a miss is written
to the spool before any byte of it is served, so writing the file is the floor under its time that `curl -o
/dev/null` does not pay.
"""
import concurrent.futures
import json
import os
import time


def run(b, fb):
    size = b.scale["big"]
    c = fb.Case(b, "fetch", f"fetch-through of a {size / fb.GiB:g} GiB file (`curl -o /dev/null` via /fetch/)",
                "miss: TTFB within 5 ms of curl's, ≥ 0.9× curl; hit ≥ 0.9× nginx; 16 clients: one transfer, each ≥ 0.8× one alone",
                cpu_label="server CPU s/GB")
    b.make_file("big.bin", size)
    origin = b.origin.split("//", 1)[1]
    ferry = b.start_ferry("fetch", max_concurrent=4, extra=["--fetch-allow", origin])
    per_run = max(60, size / (20 * fb.MiB))
    gb = size / 1e9
    counter = [0]

    def fresh_query():
        counter[0] += 1
        return f"?fb={counter[0]}-{time.monotonic_ns()}"

    def curl(url):
        r = b.timed(["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download} %{http_code} %{time_starttransfer}", url],
                    per_run)
        got, code, ttfb = r["stdout"].split()
        if int(got) != size or code != "200":
            raise RuntimeError(f"got {got} bytes, status {code}")
        return r, float(ttfb)

    def measured(url, pids):
        cpu0 = sum(fb.proc_cpu(p) for p in pids())
        r, ttfb = curl(url)
        cpu = sum(fb.proc_cpu(p) for p in pids()) - cpu0
        return dict(value=size / fb.MiB / r["wall"], cpu_per=cpu / gb, ttfb_ms=ttfb * 1000)

    def miss():
        return measured(ferry.url("/fetch/http/" + origin + "/big.bin" + fresh_query()), lambda: [ferry.pid])

    def direct():
        return measured(f"{b.origin}/big.bin{fresh_query()}", b.nginx_workers)

    def direct_file():
        dst = os.path.join(b.scratch, "fetch-ref.bin")
        try:
            r = b.timed(["curl", "-sS", "-o", dst, "-w", "%{size_download} %{http_code}", f"{b.origin}/big.bin{fresh_query()}"],
                        per_run)
            if r["stdout"].split() != [str(size), "200"]:
                raise RuntimeError(f"curl -o FILE: {r['stdout']}")
            return dict(value=size / fb.MiB / r["wall"])
        finally:
            if os.path.exists(dst):
                os.remove(dst)

    hit_url = ferry.url("/fetch/http/" + origin + "/big.bin?fb=hit")
    curl(hit_url)  # the entry every hit round reads

    def hit():
        return measured(hit_url, lambda: [ferry.pid])

    def nginx():
        return measured(f"{b.origin}/big.bin", b.nginx_workers)

    def crowd():
        query = fresh_query()
        url = ferry.url("/fetch/http/" + origin + "/big.bin" + query)
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            rates = list(pool.map(lambda _: size / fb.MiB / curl(url)[0]["wall"], range(16)))
        status, page = ferry.call("GET", "/api/v1/jobs?tag=fetch&limit=1000")
        jobs = page.get("jobs", []) if isinstance(page, dict) else json.loads(page).get("jobs", [])
        transfers = sum(1 for job in jobs if job["url"].endswith(query))
        return dict(value=min(rates), transfers=transfers)

    s_miss = c.tool("Ferry /fetch/, miss (streamed while stored)", "MiB/s")
    s_curl = c.tool("`curl` straight from the origin", "MiB/s")
    s_curl_file = c.tool("`curl -o FILE` straight from the origin, on the spool's file system (reference)", "MiB/s")
    s_hit = c.tool("Ferry /fetch/, hit", "MiB/s")
    s_nginx = c.tool("nginx sendfile, same file", "MiB/s")
    s_crowd = c.tool("Ferry /fetch/, 16 clients of one fresh URL: the slowest client", "MiB/s")
    c.interleave([(s_miss, miss), (s_curl, direct), (s_curl_file, direct_file), (s_hit, hit), (s_nginx, nginx), (s_crowd, crowd)],
                 b.runs, budget=b.budget("fetch"))
    r_miss, rs_miss = fb.paired_ratio(s_miss, s_curl)
    r_miss_file, rs_miss_file = fb.paired_ratio(s_miss, s_curl_file)
    r_hit, _ = fb.paired_ratio(s_hit, s_nginx)
    r_crowd, _ = fb.paired_ratio(s_crowd, s_miss)
    ttfb_gap = [a - d for a, d in zip(s_miss.extra.get("ttfb_ms", []), s_curl.extra.get("ttfb_ms", []))
                if a is not None and d is not None]
    transfers = s_crowd.extra.get("transfers", [])
    c.rows = [("miss: time to first byte minus curl's, median", f"{fb.fmt(fb.med(ttfb_gap), 1)} ms ({fb.span(ttfb_gap, 1)})"),
              ("miss against `curl -o FILE` (reference)", f"{fb.fmt(r_miss_file, 2)}× ({fb.span(rs_miss_file, 2)})"),
              ("16 clients: jobs (origin transfers) per round", ", ".join(str(t) for t in transfers))]
    if r_miss is not None and r_hit is not None:
        c.measured = (f"miss {r_miss:.2f}× curl ({fb.span(rs_miss, 2)}), TTFB +{fb.fmt(fb.med(ttfb_gap), 1)} ms; "
                      f"hit {r_hit:.2f}× nginx; 16 clients: slowest {fb.fmt(r_crowd, 2)}× one alone, "
                      f"transfers {sorted(set(transfers))}")
        met = (r_miss >= 0.9 and fb.med(ttfb_gap) is not None and fb.med(ttfb_gap) <= 5 and r_hit >= 0.9
               and r_crowd is not None and r_crowd >= 0.8 and transfers and all(t == 1 for t in transfers))
        c.verdict = "PASS" if met else "MISS"
    return c
