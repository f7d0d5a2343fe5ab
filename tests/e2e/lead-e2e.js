#!/usr/bin/env node
'use strict';
// End-to-end test: a REAL interactive Claude Code lead, running offline in a private tmux
// server against mock-api.js, forms its own team and spawns one teammate (in a tmux pane, or
// in its own process); teamctl then finds that team, joins it and sends the teammate a
// message, whose answer must land in the joined member's inbox.
//
//   node tests/e2e/lead-e2e.js --teamctl <exe> --mode tmux|in-process
//                              [--claude-bin <path>] [--keep] [--verbose] [--deadline <s>]
//
// How the lead forms its team depends on its version: up to 2.1.177 the mock answers the typed
// prompt with a TeamCreate tool call first and spawns into that team; from 2.1.178 every
// session has its team (`session-<8hex>`) and the mock spawns straight away. `--mode` is
// settings.json's `teammateMode`.
//
// Steps:
//  1. the lead starts in tmux (settings `teammateMode`), the driver types `SPAWN-TEAMMATE …`;
//  2. a team folder appears whose config.json lists `worker` (backendType tmux or in-process);
//  3. `teamctl --team <T> --json status` sees the team; `teamctl --json send --join --from ops
//     worker "Token: L-…"` writes the message; the worker's echo must arrive in ops.json (from
//     any sender name: `observed.reply_from` records it);
//  4. observations: the consumer (teamctl's message deleted, or kept with read: true), msgV on
//     the client's own entries, whether the lead signs (`--lead-verify-key` on the teammate's
//     command line, `lead_sig` on its entries), the format teamctl status reports.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux missing).

const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { spawn, spawnSync, execFile } = require('child_process');

const HERE = __dirname;
const CLAUDE_VERSION = process.env.CLAUDE_E2E_VERSION || '2.1.332';
const DEFAULT_BIN = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const API_KEY = 'sk-ant-mock-000000000000000000000000';
const POLL_MS = 10;

function usage(msg) {
  process.stderr.write(`lead-e2e: ${msg}\nusage: node lead-e2e.js --teamctl <exe> --mode tmux|in-process [--claude-bin <path>] [--keep] [--verbose] [--deadline <s>]\n`);
  process.exit(2);
}
const args = { keep: false, verbose: false, deadline: 90, mode: 'tmux', claudeBin: process.env.CLAUDE_E2E_BIN || process.env.CLAUDE_BIN || DEFAULT_BIN };
{
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    const need = () => { if (i + 1 >= a.length) usage(`${a[i]} needs a value`); return a[++i]; };
    switch (a[i]) {
      case '--teamctl': args.teamctl = path.resolve(need()); break;
      case '--claude-bin': args.claudeBin = path.resolve(need()); break;
      case '--mode': args.mode = need(); break;
      case '--deadline': args.deadline = Number(need()); break;
      case '--keep': args.keep = true; break;
      case '--verbose': case '-v': args.verbose = true; break;
      default: usage(`unknown argument ${a[i]}`);
    }
  }
}
if (!args.teamctl) usage('--teamctl is required');
if (!['tmux', 'in-process'].includes(args.mode)) usage(`--mode ${args.mode}: tmux or in-process`);
if (!fs.existsSync(args.claudeBin)) {
  process.stderr.write(`lead-e2e: SKIP: Claude Code binary not found at ${args.claudeBin}\n`);
  process.exit(77);
}
if (spawnSync('tmux', ['-V'], { stdio: 'ignore' }).error) {
  process.stderr.write('lead-e2e: SKIP: tmux is not installed\n');
  process.exit(77);
}

