#!/usr/bin/env node
'use strict';
// Probe (not a test): what the real Claude Code does with a teammate's inbox that does not parse
// as JSON. A pane teammate `worker` in team `demo` (written by hand, launch line of
// shared/spec/real-claude-offline.md §3, with --debug so that its `[TeammateMailbox]` lines are
// in $CLAUDE_CONFIG_DIR/debug/) runs in a private tmux server; after its first turn:
//   1. send: `ops.json` and `team-lead.json` are made unparseable (one whole unread entry, then a
//      second one torn off after `{"from":"x",`: what a writer killed mid-write, or a bad edit,
//      leaves); ops sends the worker "Token: S-…": the mock makes it SendMessage "ECHO S-…" to
//      ops, and its turn ends with an idle_notification to team-lead. What each file holds
//      after, byte for byte; what the SendMessage tool returned to the model;
//   2. own: the worker's own `worker.json` is made unparseable (a whole unread message from ops,
//      "Token: O-…", then a torn one) while it waits: whether it delivers the whole message,
//      and what the file holds after --secs; then worker.json is written whole again with
//      "Token: R-…": whether the worker still takes messages.
// --torn-only: the files in 1. hold only the torn entry, `[{"from":"x",` (2. is unchanged).
// --config-torn-at-start MS: instead of 1. and 2., the team's config.json is cut short (its first
// 40 bytes) before the worker starts and made whole again MS ms later (3000 is past its start-up);
// then ops sends it "Token: S-…": whether it still answers, sends idle notifications and sets
// isActive false, and its `[TeammateInit]` debug lines.
// Every distinct content of the three inboxes is kept (polled every 10 ms) with its time.
// Prints a timeline on stderr (with --verbose) and a JSON summary on stdout. Findings are in
// docs/research/claude-code-behaviour.md.
//
//   node tests/e2e/probe-corrupt.js [--claude-bin PATH] [--secs S] [--torn-only]
//        [--config-torn-at-start MS] [--keep] [--verbose]
//   CLAUDE_E2E_VERSION=2.1.334 node tests/e2e/probe-corrupt.js \
//     --claude-bin ~/.cache/teamctl-compat/2.1.334/node_modules/@anthropic-ai/claude-code-linux-x64/claude
//
// Exit code 0 when the probe ran (whatever the client did to the files), 1 when it could not
// (the worker did not start or answer), 2 on a usage error. Nothing about the files is asserted.

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { lockedJsonUpdate, atomicWrite } = require('./lockfile');

const TEAM = 'demo';
// --torn-only takes no value, so it is taken out before the harness reads the flags.
const TORN_ONLY = process.argv.includes('--torn-only');
const h = require('./harness')({
  name: 'probe-corrupt',
  team: TEAM,
  session: null,
  argv: process.argv.slice(2).filter((a) => a !== '--torn-only'),
  synopsis: '[--claude-bin <path>] [--secs <s>] [--torn-only] [--config-torn-at-start <ms>] [--keep] [--verbose] [--deadline <s>]',
  teamctl: false,
  deadline: 120,
  flags: {
    '--secs': { key: 'secs', value: '5', check: (v) => (Number(v) > 0 ? null : '--secs must be a positive number') },
    '--config-torn-at-start': { key: 'tornStart', value: null, check: (v) => (v === null || Number(v) >= 0 ? null : '--config-torn-at-start needs milliseconds') },
  },
  pollMs: 10,
  ownTmux: true,
  env: (env) => ({ ...env, CLAUDECODE: '1' }),
  mockTeamctl: false,
});
const { args, st, now, sleep, hex, trace, fail, check, waitFor, readJson, writeJson, shq, tmux, capture, clientVersion, mockLines } = h;

const inboxFile = (name) => path.join(st.cfg, 'teams', TEAM, 'inboxes', `${name}.json`);
const bytes = (file) => { try { return fs.readFileSync(file, 'utf8'); } catch (e) { return `(${e.code})`; } };

// What JSON.stringify(x, null, 2) of an inbox with one whole unread entry looks like, with a
// second entry torn off after `{"from":"x",`: it does not parse.
function corrupt(text) {
  if (TORN_ONLY) return '[{"from":"x",';
  const whole = JSON.stringify([{ from: 'x', text, timestamp: new Date().toISOString(), read: false }], null, 2);
  return `${whole.slice(0, -2)},\n  {"from":"x",`;
}

// Every distinct content each watched file had, with when it was first seen.
const seen = new Map();
function sample() {
  for (const name of ['worker', 'ops', 'team-lead']) {
    const b = bytes(inboxFile(name));
    const v = seen.get(name) || [];
    if (!v.length || v[v.length - 1].bytes !== b) {
      v.push({ t: now() - h.T0, bytes: b });
      seen.set(name, v);
      trace(`${name}.json now ${b.length} bytes: ${JSON.stringify(b.slice(0, 160))}${b.length > 160 ? '…' : ''}`);
    }
  }
}
let sampler = null;

