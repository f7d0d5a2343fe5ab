#!/usr/bin/env node
'use strict';
// End-to-end test of `teamctl approve --follow --policy` against the REAL Claude Code 2.1.332,
// offline: `teamctl create` starts one teammate in the default permission mode (so it asks its
// lead, teamctl, before running Bash), in a private tmux server, against mock-api.js.
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
//   plan:         a second teammate, `planner`, started with --plan-mode-required, writes its
//                 plan and calls ExitPlanMode, which asks the lead (plan_approval_request);
//                 "plans": "approve" answers and the model receives "[Plan Approved] …";
//   3. unmatched: `Exec: touch left-….txt` matches no rule; under "unmatched": "leave" it stays
//                 in `teamctl pending` (checked after the follower has looked at it and three
//                 of the client's 1 s polls have passed), then `teamctl deny` answers it by hand;
//   4. `teamctl delete demo`: the follower sees the team gone and ends with exit 0.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { spawn, spawnSync } = require('child_process');
const { lockedJsonUpdate } = require('./lockfile');

const HERE = __dirname;
const TEAM = 'demo';
const CLAUDE_VERSION = '2.1.332';
const DEFAULT_BIN = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const API_KEY = 'sk-ant-mock-000000000000000000000000';
const POLL_MS = 20;

function usage(msg) {
  process.stderr.write(`policy-e2e: ${msg}\nusage: node policy-e2e.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]\n`);
  process.exit(2);
}
const args = { keep: false, verbose: false, deadline: 90, claudeBin: process.env.CLAUDE_BIN || DEFAULT_BIN };
{
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    const need = () => { if (i + 1 >= a.length) usage(`${a[i]} needs a value`); return a[++i]; };
    switch (a[i]) {
      case '--teamctl': args.teamctl = path.resolve(need()); break;
      case '--claude-bin': args.claudeBin = path.resolve(need()); break;
      case '--deadline': args.deadline = Number(need()); break;
      case '--keep': args.keep = true; break;
      case '--verbose': case '-v': args.verbose = true; break;
      default: usage(`unknown argument ${a[i]}`);
    }
  }
}
if (!args.teamctl) usage('--teamctl is required');
if (!fs.existsSync(args.claudeBin)) {
  process.stderr.write(`policy-e2e: SKIP: Claude Code binary not found at ${args.claudeBin} (npm ci --prefix tests/e2e)\n`);
  process.exit(77);
}
if (spawnSync('tmux', ['-V'], { stdio: 'ignore' }).error) {
  process.stderr.write('policy-e2e: SKIP: tmux is not installed\n');
  process.exit(77);
}

const T0 = Date.now();
const now = () => Date.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const hex = (n) => crypto.randomBytes(n).toString('hex');
const traceLines = [];
function trace(msg) {
  const line = `[+${String(now() - T0).padStart(6)} ms] ${msg}`;
  traceLines.push(line);
  if (args.verbose) process.stderr.write(line + '\n');
}
class Failure extends Error {}
function fail(msg) { throw new Failure(msg); }
function check(cond, msg) { if (!cond) fail(msg); }
const writeJson = (file, v) => fs.writeFileSync(file, JSON.stringify(v, null, 2));

const st = { root: null, mock: null, port: null, mockStderr: '', env: null, follower: null, events: [], followerErr: '' };

