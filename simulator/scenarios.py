"""The scenarios the simulator plays, one mission each, and the briefs that set them up.

Each scenario brings its mission to one status a demo should show: done, failed,
needs_you (outcome unknown; approvals), stale, blocked (over budget), running, idle.
On the way they leave what a review and the coordination metrics look for: a handoff to
another agent (done), a failed run re-planned between two attempts (failed), a request
left stale by a re-plan (outcome unknown), two workers on one step, one of them on a
superseded plan, repeating an effect without an idempotency key (stale).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from simulator.mission import HEARTBEAT_TICKS, Action, Mission, Script, Sleep, Work
from simulator.setup import Brief
from store.writers.agent import utcnow

STALE_BY = timedelta(hours=2)


def execute(
    m: Mission, step_id: str, work: Work, summary: str, next_step: str | None = None
) -> Generator[Action, None, str]:
    """Run a step, asking for approval first when the mission's policy requires it."""
    if not m.needs_approval(step_id):
        return (yield from m.run_step(step_id, work, next_step=next_step))
    request_id = m.request(step_id, work, summary)
    yield None
    results = yield from m.await_decisions(
        {step_id: request_id}, {step_id: work}, {step_id: summary}
    )
    request_id, auth = results[step_id]
    if not auth.ok:
        m.state(step_id, "blocked", f"approval {request_id}: {auth.reason}")
        yield None
        return "blocked"
    return (yield from m.run_step(step_id, work, approval=request_id, next_step=next_step))


def step(sid: str, title: str, risk: str = "read_only", **extra: Any) -> dict[str, Any]:
    return {"id": sid, "title": title, "risk": risk, **extra}


def report(m: Mission, title: str, lines: int) -> str:
    """A small text artifact with deterministic content."""
    rows = [f"{title} ({m.id})"] + [
        f"{n:03d} {m.rng.choice(['ok', 'ok', 'ok', 'note'])} item-{m.rng.randrange(10_000):04d}"
        for n in range(1, lines + 1)
    ]
    return "\n".join(rows) + "\n"


# ---- done: two plan versions, a handoff to another agent, independent evidence ---------------


def finishes(m: Mission) -> Script:
    collect = step("collect", "Collect merged PRs since v2.3.0", verification="count matches git")
    draft = step(
        "draft",
        "Draft release notes in docs/releases/v2.4.md",
        "reversible_write",
        depends_on=["collect"],
        effect="writes docs/releases/v2.4.md on a branch",
        recovery="delete the branch",
    )
    m.write_plan([collect, draft], assumptions=["all merged PRs carry a changelog label"])
    prs = m.rng.randint(18, 40)
    yield from m.run_step(
        "collect",
        Work(
            "git.log",
            {"range": "v2.3.0..main", "merges": True},
            f"{prs} merged PRs, 3 marked breaking",
            "git log --merges v2.3.0..main",
            "the notes cover every merged change",
            artifact=report(m, "merged PRs", 6),
        ),
        next_step="draft",
    )
    draft = {
        **draft,
        "title": "Draft release notes with a migration guide for the 3 breaking changes",
        "effect": "writes docs/releases/v2.4.md and docs/migrating-to-2.4.md on a branch",
    }
    m.write_plan(
        [collect, draft],
        reason="collect found 3 breaking changes: the notes now include a migration guide",
    )
    m.handoff(
        "re-planned: notes include a migration guide; handing over to the docs agent",
        "draft",
        next_steps=["draft"],
    )
    m.hand_over(f"sim-docs-agent/{m.id}")  # another provider resumes from the handoff
    work = Work(
        "fs.write",
        {"paths": ["docs/releases/v2.4.md", "docs/migrating-to-2.4.md"], "branch": "notes-2.4"},
        "both files written, markdown lint clean",
        "markdownlint + link check",
        "the notes and the guide are written and readable",
        artifact=report(m, "lint of the notes", 3),
        observer="ci/docs-lint",
    )
    yield from execute(m, "draft", work, "write the v2.4 notes and migration guide")
    # finished: every step of the latest plan succeeded with evidence; no halt (a halt
    # means the runtime stopped short of the plan, which reads as blocked)
    m.handoff("release notes ready for review", None, next_steps=["open the PR for review"])


