#!/usr/bin/env node
'use strict';
// Probe (not a test): how a real interactive 2.1.332 lead behaves when started headless in a
// private tmux server against mock-api.js. Prints a timeline of what shows in its files and
// pane. Used to design `teamctl run`; see /work/notes/run.md.
//
//   node tests/e2e/probe-lead.js [--mode tmux|in-process] [--prompt TEXT] [--type]
//        [--dialogs onboarding,apikey,trust,bypass] [--end exit|term|hup|none] [--secs N]
//        [--keep] [--default-perms [--answer KEY[,KEY...]]]
//
// --type: start `claude` without a prompt and type it into the pane once ready (instead of
// the positional argument). --dialogs: leave out the config keys that skip those dialogs.
// --default-perms: the lead in the default permission mode; --answer: tmux key names sent once
// to its pane when a permission prompt shows (e.g. `--prompt "Exec: echo hi > hi.txt"
// --answer Enter`, or `1`, `2`, `3`, `Escape`, `Down,Enter`); the work dir's files are logged
// after.

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');

const HERE = __dirname;
const BIN = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const KEY = 'sk-ant-mock-000000000000000000000000';
const a = process.argv.slice(2);
const opt = (k, d) => { const i = a.indexOf(k); return i >= 0 ? a[i + 1] : d; };
const mode = opt('--mode', 'tmux');
const prompt = opt('--prompt', 'Spawn: worker TOK1');
const dialogs = (opt('--dialogs', '') || '').split(',').filter(Boolean);
const end = opt('--end', 'exit');
const secs = Number(opt('--secs', '12'));
const typeIt = a.includes('--type');
const T0 = Date.now();
const log = (m) => process.stdout.write(`[+${String(Date.now() - T0).padStart(6)}] ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'teamctl-probe-')));
const dirs = {};
for (const d of ['home', 'cfg', 'work', 'tmp', 'tmux']) { dirs[d] = path.join(root, d); fs.mkdirSync(dirs[d]); }
const cj = { theme: 'dark' };
if (!dialogs.includes('onboarding')) Object.assign(cj, { hasCompletedOnboarding: true, lastOnboardingVersion: '2.1.332' });
if (!dialogs.includes('apikey')) cj.customApiKeyResponses = { approved: [KEY.slice(-20)], rejected: [] };
if (!dialogs.includes('trust')) cj.projects = { [dirs.work]: { hasTrustDialogAccepted: true } };
if (!dialogs.includes('bypass') && !dialogs.includes('bypass-claudejson')) cj.bypassPermissionsModeAccepted = true;
fs.writeFileSync(path.join(dirs.cfg, '.claude.json'), JSON.stringify(cj, null, 2));
const settings = {};
if (!dialogs.includes('bypass') && !dialogs.includes('bypass-settings')) settings.skipDangerousModePermissionPrompt = true;
if (mode === 'tmux') settings.teammateMode = 'tmux';
fs.writeFileSync(path.join(dirs.cfg, 'settings.json'), JSON.stringify(settings, null, 2));

const mock = spawn(process.execPath, [path.join(HERE, 'mock-api.js')], {
  env: { PATH: process.env.PATH, MOCK_LOG: path.join(root, 'mock.log') }, stdio: ['ignore', 'pipe', 'inherit'],
});
const env = {
  PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: dirs.home, TMPDIR: dirs.tmp, TMUX_TMPDIR: dirs.tmux,
  TERM: 'xterm-256color', CLAUDE_CONFIG_DIR: dirs.cfg, ANTHROPIC_API_KEY: KEY, DISABLE_TELEMETRY: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ENABLE_TOOL_SEARCH: 'false', IS_SANDBOX: '1',
};
const tmux = (...x) => spawnSync('tmux', x, { env, encoding: 'utf8' });
const pane = () => tmux('capture-pane', '-p', '-t', '=lead:').stdout.split('\n').filter((l) => l.trim()).join('\n');
const q = (s) => `'${s.replace(/'/g, "'\\''")}'`;