async function waitFor(what, ms, fn) {
  const end = Math.min(now() + ms, T0 + args.deadline * 1000);
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (now() > end) fail(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

function teamctl(argv) {
  return new Promise((resolve) => {
    const t = now();
    const p = spawn(args.teamctl, ['--claude-dir', st.cfg, ...argv], {
      env: st.env, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => {
      const r = { code, stdout: out, stderr: err, ms: now() - t };
      trace(`teamctl ${argv.join(' ')} -> ${code} in ${r.ms} ms`);
      resolve(r);
    });
  });
}
const lastJson = (s) => JSON.parse(s.trim().split('\n').pop());

function tmux(...a) {
  return spawnSync('tmux', a, { env: st.env, encoding: 'utf8', timeout: 10000 });
}

let cleanedUp = false;
function cleanup() {
  if (cleanedUp) return;
  cleanedUp = true;
  if (st.follower && st.follower.exitCode === null) {
    try { st.follower.kill('SIGTERM'); } catch (_) { /* gone */ }
  }
  if (st.env) tmux('kill-server');
  if (st.mock && st.mock.exitCode === null) {
    try { st.mock.kill('SIGTERM'); } catch (_) { /* gone */ }
  }
  if (st.root) {
    if (args.keep) process.stderr.write(`policy-e2e: kept temp dir ${st.root}\n`);
    else {
      const until = now() + 5000;
      for (;;) {
        try {
          fs.rmSync(st.root, { recursive: true, force: true, maxRetries: 3 });
          break;
        } catch (e) {
          if (now() > until) { process.stderr.write(`policy-e2e: could not remove ${st.root}: ${e.message}\n`); break; }
          spawnSync('sleep', ['0.1']);
        }
      }
    }
  }
}

function dumpDiagnostics(err) {
  const out = [`policy-e2e: FAIL: ${err && err.message ? err.message : err}`];
  if (!(err instanceof Failure) && err && err.stack) out.push(err.stack);
  out.push('--- trace ---', ...traceLines);
  out.push('--- follower events ---', ...st.events.map((e) => JSON.stringify(e)));
  out.push('--- follower stderr ---', st.followerErr);
  if (st.env) {
    const r = tmux('capture-pane', '-p', '-J', '-t', `=teamctl-${TEAM}:`, '-S', '-40');
    out.push('--- tmux pane ---', r.status === 0 ? r.stdout.replace(/\n{3,}/g, '\n\n') : `(${r.stderr.trim()})`);
  }
  out.push('--- mock log ---');
  try { out.push(fs.readFileSync(st.mockLog, 'utf8').trimEnd()); } catch (_) { out.push('(none)'); }
  if (st.mockStderr) out.push('--- mock stderr ---', st.mockStderr);
  const teamDir = st.cfg && path.join(st.cfg, 'teams', TEAM);
  for (const f of ['config.json', 'inboxes/worker.json', 'inboxes/planner.json', 'inboxes/team-lead.json']) {
    out.push(`--- teams/${TEAM}/${f} ---`);
    try { out.push(fs.readFileSync(path.join(teamDir, f), 'utf8')); } catch (e) { out.push(`(${e.code})`); }
  }
  process.stderr.write(out.join('\n') + '\n');
}

const watchdog = setTimeout(() => {
  dumpDiagnostics(new Failure(`overall deadline of ${args.deadline} s exceeded (watchdog)`));
  cleanup();
  process.exit(1);
}, args.deadline * 1000 + 5000);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { cleanup(); process.exit(130); });
}

function setup() {
  st.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'teamctl-policy-e2e-')));
  st.home = path.join(st.root, 'home');
  st.cfg = path.join(st.root, 'claude-config');
  st.work = path.join(st.root, 'work');
  st.tmp = path.join(st.root, 'tmp');
  st.tmuxDir = path.join(st.root, 'tmux');
  for (const d of [st.home, st.cfg, st.work, st.tmp, st.tmuxDir]) fs.mkdirSync(d, { recursive: true });
  st.mockLog = path.join(st.root, 'mock.log');
  writeJson(path.join(st.cfg, '.claude.json'), {
    hasCompletedOnboarding: true,
    lastOnboardingVersion: CLAUDE_VERSION,
    theme: 'dark',
    bypassPermissionsModeAccepted: true,
    customApiKeyResponses: { approved: [API_KEY.trim().slice(-20)], rejected: [] },
    projects: { [st.work]: { hasTrustDialogAccepted: true } },
  });
  writeJson(path.join(st.cfg, 'settings.json'), { skipDangerousModePermissionPrompt: true });
  st.policy = path.join(st.root, 'policy.json');
  writeJson(st.policy, {
    permissions: { allow: ['Bash(echo:*)'], deny: ['Bash(rm:*)'] },
    plans: 'approve',
    sandbox_hosts: { allow: [], deny: [] },
    unmatched: 'leave',
  });
}

