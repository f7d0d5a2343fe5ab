#!/usr/bin/env node
'use strict';
// A record's report.html opened in headless Chromium (Debian's `chromium`, driven by the npm
// package playwright-core with that browser; no browser is downloaded): the page loads nothing
// but itself, logs no console or page error, embeds the record as JSON whose members' costs
// equal summary.json's, draws its charts, fits a 390 px screen (in dark mode), prints, and no
// teammate text in it became markup (no element, link, handler or global from it; it is shown
// as text).
//
//   node tests/e2e/report-browser.js --page <report.html> --summary <summary.json>
//        [--shown <text>]... [--chromium <path>]
//   node tests/e2e/report-browser.js --page <fleet.html> --fleet <fleet.json> [--shown <text>]...
//
// --fleet: the page is `teamctl report --html`'s, checked against `report --json`'s document
// (embedded whole as #teamctl-fleet); its only links are to records' own report.html, relative.
// --shown: teammate text that must be on the page, as text (repeatable). The browser is
// --chromium, else $CHROMIUM_BIN, else /usr/bin/chromium. Exit 0: one JSON summary line on
// stdout ({"ok":true, "requests", "load_ms", …}); 1: the FAIL line on stderr; 2: usage; 77:
// skipped (no chromium or no playwright-core: `npm ci --prefix tests/e2e`).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { pathToFileURL } = require('url');

const NAME = 'report-browser';
// Which page: a record's (its JSON #teamctl-record, no link) or a fleet's (set in main).
let MODE = { dataId: 'teamctl-record', links: false };
// The shapes a chart draws with.
const SHAPES = 'path, polyline, polygon, line, rect, circle, ellipse, text';
// Elements the page never writes from data: any of them came from teammate text.
const FOREIGN = 'body style, a, img, iframe, frame, object, embed, link, base, form,'
  + ' input, button, textarea, select, video, audio, source, meta:not(head > meta),'
  + ' svg image, svg use, foreignObject, svg script, svg a, template, slot, dialog';

function usage(msg) {
  process.stderr.write(`${NAME}: ${msg}\nusage: node tests/e2e/report-browser.js --page <report.html>`
    + ' --summary <summary.json> [--shown <text>]... [--chromium <path>]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { shown: [], chromium: process.env.CHROMIUM_BIN || '/usr/bin/chromium' };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--page': a.page = v; i++; break;
      case '--summary': a.summary = v; i++; break;
      case '--fleet': a.fleet = v; i++; break;
      case '--shown': a.shown.push(v); i++; break;
      case '--chromium': a.chromium = v; i++; break;
      case '--help': usage('the options');
      default: usage(`unknown option ${argv[i]}`);
    }
    if (v === undefined) usage(`${argv[i]} needs a value`);
  }
  if (!a.page || !a.summary === !a.fleet) usage('--page and one of --summary or --fleet are required');
  return a;
}

function fail(msg) {
  process.stderr.write(`${NAME}: FAIL: ${msg}\n`);
  process.exit(1);
}

function check(cond, msg) {
  if (!cond) fail(msg);
}

function skip(msg) {
  process.stderr.write(`${NAME}: skipped: ${msg}\n`);
  process.exit(77);
}

// Installed before the page's own code: what the page could do with a script, counted.
function watchPage() {
  window.__teamctlSeen = { violations: [], dialogs: 0 };
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__teamctlSeen.violations.push(`${e.violatedDirective} ${e.blockedURI}`);
  });
  for (const f of ['alert', 'confirm', 'prompt', 'open', 'print']) {
    window[f] = () => { window.__teamctlSeen.dialogs++; };
  }
}

