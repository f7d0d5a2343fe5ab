#!/usr/bin/env node
'use strict';
// Probe (not a test): can an interactive Claude Code lead lead a team that teamctl made from a
// team file? (issue 37, `run --file`.) Prints a timeline of what shows in the team's files.
//   1. `teamctl create --file team.toml`: alice and bob (pane teammates, teamctl as lead); their
//      briefs carry `Token: A1` / `Token: B1`, so each answers team-lead at once (ECHO A1/B1),
//      before any Claude lead exists.
//   2. A real lead in the same tmux server, with CLAUDE_INTERNAL_ASSISTANT_TEAM_NAME=<team>,
//      prompted `Tell: alice L1` (the mock: SendMessage to alice `Token: L1`).
//   3. What it does to config.json (leadProcess, leadSessionId, members), to team-lead.json
//      (consumed?), which teammate messages reach its model, whether alice's answer reaches it.
//   4. SIGTERM to the lead: is the team folder, or a teammate, ended?
//
//   node tests/e2e/probe-inherit.js --teamctl target/debug/teamctl [--keep] [--verbose]

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const h = require('./harness')({ name: 'probe-inherit', team: 'home', argv: process.argv.slice(2), deadline: 150 });
const { args, st, waitFor, teamctl, check, readJson, tmux, shq, mockLines, sleep, now, T0 } = h;

const log = (m) => process.stderr.write(`[+${String(now() - T0).padStart(6)}] ${m}\n`);
const cfgPath = () => path.join(st.cfg, 'teams', 'home', 'config.json');
const brief = (c) => {
  if (!c) return '(no config.json)';
  const lp = c.leadProcess ? `pid=${c.leadProcess.pid}` : 'none';
  return `leadAgentId=${c.leadAgentId} leadSessionId=${c.leadSessionId} leadProcess=${lp} members=${c.members.map((m) => `${m.name}:${m.backendType}:${m.tmuxPaneId}:active=${m.isActive}`).join(' ')}`;
};
const inboxes = () => {
  const dir = path.join(st.cfg, 'teams', 'home', 'inboxes');
  let out = {};
  try {
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const v = readJson(path.join(dir, f)) || [];
      out[f] = v.map((e) => `${e.from}:${e.text.slice(0, 50).replace(/\n/g, ' ')}:read=${e.read}`);
    }
  } catch (e) { out = { error: e.code }; }
  return out;
};

h.run(async () => {
  const file = path.join(st.tmp, 'team.toml');
  fs.writeFileSync(file, [
    'name = "home"',
    `cwd = ${JSON.stringify(st.work)}`,
    '[[member]]', 'name = "alice"', 'brief = "Token: A1"',
    '[[member]]', 'name = "bob"', 'brief = "Token: B1"', '',
  ].join('\n'));
  const c = await teamctl(['--json', 'create', '--file', file, '--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--timeout', '40s']);
  check(c.code === 0, `create: ${c.stderr}\n${c.stdout}`);
  log(`created: ${brief(readJson(cfgPath()))}`);
  await waitFor('both echoes in team-lead.json', 30000, () => (inboxes()['team-lead.json'] || []).length >= 2);
  await sleep(1500);
  log(`before the lead: ${JSON.stringify(inboxes())}`);
  const leadRec = fs.readdirSync(path.join(st.home)).join(',');
  log(`home: ${leadRec}`);

  const sid = crypto.randomUUID();
  const cmd = `cd ${shq(st.work)} && exec env CLAUDE_CONFIG_DIR=${shq(st.cfg)} CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 CLAUDE_INTERNAL_ASSISTANT_TEAM_NAME=home ${shq(args.claudeBin)} --session-id ${sid} --dangerously-skip-permissions -- 'Tell: alice L1'`;
  const r = tmux('new-session', '-d', '-s', 'probe-lead', '-x', '200', '-y', '50', '-P', '-F', '#{pane_id} #{pane_pid}', cmd);
  check(r.status === 0, `tmux: ${r.stderr}`);
  const [pane, pid] = r.stdout.trim().split(' ');
  log(`lead started: pane ${pane} pid ${pid} session ${sid}`);
  let last = '';
  const t0 = now();
  while (now() - t0 < 25000) {
    const s = `${brief(readJson(cfgPath()))}\n    inboxes ${JSON.stringify(inboxes())}\n    teams ${fs.readdirSync(path.join(st.cfg, 'teams')).join(',')}`;
    if (s !== last) { log(s); last = s; }
    await sleep(100);
  }
  for (const l of mockLines()) log(`mock: ${JSON.stringify({ why: l.why, lastText: (l.lastText || '').slice(0, 300) })}`);
  const screen = tmux('capture-pane', '-p', '-t', pane).stdout.split('\n').filter((x) => x.trim()).slice(-25).join('\n');
  log(`lead screen:\n${screen}`);
  // Ending the lead as `run` does.
  process.kill(Number(pid), 'SIGTERM');
  const t1 = now();
  last = '';
  while (now() - t1 < 6000) {
    let s;
    try { s = `${brief(readJson(cfgPath()))} teams=${fs.readdirSync(path.join(st.cfg, 'teams')).join(',')}`; } catch (e) { s = e.code; }
    const p = tmux('list-panes', '-a', '-F', '#{session_name} #{pane_id} #{pane_dead} #{pane_current_command}').stdout.trim().replace(/\n/g, ' | ');
    s += ` panes: ${p}`;
    if (s !== last) { log(`after SIGTERM: ${s}`); last = s; }
    await sleep(100);
  }
  return { probe: 'done' };
});
