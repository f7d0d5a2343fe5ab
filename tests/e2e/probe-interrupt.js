#!/usr/bin/env node
'use strict';
// Probe (not a test): what a pane teammate does when its turn is interrupted (Escape in its
// pane while a Bash call runs), and whether the `Interrupt` hook event (in the settings schema
// from 2.1.335) fires for it. A pane teammate `worker` of team `demo` (written by hand, as in
// probe-corrupt.js, with --debug), with hooks in settings.json for Stop, Interrupt and
// TeammateIdle that append their input to a file; after its first turn, ops sends it
// "Work: W-…" (the mock's Bash `timeout 30 tail -f /dev/null`), and once the call runs Escape
// is sent to its pane. Prints, as JSON: the idle notifications before and after, the hook
// inputs seen, the transcript's last entries (type, subtype, stop_reason), isActive.
//
//   node tests/e2e/probe-interrupt.js [--claude-bin PATH] [--keep] [--verbose]

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { lockedJsonUpdate } = require('./lockfile');

const TEAM = 'demo';
const hook = (name) => [{ hooks: [{ type: 'command', command: `cat >> "$CLAUDE_CONFIG_DIR/hook-${name}.jsonl"; echo >> "$CLAUDE_CONFIG_DIR/hook-${name}.jsonl"` }] }];
const h = require('./harness')({
  name: 'probe-interrupt', team: TEAM, session: null, argv: process.argv.slice(2), teamctl: false,
  deadline: 120, ownTmux: true, env: (env) => ({ ...env, CLAUDECODE: '1' }), mockTeamctl: false,
  settings: { hooks: { Stop: hook('Stop'), Interrupt: hook('Interrupt'), TeammateIdle: hook('TeammateIdle') } },
});
const { args, st, now, sleep, hex, trace, fail, waitFor, readJson, writeJson, shq, tmux, clientVersion, mockLines } = h;
const inboxFile = (name) => path.join(st.cfg, 'teams', TEAM, 'inboxes', `${name}.json`);

function setupTeam() {
  fs.mkdirSync(path.dirname(inboxFile('x')), { recursive: true });
  fs.mkdirSync(path.join(st.cfg, 'tasks', TEAM), { recursive: true });
  st.parentSessionId = crypto.randomUUID();
  const joinedAt = now();
  const member = (name, extra) => ({ agentId: `${name}@${TEAM}`, name, joinedAt, tmuxPaneId: '', cwd: st.work, subscriptions: [], ...extra });
  writeJson(path.join(st.cfg, 'teams', TEAM, 'config.json'), {
    name: TEAM, createdAt: joinedAt, leadAgentId: `team-lead@${TEAM}`, leadSessionId: st.parentSessionId,
    members: [member('team-lead', { agentType: 'team-lead', tmuxPaneId: 'leader', backendType: 'in-process' }),
      member('worker', { color: 'blue', agentType: 'general-purpose', backendType: 'tmux' }), member('ops', {})],
  });
  writeJson(inboxFile('team-lead'), []);
  writeJson(inboxFile('ops'), []);
  writeJson(inboxFile('worker'), [{ from: 'team-lead', text: 'You are worker. Wait for messages.', timestamp: new Date().toISOString(), msgV: 1, msg_id: crypto.randomUUID(), type: 'message', read: false }]);
}

const idles = () => (readJson(inboxFile('team-lead')) || []).filter((e) => e.from === 'worker' && /idle_notification/.test(e.text));
const hooks = (name) => {
  try { return fs.readFileSync(path.join(st.cfg, `hook-${name}.jsonl`), 'utf8').split('\n').filter((l) => l.trim()).map((l) => { try { const v = JSON.parse(l); return { hook_event_name: v.hook_event_name, source: v.source, reason: v.reason, via: v.via }; } catch (_) { return l.slice(0, 200); } }); } catch (_) { return []; }
};
function transcriptTail() {
  const dir = path.join(st.cfg, 'projects');
  const out = [];
  for (const p of fs.readdirSync(dir)) for (const f of fs.readdirSync(path.join(dir, p)).filter((x) => x.endsWith('.jsonl'))) {
    for (const l of fs.readFileSync(path.join(dir, p, f), 'utf8').trim().split('\n').slice(-10)) {
      const v = JSON.parse(l);
      out.push([v.type, v.subtype || (v.message && v.message.stop_reason) || '', v.timestamp || ''].join(' '));
    }
  }
  return out;
}

h.run(async () => {
  const version = clientVersion();
  setupTeam();
  const cmd = `cd ${shq(st.work)} && exec env CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 ${shq(args.claudeBin)}` +
    ` --agent-id worker@${TEAM} --agent-name worker --team-name ${TEAM} --agent-color blue` +
    ` --parent-session-id ${st.parentSessionId} --dangerously-skip-permissions --debug`;
  const r = tmux('start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';', 'new-session', '-d', '-s', 'probe', '-x', '200', '-y', '50', '-P', '-F', '#{pane_id}', cmd);
  if (r.status !== 0) fail(`tmux: ${r.stderr}`);
  st.pane = r.stdout.trim();
  lockedJsonUpdate(path.join(st.cfg, 'teams', TEAM, 'config.json'), (cfg) => { cfg.members.find((m) => m.name === 'worker').tmuxPaneId = st.pane; });
  await waitFor('the first idle_notification', 40000, () => idles().length >= 1);
  await sleep(1500);
  const before = { idles: idles().length, stop: hooks('Stop').length };
  const W = `W-${hex(4)}`;
  lockedJsonUpdate(inboxFile('worker'), (v) => { v.push({ from: 'ops', text: `Work: ${W}`, timestamp: new Date().toISOString(), msgV: 1, msg_id: crypto.randomUUID(), type: 'message', read: false }); });
  await waitFor('the Bash call running', 30000, () => mockLines().some((l) => (l.reply && l.reply.tool) === 'Bash'));
  await sleep(2000);
  const tEsc = now();
  tmux('send-keys', '-t', st.pane, 'Escape');
  trace('Escape sent');
  await sleep(8000);
  const member = (readJson(path.join(st.cfg, 'teams', TEAM, 'config.json')).members || []).find((m) => m.name === 'worker') || {};
  return {
    version, before,
    after: { idles: idles().length, last_idle: idles().slice(-1).map((e) => JSON.parse(e.text)).map((f) => ({ idleReason: f.idleReason, at: f.timestamp })) },
    escape_at: new Date(tEsc).toISOString(),
    hooks: { Stop: hooks('Stop'), Interrupt: hooks('Interrupt'), TeammateIdle: hooks('TeammateIdle') },
    is_active: member.isActive === undefined ? null : member.isActive,
    transcript_tail: transcriptTail(),
  };
});