function startMock() {
  return new Promise((resolve, reject) => {
    st.mock = spawn(process.execPath, [path.join(HERE, 'mock-api.js')], {
      env: { PATH: process.env.PATH, MOCK_LOG: st.mockLog }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buf = '';
    st.mock.stderr.on('data', (d) => { st.mockStderr += d; });
    st.mock.on('exit', (code, sig) => {
      trace(`mock exited (code ${code}, signal ${sig})`);
      reject(new Failure(`mock exited early (${code})`));
    });
    st.mock.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0 && st.port === null) {
        st.port = JSON.parse(buf.slice(0, nl)).port;
        resolve();
      }
    });
  });
}

// The follower: `approve --follow --policy` with --json, its events collected as they come.
function startFollower() {
  const argv = ['--claude-dir', st.cfg, '--team', TEAM, '--json', 'approve', '--follow',
    '--policy', st.policy, '--timeout', `${args.deadline}s`];
  trace(`follower: teamctl ${argv.join(' ')}`);
  st.follower = spawn(args.teamctl, argv, { env: st.env, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'] });
  let buf = '';
  st.follower.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const e = JSON.parse(line);
      trace(`follower event: ${e.event} ${e.request_id || e.why} ${e.answer || ''} ${e.rule || ''}`);
      st.events.push(e);
    }
  });
  st.follower.stderr.on('data', (d) => { st.followerErr += d; });
  st.followerExit = new Promise((resolve) => st.follower.on('close', (code, sig) => resolve({ code, sig })));
}

