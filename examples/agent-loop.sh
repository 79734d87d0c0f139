#!/bin/sh
# A scripted agent on `hud agent`: propose a plan, ask a human, wait for the decision,
# authorize at commit time, act, record evidence; then show that the approval cannot be
# used twice, and what a resume under the same key is told.
#
#   examples/agent-loop.sh STATE_DIR MISSION    (an existing mission, with no plan yet)
#
# While it waits, approve the request in the HUD (`hud STATE_DIR`, then `a`) or with
# `hud decide STATE_DIR MISSION deploy-1 approve --yes`. HUD="python -m cli.main" works
# as well as the installed `hud`.
set -eu
state=${1:?usage: agent-loop.sh STATE_DIR MISSION}
mission=${2:?usage: agent-loop.sh STATE_DIR MISSION}
hud=${HUD:-hud}

agent() {
    command=$1
    shift
    # $hud is split into words on purpose, so that HUD may hold a command with arguments.
    $hud agent "$command" "$state" --mission "$mission" --actor scripted-agent "$@"
}

echo '{"steps": [{"id": "deploy", "title": "Deploy 1.2.3", "risk": "external_write",
  "effect": "prod runs 1.2.3", "needs_approval": true}]}' | agent plan -

agent request --step deploy --tool deploy --args '{"target": "prod", "version": "1.2.3"}' \
    --summary "ship 1.2.3 to prod" --id deploy-1 --wait "${WAIT:-300}" || {
    status=$?
    echo "no approval (exit $status): not deploying" >&2
    exit "$status"
}

agent authorize deploy-1 # commit time: uses the approval, once
agent step deploy running --reason "approved: deploy-1"
echo "deploying 1.2.3 to prod" # the effect itself runs here
agent evidence deploy --observed "prod reports 1.2.3" --method "GET /version" \
    --proves "the deploy landed"
agent step deploy succeeded

# The same approval under another key is a second use: refused (exit 1).
if agent authorize deploy-1 --key deploy-1/again; then
    echo "an approval ran twice" >&2
    exit 1
else
    echo "second authorize refused (exit $?), as it must be"
fi
# The same key again is what a restart after a crash between authorize and the effect
# does: exit 4, "already authorized": find out whether the effect happened, never redo it.
if agent authorize deploy-1; then
    echo "an approval ran twice" >&2
    exit 1
else
    echo "resumed authorize answered (exit $?): do not deploy again"
fi
