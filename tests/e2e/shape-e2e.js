#!/usr/bin/env node
'use strict';
// End to end (issue 30, "shape a team") with the real Claude Code offline: a team file gives two
// teammates different models, agent types and git worktrees; both edit the same relative path;
// a per-member spending cap with --warn-at fires at the right member; delete keeps the dirty
// worktree and removes the clean one.
//   1. The work dir is a git repository with `notes.md`, and `.claude/agents/reviewer.md`
//      (model haiku, a marker in its prompt). `teamctl create --file team.toml`: alice
//      (model claude-sonnet-4-5, agent type reviewer, worktree) and bob (model haiku, no agent
//      type, worktree on branch bob-work). Checked in the mock's log: alice's requests name
//      claude-sonnet-4-5 and carry the definition's prompt; bob's name the haiku model and do
//      not. config.json records `model` as given and `agentType`.
//   2. Their briefs are `Exec:` commands run in their worktrees: alice writes notes.md, bob
//      writes it and commits. Two different files, on two branches; the checkout is untouched.
//   3. `status --json`: each worktree with 1 file changed; each member's context.
//   4. `wait --max-cost-per-member` between the two members' costs, `--warn-at 1`: exit 6
//      naming alice, after a budget_warning for her (once) on stderr.
//   5. `delete --json`: alice's worktree (uncommitted change) kept, bob's (clean) removed, both
//      branches kept.
//
//   node tests/e2e/shape-e2e.js --teamctl target/debug/teamctl [--keep] [--verbose]

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const MARK = 'AGENTDEF-MARKER-5150';
const h = require('./harness')({
  name: 'shape-e2e',
  team: 'shape',
  argv: process.argv.slice(2),
  deadline: 120,
  mockEnv: { MOCK_LOG_GREP: MARK },
});
const { args, st, waitFor, teamctl, check } = h;

