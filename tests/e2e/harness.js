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
// --verbose. Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on
// stderr), 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { spawn, spawnSync } = require('child_process');

const HERE = __dirname;
const CLAUDE_VERSION = '2.1.332';
const DEFAULT_BIN = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const API_KEY = 'sk-ant-mock-000000000000000000000000';
const POLL_MS = 20;

class Failure extends Error {}

module.exports = function harness({ name, team, argv, deadline = 90 }) {
  const usage = (msg) => {
    process.stderr.write(`${name}: ${msg}\nusage: node ${name}.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]\n`);
    process.exit(2);
  };
  const args = { keep: false, verbose: false, deadline, claudeBin: process.env.CLAUDE_BIN || DEFAULT_BIN };
  for (let i = 0; i < argv.length; i++) {
    const need = () => { if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`); return argv[++i]; };
    switch (argv[i]) {
      case '--teamctl': args.teamctl = path.resolve(need()); break;
      case '--claude-bin': args.claudeBin = path.resolve(need()); break;
      case '--deadline': args.deadline = Number(need()); break;
      case '--keep': args.keep = true; break;
      case '--verbose': case '-v': args.verbose = true; break;
      default: usage(`unknown argument ${argv[i]}`);
    }
  }
  if (!args.teamctl) usage('--teamctl is required');
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

  // Runs `exe argv` with the test environment; resolves {code, stdout, stderr, ms}.
  function exec(exe, argv2, extraEnv = {}) {
    return new Promise((resolve) => {
      const t = now();
      const p = spawn(exe, argv2, {
        env: { ...st.env, ...extraEnv }, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      p.stdout.on('data', (d) => { out += d; });
      p.stderr.on('data', (d) => { err += d; });
      p.on('close', (code) => {
        const r = { code, stdout: out, stderr: err, ms: now() - t };
        trace(`${path.basename(exe)} ${argv2.join(' ')} -> ${code} in ${r.ms} ms`);
        resolve(r);
      });
    });
  }
  const teamctl = (argv2, extraEnv = {}) => exec(args.teamctl, ['--claude-dir', st.cfg, ...argv2], extraEnv);
  const lastJson = (s) => JSON.parse(s.trim().split('\n').pop());
  const tmux = (...a) => spawnSync('tmux', a, { env: st.env, encoding: 'utf8', timeout: 10000 });

  function inbox(member, teamName = team) {
    try {
      const v = JSON.parse(fs.readFileSync(path.join(st.cfg, 'teams', teamName, 'inboxes', `${member}.json`), 'utf8'));
      return Array.isArray(v) ? v : null;
    } catch (_) {
      return null;
    }
  }

  // Whether the mock's log holds `text` at least `n` times.
  function mockSaw(text, n = 1) {
    try {
      return fs.readFileSync(st.mockLog, 'utf8').split(text).length - 1 >= n;
    } catch (_) {
      return false;
    }
  }

  let cleanedUp = false;
  function cleanup() {
    if (cleanedUp) return;
    cleanedUp = true;
    if (st.env) tmux('kill-server');
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
    if (st.env) {
      const r = tmux('capture-pane', '-p', '-J', '-t', `=teamctl-${team}:`, '-S', '-40');
      out.push('--- tmux pane ---', r.status === 0 ? r.stdout.replace(/\n{3,}/g, '\n\n') : `(${r.stderr.trim()})`);
    }
    out.push('--- mock log ---');
    try { out.push(fs.readFileSync(st.mockLog, 'utf8').trimEnd()); } catch (_) { out.push('(none)'); }
    if (st.mockStderr) out.push('--- mock stderr ---', st.mockStderr);
    const teamDir = st.cfg && path.join(st.cfg, 'teams', team);
    let files = ['config.json'];
    try { files = files.concat(fs.readdirSync(path.join(teamDir, 'inboxes')).map((f) => `inboxes/${f}`)); } catch (_) { /* none */ }
    for (const f of files) {
      out.push(`--- teams/${team}/${f} ---`);
      try { out.push(fs.readFileSync(path.join(teamDir, f), 'utf8')); } catch (e) { out.push(`(${e.code})`); }
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
        env: { PATH: process.env.PATH, MOCK_LOG: st.mockLog, MOCK_TEAMCTL: args.teamctl },
        stdio: ['ignore', 'pipe', 'pipe'],
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

  // Sets up, runs `body`, prints its summary (exit 0) or the diagnostics (exit 1), cleans up.
  function run(body) {
    const watchdog = setTimeout(() => {
      dumpDiagnostics(new Failure(`overall deadline of ${args.deadline} s exceeded (watchdog)`));
      cleanup();
      process.exit(1);
    }, args.deadline * 1000 + 5000);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
      process.on(sig, () => { cleanup(); process.exit(130); });
    }
    (async () => {
      setup();
      await startMock();
      // What a cron job would have: a minimal environment. Only these reach teamctl, and
      // through it the tmux server and the teammates.
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
      return body();
    })().then((summary) => {
      clearTimeout(watchdog);
      cleanup();
      process.stdout.write(JSON.stringify({ ok: true, ...summary, total_ms: now() - T0 }) + '\n');
      process.exit(0);
    }, (err) => {
      clearTimeout(watchdog);
      dumpDiagnostics(err);
      cleanup();
      process.exit(1);
    });
  }

  return {
    args, st, CLAUDE_VERSION, now, sleep, hex, trace, fail, check, waitFor, exec, teamctl,
    lastJson, tmux, inbox, mockSaw, run,
  };
};
