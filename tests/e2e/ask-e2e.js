#!/usr/bin/env node
'use strict';
// End to end for `teamctl ask` and `teamctl wait` against the REAL Claude Code 2.1.332,
// offline (harness.js): a team `teamctl create` made, one real pane teammate.
//
//   node tests/e2e/ask-e2e.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>]
//
// Steps: `wait --idle worker` returns after the brief's turn; `ask worker "Token: …"` prints
// the teammate's answer (the mock makes it SendMessage the token back); `ask worker` with a
// question the mock's turn ends without SendMessage is exit 5 (idle without answering); a turn
// that ends in plain text (`Say:`) is exit 5 saying the transcript holds it, and with
// --from-transcript that text is the answer (and `wait --message-from --from-transcript`'s
// message);
// `tasks add --owner worker` mails it a task_assignment, the mock drives its TaskUpdate tool
// to complete it, and `wait --tasks-done` returns; `wait --idle worker` returns after that
// turn. Then examples/ci/team-review.sh (the README's CI recipe) runs against the real client.

const fs = require('fs');
const path = require('path');
const h = require('./harness')({ name: 'ask-e2e', team: 'demo', argv: process.argv.slice(2), deadline: 150 });

const { check, fail, teamctl, lastJson, hex, exec, st } = h;

