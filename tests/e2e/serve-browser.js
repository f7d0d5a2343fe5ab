#!/usr/bin/env node
'use strict';
// `teamctl serve`'s page in headless Chromium (Debian's `chromium`, driven by playwright-core;
// no browser is downloaded). Checks, at a phone's width (390 px) in dark mode:
// - the page loads nothing but its own origin, logs no error, breaks no CSP rule;
// - teammate text (--shown) is on the page as text, and made no element, handler or dialog;
// - a message sent after the page loaded (`teamctl send`) shows without a reload (the time it
//   took is reported);
// - eight tabs of one browser share one stream (over HTTP/1.1 a browser opens at most six
//   connections to a host) and all show the next message; when the tab holding the stream
//   closes, another takes it over;
// - a permission request planted in the lead's inbox shows with its command, and Approve
//   (double-clicked) answers it: the page says so;
// - the same answer without the token, or from another origin's page, is refused (4xx);
// - with --read-only: no button, no message box, and a write is refused;
// - a member without a transcript shows no cost, and says why (no number passes for one).
// With --picture (a team with transcripts: the README's picture), only this, at a desktop's
// width in light mode and at a phone's in dark mode: every member shows its cost and context,
// the cost chart is drawn, no task column is narrower than 12em, and the same checks of what
// the page loads and makes; --picture takes the desktop's screenshot, --phone-picture the
// phone's (the whole page).
//
//   node tests/e2e/serve-browser.js --url <url#token=…> --lead-inbox <path> --teamctl <bin>
//        --team <name> --member <name> [--read-only] [--shown <text>]... [--chromium <path>]
//   node tests/e2e/serve-browser.js --url <url#token=…> --picture <png> [--phone-picture <png>]
//
// `teamctl` is run with this process's environment (the test's config dir). Exit 0: one JSON
// summary line on stdout ({"ok":true, "message_ms", "request_id", …}); 1: the FAIL line on
// stderr; 2: usage; 77: skipped (no chromium or no playwright-core).
const fs = require('fs');
const http = require('http');
const path = require('path');
const { execFileSync } = require('child_process');

const NAME = 'serve-browser';
const FOREIGN = 'img, iframe, frame, object, embed, link:not([rel="icon"]):not([rel="stylesheet"]),'
  + ' base, form, input, video, audio, source, svg image, svg use, foreignObject, svg script,'
  + ' template, slot, dialog, style';

function usage(msg) {
  process.stderr.write(`${NAME}: ${msg}\n`);
  process.exit(2);
}

function fail(msg) {
  process.stderr.write(`${NAME}: FAIL: ${msg}\n`);
  process.exit(1);
}

function check(cond, msg) {
  if (!cond) fail(msg);
}

function parseArgs(argv) {
  const a = { shown: [], readOnly: false, chromium: process.env.CHROMIUM_BIN || '/usr/bin/chromium' };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    const take = (k) => { if (v === undefined) usage(`${argv[i]} needs a value`); a[k] = v; i++; };
    switch (argv[i]) {
      case '--url': take('url'); break;
      case '--lead-inbox': take('leadInbox'); break;
      case '--teamctl': take('teamctl'); break;
      case '--team': take('team'); break;
      case '--member': take('member'); break;
      case '--picture': take('picture'); break;
      case '--phone-picture': take('phonePicture'); break;
      case '--chromium': take('chromium'); break;
      case '--shown': if (v === undefined) usage('--shown needs a value'); a.shown.push(v); i++; break;
      case '--read-only': a.readOnly = true; break;
      default: usage(`unknown option ${argv[i]}`);
    }
  }
  const needed = a.picture ? ['url'] : ['url', 'leadInbox', 'teamctl', 'team', 'member'];
  for (const k of needed) if (!a[k]) usage(`--${k} is required`);
  return a;
}

// Installed before the page's own code: what a script of a teammate's could do, counted.
function watchPage() {
  window.__seen = { violations: [], dialogs: 0 };
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__seen.violations.push(`${e.violatedDirective} ${e.blockedURI}`);
  });
  for (const f of ['alert', 'confirm', 'prompt', 'open', 'print']) {
    window[f] = () => { window.__seen.dialogs++; };
  }
}

