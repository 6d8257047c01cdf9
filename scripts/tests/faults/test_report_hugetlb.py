"""`jitdump report` on a host whose administrator set hugetlbfs pages aside for its services.

The report asks for transparent huge pages for its memory (jitdump/report/batch_malloc.cc). Its
allocator's large-page option would map from the host's hugetlbfs pool first (MAP_HUGETLB), pages
a JVM started with -XX:+UseLargePages or a database counts on; a report must not take them.

`report-hugetlb-pool`: with 128 pages of 2 MiB in the pool, the report reads a 40 MB dump through
a perf script stream and is then held reading the stream's next line, its memory at its peak:
it holds no hugetlbfs page (its HugetlbPages in /proc/PID/status) and the pool is whole; once
the stream ends, the report finishes. The pool's size is set back afterwards.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from support.checks import check, log
from support.prereq import require_root
from support.visits import status_kib
from .test_root_visit import marker_script, write_big_dump

POOL = Path("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")


def process_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def free_pool_pages() -> int:
    return int(POOL.with_name("free_hugepages").read_text())


def test_report_hugetlb_pool(ctx, cleanup):
    require_root("it sets the host's hugetlbfs pool")
    check(POOL.exists(), f"{POOL} is missing: the test needs a kernel with hugetlbfs (CONFIG_HUGETLBFS)")
    before = POOL.read_text().strip()
    cleanup.add(lambda: POOL.write_text(before))
    # mimalloc asks for its 32 MiB segments with room to align them: 64 MiB, 32 pages.
    POOL.write_text("128")
    pages = int(POOL.read_text())
    check(pages >= 48, f"the kernel gave the pool {pages} of the 128 pages asked (memory too fragmented?)")
    check(free_pool_pages() == pages, f"another program holds pages of the pool: {free_pool_pages()} of {pages} free")

    pid = 4100000
    jit = ctx.work / "jit"
    jit.mkdir()
    dump = jit / f"jit-{pid}.dump"
    write_big_dump(dump, pid, 40)
    p = subprocess.Popen([str(ctx.tool.path), "report", "--script", "-", "-q", "--srcline",
                          str(ctx.work / "srcline.txt")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    cleanup.kill(p)
    p.stdin.write(marker_script(pid, dump, 1) + "\n")  # the blank line ends the sample's stack
    p.stdin.flush()

    # The stream stays open: once the report has read the dump for the sample, it waits for more,
    # asleep, its memory (resident and hugetlbfs pages, which RSS does not count) no longer growing.
    memory = -1
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.3)
        now = status_kib(p.pid, "VmRSS") + status_kib(p.pid, "HugetlbPages")
        if now == memory and now >= 40 << 10 and process_state(p.pid) == "S":
            break
        memory = now
    held = status_kib(p.pid, "HugetlbPages")
    free = free_pool_pages()
    log(f"report waiting with {memory >> 10} MiB: HugetlbPages {held} kB, pool {free} of {pages} pages free")
    check(p.poll() is None and memory >= 40 << 10,
          f"the report should be waiting for its stream with the dump read ({memory >> 10} MiB)")
    check(held == 0 and free == pages,
          f"[hugetlb-taken] the report holds {held} kB of hugetlbfs pages; the pool has {free} of {pages} free")

    out, err = p.communicate(timeout=120)  # ends the stream
    check(p.returncode == 0, f"the report should finish once its stream ends: exit {p.returncode}", err)
    check(os.path.getsize(ctx.work / "srcline.txt") > 0, "the report wrote no per-line table", err)
