#!/usr/bin/env node
'use strict';
// Probe (not a test): per-teammate settings in the real Claude Code, offline against
// mock-api.js. An agent definition `.claude/agents/reviewer.md` (model: haiku, a marker in its
// prompt) is written into the work dir; then
//   1. `teamctl create` three teams of one teammate each: --model claude-sonnet-4-5;
//      --agent-type reviewer; both. For each: the model the teammate sends, whether the
//      definition's prompt reaches the mock (MOCK_LOG_GREP), its config.json entry;
//   2. a real lead (teammateMode tmux) spawns `w1` with Agent {subagent_type: reviewer,
//      model: sonnet}: the pane's command line, the member entry Claude Code writes, the model
//      and prompt the teammate sends.
// Prints a JSON summary. Findings are in docs/research/claude-code-behaviour.md.
//
//   node tests/e2e/probe-settings.js --teamctl target/debug/teamctl [--keep] [--verbose]

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const MARK = 'AGENTDEF-MARKER-7731';
const h = require('./harness')({
  name: 'probe-settings',
  team: null,
  argv: process.argv.slice(2),
  deadline: 150,
  settings: { teammateMode: 'tmux' },
  claudeJson: { teammateMode: 'tmux' },
  mockEnv: { MOCK_LOG_GREP: `${MARK}|"model":"[^"]*"|--agent-type [a-z-]+` },
});
const { args, st, waitFor, teamctl, tmux, readJson, shq } = h;

const sessionsOf = (team) => {
  const c = readJson(path.join(st.cfg, 'teams', team, 'config.json'));
  return c;
};

h.run(async () => {
  fs.mkdirSync(path.join(st.work, '.claude', 'agents'), { recursive: true });
  fs.writeFileSync(path.join(st.work, '.claude', 'agents', 'reviewer.md'),
    `---\nname: reviewer\ndescription: Reviews code for the probe\nmodel: haiku\n---\nYou are the reviewer. ${MARK}.\n`);
  const out = { created: {}, spawned: null };
  const variants = {
    't-model': ['--model', 'claude-sonnet-4-5'],
    't-type': ['--agent-type', 'reviewer'],
    't-both': ['--agent-type', 'reviewer', '--model', 'claude-sonnet-4-5'],
  };
  for (const [team, extra] of Object.entries(variants)) {
    const n0 = h.mockLines().length;
    const c = await teamctl(['--json', 'create', team, '--member', `a:Hello from ${team}`, '--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--timeout', '40s', ...extra]);
    h.check(c.code === 0, `create ${team}: ${c.stderr}`);
    await waitFor(`${team}'s first request`, 30000, () => h.mockLines().length > n0);
    const req = h.mockLines()[n0];
    const member = (sessionsOf(team).members || []).find((m) => m.name === 'a');
    out.created[team] = { flags: extra.join(' '), request_model: req.model, grep: req.grep, member: { agentType: member.agentType, model: member.model } };
    h.trace(`${team}: ${JSON.stringify(out.created[team])}`);
  }
  // A real lead spawns w1 with subagent_type and model.
  const S = crypto.randomUUID();
  fs.writeFileSync(path.join(st.tmp, 'prompt'), 'Spawn: w1 TS1 type=reviewer model=sonnet');
  const envArgs = [];
  for (const [k, v] of Object.entries({ ...st.env, SHELL: '/bin/sh', CLAUDE_CONFIG_DIR: st.cfg, CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1' })) envArgs.push('-e', `${k}=${v}`);
  const cmd = `cd ${shq(st.work)} && exec ${shq(args.claudeBin)} --session-id ${S} --dangerously-skip-permissions -- "$(cat ${shq(path.join(st.tmp, 'prompt'))})"`;
  const r = tmux('new-session', '-d', '-s', 'lead', '-x', '200', '-y', '50', ...envArgs, cmd);
  h.check(r.status === 0, `lead: ${r.stderr}`);
  const team = `session-${S.slice(0, 8)}`;
  await waitFor('w1 to report', 40000, () => h.mockSaw('report TS1'));
  const cfg = sessionsOf(team);
  const w1 = (cfg.members || []).find((m) => m.name === 'w1');
  const pane = h.panes().find((p) => p.id === w1.tmuxPaneId);
  // The pane runs a shell that was typed the command: find claude among its children.
  const kids = require('child_process').spawnSync('ps', ['-o', 'pid=', '--ppid', String(pane.pid)], { encoding: 'utf8' }).stdout.trim().split(/\s+/).filter(Boolean);
  const argv = [pane.pid, ...kids].map((p) => { try { return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean); } catch (_) { return []; } })
    .find((a) => a.some((x) => x.includes('--agent-id'))) || [];
  const spawnReq = h.mockLines().find((l) => l.why === 'spawn w1');
  const w1Reqs = h.mockLines().filter((l) => l.why === 'report TS1');
  out.spawned = {
    agent_tool_input: spawnReq && spawnReq.reply && spawnReq.reply.input,
    member: w1,
    argv: argv.slice(1).join(' ').replace(/--lead-verify-key \S+/, '--lead-verify-key …'),
    request_model: w1Reqs.map((l) => l.model),
    grep: w1Reqs.map((l) => l.grep),
  };
  return out;
});