const T0 = Date.now();
const now = () => Date.now();
const GLOBAL_DEADLINE = T0 + args.deadline * 1000;
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
const shq = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
function readJson(file) {
  try { return JSON.parse(fs.readFileSync(file, 'utf8')); } catch (_) { return null; }
}
async function waitFor(what, ms, fn) {
  const start = now();
  const deadline = Math.min(start + ms, GLOBAL_DEADLINE);
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (now() > deadline) fail(`timed out after ${((now() - start) / 1000).toFixed(1)} s waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

const st = {
  root: null, home: null, cfg: null, work: null, tmp: null, mock: null, mockLog: null, mockStderr: '',
  port: null, sock: `teamctl-lead-e2e-${process.pid}-${hex(4)}`, tmuxStarted: false, leadPid: null,
  tmuxEnv: null, team: null,
};
const tmux = (...a) => spawnSync('tmux', ['-L', st.sock, '-f', '/dev/null', ...a],
  { env: st.tmuxEnv || process.env, encoding: 'utf8', timeout: 10000 });

function panes() {
  const r = tmux('list-panes', '-a', '-F', '#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{pane_start_command}');
  if (r.status !== 0) return [];
  return r.stdout.trim().split('\n').filter(Boolean).map((l) => {
    const [id, pid, dead, cmd] = l.split('\t');
    return { id, pid: Number(pid), dead: dead === '1', cmd: cmd || '' };
  });
}
function capture(id) {
  const r = tmux('capture-pane', '-p', '-J', '-t', id);
  return r.status === 0 ? r.stdout.replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim() : `(capture-pane failed: ${r.stderr})`;
}
// The command lines of `pid` and its descendants (Linux /proc).
function commandLines(pid) {
  const out = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    try { out.push(fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').join(' ')); } catch (_) { continue; }
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch (_) { /* gone */ }
    for (const t of tasks) {
      try {
        for (const c of fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) stack.push(Number(c));
      } catch (_) { /* gone */ }
    }
  }
  return out;
}
function pidAlive(pid) { try { process.kill(pid, 0); return true; } catch (_) { return false; } }

let cleanedUp = false;
function cleanup() {
  if (cleanedUp) return;
  cleanedUp = true;
  if (st.tmuxStarted) {
    const pids = panes().map((p) => p.pid);
    tmux('kill-server');
    const until = now() + 3000;
    while (pids.some(pidAlive) && now() < until) spawnSync('sleep', ['0.05']);
    for (const pid of pids.filter(pidAlive)) {
      trace(`pid ${pid} survived SIGHUP, sending SIGKILL`);
      try { process.kill(pid, 'SIGKILL'); } catch (_) { /* gone */ }
    }
    try { fs.unlinkSync(path.join('/tmp', `tmux-${process.getuid()}`, st.sock)); } catch (_) { /* gone */ }
  }
  if (st.mock && st.mock.exitCode === null) { try { st.mock.kill('SIGTERM'); } catch (_) { /* gone */ } }
  if (st.root) {
    if (args.keep) process.stderr.write(`lead-e2e: kept temp dir ${st.root}\n`);
    else fs.rmSync(st.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

function dumpDiagnostics(err) {
  const out = [`lead-e2e: FAIL: ${err && err.message ? err.message : err}`];
  if (!(err instanceof Failure) && err && err.stack) out.push(err.stack);
  out.push('--- trace ---', ...traceLines);
  if (st.tmuxStarted) {
    for (const p of panes()) out.push(`--- tmux pane ${p.id} (dead=${p.dead}) ${p.cmd.slice(0, 300)} ---`, capture(p.id));
  }
  out.push('--- mock log ---');
  try { out.push(fs.readFileSync(st.mockLog, 'utf8').trimEnd()); } catch (_) { out.push('(none)'); }
  if (st.mockStderr) out.push('--- mock stderr ---', st.mockStderr.trimEnd());
  const teams = st.cfg ? path.join(st.cfg, 'teams') : null;
  if (teams && fs.existsSync(teams)) {
    for (const t of fs.readdirSync(teams)) {
      for (const f of ['config.json', ...((() => { try { return fs.readdirSync(path.join(teams, t, 'inboxes')).map((x) => `inboxes/${x}`); } catch (_) { return []; } })())]) {
        out.push(`--- teams/${t}/${f} ---`);
        try { out.push(fs.readFileSync(path.join(teams, t, f), 'utf8')); } catch (e) { out.push(`(${e.code})`); }
      }
    }
  }
  process.stderr.write(out.join('\n') + '\n');
}

const watchdog = setTimeout(() => {
  dumpDiagnostics(new Failure(`overall deadline of ${args.deadline} s exceeded (watchdog)`));
  cleanup();
  process.exit(1);
}, args.deadline * 1000 + 5000);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { process.stderr.write(`lead-e2e: interrupted by ${sig}\n`); cleanup(); process.exit(130); });
}

function setup() {
  st.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'teamctl-lead-e2e-')));
  st.home = path.join(st.root, 'home');
  st.cfg = path.join(st.root, 'claude-config');
  st.work = path.join(st.root, 'work');
  st.tmp = path.join(st.root, 'tmp');
  for (const d of [st.home, st.cfg, st.work, st.tmp]) fs.mkdirSync(d, { recursive: true });
  st.mockLog = path.join(st.root, 'mock.log');
  writeJson(path.join(st.cfg, '.claude.json'), {
    hasCompletedOnboarding: true,
    lastOnboardingVersion: CLAUDE_VERSION,
    theme: 'dark',
    bypassPermissionsModeAccepted: true,
    customApiKeyResponses: { approved: [API_KEY.trim().slice(-20)], rejected: [] },
    projects: { [st.work]: { hasTrustDialogAccepted: true } },
    // 2.1.112 reads teammateMode from this global config only (its settings schema marks it
    // `source: "global"`); newer clients read it from settings.json.
    teammateMode: args.mode,
  });
  writeJson(path.join(st.cfg, 'settings.json'), { skipDangerousModePermissionPrompt: true, teammateMode: args.mode });
  trace(`temp root ${st.root}`);
}

function startMock() {
  return new Promise((resolve, reject) => {
    st.mock = spawn(process.execPath, [path.join(HERE, 'mock-api.js')],
      { env: { PATH: process.env.PATH, MOCK_LOG: st.mockLog }, stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    const timer = setTimeout(() => reject(new Failure('mock did not print its port within 10 s')), 10000);
    st.mock.stderr.on('data', (d) => { st.mockStderr += d; });
    st.mock.on('exit', (code, sig) => { clearTimeout(timer); reject(new Failure(`mock exited early (${code}, ${sig})`)); });
    st.mock.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0 && st.port === null) {
        clearTimeout(timer);
        st.port = JSON.parse(buf.slice(0, nl)).port;
        trace(`mock on 127.0.0.1:${st.port}`);
        resolve();
      }
    });
  });
}

function mockLines() {
  try { return fs.readFileSync(st.mockLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)); } catch (_) { return []; }
}

function startLead() {
  const env = {
    PATH: process.env.PATH || '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8', SHELL: '/bin/sh',
    USER: process.env.USER || os.userInfo().username, LOGNAME: process.env.LOGNAME || os.userInfo().username,
    TMPDIR: st.tmp, TERM: 'xterm-256color', HOME: st.home, CLAUDE_CONFIG_DIR: st.cfg,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${st.port}`, ANTHROPIC_API_KEY: API_KEY,
    DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ENABLE_TOOL_SEARCH: 'false',
    CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1',
  };
  if (typeof process.getuid === 'function' && process.getuid() === 0) env.IS_SANDBOX = '1';
  st.tmuxEnv = env;
  const cmd = `cd ${shq(st.work)} && exec ${shq(args.claudeBin)} --dangerously-skip-permissions`;
  trace(`tmux -L ${st.sock}: ${cmd}`);
  const r = tmux('start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';',
    'new-session', '-d', '-s', 'lead', '-x', '200', '-y', '50', '-P', '-F', '#{pane_id} #{pane_pid}', cmd);
  if (r.status !== 0) fail(`tmux new-session failed (${r.status}): ${r.stderr}`);
  st.tmuxStarted = true;
  const [id, pid] = r.stdout.trim().split(' ');
  st.leadPane = id;
  st.leadPid = Number(pid);
}

