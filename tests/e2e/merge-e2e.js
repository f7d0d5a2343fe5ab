#!/usr/bin/env node
'use strict';
// End to end (issue 37, "the team's work comes home") with the real Claude Code offline: a team
// file gives two teammates git worktrees; each commits a file of its own; `wait --idle
// --merge-into` merges both branches onto a new branch once they are idle, with a check, in a
// scratch worktree, leaving the checkout as it was; `diff --json` and `pr --dry-run` tell each
// one's work and cost.
//   1. The work dir is a git repository with `notes.md`. `teamctl create --file team.toml`:
//      alice and bob, each with a worktree; their briefs are `Exec:` commands that write and
//      commit a.txt and b.txt on their branches.
//   2. `diff --json`: each with 1 commit and its one file, +1 -0.
//   3. `wait --idle --merge-into integration --check 'test -e a.txt && test -e b.txt'`: exit 0,
//      both merged, the check run once; integration holds both files; the checkout, its
//      status and main are as they were.
//   4. `pr --into integration --dry-run`: each one's diffstat and a cost.
//
//   node tests/e2e/merge-e2e.js --teamctl target/debug/teamctl [--keep] [--verbose]

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const h = require('./harness')({
  name: 'merge-e2e',
  team: 'home',
  argv: process.argv.slice(2),
  deadline: 120,
});
const { args, st, waitFor, teamctl, check } = h;

const git = (dir, ...a) => {
  const r = spawnSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...a], { encoding: 'utf8', env: { ...st.env, GIT_CONFIG_NOSYSTEM: '1' } });
  check(r.status === 0, `git ${a.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

const commits = (who, file) =>
  `Exec: echo ${who} > ${file} && git add ${file} && git -c user.name=${who} -c user.email=${who}@example.com commit -qm ${who}`;

h.run(async () => {
  const work = st.work;
  git(work, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(work, 'notes.md'), 'base\n');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'base');
  const file = path.join(st.tmp, 'team.toml');
  fs.writeFileSync(file, [
    'name = "home"',
    'description = "Each writes its file"',
    `cwd = ${JSON.stringify(work)}`,
    'model = "haiku"',
    'worktree = true',
    '[[member]]',
    'name = "alice"',
    `brief = ${JSON.stringify(commits('alice', 'a.txt'))}`,
    '[[member]]',
    'name = "bob"',
    `brief = ${JSON.stringify(commits('bob', 'b.txt'))}`,
    '',
  ].join('\n'));
  const before = () => [git(work, 'rev-parse', 'HEAD'), git(work, 'status', '--porcelain'), git(work, 'rev-parse', 'main')].join('\n');

  // 1. Each commits its file on its own branch.
  const c = await teamctl(['--json', 'create', '--file', file, '--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--timeout', '40s']);
  check(c.code === 0, `create: ${c.stderr}\n${c.stdout}`);
  const start = before();
  const base = git(work, 'rev-parse', 'main');
  await waitFor('both commits', 40000, () =>
    ['alice', 'bob'].every((n) => git(work, 'rev-parse', `teamctl/home/${n}`) !== base));

  // 2. diff: one commit and one file each.
  const d = await teamctl(['--json', '--team', 'home', 'diff']);
  check(d.code === 0, `diff: ${d.stderr}`);
  const diff = JSON.parse(d.stdout).members;
  for (const [n, f] of [['alice', 'a.txt'], ['bob', 'b.txt']]) {
    const m = diff.find((x) => x.name === n);
    check(m.commits === 1 && JSON.stringify(m.files) === JSON.stringify([{ path: f, added: 1, deleted: 0 }]), `${n}'s diff: ${JSON.stringify(m)}`);
  }

  // 3. Once both are idle, both branches are merged, checked, and the checkout left alone.
  const w = await teamctl(['--json', '--team', 'home', 'wait', '--idle', '--timeout', '60s', '--merge-into', 'integration', '--check', 'test -e a.txt && test -e b.txt']);
  check(w.code === 0, `wait exit ${w.code}: ${w.stderr}\n${w.stdout}`);
  const merge = JSON.parse(w.stdout).merge;
  check(merge.members.every((m) => m.status === 'merged') && merge.members.length === 2 && merge.checks_run === 1, `merge: ${JSON.stringify(merge)}`);
  check(git(work, 'ls-tree', '-r', '--name-only', 'integration') === 'a.txt\nb.txt\nnotes.md', 'integration holds both files');
  check(before() === start, 'the checkout and main are as they were');

  // 4. The pull request's body: each one's diffstat and cost.
  const p = await teamctl(['--team', 'home', 'pr', '--into', 'integration', '--dry-run']);
  check(p.code === 0, `pr: ${p.stderr}`);
  check(/### alice[\s\S]*Cost: \$[0-9.]+\.[\s\S]*\+1 -0  a\.txt/.test(p.stdout) && /### bob[\s\S]*\+1 -0  b\.txt/.test(p.stdout), `pr body:\n${p.stdout}`);

  const del = await teamctl(['--json', 'delete', 'home', '--timeout', '20s']);
  check(del.code === 0, `delete: ${del.stderr}`);
  return {
    claude: h.lastJson(c.stdout).claude.version,
    merged: merge.members.map((m) => `${m.name}: ${m.status}`),
    checks_run: merge.checks_run,
  };
});
