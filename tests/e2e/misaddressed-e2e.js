#!/usr/bin/env node
'use strict';
// End to end for words written to a name that is no member, against the REAL Claude Code,
// offline (harness.js): a team `teamctl create` made, two real pane teammates, worker and alice.
//
//   node tests/e2e/misaddressed-e2e.js --teamctl <exe> --claude-bin <path> [--keep] [--verbose]
//
// With Claude Code 2.1.112 (the JavaScript package, scripts/compat.sh's cache; set
// CLAUDE_E2E_VERSION=2.1.112): `teamctl send worker "SendTo: alise …"` makes the worker
// SendMessage to `alise` (the mock's SendTo rule), which that version writes into a new
// inboxes/alise.json that nobody reads. `teamctl status --json` must list it under misaddressed
// with the certain suggestion alice, `teamctl doctor --json` must warn about it,
// `teamctl redeliver alise --dry-run` must change nothing, and `teamctl redeliver alise` must
// move it to alice.json; alice's Claude Code then takes it and answers the worker (the mock
// echoes `SENDTO <tok>` back to its sender), and alise.json is left empty. A second run of
// redeliver moves nothing.
//
// Later versions refuse the send (2.1.196: "No teammate named 'alise' in team 'demo'. Did you
// mean 'alice'?"; 2.1.332: "No agent named 'alise' is reachable."), and no inbox is made: the
// driver checks that status lists nothing and that the worker's idle_notification names the
// failed target, and puts the refusal in its summary. 2.1.332 was also seen, 2 runs in about
// 40 (under load), to accept the send ("Message sent to alise's inbox") and write alise.json
// as 2.1.112 does: the driver then checks the same as for 2.1.112.

const fs = require('fs');
const path = require('path');
const TEAM = 'demo';
const h = require('./harness')({ name: 'misaddressed-e2e', team: TEAM, argv: process.argv.slice(2), deadline: 120 });

const { st, CLAUDE_VERSION, now, hex, fail, check, waitFor, teamctl, lastJson, inbox, mockSaw } = h;

