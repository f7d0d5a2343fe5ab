#!/usr/bin/env node
'use strict';
// End-to-end test of `teamctl approve --follow --policy` against the REAL Claude Code 2.1.332,
// offline: `teamctl create` starts one teammate in the default permission mode (so it asks its
// lead, teamctl, before running Bash), in a private tmux server, against mock-api.js
// (harness.js: temp root, mock, cron-like environment, diagnostics, cleanup).
//
//   node tests/e2e/policy-e2e.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>]
//                                [--deadline <seconds>]
//
// One follower, `teamctl --json approve --follow --policy policy.json`, runs through all of it:
//   1. allow:     `Run: A-…` makes the worker ask for `echo A-… > ran-A-….txt`; the policy's
//                 `Bash(echo:*)` approves it and the file appears;
//   2. deny:      `Exec: rm sentinel-….txt` asks for an rm; `Bash(rm:*)` denies it, the sentinel
//                 file stays, and the model receives the reason "denied by policy rule
//                 Bash(rm:*)" in its tool result (seen in the mock's log);
//   wait:         with the follower stopped (SIGSTOP), `wait --idle worker --policy` answers the
//                 worker's next request (an allowed echo, which runs) while it waits; resumed,
//                 the follower does not answer it again (the answer lock and the sent log);
//   plan:         a second teammate, `planner`, started with --plan-mode-required, writes its
//                 plan and calls ExitPlanMode, which asks the lead (plan_approval_request);
//                 "plans": "approve" answers and the model receives "[Plan Approved] …";
//   3. unmatched: `Exec: touch left-….txt` matches no rule; under "unmatched": "leave" it stays
//                 in `teamctl pending` (checked after the follower has looked at it and three
//                 of the client's 1 s polls have passed), then `teamctl deny` answers it by hand;
//                 meanwhile `watch --event needs_human` tells it exactly once, and its clearing
//                 once;
//   4. `teamctl delete demo`: the follower sees the team gone and ends with exit 0.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { lockedJsonUpdate } = require('./lockfile');

const TEAM = 'demo';
const API_KEY = 'sk-ant-mock-000000000000000000000000';
// The diagnostics show every pane of the team's tmux server: the planner's window too.
const h = require('./harness')({ name: 'policy-e2e', team: TEAM, argv: process.argv.slice(2), deadline: 150, session: null });

const { st, now, trace, fail, check, waitFor, teamctl, lastJson, tmux, hex, mockSaw, mockLines } = h;
let follow = null;
const running = [];
process.on('exit', () => {
  // SIGCONT too: the follower may be stopped (SIGSTOP below), and acts on SIGTERM only once it
  // goes on.
  for (const r of running) if (r.proc.exitCode === null) { r.proc.kill('SIGTERM'); r.proc.kill('SIGCONT'); }
});

// A teamctl command that runs alongside (`--json`), its JSON Lines collected as they come.
function collect(label, args) {
  const argv = ['--claude-dir', st.cfg, '--team', TEAM, '--json', ...args];
  trace(`${label}: teamctl ${argv.join(' ')}`);
  const r = { events: [], stderr: '' };
  r.proc = spawn(h.args.teamctl, argv, { env: st.env, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(r);
  let buf = '';
  r.proc.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      trace(`${label}: ${line}`);
      r.events.push(JSON.parse(line));
    }
  });
  r.proc.stderr.on('data', (d) => { r.stderr += d; trace(`${label} stderr: ${String(d).trim()}`); });
  r.exit = new Promise((resolve) => r.proc.on('close', (code, sig) => resolve({ code, sig })));
  return r;
}

// The follower: `approve --follow --policy`, its decisions collected as they come.
function startFollower(policy) {
  follow = collect('follower', ['approve', '--follow', '--policy', policy,
    '--timeout', `${h.args.deadline}s`]);
}

// Sends `text` to `to` and waits for the follower's decision on the request it causes;
// resends when 2.1.332 fails to deliver the request, up to h.REQUEST_SENDS sends in all (as
// create-e2e.js does).
const RESENDS = h.REQUEST_SENDS;

// How many times 2.1.332 told the model its request could not be delivered to the lead.
function undelivered() {
  try {
    return fs.readFileSync(st.mockLog, 'utf8').split('could not be delivered to the team lead').length - 1;
  } catch (_) {
    return 0;
  }
}