function setupTeam() {
  const dir = path.join(st.cfg, 'teams', TEAM, 'inboxes');
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(path.join(st.cfg, 'tasks', TEAM), { recursive: true });
  st.parentSessionId = crypto.randomUUID();
  const joinedAt = now();
  const member = (name, extra) => ({ agentId: `${name}@${TEAM}`, name, joinedAt, tmuxPaneId: '', cwd: st.work, subscriptions: [], ...extra });
  writeJson(path.join(st.cfg, 'teams', TEAM, 'config.json'), {
    name: TEAM, createdAt: joinedAt, leadAgentId: `team-lead@${TEAM}`, leadSessionId: st.parentSessionId,
    members: [
      member('team-lead', { agentType: 'team-lead', tmuxPaneId: 'leader', backendType: 'in-process' }),
      member('worker', { color: 'blue', agentType: 'general-purpose', backendType: 'tmux' }),
      member('ops', {}),
    ],
  });
  writeJson(inboxFile('team-lead'), []);
  writeJson(inboxFile('ops'), []);
  writeJson(inboxFile('worker'), [{
    from: 'team-lead', text: 'You are worker. Wait for messages.', timestamp: new Date().toISOString(),
    msgV: 1, msg_id: crypto.randomUUID(), type: 'message', read: false,
  }]);
}

function startWorker({ config = true } = {}) {
  const cmd = `cd ${shq(st.work)} && exec env CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 ${shq(args.claudeBin)}` +
    ` --agent-id worker@${TEAM} --agent-name worker --team-name ${TEAM} --agent-color blue` +
    ` --parent-session-id ${st.parentSessionId} --dangerously-skip-permissions --debug`;
  const r = tmux('start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';',
    'new-session', '-d', '-s', 'probe', '-x', '200', '-y', '50', '-P', '-F', '#{pane_id}', cmd);
  if (r.status !== 0) fail(`tmux new-session failed (${r.status}): ${r.stderr}`);
  st.pane = r.stdout.trim();
  if (!config) return;
  lockedJsonUpdate(path.join(st.cfg, 'teams', TEAM, 'config.json'), (cfg) => {
    cfg.members.find((m) => m.name === 'worker').tmuxPaneId = st.pane;
  });
}

const idles = () => {
  const v = readJson(inboxFile('team-lead'));
  return Array.isArray(v) ? v.filter((e) => e.from === 'worker' && /idle_notification/.test(e.text)).length : 0;
};
const message = (text) => ({
  from: 'ops', text, summary: 'probe', timestamp: new Date().toISOString(), msgV: 1,
  msg_id: crypto.randomUUID(), type: 'message', read: false,
});
// The mock's requests after the n0th: why the mock answered as it did, its reply's tool, and the
// tool results the model got (what SendMessage returned).
function requestsSince(n0) {
  return mockLines().filter((l) => l.n > n0)
    .map((l) => ({ n: l.n, why: l.why, reply: l.reply && l.reply.tool, tool_results: l.toolResults }));
}
const sawText = (tok) => mockLines().some((l) => (l.lastText || '').includes(tok));
// The [TeammateMailbox] lines (and other inbox errors) of the worker's debug log.
function debugLines(since = 0) {
  const dir = path.join(st.cfg, 'debug');
  let out = [];
  try {
    for (const f of fs.readdirSync(dir)) {
      if (!f.endsWith('.txt')) continue;
      out = out.concat(fs.readFileSync(path.join(dir, f), 'utf8').split('\n')
        .filter((l) => /unparseable|Failed to (read|write) (to )?inbox|refus|pruned|not an array|Wrote message|created new inbox|TeammateInit/.test(l)));
    }
  } catch (_) { /* no debug log */ }
  return out.slice(since);
}
const settle = (s) => sleep(s * 1000);
const contents = (name, since) => (seen.get(name) || []).filter((v) => v.t >= since);

