#!/usr/bin/env node
'use strict';
// End-to-end test: a message sender (teamctl, or fake-send.js) writes into the
// inbox of a REAL Claude Code 2.1.332 pane teammate running offline in a
// private tmux server against mock-api.js; the teammate's SendMessage replies
// must come back in inboxes/ops.json.
//
//   node tests/e2e/e2e.js --send-cmd <exe> [--keep] [--verbose]
//                         [--claude-bin <path>] [--deadline <seconds>]
//
// <exe> is called as: <exe> --claude-dir DIR --team demo send worker "TEXT" --from ops
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on
// stderr), 2 usage error, 77 skipped (claude binary or tmux not installed).
// See README.md in this folder.

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { execFile } = require('child_process');
const { lockedJsonUpdate } = require('./lockfile');

const TEAM = 'demo';
const POLL_MS = 10;          // our polling of the files (the client itself polls every 1000 ms)
const QUIET_MS = 2500;       // "nothing more happens" window: > 2 client poll periods

// The temp root, mock, diagnostics and cleanup are harness.js's; the worker's tmux server is
// the driver's own (`tmux -L`), started with the worker's environment.
const h = require('./harness')({
  name: 'e2e',
  team: TEAM,
  session: null,
  argv: process.argv.slice(2),
  synopsis: '--send-cmd <exe> [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]',
  teamctl: false,
  flags: {
    '--send-cmd': {
      key: 'sendCmd',
      required: true,
      path: true,
      check: (v) => {
        try { fs.accessSync(v, fs.constants.X_OK); return null; } catch (_) { return `--send-cmd ${v} is not an executable file`; }
      },
    },
  },
  pollMs: POLL_MS,
  // Only this environment reaches the tmux server (no proxy or client variables leak in).
  ownTmux: true,
  env: (env) => ({ ...env, CLAUDECODE: '1' }),
  mockTeamctl: false,
});

const { args, st, T0, now, sleep, hex, trace, fail, check, waitFor, readJson, writeJson, shq, tmux, clientVersion, Failure } = h;

function readInbox(file) {
  const v = readJson(file);
  return Array.isArray(v) ? v : null;
}

function paneAlive() {
  const r = tmux('list-panes', '-a', '-F', '#{pane_dead} #{pane_dead_status}');
  if (r.status !== 0) return { alive: false, info: `tmux list-panes failed: ${r.stderr}` };
  const [dead, status] = r.stdout.trim().split(' ');
  return { alive: dead === '0', info: `pane_dead=${dead} exit_status=${status || ''}` };
}

// The team the worker belongs to, as a lead would have made it (harness.js made the rest).
function setupTeam() {
  st.teamDir = path.join(st.cfg, 'teams', TEAM);
  st.inboxDir = path.join(st.teamDir, 'inboxes');
  fs.mkdirSync(st.inboxDir, { recursive: true });
  fs.mkdirSync(path.join(st.cfg, 'tasks', TEAM), { recursive: true });
  st.parentSessionId = crypto.randomUUID();
  const joinedAt = now();
  writeJson(path.join(st.teamDir, 'config.json'), {
    name: TEAM,
    createdAt: joinedAt,
    leadAgentId: `team-lead@${TEAM}`,
    leadSessionId: st.parentSessionId,
    members: [
      {
        agentId: `team-lead@${TEAM}`, name: 'team-lead', agentType: 'team-lead', joinedAt,
        tmuxPaneId: 'leader', cwd: st.work, subscriptions: [], backendType: 'in-process',
      },
      {
        agentId: `worker@${TEAM}`, name: 'worker', color: 'blue', joinedAt, tmuxPaneId: '',
        subscriptions: [], agentType: 'general-purpose', cwd: st.work, backendType: 'tmux',
      },
      {
        agentId: `ops@${TEAM}`, name: 'ops', joinedAt, tmuxPaneId: '', cwd: st.work, subscriptions: [],
      },
    ],
  });
  st.initialMsgId = crypto.randomUUID();
  writeJson(path.join(st.inboxDir, 'team-lead.json'), []);
  writeJson(path.join(st.inboxDir, 'ops.json'), []);
  writeJson(path.join(st.inboxDir, 'worker.json'), [{
    from: 'team-lead',
    text: 'You are worker. Wait for messages.',
    timestamp: new Date().toISOString(),
    msgV: 1,
    msg_id: st.initialMsgId,
    type: 'message',
    read: false,
  }]);
}

const inbox = (name) => path.join(st.inboxDir, `${name}.json`);

