#!/usr/bin/env node
'use strict';
// Probe (not a test): what the real Claude Code 2.1.332 writes during a teammate's session, so
// that a sandboxed teammate (docs/sandbox.md) can be given exactly that. A teammate is created
// with `teamctl create` (unconfined, or with --sandbox when PROBE_SANDBOX=1), answers a message,
// and runs a Bash command (`Exec:`); then every file under the temp root changed since the
// create is listed, by folder.
//
//   node tests/e2e/probe-sandbox.js --teamctl target/debug/teamctl [--keep] [--verbose]

const fs = require('fs');
const path = require('path');

const TEAM = 'probe';
const h = require('./harness')({ name: 'probe-sandbox', team: TEAM, argv: process.argv.slice(2), deadline: 90 });
const { args, st, hex, check, waitFor, teamctl, inbox } = h;

function changed(dir, since, out = []) {
  let names = [];
  try { names = fs.readdirSync(dir); } catch (_) { return out; }
  for (const n of names) {
    const p = path.join(dir, n);
    let s;
    try { s = fs.lstatSync(p); } catch (_) { continue; }
    if (s.isDirectory()) changed(p, since, out);
    else if (s.mtimeMs >= since) out.push(path.relative(st.root, p));
  }
  return out;
}

h.run(async () => {
  const t0 = Date.now() - 1000;
  const extra = process.env.PROBE_SANDBOX === '1' ? ['--sandbox'] : [];
  const c = await teamctl(['--json', 'create', TEAM, '--member', 'worker:You are worker. Wait for messages.',
    '--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--timeout', '40s', ...extra]);
  check(c.code === 0, `create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const tok = `T-${hex(4)}`;
  await teamctl(['send', 'worker', `Token: ${tok}`]);
  await waitFor('the echo', 20000, () => (inbox('team-lead') || []).some((e) => e.text === `ECHO ${tok}`));
  await teamctl(['send', '--summary', 'run', 'worker', 'Exec: echo in > inside.txt; echo out > /tmp/probe-outside.txt; echo rc=$?']);
  await waitFor('inside.txt', 20000, () => fs.existsSync(path.join(st.work, 'inside.txt')));
  await h.sleep(3000);
  const files = changed(st.root, t0).filter((f) => !f.startsWith('mock.log')).sort();
  return { files };
});
