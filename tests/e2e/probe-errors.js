#!/usr/bin/env node
'use strict';
// Probe (not a test): what the real Claude Code writes when the Messages API fails. Starts the
// client offline against mock-api.js with fault rules, in one of four places, and prints a
// timeline of what shows: the mock's requests (and which fault took each), new transcript lines
// (every non-user/assistant line in full), config.json members' isActive, new inbox entries,
// the pane (tmux modes) and, for `-p`, the exit code, stdout and stderr. Findings are in
// docs/research/claude-code-behaviour.md.
//
//   node tests/e2e/probe-errors.js --where headless|pane|lead|inprocess
//        [--faults JSON] [--secs N] [--env K=V]... [--prompt TEXT] [--then TEXT]... [--claude-bin PATH]
//        [--version V] [--settle S] [--keep] [--quiet-pane] [--full] [--help]
//
// --where   headless:  `claude -p <prompt>` (default prompt "hello"); the faults apply from
//                      its first request; ends when it exits (+ --settle s) or after --secs
//           pane:      a pane teammate `worker` in team `demo` (written by hand, started with
//                      the launch line of shared/spec/real-claude-offline.md §3) in a private
//                      tmux server; after its first turn (the initial prompt) the faults are
//                      installed and `ops` sends it "Token: P-1" (or --prompt), then each
//                      --then text once the turn before has ended; runs --secs
//           lead:      an interactive lead as `teamctl run` starts it (`claude --session-id
//                      <uuid> --dangerously-skip-permissions <prompt>` in tmux); faults from the
//                      first request
//           inprocess: the same lead with prompt "Spawn: worker TOKIP" and the default
//                      teammateMode (in-process); the faults should match the worker's
//                      requests, e.g. {"match":"Report: TOKIP","times":0,"status":529}
// --faults  the mock's fault rules (see mock-api.js): a rule or an array, JSON
// --env     extra environment for the client (repeatable), e.g. API_TIMEOUT_MS=20000,
//           CLAUDE_CODE_MAX_RETRIES=2
// --version the client's version, for .claude.json's lastOnboardingVersion (default 2.1.332)
// --settle  seconds to keep watching after a headless client exited (default 2)
// --full    also print the transcript's bookkeeping lines (api-request-shape/-blob, queue-operation,
//           atis-latch, last-prompt); attachments are always one word
//
// Exit code 0 when the probe ran (whatever the client did), 2 on a usage error. Nothing is
// asserted. Everything lives in a temp dir (removed unless --keep), a private tmux server
// (`tmux -L probe-errors-<pid>`) and the mock on 127.0.0.1; all are stopped at the end.

const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const http = require('http');
const { spawn, spawnSync } = require('child_process');
const { lockedJsonUpdate } = require('./lockfile');

