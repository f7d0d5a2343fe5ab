#!/usr/bin/env node
'use strict';
// End to end (issue 30) with the real Claude Code offline: `teamctl run --max-teammates 1` with a
// lead that starts two pane teammates one after the other (the mock's `Spawn2:`): the second,
// past the limit, has its pane ended by teamctl (in the run's own tmux session) and the lead is
// told in its inbox; the run ends done, with at most one teammate running at any later look.
// (A teamctl shutdown_request cannot stop it: a lead-spawned teammate holds a lead key and
// refuses one that its lead did not sign; Claude Code 2.1.332 has no limit of its own.)
//
//   node tests/e2e/limit-e2e.js --teamctl target/debug/teamctl [--keep] [--verbose]

const h = require('./harness')({
  name: 'limit-e2e',
  team: null,
  argv: process.argv.slice(2),
  deadline: 120,
  dirs: ['data'],
  env: (env, st) => ({ ...env, TEAMCTL_DATA_DIR: st.data }),
  mockTeamctl: false,
});
const { args, check, teamctl, hex } = h;

const jsonLines = (s) => s.split('\n').filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l); } catch (_) { return null; } }).filter(Boolean);

h.run(async () => {
  const [a, b] = [`TA-${hex(3)}`, `TB-${hex(3)}`];
  const r = await teamctl(['--json', 'run', `Spawn2: w1 ${a} w2 ${b}`, '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--teammate-mode', 'tmux', '--timeout', '60s', '--settle', '2s',
    '--name', 'e2e-limit', '--max-teammates', '1']);
  const result = JSON.parse(r.stdout.trim());
  const events = jsonLines(r.stderr);
  const stopped = events.filter((e) => e.type === 'progress' && /past --max-teammates 1/.test(e.message || ''));
  check(stopped.length === 1 && /w2/.test(stopped[0].message) && /pane %\d+ was ended/.test(stopped[0].message),
    `stop events: ${JSON.stringify(stopped)}\n${r.stderr}`);
  check(r.code === 0 && result.state === 'done', `run: exit ${r.code}, ${result.state}: ${result.reason}`);
  const running = result.teammates.filter((t) => t.state !== 'exited');
  check(running.length <= 1 && running.every((t) => t.name === 'w1'), `teammates ${JSON.stringify(result.teammates)}`);
  return { claude: result.claude.version, stopped: stopped[0].message, teammates: result.teammates.map((t) => `${t.name}: ${t.state}`), result: result.result };
});