h.run(async () => {
  const c = await teamctl(['--json', 'create', 'demo', '--member', 'worker:You are worker. Wait for messages.',
    '--claude-bin', h.args.claudeBin, '--dangerously-skip-permissions', '--timeout', '30s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  check(lastJson(c.stdout).state === 'ready', `create: ${c.stdout}`);
  const env = { TEAMCTL_TEAM: 'demo' };

  // The brief's turn ends (the mock answers "ok"): the teammate is idle.
  const w1 = await teamctl(['--json', 'wait', '--idle', 'worker', '--timeout', '40s'], env);
  check(w1.code === 0, `wait --idle exited ${w1.code}: ${w1.stderr}\n${w1.stdout}`);
  check(lastJson(w1.stdout).conditions[0].met === true, `wait --idle: ${w1.stdout}`);

  // ask: the answer on stdout, alone.
  const tok = `Q-${hex(4)}`;
  const a1 = await teamctl(['ask', 'worker', `Please echo. Token: ${tok}`, '--timeout', '40s'], env);
  check(a1.code === 0, `ask exited ${a1.code}: ${a1.stderr}`);
  check(a1.stdout === `ECHO ${tok}\n`, `ask printed ${JSON.stringify(a1.stdout)}`);
  const a1j = await teamctl(['--json', 'ask', 'worker', `Again. Token: ${tok}-2`, '--timeout', '40s'], env);
  check(a1j.code === 0, `ask --json exited ${a1j.code}: ${a1j.stderr}`);
  const r = lastJson(a1j.stdout);
  check(r.outcome === 'answered' && r.reply.text === `ECHO ${tok}-2` && r.reply.from === 'worker'
    && r.taken_at && r.answered_at, `ask --json: ${a1j.stdout}`);

  // A turn that ends without SendMessage: idle without answering, exit 5.
  const a2 = await teamctl(['--json', 'ask', 'worker', 'Just think about it quietly.', '--timeout', '40s'], env);
  check(a2.code === 5, `silent ask exited ${a2.code}: ${a2.stderr}\n${a2.stdout}`);
  const r2 = lastJson(a2.stdout);
  check(r2.outcome === 'idle' && r2.reply === null, `silent ask: ${a2.stdout}`);
  check(a2.stderr.includes('went idle without answering'), `silent ask stderr: ${a2.stderr}`);

  // A turn that ends in plain text (the mock's `Say:` rule): without --from-transcript exit 5,
  // saying that the transcript holds the text; with it, that text is the answer, exit 0.
  const said1 = `All done, the answer is ${hex(3)}.`;
  const a3 = await teamctl(['--json', 'ask', 'worker', `Say: ${said1}`, '--timeout', '40s'], env);
  check(a3.code === 5, `plain-text ask exited ${a3.code}: ${a3.stderr}\n${a3.stdout}`);
  const r3 = lastJson(a3.stdout);
  check(r3.outcome === 'idle' && r3.source === null && r3.text === null, `plain-text ask: ${a3.stdout}`);
  // The transcript holds it (a client that wrote it later than ask looked: the notification).
  const heldBy = [`(${said1}), which its transcript holds`, `(${said1}), which its idle notification holds`]
    .findIndex((t) => a3.stderr.includes(t));
  check(heldBy >= 0 && a3.stderr.includes('--from-transcript'), `plain-text ask stderr: ${a3.stderr}`);
  // 2.1.322 and later put the same text in the idle_notification as result (its "last words").
  const idleResult = r3.detail.includes(`last words: ${said1}`);
  const said2 = `Finished, the total is ${hex(3)}.`;
  const a4 = await teamctl(['ask', 'worker', `Say: ${said2}`, '--from-transcript', '--timeout', '40s'], env);
  check(a4.code === 0 && a4.stdout === `${said2}\n`, `ask --from-transcript exited ${a4.code}: ${JSON.stringify(a4.stdout)} ${a4.stderr}`);
  const said3 = `Result ${hex(3)}, line one.`;
  const a5 = await teamctl(['--json', 'ask', 'worker', `Say: ${said3}`, '--from-transcript', '--timeout', '40s'], env);
  const r5 = lastJson(a5.stdout);
  check(a5.code === 0 && r5.outcome === 'answered' && r5.source === 'transcript' && r5.text === said3
    && r5.reply === null && r5.answered_at, `ask --json --from-transcript: ${a5.stdout} ${a5.stderr}`);
  // An answer by SendMessage is still the inbox's.
  check(r.source === 'inbox' && r.text === `ECHO ${tok}-2`, `ask --json source: ${a1j.stdout}`);
  // wait --message-from --from-transcript: the turn's text is the message.
  const said4 = `Waited for ${hex(3)}.`;
  const s4 = await teamctl(['--json', 'send', 'worker', `Say: ${said4}`], env);
  check(s4.code === 0, `send exited ${s4.code}: ${s4.stderr}`);
  const w4 = await teamctl(['--json', 'wait', '--message-from', 'worker', '--from-transcript', '--after',
    lastJson(s4.stdout).id, '--timeout', '40s'], env);
  const c4 = w4.code === 0 && lastJson(w4.stdout).conditions[0];
  check(c4 && c4.message.text === said4 && c4.message.source === 'transcript'
    && c4.message.idle_notification.from === 'worker', `wait --from-transcript exited ${w4.code}: ${w4.stdout} ${w4.stderr}`);

  // A task for the worker: the mock's TaskUpdate completes it; wait --tasks-done returns.
  const t = await teamctl(['--json', 'tasks', 'add', 'Finish the thing', '--owner', 'worker'], env);
  check(t.code === 0, `tasks add exited ${t.code}: ${t.stderr}`);
  const w2 = await teamctl(['--json', 'wait', '--tasks-done', '--timeout', '40s'], env);
  check(w2.code === 0, `wait --tasks-done exited ${w2.code}: ${w2.stderr}\n${w2.stdout}`);
  const w3 = await teamctl(['--json', 'wait', '--idle', '--timeout', '40s'], env);
  check(w3.code === 0, `wait --idle (after the task) exited ${w3.code}: ${w3.stderr}\n${w3.stdout}`);

  const d = await teamctl(['delete', 'demo', '--timeout', '20s']);
  check(d.code === 0, `delete exited ${d.code}: ${d.stderr}`);

  // The README's CI recipe, as it is, against the real client (it needs jq; CI has it).
  if (require('child_process').spawnSync('jq', ['--version']).error && !process.env.CI) {
    process.stderr.write('ask-e2e: jq is not installed: the CI recipe is skipped\n');
    return { claude: lastJson(c.stdout).claude.version, wait_idle_ms: w1.ms, ask_ms: a1.ms,
      ask_idle_ms: a2.ms, ask_transcript_ms: a4.ms, idle_result_same: idleResult,
      exit5_source: ['transcript', 'idle_notification'][heldBy], tasks_done_ms: w2.ms,
      recipe_ms: null };
  }
  const recipe = path.join(__dirname, '..', '..', 'examples', 'ci', 'team-review.sh');
  const rtok = `R-${hex(4)}`;
  const rr = await exec('bash', [recipe], {
    TEAM: 'ci-review', TEAMCTL: h.args.teamctl, CLAUDE_BIN: h.args.claudeBin, CLAUDE_CONFIG_DIR: st.cfg,
    REPORT_PROMPT: `Report now. Token: ${rtok}`, WORK_TIMEOUT: '60s', OUT: path.join(st.work, 'reports.md'),
    RECORD: path.join(st.work, 'team-record.tar.gz'),
  });
  check(rr.code === 0, `team-review.sh exited ${rr.code}:\n${rr.stderr}\n${rr.stdout}`);
  const reports = fs.readFileSync(path.join(st.work, 'reports.md'), 'utf8');
  for (const m of ['alice', 'bob']) {
    check(reports.includes(`## ${m}\n\nECHO ${rtok}`), `reports.md lacks ${m}'s report:\n${reports}`);
  }
  check(!fs.existsSync(path.join(st.cfg, 'teams', 'ci-review')), 'the recipe left its team behind');
  // The record the recipe's delete took: the reports are in its conversation and its report.md.
  const record = require('child_process').spawnSync('tar', ['-xzOf', path.join(st.work, 'team-record.tar.gz'),
    'team-record/report.md'], { encoding: 'utf8' });
  check(record.status === 0 && record.stdout.includes(`ECHO ${rtok}`), `team-record.tar.gz: ${record.stderr}`);

  return {
    claude: lastJson(c.stdout).claude.version,
    wait_idle_ms: w1.ms,
    ask_ms: a1.ms,
    ask_idle_ms: a2.ms,
    ask_transcript_ms: a4.ms,
    idle_result_same: idleResult,
    exit5_source: ['transcript', 'idle_notification'][heldBy],
    tasks_done_ms: w2.ms,
    recipe_ms: rr.ms,
  };
});
