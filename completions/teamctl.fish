# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_teamctl_global_optspecs
    string join \n json claude-dir= team= lock-timeout= h/help V/version
end

function __fish_teamctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_teamctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_teamctl_using_subcommand
    set -l cmd (__fish_teamctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c teamctl -n "__fish_teamctl_needs_command" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_needs_command" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_needs_command" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_needs_command" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_needs_command" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "create" -d 'Create a team that teamctl leads, brief its teammates and start them'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "run" -d 'Run a team led by Claude itself, headless, until its work is done'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "prepare" -d 'Settle Claude Code\'s start-up dialogs for sessions nobody watches'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "report" -d 'Put many teams\' records side by side: one report, with totals'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "delete" -d 'Shut down a team teamctl created and remove its files'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "send" -d 'Send a message to a teammate\'s inbox'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "inbox" -d 'Read a member\'s inbox (by default your own)'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "tasks" -d 'Show and change the team\'s shared task list'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "status" -d 'Show each member\'s state and what is waiting for them'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "top" -d 'Watch a team live: members, tasks, messages and requests, as its files change'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "watch" -d 'Follow the team\'s inboxes, tasks and members as a stream of events'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "log" -d 'Show what a member did: its prompts, messages, text and tool calls, from its transcript'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "ask" -d 'Ask a teammate something and wait for its answer'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "wait" -d 'Wait until the team\'s tasks are done, teammates are idle or gone, or a message arrives'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "pending" -d 'List the requests teammates are waiting on: tool permissions, plan approvals, sandbox hosts'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "approve" -d 'Approve a teammate\'s request (see `teamctl pending`), as its lead'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "deny" -d 'Deny a teammate\'s request (see `teamctl pending`), as its lead'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "bridge" -d 'Post a team\'s requests to a chat and answer them from there'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "serve" -d 'Show the team live in a browser, and answer it from there'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "shutdown" -d 'Ask teammates to shut down, as their lead'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "resume" -d 'Start again every teammate of a team that is not running, on its last session'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "redeliver" -d 'Move messages from an inbox nobody reads to the member they were meant for'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "doctor" -d 'Check the setup and a team\'s files, and say what to fix'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "export" -d 'Write a record of the team that outlives it: its files, its conversation, a report'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "diff" -d 'Show each teammate\'s work in its worktree against the commit it started from'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "merge" -d 'Merge the teammates\' branches onto one branch, with a check, without touching your checkout'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "pr" -d 'Open a pull request of the team\'s merged work with gh, its body made from the team\'s record'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "completions" -d 'Print the completion script for a shell'
complete -c teamctl -n "__fish_teamctl_needs_command" -f -a "man" -d 'Write the man pages (teamctl.1 and one teamctl-<command>.1 per command) into a directory'
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l file -d 'A team file (TOML, docs/team-file.md)' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l policy -d 'Answer the teammates\' start-up requests by this policy file' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l member -d 'A teammate and its brief (its first message); repeatable' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l member-file -d 'Teammates from a file, one `name: brief` per line' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l brief-file -d 'Read a teammate\'s brief from a file' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l description -d 'The team\'s description in config.json' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l cwd -d 'The teammates\' working directory [default: the current one]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l model -d 'Model for every teammate (--model; overrides the team file\'s)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l agent-type -d 'Agent type for every teammate' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l permission-mode -d 'Permission mode for the Claude Code sessions teamctl starts' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l launch -d 'Start the teammates in tmux, or only provision the files' -r -f -a "tmux\t''
none\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l timeout -d 'How long teammates get to take their briefs' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l claude-bin -d 'The claude binary' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l dry-run -d 'Print what would be created and write nothing'
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l worktree -d 'A git worktree for every teammate, on its own branch'
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l sandbox -d 'Confine every teammate to a sandbox of its own (bubblewrap on Linux, sandbox-exec on macOS; docs/sandbox.md): the machine read-only but its work, its team and its transcripts, the secrets in the home directory hidden, no Unix socket'
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l dangerously-skip-permissions -d 'Start them with --dangerously-skip-permissions'
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l otel-content -d 'Also export texts (messages, summaries, task subjects, requests)'
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand create" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l prompt-file -d 'Read the prompt from a file (`-`: standard input)' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l cwd -d 'The lead\'s working directory [default: the current one]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l model -d 'Model for the lead (--model); its teammates get the same one' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l permission-mode -d 'Permission mode for the Claude Code sessions teamctl starts' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l teammate-mode -d 'Where teammates run' -r -f -a "tmux\t''
in-process\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l timeout -d 'Give up after this long (exit code 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l settle -d 'How long the done rule must hold' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l claude-bin -d 'The claude binary' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l name -d 'A label: one run per label at a time' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l export -d 'Write a record of the team before the lead is told to stop' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l max-teammates -d 'At most N teammates: one past that is stopped' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l resume -d 'Carry on TEAM whose lead was killed' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l bridge -d 'Answer from a chat' -r -f -a "telegram\t'Telegram\'s Bot API (getUpdates long-poll, sendMessage)'
slack\t'Slack\'s Web API (chat.postMessage; replies in the message\'s thread, polled)'
webhook\t'A signed webhook: posts to --url, answers taken on --listen'"
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l chat -l channel -d 'The chat to post in and listen to' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l allow -d 'The chat user ids that may answer' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l api -d 'The service\'s API [default: the service\'s own]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l url -d 'Webhook: where each post is POSTed' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l listen -d 'Webhook: the address answers are taken on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l ttl -d 'How long a code works [default: 30m]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l max-cost -d 'Stop with exit 6 once the team\'s total cost crosses USD' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l max-tokens -d 'Stop with exit 6 once the team\'s total tokens cross N' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l max-cost-per-member -d 'Stop with exit 6 once one member\'s own cost crosses USD' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l warn-at -d 'Warn once at PERCENT of a limit above' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l on-rate-limit -d 'When a member\'s API calls are refused' -r -f -a "wait\t'Wait it out: Claude Code retries the call itself'
exit\t'End with exit 7'"
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l on-stall -d 'When a member stalls or its request gets no answer' -r -f -a "wait\t'Nothing: wait for the timeout'
nudge\t'Send the member a short message naming its task and its silence'
restart\t'Start the member again on its last session (pane teammates only)'
exit\t'End with exit 8'"
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l on-dead -d 'When a member\'s pane or process is gone' -r -f -a "wait\t'Nothing: wait for the timeout'
restart\t'Start the member again on its last session (pane teammates only)'
exit\t'End with exit 9'"
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l max-restarts -d 'Restarts per member at most' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l stall-after -d 'A member silent this long in a turn is stalled' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l no-response-after -d 'A request unanswered this long is no_response' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l merge-into -d 'When done, merge the worktree teammates\' branches onto BRANCH' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l check -d 'With --merge-into: a check run after merging (as `merge --check`)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l check-timeout -d 'With --check: how long one run may take' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l strategy -d 'How each member\'s work is merged' -r -f -a "merge\t''
squash\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l dangerously-skip-permissions -d 'Start them with --dangerously-skip-permissions'
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l keep -d 'Leave the lead and its team running at the end'
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l sandbox -d 'Run the lead and its teammates in one sandbox (docs/sandbox.md)'
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l otel-content -d 'Also export texts (messages, summaries, task subjects, requests)'
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand run" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -l cwd -d 'Trust this folder, as Claude Code\'s trust dialog would (repeatable)' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -l skip-permissions -l dangerously-skip-permissions -d 'Also accept the bypass prompt'
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -l dry-run -d 'Say what would change; write nothing'
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand prepare" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand report" -l out -d 'Where the fleet\'s HTML page goes (with --html)' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand report" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand report" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand report" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand report" -l html -d 'Also write the fleet\'s HTML page to --out'
complete -c teamctl -n "__fish_teamctl_using_subcommand report" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand report" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -l timeout -d 'How long teammates get to approve the shutdown' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -l reason -d 'The reason given in the shutdown request' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -l export -d 'Write a record of the team first' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -l force -d 'Also remove a team teamctl does not lead'
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand delete" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l from -d 'Sender name in the message (your identity)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l summary -d 'Short preview shown by Claude Code' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l color -d 'Sender colour' -r -f -a "red\t''
blue\t''
green\t''
yellow\t''
purple\t''
orange\t''
pink\t''
cyan\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l idempotency-key -d 'Make the message id deterministic: a retry writes nothing' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l wait -d 'Wait until the recipient has taken the message (exit 3 if not)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l all -d 'Send to every member in config.json except the sender'
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l force -d 'Write to a non-member, as team-lead or as system anyway'
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l join -d 'Join the team first as --from, so that teammates can reply to you'
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand send" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l from -d 'Only entries from this sender' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l since -d 'Only entries at or after TIME: RFC 3339, or an age like 10m, 2h, 1d' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l limit -d 'Only the newest N matching entries (with --all: of all inboxes together)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l type -d 'Only plain messages, only protocol frames, or one frame type' -r -f -a "message\t''
protocol\t''
idle_notification\t''
shutdown_request\t''
shutdown_approved\t''
shutdown_rejected\t''
shutdown_response\t''
plan_approval_request\t''
plan_approval_response\t''
permission_request\t''
permission_response\t''
sandbox_permission_request\t''
sandbox_permission_response\t''
task_assignment\t''
mode_set_request\t''
team_permission_update\t''
teammate_terminated\t''
task_completed\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l all -d 'Read every inbox of the team'
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l unread -d 'Only entries not marked read'
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l mark-read -d 'Set "read": true on the entries shown (old Claude Code\'s way of consuming)'
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l consume -d 'Remove the entries shown from the inbox (new Claude Code\'s way of consuming)'
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l sent -d 'List what you sent (teamctl\'s sent log) with each message\'s delivery state now'
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand inbox" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l status -d 'Only tasks with this status' -r -f -a "pending\t''
in_progress\t''
completed\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l owner -d 'Only tasks owned by NAME' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l mine -d 'Only tasks owned by you (your identity)'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l ready -d 'Only tasks ready to be picked up'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l blocked -d 'Only blocked tasks'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l all -d 'Include Claude Code\'s internal tasks (metadata._internal)'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -f -a "list" -d 'List the team\'s tasks, with what is ready and what is blocked'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -f -a "show" -d 'Show one task with everything, including the tasks it blocks'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -f -a "add" -d 'Add a task to the team\'s list'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -f -a "update" -d 'Change a task: status, owner, text, dependencies'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -f -a "claim" -d 'Claim a task: become its owner and set it in_progress'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -f -a "done" -d 'Mark a task completed, and say which tasks it unblocked'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and not __fish_seen_subcommand_from list show add update claim done rm" -f -a "rm" -d 'Delete a task as Claude Code does'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l status -d 'Only tasks with this status' -r -f -a "pending\t''
in_progress\t''
completed\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l owner -d 'Only tasks owned by NAME' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l mine -d 'Only tasks owned by you (your identity)'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l ready -d 'Only tasks ready to be picked up'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l blocked -d 'Only blocked tasks'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l all -d 'Include Claude Code\'s internal tasks (metadata._internal)'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from show" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from show" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from show" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from show" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l description -d 'Details [default: the subject, as Claude Code does]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l active-form -d 'What to show while it is in progress ("Fixing the login test")' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l blocked-by -d 'An existing task that must be completed first (repeatable)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l owner -d 'Assign it to a member' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l force -d 'Allow an owner that is not a member, or assigning as team-lead'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l status -d 'New status' -r -f -a "pending\t''
in_progress\t''
completed\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l owner -d 'Assign to a member' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l subject -d 'New subject' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l description -d 'New description' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l active-form -d 'New activeForm' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l add-blocked-by -d 'Record that task ID blocks this one (repeatable)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l add-blocks -d 'Record that this task blocks task ID (repeatable)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l no-owner -d 'Unassign (removes the owner)'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l force -d 'Allow an owner that is not a member, or assigning as team-lead'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from update" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from claim" -l as -d 'Claim as NAME [default: your identity]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from claim" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from claim" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from claim" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from claim" -l force -d 'Claim as team-lead in a team teamctl does not lead, or as system'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from claim" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from claim" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from claim" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from done" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from done" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from done" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from done" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from done" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from done" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from rm" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from rm" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from rm" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from rm" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand tasks; and __fish_seen_subcommand_from rm" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l idle-after -d 'A member with no event for this long is idle' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l stall-after -d 'A member silent this long in a turn is stalled' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l no-response-after -d 'A request unanswered this long is no_response' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l after -d 'A request waiting this long needs a person' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l all-teams -d 'One row per team instead of one team\'s members'
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand status" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l width -d 'With --once: the frame\'s width [default: the terminal\'s, else 80]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l height -d 'With --once: the frame\'s height' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l idle-after -d 'A member with no event for this long is idle' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l stall-after -d 'A member silent this long in a turn is stalled' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l poll -d 'Poll every MS milliseconds instead of using file notifications' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l once -d 'Print one frame as plain text and exit (no terminal needed)'
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand top" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l after -d 'needs_human: a request waiting this long' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l count -d 'Stop after N matching events (exit 0)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l timeout -d 'Stop after this long; exit 3 if --count was not reached' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l from -d 'Only message events from this sender' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l event -d 'Only these kinds of events (repeatable)' -r -f -a "message\t''
consumed\t''
read\t''
task_created\t''
task_updated\t''
task_deleted\t''
member_joined\t''
member_left\t''
member_updated\t''
waiting\t''
needs_human\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l type -d 'Only message events carrying this frame type (or `message`/`protocol`); repeatable: any of them' -r -f -a "message\t''
protocol\t''
idle_notification\t''
shutdown_request\t''
shutdown_approved\t''
shutdown_rejected\t''
shutdown_response\t''
plan_approval_request\t''
plan_approval_response\t''
permission_request\t''
permission_response\t''
sandbox_permission_request\t''
sandbox_permission_response\t''
task_assignment\t''
mode_set_request\t''
team_permission_update\t''
teammate_terminated\t''
task_completed\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l task-status -d 'Only task events that bring a task to this status' -r -f -a "pending\t''
in_progress\t''
completed\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l exec -d 'Run CMD (with `sh -c`) once per event, the event on its stdin' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l exec-timeout -d 'How long one run of --exec may take' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l poll -d 'Poll every MS milliseconds instead of using file notifications' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l existing -d 'First print what is there now, as events'
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l otel-content -d 'Also export texts (messages, summaries, task subjects, requests)'
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand watch" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -l since -d 'Only events since then: an age (10m, 2h) or a time (RFC 3339)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -s n -l lines -d 'Only the last N events (of the history, with --follow)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -l timeout -d 'With --follow: stop after this long (exit 0)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -l poll -d 'With --follow: poll every MS milliseconds' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -s f -l follow -d 'Keep printing events as they are written'
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand log" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l from -d 'Ask as NAME: the answer lands in NAME\'s inbox' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l summary -d 'Short preview shown by Claude Code' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l idempotency-key -d 'Make the question\'s id deterministic: asking again sends nothing' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l timeout -d 'Give up after this long (exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l poll -d 'Poll every MS milliseconds instead of using file notifications' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l policy -d 'While waiting, answer requests by the rules in FILE' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l max-cost -d 'Stop with exit 6 once the team\'s total cost crosses USD' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l max-tokens -d 'Stop with exit 6 once the team\'s total tokens cross N' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l max-cost-per-member -d 'Stop with exit 6 once one member\'s own cost crosses USD' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l warn-at -d 'Warn once at PERCENT of a limit above' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l all -d 'Ask every teammate and wait for each'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l join -d 'Join the team first as --from, so teammates can answer you'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l consume -d 'Remove the answer from your inbox once it is printed'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l raw -d 'Print the answer exactly as written even to a terminal'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l from-transcript -d 'An idle teammate\'s last plain text answers (from its transcript)'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l otel-content -d 'Also export texts (messages, summaries, task subjects, requests)'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand ask" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l task -d 'This task is completed (repeatable)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l idle -d 'These members are idle [default: every teammate]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l message-from -d 'A message from NAME lands in your inbox (repeatable)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l type -d 'With --message-from: which entries count (message, protocol or a frame type)' -r -f -a "message\t''
protocol\t''
idle_notification\t''
shutdown_request\t''
shutdown_approved\t''
shutdown_rejected\t''
shutdown_response\t''
plan_approval_request\t''
plan_approval_response\t''
permission_request\t''
permission_response\t''
sandbox_permission_request\t''
sandbox_permission_response\t''
task_assignment\t''
mode_set_request\t''
team_permission_update\t''
teammate_terminated\t''
task_completed\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l after -d 'With --message-from: count messages after this entry or time' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l terminated -d 'These members are gone [default: every teammate]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l delivered -d 'This message has been taken by its recipient (repeatable)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l as -d 'Your identity: whose inbox --message-from watches' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l timeout -d 'Give up after this long (exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l poll -d 'Poll every MS milliseconds instead of using file notifications' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l policy -d 'While waiting, answer requests by the rules in FILE' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l max-cost -d 'Stop with exit 6 once the team\'s total cost crosses USD' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l max-tokens -d 'Stop with exit 6 once the team\'s total tokens cross N' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l max-cost-per-member -d 'Stop with exit 6 once one member\'s own cost crosses USD' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l warn-at -d 'Warn once at PERCENT of a limit above' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l on-rate-limit -d 'When a member\'s API calls are refused' -r -f -a "wait\t'Wait it out: Claude Code retries the call itself'
exit\t'End with exit 7'"
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l on-stall -d 'When a member stalls or its request gets no answer' -r -f -a "wait\t'Nothing: wait for the timeout'
nudge\t'Send the member a short message naming its task and its silence'
restart\t'Start the member again on its last session (pane teammates only)'
exit\t'End with exit 8'"
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l on-dead -d 'When a member\'s pane or process is gone' -r -f -a "wait\t'Nothing: wait for the timeout'
restart\t'Start the member again on its last session (pane teammates only)'
exit\t'End with exit 9'"
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l max-restarts -d 'Restarts per member at most' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l stall-after -d 'A member silent this long in a turn is stalled' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l no-response-after -d 'A request unanswered this long is no_response' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l merge-into -d 'When done, merge the worktree teammates\' branches onto BRANCH' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l check -d 'With --merge-into: a check run after merging (as `merge --check`)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l check-timeout -d 'With --check: how long one run may take' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l strategy -d 'How each member\'s work is merged' -r -f -a "merge\t''
squash\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l tasks-done -d 'Every task is completed (and there is at least one)'
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l from-transcript -d 'With --message-from: going idle without writing counts too'
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l any -d 'Return when the first condition holds instead of all'
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l otel-content -d 'Also export texts (messages, summaries, task subjects, requests)'
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand wait" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand pending" -l as -d 'Whose inbox holds the requests' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand pending" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand pending" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand pending" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand pending" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand pending" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand pending" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l feedback -d 'Feedback for the teammate (plan approvals)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l mode -d 'The teammate\'s permission mode after an approved plan' -r -f -a "default\t''
acceptEdits\t''
bypassPermissions\t''
plan\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l policy -d 'Answer every pending request by the rules in FILE instead of one by id' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l timeout -d 'With --follow: stop after this long (exit 0)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l poll -d 'With --follow: poll every MS milliseconds' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l as -d 'Whose inbox holds the request' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l follow -d 'With --policy: keep answering requests as they arrive'
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l dry-run -d 'With --policy: decide and report, write nothing'
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l force -d 'Answer as team-lead even in a team teamctl does not lead'
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand approve" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -l reason -d 'Why, for the teammate' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -l as -d 'Whose inbox holds the request' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -l force -d 'Answer as team-lead even in a team teamctl does not lead'
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand deny" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l chat -l channel -d 'The chat to post in and listen to' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l allow -d 'The chat user ids that may answer' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l api -d 'The service\'s API [default: the service\'s own]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l url -d 'Webhook: where each post is POSTed' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l listen -d 'Webhook: the address answers are taken on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l ttl -d 'How long a code works [default: 30m]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l policy -d 'Answer by the rules in FILE first; post only what they leave' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l timeout -d 'Stop after this long (exit 0)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l max-cost -d 'Stop with exit 6 once the team\'s total cost crosses USD' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l max-tokens -d 'Stop with exit 6 once the team\'s total tokens cross N' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l max-cost-per-member -d 'Stop with exit 6 once one member\'s own cost crosses USD' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l warn-at -d 'Warn once at PERCENT of a limit above' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l all-teams -d 'Serve every team teamctl leads, as teams come and go'
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l force -d 'Answer in teams teamctl does not lead too'
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand bridge" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l listen -d 'Listen on ADDR (IP:PORT) [default: 127.0.0.1 and a free port]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l public-url -d 'The address the page is reached at through a tunnel or proxy (its Host and Origin are accepted too)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l poll -d 'Poll every MS milliseconds instead of using file notifications' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l read-only -d 'Show no control and refuse every write'
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l all-teams -d 'Serve every team teamctl leads, with a fleet view'
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l force -d 'Show teams teamctl does not lead too (read-only)'
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l allow-remote -d 'Allow a --listen address other than loopback (plain HTTP)'
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand serve" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -l reason -d 'Why, for the teammates' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -l wait -d 'Wait for their answers' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -l force -d 'Send to a non-member, or as team-lead in a team not led by teamctl'
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand shutdown" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand resume" -l claude-bin -d 'The claude binary' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand resume" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand resume" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand resume" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand resume" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand resume" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand resume" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand redeliver" -l to -d 'The member to move the messages to' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand redeliver" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand redeliver" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand redeliver" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand redeliver" -l dry-run -d 'Say what would move, and write nothing'
complete -c teamctl -n "__fish_teamctl_using_subcommand redeliver" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand redeliver" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand redeliver" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand doctor" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand doctor" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand doctor" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand doctor" -l fix -d 'First move misaddressed messages where they were meant to go'
complete -c teamctl -n "__fish_teamctl_using_subcommand doctor" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand export" -l out -d 'Where to write the record: a new folder, or a .tar.gz' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand export" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand export" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand export" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand export" -l report-only -d 'Print report.md on stdout and write nothing (with --json: summary.json)'
complete -c teamctl -n "__fish_teamctl_using_subcommand export" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand export" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand diff" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand diff" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand diff" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand diff" -l stat -d 'Add git\'s diffstat'
complete -c teamctl -n "__fish_teamctl_using_subcommand diff" -l patch -d 'Add the patch'
complete -c teamctl -n "__fish_teamctl_using_subcommand diff" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand diff" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l into -d 'The branch to merge into (made from the team\'s base when missing)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l check -d 'A command run after merging; members that fail it are set aside' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l check-timeout -d 'How long one run of the check may take' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l strategy -d 'How each member\'s work is merged' -r -f -a "merge\t''
squash\t''"
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l dry-run -d 'Merge in the scratch worktree only, and move nothing'
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand merge" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l into -d 'The branch with the team\'s merged work (the pull request\'s head)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l base -d 'The branch the pull request goes into' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l title -d 'Its title [default: The work of team <team>]' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l draft -d 'Open it as a draft'
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l dry-run -d 'Print the body and open nothing'
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand pr" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand completions" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand completions" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand completions" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand completions" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand completions" -s V -l version -d 'Print version'
complete -c teamctl -n "__fish_teamctl_using_subcommand man" -l out -d 'The directory to write the pages into (a man1 folder on your MANPATH)' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand man" -l claude-dir -d 'Claude Code\'s dir [default: ~/.claude]' -r -F
complete -c teamctl -n "__fish_teamctl_using_subcommand man" -l team -d 'Team to work on' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand man" -l lock-timeout -d 'Lock wait (then exit 3)' -r
complete -c teamctl -n "__fish_teamctl_using_subcommand man" -l json -d 'Print JSON (JSON Lines for streams) instead of human output'
complete -c teamctl -n "__fish_teamctl_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c teamctl -n "__fish_teamctl_using_subcommand man" -s V -l version -d 'Print version'
