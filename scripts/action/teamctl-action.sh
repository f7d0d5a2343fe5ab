#!/usr/bin/env bash
# The steps of the teamctl GitHub Action (action.yml at the repository's root calls each one;
# they run the same way on any machine):
#
#   teamctl-action.sh tools     install tmux and jq if they are missing
#   teamctl-action.sh claude    install Claude Code; output claude-bin
#   teamctl-action.sh teamctl   install teamctl; output teamctl-bin
#   teamctl-action.sh run       prepare, run the team, keep its record and its report.html
#                               beside it; outputs state, result, cost_usd, record, report,
#                               result-json, exit-code; the record's report.md appended to the
#                               job summary; with merge-into the helpers' work merged by
#                               teamctl run (what merged and what was set aside added to the
#                               job summary), and with pull-request the branch pushed and a
#                               pull request opened (output pull-request-url)
#   teamctl-action.sh link      link the uploaded page and record from the job summary
#
# Every input arrives in the environment (INPUT_<NAME>, dashes as underscores), never in this
# script's text: a prompt, a path or a version is data, not code, and is never echoed raw into
# the log (where a line starting with `::` would be a workflow command). Outputs go to
# $GITHUB_OUTPUT with a random delimiter, the summary to $GITHUB_STEP_SUMMARY; either is skipped
# when unset. Exit codes: 2 a bad input (one line on stderr, nothing run); from `run`, teamctl
# run's own (0 done, 1 failed, 2 usage, 3 timeout, 6 budget, 10 some helpers set aside by
# merge-into), after the outputs and the summary; 1 when the pull request could not be opened.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action_dir=${GITHUB_ACTION_PATH:-$(cd "$here/../.." && pwd)}
tmp_root=${RUNNER_TEMP:-${TMPDIR:-/tmp}}

die() { # a bad input: one line, exit 2
    echo "teamctl-action: $*" >&2
    exit 2
}
fail() { # the step could not do its work: one line, exit 1
    echo "teamctl-action: $*" >&2
    exit 1
}

# Sets step output $1 to $2 (any text, newlines included).
output() {
    local delim
    delim="teamctl_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    [[ $2 != *"$delim"* ]] || fail "could not write output $1"
    if [[ -n ${GITHUB_OUTPUT:-} ]]; then
        printf '%s<<%s\n%s\n%s\n' "$1" "$delim" "$2" "$delim" >>"$GITHUB_OUTPUT"
    fi
}

# The platform of this machine as Claude Code's native npm packages name it.
claude_platform() {
    local p
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) p=linux-x64 ;;
        Linux-aarch64 | Linux-arm64) p=linux-arm64 ;;
        Darwin-x86_64) p=darwin-x64 ;;
        Darwin-arm64) p=darwin-arm64 ;;
        *) fail "Claude Code has no package for this platform ($(uname -s) $(uname -m))" ;;
    esac
    if [[ $p == linux-* ]] && ldd --version 2>&1 | grep -qi musl; then p+=-musl; fi
    echo "$p"
}

# The Rust target of teamctl's release binary for this machine.
teamctl_target() {
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) echo x86_64-unknown-linux-musl ;;
        Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-musl ;;
        Darwin-x86_64) echo x86_64-apple-darwin ;;
        Darwin-arm64) echo aarch64-apple-darwin ;;
        *) fail "no teamctl release binary for this platform ($(uname -s) $(uname -m)): use teamctl-version: source" ;;
    esac
}

sha256_check() { # FILE.sha256 (in the current directory)
    if command -v sha256sum >/dev/null; then sha256sum -c --quiet "$1"; else shasum -a 256 -c --quiet "$1"; fi
}