function startWorker() {
  const cmd = `cd ${shq(st.work)} && exec env CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 ${shq(args.claudeBin)}` +
    ` --agent-id worker@${TEAM} --agent-name worker --team-name ${TEAM} --agent-color blue` +
    ` --parent-session-id ${st.parentSessionId} --dangerously-skip-permissions`;
  trace(`tmux -L ${st.sock}: ${cmd}`);
  st.tWorkerStart = now();
  const r = tmux('start-server', ';',
    'set-option', '-g', 'remain-on-exit', 'on', ';',
    'set-option', '-g', 'history-limit', '20000', ';',
    'new-session', '-d', '-s', 'e2e', '-x', '200', '-y', '50', '-P', '-F', '#{pane_id} #{pane_pid}', cmd);
  if (r.status !== 0) fail(`tmux new-session failed (${r.status}): ${r.stderr}`);
  [st.paneId, st.panePid] = r.stdout.trim().split(' ');
  st.panePid = Number(st.panePid);
  trace(`worker pane ${st.paneId}, pid ${st.panePid}`);
  // Record the real pane id, as a lead would (config lock, re-read, temp + rename).
  lockedJsonUpdate(path.join(st.teamDir, 'config.json'), (cfg) => {
    const m = cfg.members.find((x) => x.name === 'worker');
    m.tmuxPaneId = st.paneId;
  });
}

// ---------------------------------------------------------------- observation
let lastAliveCheck = 0;
function assertWorkerAlive() {
  if (now() - lastAliveCheck < 250) return;
  lastAliveCheck = now();
  const a = paneAlive();
  if (!a.alive) fail(`the claude teammate is not running any more (${a.info})`);
}

function idleNotifications() {
  const arr = readInbox(inbox('team-lead')) || [];
  return arr.filter((e) => {
    if (e.from !== 'worker') return false;
    try { return JSON.parse(e.text).type === 'idle_notification'; } catch (_) { return false; }
  });
}

function echoEntries() {
  const arr = readInbox(inbox('ops'));
  if (!arr) return null;
  return arr.filter((e) => e.from === 'worker' && typeof e.text === 'string' && e.text.includes('ECHO'));
}

const countToken = (texts, tok) => texts.reduce((n, t) => n + t.split(/\s+/).filter((w) => w === tok).length, 0);

function runSend(text) {
  return new Promise((resolve, reject) => {
    const argv = ['--claude-dir', st.cfg, '--team', TEAM, 'send', 'worker', text, '--from', 'ops'];
    const env = { ...process.env, HOME: st.home, CLAUDE_CONFIG_DIR: st.cfg };
    const t = now();
    execFile(args.sendCmd, argv, { env, timeout: 15000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const ms = now() - t;
      trace(`send ${JSON.stringify(text)} -> ${err ? `error ${err.code}` : 'ok'} in ${ms} ms ${stdout.trim()}`);
      if (err) reject(new Failure(`send command failed (${err.code || err.signal}): ${stderr.trim() || err.message}`));
      else resolve({ start: t, end: now(), ms });
    });
  });
}

// Follows a set of tokens: when each was written, consumed from worker.json, echoed into ops.json.
class Tracker {
  constructor() { this.tok = new Map(); }
  add(token, sentAt) { this.tok.set(token, { sentAt, sendDone: null, seen: false, consumedAt: null, echoAt: null }); }
  sample() {
    const w = readInbox(inbox('worker'));
    const echoes = echoEntries();
    const t = now();
    for (const [token, s] of this.tok) {
      if (w) {
        const present = w.some((e) => e.read !== true && typeof e.text === 'string' && e.text.includes(`Token: ${token}`));
        if (present) s.seen = true;
        else if (s.sendDone && s.consumedAt === null) s.consumedAt = t;
      }
      if (echoes && s.echoAt === null && echoes.some((e) => countToken([e.text], token) > 0)) s.echoAt = t;
    }
    return { worker: w, echoes };
  }
  // An old consumer (2.1.159 and older, st.marksRead) can itself lose a message it marked read,
  // or deliver one twice (see docs/compatibility.md): for it, consumed is enough here and the
  // final checks count what it lost or doubled instead of failing.
  done() { return [...this.tok.values()].every((s) => s.consumedAt !== null && (st.marksRead || s.echoAt !== null)); }
  describe() {
    return [...this.tok].map(([t, s]) => `${t}: ${s.sendDone === null ? 'send not finished'
      : `${!s.seen ? 'never seen in worker.json (not written, or consumed within 10 ms?)'
        : s.consumedAt !== null ? 'written and consumed' : 'written, NOT consumed'}, ${s.echoAt !== null ? 'echoed' : 'NOT echoed'}`}`).join('; ');
  }
}

// Sample the tracker while `promise` runs.
async function sampling(tracker, promise) {
  let running = true;
  const loop = (async () => { while (running) { tracker.sample(); await sleep(POLL_MS); } })();
  try { return await promise; } finally { running = false; await loop; }
}

