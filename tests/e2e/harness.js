'use strict';
// What an end-to-end driver needs to run teamctl against the REAL Claude Code offline: a temp
// root (HOME, CLAUDE_CONFIG_DIR with the keys that skip every start-up dialog, a work dir, a
// private tmux server), the mock Messages API on 127.0.0.1, a minimal cron-like environment,
// a teamctl runner, polling with deadlines, diagnostics and cleanup.
//
//   const h = require('./harness')({ name: 'ask-e2e', team: 'demo', argv: process.argv.slice(2) });
//   h.run(async () => { ...; return summary; });
//
// Common flags: --teamctl <exe> (required), --claude-bin <path>, --deadline <s>, --keep,
// --verbose, --help, --prepare (settle the start-up dialogs with `teamctl prepare --cwd <work>
// --skip-permissions` on the empty config dir, instead of writing the keys into .claude.json and
// settings.json here; a driver's own extra keys are still written first, and must survive). Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on
// stderr), 2 usage error, 77 skipped (claude binary or tmux not installed).
// The client: --claude-bin, else $CLAUDE_E2E_BIN, else $CLAUDE_BIN, else the npm binary;
// $CLAUDE_E2E_VERSION is the version it is (default 2.1.332; scripts/compat.sh sets both).
//
// Options beyond name, team and argv (each optional):
//   deadline    the default of --deadline, in seconds (90)
//   team        null: no one team; the diagnostics show every team folder
//   session     the tmux session whose pane the diagnostics show (`teamctl-<team>`); null:
//               every pane of the server (the default without a team)
//   synopsis    the usage line after `node <name>.js ` (the common flags' by default)
//   teamctl     false: no --teamctl flag (a driver that runs another command, given by a flag)
//   flags       extra flags taking a value: { '--mode': { key, value (default), required,
//               path (resolved), check(v) → an error message or null } }, read into args[key]
//   pollMs      how often waitFor polls (20)
//   dirs        extra folders made in the temp root, as st[<name>] (e.g. ['data'])
//   claudeJson, settings   extra keys for .claude.json / settings.json (or args => those keys)
//   env(env, st)           the environment to use instead of the cron-like one it is given
//   ownTmux     true: the driver starts the client itself, in its own tmux server: tmux() runs
//               `tmux -L <st.sock> -f /dev/null` (a unique name, in /tmp/tmux-<uid>), and the
//               environment is what such a pane gets: the cron-like one without TMUX_TMPDIR,
//               plus SHELL, USER, LOGNAME, CLAUDE_CONFIG_DIR, CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS
//   mockTeamctl false: the mock completes assigned tasks with TaskUpdate, not `teamctl tasks
//               done` (MOCK_TEAMCTL unset)
//   mockEnv     extra variables for the mock (or args => those): its usage knobs (MOCK_USAGE_START,
//               MOCK_USAGE_DELTA, MOCK_BLOCKS, MOCK_SIDE_ZERO, …; see mock-api.js). MOCK_* variables
//               of the driver's own environment reach the mock too.
//   mockLogLine(entry)     how the diagnostics print one line of the mock's log (raw by default)
//   onCleanup(st)          more to clean up first (tmux servers of the driver's own, …)
//
// For a driver whose lead is the real client in its own tmux server (ownTmux): leadTeam() starts
// it, types `SPAWN-TEAMMATE …` and waits for the team with its teammate `worker` (findTeam);
// leadAlive(), processTree(pid), costState(file), statusOf(team) and quiet(ms, what) go with it.

const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { spawn, spawnSync } = require('child_process');

const HERE = __dirname;
const CLAUDE_VERSION = process.env.CLAUDE_E2E_VERSION || '2.1.332';
const DEFAULT_BIN = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const API_KEY = 'sk-ant-mock-000000000000000000000000';
const SYNOPSIS = '--teamctl <exe> [--prepare] [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]';

class Failure extends Error {}

