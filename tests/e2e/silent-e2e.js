#!/usr/bin/env node
'use strict';
// End to end for a teammate that never reports idle, against the REAL Claude Code (offline,
// harness.js): Claude Code's start-up race (docs/research/claude-code-behaviour.md §8) met on
// purpose, as `probe-corrupt.js --config-torn-at-start 3000` meets it. A pane teammate `worker`
// of team `demo` (written by hand, the launch line of shared/spec/real-claude-offline.md §3,
// with --debug) starts while `config.json` is cut to its first 40 bytes, whole again 3 s later:
// it never registers the Stop hook that writes its idle notifications. Then:
//   1. its brief's turn ends: `teamctl wait --idle worker` returns (within 20 s) by its
//      transcript, saying it reported no idle;
//   2. `send` (as ops) "Token: S-…": the mock makes it SendMessage "ECHO S-…" to ops; `wait
//      --idle worker` returns again, within 20 s of the send;
//   3. `status --json` names it: `waiting` `idle_unreported`, `idle_unreported_since`, a
//      `needs_human` cause `idle_unreported`; `doctor` warns;
//   4. `ask worker` (as ops) "Token: A-…" is answered (its answer is not taken for an earlier
//      turn's), and one the mock ends without SendMessage is exit 5, idle by its transcript.
// The summary says whether the race was met (no idle_notification from the worker at all, the
// debug log's `Team file not found`) and how long each wait took.
//
//   node tests/e2e/silent-e2e.js --teamctl <exe> [--claude-bin <path>] [--keep] [--verbose]
//
// --scenario create-race [--teammates N]: a measurement, not a check. `teamctl create` starts N
// real teammates (3 by default) at once; once `wait --idle` says every brief's turn is over,
// the summary says which teammates never reported idle (no idle_notification: the start-up
// race met by itself). Run it many times, under load, to count how often create meets it.

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { lockedJsonUpdate, atomicWrite } = require('./lockfile');

const TEAM = 'demo';
const TORN_MS = 3000;
const RACE = process.argv.includes('create-race');
const h = require('./harness')({
  name: 'silent-e2e',
  team: TEAM,
  session: RACE ? `teamctl-${TEAM}` : null,
  argv: process.argv.slice(2),
  deadline: 150,
  ownTmux: !RACE,
  env: RACE ? null : (env) => ({ ...env, CLAUDECODE: '1' }),
  mockTeamctl: false,
  flags: {
    '--scenario': { key: 'scenario', value: 'silent', check: (v) => (['silent', 'create-race'].includes(v) ? null : '--scenario is silent or create-race') },
    '--teammates': { key: 'teammates', value: '3', check: (v) => (Number(v) >= 1 ? null : '--teammates needs a number') },
  },
});
const { args, st, now, sleep, hex, trace, fail, check, waitFor, readJson, writeJson, shq, tmux, teamctl, lastJson, clientVersion } = h;

const cfgPath = () => path.join(st.cfg, 'teams', TEAM, 'config.json');
const inboxFile = (name) => path.join(st.cfg, 'teams', TEAM, 'inboxes', `${name}.json`);