// One page in a fresh context, with every request, console error and page error recorded.
// Any request but the document itself is aborted, so nothing leaves even if the CSP did not hold.
async function open(browser, url, viewport, events, colorScheme = 'light') {
  const context = await browser.newContext({ viewport, colorScheme, javaScriptEnabled: true });
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u === url) return route.continue();
    events.blocked.push(u);
    return route.abort();
  });
  const page = await context.newPage();
  await page.addInitScript(watchPage);
  page.on('request', (r) => events.requests.push(r.url()));
  page.on('websocket', (w) => events.requests.push(w.url()));
  page.on('console', (m) => { if (m.type() === 'error') events.console.push(m.text()); });
  page.on('pageerror', (e) => events.errors.push(String(e)));
  page.on('dialog', (d) => { events.errors.push(`a dialog: ${d.type()}`); d.dismiss(); });
  page.on('popup', (p) => events.errors.push(`a popup: ${p.url()}`));
  return { context, page };
}

// The own property names of a blank page's window, to compare the report's with: a blank
// file:// page (a secure context, as the report is), written beside nothing of the record's.
async function blankGlobals(browser) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'report-browser-'));
  try {
    const blank = path.join(dir, 'blank.html');
    fs.writeFileSync(blank, '<!doctype html><html><head><title>blank</title></head><body></body></html>');
    const url = pathToFileURL(blank).href;
    const events = { requests: [], blocked: [], console: [], errors: [] };
    const { context, page } = await open(browser, url, { width: 800, height: 600 }, events);
    await page.goto(url);
    const names = await page.evaluate(() => Object.getOwnPropertyNames(window));
    await context.close();
    return new Set(names);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// What the page is, read inside it.
function inspect({ shapes, foreign, dataId, links }) {
  const scripts = [...document.querySelectorAll('script')];
  const data = document.getElementById(dataId);
  // A fleet page links each folder record's page: <a href="./…/report.html">, nothing else.
  const linkOk = (el) => links && el.localName === 'a' && el.attributes.length === 1
    && /^\.\.?\/[^:?#]*report\.html$/.test(el.getAttribute('href') || '');
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    // The CSP names what it allows (`img-src data:`).
    const own = el.matches('head > meta');
    if (linkOk(el)) continue;
    for (const at of el.attributes) {
      const n = at.name.toLowerCase();
      const v = at.value.toLowerCase();
      if (n.startsWith('on')) bad.push(`<${el.localName} ${n}>`);
      if (['href', 'xlink:href', 'src', 'srcset', 'srcdoc', 'action', 'formaction', 'data',
        'poster', 'background', 'ping'].includes(n)) bad.push(`<${el.localName} ${n}>`);
      if (!own && !n.startsWith('xmlns') && /javascript:|url\(|https?:|data:/.test(v)) {
        bad.push(`<${el.localName} ${n}="${at.value.slice(0, 60)}">`);
      }
    }
  }
  const comments = [];
  const walk = document.createTreeWalker(document, NodeFilter.SHOW_COMMENT);
  while (walk.nextNode()) comments.push(walk.currentNode.data.slice(0, 60));
  const svgs = [...document.querySelectorAll('svg')].map((s) => {
    const r = s.getBoundingClientRect();
    return { children: s.childElementCount, shapes: s.querySelectorAll(shapes).length,
      width: r.width, height: r.height };
  });
  // A shape with no fill set is filled black (SVG's default): a line chart's axis drawn as a
  // black triangle. The page's palette has no pure black, so these are counted.
  const blackFills = [...document.querySelectorAll('svg path, svg polyline, svg polygon')]
    .filter((el) => getComputedStyle(el).fill === 'rgb(0, 0, 0)')
    .map((el) => el.outerHTML.slice(0, 60));
  const resources = performance.getEntriesByType('resource').map((e) => e.name);
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    scripts: scripts.map((s) => `${s.type}#${s.id}`),
    json: data ? data.textContent : null,
    jsonType: data ? data.type : null,
    foreign: [...document.querySelectorAll(foreign)].filter((e) => !linkOk(e))
      .map((e) => e.outerHTML.slice(0, 80)),
    links: [...document.querySelectorAll('a')].filter(linkOk).length,
    bad,
    comments,
    svgs,
    blackFills,
    resources,
    csp: [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]')]
      .map((m) => m.content),
    text: document.body ? document.body.textContent : '',
    scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    innerWidth: window.innerWidth,
    loadMs: nav ? Math.round(nav.loadEventEnd - nav.startTime) : null,
    seen: window.__teamctlSeen,
  };
}

function clean(events, where) {
  check(events.blocked.length === 0, `${where}: requests blocked: ${events.blocked.join(' ')}`);
  check(events.console.length === 0, `${where}: console errors: ${events.console.join(' | ')}`);
  check(events.errors.length === 0, `${where}: page errors: ${events.errors.join(' | ')}`);
}

// Each of summary.json's members is in the page with the same cost (1e-9), its series ending there.
function checkCosts(record, summary) {
  const want = (summary.cost && summary.cost.members) || [];
  check(want.length > 0, 'summary.json has no cost.members');
  const got = new Map((record.members || []).map((m) => [m.name, m]));
  let series = 0;
  for (const w of want) {
    const m = got.get(w.name);
    check(m, `member ${JSON.stringify(w.name)} of summary.json is not in the page's JSON`);
    if (w.cost_usd === null) {
      check(m.cost_usd === null, `${w.name}: unknown in summary.json, ${m.cost_usd} in the page`);
      continue;
    }
    check(typeof m.cost_usd === 'number' && Math.abs(m.cost_usd - w.cost_usd) <= 1e-9,
      `${w.name}: cost_usd ${m.cost_usd} in the page, ${w.cost_usd} in summary.json`);
    const s = m.cost_series;
    check(Array.isArray(s), `${w.name}: no cost_series`);
    if (s.length) {
      const last = s[s.length - 1][1];
      check(Math.abs(last - w.cost_usd) <= 1e-9, `${w.name}: series ends at ${last}, not ${w.cost_usd}`);
    }
    series += s.length;
  }
  return { members: want.length, series_points: series };
}

// The fleet page embeds `report --json`'s document whole: the same teams, each with its cost.
function checkFleet(record, fleet) {
  check(JSON.stringify(record) === JSON.stringify(fleet),
    'the page\'s #teamctl-fleet is not report --json\'s document');
  const teams = fleet.teams || fleet.records || [];
  check(teams.length > 0, 'the fleet has no teams');
  return { teams: teams.length };
}

function checkMarkup(seen, baseline, where) {
  check(seen.scripts.length === 1 && seen.scripts[0] === `application/json#${MODE.dataId}`,
    `${where}: scripts ${JSON.stringify(seen.scripts)}, want only the JSON block`);
  check(seen.foreign.length === 0, `${where}: elements from data: ${seen.foreign.join(' ')}`);
  check(seen.bad.length === 0, `${where}: attributes that act or load: ${seen.bad.join(' ')}`);
  check(seen.comments.length === 0, `${where}: comments in the DOM: ${seen.comments.join(' | ')}`);
  check(seen.resources.length === 0, `${where}: resources fetched: ${seen.resources.join(' ')}`);
  check(seen.seen.violations.length === 0,
    `${where}: CSP violations (the page tried to load or run something): ${seen.seen.violations.join(' | ')}`);
  check(seen.seen.dialogs === 0, `${where}: a dialog or window was opened`);
  check(seen.csp.some((c) => /default-src 'none'/.test(c)), `${where}: no CSP default-src 'none': ${seen.csp}`);
  const added = seen.globals.filter((g) => !baseline.has(g) && g !== '__teamctlSeen');
  check(added.length === 0, `${where}: window globals added: ${added.join(' ')}`);
}

function checkCharts(svgs, where) {
  check(svgs.length > 0, `${where}: no SVG chart`);
  const empty = svgs.filter((s) => s.children === 0);
  check(empty.length === 0, `${where}: ${empty.length} empty SVG element(s)`);
  const drawn = svgs.filter((s) => s.shapes > 0 && s.width > 0 && s.height > 0);
  check(drawn.length > 0, `${where}: no SVG drawn with a size: ${JSON.stringify(svgs)}`);
  return drawn.length;
}

async function visit(browser, url, viewport, baseline, where, colorScheme) {
  const events = { requests: [], blocked: [], console: [], errors: [] };
  const { context, page } = await open(browser, url, viewport, events, colorScheme);
  const t0 = process.hrtime.bigint();
  await page.goto(url, { waitUntil: 'load' });
  const gotoMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const seen = await page.evaluate(inspect, { shapes: SHAPES, foreign: FOREIGN, ...MODE });
  seen.globals = await page.evaluate(() => Object.getOwnPropertyNames(window));
  clean(events, where);
  checkMarkup(seen, baseline, where);
  let print = null;
  if (where === 'desktop') print = await printed(page, baseline);
  clean(events, `${where}, printed`);
  await context.close();
  return { seen, events, gotoMs, print };
}

// The same page as printed: print media emulated (charts still drawn, nothing loaded), and a PDF.
async function printed(page, baseline) {
  await page.emulateMedia({ media: 'print' });
  const seen = await page.evaluate(inspect, { shapes: SHAPES, foreign: FOREIGN, ...MODE });
  seen.globals = await page.evaluate(() => Object.getOwnPropertyNames(window));
  checkMarkup(seen, baseline, 'print');
  const charts = checkCharts(seen.svgs, 'print');
  const pdf = await page.pdf({ format: 'A4' });
  check(pdf.length > 1000, `print: a PDF of ${pdf.length} bytes`);
  return { charts, pdf_bytes: pdf.length };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let chromium;
  try {
    ({ chromium } = require('playwright-core'));
  } catch {
    skip('playwright-core is not installed: npm ci --prefix tests/e2e');
  }
  if (!fs.existsSync(args.chromium)) skip(`no Chromium at ${args.chromium} (apt-get install chromium)`);
  const page = path.resolve(args.page);
  const url = pathToFileURL(page).href;
  const summary = JSON.parse(fs.readFileSync(args.summary || args.fleet, 'utf8'));
  if (args.fleet) MODE = { dataId: 'teamctl-fleet', links: true };
  const started = Date.now();
  const browser = await chromium.launch({ executablePath: args.chromium, headless: true });
  try {
    const version = browser.version();
    const baseline = await blankGlobals(browser);
    const desk = await visit(browser, url, { width: 1280, height: 900 }, baseline, 'desktop');
    const record = JSON.parse(desk.seen.json);
    check(desk.seen.jsonType === 'application/json', `the JSON block's type: ${desk.seen.jsonType}`);
    const costs = args.fleet ? checkFleet(record, summary) : checkCosts(record, summary);
    const charts = checkCharts(desk.seen.svgs, 'desktop');
    for (const s of args.shown) {
      check(desk.seen.text.includes(s), `not shown as text: ${JSON.stringify(s)}`);
    }
    // The phone in dark mode: the page's own dark colours (prefers-color-scheme) are drawn too.
    const phone = await visit(browser, url, { width: 390, height: 844 }, baseline, '390px', 'dark');
    check(phone.seen.innerWidth === 390, `the 390 px viewport is ${phone.seen.innerWidth} px`);
    check(phone.seen.scrollWidth <= 390,
      `390px: the page is ${phone.seen.scrollWidth} px wide (it scrolls sideways)`);
    checkCharts(phone.seen.svgs, '390px');
    // The document itself is the only request; file:// may not raise a request event at all.
    const requests = [...desk.events.requests, ...phone.events.requests];
    const others = requests.filter((u) => u !== url);
    check(others.length === 0, `requests besides the document: ${others.join(' ')}`);
    check(desk.seen.blackFills.length === 0,
      `SVG shapes filled black by default: ${desk.seen.blackFills.join(' ')}`);
    process.stdout.write(`${JSON.stringify({
      ok: true,
      chromium: version,
      page_bytes: fs.statSync(page).size,
      requests: desk.events.requests.length,
      other_requests: others.length,
      load_ms: desk.seen.loadMs,
      goto_ms: Math.round(desk.gotoMs),
      phone_load_ms: phone.seen.loadMs,
      ...costs,
      links: desk.seen.links,
      charts,
      black_fills: desk.seen.blackFills.length,
      shown: args.shown.length,
      print: desk.print,
      phone_width: phone.seen.scrollWidth,
      total_ms: Date.now() - started,
    })}\n`);
  } finally {
    await browser.close();
  }
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
