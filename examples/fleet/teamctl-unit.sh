#!/bin/sh
# teamctl-unit: one team for one unit of work, in a container an engine started for it (a
# Kubernetes Indexed Job pod, an Argo or Temporal step, a CI matrix job). It settles Claude
# Code's start-up dialogs in this unit's own config dir, runs the team with a spending cap, and
# leaves the team's record where the engine collects it. `teamctl report` reads the records
# of every unit afterwards.
#
# Environment (defaults in brackets):
#   UNIT_INDEX         which unit [$JOB_COMPLETION_INDEX, which an Indexed Job sets]
#   PROMPTS_DIR        one prompt file per unit, named by its index (a ConfigMap volume) [/prompts]
#   RECORDS_DIR        where the record goes: team-<index>.tar.gz, and run's result as
#                      team-<index>.json [/records]
#   WORK_DIR           the team's working directory [the current one]
#   MAX_COST           the team's spending cap in USD (run --max-cost) [5]
#   RUN_TIMEOUT        how long the team may take (run --timeout) [45m]
#   CLAUDE_CONFIG_DIR  this unit's own config dir (an empty one is fine) [~/.claude]
#   ANTHROPIC_API_KEY  the key the team uses (prepare approves it)
#   TEAMCTL_CLAUDE_BIN the claude binary, when it is not on PATH
#
# Exit code: teamctl's own, so the engine can act on it (see `teamctl --help`): 0 the work is
# done, 1 the team failed, 2 a usage error (this unit is misconfigured: retrying cannot help),
# 3 timeout, 6 budget cap reached (retrying would spend again), 7 the API refused a member's
# calls (--on-rate-limit exit: retry later), 8 a member stalled, 9 a member died (each past its
# nudge and --max-restarts restarts: --on-stall, --on-dead). teamctl is exec'd last, so it
# gets the engine's SIGTERM itself (tini forwards it) and ends its lead cleanly (exit 143).
set -eu

index=${UNIT_INDEX:-${JOB_COMPLETION_INDEX:-}}
case $index in
    '' | *[!0-9]*)
        echo "teamctl-unit: set UNIT_INDEX (or run as an Indexed Job) to a number, not '$index'" >&2
        exit 2
        ;;
esac
prompt=${PROMPTS_DIR:-/prompts}/$index
records=${RECORDS_DIR:-/records}
work=${WORK_DIR:-$PWD}
if [ ! -s "$prompt" ]; then
    echo "teamctl-unit: no prompt for unit $index at $prompt" >&2
    exit 2
fi
mkdir -p "$records"
# A retry of this unit (the engine starts it again after exit 1 or 3): keep the earlier attempt's
# record out of the way, where `teamctl report "$records"/team-*.tar.gz` does not count it twice.
for f in "$records/team-$index.tar.gz" "$records/team-$index.json"; do
    if [ -e "$f" ]; then
        mkdir -p "$records/retried"
        mv "$f" "$records/retried/$(date +%s)-${f##*/}"
    fi
done

# Onboarding, the API key, trust of the work dir and the bypass prompt, for this config dir.
teamctl prepare --cwd "$work" --skip-permissions >&2

exec teamctl run --json --prompt-file "$prompt" --cwd "$work" --name "unit-$index" \
    --dangerously-skip-permissions --timeout "${RUN_TIMEOUT:-45m}" --max-cost "${MAX_COST:-5}" \
    --on-rate-limit exit --on-stall nudge --on-dead restart \
    --export "$records/team-$index.tar.gz" >"$records/team-$index.json"
