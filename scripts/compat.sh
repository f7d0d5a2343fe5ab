#!/usr/bin/env bash
# The compatibility matrix: run the real-client end-to-end drivers (tests/e2e) against each
# listed Claude Code version, offline against the mock API, in each team shape, and write the
# table to docs/compatibility.md.
#
#   scripts/compat.sh [--shapes LIST] [--report FILE] [--append] [--tries N] [VERSION...]
#   scripts/compat.sh --append 2.1.333     # add (or run again) one version's row
#   scripts/compat.sh --fetch-only 2.1.112 # only fetch into the cache, print each binary's path
#
# VERSION defaults to the list below. Shapes (comma-separated, default all):
#   standalone   a pane teammate started by hand; teamctl sends, it answers  (e2e.js)
#   create       a team `teamctl create` made and leads                      (create-e2e.js)
#   lead-tmux    a real lead's own team, teammate in a tmux pane             (lead-e2e.js)
#   lead-inproc  a real lead's own team, in-process teammate                 (lead-e2e.js)
#   prepared     `teamctl prepare` alone on an empty config dir; a lead started by `teamctl run`
#                reaches its first turn with no start-up dialog     (run-e2e.js --scenario first-turn)
# Each version is fetched once into $TEAMCTL_COMPAT_CACHE (default ~/.cache/teamctl-compat):
# from 2.1.113 the native package of this machine, @anthropic-ai/claude-code-linux-x64 (or
# -linux-arm64), on its own: no `@anthropic-ai/claude-code` of that version is needed (2.1.333
# was published only as native Linux packages); up to 2.1.112 the JavaScript package
# @anthropic-ai/claude-code (cli.js, run by node).
# Per-run summaries and logs go to $TEAMCTL_COMPAT_CACHE/results/, the run records to
# runs-<report name>.jsonl there (one file per report, started afresh unless --append; the
# report takes the latest run of each version and shape in it). With --append the report also
# keeps its rows of the versions not run now (compat-report.js --keep), so one version can be
# added without running the others again.
# A failed run is tried again, up to --tries times in all (default 2); the table then says
# "pass (2nd try)" and keeps the first failure's reason: a flaky version shows as flaky.
# Exit 1 if any version and shape failed every try.
# Needs Linux (x64; arm64 untried), Node >= 18, npm, tmux; the only network use is the npm
# registry (fetching).
set -uo pipefail
cd "$(dirname "$0")/.."

DEFAULT_VERSIONS=(2.1.112 2.1.150 2.1.159 2.1.160 2.1.177 2.1.178 2.1.196 2.1.210 2.1.322 2.1.323 2.1.332 2.1.333 2.1.334 2.1.335 2.1.336)
shapes="standalone,create,lead-tmux,lead-inproc,prepared"
report=docs/compatibility.md
append=0
tries=2
fetch_only=0
versions=()
while (($#)); do
    case "$1" in
        --shapes) shapes="$2"; shift 2 ;;
        --report) report="$2"; shift 2 ;;
        --append) append=1; shift ;;
        --tries) tries="$2"; shift 2 ;;
        --fetch-only) fetch_only=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compat: unknown option $1" >&2; exit 2 ;;
        *) versions+=("$1"); shift ;;
    esac
