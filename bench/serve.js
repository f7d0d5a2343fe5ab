#!/usr/bin/env node
'use strict';
// `teamctl serve` under pages: how long a change takes to show on the page, with 1 page open
// and with 50; the server's memory serving 10 teams of 10 members; its CPU while idle with 50
// pages open. Run by hand (docs/performance.md, "The live page" has the figures):
//
//   cargo build --release
//   node bench/serve.js [--bin target/release/teamctl] [--pages 50] [--rounds 20]
//                       [--chromium /usr/bin/chromium] [--idle-seconds 30] [--responses 300]
//
// Everything lives in a temp dir (removed after), with a hermetic environment (HOME, XDG_* and
// CLAUDE_CONFIG_DIR in it). The teams are made with `teamctl create --launch none` (teamctl
// leads them, no Claude Code runs). Each page is its own browser context of headless
// Chromium (Debian's, driven by tests/e2e's playwright-core), so each holds a stream of its own:
// the worst case for the server (the tabs of one browser share one stream).
//
// Each member has a transcript of --responses API responses (about 1 KB a line, spread over
// the three hours before the run), so the server reads them all at start for the cost over
// time and keeps every response: the time until every team's first picture is out (`start`)
// and the memory count them. A response round appends one response to a member's transcript
// and times it until its text is the member's "doing" on the page (the transcripts' growth is
// read at most every 250 ms).
//
// Latency: a round sends one message (`teamctl send`) to a member of team t0 and takes, in
// every open page, the time from just before the send until the text is in the page (a
// MutationObserver in the page, Date.now() on both sides: one machine, one clock); p50 and p90
// over all pages and rounds. The same with 50 streams read by this process and no browser
// (the server's side alone: the 50 pages share two cores with Chromium's renderers). Memory: VmRSS of the server from /proc once every team is served
// and the pages are open. CPU: utime+stime of the server from /proc/PID/stat over
// --idle-seconds with the pages open and nothing changing.

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, execFileSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..');
const args = { bin: path.join(ROOT, 'target/release/teamctl'), pages: 50, rounds: 20,
  chromium: process.env.CHROMIUM_BIN || '/usr/bin/chromium', idle: 30, teams: 10, members: 10,
  responses: 300 };
for (let i = 2; i < process.argv.length; i += 2) {
  const [k, v] = [process.argv[i], process.argv[i + 1]];
  if (k === '--bin') args.bin = path.resolve(v);
  else if (k === '--pages') args.pages = Number(v);
  else if (k === '--rounds') args.rounds = Number(v);
  else if (k === '--chromium') args.chromium = v;
  else if (k === '--idle-seconds') args.idle = Number(v);
  else if (k === '--responses') args.responses = Number(v);
  else { process.stderr.write(`unknown option ${k}\n`); process.exit(2); }
}
const { chromium } = require(path.join(ROOT, 'tests/e2e/node_modules/playwright-core'));

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-bench-'));
const env = {
  PATH: process.env.PATH, HOME: path.join(tmp, 'home'), CLAUDE_CONFIG_DIR: path.join(tmp, 'claude'),
  XDG_DATA_HOME: path.join(tmp, 'data'), XDG_CONFIG_HOME: path.join(tmp, 'config'), LANG: 'C.UTF-8',
};
fs.mkdirSync(env.HOME);
fs.mkdirSync(env.CLAUDE_CONFIG_DIR);
const teamctl = (...a) => execFileSync(args.bin, a, { env, stdio: ['ignore', 'pipe', 'pipe'] });

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

function rssKb(pid) {
  return Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
}

function cpuTicks(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}

// One API response of `member` in `team` at `ms`, as Claude Code writes it (trimmed), about
// 1 KB with its text.
function response(team, member, id, ms, text) {
  return JSON.stringify({ type: 'assistant', timestamp: new Date(ms).toISOString(), teamName: team,
    agentName: member, sessionId: `s-${team}-${member}`, uuid: id,
    message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'end_turn',
      content: [{ type: 'text', text }],
      usage: { input_tokens: 2000, cache_read_input_tokens: 40000, cache_creation_input_tokens: 800, output_tokens: 400 } } }) + '\n';
}

// The transcript of `member` of `team` (in its cwd's project folder, as Claude Code names it).
function transcriptOf(team, member) {
  const cfg = JSON.parse(fs.readFileSync(path.join(env.CLAUDE_CONFIG_DIR, 'teams', team, 'config.json'), 'utf8'));
  const cwd = cfg.members.find((m) => m.name === member).cwd;
  const dir = path.join(env.CLAUDE_CONFIG_DIR, 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'));
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `session-${team}-${member}.jsonl`);
}

function transcripts() {
  const now = Date.now();
  const filler = 'Reading the code and running the tests. '.repeat(12);
  for (let t = 0; t < args.teams; t++) {
    for (let m = 0; m < args.members; m++) {
      let text = '';
      for (let r = 0; r < args.responses; r++) {
        const ms = now - 3 * 3600 * 1000 + (r * 3 * 3600 * 1000) / args.responses;
        text += response(`t${t}`, `m${m}`, `msg_t${t}_m${m}_${r}`, ms, filler);
      }
      fs.writeFileSync(transcriptOf(`t${t}`, `m${m}`), text);
    }
  }
}