const HERE = __dirname;
const KEY = 'sk-ant-mock-000000000000000000000000';
const argv = process.argv.slice(2);
const HELP = fs.readFileSync(__filename, 'utf8').split('\n').slice(1).filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n');
const usage = (m) => { process.stderr.write(`probe-errors: ${m}\n`); process.exit(2); };
const o = {
  where: 'headless', faults: null, secs: 60, env: {}, prompt: null, then: [], keep: false, settle: 2,
  bin: process.env.CLAUDE_E2E_BIN || path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude'),
  version: process.env.CLAUDE_E2E_VERSION || '2.1.332', quietPane: false,
};
for (let i = 0; i < argv.length; i++) {
  const need = () => { if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`); return argv[++i]; };
  switch (argv[i]) {
    case '--where': o.where = need(); break;
    case '--faults': o.faults = JSON.parse(need()); break;
    case '--secs': o.secs = Number(need()); break;
    case '--env': { const kv = need(); const k = kv.indexOf('='); if (k < 1) usage('--env K=V'); o.env[kv.slice(0, k)] = kv.slice(k + 1); break; }
    case '--prompt': o.prompt = need(); break;
    case '--then': o.then.push(need()); break;
    case '--claude-bin': o.bin = path.resolve(need()); break;
    case '--version': o.version = need(); break;
    case '--settle': o.settle = Number(need()); break;
    case '--keep': o.keep = true; break;
    case '--quiet-pane': o.quietPane = true; break;
    case '--full': o.full = true; break;
    case '--help': case '-h': process.stdout.write(HELP + '\n'); process.exit(0); break;
    default: usage(`unknown argument ${argv[i]}`);
  }
}
if (!['headless', 'pane', 'lead', 'inprocess'].includes(o.where)) usage('--where headless|pane|lead|inprocess');
if (!fs.existsSync(o.bin)) usage(`no client at ${o.bin} (npm ci --prefix tests/e2e)`);

const T0 = Date.now();
const log = (m) => process.stdout.write(`[+${String(Date.now() - T0).padStart(6)}] ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const q = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'probe-errors-')));
const d = {};
for (const k of ['home', 'cfg', 'work', 'tmp']) { d[k] = path.join(root, k); fs.mkdirSync(d[k]); }
const sock = `probe-errors-${process.pid}`;
const mockLog = path.join(root, 'mock.log');
const state = { mock: null, port: null, child: null };

function writeConfig() {
  fs.writeFileSync(path.join(d.cfg, '.claude.json'), JSON.stringify({
    hasCompletedOnboarding: true, lastOnboardingVersion: o.version, theme: 'dark', bypassPermissionsModeAccepted: true,
    customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
    projects: { [d.work]: { hasTrustDialogAccepted: true } },
  }, null, 2));
  fs.writeFileSync(path.join(d.cfg, 'settings.json'), JSON.stringify({ skipDangerousModePermissionPrompt: true }, null, 2));
}

function env() {
  const e = {
    PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: d.home, TMPDIR: d.tmp, TERM: 'xterm-256color', SHELL: '/bin/sh',
    CLAUDE_CONFIG_DIR: d.cfg, ANTHROPIC_BASE_URL: `http://127.0.0.1:${state.port}`, ANTHROPIC_API_KEY: KEY,
    DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ENABLE_TOOL_SEARCH: 'false',
    CLAUDECODE: '1', CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1', DISABLE_AUTOUPDATER: '1',
  };
  if (process.getuid && process.getuid() === 0) e.IS_SANDBOX = '1';
  // A lead is not started inside another Claude Code session (teamctl run sets no CLAUDECODE);
  // with CLAUDECODE=1 a 2.1.332 lead started with --session-id also made a second, empty team.
  if (o.where === 'lead' || o.where === 'inprocess') delete e.CLAUDECODE;
  return { ...e, ...o.env };
}
const tmux = (...a) => spawnSync('tmux', ['-L', sock, '-f', '/dev/null', ...a], { env: env(), encoding: 'utf8', timeout: 10000 });