function leadAlive() {
  const p = panes().find((x) => x.id === st.leadPane);
  if (!p || p.dead) fail(`the lead is not running any more:\n${capture(st.leadPane)}`);
}

// The team (folder name) whose config.json lists a member `worker`.
function findTeam() {
  const dir = path.join(st.cfg, 'teams');
  let names = [];
  try { names = fs.readdirSync(dir); } catch (_) { return null; }
  for (const t of names) {
    const cfg = readJson(path.join(dir, t, 'config.json'));
    const w = cfg && Array.isArray(cfg.members) && cfg.members.find((m) => m.name === 'worker');
    if (w) return { name: t, cfg, worker: w };
  }
  return null;
}

function teamctl(argv) {
  return new Promise((resolve) => {
    const env = { ...process.env, HOME: st.home, CLAUDE_CONFIG_DIR: st.cfg };
    for (const k of Object.keys(env)) if (k.startsWith('TEAMCTL_')) delete env[k];
    const t = now();
    execFile(args.teamctl, ['--claude-dir', st.cfg, ...argv], { env, cwd: st.work, timeout: 30000, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        trace(`teamctl ${argv.join(' ')} -> ${code} in ${now() - t} ms`);
        resolve({ code, stdout, stderr, ms: now() - t });
      });
  });
}
const lastJson = (s) => { const l = s.trim().split('\n'); return JSON.parse(l[l.length - 1]); };