async function waitTracker(what, ms, tracker) {
  try {
    await waitFor(what, ms, () => {
      assertWorkerAlive();
      tracker.sample();
      return tracker.done();
    });
  } catch (e) {
    if (e instanceof Failure) e.message += ` [${tracker.describe()}]`;
    throw e;
  }
}

// Wait until nothing changes in the team's inboxes for QUIET_MS, the worker's inbox
// holds no unread entry, and the worker went idle after its last echo.
async function waitQuiet(what) {
  let lastSig = null;
  let since = now();
  return waitFor(what, 20000, () => {
    assertWorkerAlive();
    const files = ['worker', 'ops', 'team-lead'].map((n) => { try { return fs.readFileSync(inbox(n), 'utf8'); } catch (_) { return ''; } });
    const sig = files.join('\0');
    if (sig !== lastSig) { lastSig = sig; since = now(); return false; }
    const w = readInbox(inbox('worker'));
    if (!w || w.some((e) => e.read !== true)) return false;
    const echoes = echoEntries() || [];
    const idles = idleNotifications();
    const lastEcho = echoes.length ? echoes[echoes.length - 1].timestamp : '';
    if (!idles.length || idles[idles.length - 1].timestamp < lastEcho) return false;
    return now() - since >= QUIET_MS;
  });
}

function checkEchoEntry(e) {
  check(e.from === 'worker', `echo entry from ${e.from}`);
  check(e.summary === 'echo', `echo entry summary ${JSON.stringify(e.summary)} (expected "echo")`);
  check(e.color === 'blue', `echo entry color ${JSON.stringify(e.color)} (expected "blue")`);
  check(typeof e.timestamp === 'string' && !Number.isNaN(Date.parse(e.timestamp)), 'echo entry timestamp');
  check(e.read === false, 'echo entry read !== false');
  check(e.type === undefined || e.type === 'message', `echo entry type ${e.type}`);
}

