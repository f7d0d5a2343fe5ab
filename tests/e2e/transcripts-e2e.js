#!/usr/bin/env node
'use strict';
// End-to-end test of what teamctl reads from the transcripts (issue 18): a REAL interactive
// Claude Code lead, offline in a private tmux server against mock-api.js (reporting realistic
// usage: 1000+ input, 700+ output, 30 000 cache-read and 20 000 cache-write tokens a response,
// each response split over two assistant entries), forms its team and spawns `worker` (a tmux
// pane, or in its own process). Then:
//
//  1. activity: `teamctl log worker --follow --json` runs while teamctl sends the worker
//     "Exec: sleep 4": the follower prints the Bash tool_use while the command still runs, and
//     `log worker --json -n 1` and `status --json` (worker.activity) show it too; then the result;
//  2. the cap (tmux mode): `teamctl wait --terminated worker --max-cost <spent + $0.05>` blocks
//     until the worker's next turn crosses it, then exits 6 with outcome `budget` and the totals;
//  3. cost: the computed figures `status --json` reports while the sessions run are kept; then
//     the worker (tmux mode) and the lead are ended with SIGTERM, which makes Claude Code append
//     its own `cost-state`; with the team's config.json put back (the lead deletes its team as
//     it ends), `status --json` must report per member and in total exactly the tokens and
//     `totalCostUSD` Claude Code recorded (cost_source claude_code; an in-process teammate's own
//     part is computed and taken out of the lead's), and the computed figures must equal those
//     records (1e-9).
//
//   node tests/e2e/transcripts-e2e.js --teamctl <exe> --mode tmux|in-process
//                                     [--claude-bin <path>] [--keep] [--verbose] [--deadline <s>]
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux missing).

const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const USAGE_START = JSON.stringify({
  input_tokens: '$n+1000',
  cache_read_input_tokens: 30000,
  cache_creation_input_tokens: 20000,
  cache_creation: { ephemeral_1h_input_tokens: 5000, ephemeral_5m_input_tokens: 15000 },
});

const h = require('./harness')({
  name: 'transcripts-e2e',
  team: null,
  argv: process.argv.slice(2),
  deadline: 120,
  synopsis: '--teamctl <exe> --mode tmux|in-process [--claude-bin <path>] [--keep] [--verbose] [--deadline <s>]',
  flags: {
    '--mode': { key: 'mode', value: 'tmux', check: (v) => (['tmux', 'in-process'].includes(v) ? null : `--mode ${v}: tmux or in-process`) },
  },
  pollMs: 10,
  claudeJson: (args) => ({ teammateMode: args.mode }),
  settings: (args) => ({ teammateMode: args.mode }),
  ownTmux: true,
  mockTeamctl: false,
  dirs: ['data'],
  env: (env, st) => ({ ...env, TEAMCTL_DATA_DIR: st.data }),
  mockEnv: { MOCK_USAGE_START: USAGE_START, MOCK_USAGE_DELTA: '{"output_tokens":"$n+700"}', MOCK_BLOCKS: 'text' },
});

const {
  args, st, T0, now, sleep, hex, trace, fail, check, waitFor, teamctl, lastJson, readJson, panes, clientVersion, mockLines,
  findTeam, leadTeam, processTree, costState, statusOf, quiet,
} = h;

const alive = (pid) => { try { process.kill(pid, 0); return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch (_) { return false; } };

const tokensOf = (cs) => {
  const t = { input: 0, output: 0, cache_read: 0, cache_creation: 0 };
  for (const m of Object.values(cs.modelUsage)) {
    t.input += m.inputTokens; t.output += m.outputTokens;
    t.cache_read += m.cacheReadInputTokens; t.cache_creation += m.cacheCreationInputTokens;
  }
  return t;
};
const sameTokens = (a, b) => ['input', 'output', 'cache_read', 'cache_creation'].every((k) => a[k] === b[k]);
const addTokens = (a, b) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k] + b[k]]));

// A long-running teamctl whose stdout lines are collected as they come.
function follow(argv2) {
  const p = spawn(args.teamctl, ['--claude-dir', st.cfg, ...argv2], { env: st.env, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'] });
  const f = { p, lines: [], stderr: '', code: null };
  let buf = '';
  p.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim()) f.lines.push({ at: now(), v: JSON.parse(line) });
    }
  });
  p.stderr.on('data', (d) => { f.stderr += d; });
  p.on('close', (code) => { f.code = code; });
  st.children = [...(st.children || []), p];
  return f;
}

