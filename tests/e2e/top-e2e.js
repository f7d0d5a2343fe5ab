#!/usr/bin/env node
'use strict';
// End to end for `teamctl top` against the REAL Claude Code 2.1.332, offline (harness.js): a
// team `teamctl create` made, one real pane teammate `worker` in the default permission mode,
// and `teamctl top` in a second session (100x30) of the same private tmux server, driven with
// its keys only.
//
//   node tests/e2e/top-e2e.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>]
//
// Steps: `j` selects the worker, `m`, "Please echo. Token: …", Enter sends it (as team-lead,
// exactly as `send` does); the teammate's reply (its SendMessage into team-lead's inbox) must
// show in top's timeline; Enter shows the worker's story (its transcript) with the message, its
// row DOING and COST; `k`, `i` team-lead's inbox with the reply in full; `m` "Run: …" makes the
// worker ask its lead for permission to run Bash: the request must show under "Waiting for the
// lead" and the worker's row must say permission with the Bash call in DOING, `a` then `y` must
// approve it and the command must run; `q` must end top (exit 0) with
// the terminal given back (main screen, cursor shown).

const fs = require('fs');
const path = require('path');
const TEAM = 'demo';
const h = require('./harness')({ name: 'top-e2e', team: TEAM, argv: process.argv.slice(2), deadline: 90 });

const { args, st, now, hex, fail, check, waitFor, teamctl, lastJson, tmux, inbox, mockSaw, shq } = h;

const screen = () => {
  const r = tmux('capture-pane', '-p', '-t', '=top:');
  return r.status === 0 ? r.stdout : '';
};
const keys = (...k) => check(tmux('send-keys', '-t', '=top:', ...k).status === 0, `send-keys ${k}`);
const type = (text) => check(tmux('send-keys', '-t', '=top:', '-l', text).status === 0, `send-keys -l ${text}`);
const onScreen = (what, ms = 20000) => waitFor(`${JSON.stringify(what)} on top's screen`, ms, () => screen().includes(what));

h.run(async () => {
  const c = await teamctl(['--json', 'create', TEAM, '--member', 'worker:You are worker. Wait for messages.',
    '--claude-bin', args.claudeBin, '--permission-mode', 'default', '--timeout', '30s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const created = lastJson(c.stdout);
  check(created.state === 'ready', `create: ${c.stdout}`);

  // top in its own session of the team's tmux server, its exit code kept in a file.
  const exitFile = path.join(st.root, 'top.exit');
  const cmd = `${shq(args.teamctl)} --claude-dir ${shq(st.cfg)} --team ${TEAM} top; echo $? > ${shq(exitFile)}; exec sleep 600`;
  const s = tmux('new-session', '-d', '-s', 'top', '-x', '100', '-y', '30', cmd);
  check(s.status === 0, `tmux new-session: ${s.stderr}`);
  await onScreen('Members (2)');
  await onScreen('q quit');

  // m: a message to the worker, typed into top.
  keys('j');
  keys('m');
  const tok = `TOP-${hex(4)}`;
  type(`Please echo. Token: ${tok}`);
  await onScreen(`to worker› Please echo. Token: ${tok}`);
  keys('Enter');
  const tSent = now();
  await onScreen('sent ');
  check((inbox('worker') || []).some((e) => e.text === `Please echo. Token: ${tok}` && e.from === 'team-lead')
    || (inbox('team-lead') || []).some((e) => e.text === `ECHO ${tok}`), 'the message did not reach the worker');
  // The reply, in the timeline (its summary) and in full in team-lead's inbox.
  await waitFor(`ECHO ${tok} in team-lead.json`, 30000, () => (inbox('team-lead') || []).some((e) => e.text === `ECHO ${tok}`));
  const tFile = now();
  await onScreen('worker → team-lead  echo');
  const replyOnScreenMs = now() - tSent;
  const fileToScreenMs = now() - tFile;
  // Enter on the worker: its story (its transcript, as `teamctl log --follow` prints it),
  // with the message it was given; its row's DOING and COST come from the same transcript.
  keys('Enter');
  await onScreen('Story of worker');
  await onScreen(`Token: ${tok}`);
  keys('Escape');
  await onScreen('DOING');
  await waitFor('the worker\'s cost on screen', 20000, () => /worker .*\$\d+\.\d+/.test(screen()));
  // i on team-lead: its inbox, the reply in full.
  keys('k');
  keys('i');
  await onScreen('Inbox of team-lead');
  await onScreen(`ECHO ${tok}`);
  keys('Escape');
  await onScreen('Members (2)');

  // A permission request, answered in top: a, then y.
  const run = `R-${hex(4)}`;
  keys('j');
  keys('m');
  type(`Run: ${run}`);
  keys('Enter');
  const tAsk = now();
  // 2.1.332 sometimes fails to deliver the request (it reads its own config.json mid-write and
  // tells the model to retry); send the instruction again then, as a person would, up to
  // h.REQUEST_SENDS times in all.
  const SENDS = h.REQUEST_SENDS;
  let asks = 1;
  await waitFor('the permission request on top\'s screen', 60000, () => {
    const sc = screen();
    if (sc.includes('Waiting for the lead (1)') && sc.includes(`Bash: echo ${run}`)) return true;
    if (asks < SENDS && mockSaw('could not be delivered to the team lead', asks)) {
      asks += 1;
      keys('m');
      type(`Run: ${run}`);
      keys('Enter');
    }
    return false;
  });
  const requestOnScreenMs = now() - tAsk;
  // While it waits, its row says why and what: permission, and the Bash call in DOING.
  await waitFor('the worker waiting for permission, its Bash call in DOING', 20000, () => screen().split('\n')
    .some((l) => l.includes('worker') && l.includes('permission') && l.includes(`Bash: echo ${run}`)));
  const ran = path.join(st.work, `ran-${run}.txt`);
  check(!fs.existsSync(ran), 'the command ran before it was approved');
  keys('a');
  await onScreen('approve perm-');
  keys('y');
  const tApprove = now();
  await onScreen('approved perm-');
  await waitFor(`${ran} (the approved command ran)`, 20000,
    () => fs.existsSync(ran) && fs.readFileSync(ran, 'utf8').trim() === run);
  const approveToRunMs = now() - tApprove;
  await waitFor('the request to leave the screen', 20000, () => !screen().includes('Waiting for the lead'));

  // q: top ends and gives the terminal back.
  keys('q');
  await waitFor('top to exit', 10000, () => fs.existsSync(exitFile) && fs.readFileSync(exitFile, 'utf8').trim() !== '');
  check(fs.readFileSync(exitFile, 'utf8').trim() === '0', `top exited ${fs.readFileSync(exitFile, 'utf8')}`);
  const state = tmux('display-message', '-p', '-t', '=top:', '#{alternate_on} #{cursor_flag}').stdout.trim();
  check(state === '0 1', `the terminal was not given back: alternate_on cursor_flag = ${state}`);

  const d = await teamctl(['delete', TEAM, '--timeout', '20s']);
  check(d.code === 0, `delete exited ${d.code}: ${d.stderr}`);
  return {
    claude: created.claude.version,
    reply_on_screen_ms: replyOnScreenMs,
    reply_file_to_screen_ms: fileToScreenMs,
    request_on_screen_ms: requestOnScreenMs,
    approve_to_command_ms: approveToRunMs,
  };
});
