#!/usr/bin/env node
'use strict';
// End to end (issue 44, item 6: a teammate's own runtime) with the real Claude Code offline: a
// team file gives alice an MCP server (`mcp_config`, `strict_mcp_config`), a settings file
// (`settings`), an effort (`effort`) and a secret in her environment (`env`, `${NAME}` taken
// from teamctl's environment); bob names none of them; both get the top level's `env`.
//   1. The team folder holds team.toml, mcp.json (one stdio server `probe`, mcp-probe.js, told
//      which variables to look at and the SHA-256 of each value expected) and settings.json
//      (an `env` of its own: RT_SETTINGS_MARK). `.claude.json` has a user-scope server `other`
//      (the same probe), which every session loads unless --strict-mcp-config.
//      `teamctl create --file team.toml` with RT_E2E_KEY set in teamctl's environment only:
//      alice has `env = { RT_PROBE_TOKEN = "${RT_E2E_KEY}" }`.
//   2. Their briefs are `Token:` messages, which each answers. In the mock's log: alice's
//      requests offer `probe`'s tools saying that RT_PROBE_TOKEN (the secret), RT_TEAM_LOG (the
//      top level's env) and RT_SETTINGS_MARK (her settings file) reached it, and no tool of
//      `other` (strict); they carry `"effort":"low"`. bob's offer `other`'s tool and not
//      `probe`'s, and carry another effort.
//   3. The secret is written nowhere: no file under the run's whole temp root (HOME, the config
//      dir, teamctl's data dir, the work dir, an export of the team), no process's argv
//      (/proc/*/cmdline), neither tmux environment (global, the session's); teamctl's record
//      keeps `${RT_E2E_KEY}`.
//   4. `delete`.
//
//   node tests/e2e/runtime-e2e.js --teamctl target/debug/teamctl [--keep] [--verbose]

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const PROBE = path.join(__dirname, 'mcp-probe.js');
const h = require('./harness')({
  name: 'runtime-e2e',
  team: 'rt',
  argv: process.argv.slice(2),
  deadline: 90,
  mockEnv: { MOCK_LOG_GREP: '"effort":"[a-z]+"' },
  // A user-scope MCP server: every session has it, unless --strict-mcp-config.
  claudeJson: { mcpServers: { other: { type: 'stdio', command: process.execPath, args: [PROBE, 'RT_OTHER', '0'] } } },
});
const { args, st, waitFor, teamctl, check, hex } = h;
const sha = (v) => crypto.createHash('sha256').update(v).digest('hex');

// Every file below `dir` whose bytes hold `needle`.
function holding(dir, needle) {
  const out = [];
  let entries = [];
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch (_) { return out; }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...holding(p, needle));
    else if (e.isFile()) {
      try { if (fs.readFileSync(p).includes(needle)) out.push(p); } catch (_) { /* gone meanwhile */ }
    }
  }
  return out;
}