async function open(browser, url, viewport, colorScheme, events) {
  const origin = new URL(url).origin;
  const context = await browser.newContext({ viewport, colorScheme });
  events.streams = 0;
  context.on('request', (r) => { if (new URL(r.url()).pathname === '/api/events') events.streams++; });
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (new URL(u).origin === origin) return route.continue();
    events.blocked.push(u);
    return route.abort();
  });
  const page = await context.newPage();
  await page.addInitScript(watchPage);
  page.on('console', (m) => { if (m.type() === 'error') events.console.push(m.text()); });
  page.on('pageerror', (e) => events.errors.push(String(e)));
  page.on('dialog', (d) => { events.errors.push(`a dialog: ${d.type()}`); d.dismiss(); });
  page.on('popup', (p) => events.errors.push(`a popup: ${p.url()}`));
  await page.goto(url);
  await page.waitForSelector('.member', { timeout: 20000 });
  return { context, page };
}

function clean(events, where) {
  check(events.blocked.length === 0, `${where}: requests to another origin: ${events.blocked.join(' ')}`);
  check(events.console.length === 0, `${where}: console errors: ${events.console.join(' | ')}`);
  check(events.errors.length === 0, `${where}: page errors: ${events.errors.join(' | ')}`);
}

// What the page is now, read inside it.
function inspect(foreign) {
  const bad = [];
  // The head is the page's own (its script, style sheet and icon); data goes in the body.
  for (const el of document.body.querySelectorAll('*')) {
    for (const at of el.attributes) {
      const n = at.name.toLowerCase();
      if (n.startsWith('on')) bad.push(`<${el.localName} ${n}>`);
      if (['src', 'srcdoc', 'action', 'formaction', 'xlink:href', 'data', 'srcset'].includes(n)) bad.push(`<${el.localName} ${n}>`);
      if (n === 'href' && !/^(#|\/)/.test(at.value)) bad.push(`<${el.localName} href=${at.value.slice(0, 40)}>`);
    }
  }
  return {
    foreign: [...document.querySelectorAll(foreign)].map((e) => e.outerHTML.slice(0, 80)),
    scripts: [...document.querySelectorAll('script')].map((s) => s.getAttribute('src')),
    bad,
    text: document.body.textContent,
    scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    innerWidth: window.innerWidth,
    seen: window.__seen,
    buttons: document.querySelectorAll('#view button').length,
    composeShown: !document.getElementById('compose').hidden,
  };
}

function checkInert(seen, a, where) {
  check(seen.foreign.length === 0, `${where}: elements from data: ${seen.foreign.join(' ')}`);
  check(seen.bad.length === 0, `${where}: attributes from data: ${seen.bad.join(' ')}`);
  check(seen.scripts.length === 1 && seen.scripts[0] === '/app.js', `${where}: scripts ${seen.scripts}`);
  check(seen.seen.dialogs === 0, `${where}: a dialog was opened`);
  check(seen.seen.violations.length === 0, `${where}: CSP violations: ${seen.seen.violations.join(' | ')}`);
  for (const s of a.shown) check(seen.text.includes(s), `${where}: not shown as text: ${JSON.stringify(s)}`);
  check(seen.scrollWidth <= seen.innerWidth, `${where}: ${seen.scrollWidth} px wide in a ${seen.innerWidth} px window`);
}

// A permission request from `member`, written into the lead's inbox as Claude Code writes one
// (a whole new file, renamed into place).
function plant(a, id, command) {
  const entries = fs.existsSync(a.leadInbox) ? JSON.parse(fs.readFileSync(a.leadInbox, 'utf8') || '[]') : [];
  const frame = { type: 'permission_request', request_id: id, agent_id: a.member, tool_name: 'Bash',
    tool_use_id: `toolu_${id}`, description: 'd', input: { command, description: 'd' }, permission_suggestions: [] };
  entries.push({ from: a.member, text: JSON.stringify(frame), timestamp: new Date().toISOString(), read: false });
  const tmp = `${a.leadInbox}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(entries, null, 2));
  fs.renameSync(tmp, a.leadInbox);
}

// What the members' cards and the task columns show, read inside the page.
function board() {
  const text = (e, sel) => { const x = e.querySelector(sel); return x ? x.textContent : null; };
  return {
    members: [...document.querySelectorAll('.member')].map((m) => ({
      name: text(m, 'strong'), cost: text(m, '.cost'), unknown: !!m.querySelector('.cost.unknown'),
      why: (m.querySelector('.cost') || {}).title || '', context: text(m, '.ctx'),
    })),
    columns: [...document.querySelectorAll('.column')].map((c) => c.getBoundingClientRect().width),
    em: parseFloat(getComputedStyle(document.body).fontSize),
    chart: !!document.querySelector('svg.chart path.total'),
  };
}

// The README's picture (--picture): a desktop in light mode, then a phone in dark mode.
async function pictures(browser, a, summary) {
  const views = [
    ['desktop', a.picture, { width: 1280, height: 1440 }, 'light', false],
    ['phone', a.phonePicture, { width: 390, height: 844 }, 'dark', true],
  ];
  for (const [where, file, viewport, scheme, fullPage] of views) {
    const events = { blocked: [], console: [], errors: [] };
    const { context, page } = await open(browser, a.url, viewport, scheme, events);
    await page.waitForSelector('svg.chart path.total', { timeout: 20000 });
    checkInert(await page.evaluate(inspect, FOREIGN), a, where);
    const b = await page.evaluate(board);
    for (const m of b.members) {
      check(!m.unknown && /^\$\d/.test(m.cost), `${where}: ${m.name} shows no cost: ${JSON.stringify(m)}`);
      check(m.context && /context/.test(m.context), `${where}: ${m.name} shows no context: ${JSON.stringify(m)}`);
    }
    check(b.chart, `${where}: no cost chart`);
    const narrow = b.columns.filter((w) => w < 12 * b.em);
    check(narrow.length === 0, `${where}: task columns narrower than 12em: ${b.columns.join(', ')} px`);
    if (file) await page.screenshot({ path: file, fullPage });
    clean(events, where);
    summary[where] = b;
    await context.close();
  }
}

// The answer from a page of another origin (a server of this driver's on 127.0.0.1): the
// browser sends it without the token (it cannot set one across origins without CORS, which
// teamctl never grants); the statuses teamctl gave.
async function fromElsewhere(browser, a, body) {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>elsewhere</title>');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const other = `http://localhost:${server.address().port}/`;
  const context = await browser.newContext();
  const page = await context.newPage();
  const statuses = [];
  page.on('response', (r) => { if (r.url().includes('/api/')) statuses.push(r.status()); });
  await page.goto(other);
  const target = new URL('/api/answer', a.url).href;
  const token = new URL(a.url).hash.replace('#token=', '');
  const results = await page.evaluate(async ({ target, body, token }) => {
    const out = [];
    for (const init of [
      { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body },
      { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body },
    ]) {
      try { const r = await fetch(target, init); out.push(r.type === 'opaque' ? 'opaque' : r.status); } catch (e) { out.push('blocked'); }
    }
    return out;
  }, { target, body, token });
  await context.close();
  server.close();
  return { results, statuses };
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let chromium;
  try { ({ chromium } = require(path.join(__dirname, 'node_modules', 'playwright-core'))); } catch (e) {
    process.stderr.write(`${NAME}: skipped: playwright-core is not installed\n`); process.exit(77);
  }
  if (!fs.existsSync(a.chromium)) { process.stderr.write(`${NAME}: skipped: no ${a.chromium}\n`); process.exit(77); }
  const browser = await chromium.launch({ executablePath: a.chromium, args: ['--no-sandbox'] });
  const summary = { ok: true };
  if (a.picture) {
    try { await pictures(browser, a, summary); } finally { await browser.close(); }
    process.stdout.write(JSON.stringify(summary) + '\n');
    return;
  }
  try {
    const events = { blocked: [], console: [], errors: [] };
    const { page } = await open(browser, a.url, { width: 390, height: 844 }, 'dark', events);
    checkInert(await page.evaluate(inspect, FOREIGN), a, 'at load');
    // No transcript here: each member's cost is unknown, and the page says why.
    for (const m of (await page.evaluate(board)).members) {
      check(m.unknown && m.why.length > 0, `a cost shown without why it is unknown: ${JSON.stringify(m)}`);
    }
    summary.url_after_load = page.url();
    check(!page.url().includes('token='), `the token stayed in the address bar: ${page.url()}`);
    clean(events, 'at load');
    // The refusals provoked below are logged by Chromium as failed loads: those are expected.
    const provoked = (m) => /status of 40[13] \((Unauthorized|Forbidden)\)/.test(m);
    const unauth = await page.evaluate(async () => (await fetch('/api/teams')).status);
    check(unauth === 401, `/api/teams without the token: ${unauth}`);
    if (a.readOnly) {
      const seen = await page.evaluate(inspect, FOREIGN);
      check(seen.buttons === 0 && !seen.composeShown, `read-only shows controls: ${seen.buttons} buttons`);
      summary.buttons = seen.buttons;
      // The answer the page would send, with the token: refused.
      const id = await page.evaluate(() => document.querySelector('article.request .id').textContent);
      const status = await page.evaluate(async (i) => (await fetch('/api/answer', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + sessionStorage.getItem('teamctl-token') },
        body: JSON.stringify({ team: document.getElementById('where').textContent, request_id: i, answer: 'approve' }),
      })).status, id);
      check(status === 403, `read-only answered ${status}`);
      summary.read_only_status = status;
    } else {
      // A message written after the page loaded.
      const text = `written after load ${Date.now()}`;
      const sentAt = Date.now();
      execFileSync(a.teamctl, ['--team', a.team, 'send', a.member, text], { stdio: 'ignore' });
      await page.waitForFunction((t) => document.body.textContent.includes(t), text, { timeout: 10000 });
      summary.message_ms = Date.now() - sentAt;
      // Eight tabs of one browser (over HTTP/1.1 it opens at most six connections to a host):
      // one stream between them, and every tab live.
      const tabs = [];
      for (let i = 0; i < 7; i++) {
        const t = await page.context().newPage();
        await t.goto(a.url);
        await t.waitForSelector('.member', { timeout: 20000 });
        tabs.push(t);
      }
      const tabText = `seen in every tab ${Date.now()}`;
      execFileSync(a.teamctl, ['--team', a.team, 'send', a.member, tabText], { stdio: 'ignore' });
      for (const t of [page, ...tabs]) {
        await t.waitForFunction((x) => document.body.textContent.includes(x), tabText, { timeout: 10000 });
      }
      summary.tabs = tabs.length + 1;
      summary.streams = events.streams;
      check(events.streams === 1, `${tabs.length + 1} tabs opened ${events.streams} streams`);
      for (const t of tabs.slice(1)) await t.close();
      const heir = tabs[0];
      // A request planted now, shown with its command, approved with a double click.
      const id = `perm-${Date.now()}-web1234`;
      const command = 'printf served > approved.txt <img src=x onerror=alert(7)>';
      plant(a, id, command);
      const box = page.locator('article.request', { hasText: id });
      await box.waitFor({ timeout: 10000 });
      check((await box.locator('pre.cmd').textContent()) === command, 'the command is not shown as it is');
      const body = JSON.stringify({ team: a.team, request_id: id, answer: 'approve' });
      const noToken = await page.evaluate(async (b) => (await fetch('/api/answer', {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: b })).status, body);
      check(noToken === 401, `an answer without the token: ${noToken}`);
      const elsewhere = await fromElsewhere(browser, a, body);
      // The browser either never lets the answer out (no CORS: blocked) or teamctl refuses it.
      const refused = (r) => r === 'blocked' || (typeof r === 'number' && r >= 400 && r < 500);
      check(elsewhere.results.every(refused) && elsewhere.statuses.every(refused),
        `from another origin: ${JSON.stringify(elsewhere)}`);
      summary.elsewhere = elsewhere;
      await box.locator('button.approve').dblclick();
      await page.waitForFunction((i) => document.getElementById('notice').textContent.includes(`approved ${i}`), id, { timeout: 10000 });
      await page.waitForFunction((i) => !document.getElementById('view').textContent.includes(i), id, { timeout: 10000 });
      summary.request_id = id;
      checkInert(await page.evaluate(inspect, FOREIGN), a, 'after the answer');
      // The tab that held the stream closes: another takes it over and stays live.
      await page.close();
      const lastText = `after the leading tab closed ${Date.now()}`;
      execFileSync(a.teamctl, ['--team', a.team, 'send', a.member, lastText], { stdio: 'ignore' });
      await heir.waitForFunction((x) => document.body.textContent.includes(x), lastText, { timeout: 10000 });
      check(events.streams === 2, `after the handover: ${events.streams} streams`);
    }
    events.console = events.console.filter((m) => !provoked(m));
    clean(events, 'the page');
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(summary) + '\n');
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
