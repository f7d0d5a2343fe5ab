#!/usr/bin/env node
'use strict';
// End to end (issue 37, `run --merge-into`) with the real Claude Code offline: a lead started by
// `teamctl run` in a git repository gives two helpers a worktree each (the Agent tool's
// `isolation: "worktree"`), each commits a file of its own there, and once the run is done
// `--merge-into integration --check …` merges both branches onto a new branch in teamctl's
// scratch worktree, leaving the person's checkout and main as they were.
//   1. The work dir is a git repository with `notes.md` on main.
//   2. `run 'SpawnWT: alice a.txt bob b.txt' --merge-into integration --check 'test -e a.txt &&
//      test -e b.txt'` (mock-api.js: two Agent calls with isolation "worktree"; each helper runs
//      `Exec: <wait 4 s>; echo <name> > <file> && git add && git commit`, so both still work
//      after the lead's turn has ended): exit 0, state done only once both committed, both
//      merged (as alice and bob, their `.meta.json` names), the check run once.
//   3. integration holds a.txt, b.txt and notes.md; HEAD, main and the index are as they were;
//      the checkout's status differs only by Claude Code's own `.claude/` (the worktrees).
//   4. A second run onto integration-2 whose check bob's file breaks (`test ! -e b.txt`): exit 10,
//      alice merged, bob set aside as a failed check; integration and the checkout untouched.
//
//   node tests/e2e/run-merge-e2e.js --teamctl target/debug/teamctl [--keep] [--verbose]

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

// Each helper first waits 4 s (MOCK_SPAWNWT_WAIT), so the lead's turn ends while both still
// work: the run must wait for its background helpers before it is done and merges.
const h = require('./harness')({
  name: 'run-merge-e2e', team: null, argv: process.argv.slice(2), deadline: 240, mockEnv: { MOCK_SPAWNWT_WAIT: '4' },
});
const { args, st, teamctl, check } = h;

const git = (dir, ...a) => {
  const r = spawnSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...a], { encoding: 'utf8', env: { ...st.env, GIT_CONFIG_NOSYSTEM: '1' } });
  check(r.status === 0, `git ${a.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

const run = (name, into, checkCmd) => teamctl(['--json', 'run', 'SpawnWT: alice a.txt bob b.txt', '--claude-bin', args.claudeBin,
  '--dangerously-skip-permissions', '--teammate-mode', 'tmux', '--timeout', '90s', '--settle', '3s',
  '--name', name, '--cwd', st.work, '--merge-into', into, '--check', checkCmd]);

h.run(async () => {
  const work = st.work;
  git(work, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(work, 'notes.md'), 'base\n');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'base');
  const state = () => ({
    head: git(work, 'rev-parse', 'HEAD'),
    main: git(work, 'rev-parse', 'main'),
    index: git(work, 'write-tree'),
    status: git(work, 'status', '--porcelain').split('\n').filter((l) => l && l !== '?? .claude/').join('\n'),
  });
  const start = state();

  // 2. Done, then both helpers' branches merged and checked.
  const r = await run('merged', 'integration', 'test -e a.txt && test -e b.txt');
  check(r.code === 0, `run exited ${r.code}: ${r.stderr}\n${r.stdout}`);
  const result = JSON.parse(r.stdout.trim().split('\n').pop());
  check(result.state === 'done', `state ${result.state}: ${result.reason}`);
  const merge = result.merge;
  check(merge && merge.into === 'integration' && merge.before === null, `merge: ${JSON.stringify(merge)}`);
  const names = merge.members.map((m) => m.name).sort();
  check(JSON.stringify(names) === '["alice","bob"]', `members ${JSON.stringify(merge.members)}`);
  check(merge.members.every((m) => m.status === 'merged' && /^worktree-agent-[0-9a-f]+$/.test(m.branch)), `statuses ${JSON.stringify(merge.members)}`);
  check(merge.checks_run === 1, `checks_run ${merge.checks_run}`);

  // 3. integration holds both files; the checkout is as it was.
  check(git(work, 'ls-tree', '-r', '--name-only', 'integration') === 'a.txt\nb.txt\nnotes.md', 'integration holds both files');
  check(JSON.stringify(state()) === JSON.stringify(start), `the checkout changed: ${JSON.stringify(state())} vs ${JSON.stringify(start)}`);
  const after = git(work, 'rev-parse', 'integration');

  // 4. A check that bob's file breaks: alice merged, bob set aside, exit 10.
  const f = await run('failing', 'integration-2', 'test ! -e b.txt');
  check(f.code === 10, `failing run exited ${f.code}: ${f.stderr}`);
  const failed = JSON.parse(f.stdout.trim().split('\n').pop()).merge;
  const by = (n) => failed.members.find((m) => m.name === n) || {};
  check(by('alice').status === 'merged' && by('bob').status === 'check_failed' && by('bob').check.exit_code === 1, `failing merge: ${JSON.stringify(failed)}`);
  check(git(work, 'ls-tree', '-r', '--name-only', 'integration-2') === 'a.txt\nnotes.md', 'integration-2 holds alice\'s file only');
  check(git(work, 'rev-parse', 'integration') === after, 'integration untouched by the second run');
  check(JSON.stringify(state()) === JSON.stringify(start), 'the checkout changed in the second run');

  return {
    claude: result.claude.version,
    merged: merge.members.map((m) => `${m.name}: ${m.status}`).sort(),
    checks_run: merge.checks_run,
    set_aside: failed.members.map((m) => `${m.name}: ${m.status}`).sort(),
    run_ms: result.elapsed_ms,
  };
});