const git = (dir, ...a) => {
  const r = spawnSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...a], { encoding: 'utf8', env: { ...st.env, GIT_CONFIG_NOSYSTEM: '1' } });
  check(r.status === 0, `git ${a.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

h.run(async () => {
  const work = st.work;
  git(work, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(work, 'notes.md'), 'base\n');
  fs.mkdirSync(path.join(work, '.claude', 'agents'), { recursive: true });
  fs.writeFileSync(path.join(work, '.claude', 'agents', 'reviewer.md'),
    `---\nname: reviewer\ndescription: Reviews code for the test\nmodel: haiku\n---\nYou are the reviewer. ${MARK}.\n`);
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'base');
  const file = path.join(st.tmp, 'team.toml');
  fs.writeFileSync(file, [
    'name = "shape"',
    `cwd = ${JSON.stringify(work)}`,
    '[[member]]',
    'name = "alice"',
    'brief = "Exec: echo alice > notes.md"',
    'model = "claude-sonnet-4-5"',
    'agent_type = "reviewer"',
    'worktree = true',
    '[[member]]',
    'name = "bob"',
    'brief = "Exec: echo bob > notes.md && git -c user.name=b -c user.email=b@example.com commit -qam bob"',
    'model = "haiku"',
    'worktree = "bob-work"',
    '',
  ].join('\n'));

  // 1. Each teammate starts with its own model and agent type.
  const c = await teamctl(['--json', 'create', '--file', file, '--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--timeout', '40s']);
  check(c.code === 0, `create: ${c.stderr}\n${c.stdout}`);
  const cfg = h.readJson(path.join(st.cfg, 'teams', 'shape', 'config.json'));
  const entry = (n) => cfg.members.find((m) => m.name === n);
  check(entry('alice').model === 'claude-sonnet-4-5' && entry('alice').agentType === 'reviewer', `alice's entry: ${JSON.stringify(entry('alice'))}`);
  check(entry('bob').model === 'haiku' && entry('bob').agentType === 'general-purpose', `bob's entry: ${JSON.stringify(entry('bob'))}`);
  const aliceTree = entry('alice').cwd;
  const bobTree = entry('bob').cwd;
  check(aliceTree !== bobTree && !aliceTree.startsWith(work), `worktrees: ${aliceTree} ${bobTree}`);

  // 2. Both edit notes.md in their own worktree.
  await waitFor('both commands to run', 40000, () =>
    fs.existsSync(path.join(aliceTree, 'notes.md')) && fs.readFileSync(path.join(aliceTree, 'notes.md'), 'utf8') === 'alice\n'
    && git(work, 'rev-parse', 'bob-work') !== git(work, 'rev-parse', 'main'));
  const reqs = h.mockLines();
  const of = (who) => reqs.filter((l) => (l.why || '').startsWith(`exec echo ${who}`));
  const alice = of('alice');
  const bob = of('bob');
  check(alice.length > 0 && bob.length > 0, 'each teammate asked the mock');
  check(alice.every((l) => l.model === 'claude-sonnet-4-5'), `alice's models: ${alice.map((l) => l.model)}`);
  check(alice.every((l) => (l.grep || []).some((g) => g.includes(MARK))), "alice's requests carry the reviewer's prompt");
  check(bob.every((l) => /haiku/.test(l.model)), `bob's models: ${bob.map((l) => l.model)}`);
  check(bob.every((l) => !(l.grep || []).length), "bob's requests carry no agent definition");
  check(git(work, 'show', 'bob-work:notes.md') === 'bob', "bob's branch has his file");
  check(fs.readFileSync(path.join(work, 'notes.md'), 'utf8') === 'base\n' && git(work, 'status', '--porcelain') === '', 'the checkout is untouched');

  // 3. status: each worktree and context.
  let members;
  await waitFor('both teammates with a priced transcript', 30000, async () => {
    const s = await teamctl(['--json', '--team', 'shape', 'status']);
    members = JSON.parse(s.stdout).members;
    const m = (n) => members.find((x) => x.name === n);
    return m('alice').context && m('bob').context && m('alice').cost_usd > 0 && m('bob').cost_usd > 0;
  });
  const m = (n) => members.find((x) => x.name === n);
  check(m('alice').worktree.branch === 'teamctl/shape/alice' && m('alice').worktree.changed === 1, `alice: ${JSON.stringify(m('alice').worktree)}`);
  check(m('bob').worktree.branch === 'bob-work' && m('bob').worktree.changed === 1, `bob: ${JSON.stringify(m('bob').worktree)}`);
  check(m('alice').context.window === 200000 && m('alice').context.used > 0, `alice's context: ${JSON.stringify(m('alice').context)}`);

  // 4. A per-member cap between their costs: alice (sonnet) crosses it, bob (haiku) does not.
  const cap = (m('alice').cost_usd + m('bob').cost_usd) / 2;
  const w = await teamctl(['--json', '--team', 'shape', 'wait', '--idle', '--timeout', '10s', '--max-cost-per-member', String(cap), '--warn-at', '60']);
  check(w.code === 6, `wait exit ${w.code}: ${w.stderr}`);
  check(/budget exceeded: alice spent/.test(w.stderr), `wait's error: ${w.stderr}`);
  const warnings = w.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((e) => e.type === 'budget_warning');
  check(warnings.length === 1 && warnings[0].member === 'alice' && warnings[0].limit === 'max_cost_per_member', `warnings: ${JSON.stringify(warnings)}`);

  // 5. delete: the dirty worktree is kept, the clean one removed, every branch kept.
  const d = await teamctl(['--json', 'delete', 'shape', '--timeout', '20s']);
  check(d.code === 0, `delete: ${d.stderr}`);
  const trees = JSON.parse(d.stdout).worktrees;
  const t = (n) => trees.find((x) => x.member === n);
  check(t('alice').action === 'kept' && t('bob').action === 'removed', `worktrees: ${JSON.stringify(trees)}`);
  check(fs.existsSync(aliceTree) && !fs.existsSync(bobTree), 'on disk as said');
  git(work, 'rev-parse', '--verify', 'teamctl/shape/alice');
  return {
    claude: h.lastJson(c.stdout).claude.version,
    models: { alice: alice[0].model, bob: bob[0].model },
    context: m('alice').context,
    cost: { alice: m('alice').cost_usd, bob: m('bob').cost_usd, cap },
    warning: warnings[0],
    worktrees: trees.map((x) => `${x.member}: ${x.action}`),
  };
});
