#!/usr/bin/env node
'use strict';
// End-to-end test of `teamctl run` against the REAL Claude Code 2.1.332, offline: teamctl starts
// an interactive lead in a private tmux server (its own TMUX_TMPDIR); the lead talks to
// mock-api.js on 127.0.0.1 in its lead mode.
//
//   node tests/e2e/run-e2e.js --teamctl <exe> [--scenario done|timeout|both] [--keep]
//                             [--verbose] [--claude-bin <path>] [--deadline <seconds>]
//
// done: `teamctl --json run "Spawn: worker <tok>" --teammate-mode tmux`: the mock answers the
//   lead's first turn with an Agent call spawning `worker` (a pane teammate), the worker's turn
//   with a SendMessage to team-lead, and the lead's next turn with "FINAL ANSWER: …". run must
//   end `done` (exit 0) with the team, the worker in it, that final text, and nothing left
//   running: no tmux server/session, no process of that lead session, no team folder.
// timeout: `run "Hang: 120000" --timeout 6s`: the lead's turn never ends; run must end `timeout`
//   (exit 3) with the pane's last lines, and clean up the same way.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { spawn, spawnSync } = require('child_process');

const HERE = __dirname;
const CLAUDE_VERSION = '2.1.332';
const DEFAULT_BIN = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const API_KEY = 'sk-ant-mock-000000000000000000000000';

function usage(msg) {
  process.stderr.write(`run-e2e: ${msg}\nusage: node run-e2e.js --teamctl <exe> [--scenario done|timeout|both] [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]\n`);
  process.exit(2);
}
const args = { keep: false, verbose: false, deadline: 120, scenario: 'both', claudeBin: process.env.CLAUDE_BIN || DEFAULT_BIN };
{
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    const need = () => { if (i + 1 >= a.length) usage(`${a[i]} needs a value`); return a[++i]; };
    switch (a[i]) {
      case '--teamctl': args.teamctl = path.resolve(need()); break;
      case '--claude-bin': args.claudeBin = path.resolve(need()); break;
      case '--deadline': args.deadline = Number(need()); break;
      case '--scenario': args.scenario = need(); break;
      case '--keep': args.keep = true; break;
      case '--verbose': case '-v': args.verbose = true; break;
      default: usage(`unknown argument ${a[i]}`);
    }
  }
}
if (!args.teamctl) usage('--teamctl is required');
if (!['done', 'timeout', 'both'].includes(args.scenario)) usage(`bad --scenario ${args.scenario}`);
if (!fs.existsSync(args.claudeBin)) {
  process.stderr.write(`run-e2e: SKIP: Claude Code binary not found at ${args.claudeBin} (npm ci --prefix tests/e2e)\n`);
  process.exit(77);
}
if (spawnSync('tmux', ['-V'], { stdio: 'ignore' }).error) {
  process.stderr.write('run-e2e: SKIP: tmux is not installed\n');
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

const st = { root: null, mock: null, port: null, mockStderr: '', env: null, last: null };

function teamctl(argv) {
  return new Promise((resolve) => {
    const t = now();
    const p = spawn(args.teamctl, ['--claude-dir', st.cfg, ...argv], {
      env: st.env, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; if (args.verbose) trace(String(d).trimEnd()); });
    p.on('exit', () => trace('teamctl process exited'));
    p.on('close', (code) => {
      const r = { code, stdout: out, stderr: err, ms: now() - t };
      st.last = r;
      trace(`teamctl ${argv.join(' ')} -> ${code} in ${r.ms} ms`);
      resolve(r);
    });
  });
}

function tmux(...a) {
  return spawnSync('tmux', a, { env: st.env, encoding: 'utf8', timeout: 10000 });
}

// Processes whose command line names this lead session (the lead: --session-id, its pane
// teammates: --parent-session-id).
function processesOf(sessionId) {
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue; // a zombie is already gone
      if (cmd.includes(sessionId)) out.push(`${pid} ${cmd.replace(/\0/g, ' ').slice(0, 160)}`);
    } catch (_) { /* gone */ }
  }
  return out;
}

async function assertClean(result, what) {
  // The lead and its teammates end before run returns; allow a moment for zombies to be reaped.
  const end = now() + 5000;
  let procs = processesOf(result.lead_session_id);
  while (procs.length && now() < end) { await sleep(50); procs = processesOf(result.lead_session_id); }
  check(procs.length === 0, `${what}: processes left running:\n${procs.join('\n')}`);
  const ls = tmux('list-sessions');
  check(ls.status !== 0 || !ls.stdout.includes('teamctl-run-'), `${what}: tmux sessions left: ${ls.stdout}`);
  if (result.team) check(!fs.existsSync(path.join(st.cfg, 'teams', result.team)), `${what}: team folder ${result.team} left`);
  check(result.tmux_session === null && result.kept === false, `${what}: tmux_session ${result.tmux_session}`);
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
    if (args.keep) process.stderr.write(`run-e2e: kept temp dir ${st.root}\n`);
    else {
      const until = now() + 5000;
      for (;;) {
        try {
          fs.rmSync(st.root, { recursive: true, force: true, maxRetries: 3 });
          break;
        } catch (e) {
          if (now() > until) { process.stderr.write(`run-e2e: could not remove ${st.root}: ${e.message}\n`); break; }
          spawnSync('sleep', ['0.1']);
        }
      }
    }
  }
}