h.run(async () => {
  const c = await teamctl(['--json', 'create', TEAM,
    '--member', 'worker:You are worker. Wait for messages.',
    '--member', 'alice:You are alice. Wait for messages.',
    '--claude-bin', h.args.claudeBin, '--dangerously-skip-permissions', '--timeout', '40s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const created = lastJson(c.stdout);
  check(created.state === 'ready', `create: ${c.stdout}`);
  check(created.claude.version === `${CLAUDE_VERSION} (Claude Code)`, `claude version ${created.claude.version}`);
  const env = { TEAMCTL_TEAM: TEAM };
  const w = await teamctl(['--json', 'wait', '--idle', 'worker', 'alice', '--timeout', '60s'], env);
  check(w.code === 0, `wait --idle exited ${w.code}: ${w.stderr}\n${w.stdout}`);

  const tok = `W1-${hex(4)}`;
  const instruction = `SendTo: alise ${tok}`;
  const s = await teamctl(['send', 'worker', instruction], env);
  check(s.code === 0, `send exited ${s.code}: ${s.stderr}`);
  const alise = path.join(st.cfg, 'teams', TEAM, 'inboxes', 'alise.json');
  const t0 = now();
  // 2.1.112 races with itself when it marks its inbox read (docs/compatibility.md): it can
  // read its brief twice and lose a message written meanwhile (seen once in CI: the worker
  // never asked the mock about the instruction). When the mock has not seen it 10 s after a
  // send, it is sent again, up to 3 sends in all.
  let sends = 1;
  let lastSend = now();
  // The worker's turn ends with an idle_notification to its lead either way.
  await waitFor('the worker\'s idle_notification after the send', 40000, async () => {
    if (sends < 3 && !mockSaw(instruction) && now() - lastSend > 10000) {
      sends += 1;
      lastSend = now();
      const again = await teamctl(['send', 'worker', instruction], env);
      check(again.code === 0, `send exited ${again.code}: ${again.stderr}`);
    }
    return (inbox('team-lead') || []).some((e) => e.from === 'worker' && typeof e.text === 'string'
      && e.text.includes('idle_notification') && e.text.includes('[to alise]'));
  });
  const idle = (inbox('team-lead') || []).filter((e) => e.from === 'worker' && e.text.includes('[to alise]')).pop();

  if (!fs.existsSync(alise)) {
    // 2.1.332 and later refuse the send: nothing lands anywhere, status has nothing to list.
    const st1 = await teamctl(['--json', 'status'], env);
    check(st1.code === 0, `status exited ${st1.code}: ${st1.stderr}`);
    check(lastJson(st1.stdout).misaddressed.length === 0, `status: ${st1.stdout}`);
    const refusal = h.mockLines().flatMap((l) => l.toolResults || []).map((r) => r.text)
      .find((t) => /"success":false/.test(t || ''));
    check(refusal, 'the client neither wrote alise.json nor refused the send');
    const d = await teamctl(['delete', TEAM, '--timeout', '20s']);
    check(d.code === 0, `delete exited ${d.code}: ${d.stderr}`);
    return {
      claude: created.claude.version, alise_inbox: false, refusal: JSON.parse(refusal).message,
      idle_notification: JSON.parse(idle.text),
    };
  }

  const landed = JSON.parse(fs.readFileSync(alise, 'utf8'));
  check(landed.length === 1 && landed[0].from === 'worker' && landed[0].text === `SENDTO ${tok}`,
    `alise.json: ${JSON.stringify(landed)}`);
  const landedMs = now() - t0;

  const st1 = await teamctl(['--json', 'status'], env);
  check(st1.code === 0, `status exited ${st1.code}: ${st1.stderr}`);
  const mis = lastJson(st1.stdout).misaddressed;
  check(mis.length === 1 && mis[0].inbox === 'alise' && mis[0].unread === 1 && mis[0].suggestion === 'alice'
    && mis[0].certain === true && mis[0].from.join() === 'worker', `status misaddressed: ${JSON.stringify(mis)}`);
  const human = await teamctl(['status'], env);
  check(human.stdout.includes('misaddressed: alise.json holds 1 unread message'), `status: ${human.stdout}`);
  const doc = await teamctl(['--json', 'doctor'], env);
  const warned = lastJson(doc.stdout).checks.filter((k) => k.check === 'misaddressed');
  check(warned.length === 1 && warned[0].level === 'warn' && warned[0].fix.includes('redeliver alise'),
    `doctor: ${JSON.stringify(warned)}`);

  const before = fs.readFileSync(alise);
  const dry = await teamctl(['--json', 'redeliver', 'alise', '--dry-run'], env);
  check(dry.code === 0 && lastJson(dry.stdout).moved.length === 1, `redeliver --dry-run: ${dry.stdout}${dry.stderr}`);
  check(fs.readFileSync(alise).equals(before), 'redeliver --dry-run changed alise.json');

  const r = await teamctl(['--json', 'redeliver', 'alise'], env);
  check(r.code === 0, `redeliver exited ${r.code}: ${r.stderr}`);
  const moved = lastJson(r.stdout);
  check(moved.to === 'alice' && moved.moved.length === 1 && moved.moved[0].text === `SENDTO ${tok}`,
    `redeliver: ${r.stdout}`);
  check(JSON.parse(fs.readFileSync(alise, 'utf8')).length === 0, 'alise.json still holds the message');
  const tMoved = now();
  // alice's Claude Code takes it and answers the worker.
  await waitFor(`alice's answer ECHO ${tok} to the worker`, 40000, () => (inbox('worker') || [])
    .some((e) => e.from === 'alice' && e.text === `ECHO ${tok}`));
  const answeredMs = now() - tMoved;
  // The client writes its take of what it read after the turn it started, which can already
  // have ended (docs/design.md, "idle"): her answer can come before the mark, so wait for it.
  const aliceLeft = () => (inbox('alice') || []).filter((e) => e.text === `SENDTO ${tok}`);
  await waitFor('alice taking the message (read: true in alice.json)', 20000,
    () => aliceLeft().length > 0 && aliceLeft().every((e) => e.read === true));

  const again = await teamctl(['--json', 'redeliver', 'alise'], env);
  check(again.code === 0 && lastJson(again.stdout).moved.length === 0, `second redeliver: ${again.stdout}${again.stderr}`);
  const st2 = await teamctl(['--json', 'status'], env);
  check(lastJson(st2.stdout).misaddressed.length === 0, `status after: ${st2.stdout}`);
  check(mockSaw(`sendto echo ${tok}`), 'the mock never saw alice take the message');

  const d = await teamctl(['delete', TEAM, '--timeout', '20s']);
  check(d.code === 0, `delete exited ${d.code}: ${d.stderr}`);
  return {
    claude: created.claude.version,
    alise_inbox: true,
    idle_notification: JSON.parse(idle.text),
    landed_ms: landedMs,
    answered_after_redeliver_ms: answeredMs,
  };
});