# ---- failed: a step fails, the agent re-plans, it fails again and the agent gives up --------


def fails(m: Mission) -> Script:
    migrate = step(
        "migrate",
        "Apply migration 0042 to staging",
        "reversible_write",
        effect="splits table orders into orders and order_lines",
        recovery="the migration runs in one transaction: a failure rolls back",
    )
    verify = step("verify", "Check row counts after the split", depends_on=["migrate"])
    m.write_plan([migrate, verify], assumptions=["staging is quiet between 02:00 and 04:00 UTC"])
    args = {"db": "staging", "migration": "0042_split_orders"}
    work = Work(
        "pg.migrate",
        args,
        "",
        "migration runner exit status",
        "the schema is at 0042",
        result="error",
        error="lock timeout on table orders",
    )
    yield from m.run_step("migrate", work)
    m.write_plan(
        [{**migrate, "effect": f"{migrate['effect']}, waiting at most 30 s for locks"}, verify],
        reason="attempt 1 hit a lock timeout: wait longer for the lock",
    )
    work.args = {**args, "lock_timeout": "30s"}
    yield from m.run_step("migrate", work)
    m.writer.halt("gave up: migrate failed twice (lock timeout on table orders)")
    m.handoff(
        "migration 0042 failed on staging",
        "migrate",
        blockers=["lock timeout on table orders: a long transaction holds it"],
        next_steps=["find the blocking transaction", "retry in a quiet window"],
    )
    yield None


# ---- needs_you: an external write with an unknown outcome --------------------------------


def unknown(m: Mission) -> Script:
    m.write_plan(
        [
            step("list-due", "List refunds due today"),
            step(
                "submit",
                "Submit the refund batch to the payments API",
                "external_write",
                depends_on=["list-due"],
                effect="refunds customers (money leaves the account)",
                recovery="query the batch by idempotency key before any retry",
            ),
        ]
    )
    count = m.rng.randint(20, 60)
    yield from m.run_step(
        "list-due",
        Work(
            "sql.query",
            {"query": "select * from refunds where due = today"},
            f"{count} refunds due",
            "read-only query",
            "the batch is complete",
            artifact=report(m, "refunds due", 5),
        ),
        next_step="submit",
    )
    submit = Work(
        "payments.refund_batch",
        {"batch": f"rf-{m.rng.randrange(10**6):06d}", "count": count, "currency": "EUR"},
        "",
        "API response",
        "the refunds were issued",
        result="unknown",
        error="payments API timed out after 30 s; the batch may have been applied",
    )
    yield from execute(m, "submit", submit, f"refund {count} customers")
    yield from reconcile(m, submit, count)
    m.writer.halt("outcome unknown for submit: reconcile with payments before any retry")
    m.handoff(
        "refund batch outcome unknown",
        "submit",
        blockers=["did the refund batch go through? check the payments dashboard"],
        next_steps=["reconcile", "retry only with the same idempotency key"],
    )
    yield None


def reconcile(m: Mission, submit: Work, count: int) -> Script:
    """Plan a reconcile and a resubmit, ask for the resubmit, reconcile, then drop the
    resubmit: the request it filed can no longer be authorized (stale: step-removed)."""
    assert m.plan is not None
    kept = [s.model_dump(exclude_defaults=True) for s in m.plan.steps]
    checks = step("reconcile", "Match the batch against the payments ledger", depends_on=["submit"])
    again = step(
        "resubmit",
        "Resubmit the refunds that did not land",
        "irreversible",
        depends_on=["reconcile"],
        effect="refunds customers (money leaves the account)",
        recovery="none: a refund cannot be recalled",
    )
    m.write_plan([*kept, checks, again], reason="submit timed out: reconcile before any resubmit")
    m.request(
        "resubmit", submit, f"resubmit the refunds of {submit.args['batch']} that did not land"
    )
    yield None
    landed = m.rng.randint(1, count - 1)
    ledger = Work(
        "payments.ledger",
        {"batch": submit.args["batch"]},
        f"{landed} of {count} refunds landed",
        "ledger query by batch id",
        "which refunds of the batch landed",
        artifact=report(m, "ledger match", 4),
    )
    yield from m.run_step("reconcile", ledger)
    m.write_plan(
        [*kept, checks],
        reason=f"{landed} of {count} refunds landed: a resubmit would pay them twice; "
        "support refunds the rest by hand",
    )
    m.state("submit", "outcome_unknown", f"{count - landed} refunds unconfirmed")
    yield None