function startMock() {
  return new Promise((resolve, reject) => {
    state.mock = spawn(process.execPath, [path.join(HERE, 'mock-api.js')], {
      env: { PATH: process.env.PATH, MOCK_LOG: mockLog, ...(o.where !== 'pane' && o.faults ? { MOCK_FAULTS: JSON.stringify(o.faults) } : {}) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    state.mock.stdout.once('data', (b) => { state.port = JSON.parse(String(b).split('\n')[0]).port; resolve(); });
    state.mock.on('error', reject);
  });
}
function control(method, p, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: state.port, method, path: p, headers: { 'content-type': 'application/json' } }, (res) => {
      let s = '';
      res.on('data', (c) => { s += c; });
      res.on('end', () => resolve(s));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const readJson = (f) => { try { return JSON.parse(fs.readFileSync(f, 'utf8')); } catch (_) { return null; } };

// --- watching (probe-watch.js) --------------------------------------------------------------
const watchOnce = require('./probe-watch')({
  cfg: d.cfg, mockLog, log, tmux, panes: o.where !== 'headless' && !o.quietPane, full: () => o.full,
});

// --- setting up each place ------------------------------------------------------------------
function paneTeam() {
  const team = path.join(d.cfg, 'teams', 'demo');
  fs.mkdirSync(path.join(team, 'inboxes'), { recursive: true });
  const now = Date.now();
  const member = (name, extra) => ({ agentId: `${name}@demo`, name, joinedAt: now, tmuxPaneId: '', cwd: d.work, subscriptions: [], ...extra });
  fs.writeFileSync(path.join(team, 'config.json'), JSON.stringify({
    name: 'demo', createdAt: now, leadAgentId: 'team-lead@demo', leadSessionId: crypto.randomUUID(),
    members: [
      member('team-lead', { agentType: 'team-lead', tmuxPaneId: 'leader', backendType: 'in-process' }),
      member('worker', { color: 'blue', agentType: 'general-purpose', backendType: 'tmux' }),
      member('ops', {}),
    ],
  }, null, 2));
  fs.writeFileSync(path.join(team, 'inboxes', 'team-lead.json'), '[]');
  fs.writeFileSync(path.join(team, 'inboxes', 'ops.json'), '[]');
  fs.writeFileSync(path.join(team, 'inboxes', 'worker.json'), JSON.stringify([{
    from: 'team-lead', text: 'Hello worker, this is the initial prompt.', timestamp: new Date().toISOString(),
    msgV: 1, msg_id: crypto.randomUUID(), type: 'message', read: false,
  }], null, 2));
}
function send(to, text, from = 'ops') {
  const f = path.join(d.cfg, 'teams', 'demo', 'inboxes', `${to}.json`);
  lockedJsonUpdate(f, (v) => {
    v.push({ from, text, summary: `from ${from}`, timestamp: new Date().toISOString(), msgV: 1, msg_id: crypto.randomUUID(), type: 'message', read: false });
  }, () => []);
  log(`SENT to ${to} from ${from}: ${text}`);
}
function startTmux(cmd) {
  const e = env();
  const envArgs = Object.entries(e).map(([k, v]) => `${k}=${q(v)}`).join(' ');
  const r = tmux('new-session', '-d', '-s', 'probe', '-x', '160', '-y', '45', `cd ${q(d.work)} && exec env ${envArgs} ${cmd}`);
  if (r.status !== 0) throw new Error(`tmux new-session: ${r.stderr}`);
  tmux('set-option', '-g', 'remain-on-exit', 'on');
  const p = tmux('list-panes', '-a', '-F', '#{pane_id} #{pane_pid}').stdout.trim().split(' ');
  log(`tmux pane ${p[0]} pid ${p[1]}: ${cmd.slice(0, 200)}`);
  return { id: p[0], pid: Number(p[1]) };
}
function paneDead() {
  const r = tmux('list-panes', '-a', '-F', '#{pane_id} #{pane_dead} #{pane_dead_status}');
  return r.status === 0 ? r.stdout.trim().split('\n').filter((l) => l.split(' ')[1] === '1') : [];
}

async function main() {
  writeConfig();
  await startMock();
  log(`root ${root}; mock on ${state.port}; client ${o.bin}`);
  log(`faults: ${JSON.stringify(o.faults)}; env: ${JSON.stringify(o.env)}`);
  const until = T0 + o.secs * 1000;
  const sid = crypto.randomUUID();
  let exited = null;
  if (o.where === 'headless') {
    const t = Date.now();
    const child = spawn(o.bin, ['-p', o.prompt || 'hello', '--dangerously-skip-permissions', '--session-id', sid], { cwd: d.work, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    state.child = child;
    let out = '';
    let err = '';
    child.stdout.on('data', (b) => { out += b; });
    child.stderr.on('data', (b) => { err += b; });
    child.on('exit', (code, sig) => {
      exited = Date.now();
      log(`EXIT code=${code} signal=${sig} after ${exited - t} ms`);
      log(`STDOUT ${JSON.stringify(out.slice(-2000))}`);
      log(`STDERR ${JSON.stringify(err.slice(-2000))}`);
    });
    log(`started claude -p (session ${sid})`);
  } else if (o.where === 'pane') {
    paneTeam();
    const parent = crypto.randomUUID();
    startTmux(`${q(o.bin)} --agent-id worker@demo --agent-name worker --team-name demo --agent-color blue --parent-session-id ${parent} --dangerously-skip-permissions`);
    const lead = path.join(d.cfg, 'teams', 'demo', 'inboxes', 'team-lead.json');
    while (Date.now() < until) {
      watchOnce();
      const v = readJson(lead);
      if (Array.isArray(v) && v.some((e) => String(e.text).includes('idle_notification'))) break;
      await sleep(100);
    }
    if (o.faults) log(`FAULTS installed: ${await control('POST', '/_mock/faults', o.faults)}`);
    send('worker', o.prompt || 'Token: P-1');
    // --then: each further message once the worker's previous turn has ended (one more idle
    // notification than before).
    const idles = () => (readJson(lead) || []).filter((e) => String(e.text).includes('idle_notification')).length;
    for (const next of o.then) {
      const n0 = idles();
      while (Date.now() < until && idles() <= n0) { watchOnce(); await sleep(100); }
      send('worker', next);
    }
  } else {
    const prompt = o.prompt || (o.where === 'inprocess' ? 'Spawn: worker TOKIP' : 'hello');
    fs.writeFileSync(path.join(d.tmp, 'prompt'), prompt);
    startTmux(`${q(o.bin)} --session-id ${sid} --dangerously-skip-permissions -- "$(cat ${q(path.join(d.tmp, 'prompt'))})"`);
    log(`lead session ${sid}`);
  }
  while (Date.now() < until) {
    watchOnce();
    if (exited && Date.now() - exited > o.settle * 1000) break;
    if (o.where !== 'headless') {
      const dead = paneDead();
      if (dead.length) { log(`PANE DEAD: ${dead.join('; ')}`); watchOnce(); break; }
    }
    await sleep(100);
  }
  watchOnce();
  log(`mock state: ${await control('GET', '/_mock/state')}`);
  if (o.where !== 'headless') {
    const r = tmux('list-panes', '-a', '-F', '#{pane_id}');
    for (const id of (r.stdout || '').trim().split('\n').filter(Boolean)) {
      log(`FINAL PANE ${id}:\n    ${(tmux('capture-pane', '-p', '-t', id).stdout || '').split('\n').filter((l) => l.trim()).slice(-25).join('\n    ')}`);
    }
  }
}

function cleanup() {
  if (state.child && state.child.exitCode === null) { try { state.child.kill('SIGKILL'); } catch (_) { /* gone */ } }
  if (o.where !== 'headless') {
    const pids = (tmux('list-panes', '-a', '-F', '#{pane_pid}').stdout || '').trim().split('\n').filter(Boolean).map(Number);
    tmux('kill-server');
    const t = Date.now();
    const alive = (p) => { try { process.kill(p, 0); return true; } catch (_) { return false; } };
    while (pids.some(alive) && Date.now() - t < 3000) spawnSync('sleep', ['0.05']);
    for (const p of pids.filter(alive)) { try { process.kill(p, 'SIGKILL'); } catch (_) { /* gone */ } }
    try { fs.unlinkSync(path.join(process.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid()}`, sock)); } catch (_) { /* gone */ }
  }
  if (state.mock) { try { state.mock.kill('SIGTERM'); } catch (_) { /* gone */ } }
  if (o.keep) log(`kept ${root}`);
  else fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
}
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => { cleanup(); process.exit(130); });
main().then(() => { cleanup(); process.exit(0); }, (e) => { console.error(e); cleanup(); process.exit(1); });
