#!/usr/bin/env node
'use strict';
// End-to-end test: a REAL interactive Claude Code lead, running offline in a private tmux
// server against mock-api.js, forms its own team and spawns one teammate (in a tmux pane, or
// in its own process); teamctl then finds that team, joins it and sends the teammate a
// message, whose answer must land in the joined member's inbox.
//
//   node tests/e2e/lead-e2e.js --teamctl <exe> --mode tmux|in-process
//                              [--claude-bin <path>] [--keep] [--verbose] [--deadline <s>]
//
// How the lead forms its team depends on its version: up to 2.1.177 the mock answers the typed
// prompt with a TeamCreate tool call first and spawns into that team; from 2.1.178 every
// session has its team (`session-<8hex>`) and the mock spawns straight away. `--mode` is
// settings.json's `teammateMode`.
//
// Steps:
//  1. the lead starts in tmux (settings `teammateMode`), the driver types `SPAWN-TEAMMATE …`;
//  2. a team folder appears whose config.json lists `worker` (backendType tmux or in-process);
//  3. `teamctl --team <T> --json status` sees the team; `teamctl --json send --join --from ops
//     worker "Token: L-…"` writes the message; the worker's echo must arrive in ops.json (from
//     any sender name: `observed.reply_from` records it);
//  4. observations: the consumer (teamctl's message deleted, or kept with read: true), msgV on
//     the client's own entries, whether the lead signs (`--lead-verify-key` on the teammate's
//     command line, `lead_sig` on its entries), the format teamctl status reports;
//  5. the transcripts (the mock reports realistic usage, each response split over two entries,
//     and zero usage for requests without tools: the title calls up to 2.1.210 that no
//     transcript records): `send worker "Exec: sleep 3"` and `status --json` must show the
//     worker's Bash call as its activity while it runs; the costs `status` computes are kept;
//     the lead is ended (SIGTERM) and, with the team's config.json put back, `status` must
//     agree with Claude Code's own record: the sessions' `cost-state` (2.1.322+: exact, and
//     reported as cost_source claude_code) or `.claude.json` `lastCost` of the lead's session
//     (older versions: lead + in-process teammate, 1e-9).
//
// The temp root, mock, diagnostics and cleanup are harness.js's; the lead's tmux server is the
// driver's own (`tmux -L`), started with the lead's environment.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux missing).

const fs = require('fs');
const path = require('path');

const h = require('./harness')({
  name: 'lead-e2e',
  team: null,
  argv: process.argv.slice(2),
  synopsis: '--teamctl <exe> --mode tmux|in-process [--claude-bin <path>] [--keep] [--verbose] [--deadline <s>]',
  flags: {
    '--mode': { key: 'mode', value: 'tmux', check: (v) => (['tmux', 'in-process'].includes(v) ? null : `--mode ${v}: tmux or in-process`) },
  },
  pollMs: 10,
  // 2.1.112 reads teammateMode from the global config only (its settings schema marks it
  // `source: "global"`); newer clients read it from settings.json.
  claudeJson: (args) => ({ teammateMode: args.mode }),
  settings: (args) => ({ teammateMode: args.mode }),
  // The lead runs in the driver's own tmux server, with the environment of such a pane (also
  // teamctl's).
  ownTmux: true,
  mockTeamctl: false,
  mockEnv: {
    MOCK_USAGE_START: JSON.stringify({
      input_tokens: '$n+1000',
      cache_read_input_tokens: 30000,
      cache_creation_input_tokens: 20000,
      cache_creation: { ephemeral_1h_input_tokens: 5000, ephemeral_5m_input_tokens: 15000 },
    }),
    MOCK_USAGE_DELTA: '{"output_tokens":"$n+700"}',
    MOCK_BLOCKS: 'text',
    MOCK_SIDE_ZERO: '1',
  },
});

const {
  args, st, T0, now, sleep, hex, trace, fail, check, waitFor, teamctl, lastJson, readJson, panes, clientVersion, mockLines,
  leadAlive, findTeam, leadTeam, processTree, costState, statusOf, quiet,
} = h;

