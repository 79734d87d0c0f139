"""Crash safety of store.writers.human: SIGKILL a save at random points, 200 times.

A helper process (`sys.executable -c`) imports store.writers.human once, then forks one
child per save, so each kill costs a fork rather than an interpreter start. After
every kill the file must be exactly the old or the new revision and every history
file a complete copy of the revision it names.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from store.format.layout import Kind, Owner, classify, history_path, is_transient
from store.format.records import Intent, validate
from store.writers.human import HumanWriter

KILLS = 200
CALIBRATION = 5
INTENT = "missions/m1/intent.toml"
CLOCK = "datetime(2025, 3, 1, tzinfo=UTC)"
FIRST = """\
# Operator notes survive every save.
schema = 1
title = "v0"   # bumped by each save

[scope]
include = ["src"]
"""

# Reads jobs from stdin; per job: fork a child that saves, print its pid, wait for the
# test's go-ahead (it has killed the child, or not), reap it and print its wait status.
HELPER = f"""
import json, os, sys, traceback
from datetime import UTC, datetime
from pathlib import Path
from store.writers.human import HumanWriter

writer = HumanWriter(Path(sys.argv[1]), "crash", "local", clock=lambda: {CLOCK})
while line := sys.stdin.readline():
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            writer.replace(job["relpath"], job["text"], job["sha256"])
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    print(pid, flush=True)
    sys.stdin.readline()
    print(os.waitpid(pid, 0)[1], flush=True)
"""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def edit(saved: bytes) -> str:
    """What the human types: the loaded text with its title bumped."""
    return re.sub(r'title = "v(\d+)"', lambda m: f'title = "v{int(m[1]) + 1}"', saved.decode())


def make_root(root: Path) -> Path:
    (root / "missions/m1").mkdir(parents=True)
    (root / INTENT).write_text(FIRST)
    return root


def check_consistent(root: Path, chain: list[bytes], state: bytes, parsed: set[str]) -> None:
    """History holds each earlier revision whole; no file but records and temp files.

    Each history file is parsed once (`parsed` remembers which); after that a byte
    comparison with the revision it names proves it unchanged.
    """
    revision = chain.index(state) + 1
    for path in sorted((root / "missions/m1").rglob("*")):
        relpath = path.relative_to(root).as_posix()
        if path.is_dir() or is_transient(relpath):
            continue
        located = classify(relpath)
        assert located is not None and located.owner is Owner.HUMAN, relpath
        if located.kind is Kind.HISTORY:
            kept = int(located.parts["revision"])
            assert kept <= revision, f"{relpath} is ahead of revision {revision}"
            assert path.read_bytes() == chain[kept - 1], f"{relpath} is not revision {kept}"
            if relpath not in parsed:
                assert validate(Intent, tomllib.loads(path.read_text())).revision == kept
                parsed.add(relpath)
    for kept in range(1, revision):
        assert (root / history_path("m1", Kind.INTENT, kept)).is_file()


@pytest.mark.slow
def test_sigkill_during_saves_never_tears(tmp_path: Path) -> None:
    root = make_root(tmp_path / "state")
    scratch = make_root(tmp_path / "scratch")
    clock = datetime(2025, 3, 1, tzinfo=UTC)  # as CLOCK, which the helper uses
    model = HumanWriter(scratch, "crash", "local", clock=lambda: clock)
    chain = [FIRST.encode()]
    state, new = chain[0], model.replace(INTENT, edit(chain[0]), sha(chain[0])).text.encode()
    helper = subprocess.Popen(
        [sys.executable, "-c", HELPER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert helper.stdin is not None and helper.stdout is not None
    rng = random.Random(20250301)
    durations: list[float] = []
    span = 0.0  # kill within this many seconds; adapted so about half the kills land mid-save
    parsed: set[str] = set()
    seen = {"old": 0, "old, history kept": 0, "new": 0, "killed": 0}
    try:
        for attempt in range(CALIBRATION + KILLS):
            job = {"relpath": INTENT, "text": edit(state), "sha256": sha(state)}
            helper.stdin.write(json.dumps(job) + "\n")
            helper.stdin.flush()
            pid = int(helper.stdout.readline())
            started = time.perf_counter()
            if attempt >= CALIBRATION:
                span = span or 1.5 * sorted(durations)[CALIBRATION // 2]
                time.sleep(rng.uniform(0, span))
                os.kill(pid, signal.SIGKILL)
            helper.stdin.write("\n")
            helper.stdin.flush()
            status = int(helper.stdout.readline())
            if attempt < CALIBRATION:
                durations.append(time.perf_counter() - started)
            killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
            assert killed or os.waitstatus_to_exitcode(status) == 0, f"save failed: {status}"
            seen["killed"] += killed
            if attempt >= CALIBRATION:
                span *= 1.1 if killed else 0.9

            now = (root / INTENT).read_bytes()
            assert now in (state, new), f"torn or unexpected file after kill {attempt}"
            validate(Intent, tomllib.loads(now.decode()))
            if now == new:
                seen["new"] += 1
                chain.append(new)
                state = new
                new = model.replace(INTENT, edit(state), sha(state)).text.encode()
            elif (root / history_path("m1", Kind.INTENT, len(chain))).exists():
                seen["old, history kept"] += 1
            else:
                seen["old"] += 1
            check_consistent(root, chain, state, parsed)
    finally:
        helper.stdin.close()
        helper.wait(timeout=10)
    took = ", ".join(f"{d * 1000:.1f}" for d in durations)
    print(f"unkilled saves took {took} ms; kill span ended at {span * 1000:.1f} ms; {seen}")
    assert seen["killed"] >= KILLS // 4, seen
    assert seen["old"] + seen["old, history kept"] >= KILLS // 10, seen
    assert seen["new"] >= KILLS // 10, seen