async function main() {
  for (let t = 0; t < args.teams; t++) {
    const members = [];
    for (let m = 0; m < args.members; m++) members.push('--member', `m${m}:You are member ${m}.`);
    teamctl('create', `t${t}`, '--launch', 'none', ...members);
  }
  transcripts();
  const started = Date.now();
  const server = spawn(args.bin, ['--json', 'serve', '--all-teams'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise((resolve) => {
    let buf = '';
    server.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)));
    });
  });
  const base = first.url.split('#')[0];
  const url = `${base}#team=t0&token=${first.url.split('#token=')[1]}`;
  // Until every team's first picture is out (its transcripts read from their start).
  const token = first.url.split('#token=')[1];
  for (;;) {
    const res = await fetch(`${base}api/teams`, { headers: { Authorization: `Bearer ${token}` } });
    const got = await res.json();
    if (got.teams.length === args.teams) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const browser = await chromium.launch({ executablePath: args.chromium, args: ['--no-sandbox'] });
  const pages = [];
  const out = { teams: args.teams, members: args.members, responses_each: args.responses,
    start_ms: Date.now() - started, rss_mb_no_page: +(rssKb(server.pid) / 1024).toFixed(1) };
  async function open(n) {
    while (pages.length < n) {
      const ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const page = await ctx.newPage();
      await page.goto(url);
      await page.waitForSelector('.member', { timeout: 30000 });
      pages.push(page);
    }
  }
  async function rounds(label) {
    const lat = [];
    for (let r = 0; r < args.rounds; r++) {
      const text = `bench ${label} round ${r} ${Date.now()}`;
      const seen = pages.map((p) => p.evaluate((t) => new Promise((resolve) => {
        const look = () => document.getElementById('view').textContent.includes(t);
        if (look()) { resolve(Date.now()); return; }
        const o = new MutationObserver(() => { if (look()) { o.disconnect(); resolve(Date.now()); } });
        o.observe(document.getElementById('view'), { childList: true, subtree: true, characterData: true });
      }), text));
      await new Promise((r2) => setTimeout(r2, 50));
      const t0 = Date.now();
      teamctl('--team', 't0', 'send', 'm1', text);
      for (const at of await Promise.all(seen)) lat.push(at - t0);
      await new Promise((r2) => setTimeout(r2, 300));
    }
    return { p50_ms: pct(lat, 50), p90_ms: pct(lat, 90), max_ms: Math.max(...lat), samples: lat.length };
  }
  // A response appended to m1's transcript, until its text is m1's doing on the page.
  async function responseRounds() {
    const file = transcriptOf('t0', 'm1');
    const lat = [];
    for (let r = 0; r < args.rounds; r++) {
      const text = `bench response ${r} ${Date.now()}`;
      const seen = pages.map((p) => p.evaluate((t) => new Promise((resolve) => {
        const look = () => document.getElementById('view').textContent.includes(t);
        if (look()) { resolve(Date.now()); return; }
        const o = new MutationObserver(() => { if (look()) { o.disconnect(); resolve(Date.now()); } });
        o.observe(document.getElementById('view'), { childList: true, subtree: true, characterData: true });
      }), text));
      await new Promise((r2) => setTimeout(r2, 50));
      const t0 = Date.now();
      fs.appendFileSync(file, response('t0', 'm1', `msg_bench_${r}_${t0}`, t0, text));
      for (const at of await Promise.all(seen)) lat.push(at - t0);
      await new Promise((r2) => setTimeout(r2, 300));
    }
    return { p50_ms: pct(lat, 50), p90_ms: pct(lat, 90), max_ms: Math.max(...lat), samples: lat.length };
  }
  // The server's side alone: 50 streams read in this process (no browser), each timed until
  // its event carries the text.
  async function streams(n) {
    const token = first.url.split('#token=')[1];
    const readers = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${base}api/events`, { headers: { Authorization: `Bearer ${token}` } });
      const reader = res.body.getReader();
      const st = { buf: '', want: null, seen: null };
      (async () => {
        const dec = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          st.buf = (st.buf + dec.decode(value, { stream: true })).slice(-200000);
          if (st.want && !st.seen && st.buf.includes(st.want)) st.seen = Date.now();
        }
      })();
      readers.push({ st, reader });
    }
    await new Promise((r) => setTimeout(r, 500));
    const lat = [];
    for (let r = 0; r < args.rounds; r++) {
      const text = `bench streams round ${r} ${Date.now()}`;
      for (const x of readers) { x.st.want = text; x.st.seen = null; x.st.buf = ''; }
      const t0 = Date.now();
      teamctl('--team', 't0', 'send', 'm1', text);
      const until = Date.now() + 10000;
      while (readers.some((x) => !x.st.seen) && Date.now() < until) await new Promise((r2) => setTimeout(r2, 2));
      for (const x of readers) lat.push((x.st.seen || until) - t0);
      await new Promise((r2) => setTimeout(r2, 300));
    }
    for (const x of readers) x.reader.cancel();
    return { p50_ms: pct(lat, 50), p90_ms: pct(lat, 90), max_ms: Math.max(...lat), samples: lat.length };
  }
  out.streams_50_no_browser = await streams(50);
  await open(1);
  out.one_page = await rounds('one');
  out.response_one_page = await responseRounds();
  await open(args.pages);
  out.pages = args.pages;
  out.many_pages = await rounds('many');
  out.rss_mb = +(rssKb(server.pid) / 1024).toFixed(1);
  const hz = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  const c0 = cpuTicks(server.pid);
  await new Promise((r) => setTimeout(r, args.idle * 1000));
  const c1 = cpuTicks(server.pid);
  out.idle_cpu = { seconds: args.idle, cpu_ms: Math.round(((c1 - c0) / hz) * 1000),
    percent: +((((c1 - c0) / hz) / args.idle) * 100).toFixed(2) };
  out.rss_mb_after_idle = +(rssKb(server.pid) / 1024).toFixed(1);
  await browser.close();
  server.kill('SIGTERM');
  process.stdout.write(JSON.stringify(out) + '\n');
}

main()
  .catch((e) => { process.stderr.write(`${e.stack || e}\n`); process.exitCode = 1; })
  .finally(() => fs.rmSync(tmp, { recursive: true, force: true }));
