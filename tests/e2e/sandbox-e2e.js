#!/usr/bin/env node
'use strict';
// End-to-end test of `teamctl create --sandbox --worktree` against the REAL Claude Code 2.1.332,
// offline (docs/sandbox.md): the teammate runs in bubblewrap, in a clone of its own.
//
//   node tests/e2e/sandbox-e2e.js --teamctl <exe> [--scenario create|run] [--keep] [--verbose]
//                                 [--claude-bin <path>] [--deadline <seconds>]
//
// run: `teamctl --json run "Spawn: worker <tok>" --sandbox --teammate-mode tmux` in the git
// repository: the lead's tmux server runs in bubblewrap, the lead spawns its pane teammate
// there, the teammate reports and the run ends `done` with the lead's final answer; the
// record's members each show the sandbox, and no tmux server is left.
//
// create (the default). Steps: the work dir is a git repository; `teamctl create sbx --sandbox --worktree
// --dangerously-skip-permissions` must reach ready, the teammate running in its sandbox
// (status --json members[].sandbox); `Token: T1` must be answered into the lead's inbox; a Bash
// command that writes in its clone and commits there must work; one that writes into the
// repository's checkout must fail (a read-only file system) and leave nothing; `Token: T2`
// must still be answered (the teammate goes on); `teamctl diff` must show its commit, brought
// home into the repository; `teamctl delete` must shut it down.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary, tmux or a working bwrap missing).

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const TEAM = 'sbx';
const probe = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-pid', '--proc', '/proc', '--dev', '/dev', '--', '/bin/true']);
if (probe.error || probe.status !== 0) {
  process.stderr.write('sandbox-e2e: SKIP: bubblewrap (bwrap) does not make a sandbox here\n');
  process.exit(77);
}
const h = require('./harness')({
  name: 'sandbox-e2e', team: null, argv: process.argv.slice(2), deadline: 90,
  synopsis: '--teamctl <exe> [--scenario create|run] [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]',
  flags: { '--scenario': { key: 'scenario', value: 'create', check: (v) => (['create', 'run'].includes(v) ? null : `bad --scenario ${v}`) } },
});
const { args, st, hex, fail, check, waitFor, teamctl, lastJson, mockLines } = h;
const inbox = (m) => h.inbox(m, TEAM);