async function send(team, text) {
  const r = await teamctl(['--team', team, '--json', 'send', '--join', '--from', 'ops', 'worker', text]);
  check(r.code === 0, `send exited ${r.code}: ${r.stderr}`);
}

h.run(async () => {
  const version = clientVersion();
  try {
    return await body(version);
  } finally {
    for (const c of st.children || []) try { c.kill('SIGTERM'); } catch (_) { /* gone */ }
  }
});

async function body(version) {
  // The lead up, its team formed, the worker spawned and through its first turn.
  const team = (await leadTeam()).team.name;
  await waitFor('the worker\'s first turn', 30000, () => mockLines().some((l) => (l.lastText || '').includes('You are worker')));
  let workerPid = null;
  if (args.mode === 'tmux') {
    workerPid = await waitFor('the worker\'s claude process', 20000, () => {
      const t = findTeam();
      const p = t && panes().find((x) => x.id === t.worker.tmuxPaneId);
      const c = p && processTree(p.pid).find((x) => /--agent-name worker/.test(x.cmd) && !/^(\/bin\/)?(ba)?sh /.test(x.cmd));
      return c ? c.pid : null;
    });
  }
  await quiet(1500, 'after the first turns');

  // 1. Activity, live.
  const fol = follow(['--team', team, '--json', 'log', 'worker', '--follow', '-n', '0', '--timeout', '90s']);
  await sleep(300); // the follower's history is empty (-n 0): give it a moment to set its watches
  const tSent = now();
  await send(team, 'Exec: sleep 4');
  const call = await waitFor('the follower to print the Bash call', 20000, () => fol.lines.find((l) => l.v.kind === 'tool_use' && l.v.tool === 'Bash'));
  check(call.v.summary === 'sleep 4', `tool_use summary ${JSON.stringify(call.v)}`);
  // Still running: the log's last event and status's activity are that call.
  const lg = await teamctl(['--team', team, '--json', 'log', 'worker', '-n', '1']);
  const last = lastJson(lg.stdout);
  const s1 = await statusOf(team);
  const act = s1.member('worker').activity;
  check(last.kind === 'tool_use' && last.summary === 'sleep 4', `log -n 1 while it runs: ${lg.stdout}`);
  check(act && act.kind === 'tool_use' && act.tool === 'Bash' && act.summary === 'sleep 4', `status activity while it runs: ${JSON.stringify(act)}`);
  check(!fol.lines.some((l) => l.v.kind === 'tool_result'), 'the result came before status and log looked');
  const result = await waitFor('the follower to print the result', 40000, () => fol.lines.find((l) => l.v.kind === 'tool_result'));
  check(result.v.tool === 'Bash' && result.v.is_error === false, `tool_result ${JSON.stringify(result.v)}`);
  check(result.at - call.at >= 3000, `the call was printed ${result.at - call.at} ms before its result, not while it ran`);
  const activity = { call_after_send_ms: call.at - tSent, result_after_call_ms: result.at - call.at };
  await quiet(1500, 'after the Exec turn');

  // 2. The cap, crossed by the worker's next turn.
  let budget = null;
  if (args.mode === 'tmux') {
    const spent = (await statusOf(team)).totals.cost_usd;
    const cap = (spent + 0.05).toFixed(6);
    const w = follow(['--team', team, '--json', 'wait', '--terminated', 'worker', '--max-cost', cap, '--timeout', '60s']);
    await waitFor('wait to block', 20000, () => w.stderr.includes('waiting up to') || w.code !== null);
    check(w.code === null, `wait ended before the worker's turn (${w.code}): ${w.stderr}`);
    const tTurn = now();
    await send(team, `Token: B-${hex(3)}`);
    await waitFor('wait to end', 30000, () => w.code !== null);
    check(w.code === 6, `wait exited ${w.code}, not 6: ${w.stderr}`);
    const out = w.lines.map((l) => l.v).pop();
    check(out.outcome === 'budget' && out.met === false, `wait --json ${JSON.stringify(out)}`);
    check(out.totals.cost_usd > Number(cap), `totals ${JSON.stringify(out.totals)} not above ${cap}`);
    check(/^error: budget exceeded: \$[0-9.]+ of \$[0-9.]+, by /m.test(w.stderr), `stderr ${w.stderr}`);
    budget = { cap: Number(cap), spent_at_exit: out.totals.cost_usd, after_send_ms: now() - tTurn };
    await quiet(1500, 'after the worker\'s turn');
  }

  // 3. Cost: computed while running, then Claude Code's own records once ended. The snapshot is
  // taken again until no request reached the mock since the last one (under load a lead's turn
  // on its teammate's idle_notification can come seconds later).
  // It is taken again, too, until a second read 1.5 s later says the same and every response
  // the mock gave is in a transcript: a response's entries reach the transcript some time after
  // its request reached the mock (seconds, when the client stalls under load).
  const figures = (v) => JSON.stringify(v.members.map((m) => [m.name, m.cost_usd, m.tokens]));
  const responses = () => mockLines().filter((l) => l.method === 'POST' && Array.isArray(l.tools) && l.tools.length).length;
  const written = () => {
    const ids = new Set();
    const walk = (dir) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.jsonl')) {
          for (const l of fs.readFileSync(p, 'utf8').split('\n')) {
            if (!l.includes('"type":"assistant"')) continue;
            try { ids.add(JSON.parse(l).message.id); } catch (_) { /* a line still being written */ }
          }
        }
      }
    };
    walk(path.join(st.cfg, 'projects'));
    return ids.size;
  };
  let files;
  let atSnapshot;
  for (let tries = 0; ; tries += 1) {
    await quiet(1500, 'before the snapshot');
    atSnapshot = mockLines().length;
    const answered = written() >= responses();
    files = await statusOf(team);
    await sleep(1500);
    const again = await statusOf(team);
    if (answered && mockLines().length === atSnapshot && figures(again) === figures(files)) break;
    check(tries < 5, 'the client did not settle: the team never stayed quiet for the snapshot');
  }
  const computed = {};
  for (const m of files.members.filter((x) => x.tokens)) computed[m.name] = { cost: m.cost_usd, tokens: m.tokens, source: m.cost_source, transcripts: m.transcripts };
  check(computed['team-lead'] && computed.worker, `members with transcripts: ${Object.keys(computed)}`);
  check(computed['team-lead'].source === 'computed' && computed.worker.source === 'computed', `sources while running ${JSON.stringify(computed)}`);
  const leadFile = computed['team-lead'].transcripts[0];
  const workerFile = computed.worker.transcripts[0];
  const config = fs.readFileSync(path.join(st.cfg, 'teams', team, 'config.json'));
  const records = {};
  if (workerPid) {
    process.kill(workerPid, 'SIGTERM');
    await waitFor('the worker\'s cost-state', 20000, () => costState(workerFile));
    await waitFor('the worker to exit', 10000, () => !alive(workerPid));
    // The last record once it has exited: a response still in flight at the signal is in the
    // second cost-state it writes, not the first.
    records.worker = costState(workerFile);
    const s = await statusOf(team);
    const wm = s.member('worker');
    check(wm.cost_source === 'claude_code', `worker cost_source after it ended: ${wm.cost_source}`);
    check(wm.cost_usd === records.worker.totalCostUSD, `worker cost ${wm.cost_usd} != totalCostUSD ${records.worker.totalCostUSD}`);
    check(sameTokens(wm.tokens, tokensOf(records.worker)), `worker tokens ${JSON.stringify(wm.tokens)} != ${JSON.stringify(tokensOf(records.worker))}`);
  }
  process.kill(st.leadPid, 'SIGTERM');
  await waitFor('the lead\'s cost-state', 20000, () => costState(leadFile));
  await waitFor('the lead to exit', 10000, () => !alive(st.leadPid));
  records.lead = costState(leadFile);
  await waitFor('the lead to remove its team', 10000, () => !fs.existsSync(path.join(st.cfg, 'teams', team)));
  // The team's config put back: what `status` sees of a team whose sessions all ended.
  fs.mkdirSync(path.join(st.cfg, 'teams', team, 'inboxes'), { recursive: true });
  fs.writeFileSync(path.join(st.cfg, 'teams', team, 'config.json'), config);
  const end = await statusOf(team);
  const lead = end.member('team-lead');
  const worker = end.member('worker');
  // The figures computed while the team ran are compared with Claude Code's records below,
  // which is fair only if no request came after the snapshot (a turn then adds to the records
  // and not to the snapshot). If one did, the measurement is void: the client did not settle,
  // and tests/it/real_claude.rs runs the driver once more.
  const after = mockLines().length - atSnapshot;
  if (after > 0) fail(`the client did not settle: ${after} request(s) reached the mock after the snapshot`);
  check(lead.cost_source === 'claude_code', `lead cost_source after it ended: ${lead.cost_source}`);
  const eps = 1e-9;
  if (args.mode === 'tmux') {
    check(lead.cost_usd === records.lead.totalCostUSD, `lead cost ${lead.cost_usd} != totalCostUSD ${records.lead.totalCostUSD}`);
    check(sameTokens(lead.tokens, tokensOf(records.lead)), `lead tokens ${JSON.stringify(lead.tokens)} != ${JSON.stringify(tokensOf(records.lead))}`);
    check(worker.cost_usd === records.worker.totalCostUSD && worker.cost_source === 'claude_code', `worker ${JSON.stringify(worker)}`);
    check(end.totals.cost_usd === records.lead.totalCostUSD + records.worker.totalCostUSD, `total ${end.totals.cost_usd} != ${records.lead.totalCostUSD} + ${records.worker.totalCostUSD}`);
    check(sameTokens(end.totals.tokens, addTokens(tokensOf(records.lead), tokensOf(records.worker))), `total tokens ${JSON.stringify(end.totals.tokens)}`);
    check(Math.abs(computed['team-lead'].cost - records.lead.totalCostUSD) < eps, `lead computed ${computed['team-lead'].cost} != Claude Code's ${records.lead.totalCostUSD}`);
    check(Math.abs(computed.worker.cost - records.worker.totalCostUSD) < eps, `worker computed ${computed.worker.cost} != Claude Code's ${records.worker.totalCostUSD}`);
    check(sameTokens(computed.worker.tokens, tokensOf(records.worker)), 'worker computed tokens differ from Claude Code\'s');
  } else {
    // The lead's record covers its in-process teammate: the total is exactly it.
    check(end.totals.cost_usd === records.lead.totalCostUSD, `total ${end.totals.cost_usd} != totalCostUSD ${records.lead.totalCostUSD}`);
    check(sameTokens(end.totals.tokens, tokensOf(records.lead)), `total tokens ${JSON.stringify(end.totals.tokens)} != ${JSON.stringify(tokensOf(records.lead))}`);
    check(worker.cost_source === 'computed' && worker.cost_usd === computed.worker.cost, `in-process worker ${JSON.stringify(worker)}`);
    check(sameTokens(addTokens(lead.tokens, worker.tokens), tokensOf(records.lead)), 'lead + worker tokens differ from the lead\'s record');
    check(Math.abs(lead.cost_usd + worker.cost_usd - records.lead.totalCostUSD) < eps, `lead ${lead.cost_usd} + worker ${worker.cost_usd} != ${records.lead.totalCostUSD}`);
    check(Math.abs(computed['team-lead'].cost + computed.worker.cost - records.lead.totalCostUSD) < eps,
      `computed ${computed['team-lead'].cost} + ${computed.worker.cost} != Claude Code's ${records.lead.totalCostUSD}`);
  }
  // The split responses were counted once: fewer responses than assistant entries.
  const entries = fs.readFileSync(workerFile, 'utf8').split('\n').filter((l) => l.includes('"type":"assistant"')).length;
  const ids = new Set(fs.readFileSync(workerFile, 'utf8').split('\n').filter((l) => l.includes('"type":"assistant"')).map((l) => JSON.parse(l).message.id));
  check(entries > ids.size, `the worker's responses were not split (${entries} entries, ${ids.size} ids)`);
  fol.p.kill('SIGTERM');
  return {
    claude: version,
    mode: args.mode,
    team,
    activity,
    budget,
    cost: {
      lead: records.lead.totalCostUSD,
      worker: args.mode === 'tmux' ? records.worker.totalCostUSD : worker.cost_usd,
      total: end.totals.cost_usd,
      worker_entries: entries,
      worker_responses: ids.size,
    },
    total_ms: now() - T0,
  };
}