function mockLines() {
  try {
    return fs.readFileSync(st.mockLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch (_) {
    return [];
  }
}

// Whether the mock's log shows `text` at least `n` times.
function mockSaw(text, n) {
  try {
    return fs.readFileSync(st.mockLog, 'utf8').split(text).length - 1 >= n;
  } catch (_) {
    return false;
  }
}

// Sends `text` to the worker and waits for its permission request to be decided by the
// follower; resends when 2.1.332 fails to deliver the request (as create-e2e.js does).
async function askAndDecide(what, text, match, to = 'worker', kind = 'permission') {
  let asks = 1;
  const t = now();
  const s = await teamctl(['send', to, text]);
  if (s.code !== 0) fail(`send exited ${s.code}: ${s.stderr}`);
  const ev = await waitFor(`${what}: the follower's decision`, 30000, async () => {
    const e = st.events.find((x) => x.event === 'decision' && x.kind === kind && !x.deferred && match(x));
    if (!e && asks < 3 && mockSaw('could not be delivered to the team lead', asks)) {
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
  const cmd = `cd ${q(st.work)} && exec env ${envs.map(q).join(' ')} ${q(args.claudeBin)}` +
    ` --agent-id planner@${TEAM} --agent-name planner --team-name ${TEAM} --agent-color green` +
    ` --parent-session-id ${leadSession} --plan-mode-required --permission-mode plan`;
  const r = tmux('new-window', '-d', '-t', `=teamctl-${TEAM}:`, '-n', 'planner', cmd);
  if (r.status !== 0) fail(`tmux new-window failed: ${r.stderr}`);
  trace('planner started (--plan-mode-required --permission-mode plan)');
}

async function main() {
  setup();
  await startMock();
  st.env = {
    PATH: process.env.PATH || '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    HOME: st.home,
    TMPDIR: st.tmp,
    TMUX_TMPDIR: st.tmuxDir,
    TERM: 'xterm-256color',
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${st.port}`,
    ANTHROPIC_API_KEY: API_KEY,
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ENABLE_TOOL_SEARCH: 'false',
  };
  if (typeof process.getuid === 'function' && process.getuid() === 0) st.env.IS_SANDBOX = '1';

  const c = await teamctl(['--json', 'create', TEAM, '--member', 'worker:You are worker. Wait for messages.',
    '--claude-bin', args.claudeBin, '--permission-mode', 'default', '--timeout', '30s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const created = lastJson(c.stdout);
  check(created.state === 'ready', `create state ${created.state}: ${created.reason}`);
  check(created.claude.version === `${CLAUDE_VERSION} (Claude Code)`, `claude version ${created.claude.version}`);

  startPlanner();
  startFollower();

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

  // --- plan: the planner's ExitPlanMode (after the mock writes its plan file) asks the lead;
  // "plans": "approve" answers, and the model is told so.
  const tokP = `P-${hex(4)}`;
  const pl = await askAndDecide('plan', `Plan: ${tokP}`, (e) => e.from === 'planner', 'planner', 'plan_approval');
  check(pl.ev.answer === 'approve' && pl.ev.list === 'plans' && pl.ev.written === true,
    `plan decision ${JSON.stringify(pl.ev)}`);
  check(pl.ev.response.approved === true && pl.ev.response.planDigest.length === 64, `plan response ${JSON.stringify(pl.ev.response)}`);
  await waitFor('the plan approval reaching the planner\'s model', 20000, () => mockSaw('[Plan Approved]', 1));
  // It was held back until the planner's turn ended (answered earlier, it is lost: see README).
  const deferred = st.events.find((x) => x.request_id === pl.ev.request_id && x.deferred);

  // --- 3. unmatched: left pending for a person
  const tokL = `L-${hex(4)}`;
  const l = await askAndDecide('unmatched', `Exec: touch left-${tokL}.txt`, (e) => e.input && e.input.command.includes(tokL));
  check(l.ev.answer === 'leave' && l.ev.list === 'unmatched' && l.ev.written === false,
    `unmatched decision ${JSON.stringify(l.ev)}`);
  const tLeft = now();
  await waitFor('three client polls after the unmatched request', 10000, () => now() - tLeft > 3000);
  const p = await teamctl(['--json', 'pending']);
  const still = lastJson(p.stdout).requests.find((r) => r.request_id === l.ev.request_id);
  check(still, `the unmatched request is not pending any more: ${p.stdout}`);
  check(!fs.existsSync(path.join(st.work, `left-${tokL}.txt`)), 'the unmatched command ran');
  const workerInbox = JSON.parse(fs.readFileSync(path.join(st.cfg, 'teams', TEAM, 'inboxes', 'worker.json'), 'utf8'));
  check(!workerInbox.some((e) => e.text.includes(l.ev.request_id)), 'an answer to the unmatched request was written');
  check(st.events.filter((e) => e.request_id === l.ev.request_id).length === 1, 'the left request was reported more than once');
  // A person answers it, so the worker is not blocked for the shutdown.
  const dn = await teamctl(['deny', l.ev.request_id, '--reason', 'not now']);
  check(dn.code === 0, `deny exited ${dn.code}: ${dn.stderr}`);
  await waitFor('the manual denial in a tool result', 20000, () => mockSaw('not now', 1));

  // --- 4. the team goes away: the follower ends by itself
  const del = await teamctl(['--json', 'delete', TEAM, '--timeout', '20s']);
  if (del.code !== 0) fail(`delete exited ${del.code}: ${del.stderr}`);
  const exit = await Promise.race([st.followerExit, sleep(15000).then(() => null)]);
  check(exit, 'the follower did not stop after the team was deleted');
  check(exit.code === 0, `follower exit ${exit.code} (${exit.sig}): ${st.followerErr}`);
  const end = st.events[st.events.length - 1];
  check(end.event === 'end' && end.why === 'team_gone', `last event ${JSON.stringify(end)}`);
  check(end.approved === 2 && end.denied === 1 && end.left === 1, `counts ${JSON.stringify(end)}`);
  const decisions = st.events.filter((e) => e.event === 'decision');
  check(decisions.filter((e) => !e.deferred).length === 4, `${decisions.length} decisions: ${JSON.stringify(decisions)}`);

  return {
    ok: true,
    claude: created.claude.version,
    allow: { request_id: a.ev.request_id, rule: a.ev.rule, send_to_decision_ms: a.ms },
    deny: { request_id: d.ev.request_id, rule: d.ev.rule, reason: d.ev.reason, send_to_decision_ms: d.ms,
      model_saw: { is_error: seen.is_error, text: seen.text } },
    plan: { request_id: pl.ev.request_id, plan_file_path: pl.ev.plan_file_path, send_to_decision_ms: pl.ms,
      model_saw: '[Plan Approved]', deferred_first: Boolean(deferred) },
    unmatched: { request_id: l.ev.request_id, still_pending: true, send_to_decision_ms: l.ms },
    end,
    follower_stderr: st.followerErr,
    total_ms: now() - T0,
  };
}

main().then((summary) => {
  clearTimeout(watchdog);
  cleanup();
  process.stdout.write(JSON.stringify(summary) + '\n');
  process.exit(0);
}, (err) => {
  clearTimeout(watchdog);
  dumpDiagnostics(err);
  cleanup();
  process.exit(1);
});