// --config-torn-at-start: config.json unreadable while the worker starts.
async function tornAtStart(version) {
  const cfgPath = path.join(st.cfg, 'teams', TEAM, 'config.json');
  const whole = fs.readFileSync(cfgPath, 'utf8');
  fs.writeFileSync(cfgPath, whole.slice(0, 40));
  startWorker({ config: false });
  await sleep(Number(args.tornStart));
  const cfg = JSON.parse(whole);
  cfg.members.find((m) => m.name === 'worker').tmuxPaneId = st.pane;
  atomicWrite(cfgPath, JSON.stringify(cfg, null, 2));
  trace('config.json whole again');
  await settle(4);
  const S = `S-${hex(4)}`;
  lockedJsonUpdate(inboxFile('worker'), (v) => { v.push(message(`Please echo. Token: ${S}`)); });
  await waitFor(`the worker's echo of ${S}`, 20000, () => (readJson(inboxFile('ops')) || []).some((e) => (e.text || '').includes(S)));
  await settle(Number(args.secs));
  const member = (readJson(cfgPath).members || []).find((m) => m.name === 'worker') || {};
  return {
    version, config_torn_ms: Number(args.tornStart), token: S, echoed: true,
    idle_notifications: (readJson(inboxFile('team-lead')) || []).filter((e) => e.from === 'worker' && /idle_notification/.test(e.text)).length,
    is_active: member.isActive === undefined ? null : member.isActive,
    debug: debugLines().filter((l) => /TeammateInit|Team file/.test(l)).map((l) => l.slice(0, 200)),
  };
}

h.run(async () => {
  const version = clientVersion();
  setupTeam();
  if (args.tornStart !== null) return tornAtStart(version);
  sampler = setInterval(sample, 10);
  startWorker();
  await waitFor('the first idle_notification', 40000, () => {
    const p = h.panes()[0];
    if (p && p.dead) fail(`the worker exited (${p.status}):\n${capture(st.pane)}`);
    return idles() >= 1;
  });
  await settle(1.5);
  const out = { version, torn_only: TORN_ONLY, send: {}, own: {} };

  // 1. send: the worker writes to an unparseable ops.json (its echo) and team-lead.json (its
  //    idle notification).
  const S = `S-${hex(4)}`;
  const opsBefore = corrupt('EARLIER-OPS: a whole message before the torn one');
  const leadBefore = corrupt('EARLIER-LEAD: a whole message before the torn one');
  atomicWrite(inboxFile('ops'), opsBefore);
  atomicWrite(inboxFile('team-lead'), leadBefore);
  const dbg0 = debugLines().length;
  const t1 = now() - h.T0;
  const n1 = mockLines().length;
  trace(`ops.json and team-lead.json made unparseable; sending Token: ${S}`);
  lockedJsonUpdate(inboxFile('worker'), (v) => { v.push(message(`Please echo. Token: ${S}`)); });
  // The echo's SendMessage, and the request that carried its result back.
  await waitFor(`the result of the worker's SendMessage for ${S}`, 30000, () => {
    const l = requestsSince(n1);
    const i = l.findIndex((x) => x.reply === 'SendMessage');
    return i >= 0 && l.slice(i + 1).some((x) => x.tool_results && x.tool_results.length);
  });
  await settle(Number(args.secs));
  out.send = {
    token: S,
    ops: { before: opsBefore, after: bytes(inboxFile('ops')), contents: contents('ops', t1) },
    team_lead: { before: leadBefore, after: bytes(inboxFile('team-lead')), contents: contents('team-lead', t1) },
    requests: requestsSince(n1),
    debug: debugLines(dbg0),
    leftovers: fs.readdirSync(path.dirname(inboxFile('ops'))).filter((f) => !/^(worker|ops|team-lead)\.json$/.test(f)),
  };

  // 2. own: the worker's own inbox is unparseable while it waits.
  const O = `O-${hex(4)}`;
  const whole = JSON.stringify([message(`Please echo. Token: ${O}`)], null, 2);
  const ownBefore = `${whole.slice(0, -2)},\n  {"from":"x",`;
  const dbg1 = debugLines().length;
  const t2 = now() - h.T0;
  atomicWrite(inboxFile('worker'), ownBefore);
  trace(`worker.json made unparseable (it holds Token: ${O} whole)`);
  await settle(Number(args.secs));
  out.own = {
    token: O,
    before: ownBefore,
    after: bytes(inboxFile('worker')),
    contents: contents('worker', t2),
    delivered: sawText(O),
    debug: debugLines(dbg1).slice(0, 6),
    debug_lines: debugLines(dbg1).length,
  };
  // Then whole again: does the worker still take messages?
  const R = `R-${hex(4)}`;
  atomicWrite(inboxFile('worker'), JSON.stringify([message(`Please echo. Token: ${R}`)], null, 2));
  const tR = now();
  out.own.recovered_ms = await waitFor(`the worker to take Token: ${R}`, 20000, () => (sawText(R) ? now() - tR : 0)).catch(() => null);
  clearInterval(sampler);
  sample();
  out.pane_tail = capture(st.pane).split('\n').filter((l) => l.trim() && !l.includes('───')).slice(-8).map((l) => l.trimEnd().slice(0, 120));
  return out;
});
