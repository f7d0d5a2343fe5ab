#!/usr/bin/env bash
# A Claude Code team reviews a change from CI: two teammates (the team file review.toml) with a
# task each, wait until the work is done and everyone is idle, ask each for a report, collect
# the reports, and shut the team down whatever happens (the trap runs on failure too), keeping
# its record: the whole conversation, the tasks and a report.md for the job summary.
#
# Needs: teamctl, claude (Claude Code, its start-up dialogs settled: see the README's "From
# CI"), tmux, jq. Settings, all optional:
#   TEAM           team name                        (default: review-$GITHUB_RUN_ID, else -$$)
#   TEAM_FILE      the team file                    (default: review.toml beside this script)
#   TEAMCTL        the teamctl binary               (default: teamctl on PATH)
#   CLAUDE_BIN     the claude binary                (default: found as `teamctl create` does)
#   WORK_TIMEOUT   how long the team may work       (default: 30m)
#   REPORT_PROMPT  what each teammate is asked last (default: a one-message review)
#   OUT            where the reports go             (default: reports.md)
#   RECORD         where the team's record goes     (default: team-record.tar.gz)
set -euo pipefail

teamctl=${TEAMCTL:-teamctl}
team=${TEAM:-review-${GITHUB_RUN_ID:-$$}}
out=${OUT:-reports.md}
record=${RECORD:-team-record.tar.gz}
team_file=${TEAM_FILE:-$(dirname "$0")/review.toml}
export TEAMCTL_TEAM=$team

claude=()
if [[ -n ${CLAUDE_BIN:-} ]]; then claude=(--claude-bin "$CLAUDE_BIN"); fi

# The teammates, their briefs and models: the team file (docs/team-file.md).
"$teamctl" create "$team" --file "$team_file" "${claude[@]}" --dangerously-skip-permissions \
    --timeout 2m
# From here on the team is shut down and its files removed, whatever happens; its record is
# taken first.
trap '"$teamctl" delete "$team" --timeout 30s --export "$record" >&2 || true' EXIT

"$teamctl" tasks add "Review the authentication changes" --owner alice >&2
"$teamctl" tasks add "Review the tests" --owner bob >&2
# Unattended: a teammate silent for 10 minutes is nudged, one whose pane died is started again
# on its session (twice at most), and a rate limit that outlasts Claude Code's own retries ends
# the job early (exit 7) instead of waiting out the timeout.
"$teamctl" wait --tasks-done --idle --timeout "${WORK_TIMEOUT:-30m}" \
    --on-stall nudge --stall-after 10m --on-dead restart --on-rate-limit exit >&2

# Each report lands in team-lead's inbox (teamctl is this team's lead); a teammate that goes
# idle without answering, or is gone, fails the job.
"$teamctl" ask --all "${REPORT_PROMPT:-Write your review as one message: findings first, then a verdict.}" \
    --timeout 10m >&2
"$teamctl" inbox --json --type message \
    | jq -r '.messages[] | "## \(.from)\n\n\(.text)\n"' >"$out"
echo "reports: $out ($(grep -c '^## ' "$out") teammates)" >&2