function git(dir, ...a) {
  const r = spawnSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...a], { encoding: 'utf8', env: { ...process.env, HOME: st.home } });
  if (r.status !== 0) fail(`git ${a.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

// Sends `text` to the worker; waits for the echo of its token.
async function echo(tok) {
  const s = await teamctl(['send', 'worker', `Token: ${tok}`]);
  check(s.code === 0, `send exited ${s.code}: ${s.stderr}`);
  const t0 = h.now();
  await waitFor(`the echo of ${tok}`, 30000, () => (inbox('team-lead') || []).some((e) => e.from === 'worker' && e.text === `ECHO ${tok}`));
  return h.now() - t0;
}

// Has the worker run `command`? The tool result the mock saw for it ({is_error, text}), or null.
function resultOf(marker) {
  const lines = mockLines();
  for (let i = 0; i + 1 < lines.length; i++) {
    const asked = lines[i].reply && lines[i].reply.tool === 'Bash' && lines[i].reply.input.command.includes(marker);
    if (asked && lines[i + 1].toolResults && lines[i + 1].toolResults.length) return lines[i + 1].toolResults[0];
  }
  return null;
}

async function exec(command, marker) {
  const s = await teamctl(['send', '--summary', 'run', 'worker', `Exec: ${command}`]);
  check(s.code === 0, `send exited ${s.code}: ${s.stderr}`);
  return waitFor(`the result of ${marker}`, 30000, () => resultOf(marker));
}

// `run --sandbox`: the lead and its pane teammate in one sandbox.
async function runScenario() {
  const tok = `TOK-${hex(4)}`;
  const rec = path.join(st.root, 'record');
  const r = await teamctl(['--json', 'run', `Spawn: worker ${tok}`, '--sandbox', '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--teammate-mode', 'tmux', '--timeout', '60s', '--settle', '2s',
    '--name', 'e2e-sb', '--cwd', st.work, '--export', rec]);
  const result = lastJson(r.stdout);
  check(r.code === 0, `run exited ${r.code} (state ${result.state}: ${result.reason})\n${r.stderr}`);
  check(result.state === 'done' && (result.result || '').includes(tok), `result ${JSON.stringify(result)}`);
  const worker = result.teammates.find((t) => t.name === 'worker');
  check(worker && worker.backend === 'tmux', `teammates ${JSON.stringify(result.teammates)}`);
  const summary = JSON.parse(fs.readFileSync(path.join(rec, 'summary.json'), 'utf8'));
  for (const m of summary.status.members) check(m.sandbox && m.sandbox.engine === 'bwrap', `member ${m.name}: ${JSON.stringify(m.sandbox)}`);
  const dir = path.join(st.home, '.local/share/teamctl/sandbox/run-e2e-sb');
  const ls = spawnSync('tmux', ['list-sessions'], { env: { ...process.env, TMUX_TMPDIR: dir, TMUX: '' } });
  check(ls.status !== 0, 'the sandbox\'s tmux server is still running');
  return { claude: result.claude.version, scenario: 'run', run_ms: r.ms, members: summary.status.members.map((m) => m.name) };
}

h.run(async () => {
  git(st.work, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(st.work, 'README'), 'hello\n');
  git(st.work, 'add', 'README');
  git(st.work, 'commit', '-q', '-m', 'start');
  if (args.scenario === 'run') return runScenario();
  const c = await teamctl(['--json', 'create', TEAM, '--member', 'worker:You are worker. Wait for messages.',
    '--sandbox', '--worktree', '--cwd', st.work, '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--timeout', '40s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const result = lastJson(c.stdout);
  check(result.state === 'ready', `create state ${result.state}: ${result.reason}`);
  const sandbox = result.members[0].sandbox;
  check(sandbox && sandbox.engine === 'bwrap' && sandbox.network === 'on', `sandbox ${JSON.stringify(sandbox)}`);
  const clone = sandbox.writable[0];
  const s = await teamctl(['--json', 'status']);
  check(JSON.stringify(lastJson(s.stdout).members.find((m) => m.name === 'worker').sandbox) === JSON.stringify(sandbox), 'status shows another sandbox');

  const reply1Ms = await echo(`T1-${hex(4)}`);

  // Writes and commits in its own clone: allowed.
  const inTok = `IN-${hex(4)}`;
  const inside = await exec(`echo ${inTok} > inside.txt && git add inside.txt && git -c user.name=w -c user.email=w@example.com commit -q -m ${inTok} && echo committed`, inTok);
  check(!inside.is_error, `the write in its clone failed: ${inside.text}`);
  check(fs.readFileSync(path.join(clone, 'inside.txt'), 'utf8').trim() === inTok, 'inside.txt not in the clone');

  // Writes into the repository's checkout: refused, the command fails.
  const outTok = `OUT-${hex(4)}`;
  const outside = path.join(st.work, 'outside.txt');
  const refused = await exec(`echo ${outTok} > ${outside}`, outTok);
  check(refused.is_error && /Read-only file system/.test(refused.text), `the write outside: ${JSON.stringify(refused)}`);
  check(!fs.existsSync(outside), 'outside.txt was written into the checkout');

  // And the teammate goes on.
  const reply2Ms = await echo(`T2-${hex(4)}`);

  const d = await teamctl(['--json', 'diff']);
  check(d.code === 0, `diff exited ${d.code}: ${d.stderr}`);
  const w = lastJson(d.stdout).members[0];
  check(w.commits === 1 && w.files.some((f) => f.path === 'inside.txt'), `diff: ${JSON.stringify(w)}`);
  check(git(st.work, 'log', '-1', '--format=%s', `teamctl/${TEAM}/worker`) === inTok, 'the branch did not come home');

  const del = await teamctl(['--json', 'delete', TEAM, '--timeout', '20s']);
  check(del.code === 0, `delete exited ${del.code}: ${del.stderr}`);
  const gone = lastJson(del.stdout).members.find((m) => m.name === 'worker');
  check(gone && gone.shutdown === 'approved', `delete: ${del.stdout}`);

  return {
    claude: result.claude.version,
    create_to_ready_ms: c.ms,
    reply_ms: reply1Ms,
    reply_after_refusal_ms: reply2Ms,
    refused: refused.text.split('\n').find((l) => /Read-only/.test(l)),
    sandbox,
  };
});