# Missing tmux (teamctl run hosts the lead in it) or jq (this script reads run's JSON with it).
step_tools() {
    local missing=() sudo=()
    command -v tmux >/dev/null || missing+=(tmux)
    command -v jq >/dev/null || missing+=(jq)
    ((${#missing[@]})) || return 0
    if command -v apt-get >/dev/null; then
        [[ $(id -u) == 0 ]] || sudo=(sudo)
        "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
    elif command -v brew >/dev/null; then
        brew install --quiet "${missing[@]}"
    else
        fail "install ${missing[*]} first (no apt-get or brew here)"
    fi
}

# Claude Code: INPUT_CLAUDE_BIN (an installed one), else INPUT_CLAUDE_CODE_VERSION (default
# latest) from npm into a folder of its own. A version published without the
# @anthropic-ai/claude-code package (2.1.333: only the native Linux packages) is installed
# from this platform's native package, which is all the other one would install.
step_claude() {
    local v=${INPUT_CLAUDE_CODE_VERSION:-latest} dir pkg plat bin err
    if [[ -n ${INPUT_CLAUDE_BIN:-} ]]; then
        [[ -f $INPUT_CLAUDE_BIN && -x $INPUT_CLAUDE_BIN ]] || die "claude-bin is not an executable file"
        output claude-bin "$INPUT_CLAUDE_BIN"
        return
    fi
    [[ $v =~ ^(latest|stable|[0-9]+\.[0-9]+\.[0-9]+)$ ]] ||
        die "claude-code-version must be a version such as 2.1.332, latest or stable"
    command -v npm >/dev/null || fail "npm is needed to install Claude Code"
    dir=$(mktemp -d "$tmp_root/claude-code.XXXXXX")
    if err=$(npm view "@anthropic-ai/claude-code@$v" version 2>&1 >/dev/null); then
        pkg="@anthropic-ai/claude-code@$v"
        bin="$dir/node_modules/.bin/claude"
    elif [[ $err == *E404* ]]; then
        plat=$(claude_platform)
        pkg="@anthropic-ai/claude-code-$plat@$v"
        bin="$dir/node_modules/@anthropic-ai/claude-code-$plat/claude"
        echo "teamctl-action: no @anthropic-ai/claude-code@$v on npm; installing $pkg" >&2
    else
        fail "could not ask npm about @anthropic-ai/claude-code@$v"
    fi
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$pkg" >&2 ||
        fail "could not install $pkg (is Claude Code $v published for this platform?)"
    [[ -x $bin ]] || fail "$pkg installed no claude binary"
    echo "teamctl-action: Claude Code $(CLAUDE_CONFIG_DIR="$dir/version-probe" "$bin" --version 2>/dev/null | head -n 1 | tr -cd '[:alnum:] ().-')" >&2
    output claude-bin "$bin"
}

# teamctl: INPUT_TEAMCTL_VERSION is `source` (default: built with cargo from the Action's own
# checkout, the very commit the workflow named), a release tag such as v0.1.0 (that release's
# binary for this platform, its SHA-256 checked), or `installed` (the teamctl on PATH).
step_teamctl() {
    local v=${INPUT_TEAMCTL_VERSION:-source} root bin
    case $v in
        installed)
            bin=$(command -v teamctl) || die "teamctl-version is installed, but there is no teamctl on PATH"
            ;;
        source)
            command -v cargo >/dev/null || fail "cargo is needed to build teamctl from source (or use a release: teamctl-version: v…)"
            root=$(mktemp -d "$tmp_root/teamctl.XXXXXX")
            cargo install --locked --quiet --path "$action_dir" --root "$root" >&2 ||
                fail "could not build teamctl from $action_dir"
            bin="$root/bin/teamctl"
            ;;
        v[0-9]*)
            [[ $v =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || die "teamctl-version must be source, installed or a tag such as v0.1.0"
            bin=$(release_download "$v")
            ;;
        *) die "teamctl-version must be source, installed or a tag such as v0.1.0" ;;
    esac
    "$bin" --version >&2 || fail "the installed teamctl does not run"
    output teamctl-bin "$bin"
}

# Downloads release $1's binary for this machine, checks its SHA-256; prints its path.
release_download() {
    local tag=$1 repo target name base dir
    repo=${INPUT_TEAMCTL_REPOSITORY:-${ACTION_REPOSITORY:-}}
    # A composite action's steps may see no github.action_repository; its checkout is
    # <runner>/_actions/OWNER/REPO/REF.
    if [[ -z $repo && $action_dir =~ /_actions/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/[^/]+$ ]]; then
        repo="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
    fi
    [[ $repo =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "set teamctl-repository (owner/name) to download a release"
    target=$(teamctl_target)
    name="teamctl-$tag-$target"
    base=${TEAMCTL_ACTION_RELEASES:-https://github.com/$repo/releases/download}/$tag
    dir=$(mktemp -d "$tmp_root/teamctl.XXXXXX")
    (
        cd "$dir"
        curl -fsSL --retry 3 -o "$name.tar.gz" "$base/$name.tar.gz" &&
            curl -fsSL --retry 3 -o "$name.tar.gz.sha256" "$base/$name.tar.gz.sha256"
    ) || fail "could not download $name.tar.gz from $repo's releases"
    (cd "$dir" && sha256_check "$name.tar.gz.sha256") >&2 || fail "$name.tar.gz does not match its SHA-256"
    tar -xzf "$dir/$name.tar.gz" -C "$dir" || fail "could not unpack $name.tar.gz"
    [[ -x $dir/$name/teamctl ]] || fail "$name.tar.gz holds no $name/teamctl"
    echo "$dir/$name/teamctl"
}

step_run() {
    local teamctl=${TEAMCTL:-teamctl} cwd name timeout prompt_file out record result_json code
    local state result cost page
    local -a args=()
    cwd=${INPUT_CWD:-${GITHUB_WORKSPACE:-$PWD}}
    [[ -d $cwd ]] || die "cwd is not a folder"
    name=${INPUT_NAME:-action}
    page=$(page_name "$name")
    timeout=${INPUT_TIMEOUT:-30m}
    command -v jq >/dev/null || fail "jq is needed (teamctl-action.sh tools installs it)"

    out=$(mktemp -d "$tmp_root/teamctl-run.XXXXXX")
    if [[ -n ${INPUT_PROMPT:-} && -n ${INPUT_PROMPT_FILE:-} ]]; then
        die "give prompt or prompt-file, not both"
    elif [[ -n ${INPUT_PROMPT_FILE:-} ]]; then
        [[ -f $INPUT_PROMPT_FILE && -s $INPUT_PROMPT_FILE ]] || die "prompt-file is not a file with a prompt in it"
        prompt_file=$INPUT_PROMPT_FILE
    elif [[ -n ${INPUT_PROMPT:-} ]]; then
        prompt_file="$out/prompt.md"
        printf '%s' "$INPUT_PROMPT" >"$prompt_file"
    else
        die "give a prompt or a prompt-file"
    fi
    case ${INPUT_PULL_REQUEST:-false} in
        true | false) ;;
        *) die "pull-request must be true or false" ;;
    esac
    if [[ -z ${INPUT_MERGE_INTO:-} ]]; then
        [[ -z ${INPUT_CHECK:-} ]] || die "check needs merge-into"
        [[ ${INPUT_PULL_REQUEST:-false} == false ]] || die "pull-request needs merge-into"
    fi

    # Claude Code's config dir: the one named, else a fresh one of this job's own.
    export CLAUDE_CONFIG_DIR=${INPUT_CLAUDE_DIR:-${CLAUDE_CONFIG_DIR:-$tmp_root/teamctl-claude}}
    mkdir -p "$CLAUDE_CONFIG_DIR"
    if [[ -n ${INPUT_POLICY:-} ]]; then
        write_policy "$INPUT_POLICY"
        args+=(--permission-mode dontAsk)
        "$teamctl" prepare --cwd "$cwd" >&2
    else
        args+=(--dangerously-skip-permissions)
        "$teamctl" prepare --cwd "$cwd" --skip-permissions >&2
    fi
    if [[ -n ${INPUT_MAX_COST:-} ]]; then args+=(--max-cost "$INPUT_MAX_COST"); fi
    if [[ -n ${INPUT_BRIDGE:-} ]]; then bridge_args; fi
    if [[ -n ${INPUT_MERGE_INTO:-} ]]; then args+=(--merge-into "$INPUT_MERGE_INTO"); fi
    if [[ -n ${INPUT_CHECK:-} ]]; then args+=(--check "$INPUT_CHECK"); fi

    record="$out/teamctl-record-$name.tar.gz"
    result_json="$out/teamctl-result-$name.json"
    code=0
    "$teamctl" run --json --prompt-file "$prompt_file" --cwd "$cwd" --name "$name" \
        --timeout "$timeout" "${args[@]}" --export "$record" >"$result_json" || code=$?

    state='' result='' cost=''
    if [[ -s $result_json ]] && jq -e '.type == "result"' "$result_json" >/dev/null 2>&1; then
        state=$(jq -r '.state // ""' "$result_json")
        # Exactly: trailing newlines included (a command substitution would drop them).
        result=$(jq -j '.result // ""' "$result_json" && printf x)
        result=${result%x}
        # Unknown (no transcript was read) stays empty, never 0.
        cost=$(jq -r '.totals.cost_usd // "" | tostring' "$result_json")
        output result-json "$result_json"
    fi
    output state "$state"
    output result "$result"
    output cost_usd "$cost"
    output exit-code "$code"
    if [[ -f $record ]]; then
        output record "$record"
        if extract "$record" report.html "$out/$page"; then output report "$out/$page"; fi
        summary "$record"
    elif [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
        printf '## teamctl run: %s (exit %s), no record\n\n' "${state:-no result}" "$code" >>"$GITHUB_STEP_SUMMARY"
    fi
    merge_summary "$result_json"
    if [[ ${INPUT_PULL_REQUEST:-false} == true && ($code == 0 || $code == 10) ]] &&
        jq -e '[.merge.members[]? | select(.status == "merged")] | length > 0' "$result_json" >/dev/null 2>&1; then
        open_pr "$cwd" "$INPUT_MERGE_INTO" "$name" "$result_json" "$record" "$out/pull-request.md"
    fi
    return "$code"
}

# A chat beside the run (INPUT_BRIDGE, with INPUT_BRIDGE_CHAT, INPUT_BRIDGE_ALLOW and for a
# webhook INPUT_BRIDGE_URL and INPUT_BRIDGE_LISTEN) as `run --bridge` flags in args; the token
# or secret stays in the environment, where teamctl reads it.
bridge_args() {
    case $INPUT_BRIDGE in
    telegram | slack | webhook) ;;
    *) die "bridge must be telegram, slack or webhook" ;;
    esac
    [[ -n ${INPUT_BRIDGE_CHAT:-} && -n ${INPUT_BRIDGE_ALLOW:-} ]] ||
        die "bridge needs bridge-chat and bridge-allow"
    args+=(--bridge "$INPUT_BRIDGE" --chat "$INPUT_BRIDGE_CHAT" --allow "$INPUT_BRIDGE_ALLOW")
    if [[ -n ${INPUT_BRIDGE_URL:-} ]]; then args+=(--url "$INPUT_BRIDGE_URL"); fi
    if [[ -n ${INPUT_BRIDGE_LISTEN:-} ]]; then args+=(--listen "$INPUT_BRIDGE_LISTEN"); fi
}

# Each helper of the result $1's merge as a Markdown list item, `- alice: merged` (a name that is
# not one plain word is shown as "(a helper)"; the status is teamctl's own word).
merge_lines() {
    jq -r '.merge.members[] | "- " + (if (.name | test("^[A-Za-z0-9_-]{1,64}$")) then .name else "(a helper)" end)
        + ": " + (.status | gsub("_"; " "))' "$1"
}

# Appends what `run --merge-into` merged and set aside (the result $1) to the job summary.
merge_summary() {
    [[ -n ${GITHUB_STEP_SUMMARY:-} ]] || return 0
    jq -e '.merge.members? | length > 0' "$1" >/dev/null 2>&1 || return 0
    {
        printf '\n### Merged by `teamctl run --merge-into`\n\n'
        merge_lines "$1"
        printf '\n'
    } >>"$GITHUB_STEP_SUMMARY"
}

# Pushes branch $2 of the repository $1 to origin and opens a pull request of it with gh
# ($TEAMCTL_GH_BIN, else gh), titled after run $3; its body (written to $6) tells each helper's
# merge from the result $4 (a name that is not one plain word is not shown) and then the
# record $5's report.md (written by teamctl so that teammate text cannot break it) when it fits.
open_pr() {
    local cwd=$1 into=$2 name=$3 result_json=$4 record=$5 body=$6 gh=${TEAMCTL_GH_BIN:-gh} url merged
    merged=$(jq '[.merge.members[] | select(.status == "merged")] | length' "$result_json")
    {
        printf '## The work of teamctl run %s\n\nMerged by `teamctl run --merge-into`:\n\n' "$name"
        merge_lines "$result_json"
        printf '\n'
        if [[ -f $record ]] && extract "$record" report.md "$body.report" 2>/dev/null &&
            (($(wc -c <"$body.report") < 60000)); then
            cat "$body.report"
        else
            printf 'The team'"'"'s record is in the job'"'"'s artifact.\n'
        fi
    } >"$body"
    git -C "$cwd" push --quiet origin "refs/heads/$into:refs/heads/$into" >&2 ||
        fail "could not push the merged branch to origin (give the job contents: write)"
    url=$(cd "$cwd" && "$gh" pr create --head "$into" --title "teamctl run $name: $merged merged" --body-file "$body") ||
        fail "gh could not open the pull request (GH_TOKEN in the job's env, pull-requests: write)"
    output pull-request-url "${url##*$'\n'}"
}

# The policy's permission rules as the config dir's settings.json "permissions" (Claude Code
# applies them itself; in its dontAsk mode whatever they do not allow is denied, never asked).
write_policy() {
    local policy=$1 settings="$CLAUDE_CONFIG_DIR/settings.json" current='{}'
    [[ -f $policy ]] || die "policy is not a file"
    jq -se 'length == 1 and (.[0].permissions | type == "object")' "$policy" >/dev/null 2>&1 ||
        die "policy must be JSON with a \"permissions\" object (allow, ask, deny), as in a Claude Code settings.json"
    if [[ -f $settings ]]; then current=$(<"$settings"); fi
    jq -n --argjson current "$current" --slurpfile policy "$policy" \
        '$current + {permissions: $policy[0].permissions}' >"$settings.tmp.$$" &&
        mv "$settings.tmp.$$" "$settings"
}

# The file name of the record's page: the artifact's name (an upload that is not zipped is
# named after its file, so the page's artifact is <artifact-name>.html beside the record's),
# else teamctl-report-NAME.html. A name upload-artifact would refuse is refused before the run.
page_name() {
    local a=${INPUT_ARTIFACT_NAME:-}
    if [[ -z $a ]]; then
        echo "teamctl-report-$1.html"
        return
    fi
    [[ $a != . && $a != .. && $a != *[/\\\":\<\>\|\*\?]* && $a != *[[:cntrl:]]* ]] ||
        die 'artifact-name may not hold / \ " : < > | * ? or a control character'
    echo "$a.html"
}

# Copies member $2 of record $1 (a .tar.gz whose top folder is named after it) to $3; says so
# on stderr and fails when the record has none (a teamctl from before the page).
extract() {
    local record=$1 member=$2 to=$3 top
    top=${record##*/}
    top=${top%.tar.gz}
    if tar -xzOf "$record" "$top/$member" >"$to.tmp" 2>/dev/null && [[ -s $to.tmp ]]; then
        mv "$to.tmp" "$to"
    else
        rm -f "$to.tmp"
        echo "teamctl-action: the record holds no $member" >&2
        return 1
    fi
}

# Appends the record's report.md (written by teamctl to be appended as it is: teammate text
# cannot break it) to the job summary.
summary() {
    local record=$1 top
    [[ -n ${GITHUB_STEP_SUMMARY:-} ]] || return 0
    top=${record##*/}
    top=${top%.tar.gz}
    tar -xzOf "$record" "$top/report.md" >>"$GITHUB_STEP_SUMMARY" ||
        echo "teamctl-action: the record holds no report.md" >&2
}

# Links the uploaded page (PAGE_URL: report.html, not zipped, opens in the browser) and record
# (RECORD_URL) from the job summary; an empty URL (nothing uploaded) is left out. The URLs come
# from upload-artifact; one that is not a plain https URL is left out too, never written raw.
step_link() {
    local page=${PAGE_URL:-} record=${RECORD_URL:-} lines=()
    local url_re='^https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~/%+=&?-]*)?$'
    if [[ -n $page ]]; then
        if [[ $page =~ $url_re ]]; then
            lines+=("- [The team over time (report.html)]($page): cost, lanes, tasks and messages, in the browser")
        else
            echo "teamctl-action: the page's artifact URL is not a plain https URL; not linked" >&2
        fi
    fi
    if [[ -n $record ]]; then
        if [[ $record =~ $url_re ]]; then
            lines+=("- [The record]($record): summary.json, report.md, the transcripts and messages")
        else
            echo "teamctl-action: the record's artifact URL is not a plain https URL; not linked" >&2
        fi
    fi
    ((${#lines[@]})) && [[ -n ${GITHUB_STEP_SUMMARY:-} ]] || return 0
    printf '\n### The record\n\n' >>"$GITHUB_STEP_SUMMARY"
    printf '%s\n' "${lines[@]}" >>"$GITHUB_STEP_SUMMARY"
}

case ${1:-} in
    tools) step_tools ;;
    claude) step_claude ;;
    teamctl) step_teamctl ;;
    run) step_run ;;
    link) step_link ;;
    *) die "usage: teamctl-action.sh tools|claude|teamctl|run|link" ;;
esac
