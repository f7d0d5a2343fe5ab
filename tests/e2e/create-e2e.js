#!/usr/bin/env node
'use strict';
// End-to-end test of `teamctl create` / `send` / `inbox` / `delete` against the REAL Claude
// Code 2.1.332, offline: teamctl itself starts the teammate in a private tmux server (its own
// TMUX_TMPDIR), the teammate talks to mock-api.js on 127.0.0.1.
//
//   node tests/e2e/create-e2e.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>]
//                                [--deadline <seconds>]
//
// Steps: `teamctl create demo --member worker:<brief> --claude-bin <npm binary>` must reach
// ready; `teamctl send worker "Token: T1-…"` (as team-lead, the default identity in a team
// teamctl leads) must be answered into the lead's inbox, seen with `teamctl inbox`;
// `teamctl send --join --from ops worker "Token: T2-…"` must be answered into ops's inbox;
// the teammates run in the default permission mode, so `teamctl send worker "Run: …"` makes
// the worker ask its lead for permission to run Bash: `teamctl pending` must list the
// permission_request and `teamctl approve` must let the command run; `teamctl shutdown second
// --wait` must get the second teammate's shutdown_approved; `teamctl delete demo` must get the
// worker's shutdown_approved and remove the team.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { spawn, spawnSync } = require('child_process');

const HERE = __dirname;
const TEAM = 'demo';
const CLAUDE_VERSION = process.env.CLAUDE_E2E_VERSION || '2.1.332';
const DEFAULT_BIN = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const API_KEY = 'sk-ant-mock-000000000000000000000000';
const POLL_MS = 20;

