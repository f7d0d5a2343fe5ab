#!/usr/bin/env node
'use strict';
// Probe (not a test): does a teammate that a real lead spawns with the Agent tool's
// `isolation: "worktree"` get a git worktree of its own, and where is it recorded? (issue 37,
// `run --merge-into`.) `teamctl run --keep` with the prompt `SpawnWT: alice a.txt bob b.txt`
// (mock-api.js: two Agent calls with isolation "worktree", each teammate commits its file), in
// a git repository; then config.json's members, `git worktree list` and the branches.
//
//   node tests/e2e/probe-worktree.js --teamctl target/debug/teamctl [--mode tmux|in-process]
//        [--prompt 'Spawn: worker T1'] (another lead prompt: what an in-process teammate's meta says)

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const h = require('./harness')({
  name: 'probe-worktree', team: null, argv: process.argv.slice(2), deadline: 150,
  flags: { '--mode': { key: 'mode', value: 'tmux' }, '--prompt': { key: 'prompt', value: 'SpawnWT: alice a.txt bob b.txt' } },
});
const { args, st, teamctl, check, readJson, now, T0, tmux } = h;
const log = (m) => process.stderr.write(`[+${String(now() - T0).padStart(6)}] ${m}\n`);
const git = (dir, ...a) => spawnSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...a], { encoding: 'utf8', env: { ...st.env, GIT_CONFIG_NOSYSTEM: '1' } }).stdout.trim();

h.run(async () => {
  const work = st.work;
  git(work, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(work, 'notes.md'), 'base\n');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'base');
  // While it runs: the helpers' .meta.json as they change (MOCK_SPAWNWT_WAIT=<s> makes each
  // helper wait that long before its commit).
  const metas = {};
  const watcher = setInterval(() => {
    const proj = path.join(st.cfg, 'projects');
    let dirs = [];
    try { dirs = fs.readdirSync(proj); } catch (_) { return; }
    for (const p of dirs) {
      let sessions = [];
      try { sessions = fs.readdirSync(path.join(proj, p)); } catch (_) { continue; }
      for (const sdir of sessions) {
        const subs = path.join(proj, p, sdir, 'subagents');
        let files = [];
        try { files = fs.readdirSync(subs); } catch (_) { continue; }
        for (const f of files.filter((x) => x.endsWith('.meta.json'))) {
          const v = readJson(path.join(subs, f));
          const k = v ? JSON.stringify({ name: v.name, requestShape: v.requestShape, finished: v.finished }) : 'unreadable';
          if (metas[f] !== k) { metas[f] = k; log(`meta ${f}: ${k}`); }
        }
      }
    }
  }, 100);
  const r = await teamctl(['--json', 'run', args.prompt, '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--teammate-mode', args.mode, '--timeout', '60s', '--settle', '3s',
    '--name', 'wt', '--cwd', work, '--keep']);
  clearInterval(watcher);
  log(`run exit ${r.code}: ${r.stdout.trim().slice(0, 1500)}`);
  const res = JSON.parse(r.stdout.trim().split('\n').pop());
  const team = res.team;
  const cfg = team && readJson(path.join(st.cfg, 'teams', team, 'config.json'));
  log(`config.json members: ${JSON.stringify(cfg && cfg.members, null, 1)}`);
  log(`git worktree list:\n${git(work, 'worktree', 'list', '--porcelain')}`);
  log(`branches: ${git(work, 'branch', '-a', '-vv')}`);
  log(`status of the checkout: ${JSON.stringify(git(work, 'status', '--porcelain'))} HEAD files: ${git(work, 'ls-tree', '-r', '--name-only', 'HEAD')}`);
  for (const l of h.mockLines()) log(`mock: ${JSON.stringify({ why: l.why, lastText: (l.lastText || '').slice(0, 200) })}`);
  const panes = tmux('list-panes', '-a', '-F', '#{session_name} #{pane_id} #{pane_current_path}').stdout;
  log(`panes: ${panes}`);
  check(true, '');
  return { probe: 'done' };
});