function dumpDiagnostics(err) {
  const out = [`run-e2e: FAIL: ${err && err.message ? err.message : err}`];
  if (!(err instanceof Failure) && err && err.stack) out.push(err.stack);
  out.push('--- trace ---', ...traceLines);
  if (st.last) out.push('--- last teamctl stdout ---', st.last.stdout, '--- last teamctl stderr ---', st.last.stderr);
  out.push('--- mock log ---');
  try {
    out.push(fs.readFileSync(st.mockLog, 'utf8').trimEnd().split('\n').map((l) => {
      const j = JSON.parse(l);
      return `${j.n} +${j.ms}ms ${j.ua} ${JSON.stringify(j.reply)} ${j.why}`;
    }).join('\n'));
  } catch (_) { out.push('(none)'); }
  if (st.mockStderr) out.push('--- mock stderr ---', st.mockStderr);
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
  st.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'teamctl-run-e2e-')));
  st.home = path.join(st.root, 'home');
  st.cfg = path.join(st.root, 'claude-config');
  st.work = path.join(st.root, 'work');
  st.tmp = path.join(st.root, 'tmp');
  st.tmuxDir = path.join(st.root, 'tmux');
  st.data = path.join(st.root, 'data');
  for (const d of [st.home, st.cfg, st.work, st.tmp, st.tmuxDir, st.data]) fs.mkdirSync(d, { recursive: true });
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

const jsonLines = (s) => s.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

async function scenarioDone() {
  const tok = `TOK-${hex(4)}`;
  const r = await teamctl(['--json', 'run', `Spawn: worker ${tok}`, '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--teammate-mode', 'tmux', '--timeout', '60s', '--settle', '2s',
    '--name', 'e2e-done']);
  const result = JSON.parse(r.stdout.trim());
  const events = jsonLines(r.stderr);
  check(r.code === 0, `run exited ${r.code} (state ${result.state}: ${result.reason})`);
  check(result.state === 'done', `state ${result.state}`);
  check(/^session-[0-9a-f]{8}$/.test(result.team) && result.team === `session-${result.lead_session_id.slice(0, 8)}`,
    `team ${result.team}, lead session ${result.lead_session_id}`);
  const w = result.teammates.find((t) => t.name === 'worker');
  check(w && w.backend === 'tmux' && /^%\d+$/.test(w.pane), `teammates ${JSON.stringify(result.teammates)}`);
  check(result.result === `FINAL ANSWER: the team reported ${tok}`, `result ${JSON.stringify(result.result)}`);
  check(result.result_source === 'transcript', `result_source ${result.result_source}`);
  check(result.claude.version === `${CLAUDE_VERSION} (Claude Code)`, `claude ${JSON.stringify(result.claude)}`);
  check(fs.existsSync(result.transcript), `transcript ${result.transcript} missing`);
  const states = events.filter((e) => e.type === 'progress').map((e) => e.state);
  for (const s of ['validating', 'spawning', 'monitoring', 'running', 'done']) {
    check(states.includes(s), `no ${s} progress event: ${states.join(',')}`);
  }
  const joined = events.find((e) => e.type === 'teammate_joined' && e.name === 'worker');
  check(joined && joined.backend === 'tmux', `no teammate_joined event for worker: ${r.stderr}`);
  await assertClean(result, 'done');
  return { states, elapsed_ms: result.elapsed_ms, wall_ms: r.ms, teammates: result.teammates.length };
}

async function scenarioTimeout() {
  const r = await teamctl(['--json', 'run', 'Hang: 120000', '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--timeout', '6s', '--name', 'e2e-timeout']);
  const result = JSON.parse(r.stdout.trim());
  check(r.code === 3, `run exited ${r.code}, not 3 (state ${result.state}: ${result.reason})`);
  check(result.state === 'timeout', `state ${result.state}`);
  check(/the team's work was not done \(waiting for the lead's turn\)/.test(result.reason), `reason ${result.reason}`);
  check(/last lines of the lead's pane:\n[\s\S]*Hang: 120000/.test(result.reason), `no pane lines in ${result.reason}`);
  check(/^error: run 'e2e-timeout' timed out/m.test(r.stderr), `stderr ${r.stderr}`);
  await assertClean(result, 'timeout');
  return { elapsed_ms: result.elapsed_ms, wall_ms: r.ms };
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
    TEAMCTL_DATA_DIR: st.data,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${st.port}`,
    ANTHROPIC_API_KEY: API_KEY,
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ENABLE_TOOL_SEARCH: 'false',
  };
  if (typeof process.getuid === 'function' && process.getuid() === 0) st.env.IS_SANDBOX = '1';
  const summary = { ok: true };
  if (args.scenario !== 'timeout') summary.done = await scenarioDone();
  if (args.scenario !== 'done') summary.timeout = await scenarioTimeout();
  summary.total_ms = now() - T0;
  return summary;
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