h.run(async () => {
  const version = clientVersion();
  // 1. The lead's prompt box up, the prompt typed until the mock sees it.
  // 2. The team and its teammate.
  const { tLeadUp, typed, team } = await leadTeam();
  st.team = team.name;
  const tTeam = now();
  trace(`team ${team.name}: worker ${JSON.stringify(team.worker)}`);
  const teamCreate = mockLines().some((l) => l.reply && l.reply.tool === 'TeamCreate');
  const backend = await waitFor('the worker to get its backend', 20000, () => {
    const t = findTeam();
    return t && (t.worker.backendType || (t.worker.tmuxPaneId === 'in-process' ? 'in-process' : null));
  });
  const expected = args.mode === 'tmux' ? 'tmux' : 'in-process';
  check(backend === expected, `worker backendType ${backend}, expected ${expected}`);
  let workerPane = null;
  if (args.mode === 'tmux') {
    // The lead records the pane in config.json; the pane runs a shell the lead types into.
    workerPane = await waitFor('the worker\'s tmux pane running claude', 20000, () => {
      const t = findTeam();
      const p = t && panes().find((x) => x.id === t.worker.tmuxPaneId);
      if (!p) return null;
      const cmd = processTree(p.pid).map((x) => x.cmd).find((c) => /--agent-name worker/.test(c));
      return cmd ? { ...p, cmd } : null;
    });
    trace(`worker pane ${workerPane.id}: ${workerPane.cmd}`);
  }
  // The worker's first turn (its brief) reaches the mock before teamctl writes.
  await waitFor('the worker\'s first turn', 30000, () => {
    leadAlive();
    return mockLines().some((l) => (l.lastText || '').includes('You are worker'));
  });

  // 3. teamctl finds the team and joins it; the worker answers ops. The worker's first turn over
  // first: up to 2.1.159 a message landing while the client marks its inbox read can be marked
  // read unseen (the consumer race below), and the turn's end is where that is likeliest.
  await quiet(1500);
  const s0 = await teamctl(['--team', team.name, '--json', 'status']);
  check(s0.code === 0, `status exited ${s0.code}: ${s0.stderr}`);
  const st0 = lastJson(s0.stdout);
  check(st0.members.some((m) => m.name === 'worker'), `status misses worker: ${s0.stdout}`);
  const tok = `L-${hex(4)}`;
  const send = await teamctl(['--team', team.name, '--json', 'send', '--join', '--from', 'ops', 'worker', `Token: ${tok}`]);
  check(send.code === 0, `send exited ${send.code}: ${send.stderr}`);
  const msgId = lastJson(send.stdout).id;
  const tSent = now();
  const opsInbox = path.join(st.cfg, 'teams', team.name, 'inboxes', 'ops.json');
  const workerInbox = path.join(st.cfg, 'teams', team.name, 'inboxes', 'worker.json');
  let consumedMs = null;
  let leadSigSeen = false;
  const echo = await waitFor(`the worker's echo of ${tok} in ops.json`, 30000, () => {
    leadAlive();
    const w = readJson(workerInbox);
    if (Array.isArray(w)) {
      if (w.some((e) => e.from === 'team-lead' && 'lead_sig' in e)) leadSigSeen = true;
      if (consumedMs === null && !w.some((e) => e.msg_id === msgId && e.read !== true)) consumedMs = now() - tSent;
    }
    const ops = readJson(opsInbox);
    // Any sender: 2.1.178's in-process teammate signs its messages with its internal agent id
    // (17 hex digits) instead of its name; `observed.reply_from` records who it said it was.
    return Array.isArray(ops) && ops.find((e) => typeof e.text === 'string' && e.text.includes(tok));
  });
  const echoMs = now() - tSent;
  check(echo.text === `ECHO ${tok}`, `echo text ${JSON.stringify(echo.text)}`);

  // 4. What this version did.
  const wAfter = readJson(workerInbox) || [];
  const mine = wAfter.find((e) => e.msg_id === msgId);
  const s1 = await teamctl(['--team', team.name, '--json', 'status']);
  check(s1.code === 0, `status exited ${s1.code}: ${s1.stderr}`);
  const observed = {
    team_via: teamCreate ? 'TeamCreate' : team.name.startsWith('session-') ? 'session team' : 'other',
    spawn_tool: (mockLines().find((l) => l.reply && (l.reply.tool === 'Agent' || l.reply.tool === 'Task')) || { reply: {} }).reply.tool || null,
    consumer: mine ? (mine.read === true ? 'marks_read' : 'unread_left') : 'deletes',
    reply_msgv: echo.msgV === 1 && typeof echo.msg_id === 'string',
    reply_from: echo.from,
    lead_sig: leadSigSeen || Boolean(workerPane && /--lead-verify-key/.test(workerPane.cmd)),
    status_format: lastJson(s1.stdout).team.format,
  };
  observed.transcripts = await transcripts(team.name);
  return {
    claude: version,
    mode: args.mode,
    team: team.name,
    lead_up_ms: tLeadUp - T0,
    team_after_prompt_ms: tTeam - st.tTyped,
    typed,
    consumed_ms: consumedMs,
    echo_ms: echoMs,
    observed,
    total_ms: now() - T0,
  };
});

