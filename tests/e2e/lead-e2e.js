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
// The temp root, mock, diagnostics and cleanup are harness.js's; the lead's tmux server is the
// driver's own (`tmux -L`), started with the lead's environment.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux missing).

const fs = require('fs');
const path = require('path');

const h = require('./harness')({
  name: 'lead-e2e',
  team: null,
  argv: process.argv.slice(2),
  synopsis: '--teamctl <exe> --mode tmux|in-process [--claude-bin <path>] [--keep] [--verbose] [--deadline <s>]',
  flags: {
    '--mode': { key: 'mode', value: 'tmux', check: (v) => (['tmux', 'in-process'].includes(v) ? null : `--mode ${v}: tmux or in-process`) },
  },
  pollMs: 10,
  // 2.1.112 reads teammateMode from the global config only (its settings schema marks it
  // `source: "global"`); newer clients read it from settings.json.
  claudeJson: (args) => ({ teammateMode: args.mode }),
  settings: (args) => ({ teammateMode: args.mode }),
  // The lead runs in the driver's own tmux server, with the environment of such a pane (also
  // teamctl's).
  ownTmux: true,
  mockTeamctl: false,
});

const { args, st, T0, now, hex, trace, fail, check, waitFor, teamctl, lastJson, readJson, shq, tmux, panes, capture, clientVersion, mockLines } = h;

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

h.run(async () => {
  const version = clientVersion();
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
});