async function askAndDecide(what, text, match, to = 'worker', kind = 'permission') {
  let asks = 1;
  const base = undelivered();
  const t = now();
  const s = await teamctl(['send', to, text]);
  if (s.code !== 0) fail(`send exited ${s.code}: ${s.stderr}`);
  const ev = await waitFor(`${what}: the follower's decision`, 45000, async () => {
    const e = follow.events.find((x) => x.event === 'decision' && x.kind === kind && !x.deferred && match(x));
    if (!e && asks < RESENDS && undelivered() >= base + asks) {
      asks += 1;
      await teamctl(['send', to, text]);
    }
    return e;
  });
  return { ev, ms: now() - t };
}

// A second teammate, `planner`, that must have its plans approved: `teamctl create` has no
// --plan-mode-required, so it is added the way a lead adds one (member entry under the config
// lock, an empty inbox, the lead's command line with --plan-mode-required --permission-mode plan)
// in a new window of the team's tmux session.
function startPlanner() {
  const cfgPath = path.join(st.cfg, 'teams', TEAM, 'config.json');
  let leadSession = null;
  lockedJsonUpdate(cfgPath, (cfg) => {
    leadSession = cfg.leadSessionId;
    cfg.members.push({
      agentId: `planner@${TEAM}`, name: 'planner', agentType: 'general-purpose', color: 'green',
      planModeRequired: true, joinedAt: now(), tmuxPaneId: '', cwd: st.work, subscriptions: [],
      backendType: 'tmux',
    });
  });
  fs.writeFileSync(path.join(st.cfg, 'teams', TEAM, 'inboxes', 'planner.json'), '[]');
  const q = (x) => `'${String(x).replace(/'/g, `'\\''`)}'`;
  const envs = ['CLAUDECODE=1', 'CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1', `CLAUDE_CONFIG_DIR=${st.cfg}`,
    `HOME=${st.home}`, `ANTHROPIC_BASE_URL=${st.env.ANTHROPIC_BASE_URL}`, `ANTHROPIC_API_KEY=${API_KEY}`,
    'ENABLE_TOOL_SEARCH=false', 'DISABLE_TELEMETRY=1', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1']
    .concat(st.env.IS_SANDBOX ? ['IS_SANDBOX=1'] : []);
  const cmd = `cd ${q(st.work)} && exec env ${envs.map(q).join(' ')} ${q(h.args.claudeBin)}` +
    ` --agent-id planner@${TEAM} --agent-name planner --team-name ${TEAM} --agent-color green` +
    ` --parent-session-id ${leadSession} --plan-mode-required --permission-mode plan`;
  const r = tmux('new-window', '-d', '-t', `=teamctl-${TEAM}:`, '-n', 'planner', cmd);
  if (r.status !== 0) fail(`tmux new-window failed: ${r.stderr}`);
  trace('planner started (--plan-mode-required --permission-mode plan)');
}

h.run(async () => {
  const policy = path.join(st.root, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({
    permissions: { allow: ['Bash(echo:*)'], deny: ['Bash(rm:*)'] },
    plans: 'approve',
    sandbox_hosts: { allow: [], deny: [] },
    unmatched: 'leave',
  }, null, 2));

  const c = await teamctl(['--json', 'create', TEAM, '--member', 'worker:You are worker. Wait for messages.',
    '--claude-bin', h.args.claudeBin, '--permission-mode', 'default', '--timeout', '30s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const created = lastJson(c.stdout);
  check(created.state === 'ready', `create state ${created.state}: ${created.reason}`);
  check(created.claude.version === `${h.CLAUDE_VERSION} (Claude Code)`, `claude version ${created.claude.version}`);

  // The worker's first turn (its brief) rewrites config.json in place (isActive); a teammate
  // that starts meanwhile can read it torn, and then never registers the Stop hook that sends
  // its idle notifications (docs/research/claude-code-behaviour.md §8): the follower would hold
  // the planner's plan approval back for good. So the planner starts once that turn is over.
  await waitFor("the worker's first idle_notification", 30000, () => (h.inbox('team-lead') || [])
    .some((e) => e.from === 'worker' && /"type":"idle_notification"/.test(e.text)));
  trace("the worker's first turn is over");
  startPlanner();
  startFollower(policy);

  // --- 1. allow: Bash(echo:*)
  const tokA = `A-${hex(4)}`;
  const ran = path.join(st.work, `ran-${tokA}.txt`);
  const a = await askAndDecide('allow', `Run: ${tokA}`, (e) => e.input && e.input.command.includes(tokA));
  check(a.ev.answer === 'approve' && a.ev.rule === 'Bash(echo:*)' && a.ev.written === true,
    `allow decision ${JSON.stringify(a.ev)}`);
  await waitFor(`${ran} (the approved command ran)`, 20000,
    () => fs.existsSync(ran) && fs.readFileSync(ran, 'utf8').trim() === tokA);

  // --- 2. deny: Bash(rm:*); the sentinel stays, the model gets the reason
  const tokD = `D-${hex(4)}`;
  const sentinel = path.join(st.work, `sentinel-${tokD}.txt`);
  fs.writeFileSync(sentinel, 'keep');
  const d = await askAndDecide('deny', `Exec: rm sentinel-${tokD}.txt`, (e) => e.input && e.input.command.includes(tokD));
  check(d.ev.answer === 'deny' && d.ev.rule === 'Bash(rm:*)' && d.ev.written === true,
    `deny decision ${JSON.stringify(d.ev)}`);
  check(d.ev.reason === 'denied by policy rule Bash(rm:*)', `deny reason ${d.ev.reason}`);
  const seen = await waitFor('the denial in the tool result the model receives', 20000, () => {
    for (const l of mockLines()) {
      for (const r of l.toolResults || []) {
        if (r.text && r.text.includes('denied by policy rule Bash(rm:*)')) return r;
      }
    }
    return null;
  });
  check(fs.existsSync(sentinel), 'the denied rm ran: the sentinel is gone');

  // --- wait --policy, and once across processes: the follower is stopped (SIGSTOP), `wait
  // --idle worker --policy` answers the worker's request while it waits; resumed, the follower
  // must not answer it again.
  follow.proc.kill('SIGSTOP');
  const tokW = `W-${hex(4)}`;
  const ranW = path.join(st.work, `ran-${tokW}.txt`);
  // When 2.1.332 fails to deliver its request (see RESENDS), its turn ends without the command
  // and `wait --idle` is rightly met with nothing to answer: send again and wait again.
  let w = null;
  let wEv = null;
  for (let attempt = 1; attempt <= RESENDS && !wEv; attempt++) {
    const baseW = undelivered();
    const sW = await teamctl(['--team', TEAM, 'send', 'worker', `Run: ${tokW}`]);
    if (sW.code !== 0) fail(`send exited ${sW.code}: ${sW.stderr}`);
    w = await teamctl(['--json', '--team', TEAM, 'wait', '--idle', 'worker', '--policy', policy,
      '--timeout', '40s']);
    check(w.code === 0, `wait --policy exited ${w.code}: ${w.stderr}\n${w.stdout}`);
    const waitEvents = w.stderr.split('\n').filter((x) => x.startsWith('{')).map((x) => JSON.parse(x));
    wEv = waitEvents.find((e) => e.input && e.input.command.includes(tokW));
    if (!wEv) {
      check(undelivered() > baseW || attempt === 1, `wait's decisions: ${w.stderr}`);
      trace(`wait --policy met with no request of ${tokW} (attempt ${attempt}); sending again`);
    }
  }
  check(wEv && wEv.answer === 'approve' && wEv.written === true, `wait's decisions: ${w.stderr}`);
  check(lastJson(w.stdout).met === true, `wait: ${w.stdout}`);
  await waitFor(`${ranW} (the command wait approved ran)`, 20000,
    () => fs.existsSync(ranW) && fs.readFileSync(ranW, 'utf8').trim() === tokW);
  follow.proc.kill('SIGCONT');
  // Let the resumed follower look at everything (its queued notifications), then check.
  const tCont = now();
  await waitFor('the resumed follower to catch up', 10000, () => now() - tCont > 2000);
  check(!follow.events.some((e) => e.request_id === wEv.request_id),
    `the follower answered ${wEv.request_id} again: ${JSON.stringify(follow.events)}`);
  const answersW = (h.inbox('worker') || []).filter((e) => e.text.includes(wEv.request_id)).length;
  trace(`answers to ${wEv.request_id} still in worker.json: ${answersW}`);

  // --- plan: the planner's ExitPlanMode (after the mock writes its plan file) asks the lead;
  // "plans": "approve" answers once the planner's turn has ended, and the model is told so.
  const tokP = `P-${hex(4)}`;
  const pl = await askAndDecide('plan', `Plan: ${tokP}`, (e) => e.from === 'planner', 'planner', 'plan_approval');
  check(pl.ev.answer === 'approve' && pl.ev.list === 'plans' && pl.ev.written === true,
    `plan decision ${JSON.stringify(pl.ev)}`);
  check(pl.ev.response.approved === true && pl.ev.response.planDigest.length === 64,
    `plan response ${JSON.stringify(pl.ev.response)}`);
  await waitFor('the plan approval reaching the planner\'s model', 20000, () => mockSaw('[Plan Approved]', 1));
  const deferred = follow.events.find((x) => x.request_id === pl.ev.request_id && x.deferred);

  // --- 3. unmatched: left pending for a person
  const tokL = `L-${hex(4)}`;
  const l = await askAndDecide('unmatched', `Exec: touch left-${tokL}.txt`, (e) => e.input && e.input.command.includes(tokL));
  check(l.ev.answer === 'leave' && l.ev.list === 'unmatched' && l.ev.written === false,
    `unmatched decision ${JSON.stringify(l.ev)}`);
  // A person is needed: `watch --event needs_human` tells it once while the request waits,
  // and once more when it is answered.
  const nh = collect('needs_human', ['watch', '--event', 'needs_human', '--after', '0s',
    '--timeout', `${h.args.deadline}s`]);
  const needs = (cleared) => nh.events.filter((e) => e.event === 'needs_human' && e.need
    && e.need.key === l.ev.request_id && e.need.cleared === cleared);
  await waitFor('the needs_human event of the left request', 15000, () => needs(false).length > 0);
  check(needs(false)[0].need.cause === 'request' && needs(false)[0].need.member === 'worker',
    `needs_human event ${JSON.stringify(needs(false)[0])}`);
  const tLeft = now();
  await waitFor('three client polls after the unmatched request', 10000, () => now() - tLeft > 3000);
  const p = await teamctl(['--json', '--team', TEAM, 'pending']);
  const still = lastJson(p.stdout).requests.find((r) => r.request_id === l.ev.request_id);
  check(still, `the unmatched request is not pending any more: ${p.stdout}`);
  check(!fs.existsSync(path.join(st.work, `left-${tokL}.txt`)), 'the unmatched command ran');
  check(!(h.inbox('worker') || []).some((e) => e.text.includes(l.ev.request_id)),
    'an answer to the unmatched request was written');
  check(follow.events.filter((e) => e.request_id === l.ev.request_id).length === 1,
    'the left request was reported more than once');
  // A person answers it, so the worker is not blocked for the shutdown.
  const dn = await teamctl(['--team', TEAM, 'deny', l.ev.request_id, '--reason', 'not now']);
  check(dn.code === 0, `deny exited ${dn.code}: ${dn.stderr}`);
  await waitFor('the manual denial in a tool result', 20000, () => mockSaw('not now', 1));
  await waitFor('the needs_human event clearing', 15000, () => needs(true).length > 0);
  nh.proc.kill('SIGTERM');
  check(needs(false).length === 1 && needs(true).length === 1,
    `needs_human told ${needs(false).length} time(s), cleared ${needs(true).length}: ${JSON.stringify(nh.events)}`);

  // --- 4. the team goes away: the follower ends by itself
  const del = await teamctl(['--json', 'delete', TEAM, '--timeout', '20s']);
  if (del.code !== 0) fail(`delete exited ${del.code}: ${del.stderr}`);
  const exit = await Promise.race([follow.exit, h.sleep(15000).then(() => null)]);
  check(exit, 'the follower did not stop after the team was deleted');
  check(exit.code === 0, `follower exit ${exit.code} (${exit.sig}): ${follow.stderr}`);
  const end = follow.events[follow.events.length - 1];
  check(end.event === 'end' && end.why === 'team_gone', `last event ${JSON.stringify(end)}`);
  check(end.approved === 2 && end.denied === 1 && end.left === 1, `counts ${JSON.stringify(end)}`);
  const decisions = follow.events.filter((e) => e.event === 'decision' && !e.deferred);
  check(decisions.length === 4, `${decisions.length} decisions: ${JSON.stringify(decisions)}`);

  return {
    claude: created.claude.version,
    allow: { request_id: a.ev.request_id, rule: a.ev.rule, send_to_decision_ms: a.ms },
    deny: {
      request_id: d.ev.request_id, rule: d.ev.rule, reason: d.ev.reason, send_to_decision_ms: d.ms,
      model_saw: { is_error: seen.is_error, text: seen.text },
    },
    wait_policy: { request_id: wEv.request_id, answered_by: 'wait', follower_answered_again: false, wait_ms: w.ms },
    plan: {
      request_id: pl.ev.request_id, plan_file_path: pl.ev.plan_file_path, send_to_decision_ms: pl.ms,
      model_saw: '[Plan Approved]', deferred_first: Boolean(deferred),
    },
    unmatched: { request_id: l.ev.request_id, still_pending: true, send_to_decision_ms: l.ms },
    end,
    follower_stderr: follow.stderr,
  };
});
