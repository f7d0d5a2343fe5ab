#!/usr/bin/env node
'use strict';
// End-to-end test of `teamctl serve` against the REAL Claude Code 2.1.332, offline: `teamctl
// create` starts one teammate in the default permission mode (so it asks its lead, teamctl,
// before running Bash), in a private tmux server, against mock-api.js (harness.js). `teamctl
// serve` runs beside it, and its page is opened in headless Chromium (Debian's `chromium`,
// driven by playwright-core):
//   1. `Run: A-…` makes the worker ask for `echo A-… > ran-A-….txt`; the request shows on the
//      page with its command, Approve is clicked there, and the command runs (the file appears);
//   2. the answer is journaled with "via":"web" and `serve --json` tells it;
//   3. `teamctl delete demo`: the page says the team cannot be read.
//
//   node tests/e2e/serve-e2e.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>]
//                               [--deadline <seconds>] [--chromium <path>]
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude, tmux, chromium or playwright-core not installed).

const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const TEAM = 'demo';
const h = require('./harness')({
  name: 'serve-e2e', team: TEAM, argv: process.argv.slice(2), deadline: 120,
  flags: { '--chromium': { key: 'chromium', value: process.env.CHROMIUM_BIN || '/usr/bin/chromium' } },
});
const { st, now, trace, fail, check, waitFor, teamctl, lastJson, hex } = h;

let chromium;
try {
  ({ chromium } = require(path.join(__dirname, 'node_modules', 'playwright-core')));
} catch (e) {
  process.stderr.write('serve-e2e: skipped: playwright-core is not installed (npm ci --prefix tests/e2e)\n');
  process.exit(77);
}
if (!fs.existsSync(h.args.chromium)) {
  process.stderr.write(`serve-e2e: skipped: no chromium at ${h.args.chromium}\n`);
  process.exit(77);
}

let server = null;
let browser = null;
process.on('exit', () => { if (server && server.proc.exitCode === null) server.proc.kill('SIGTERM'); });

// `teamctl serve --json`, its lines collected as they come.
function serve() {
  const argv = ['--claude-dir', st.cfg, '--team', TEAM, '--json', 'serve'];
  trace(`serve: teamctl ${argv.join(' ')}`);
  const r = { lines: [], stderr: '' };
  r.proc = spawn(h.args.teamctl, argv, { env: st.env, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'] });
  let buf = '';
  r.proc.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      trace(`serve: ${line}`);
      r.lines.push(JSON.parse(line));
    }
  });
  r.proc.stderr.on('data', (d) => { r.stderr += d; trace(`serve stderr: ${String(d).trim()}`); });
  return r;
}

// How many times 2.1.332 told the model its request could not be delivered to the lead.
function undelivered() {
  try {
    return fs.readFileSync(st.mockLog, 'utf8').split('could not be delivered to the team lead').length - 1;
  } catch (_) {
    return 0;
  }
}

h.run(async () => {
  const c = await teamctl(['--json', 'create', TEAM, '--member', 'worker:You are worker. Wait for messages.',
    '--claude-bin', h.args.claudeBin, '--permission-mode', 'default', '--timeout', '30s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const created = lastJson(c.stdout);
  check(created.state === 'ready', `create state ${created.state}: ${created.reason}`);

  server = serve();
  const listening = await waitFor('serve\'s first line', 15000, () => server.lines.find((l) => l.event === 'listening'));
  browser = await chromium.launch({ executablePath: h.args.chromium, args: ['--no-sandbox'] });
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const origin = new URL(listening.url).origin;
  const elsewhere = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (new URL(u).origin === origin) return route.continue();
    elsewhere.push(u);
    return route.abort();
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(listening.url);
  await page.waitForSelector('.member', { timeout: 15000 });
  trace('the page is up');

  // 1. The worker asks; the page shows the request with its command; Approve there.
  const tok = `A-${hex(4)}`;
  const ran = path.join(st.work, `ran-${tok}.txt`);
  const t = now();
  let sends = 1;
  const base = undelivered();
  const s = await teamctl(['send', 'worker', `Run: ${tok}`]);
  if (s.code !== 0) fail(`send exited ${s.code}: ${s.stderr}`);
  const box = page.locator('article.request', { hasText: tok });
  await waitFor('the request on the page', 60000, async () => {
    if (await box.count()) return true;
    if (sends < h.REQUEST_SENDS && undelivered() >= base + sends) {
      sends += 1;
      await teamctl(['send', 'worker', `Run: ${tok}`]);
    }
    return false;
  });
  const command = await box.locator('pre.cmd').textContent();
  check(command.includes(`echo ${tok}`), `the command shown: ${command}`);
  const shownMs = now() - t;
  await box.locator('button.approve').click();
  trace('Approve clicked');
  await waitFor(`${ran} (the approved command ran)`, 30000,
    () => fs.existsSync(ran) && fs.readFileSync(ran, 'utf8').trim() === tok);
  const ranMs = now() - t;

  // 2. Journaled and told.
  const told = await waitFor('serve --json tells the answer', 10000,
    () => server.lines.find((l) => l.event === 'approved'));
  check(told.via === 'web' && told.team === TEAM && told.member === 'worker', `told ${JSON.stringify(told)}`);
  const journals = fs.readdirSync(st.root, { recursive: true }).filter((f) => String(f).endsWith('serve.jsonl'));
  check(journals.length === 1, `serve.jsonl files: ${journals}`);
  const journal = fs.readFileSync(path.join(st.root, journals[0]), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  check(journal.length === 1 && journal[0].via === 'web' && journal[0].request_id === told.request_id,
    `the journal ${JSON.stringify(journal)}`);

  // 3. The team taken down: the page says it cannot be read.
  const d = await teamctl(['delete', TEAM]);
  if (d.code !== 0) fail(`delete exited ${d.code}: ${d.stderr}`);
  await page.waitForSelector('.trouble', { timeout: 15000 });
  check(elsewhere.length === 0, `requests to another origin: ${elsewhere}`);
  check(errors.length === 0, `page errors: ${errors}`);
  await browser.close();
  server.proc.kill('SIGTERM');
  return { claude: created.claude.version, request_id: told.request_id, shown_ms: shownMs, ran_ms: ranMs, sends };
});