# ---- stale: the agent died mid-step two hours ago ----------------------------------------------


def stalls(m: Mission) -> Script:
    crawl = step("crawl", "Crawl the docs site")
    build = step("build", "Build the search index", "reversible_write", depends_on=["crawl"])
    publish = step("publish", "Publish the index", "reversible_write", depends_on=["build"])
    m.write_plan([crawl, build, publish])
    yield from m.run_step(
        "crawl",
        Work(
            "http.crawl",
            {"site": "https://docs.example.com", "max_pages": 5000},
            "4,812 pages crawled",
            "crawler summary",
            "the corpus is complete",
            artifact=report(m, "crawl summary", 4),
        ),
        next_step="build",
    )
    m.state("build", "running")
    yield None
    m.writer.attempt("build", 1, "started", "index.build", {"shards": 8}, effect_possible=True)
    yield None
    m.write_plan(
        [crawl, {**build, "effect": "writes a 16-shard index"}, publish],
        reason="the index outgrew 8 shards: build 16",
    )
    m.state("build", "running", "re-planned: 16 shards")
    m.handoff("building the index", "build", next_steps=["build", "publish"])
    yield None
    # cron started a second worker: it read plan v1 and knows nothing of the first
    first = m.writer
    m.hand_over(f"sim-agent-cron/{m.id}")
    m.writer.step("build", "running", 1, "nightly run")
    yield None
    m.writer.attempt("build", 1, "started", "index.build", {"shards": 8}, effect_possible=True)
    yield None
    first.step("build", "verifying", 2, "16 shards written")  # both hold the step now
    yield None  # ... and both processes are gone: no event from here on


# ---- blocked: usage exceeds the budget --------------------------------------------------------


def over_budget(m: Mission) -> Script:
    topics = ["search", "read", "summarize", "cite"]
    m.write_plan([step(t, f"{t.title()} sources on vector databases") for t in topics])
    costs = {"search": 0.6, "read": 0.9, "summarize": 0.5, "cite": 0.2}  # limit: 1.00
    for index, topic in enumerate(topics):
        exceeded = m.over_budget()
        if exceeded:
            m.state(topic, "blocked", f"budget exceeded: {exceeded}")
            m.writer.halt(f"budget exhausted before {topic}: {exceeded}")
            m.handoff(
                "stopped: over budget",
                topic,
                blockers=[f"budget exceeded: {exceeded}"],
                next_steps=["raise [budget] usd in constraints.toml, or narrow the scope"],
            )
            yield None
            return
        work = Work(
            "llm.research",
            {"topic": "vector databases", "phase": topic},
            f"{topic}: {m.rng.randint(5, 30)} sources",
            "model output checked against source URLs",
            f"{topic} done",
            artifact=report(m, topic, 3),
            usd=costs[topic],
            tokens=40_000,
        )
        following = topics[index + 1] if index + 1 < len(topics) else None
        yield from m.run_step(topic, work, next_step=following)


# ---- needs_you: approvals of every risk class --------------------------------------------------

DEPLOY_STEPS = (
    ("metrics", "Read production gateway error rates", "read_only", "metrics.query"),
    ("staging", "Switch the staging gateway to config v42", "reversible_write", "k8s.apply"),
    ("notify", "Tell partner Acme about the cutover window", "external_write", "email.send"),
)