done
((${#versions[@]})) || versions=("${DEFAULT_VERSIONS[@]}")

cache="${TEAMCTL_COMPAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/teamctl-compat}"
results="$cache/results"
mkdir -p "$results"
runs="$results/runs-$(basename "$report" .md).jsonl"


# The native package's platform: this machine's.
case $(uname -m) in
    aarch64 | arm64) native=linux-arm64 ;;
    *) native=linux-x64 ;;
esac

# The client binary of version $1, fetched into the cache if missing; prints its path.
fetch() {
    local v=$1 dir="$cache/$1" patch pkg bin
    patch=${v##*.}
    if ((patch <= 112)); then
        pkg="@anthropic-ai/claude-code@$v"
        bin="$dir/node_modules/@anthropic-ai/claude-code/cli.js"
    else
        # The platform package itself, not the @anthropic-ai/claude-code wrapper that would
        # pull it in as an optional dependency: some versions were published without one.
        pkg="@anthropic-ai/claude-code-$native@$v"
        bin="$dir/node_modules/@anthropic-ai/claude-code-$native/claude"
    fi
    if [[ ! -x $bin ]]; then
        mkdir -p "$dir"
        npm install --prefix "$dir" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
            "$pkg" >&2 || return 1
    fi
    [[ -x $bin ]] && echo "$bin"
}

run_shape() { # version shape bin attempt
    local v=$1 shape=$2 bin=$3 try=$4 base="$results/$1-$2" rc t0
    t0=$(date +%s)
    case $shape in
        standalone) node tests/e2e/e2e.js --send-cmd "$teamctl" --claude-bin "$bin" ;;
        create) node tests/e2e/create-e2e.js --teamctl "$teamctl" --claude-bin "$bin" ;;
        lead-tmux) node tests/e2e/lead-e2e.js --teamctl "$teamctl" --claude-bin "$bin" --mode tmux ;;
        lead-inproc) node tests/e2e/lead-e2e.js --teamctl "$teamctl" --claude-bin "$bin" --mode in-process ;;
        prepared) node tests/e2e/run-e2e.js --teamctl "$teamctl" --claude-bin "$bin" --scenario first-turn --prepare ;;
        *) echo "compat: unknown shape $shape" >&2; return 2 ;;
    esac >"$base.out" 2>"$base.err"
    rc=$?
    ((rc == 0)) || cp "$base.err" "$base.try$try.err"
    printf '%-8s %-12s %s (%ss)\n' "$v" "$shape" "$([[ $rc == 0 ]] && echo pass || echo "FAIL (exit $rc, see $base.try$try.err)")" \
        "$(($(date +%s) - t0))" >&2
    node -e '
        const [v, shape, rc, file, errFile, attempt] = process.argv.slice(1);
        const fs = require("fs");
        let summary = null, reason = null;
        try { const l = fs.readFileSync(file, "utf8").trim().split("\n"); summary = JSON.parse(l[l.length - 1]); } catch (_) {}
        if (rc !== "0") { try { reason = fs.readFileSync(errFile, "utf8").split("\n")[0].slice(0, 400); } catch (_) {} }
        process.stdout.write(JSON.stringify({ version: v, shape, rc: Number(rc), attempt: Number(attempt), reason, summary }) + "\n");
    ' "$v" "$shape" "$rc" "$base.out" "$base.err" "$try" >>"$runs"
    return $rc
}

if ((fetch_only)); then
    for v in "${versions[@]}"; do
        fetch "$v" || { echo "compat: could not fetch Claude Code $v" >&2; exit 1; }
    done
    exit 0
fi

cargo build --locked --quiet || exit 1
teamctl="$PWD/target/debug/teamctl"

((append)) || : >"$runs"
failed=0
IFS=, read -ra shape_list <<<"$shapes"
for v in "${versions[@]}"; do
    if ! bin=$(fetch "$v"); then
        echo "compat: could not fetch Claude Code $v" >&2
        for s in "${shape_list[@]}"; do
            printf '{"version":"%s","shape":"%s","rc":-1,"summary":null}\n' "$v" "$s" >>"$runs"
        done
        failed=1
        continue
    fi
    for s in "${shape_list[@]}"; do
        for ((try = 1; try <= tries; try++)); do
            CLAUDE_E2E_VERSION=$v run_shape "$v" "$s" "$bin" "$try" && break
            ((try < tries)) || failed=1
        done
    done
done

keep=()
((append)) && [[ -f $report ]] && keep=(--keep "$report")
node scripts/compat-report.js "$runs" "${keep[@]}" >"$report.tmp" && mv "$report.tmp" "$report"
echo "compat: wrote $report" >&2
exit $failed