async function main() {
  setup();
  const version = (spawnSync(args.claudeBin, ['--version'], {
    env: { PATH: process.env.PATH, HOME: st.home, CLAUDE_CONFIG_DIR: path.join(st.tmp, 'version-probe') },
    encoding: 'utf8', timeout: 20000,
  }).stdout || '').trim();
  trace(`claude --version: ${version}`);
  await startMock();
  startLead();

  // 1. The lead's prompt box is up when the screen stops changing; type until the mock sees it.
  let lastScreen = '';
  let stableSince = now();
  await waitFor('the lead to draw its prompt', 30000, () => {
    leadAlive();
    const s = capture(st.leadPane);
    if (s !== lastScreen) { lastScreen = s; stableSince = now(); return false; }
    return s.length > 0 && now() - stableSince > 700;
  });
  const tLeadUp = now();
  const asked = () => mockLines().some((l) => (l.lastText || '').includes('SPAWN-TEAMMATE'));
  let typed = 0;
  await waitFor('the lead to send the typed prompt to the mock', 30000, () => {
    leadAlive();
    if (asked()) return true;
    if (typed === 0 || (now() - st.tTyped > 4000 && typed < 4)) {
      // Some versions drop keys sent while they still start up: type again.
      if (typed > 0) tmux('send-keys', '-t', st.leadPane, 'C-u');
      tmux('send-keys', '-t', st.leadPane, '-l', 'SPAWN-TEAMMATE: form a team with one teammate called worker');
      tmux('send-keys', '-t', st.leadPane, 'Enter');
      st.tTyped = now();
      typed += 1;
      trace(`typed the prompt (${typed})`);
    }
    return false;
  });

  // 2. The team and its teammate.
  const team = await waitFor('a team whose config.json lists worker', 45000, () => { leadAlive(); return findTeam(); });
  st.team = team.name;
  const tTeam = now();
  trace(`team ${team.name}: worker ${JSON.stringify(team.worker)}`);
  const teamCreate = mockLines().some((l) => l.reply && l.reply.tool === 'TeamCreate');
  const backend = await waitFor('the worker to get its backend', 20000, () => {
    const t = findTeam();
    return t && (t.worker.backendType || (t.worker.tmuxPaneId === 'in-process' ? 'in-process' : null));
  });
  const expected = args.mode === 'tmux' ? 'tmux' : 'in-process';
  check(backend === expected, `worker backendType ${backend}, expected ${expected}`);
  let workerPane = null;
  if (args.mode === 'tmux') {
    // The lead records the pane in config.json; the pane runs a shell the lead types into.
    workerPane = await waitFor('the worker\'s tmux pane running claude', 20000, () => {
      const t = findTeam();
      const p = t && panes().find((x) => x.id === t.worker.tmuxPaneId);
      if (!p) return null;
      const cmd = commandLines(p.pid).find((c) => /--agent-name worker/.test(c));
      return cmd ? { ...p, cmd } : null;
    });
    trace(`worker pane ${workerPane.id}: ${workerPane.cmd}`);
  }
  // The worker's first turn (its brief) reaches the mock before teamctl writes.
  await waitFor('the worker\'s first turn', 30000, () => {
    leadAlive();
    return mockLines().some((l) => (l.lastText || '').includes('You are worker'));
  });

  // 3. teamctl finds the team and joins it; the worker answers ops.
  const s0 = await teamctl(['--team', team.name, '--json', 'status']);
  check(s0.code === 0, `status exited ${s0.code}: ${s0.stderr}`);
  const st0 = lastJson(s0.stdout);
  check(st0.members.some((m) => m.name === 'worker'), `status misses worker: ${s0.stdout}`);
  const tok = `L-${hex(4)}`;
  const send = await teamctl(['--team', team.name, '--json', 'send', '--join', '--from', 'ops', 'worker', `Token: ${tok}`]);
  check(send.code === 0, `send exited ${send.code}: ${send.stderr}`);
  const msgId = lastJson(send.stdout).id;
  const tSent = now();
  const opsInbox = path.join(st.cfg, 'teams', team.name, 'inboxes', 'ops.json');
  const workerInbox = path.join(st.cfg, 'teams', team.name, 'inboxes', 'worker.json');
  let consumedMs = null;
  let leadSigSeen = false;
  const echo = await waitFor(`the worker's echo of ${tok} in ops.json`, 30000, () => {
    leadAlive();
    const w = readJson(workerInbox);
    if (Array.isArray(w)) {
      if (w.some((e) => e.from === 'team-lead' && 'lead_sig' in e)) leadSigSeen = true;
      if (consumedMs === null && !w.some((e) => e.msg_id === msgId && e.read !== true)) consumedMs = now() - tSent;
    }
    const ops = readJson(opsInbox);
    // Any sender: 2.1.178's in-process teammate signs its messages with its internal agent id
    // (17 hex digits) instead of its name; `observed.reply_from` records who it said it was.
    return Array.isArray(ops) && ops.find((e) => typeof e.text === 'string' && e.text.includes(tok));
  });
  const echoMs = now() - tSent;
  check(echo.text === `ECHO ${tok}`, `echo text ${JSON.stringify(echo.text)}`);

  // 4. What this version did.
  const wAfter = readJson(workerInbox) || [];
  const mine = wAfter.find((e) => e.msg_id === msgId);
  const s1 = await teamctl(['--team', team.name, '--json', 'status']);
  check(s1.code === 0, `status exited ${s1.code}: ${s1.stderr}`);
  const observed = {
    team_via: teamCreate ? 'TeamCreate' : team.name.startsWith('session-') ? 'session team' : 'other',
    spawn_tool: (mockLines().find((l) => l.reply && (l.reply.tool === 'Agent' || l.reply.tool === 'Task')) || { reply: {} }).reply.tool || null,
    consumer: mine ? (mine.read === true ? 'marks_read' : 'unread_left') : 'deletes',
    reply_msgv: echo.msgV === 1 && typeof echo.msg_id === 'string',
    reply_from: echo.from,
    lead_sig: leadSigSeen || Boolean(workerPane && /--lead-verify-key/.test(workerPane.cmd)),
    status_format: lastJson(s1.stdout).team.format,
  };
  return {
    ok: true,
    claude: version,
    mode: args.mode,
    team: team.name,
    lead_up_ms: tLeadUp - T0,
    team_after_prompt_ms: tTeam - st.tTyped,
    typed,
    consumed_ms: consumedMs,
    echo_ms: echoMs,
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
