"""Server CPU per judgment of ``judged judge serve``: N judgments posted from T client threads
to a real server process on loopback (a fresh SQLite campaign).

A/B two trees (say main before and after a change), alternating runs, and compare server CPU
per judgment, which a loaded machine disturbs far less than wall time::

    TREE=/path/to/a PYTHONPATH=/path/to/a/src python benchmarks/bench_judge_serve.py 1000 5
    TREE=/path/to/b PYTHONPATH=/path/to/b/src python benchmarks/bench_judge_serve.py 1000 5
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time

TREE = os.environ.get("TREE", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TREE, "tests", "judge"))

import httpx  # noqa: E402
from judge_helpers import free_port, make_campaign  # noqa: E402


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(n: int, threads: int) -> None:
    db = os.path.join(tempfile.mkdtemp(), "judging.db")
    names = [f"a{i}" for i in range(threads)]
    tokens = make_campaign(db, n_queries=max(1, n // 20), docs_per_query=20, assessors=names, admins=())
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "judged", "judge", "serve", "--db", db, "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(url + "/api/next").status_code == 401:
                    break
            except httpx.TransportError:
                time.sleep(0.1)

        def judge(name: str) -> None:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {tokens[name]}"}, timeout=120) as c:
                i = 0
                while (r := c.get("/api/next")).status_code == 200:
                    p = r.json()
                    c.post("/api/judgments", json={"qid": p["qid"], "docid": p["docid"], "grade": i % 4,
                                                   "evidence": "e", "request_id": f"{name}-{i}"})
                    i += 1

        cpu0, t0 = cpu_seconds(server.pid), time.perf_counter()
        workers = [threading.Thread(target=judge, args=(name,)) for name in names]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        cpu = cpu_seconds(server.pid) - cpu0
        print(f"{TREE}: {n} judgments, server CPU {cpu:.1f} s ({cpu / n * 1000:.2f} ms/judgment), "
              f"wall {time.perf_counter() - t0:.1f} s, load average {os.getloadavg()[0]:.1f}")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000, int(sys.argv[2]) if len(sys.argv) > 2 else 5)