function usage(msg) {
  process.stderr.write(`create-e2e: ${msg}\nusage: node create-e2e.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]\n`);
  process.exit(2);
}
const args = { keep: false, verbose: false, deadline: 60, claudeBin: process.env.CLAUDE_E2E_BIN || process.env.CLAUDE_BIN || DEFAULT_BIN };
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
  process.stderr.write(`create-e2e: SKIP: Claude Code binary not found at ${args.claudeBin} (npm ci --prefix tests/e2e)\n`);
  process.exit(77);
}
if (spawnSync('tmux', ['-V'], { stdio: 'ignore' }).error) {
  process.stderr.write('create-e2e: SKIP: tmux is not installed\n');
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

const st = { root: null, mock: null, port: null, mockStderr: '', env: null };

async function waitFor(what, ms, fn) {
  const end = Math.min(now() + ms, T0 + args.deadline * 1000);
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (now() > end) fail(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

// Runs teamctl with the test environment; resolves {code, stdout, stderr, ms}.
function teamctl(argv, extraEnv = {}) {
  return new Promise((resolve) => {
    const t = now();
    const p = spawn(args.teamctl, ['--claude-dir', st.cfg, ...argv], {
      env: { ...st.env, ...extraEnv }, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'],
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
  if (st.env) tmux('kill-server');
  if (st.mock && st.mock.exitCode === null) {
    try { st.mock.kill('SIGTERM'); } catch (_) { /* gone */ }
  }
  if (st.root) {
    if (args.keep) process.stderr.write(`create-e2e: kept temp dir ${st.root}\n`);
    else {
      // A client that was just shut down may still be writing its transcript for a moment.
      const until = now() + 5000;
      for (;;) {
        try {
          fs.rmSync(st.root, { recursive: true, force: true, maxRetries: 3 });
          break;
        } catch (e) {
          if (now() > until) { process.stderr.write(`create-e2e: could not remove ${st.root}: ${e.message}\n`); break; }
          spawnSync('sleep', ['0.1']);
        }
      }
    }
  }
}

function dumpDiagnostics(err) {
  const out = [`create-e2e: FAIL: ${err && err.message ? err.message : err}`];
  if (!(err instanceof Failure) && err && err.stack) out.push(err.stack);
  out.push('--- trace ---', ...traceLines);
  if (st.env) {
    const r = tmux('capture-pane', '-p', '-J', '-t', `=teamctl-${TEAM}:`, '-S', '-40');
    out.push('--- tmux pane ---', r.status === 0 ? r.stdout.replace(/\n{3,}/g, '\n\n') : `(${r.stderr.trim()})`);
  }
  out.push('--- mock log ---');
  try { out.push(fs.readFileSync(st.mockLog, 'utf8').trimEnd()); } catch (_) { out.push('(none)'); }
  if (st.mockStderr) out.push('--- mock stderr ---', st.mockStderr);
  const teamDir = st.cfg && path.join(st.cfg, 'teams', TEAM);
  for (const f of ['config.json', 'inboxes/worker.json', 'inboxes/team-lead.json', 'inboxes/ops.json']) {
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
  st.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'teamctl-create-e2e-')));
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
}

function startMock() {
  return new Promise((resolve, reject) => {
    st.mock = spawn(process.execPath, [path.join(HERE, 'mock-api.js')], {
      env: { PATH: process.env.PATH, MOCK_LOG: st.mockLog }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buf = '';
    st.mock.stderr.on('data', (d) => { st.mockStderr += d; });
    st.mock.on('exit', (code) => reject(new Failure(`mock exited early (${code})`)));
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

// Whether the mock's log shows `text` in a tool result at least `n` times.
function mockSaw(text, n) {
  try {
    return fs.readFileSync(st.mockLog, 'utf8').split(text).length - 1 >= n;
  } catch (_) {
    return false;
  }
}

function inbox(name) {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(st.cfg, 'teams', TEAM, 'inboxes', `${name}.json`), 'utf8'));
    return Array.isArray(v) ? v : null;
  } catch (_) {
    return null;
  }
}

async function main() {
  setup();
  await startMock();
  // What a cron job would have: a minimal environment. Only these reach teamctl, and through
  // it the tmux server and the teammate.
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

  // --- create
  // The default permission mode: a tool that needs permission is asked of the lead (teamctl).
  const c = await teamctl(['--json', 'create', TEAM, '--member', 'worker:You are worker. Wait for messages.',
    '--member', 'second:You are second. Wait for messages.',
    '--claude-bin', args.claudeBin, '--permission-mode', 'default', '--timeout', '30s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const lines = c.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const result = lines[lines.length - 1];
  check(result.state === 'ready', `create state ${result.state}: ${result.reason}`);
  check(result.claude.version === `${CLAUDE_VERSION} (Claude Code)`, `claude version ${result.claude.version}`);
  check(result.claude.found_by === 'explicit', `found_by ${result.claude.found_by}`);
  check(result.members.every((m) => m.state === 'ready'), `member states ${JSON.stringify(result.members)}`);
  const steps = lines.map((l) => l.state);

  // --- send as team-lead (the default identity); the reply lands in the lead's inbox
  const tok1 = `T1-${hex(4)}`;
  const s1 = await teamctl(['send', 'worker', `Token: ${tok1}`]);
  if (s1.code !== 0) fail(`send exited ${s1.code}: ${s1.stderr}`);
  const tSent1 = now();
  await waitFor(`the reply to ${tok1} in team-lead.json`, 20000, () => (inbox('team-lead') || [])
    .some((e) => e.from === 'worker' && e.text === `ECHO ${tok1}`));
  const reply1Ms = now() - tSent1;
  const i1 = await teamctl(['--json', 'inbox', '--from', 'worker', '--type', 'message']);
  check(i1.code === 0, `inbox exited ${i1.code}: ${i1.stderr}`);
  const msgs1 = lastJson(i1.stdout).messages;
  check(msgs1.some((m) => m.text === `ECHO ${tok1}` && m.to === 'team-lead'), `inbox shows ${JSON.stringify(msgs1)}`);

  // --- send --join as ops; the reply lands in ops's inbox
  const tok2 = `T2-${hex(4)}`;
  const s2 = await teamctl(['send', '--join', '--from', 'ops', 'worker', `Token: ${tok2}`]);
  if (s2.code !== 0) fail(`send --join exited ${s2.code}: ${s2.stderr}`);
  const tSent2 = now();
  await waitFor(`the reply to ${tok2} in ops.json`, 20000, () => (inbox('ops') || [])
    .some((e) => e.from === 'worker' && e.text === `ECHO ${tok2}`));
  const reply2Ms = now() - tSent2;
  const i2 = await teamctl(['--json', 'inbox', 'ops']);
  check(lastJson(i2.stdout).messages.some((m) => m.text === `ECHO ${tok2}`), 'inbox ops misses the reply');
  // What this client version did with teamctl's messages (docs/compatibility.md).
  const wLeft = inbox('worker') || [];
  const replies = (inbox('team-lead') || []).concat(inbox('ops') || []).filter((e) => e.from === 'worker' && /^ECHO /.test(e.text));
  const observed = {
    consumer: wLeft.length === 0 ? 'deletes' : wLeft.every((e) => e.read === true) ? 'marks_read' : 'unread_left',
    reply_msgv: replies.every((e) => e.msgV === 1 && typeof e.msg_id === 'string'),
    reply_lead_sig: replies.some((e) => 'lead_sig' in e),
  };

  // The teammate rewrote config.json (isActive, in place) and kept teamctl's own key.
  const cfg = JSON.parse(fs.readFileSync(path.join(st.cfg, 'teams', TEAM, 'config.json'), 'utf8'));
  const worker = cfg.members.find((m) => m.name === 'worker');
  check(typeof worker.isActive === 'boolean', `worker never set isActive: ${JSON.stringify(worker)}`);
  check(cfg.teamctl && cfg.teamctl.leads === true, `teamctl key lost: ${JSON.stringify(cfg.teamctl)}`);
  check(worker.tmuxPaneId === result.members[0].pane && worker.backendType === 'tmux', 'pane not recorded');
  check(cfg.members.some((m) => m.name === 'ops' && m.agentId === `ops@${TEAM}`), 'ops did not join');

  // --- a permission request, answered by teamctl as the lead
  const tok3 = `R-${hex(4)}`;
  const s3 = await teamctl(['send', 'worker', `Run: ${tok3}`]);
  if (s3.code !== 0) fail(`send Run exited ${s3.code}: ${s3.stderr}`);
  const tAsk = now();
  // 2.1.332 sometimes fails to deliver the request (it reads its own config.json mid-write and
  // tells the model to retry); send the instruction again then, as a person would.
  let request = null;
  let asks = 1;
  await waitFor('a permission_request from worker (teamctl pending)', 25000, async () => {
    const p = await teamctl(['--json', 'pending']);
    if (p.code !== 0) fail(`pending exited ${p.code}: ${p.stderr}`);
    request = lastJson(p.stdout).requests.find((r) => r.kind === 'permission' && r.from === 'worker');
    if (!request && asks < 3 && mockSaw('could not be delivered to the team lead', asks)) {
      asks += 1;
      await teamctl(['send', 'worker', `Run: ${tok3}`]);
    }
    return request;
  });
  const askMs = now() - tAsk;
  check(request.tool_name === 'Bash' && request.input.command.includes(tok3), `request ${JSON.stringify(request)}`);
  const ran = path.join(st.work, `ran-${tok3}.txt`);
  check(!fs.existsSync(ran), 'the command ran before it was approved');
  const a = await teamctl(['--json', 'approve', request.request_id]);
  if (a.code !== 0) fail(`approve exited ${a.code}: ${a.stderr}`);
  const tApprove = now();
  // `echo … > file` creates the file before it writes it: wait for the content.
  await waitFor(`${ran} (the approved command ran)`, 20000,
    () => fs.existsSync(ran) && fs.readFileSync(ran, 'utf8').trim() === tok3);
  const approveToRunMs = now() - tApprove;
  const p2 = await teamctl(['--json', 'pending']);
  check(!lastJson(p2.stdout).requests.some((r) => r.request_id === request.request_id), 'still pending after approve');

  // --- shutdown --wait: the second teammate approves and exits
  const sd = await teamctl(['--json', 'shutdown', 'second', '--reason', 'done', '--wait=20s']);
  if (sd.code !== 0) fail(`shutdown exited ${sd.code}: ${sd.stderr}\n${sd.stdout}`);
  check(lastJson(sd.stdout).requests[0].state === 'approved', `shutdown: ${sd.stdout}`);

  // --- delete: the worker approves its shutdown, the team is gone
  const d = await teamctl(['--json', 'delete', TEAM, '--timeout', '20s']);
  if (d.code !== 0) fail(`delete exited ${d.code}: ${d.stderr}`);
  const del = lastJson(d.stdout);
  const w = del.members.find((m) => m.name === 'worker');
  check(w && w.shutdown === 'approved', `delete: ${d.stdout}`);
  check(!fs.existsSync(path.join(st.cfg, 'teams', TEAM)), 'team folder still there');
  check(!fs.existsSync(path.join(st.cfg, 'tasks', TEAM)), 'task folder still there');
  check(tmux('has-session', '-t', `=teamctl-${TEAM}`).status !== 0, 'tmux session still there');

  return {
    ok: true,
    claude: result.claude.version,
    steps,
    create_to_ready_ms: c.ms,
    reply_to_lead_ms: reply1Ms,
    reply_to_joined_ms: reply2Ms,
    permission_request_ms: askMs,
    approve_to_command_ms: approveToRunMs,
    shutdown_wait_ms: sd.ms,
    delete_ms: d.ms,
    shutdown: w.shutdown,
    observed,
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