// Step 5: activity while a tool runs, and cost against Claude Code's own record.
async function transcripts(team) {
  const out = { activity: null, record: null, cost_match: false, tokens_match: null, ended_source: null };
  await quiet(1500);
  const send = await teamctl(['--team', team, '--json', 'send', '--join', '--from', 'ops', 'worker', 'Exec: sleep 3']);
  check(send.code === 0, `send exited ${send.code}: ${send.stderr}`);
  // While the command runs (the mock has answered with Bash, no later request of the worker yet).
  const act = await waitFor('status to show the worker\'s Bash call', 15000, async () => {
    const w = (await statusOf(team)).member('worker');
    return w.activity && w.activity.kind === 'tool_use' && w.activity.tool === 'Bash' && w.activity.summary === 'sleep 3' ? w.activity : null;
  });
  out.activity = `${act.kind} ${act.tool}`;
  await waitFor('the worker\'s turn after the command', 20000, () => mockLines().some((l) => (l.toolResults || []).length && l.reply && l.reply.text === 'done' && l.n > 0));
  // The snapshot again until no request reached the mock since it (under load a lead's turn on
  // its teammate's idle_notification can come seconds later).
  let before;
  for (let tries = 0; ; tries += 1) {
    await quiet(2000);
    const n0 = mockLines().length;
    before = await statusOf(team);
    await sleep(1500);
    if (mockLines().length === n0) break;
    check(tries < 5, 'the team never stayed quiet for the snapshot');
  }
  const lead0 = before.member('team-lead');
  const worker0 = before.member('worker');
  check(lead0.tokens && worker0.tokens, `no transcripts found: ${JSON.stringify(before.members)}`);
  check(lead0.cost_source === 'computed' || lead0.cost_usd === null, `lead cost_source while running: ${lead0.cost_source}`);
  const computedLead = lead0.cost_usd;
  const computedWorker = worker0.cost_usd;
  const leadFile = lead0.transcripts[0];
  const workerFile = worker0.transcripts[0];
  const config = fs.readFileSync(path.join(st.cfg, 'teams', team, 'config.json'));
  const leadSession = JSON.parse(config).leadSessionId;
  process.kill(st.leadPid, 'SIGTERM');
  await waitFor('the lead to exit', 20000, () => { const p = panes().find((x) => x.id === st.leadPane); return !p || p.dead; });
  await waitFor('the lead to remove its team', 10000, () => !fs.existsSync(path.join(st.cfg, 'teams', team)));
  await sleep(500); // a SIGHUPed pane teammate may still be writing its record
  fs.mkdirSync(path.join(st.cfg, 'teams', team, 'inboxes'), { recursive: true });
  fs.writeFileSync(path.join(st.cfg, 'teams', team, 'config.json'), config);
  const after = await statusOf(team);
  const lead = after.member('team-lead');
  out.ended_source = lead.cost_source;
  const leadCs = costState(leadFile);
  const eps = 1e-9;
  if (leadCs) {
    out.record = 'cost-state';
    const workerCs = args.mode === 'tmux' ? costState(workerFile) : null;
    const total = leadCs.totalCostUSD + (workerCs ? workerCs.totalCostUSD : 0);
    const computed = computedLead + computedWorker;
    out.cost_match = after.totals.cost_usd === total && Math.abs(computed - total) < eps && lead.cost_source === 'claude_code';
    let tokens = 0;
    for (const cs of [leadCs, workerCs].filter(Boolean)) for (const m of Object.values(cs.modelUsage)) tokens += m.inputTokens + m.outputTokens + m.cacheReadInputTokens + m.cacheCreationInputTokens;
    const t = after.totals.tokens;
    out.tokens_match = t.input + t.output + t.cache_read + t.cache_creation === tokens;
    trace(`cost-state: lead ${leadCs.totalCostUSD} worker ${workerCs && workerCs.totalCostUSD}; status ${after.totals.cost_usd}; computed ${computed}`);
  } else {
    const p = (readJson(path.join(st.cfg, '.claude.json')) || {}).projects || {};
    const rec = p[st.work] || {};
    // One slot per cwd: the session that exited last (the lead, or its pane teammate).
    const workerSession = path.basename(workerFile, '.jsonl');
    const whose = rec.lastSessionId === leadSession ? 'lead' : rec.lastSessionId === workerSession && args.mode === 'tmux' ? 'worker' : null;
    trace(`.claude.json lastSessionId ${rec.lastSessionId} (lead ${leadSession}, worker ${workerSession}), lastCost ${rec.lastCost}`);
    if (whose && typeof rec.lastCost === 'number') {
      out.record = `lastCost (${whose})`;
      // The lead's record covers its in-process teammate, not a pane one.
      const computed = whose === 'worker' ? computedWorker : args.mode === 'tmux' ? computedLead : computedLead + computedWorker;
      out.cost_match = Math.abs(computed - rec.lastCost) < eps;
      trace(`lastCost ${rec.lastCost}, computed ${computed}`);
    }
  }
  if (out.record) check(out.cost_match, `status disagrees with Claude Code's ${out.record}: ${JSON.stringify(out)} (see the trace)`);
  if (out.tokens_match === false) fail(`status tokens disagree with Claude Code's cost-state: ${JSON.stringify(after.totals)}`);
  return out;
}