// ---------------------------------------------------------------- main
h.run(async () => {
  setupTeam();
  const version = clientVersion();
  startWorker();

  // --- start-up: the initial prompt is consumed, the first turn ends with an idle notification
  const tConsumed0 = await waitFor('the initial prompt to be consumed from worker.json', 30000, () => {
    assertWorkerAlive();
    const w = readInbox(inbox('worker'));
    // Consumed: deleted (2.1.160 and later) or kept with read: true (2.1.159 and older).
    return w && !w.some((e) => e.msg_id === st.initialMsgId && e.read !== true) ? now() : 0;
  });
  trace(`initial prompt consumed after ${tConsumed0 - st.tWorkerStart} ms`);
  st.marksRead = (readInbox(inbox('worker')) || []).some((e) => e.msg_id === st.initialMsgId && e.read === true);
  trace(`consumer ${st.marksRead ? 'marks read (old)' : 'deletes (new)'}`);
  const clientLost = [];
  const clientDoubled = [];
  const tIdle0 = await waitFor('the first idle_notification in team-lead.json', 15000, () => {
    assertWorkerAlive();
    return idleNotifications().length >= 1 ? now() : 0;
  });
  trace(`first turn idle after ${tIdle0 - st.tWorkerStart} ms`);
  const startup = { prompt_consumed_ms: tConsumed0 - st.tWorkerStart, first_idle_ms: tIdle0 - st.tWorkerStart };

  // --- scenario A: one message, consumed and echoed
  const tokA = `A-${hex(4)}`;
  const trA = new Tracker();
  trA.add(tokA, now());
  const sA = await sampling(trA, runSend(`Token: ${tokA}`));
  trA.tok.get(tokA).sendDone = sA.end;
  await waitTracker(`scenario A: ${tokA} consumed and echoed into ops.json`, 15000, trA);
  const a = trA.tok.get(tokA);
  if (st.marksRead) await waitQuiet('scenario A: worker idle after the echo');
  const echoA = echoEntries().filter((e) => countToken([e.text], tokA) > 0);
  if (!st.marksRead) {
    check(echoA.length === 1, `scenario A: ${echoA.length} echo entries for ${tokA}`);
    checkEchoEntry(echoA[0]);
    check(echoA[0].text === `ECHO ${tokA}`, `scenario A: echo text ${JSON.stringify(echoA[0].text)}`);
  }
  const idlesBeforeB = idleNotifications().length;
  if (!st.marksRead) await waitQuiet('scenario A: worker idle after the echo');
  trA.sample(); // an old consumer's echo came during the quiet wait (its echo_ms is then late)
  const scenarioA = {
    token: tokA,
    send_ms: sA.ms,
    consumed_ms: a.consumedAt - sA.end,
    echo_ms: a.echoAt === null ? null : a.echoAt - sA.end,
    consume_to_echo_ms: a.echoAt === null ? null : a.echoAt - a.consumedAt,
    seen_in_inbox: a.seen,
  };
  trace(`scenario A: ${JSON.stringify(scenarioA)}`);

  // --- scenario B: five messages back to back
  const tokB = Array.from({ length: 5 }, (_, i) => `B${i + 1}-${hex(4)}`);
  const trB = new Tracker();
  const sendsB = [];
  const tB = now();
  await sampling(trB, (async () => {
    for (const tok of tokB) {
      trB.add(tok, now());
      const s = await runSend(`Token: ${tok}`);
      trB.tok.get(tok).sendDone = s.end;
      sendsB.push(s);
    }
  })());
  const tBSent = now();
  await waitTracker('scenario B: all 5 tokens consumed and echoed into ops.json', 30000, trB);
  await waitQuiet('scenario B: worker idle, inboxes quiet');
  trB.sample();

  // --- final checks over everything the worker sent to ops
  const opsAll = readInbox(inbox('ops'));
  check(opsAll, 'ops.json does not parse');
  const stray = opsAll.filter((e) => !(e.from === 'worker' && typeof e.text === 'string' && e.text.startsWith('ECHO ')));
  check(stray.length === 0, `unexpected entries in ops.json: ${JSON.stringify(stray)}`);
  opsAll.forEach(checkEchoEntry);
  const texts = opsAll.map((e) => e.text);
  // Every token was written once by teamctl (the inbox holds it exactly once: checked as
  // consumed above); each must be answered exactly once, except that an old consumer's own
  // losses and doubles are counted, not failed.
  for (const tok of [tokA, ...tokB]) {
    const n = countToken(texts, tok);
    if (st.marksRead && n === 0) clientLost.push(tok);
    else if (st.marksRead && n > 1) clientDoubled.push(tok);
    else check(n === 1, `token ${tok} echoed ${n} times (expected exactly 1): ${JSON.stringify(texts)}`);
  }
  const workerAll = readInbox(inbox('worker')) || [];
  for (const tok of [tokA, ...tokB]) {
    const copies = workerAll.filter((e) => typeof e.text === 'string' && countToken([e.text], tok) > 0).length;
    check(!st.marksRead || copies === 1, `token ${tok} is in worker.json ${copies} times (teamctl wrote it once)`);
  }
  const allTokens = texts.flatMap((t) => t.split(/\s+/).slice(1));
  if (!st.marksRead) {
    check(allTokens.length === 1 + tokB.length, `echo texts hold ${allTokens.length} tokens, expected ${1 + tokB.length}: ${JSON.stringify(texts)}`);
  }
  const workerLeft = readInbox(inbox('worker'));
  check(workerLeft && workerLeft.every((e) => e.read === true), `worker.json still has unread entries: ${JSON.stringify(workerLeft)}`);

  const replyB = opsAll.filter((e) => tokB.some((t) => countToken([e.text], t) > 0));
  const mockLines = fs.readFileSync(st.mockLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const posts = mockLines.filter((l) => l.method === 'POST');
  const others = mockLines.filter((l) => l.method !== 'POST');
  const per = tokB.map((tok) => trB.tok.get(tok));
  const scenarioB = {
    tokens: tokB,
    send_ms: sendsB.map((s) => s.ms),
    send_total_ms: tBSent - tB,
    consumed_ms: per.map((s) => s.consumedAt - s.sendDone),
    echo_ms: per.map((s) => (s.echoAt === null ? null : s.echoAt - s.sendDone)),
    all_echoed_after_last_send_ms: per.some((s) => s.echoAt === null) ? null : Math.max(...per.map((s) => s.echoAt)) - tBSent,
    replies: replyB.length,
    batches: replyB.map((e) => e.text.split(/\s+/).slice(1)),
  };
  if (args.verbose) process.stderr.write(`--- mock log ---\n${fs.readFileSync(st.mockLog, 'utf8')}`);
  return {
    claude: version,
    send_cmd: args.sendCmd,
    startup,
    A: scenarioA,
    B: scenarioB,
    idle_notifications: idleNotifications().length,
    idle_notifications_before_B: idlesBeforeB,
    mock_requests: {
      messages: posts.length,
      other: others.map((l) => `${l.method} ${l.url}`),
      // SendMessage calls the mock re-issued because the client reported a failed send.
      send_retries: posts.filter((l) => l.retry).map((l) => l.why),
    },
    worker_inbox_left: workerLeft.length,
    // What this client version did (docs/compatibility.md is built from these).
    observed: {
      consumer: workerLeft.length === 0 ? 'deletes' : 'marks_read',
      reply_msgv: opsAll.every((e) => e.msgV === 1 && typeof e.msg_id === 'string'),
      reply_type: opsAll.every((e) => e.type === 'message'),
      reply_lead_sig: opsAll.some((e) => 'lead_sig' in e),
      // Tokens an old consumer marked read but never answered, or answered twice.
      client_lost: clientLost,
      client_doubled: clientDoubled,
    },
    total_ms: now() - T0,
  };
});