// The team, as probe-corrupt.js writes it: the lead (in-process), the worker (a pane teammate
// whose pane id is left empty: teamctl asks about panes on another tmux server than the
// driver's own) and ops (a plain member teamctl speaks as).
function setupTeam() {
  fs.mkdirSync(path.dirname(inboxFile('x')), { recursive: true });
  fs.mkdirSync(path.join(st.cfg, 'tasks', TEAM), { recursive: true });
  st.parentSessionId = crypto.randomUUID();
  const joinedAt = now();
  const member = (name, extra) => ({ agentId: `${name}@${TEAM}`, name, joinedAt, tmuxPaneId: '', cwd: st.work, subscriptions: [], ...extra });
  writeJson(cfgPath(), {
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

// The worker started while config.json is torn, whole again TORN_MS later.
async function startTorn() {
  const whole = fs.readFileSync(cfgPath(), 'utf8');
  fs.writeFileSync(cfgPath(), whole.slice(0, 40));
  const cmd = `cd ${shq(st.work)} && exec env CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 ${shq(args.claudeBin)}` +
    ` --agent-id worker@${TEAM} --agent-name worker --team-name ${TEAM} --agent-color blue` +
    ` --parent-session-id ${st.parentSessionId} --dangerously-skip-permissions --debug`;
  const r = tmux('start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';',
    'new-session', '-d', '-s', 'silent', '-x', '200', '-y', '50', '-P', '-F', '#{pane_id}', cmd);
  if (r.status !== 0) fail(`tmux new-session failed (${r.status}): ${r.stderr}`);
  st.pane = r.stdout.trim();
  await sleep(TORN_MS);
  atomicWrite(cfgPath(), whole);
  trace('config.json whole again');
}

const idles = () => (readJson(inboxFile('team-lead')) || [])
  .filter((e) => e.from === 'worker' && /idle_notification/.test(e.text)).length;
function teamFileMissed() {
  const dir = path.join(st.cfg, 'debug');
  try {
    return fs.readdirSync(dir).filter((f) => f.endsWith('.txt'))
      .some((f) => fs.readFileSync(path.join(dir, f), 'utf8').includes('[TeammateInit] Team file not found'));
  } catch (_) { return false; }
}
const env = { TEAMCTL_TEAM: TEAM, TEAMCTL_FROM: 'ops' };

// `wait --idle worker` within 20 s, by the worker's transcript.
async function waitIdle(what) {
  const w = await teamctl(['--json', 'wait', '--idle', 'worker', '--timeout', '20s'], env);
  check(w.code === 0, `${what}: wait --idle exited ${w.code}: ${w.stderr}\n${w.stdout}`);
  const detail = lastJson(w.stdout).conditions[0].detail;
  check(detail.includes('reported no idle'), `${what}: wait --idle met, but not by the transcript: ${detail}`);
  return w.ms;
}

// create-race: N teammates started by `teamctl create`; who never reported idle.
async function createRace(version) {
  const names = Array.from({ length: Number(args.teammates) }, (_, i) => `w${i + 1}`);
  const c = await teamctl(['--json', 'create', TEAM, ...names.flatMap((n) => ['--member', `${n}:You are ${n}. Wait for messages.`]),
    '--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--timeout', '60s']);
  check(c.code === 0, `create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const w = await teamctl(['--json', 'wait', '--idle', '--timeout', '60s'], { TEAMCTL_TEAM: TEAM });
  check(w.code === 0, `wait --idle exited ${w.code}: ${w.stderr}\n${w.stdout}`);
  // A healthy teammate sets isActive false a moment before its notification lands: 5 s more.
  const notified = (n) => (readJson(inboxFile('team-lead')) || []).some((e) => e.from === n && /idle_notification/.test(e.text));
  await waitFor('every idle notification', 5000, () => names.every(notified)).catch(() => {});
  const silent = names.filter((n) => !notified(n));
  return { claude: version, teammates: names.length, silent, create_ms: c.ms, wait_idle_ms: w.ms };
}

h.run(async () => {
  const version = clientVersion();
  if (args.scenario === 'create-race') return createRace(version);
  setupTeam();
  await startTorn();
  // 1. The brief's turn.
  await waitFor("the worker's first turn in its transcript", 30000, () => {
    const dir = path.join(st.cfg, 'projects');
    return fs.existsSync(dir) && fs.readdirSync(dir).length > 0;
  });
  const briefWaitMs = await waitIdle('the brief');
  // 2. A message, echoed; idle again.
  const S = `S-${hex(4)}`;
  const tSend = now();
  const s = await teamctl(['send', 'worker', `Please echo. Token: ${S}`], env);
  check(s.code === 0, `send exited ${s.code}: ${s.stderr}`);
  await waitFor(`the worker's echo of ${S}`, 30000, () => (readJson(inboxFile('ops')) || []).some((e) => (e.text || '').includes(S)));
  const echoWaitMs = await waitIdle('the echo');
  const idleAfterSendMs = now() - tSend;
  check(idleAfterSendMs < 20000 + 30000, `idle ${idleAfterSendMs} ms after the send`);
  // 3. status and doctor name it.
  const st1 = await teamctl(['--json', 'status'], env);
  check(st1.code === 0, `status exited ${st1.code}: ${st1.stderr}`);
  const doc = lastJson(st1.stdout);
  const team = doc.teams ? doc.teams[0] : doc;
  const w = team.members.find((m) => m.name === 'worker');
  check(w.waiting === 'idle_unreported' && w.idle_unreported_since, `status: ${JSON.stringify(w)}`);
  const needs = team.needs_human || [];
  check(needs.some((n) => n.cause === 'idle_unreported' && n.member === 'worker'), `needs_human: ${JSON.stringify(needs)}`);
  const d = await teamctl(['doctor'], env);
  check(d.stdout.includes('worker of team \'demo\': its turns end but it reports no idle'), `doctor: ${d.stdout}`);
  // 4. ask: answered; a turn without SendMessage is idle by the transcript.
  const A = `A-${hex(4)}`;
  const a1 = await teamctl(['ask', 'worker', `Please echo. Token: ${A}`, '--timeout', '40s'], env);
  check(a1.code === 0 && a1.stdout === `ECHO ${A}\n`, `ask exited ${a1.code}: ${JSON.stringify(a1.stdout)} ${a1.stderr}`);
  const a2 = await teamctl(['ask', 'worker', 'Just think about it quietly.', '--timeout', '40s'], env);
  check(a2.code === 5 && a2.stderr.includes('it reported no idle'), `silent ask exited ${a2.code}: ${a2.stderr}`);
  return {
    claude: version,
    race_met: idles() === 0 && teamFileMissed(),
    idle_notifications: idles(),
    brief_wait_idle_ms: briefWaitMs,
    echo_wait_idle_ms: echoWaitMs,
    idle_after_send_ms: idleAfterSendMs,
    silent_ask_ms: a2.ms,
    status_waiting: w.waiting,
  };
});