module.exports = function harness({
  name, team, argv, deadline = 90, session = team ? `teamctl-${team}` : null, synopsis = SYNOPSIS,
  teamctl: teamctlFlag = true, flags = {}, pollMs = 20, dirs = [], claudeJson = {}, settings = {},
  env: makeEnv = null, ownTmux = false, mockTeamctl = true, mockLogLine = null, mockEnv = {},
  onCleanup = null,
}) {
  const usage = (msg) => {
    process.stderr.write(`${name}: ${msg}\nusage: node ${name}.js ${synopsis}\n`);
    process.exit(2);
  };
  const args = { keep: false, verbose: false, prepare: false, deadline, claudeBin: process.env.CLAUDE_E2E_BIN || process.env.CLAUDE_BIN || DEFAULT_BIN };
  if (teamctlFlag) flags = { '--teamctl': { key: 'teamctl', required: true, path: true }, ...flags };
  for (const f of Object.values(flags)) args[f.key] = f.value;
  for (let i = 0; i < argv.length; i++) {
    const need = () => { if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`); return argv[++i]; };
    switch (argv[i]) {
      case '--claude-bin': args.claudeBin = path.resolve(need()); break;
      case '--deadline': args.deadline = Number(need()); break;
      case '--keep': args.keep = true; break;
      case '--prepare': if (!teamctlFlag) usage('--prepare needs a driver that runs teamctl'); args.prepare = true; break;
      case '--verbose': case '-v': args.verbose = true; break;
      case '--help': case '-h': usage('help'); break;
      default: {
        if (!Object.hasOwn(flags, argv[i])) usage(`unknown argument ${argv[i]}`);
        const f = flags[argv[i]];
        args[f.key] = f.path ? path.resolve(need()) : need();
      }
    }
  }
  for (const [flag, f] of Object.entries(flags)) if (f.required && !args[f.key]) usage(`${flag} is required`);
  if (!(args.deadline > 0)) usage('--deadline must be a positive number of seconds');
  for (const f of Object.values(flags)) {
    const bad = f.check && f.check(args[f.key]);
    if (bad) usage(bad);
  }
  if (!fs.existsSync(args.claudeBin)) {
    process.stderr.write(`${name}: SKIP: Claude Code binary not found at ${args.claudeBin} (npm ci --prefix tests/e2e)\n`);
    process.exit(77);
  }
  if (spawnSync('tmux', ['-V'], { stdio: 'ignore' }).error) {
    process.stderr.write(`${name}: SKIP: tmux is not installed\n`);
    process.exit(77);
  }

  const T0 = Date.now();
  const now = () => Date.now();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const hex = (n) => crypto.randomBytes(n).toString('hex');
  const traceLines = [];
  const trace = (msg) => {
    const line = `[+${String(now() - T0).padStart(6)} ms] ${msg}`;
    traceLines.push(line);
    if (args.verbose) process.stderr.write(line + '\n');
  };
  const fail = (msg) => { throw new Failure(msg); };
  const check = (cond, msg) => { if (!cond) fail(msg); };
  const writeJson = (file, v) => fs.writeFileSync(file, JSON.stringify(v, null, 2));
  // JSON.parse a file; null when missing or unparsable (a torn in-place write): poll again.
  const readJson = (file) => { try { return JSON.parse(fs.readFileSync(file, 'utf8')); } catch (_) { return null; } };
  const shq = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
  const st = { root: null, mock: null, port: null, mockStderr: '', env: null, last: null };
  if (ownTmux) st.sock = `teamctl-${name}-${process.pid}-${hex(4)}`;

  async function waitFor(what, ms, fn) {
    const start = now();
    const end = Math.min(start + ms, T0 + args.deadline * 1000);
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (now() > end) fail(`timed out after ${((now() - start) / 1000).toFixed(1)} s waiting for ${what}`);
      await sleep(pollMs);
    }
  }

  // Runs `exe argv` with the test environment; resolves {code, stdout, stderr, ms} (code: the
  // exit code, or 128 + the number of the signal that ended it). `onSpawn(child)` gets the
  // process (to signal it).
  function exec(exe, argv2, extraEnv = {}, { onSpawn = null } = {}) {
    return new Promise((resolve) => {
      const t = now();
      const p = spawn(exe, argv2, {
        env: { ...st.env, ...extraEnv }, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'],
      });
      if (onSpawn) onSpawn(p);
      let out = '';
      let err = '';
      p.stdout.on('data', (d) => { out += d; });
      p.stderr.on('data', (d) => { err += d; if (args.verbose) trace(String(d).trimEnd()); });
      // Output pipes a child kept open hold `close` back: the trace shows both.
      p.on('exit', () => { if (args.verbose) trace(`${path.basename(exe)} process exited`); });
      p.on('close', (code) => {
        const r = { code, stdout: out, stderr: err, ms: now() - t };
        st.last = r;
        trace(`${path.basename(exe)} ${argv2.join(' ')} -> ${code} in ${r.ms} ms`);
        resolve(r);
      });
    });
  }
  const teamctl = (argv2, extraEnv = {}, opts = {}) => exec(args.teamctl, ['--claude-dir', st.cfg, ...argv2], extraEnv, opts);
  const lastJson = (s) => JSON.parse(s.trim().split('\n').pop());
  const tmuxArgs = ownTmux ? ['-L', st.sock, '-f', '/dev/null'] : [];
  const tmux = (...a) => spawnSync('tmux', [...tmuxArgs, ...a], { env: st.env || process.env, encoding: 'utf8', timeout: 10000 });

  // The panes of the tmux server: {id, pid, dead, status (a dead pane's exit status), cmd}.
  function panes() {
    const r = tmux('list-panes', '-a', '-F', '#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_start_command}');
    if (r.status !== 0) return [];
    return r.stdout.trim().split('\n').filter(Boolean).map((l) => {
      const [id, pid, dead, status, cmd] = l.split('\t');
      return { id, pid: Number(pid), dead: dead === '1', status, cmd: cmd || '' };
    });
  }
  function capture(target) {
    const r = tmux('capture-pane', '-p', '-J', '-t', target);
    return r.status === 0 ? r.stdout.replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim() : `(capture-pane failed: ${r.stderr})`;
  }
  const pidAlive = (pid) => { try { process.kill(pid, 0); return true; } catch (_) { return false; } };

  // The client's `claude --version` (a throwaway config dir, so it writes nothing of ours).
  function clientVersion() {
    const v = (spawnSync(args.claudeBin, ['--version'], {
      env: { PATH: process.env.PATH, HOME: st.home, CLAUDE_CONFIG_DIR: path.join(st.tmp, 'version-probe') },
      encoding: 'utf8', timeout: 20000,
    }).stdout || '').trim();
    trace(`claude --version: ${v}`);
    return v;
  }

  function inbox(member, teamName = team) {
    const v = readJson(path.join(st.cfg, 'teams', teamName, 'inboxes', `${member}.json`));
    return Array.isArray(v) ? v : null;
  }

  // How many times in all a driver sends an instruction whose permission request 2.1.332 failed
  // to deliver ("could not be delivered to the team lead (mailbox write failed)": it reads its
  // own config.json mid-write); under the load of the full test suite it failed 3 times in a
  // row once. The instruction is sent again, as a person would.
  const REQUEST_SENDS = 6;

  // Whether the mock's log holds `text` at least `n` times.
  function mockSaw(text, n = 1) {
    try {
      return fs.readFileSync(st.mockLog, 'utf8').split(text).length - 1 >= n;
    } catch (_) {
      return false;
    }
  }
  // The mock's log, one object a request.
  function mockLines() {
    try { return fs.readFileSync(st.mockLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)); } catch (_) { return []; }
  }

  // The lead (drivers with ownTmux: lead-e2e.js, transcripts-e2e.js): the real client started
  // in the driver's tmux server in st.work (st.leadPane, st.leadPid), told to form a team with
  // one teammate `worker` (mock-api.js answers `SPAWN-TEAMMATE` with TeamCreate and Agent).
  function startLead() {
    const cmd = `cd ${shq(st.work)} && exec ${shq(args.claudeBin)} --dangerously-skip-permissions`;
    trace(`tmux -L ${st.sock}: ${cmd}`);
    const r = tmux('start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';',
      'new-session', '-d', '-s', 'lead', '-x', '200', '-y', '50', '-P', '-F', '#{pane_id} #{pane_pid}', cmd);
    if (r.status !== 0) fail(`tmux new-session failed (${r.status}): ${r.stderr}`);
    const [id, pid] = r.stdout.trim().split(' ');
    st.leadPane = id;
    st.leadPid = Number(pid);
  }

  function leadAlive() {
    const p = panes().find((x) => x.id === st.leadPane);
    if (!p || p.dead) fail(`the lead is not running any more:\n${capture(st.leadPane)}`);
  }

  // The team (folder name) whose config.json lists a member `worker`: {name, cfg, worker}.
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

  // Starts the lead; once its prompt box is up (the screen stops changing), types `SPAWN-TEAMMATE
  // …` until the mock sees it (st.tTyped: when it was last typed); then waits for the team.
  // Returns {tLeadUp (the prompt box up), typed (how many times), team (as findTeam)}.
  async function leadTeam() {
    startLead();
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
    const found = await waitFor('a team whose config.json lists worker', 45000, () => { leadAlive(); return findTeam(); });
    return { tLeadUp, typed, team: found };
  }

  // `pid` and its descendants with their command lines, [{pid, cmd}] (Linux /proc).
  function processTree(pid) {
    const out = [];
    const stack = [pid];
    while (stack.length) {
      const p = stack.pop();
      let cmd;
      try { cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').join(' '); } catch (_) { continue; }
      out.push({ pid: p, cmd });
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

  // The last cost-state of a transcript, or null.
  function costState(file) {
    let last = null;
    try {
      for (const l of fs.readFileSync(file, 'utf8').split('\n')) if (l.startsWith('{"type":"cost-state"')) last = JSON.parse(l);
    } catch (_) { /* not there */ }
    return last;
  }

  // `teamctl status --json` of `teamName`, with member(name) to find a member in it.
  async function statusOf(teamName) {
    const r = await teamctl(['--team', teamName, '--json', 'status']);
    check(r.code === 0, `status exited ${r.code}: ${r.stderr}`);
    const v = lastJson(r.stdout);
    v.member = (n) => v.members.find((m) => m.name === n);
    return v;
  }

  // Waits until the team's turns are over for now: nothing unread in the lead's inbox that landed
  // in the last 5 s (a teammate's idle_notification makes the lead take a turn, up to a second
  // after it lands; 2.1.112's lead with an in-process teammate was seen leaving the teammate's
  // second idle_notification unread for good, so an older unread entry starts no turn) and no
  // request to the mock for `ms`. `what` names the moment in the wait's message.
  async function quiet(ms, what = null) {
    await waitFor(what ? `the team to be quiet (${what})` : 'the team to be quiet', 30000, () => {
      const l = mockLines();
      const lastAt = l.length ? Date.parse(l[l.length - 1].t) : 0;
      const t = findTeam();
      const lead = t && readJson(path.join(st.cfg, 'teams', t.name, 'inboxes', 'team-lead.json'));
      const unread = Array.isArray(lead) && lead.some((e) => e.read !== true && now() - Date.parse(e.timestamp) < 5000);
      return !unread && now() - lastAt > ms;
    });
  }

  let cleanedUp = false;
  function cleanup() {
    if (cleanedUp) return;
    cleanedUp = true;
    if (onCleanup) {
      try { onCleanup(st); } catch (e) { process.stderr.write(`${name}: cleanup: ${e.message}\n`); }
    }
    if (st.env) {
      // The panes' processes get SIGHUP; make sure they are gone before the temp root is.
      const pids = panes().map((p) => p.pid);
      tmux('kill-server');
      const until = now() + 3000;
      while (pids.some(pidAlive) && now() < until) spawnSync('sleep', ['0.05']);
      for (const pid of pids.filter(pidAlive)) {
        trace(`pid ${pid} survived SIGHUP, sending SIGKILL`);
        try { process.kill(pid, 'SIGKILL'); } catch (_) { /* gone */ }
      }
      if (ownTmux) {
        const dir = path.join(st.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid()}`);
        try { fs.unlinkSync(path.join(dir, st.sock)); } catch (_) { /* gone */ }
      }
    }
    if (st.mock && st.mock.exitCode === null) {
      try { st.mock.kill('SIGTERM'); } catch (_) { /* gone */ }
    }
    if (!st.root) return;
    if (args.keep) {
      process.stderr.write(`${name}: kept temp dir ${st.root}\n`);
      return;
    }
    // A client that was just shut down may still be writing its transcript for a moment.
    const until = now() + 5000;
    for (;;) {
      try {
        fs.rmSync(st.root, { recursive: true, force: true, maxRetries: 3 });
        break;
      } catch (e) {
        if (now() > until) { process.stderr.write(`${name}: could not remove ${st.root}: ${e.message}\n`); break; }
        spawnSync('sleep', ['0.1']);
      }
    }
  }

  function dumpDiagnostics(err) {
    const out = [`${name}: FAIL: ${err && err.message ? err.message : err}`];
    if (!(err instanceof Failure) && err && err.stack) out.push(err.stack);
    out.push('--- trace ---', ...traceLines);
    if (st.last) out.push('--- last command stdout ---', st.last.stdout, '--- last command stderr ---', st.last.stderr);
    if (st.env && session) {
      const r = tmux('capture-pane', '-p', '-J', '-t', `=${session}:`, '-S', '-40');
      out.push('--- tmux pane ---', r.status === 0 ? r.stdout.replace(/\n{3,}/g, '\n\n') : `(${r.stderr.trim()})`);
    } else if (st.env) {
      for (const p of panes()) {
        out.push(`--- tmux pane ${p.id} (dead=${p.dead}${p.dead ? `, exit ${p.status}` : ''}) ${p.cmd.slice(0, 300)} ---`, capture(p.id));
      }
    }
    out.push('--- mock log ---');
    try {
      const log = fs.readFileSync(st.mockLog, 'utf8').trimEnd();
      out.push(mockLogLine ? log.split('\n').map((l) => mockLogLine(JSON.parse(l))).join('\n') : log);
    } catch (_) { out.push('(none)'); }
    if (st.mockStderr) out.push('--- mock stderr ---', st.mockStderr.trimEnd());
    let teams = team ? [team] : [];
    if (!team) try { teams = fs.readdirSync(path.join(st.cfg, 'teams')); } catch (_) { /* none */ }
    for (const t of teams) {
      const teamDir = st.cfg && path.join(st.cfg, 'teams', t);
      let files = ['config.json'];
      try { files = files.concat(fs.readdirSync(path.join(teamDir, 'inboxes')).map((f) => `inboxes/${f}`)); } catch (_) { /* none */ }
      for (const f of files) {
        out.push(`--- teams/${t}/${f} ---`);
        try { out.push(fs.readFileSync(path.join(teamDir, f), 'utf8')); } catch (e) { out.push(`(${e.code})`); }
      }
    }
    process.stderr.write(out.join('\n') + '\n');
  }

  function setup() {
    st.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `teamctl-${name}-`)));
    st.home = path.join(st.root, 'home');
    st.cfg = path.join(st.root, 'claude-config');
    st.work = path.join(st.root, 'work');
    st.tmp = path.join(st.root, 'tmp');
    st.tmuxDir = path.join(st.root, 'tmux');
    for (const d of dirs) st[d] = path.join(st.root, d);
    for (const d of [st.home, st.cfg, st.work, st.tmp, st.tmuxDir, ...dirs.map((d) => st[d])]) fs.mkdirSync(d, { recursive: true });
    st.mockLog = path.join(st.root, 'mock.log');
    const extraJson = typeof claudeJson === 'function' ? claudeJson(args) : claudeJson;
    const extraSettings = typeof settings === 'function' ? settings(args) : settings;
    if (args.prepare) {
      // Only the driver's own keys: `teamctl prepare` writes the rest (see prepareConfig).
      if (Object.keys(extraJson).length) writeJson(path.join(st.cfg, '.claude.json'), extraJson);
      if (Object.keys(extraSettings).length) writeJson(path.join(st.cfg, 'settings.json'), extraSettings);
    } else {
      writeJson(path.join(st.cfg, '.claude.json'), {
        hasCompletedOnboarding: true,
        lastOnboardingVersion: CLAUDE_VERSION,
        theme: 'dark',
        bypassPermissionsModeAccepted: true,
        customApiKeyResponses: { approved: [API_KEY.trim().slice(-20)], rejected: [] },
        projects: { [st.work]: { hasTrustDialogAccepted: true } },
        ...extraJson,
      });
      writeJson(path.join(st.cfg, 'settings.json'), { skipDangerousModePermissionPrompt: true, ...extraSettings });
    }
    trace(`temp root ${st.root}`);
  }

  function startMock() {
    return new Promise((resolve, reject) => {
      const env = { PATH: process.env.PATH, MOCK_LOG: st.mockLog };
      if (mockTeamctl) env.MOCK_TEAMCTL = args.teamctl;
      for (const [k, v] of Object.entries(process.env)) if (k.startsWith('MOCK_') && k !== 'MOCK_LOG') env[k] = v;
      Object.assign(env, typeof mockEnv === 'function' ? mockEnv(args) : mockEnv);
      st.mock = spawn(process.execPath, [path.join(HERE, 'mock-api.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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

  const extraKeys = () => ({
    claudeJson: typeof claudeJson === 'function' ? claudeJson(args) : claudeJson,
    settings: typeof settings === 'function' ? settings(args) : settings,
  });

  // --prepare: `teamctl prepare` settles every start-up dialog (onboarding, the API key, trust of
  // the work dir, the bypass prompt) in the config dir, keeping the driver's own keys; a second
  // run must change nothing. Returns what it reported.
  async function prepareConfig(extra) {
    const r = await teamctl(['--json', 'prepare', '--cwd', st.work, '--skip-permissions']);
    check(r.code === 0, `teamctl prepare exited ${r.code}: ${r.stderr}`);
    const out = JSON.parse(r.stdout);
    const dialogs = out.changes.map((c) => c.dialog).sort().join(',');
    check(dialogs === 'api_key,bypass,onboarding,trust', `prepare changed ${dialogs}`);
    const cj = readJson(path.join(st.cfg, '.claude.json'));
    const se = readJson(path.join(st.cfg, 'settings.json'));
    for (const [k, v] of Object.entries(extra.claudeJson)) check(JSON.stringify(cj[k]) === JSON.stringify(v), `prepare lost .claude.json ${k}`);
    for (const [k, v] of Object.entries(extra.settings)) check(JSON.stringify(se[k]) === JSON.stringify(v), `prepare lost settings.json ${k}`);
    check(cj.customApiKeyResponses.approved.includes(API_KEY.trim().slice(-20)), 'prepare: key not approved');
    check(cj.projects[st.work].hasTrustDialogAccepted === true, 'prepare: work dir not trusted');
    const again = await teamctl(['--json', 'prepare', '--cwd', st.work, '--skip-permissions']);
    check(again.code === 0 && JSON.parse(again.stdout).changed === false, `second prepare: ${again.stdout}`);
    trace(`prepared: ${dialogs}`);
    return { changes: out.changes.length, ms: r.ms };
  }

  // Sets up, runs `body`, prints its summary (exit 0) or the diagnostics (exit 1), cleans up.
  // The summary line is {ok: true, ...summary, total_ms} (a body may set total_ms itself).
  function run(body) {
    const watchdog = setTimeout(() => {
      dumpDiagnostics(new Failure(`overall deadline of ${args.deadline} s exceeded (watchdog)`));
      cleanup();
      process.exit(1);
    }, args.deadline * 1000 + 5000);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
      process.on(sig, () => { process.stderr.write(`${name}: interrupted by ${sig}\n`); cleanup(); process.exit(130); });
    }
    (async () => {
      setup();
      await startMock();
      // What a cron job would have: a minimal environment. Only these reach teamctl, and
      // through it the tmux server and the teammates.
      const env = {
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
      if (typeof process.getuid === 'function' && process.getuid() === 0) env.IS_SANDBOX = '1';
      if (ownTmux) {
        delete env.TMUX_TMPDIR;
        Object.assign(env, {
          SHELL: '/bin/sh',
          USER: process.env.USER || os.userInfo().username,
          LOGNAME: process.env.LOGNAME || os.userInfo().username,
          CLAUDE_CONFIG_DIR: st.cfg,
          CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1',
        });
      }
      st.env = makeEnv ? makeEnv(env, st) : env;
      if (args.prepare) st.prepared = await prepareConfig(extraKeys());
      return body();
    })().then((summary) => {
      clearTimeout(watchdog);
      const line = { ok: true, ...(st.prepared ? { prepared: st.prepared } : {}), ...summary };
      cleanup();
      if (!('total_ms' in line)) line.total_ms = now() - T0;
      process.stdout.write(JSON.stringify(line) + '\n');
      process.exit(0);
    }, (err) => {
      clearTimeout(watchdog);
      dumpDiagnostics(err);
      cleanup();
      process.exit(1);
    });
  }

  return {
    Failure, args, st, CLAUDE_VERSION, API_KEY, T0, now, sleep, hex, trace, fail, check, waitFor, exec, teamctl,
    lastJson, readJson, writeJson, shq, tmux, panes, capture, clientVersion, inbox, mockSaw, mockLines, run,
    REQUEST_SENDS,
    startLead, leadAlive, findTeam, leadTeam, processTree, costState, statusOf, quiet,
  };
};