def approvals(m: Mission) -> Script:
    steps = [step(sid, title, risk) for sid, title, risk, _ in DEPLOY_STEPS]
    retire = step(
        "retire",
        "Delete the retired v1 gateway bucket",
        "irreversible",
        depends_on=[sid for sid, *_ in DEPLOY_STEPS],
        effect="deletes s3://gw-v1-archive and its 1.2 TB",
        recovery="none: deletion is permanent",
    )
    m.write_plan([*steps, retire], assumptions=["v2 gateway has served 100% traffic for 7 days"])
    args: dict[str, dict[str, Any]] = {
        "metrics": {"query": "rate(gateway_errors_total[1h])", "cluster": "prod-eu"},
        "staging": {"manifest": "gateway/config-v42.yaml", "namespace": "staging"},
        "notify": {"to": "ops@acme.example", "subject": "Gateway cutover Tue 06:00 UTC"},
        "retire": {"bucket": "s3://gw-v1-archive", "recursive": True},
    }
    works = {
        sid: Work(
            tool,
            args[sid],
            f"{sid} done",
            "tool response checked",
            f"{sid} has the intended effect",
            artifact=report(m, sid, 3),
        )
        for sid, _, _, tool in (*DEPLOY_STEPS, ("retire", "", "", "s3.delete"))
    }
    summaries = {sid: title for sid, title, *_ in DEPLOY_STEPS}
    summaries["retire"] = "permanently delete s3://gw-v1-archive (1.2 TB)"
    pending: dict[str, str] = {}
    for sid, *_ in DEPLOY_STEPS:
        if m.needs_approval(sid):
            pending[sid] = m.request(sid, works[sid], summaries[sid])
            yield None
    m.handoff(
        f"waiting for {len(pending)} approvals", None, next_steps=[*sorted(pending), "retire"]
    )
    states: dict[str, str] = {}
    for sid, *_ in DEPLOY_STEPS:
        if sid not in pending:  # the mission's policy lets it act without asking
            states[sid] = yield from m.run_step(sid, works[sid])
    while pending:  # each step runs as soon as its own decision arrives
        answers = yield from m.await_decisions(pending, works, summaries)
        for sid, (request_id, auth) in sorted(answers.items()):
            if auth.ok:
                states[sid] = yield from m.run_step(sid, works[sid], approval=request_id)
            else:
                m.state(sid, "blocked", f"approval {request_id}: {auth.reason}")
                states[sid] = "blocked"
                yield None
    unfinished = [sid for sid, state in states.items() if state != "succeeded"]
    if unfinished:
        m.state("retire", "blocked", f"depends on {', '.join(unfinished)}, which did not succeed")
        yield None
        m.writer.halt(f"blocked: {', '.join(unfinished)} did not succeed")
        m.handoff("blocked on approvals", "retire", blockers=unfinished)
        yield None
        return
    final = yield from execute(m, "retire", works["retire"], summaries["retire"])
    m.handoff(f"gateway cutover finished (retire {final})", None)


# ---- running: triage batches forever, a new plan version per batch --------------------------


def _batch(batch: int) -> list[dict[str, Any]]:
    fetch, cluster, label = (f"b{batch}-{name}" for name in ("fetch", "cluster", "label"))
    return [
        step(fetch, f"Fetch error logs, batch {batch}"),
        step(cluster, "Cluster errors by stack trace", depends_on=[fetch]),
        step(label, "Label issues in the tracker", "reversible_write", depends_on=[cluster]),
    ]


def runs(m: Mission) -> Script:
    batch = 1
    m.write_plan(_batch(1))
    while True:
        ids = [s["id"] for s in _batch(batch)]
        for index, sid in enumerate(ids):
            exceeded = m.over_budget()
            if exceeded:
                m.state(sid, "blocked", f"budget exceeded: {exceeded}")
                yield None
                m.writer.halt(f"budget exhausted: {exceeded}")
                yield None
                return
            following = _batch(batch + 1)
            if index == len(ids) - 1:
                # plan the next batch before this one ends (carrying the step in progress),
                # so the mission never looks finished between batches
                carried = {**m.spec(sid).model_dump(exclude_defaults=True), "depends_on": []}
                m.write_plan(
                    [carried, *following],
                    reason=f"batch {batch} nearly triaged; planned batch {batch + 1}, "
                    "the following hour of logs",
                )
            work = Work(
                sid.split("-", 1)[1] + ".run",
                {"batch": batch, "window": "1h"},
                f"{m.rng.randint(50, 900)} log lines in {m.rng.randint(3, 12)} clusters",
                "sampled 20 items by hand",
                f"{sid} is correct",
                artifact=report(m, sid, 4),
                failures=1 if m.rng.random() < 0.15 else 0,
                error="upstream 502",
                ticks=(60, 200),
                verify=True,
            )
            after = ids[index + 1] if index + 1 < len(ids) else following[0]["id"]
            yield from execute(m, sid, work, f"{sid}: label issues", after)
            m.handoff(f"triaging batch {batch}", after, next_steps=[after])
        batch += 1