// The argv of every process of the machine that holds `needle`.
function argvHolding(needle) {
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`);
      if (argv.includes(needle)) out.push(`${pid}: ${argv.toString().replace(/\0/g, ' ')}`);
    } catch (_) { /* gone meanwhile */ }
  }
  return out;
}

h.run(async () => {
  const secret = `rt-secret-${hex(12)}`;
  const mark = `mark-${hex(4)}`;
  const dir = path.join(st.tmp, 'team');
  fs.mkdirSync(dir);
  h.writeJson(path.join(dir, 'mcp.json'), { mcpServers: { probe: {
    command: process.execPath,
    args: [PROBE, 'RT_PROBE_TOKEN', sha(secret), 'RT_TEAM_LOG', sha('plain'), 'RT_SETTINGS_MARK', sha(mark)],
  } } });
  h.writeJson(path.join(dir, 'settings.json'), { env: { RT_SETTINGS_MARK: mark } });
  const tokA = `A-${hex(4)}`;
  const tokB = `B-${hex(4)}`;
  const file = path.join(dir, 'team.toml');
  fs.writeFileSync(file, [
    'name = "rt"',
    `cwd = ${JSON.stringify(st.work)}`,
    'permission_mode = "default"',
    'env = { RT_TEAM_LOG = "plain" }',
    '[[member]]',
    'name = "alice"',
    `brief = "Token: ${tokA}"`,
    'mcp_config = "mcp.json"',
    'strict_mcp_config = true',
    'settings = "settings.json"',
    'effort = "low"',
    'env = { RT_PROBE_TOKEN = "${RT_E2E_KEY}" }',
    '[[member]]',
    'name = "bob"',
    `brief = "Token: ${tokB}"`,
    '',
  ].join('\n'));

  // 1. create, with the secret in teamctl's environment only.
  const c = await teamctl(['--json', 'create', '--file', file, '--claude-bin', args.claudeBin, '--timeout', '40s'],
    { RT_E2E_KEY: secret });
  check(c.code === 0, `create: ${c.stderr}\n${c.stdout}`);
  const result = h.lastJson(c.stdout);
  check(result.state === 'ready', `create state ${result.state}: ${result.reason}`);

  // 2. Both answer their brief; what each request carried.
  await waitFor('both answers in team-lead.json', 40000, () => {
    const lead = h.inbox('team-lead') || [];
    return [['alice', tokA], ['bob', tokB]].every(([who, tok]) => lead.some((e) => e.from === who && e.text === `ECHO ${tok}`));
  });
  const reqs = h.mockLines().filter((l) => l.tools);
  const of = (tok) => reqs.filter((l) => (l.lastText || '').includes(tok));
  const alice = of(tokA);
  const bob = of(tokB);
  check(alice.length > 0 && bob.length > 0, `each teammate asked the mock (${alice.length}, ${bob.length})`);
  const mcpTools = (l) => l.tools.filter((t) => t.startsWith('mcp__')).sort();
  const aliceWants = ['mcp__probe__rt_probe_token_ok', 'mcp__probe__rt_settings_mark_ok', 'mcp__probe__rt_team_log_ok'];
  const bobWants = ['mcp__other__rt_other_unset'];
  const sessionOf = (first) => h.mockLines().filter((l) => l.tools && l.session === first[0].session);
  // The first request can go out before the servers have connected (the client then offers
  // WaitForMcpServers): their tools show in the next one, after the answer's SendMessage.
  for (const [who, first, want] of [['alice', alice, aliceWants], ['bob', bob, bobWants]]) {
    await waitFor(`the MCP tools in one of ${who}'s requests`, 20000,
      () => sessionOf(first).some((l) => mcpTools(l).join() === want.join()));
  }
  const aliceAll = sessionOf(alice);
  const bobAll = sessionOf(bob);
  check(aliceAll.every((l) => mcpTools(l).every((t) => aliceWants.includes(t))), `alice's MCP tools: ${aliceAll.map((l) => mcpTools(l))}`);
  check(bobAll.every((l) => mcpTools(l).every((t) => bobWants.includes(t))), `bob's MCP tools: ${bobAll.map((l) => mcpTools(l))}`);
  const effort = (l) => [...new Set(l.grep || [])].join();
  check(aliceAll.every((l) => effort(l) === '"effort":"low"'), `alice's effort: ${aliceAll.map(effort)}`);
  check(bobAll.every((l) => effort(l) && effort(l) !== '"effort":"low"'), `bob's effort: ${bobAll.map(effort)}`);

  // 3. The secret, nowhere.
  const record = path.join(st.tmp, 'record');
  const x = await teamctl(['--team', 'rt', 'export', '--out', record]);
  check(x.code === 0, `export: ${x.stderr}`);
  const files = holding(st.root, secret);
  check(files.length === 0, `the secret is in ${files.join(', ')}`);
  const argv = argvHolding(secret);
  check(argv.length === 0, `the secret is in the argv of ${argv.join('; ')}`);
  for (const a of [['-g'], ['-t', '=teamctl-rt']]) {
    const r = h.tmux('show-environment', ...a);
    check(r.status === 0 && !r.stdout.includes(secret), `tmux show-environment ${a.join(' ')}: ${r.status} ${r.stderr}`);
  }
  const lead = fs.readdirSync(path.join(st.home, '.local/share/teamctl/leads'));
  const rec = h.readJson(path.join(st.home, '.local/share/teamctl/leads', lead[0]));
  const kept = rec.launch.members[0].runtime;
  check(kept.env.RT_PROBE_TOKEN === '${RT_E2E_KEY}', `the record's env: ${JSON.stringify(kept.env)}`);

  // 4. delete.
  const d = await teamctl(['--json', 'delete', 'rt', '--timeout', '20s']);
  check(d.code === 0, `delete: ${d.stderr}`);
  return {
    claude: result.claude.version,
    alice: { mcp_tools: mcpTools(aliceAll[aliceAll.length - 1]), effort: effort(aliceAll[0]), requests: aliceAll.length },
    bob: { mcp_tools: mcpTools(bobAll[bobAll.length - 1]), effort: effort(bobAll[0]), requests: bobAll.length },
    create_ms: c.ms,
  };
});