function snapshot() {
  const out = {};
  const teams = path.join(dirs.cfg, 'teams');
  try { out.teams = fs.readdirSync(teams); } catch (_) { out.teams = []; }
  for (const t of out.teams) {
    try {
      const c = JSON.parse(fs.readFileSync(path.join(teams, t, 'config.json'), 'utf8'));
      out[t] = c.members.map((m) => `${m.name}:${m.backendType}:${m.tmuxPaneId}:active=${m.isActive}`).join(' ');
    } catch (e) { out[t] = `(${e.code || e.message})`; }
    try {
      for (const f of fs.readdirSync(path.join(teams, t, 'inboxes'))) {
        const v = JSON.parse(fs.readFileSync(path.join(teams, t, 'inboxes', f), 'utf8'));
        out[`${t}/${f}`] = v.map((e) => `${e.from}:${e.text.slice(0, 40)}:read=${e.read}`).join(' | ');
      }
    } catch (_) { /* none */ }
  }
  try {
    for (const f of fs.readdirSync(path.join(dirs.cfg, 'sessions'))) {
      out[`sessions/${f}`] = fs.readFileSync(path.join(dirs.cfg, 'sessions', f), 'utf8').replace(/\s+/g, ' ');
    }
  } catch (_) { /* none */ }
  try {
    for (const p of fs.readdirSync(path.join(dirs.cfg, 'projects'))) {
      for (const f of fs.readdirSync(path.join(dirs.cfg, 'projects', p))) {
        const fp = path.join(dirs.cfg, 'projects', p, f);
        if (!f.endsWith('.jsonl')) { out[`projects/${p}/${f}`] = 'dir'; continue; }
        const lines = fs.readFileSync(fp, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
        out[`projects/${p}/${f}`] = lines.map((e) => {
          const m = e.message || {};
          const c = Array.isArray(m.content) ? m.content.map((b) => b.type + (b.type === 'text' ? `(${b.text.slice(0, 30)})` : '')).join('+') : String(m.content || '').slice(0, 30);
          return `${e.type}${m.stop_reason ? '/' + m.stop_reason : ''}[${c}]`;
        }).join(' ');
      }
    }
  } catch (_) { /* none */ }
  return out;
}

async function main() {
  await new Promise((r) => mock.stdout.once('data', (d) => { env.ANTHROPIC_BASE_URL = `http://127.0.0.1:${JSON.parse(d).port}`; r(); }));
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${q(v)}`).join(' ');
  const cmd = `cd ${q(dirs.work)} && exec env ${envArgs} CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 ${q(BIN)}${a.includes('--default-perms') ? ' --permission-mode default' : ' --dangerously-skip-permissions'}${typeIt ? '' : ' ' + q(prompt)}`;
  const r = tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'lead', '-x', '200', '-y', '50', cmd);
  log(`tmux new-session: ${r.status} ${r.stderr}`);
  tmux('set-option', '-g', 'remain-on-exit', 'on');
  let prev = {};
  let prevPane = '';
  let answered = false;
  let typed = false;
  const until = Date.now() + secs * 1000;
  while (Date.now() < until) {
    const s = snapshot();
    for (const k of new Set([...Object.keys(prev), ...Object.keys(s)])) {
      if (JSON.stringify(prev[k]) !== JSON.stringify(s[k])) log(`${k}: ${JSON.stringify(s[k])}`);
    }
    prev = s;
    const p = pane();
    if (p !== prevPane && !a.includes('--quiet-pane')) { log(`PANE:\n${p}\n---`); prevPane = p; }
    if (opt('--answer') && !answered && /Do you want to/.test(p) && /Esc to cancel/.test(p)) {
      await sleep(500);
      for (const k of opt('--answer').split(',')) tmux('send-keys', '-t', '=lead:', k);
      answered = true;
      log(`answered the prompt with ${opt('--answer')}`);
    }
    if (typeIt && !typed && /❯|>/.test(p) && Date.now() - T0 > 1500) {
      tmux('send-keys', '-t', '=lead:', '-l', prompt);
      tmux('send-keys', '-t', '=lead:', 'Enter');
      typed = true;
      log('typed prompt');
    }
    await sleep(150);
  }
  log(`PANE before end:\n${pane()}`);
  log(`work dir: ${fs.readdirSync(dirs.work).map((f) => `${f}=${JSON.stringify(fs.readFileSync(path.join(dirs.work, f), 'utf8'))}`).join(' ')}`);
  const lp = tmux('list-panes', '-a', '-F', '#{pane_id} #{pane_pid} #{pane_dead} #{pane_dead_status} #{pane_current_command}');
  log(`panes before end: ${lp.stdout}`);
  if (end === 'exit') { tmux('send-keys', '-t', '=lead:', '-l', '/exit'); tmux('send-keys', '-t', '=lead:', 'Enter'); }
  if (end === 'term' || end === 'hup') {
    const pid = lp.stdout.split('\n')[0].split(' ')[1];
    process.kill(Number(pid), end === 'term' ? 'SIGTERM' : 'SIGHUP');
  }
  const t1 = Date.now();
  for (let i = 0; i < 40; i++) {
    await sleep(150);
    if (end === 'exit' && /Enter to confirm/.test(pane()) && !prev.confirmed) {
      log(`exit dialog:\n${pane()}`);
      tmux('send-keys', '-t', '=lead:', 'Enter');
      prev.confirmed = true;
    }
    const s = snapshot();
    for (const k of new Set([...Object.keys(prev), ...Object.keys(s)])) {
      if (JSON.stringify(prev[k]) !== JSON.stringify(s[k])) log(`${k}: ${JSON.stringify(s[k])}`);
    }
    prev = s;
  }
  log(`ps after end: ${spawnSync('sh', ['-c', `ps -eo pid,ppid,stat,args | grep -F ${q(BIN)} | grep -v grep | cut -c1-120`], { encoding: 'utf8' }).stdout}`);
  log(`after end (${Date.now() - t1} ms): ${tmux('list-panes', '-a', '-F', '#{pane_id} #{pane_pid} #{pane_dead} #{pane_dead_status}').stdout}`);
  log(`PANE at end:\n${pane()}`);
  log(`ps: ${spawnSync('sh', ['-c', `ps -eo pid,ppid,args | grep -F ${q(BIN)} | grep -v grep`], { encoding: 'utf8' }).stdout}`);
  log(`mock log:\n${fs.readFileSync(path.join(root, 'mock.log'), 'utf8').split('\n').filter(Boolean).map((l) => { const j = JSON.parse(l); return `${j.n} ${j.ua} ${JSON.stringify(j.reply)} ${j.why}`; }).join('\n')}`);
  tmux('kill-server');
  mock.kill();
  if (a.includes('--keep')) log(`kept ${root}`); else fs.rmSync(root, { recursive: true, force: true });
}
main().catch((e) => { console.error(e); tmux('kill-server'); mock.kill(); process.exit(1); });