# ---- idle: planned, waiting for its window, alive --------------------------------------------


def idles(m: Mission) -> Script:
    m.write_plan(
        [
            step("inventory", "Inventory buckets older than 2 years"),
            step(
                "archive", "Move them to cold storage", "reversible_write", depends_on=["inventory"]
            ),
            step("purge", "Purge the originals", "irreversible", depends_on=["archive"]),
        ]
    )
    count = m.rng.randint(40, 90)
    yield from m.run_step(
        "inventory",
        Work(
            "s3.list",
            {"older_than": "730d"},
            f"{count} buckets older than 2 years",
            "s3 list-buckets with creation dates",
            "the archive list is complete",
            artifact=report(m, "old buckets", 5),
        ),
    )
    m.handoff(
        "idle until the maintenance window (Sat 02:00 UTC)",
        None,
        next_steps=["archive", "purge"],
    )
    while True:  # alive, nothing in progress
        yield Sleep(HEARTBEAT_TICKS)
        m.writer.heartbeat()
        yield None


# ---- the table -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    base_id: str
    script: Callable[[Mission], Script]
    brief: Brief
    clock_offset: timedelta = timedelta(0)
    history: bool = False  # played in full when the simulator starts: it all happened before


def _brief(title: str, objective: str, auto: tuple[str, ...], usd: float, **kw: Any) -> Brief:
    return Brief(
        title=title,
        objective=objective,
        success_evidence=kw.pop("success_evidence", ("every step has passing evidence",)),
        auto=auto,
        usd=usd,
        tokens=kw.pop("tokens", 2_000_000),
        steps=kw.pop("steps", 500),
        rules=kw.pop("rules", (("no-prod-writes", "No writes to production without approval"),)),
        **kw,
    )


SAFE = ("read_only", "reversible_write")
# In play order: the first six are the mix (--missions 6); the default of 8 adds a
# running and an idle mission so that every status shows. More missions repeat the list.
SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "approvals",
        "deploy-gateway",
        approvals,
        _brief(
            "Cut over to gateway v2",
            "Move all traffic to gateway v2 and retire v1",
            (),
            25.0,
            open_decisions=("may we delete the v1 archive?",),
            valid_for_seconds=1800,
        ),
    ),
    Scenario(
        "done",
        "release-notes",
        finishes,
        _brief(
            "Release notes for v2.4",
            "Write the v2.4 release notes",
            SAFE,
            5.0,
            non_goals=("no changes to the changelog tooling", "no release announcement"),
        ),
    ),
    Scenario(
        "failed",
        "flaky-migration",
        fails,
        _brief("Migrate staging to 0042", "Split the orders table on staging", SAFE, 5.0),
    ),
    Scenario(
        "outcome_unknown",
        "refund-batch",
        unknown,
        _brief(
            "Issue today's refunds",
            "Refund every customer due today",
            (*SAFE, "external_write"),
            2.0,
        ),
    ),
    Scenario(
        "stale",
        "nightly-index",
        stalls,
        _brief("Rebuild the docs search index", "Nightly index rebuild", SAFE, 3.0),
        clock_offset=-STALE_BY,
        history=True,
    ),
    Scenario(
        "over_budget",
        "research-digest",
        over_budget,
        _brief(
            "Research digest: vector databases",
            "A two-page digest with citations",
            SAFE,
            1.0,
            tokens=400_000,
            steps=20,
        ),
    ),
    Scenario(
        "running",
        "log-triage",
        runs,
        _brief("Triage production errors", "Cluster and label new errors hourly", SAFE, 500.0),
    ),
    Scenario(
        "idle",
        "quarterly-cleanup",
        idles,
        _brief("Quarterly storage cleanup", "Archive and purge old buckets", ("read_only",), 10.0),
    ),
)


def clock_for(scenario: Scenario) -> Callable[[], datetime]:
    """The mission's clock: a stalled mission writes as if two hours ago."""
    offset = scenario.clock_offset

    def clock() -> datetime:
        return utcnow() + offset

    return clock if offset else utcnow
