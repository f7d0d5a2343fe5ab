#!/usr/bin/env node
'use strict';
// End-to-end test of `teamctl run` against the REAL Claude Code 2.1.332, offline: teamctl starts
// an interactive lead in a private tmux server (its own TMUX_TMPDIR); the lead talks to
// mock-api.js on 127.0.0.1 in its lead mode.
//
//   node tests/e2e/run-e2e.js --teamctl <exe>
//                             [--scenario done|timeout|budget|all|first-turn|concurrent-prepare]
//                             [--prepare] [--keep] [--verbose] [--claude-bin <path>]
//                             [--deadline <seconds>]
//
// done: `teamctl --json run "Spawn: worker <tok>" --teammate-mode tmux --export <dir>`: the mock
//   answers the lead's first turn with an Agent call spawning `worker` (a pane teammate), the
//   worker's turn with a SendMessage to team-lead, and the lead's next turn with "FINAL ANSWER:
//   …". run must end `done` (exit 0) with the team, the worker in it, that final text, and
//   nothing left running: no tmux server/session, no process of that lead session, no team
//   folder. The record (taken before the lead was told to stop) holds the team's config, the
//   lead's and the worker's transcripts, the whole conversation, the final answer and the cost
//   per member. With an OTLP/HTTP (JSON) receiver on 127.0.0.1 as OTEL_EXPORTER_OTLP_ENDPOINT,
//   the run's trace (its span, the worker's span, its steps and the worker's message) and
//   metrics arrive there.
// timeout: `run "Hang: 120000" --timeout 6s --export <x>.tar.gz`: the lead's turn never ends;
//   run must end `timeout` (exit 3) with the pane's last lines, clean up the same way, and still
//   leave its record.
// budget: `run "Spawn: worker <tok>" --max-cost 0.0003 --export <dir>`: each of the mock's
//   responses costs $0.00014 (10 input and 5 output tokens of claude-opus-5-5), so the team
//   crosses the cap on its third response, long before its work is done; run must end `budget`
//   (exit 6) with the totals above the cap, clean up the same way, and leave its record (state
//   budget, its cost above the cap).
// first-turn: `run "Hang: 120000"`: the lead's first turn must reach the mock with no start-up
//   dialog in the way (any version: no team is needed); then SIGTERM, and run cleans up (exit
//   143). With --prepare (harness.js), `teamctl prepare` alone settled the dialogs.
// concurrent-prepare: first-turn, while `teamctl prepare --cwd <a new folder>` runs again and
//   again as the lead starts up and writes its own .claude.json (numStartups, its project, …):
//   afterwards every folder prepare trusted is still trusted, and the client's own keys are
//   there too (neither writer lost the other's change).
//
// The setup, mock, environment (plus TEAMCTL_DATA_DIR), diagnostics and cleanup are harness.js's.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const http = require('http');
const path = require('path');
const { spawnSync } = require('child_process');

const h = require('./harness')({
  name: 'run-e2e',
  team: null,
  argv: process.argv.slice(2),
  deadline: 120,
  synopsis: '--teamctl <exe> [--scenario done|timeout|budget|all|first-turn|concurrent-prepare] [--prepare] [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]',
  flags: {
    '--scenario': { key: 'scenario', value: 'all', check: (v) => (['done', 'timeout', 'budget', 'all', 'first-turn', 'concurrent-prepare'].includes(v) ? null : `bad --scenario ${v}`) },
  },
  dirs: ['data'],
  env: (env, st) => ({ ...env, TEAMCTL_DATA_DIR: st.data }),
  mockTeamctl: false,
  mockLogLine: (j) => `${j.n} +${j.ms}ms ${j.ua} ${JSON.stringify(j.reply)} ${j.why}`,
});

const { args, st, CLAUDE_VERSION, T0, now, sleep, hex, check, fail, teamctl, tmux, waitFor, mockSaw } = h;

// Processes whose command line names this lead session (the lead: --session-id, its pane
// teammates: --parent-session-id).
function processesOf(sessionId) {
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue; // a zombie is already gone
      if (cmd.includes(sessionId)) out.push(`${pid} ${cmd.replace(/\0/g, ' ').slice(0, 160)}`);
    } catch (_) { /* gone */ }
  }
  return out;
}

async function assertClean(result, what) {
  // The lead and its teammates end before run returns; allow a moment for zombies to be reaped.
  const end = now() + 5000;
  let procs = processesOf(result.lead_session_id);
  while (procs.length && now() < end) { await sleep(50); procs = processesOf(result.lead_session_id); }
  check(procs.length === 0, `${what}: processes left running:\n${procs.join('\n')}`);
  const ls = tmux('list-sessions');
  check(ls.status !== 0 || !ls.stdout.includes('teamctl-run-'), `${what}: tmux sessions left: ${ls.stdout}`);
  if (result.team) check(!fs.existsSync(path.join(st.cfg, 'teams', result.team)), `${what}: team folder ${result.team} left`);
  check(result.tmux_session === null && result.kept === false, `${what}: tmux_session ${result.tmux_session}`);
}

const jsonLines = (s) => s.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

// An OTLP/HTTP receiver (http/json) on 127.0.0.1: every request body by path.
function otlpReceiver() {
  const got = { '/v1/traces': [], '/v1/metrics': [] };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      (got[req.url] = got[req.url] || []).push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, got, port: server.address().port })));
}

const attrs = (list) => Object.fromEntries((list || []).map((a) => [a.key, Object.values(a.value)[0]]));

async function scenarioDone() {
  const tok = `TOK-${hex(4)}`;
  const rec = path.join(st.tmp, 'record-done');
  const otlp = await otlpReceiver();
  const r = await teamctl(['--json', 'run', `Spawn: worker ${tok}`, '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--teammate-mode', 'tmux', '--timeout', '60s', '--settle', '2s',
    '--name', 'e2e-done', '--export', rec], {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  });
  otlp.server.close();
  const result = JSON.parse(r.stdout.trim());
  const events = jsonLines(r.stderr);
  check(r.code === 0, `run exited ${r.code} (state ${result.state}: ${result.reason})`);
  check(result.state === 'done', `state ${result.state}`);
  check(/^session-[0-9a-f]{8}$/.test(result.team) && result.team === `session-${result.lead_session_id.slice(0, 8)}`,
    `team ${result.team}, lead session ${result.lead_session_id}`);
  const w = result.teammates.find((t) => t.name === 'worker');
  check(w && w.backend === 'tmux' && /^%\d+$/.test(w.pane), `teammates ${JSON.stringify(result.teammates)}`);
  check(result.result === `FINAL ANSWER: the team reported ${tok}`, `result ${JSON.stringify(result.result)}`);
  check(result.result_source === 'transcript', `result_source ${result.result_source}`);
  check(result.claude.version === `${CLAUDE_VERSION} (Claude Code)`, `claude ${JSON.stringify(result.claude)}`);
  check(fs.existsSync(result.transcript), `transcript ${result.transcript} missing`);
  const states = events.filter((e) => e.type === 'progress').map((e) => e.state);
  for (const s of ['validating', 'spawning', 'monitoring', 'running', 'done']) {
    check(states.includes(s), `no ${s} progress event: ${states.join(',')}`);
  }
  const joined = events.find((e) => e.type === 'teammate_joined' && e.name === 'worker');
  check(joined && joined.backend === 'tmux', `no teammate_joined event for worker: ${r.stderr}`);
  await assertClean(result, 'done');
  const record = checkRecord(rec, result, tok);
  const otel = checkTelemetry(otlp.got, result);
  check(result.totals.cost_usd >= record.cost_usd - 1e-12, `totals ${result.totals.cost_usd} under the record's ${record.cost_usd}`);
  return { states, elapsed_ms: result.elapsed_ms, wall_ms: r.ms, teammates: result.teammates.length, record, otel, totals_cost_usd: result.totals.cost_usd };
}

// The record `run --export` took before the lead was told to stop.
function checkRecord(rec, result, tok) {
  check(result.export && result.export.out === rec && result.export.error === null, `export ${JSON.stringify(result.export)}`);
  const s = JSON.parse(fs.readFileSync(path.join(rec, 'summary.json'), 'utf8'));
  check(s.team === result.team && s.team_folder === true, `record of ${s.team} (folder ${s.team_folder})`);
  check(s.run && s.run.name === 'e2e-done' && s.run.state === 'done', `run ${JSON.stringify(s.run)}`);
  check(s.result === `FINAL ANSWER: the team reported ${tok}` && s.result_final === true, `result ${JSON.stringify(s.result)}`);
  const cfg = JSON.parse(fs.readFileSync(path.join(rec, 'team/config.json'), 'utf8'));
  check(cfg.members.some((m) => m.name === 'worker'), `config.json ${JSON.stringify(cfg.members)}`);
  const lead = s.transcripts.find((t) => t.kind === 'lead');
  check(lead && lead.session_id === result.lead_session_id && lead.lines > 0, `transcripts ${JSON.stringify(s.transcripts)}`);
  const copy = fs.readFileSync(path.join(rec, lead.path));
  check(copy.equals(fs.readFileSync(result.transcript).subarray(0, copy.length)), 'the lead transcript copy is a prefix of the transcript');
  // The worker's own session (a pane teammate), as status finds it.
  const worker = s.transcripts.find((t) => t.member === 'worker');
  check(worker && worker.kind === 'pane' && worker.lines > 0 && fs.existsSync(path.join(rec, worker.path)),
    `no worker transcript in ${JSON.stringify(s.transcripts)}`);
  // What each member cost, as status --json reports it: the sessions still ran, so computed.
  const cost = checkCost(s, ['team-lead', 'worker']);
  // The whole conversation: the lead's prompt to the worker, the worker's report and its idle
  // notification, each once.
  const said = s.messages.map((m) => `${m.from}>${m.to}:${m.frame_type || m.text}`);
  for (const want of [`team-lead>worker:Report: ${tok}`, `worker>team-lead:REPORT ${tok}`, 'worker>team-lead:idle_notification']) {
    check(said.filter((m) => m === want).length === 1, `conversation lacks (or repeats) ${want}: ${JSON.stringify(said)}`);
  }
  const report = fs.readFileSync(path.join(rec, 'report.md'), 'utf8');
  check(report.includes(`FINAL ANSWER: the team reported ${tok}`) && report.includes(`REPORT ${tok}`), 'report.md lacks the answer or the report');
  check(/\| worker \|.*\\\$[0-9.]+ \(computed\) \|/.test(report) && /Team total: \*\*\\\$/.test(report),
    'report.md lacks the cost per member or the total');
  return {
    messages: s.messages.length, transcripts: s.transcripts.length, files: result.export.files,
    bytes: result.export.bytes, cost_usd: cost,
  };
}

// A record's cost: per member (those named), in total, equal to the sum and to status.totals.
function checkCost(s, names) {
  const c = s.cost;
  check(c && c.cost_usd > 0 && c.tokens.input > 0 && c.cost_source === 'computed', `cost ${JSON.stringify(c)}`);
  for (const n of names) {
    const m = c.members.find((x) => x.name === n);
    check(m && m.cost_usd > 0 && m.cost_source && m.tokens.output > 0, `cost of ${n}: ${JSON.stringify(c.members)}`);
    const st = s.status.members.find((x) => x.name === n);
    check(st && st.cost_usd === m.cost_usd && st.cost_source === m.cost_source, `status of ${n}: ${JSON.stringify(st)}`);
  }
  const sum = c.members.reduce((a, m) => a + m.cost_usd, 0);
  check(Math.abs(sum - c.cost_usd) < 1e-9 && s.status.totals.cost_usd === c.cost_usd, `cost total ${c.cost_usd}, members ${sum}`);
  return c.cost_usd;
}

// The run's trace and metrics, as the OTLP receiver got them.
function checkTelemetry(got, result) {
  const spans = got['/v1/traces'].flatMap((d) => d.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  const root = spans.find((sp) => sp.name === 'teamctl run');
  check(root, `no teamctl run span in ${JSON.stringify(spans.map((sp) => sp.name))}`);
  const ra = attrs(root.attributes);
  check(ra['teamctl.team'] === result.team && String(ra['teamctl.exit_code']) === '0', `run span ${JSON.stringify(ra)}`);
  const steps = (root.events || []).filter((e) => e.name === 'teamctl.step').map((e) => attrs(e.attributes)['teamctl.state']);
  check(steps.includes('validating') && steps.includes('done'), `steps ${steps}`);
  const worker = spans.find((sp) => sp.name === 'member worker');
  check(worker && worker.parentSpanId === root.spanId && worker.traceId === root.traceId, `worker span ${JSON.stringify(worker)}`);
  const msgs = (worker.events || []).filter((e) => e.name === 'teamctl.message').map((e) => attrs(e.attributes));
  check(msgs.some((m) => m['teamctl.event'] === 'message' && m['teamctl.message.to'] === 'team-lead' && !m['teamctl.message.text']),
    `worker message events ${JSON.stringify(msgs)}`);
  const metrics = got['/v1/metrics'].flatMap((d) => d.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)));
  const names = [...new Set(metrics.map((m) => m.name))];
  check(names.includes('teamctl.messages') && names.includes('teamctl.command.duration'), `metrics ${names}`);
  const counted = metrics.filter((m) => m.name === 'teamctl.messages').flatMap((m) => m.sum.dataPoints).map((p) => attrs(p.attributes));
  check(counted.some((p) => p['teamctl.member'] === 'worker' && p['teamctl.team'] === result.team), `teamctl.messages ${JSON.stringify(counted)}`);
  // What each member used and cost, as the run read it after cleanup (its totals).
  const gauge = (name) => metrics.filter((m) => m.name === name).flatMap((m) => m.gauge.dataPoints)
    .map((p) => ({ ...attrs(p.attributes), value: Number(p.asDouble ?? p.asInt) }));
  const costs = gauge('teamctl.cost.usd');
  const total = costs.reduce((a, p) => a + p.value, 0);
  check(costs.some((p) => p['teamctl.member'] === 'worker' && p.value > 0)
    && Math.abs(total - result.totals.cost_usd) < 1e-9, `teamctl.cost.usd ${JSON.stringify(costs)} vs ${JSON.stringify(result.totals)}`);
  const tokens = gauge('teamctl.tokens');
  const input = tokens.filter((p) => p['gen_ai.token.type'] === 'input').reduce((a, p) => a + p.value, 0);
  check(input === result.totals.tokens.input, `teamctl.tokens ${JSON.stringify(tokens)} vs ${JSON.stringify(result.totals)}`);
  return { spans: spans.length, worker_events: msgs.length, metrics: names.length, cost_points: costs.length };
}

async function scenarioTimeout() {
  const rec = path.join(st.tmp, 'record-timeout.tar.gz');
  const r = await teamctl(['--json', 'run', 'Hang: 120000', '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--timeout', '6s', '--name', 'e2e-timeout', '--export', rec]);
  const result = JSON.parse(r.stdout.trim());
  check(r.code === 3, `run exited ${r.code}, not 3 (state ${result.state}: ${result.reason})`);
  check(result.state === 'timeout', `state ${result.state}`);
  check(/the team's work was not done \(waiting for the lead's turn\)/.test(result.reason), `reason ${result.reason}`);
  check(/last lines of the lead's pane:\n[\s\S]*Hang: 120000/.test(result.reason), `no pane lines in ${result.reason}`);
  check(/^error: run 'e2e-timeout' timed out/m.test(r.stderr), `stderr ${r.stderr}`);
  await assertClean(result, 'timeout');
  // The record of a timed-out run: the lead's transcript, the run's state.
  check(result.export && result.export.format === 'tar_gz' && fs.existsSync(rec), `export ${JSON.stringify(result.export)}`);
  const list = spawnSync('tar', ['-tzf', rec], { encoding: 'utf8' }).stdout.split('\n');
  check(list.includes('record-timeout/summary.json') && list.includes('record-timeout/report.md')
    && list.some((f) => f.startsWith('record-timeout/transcripts/')), `archive holds ${list.join(' ')}`);
  const summary = JSON.parse(spawnSync('tar', ['-xzOf', rec, 'record-timeout/summary.json'], { encoding: 'utf8' }).stdout);
  check(summary.run.state === 'timeout' && /not done/.test(summary.run.reason), `run ${JSON.stringify(summary.run)}`);
  return { elapsed_ms: result.elapsed_ms, wall_ms: r.ms };
}

async function scenarioBudget() {
  const rec = path.join(st.tmp, 'record-budget');
  const r = await teamctl(['--json', 'run', `Spawn: worker TOK-${hex(4)}`, '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--teammate-mode', 'tmux', '--timeout', '60s', '--max-cost', '0.0003',
    '--name', 'e2e-budget', '--export', rec]);
  const result = JSON.parse(r.stdout.trim());
  check(r.code === 6, `run exited ${r.code}, not 6 (state ${result.state}: ${result.reason})`);
  check(result.state === 'budget', `state ${result.state}`);
  check(/^budget exceeded: \$[0-9.]+ of \$0\.0003, by /.test(result.reason), `reason ${result.reason}`);
  check(result.totals && result.totals.cost_usd > 0.0003, `totals ${JSON.stringify(result.totals)}`);
  check(/^error: budget exceeded: /m.test(r.stderr), `stderr ${r.stderr}`);
  const states = jsonLines(r.stderr).filter((e) => e.type === 'progress').map((e) => e.state);
  check(states[states.length - 1] === 'budget', `progress ${states.join(',')}`);
  await assertClean(result, 'budget');
  // The record, taken at the cap before the lead was told to stop: its state, and a cost over
  // the cap (what the transcripts said then).
  check(result.export && result.export.error === null, `export ${JSON.stringify(result.export)}`);
  const s = JSON.parse(fs.readFileSync(path.join(rec, 'summary.json'), 'utf8'));
  check(s.run.state === 'budget' && /^budget exceeded/.test(s.run.reason), `run ${JSON.stringify(s.run)}`);
  const recorded = checkCost(s, ['team-lead']);
  check(recorded > 0.0003, `recorded cost ${recorded}`);
  // The run's totals, read after cleanup, count every session the record counted (the pane
  // worker's too) and can only have grown since.
  check(result.totals.cost_usd >= recorded - 1e-12, `totals ${result.totals.cost_usd} under the record's ${recorded}`);
  return { elapsed_ms: result.elapsed_ms, wall_ms: r.ms, cost_usd: result.totals.cost_usd, recorded_cost_usd: recorded };
}

async function scenarioFirstTurn({ alongside = null } = {}) {
  let child = null;
  const pending = teamctl(['--json', 'run', 'Hang: 120000', '--claude-bin', args.claudeBin,
    '--dangerously-skip-permissions', '--timeout', '120s', '--name', 'e2e-first-turn'], {},
  { onSpawn: (p) => { child = p; } });
  const t = now();
  let finished = null;
  pending.then((r) => { finished = r; });
  // The lead's first turn reaches the mock, or run ends first (a dialog, an early exit).
  const firstTurn = () => mockSaw('hang 120000 ms') || finished;
  // Settled at once, so a failure beside is reported after the wait, not as an unhandled
  // rejection that would skip the cleanup.
  const beside = alongside ? alongside(firstTurn).then((v) => ({ v }), (e) => ({ e })) : null;
  await waitFor("the lead's first turn at the mock", 90000, firstTurn);
  const b = beside ? await beside : { v: null };
  if (b.e) throw b.e;
  const besideOut = b.v;
  check(!finished, `run ended before the lead's first turn: exit ${finished && finished.code}: ${finished && finished.stdout}`);
  const firstTurnMs = now() - t;
  child.kill('SIGTERM');
  const r = await pending;
  const result = JSON.parse(r.stdout.trim());
  check(r.code === 143, `run exited ${r.code} after SIGTERM, not 143 (state ${result.state}: ${result.reason})`);
  check(result.dialog === null, `dialog ${result.dialog}`);
  check(!/Enter to confirm|Esc to cancel/.test(result.reason || ''), `a dialog in the pane: ${result.reason}`);
  check(result.claude.version === `${CLAUDE_VERSION} (Claude Code)`, `claude ${JSON.stringify(result.claude)}`);
  await assertClean(result, 'first-turn');
  return { first_turn_ms: firstTurnMs, wall_ms: r.ms, claude: result.claude.version, beside: besideOut };
}

// Prepares a new folder again and again until `done()`, while the lead starts up; then checks
// that no write of either side was lost.
async function scenarioConcurrentPrepare() {
  const trusted = [];
  let rewritten = 0;
  const everKeys = new Set();
  const snapshots = [];
  let stopWatch = () => {};
  const out = await scenarioFirstTurn({
    alongside: async (done) => {
      const codes = {};
      // Every distinct content of .claude.json while both write: the keys the client wrote must
      // all still be there at the end.
      const file = path.join(st.cfg, '.claude.json');
      let last = null;
      const timer = setInterval(() => {
        let t = null;
        try { t = fs.readFileSync(file, 'utf8'); } catch (_) { /* gone */ }
        if (t === last) return;
        last = t;
        try {
          const v = JSON.parse(t);
          for (const k of Object.keys(v)) everKeys.add(k);
          snapshots.push({ ms: now() - T0, keys: Object.keys(v), projects: Object.keys(v.projects || {}).length });
        } catch (_) { /* torn: not written so */ }
      }, 2);
      stopWatch = () => clearInterval(timer);
      // Four prepares at a time (each waits for the file to settle before it checks its
      // settings), so the lock is often held when the client wants it.
      let next = 0;
      const worker = async () => {
        while (next < 400 && !done()) {
          const dir = path.join(st.root, `extra-${next++}`);
          fs.mkdirSync(dir);
          const r = await teamctl(['--json', '--lock-timeout', '30s', 'prepare', '--cwd', dir]);
          codes[r.code] = (codes[r.code] || 0) + 1;
          check(r.code === 0, `prepare --cwd ${dir} exited ${r.code}: ${r.stderr}`);
          // Written again: a write of the client that skipped the lock had dropped it.
          if (JSON.parse(r.stdout).files[0].writes > 1) rewritten++;
          trusted.push(dir);
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      return codes;
    },
  });
  stopWatch();
  const cj = JSON.parse(fs.readFileSync(path.join(st.cfg, '.claude.json'), 'utf8'));
  const lost = trusted.filter((d) => !(cj.projects && cj.projects[d] && cj.projects[d].hasTrustDialogAccepted === true));
  check(lost.length === 0, `${lost.length} of ${trusted.length} folders prepare trusted were lost: ${lost.slice(0, 3)}`);
  check(cj.projects[st.work] && cj.projects[st.work].hasTrustDialogAccepted === true, 'the work dir lost its trust');
  check(cj.hasCompletedOnboarding === true, 'onboarding lost');
  // The client's own writes: every key it ever put in the file is still there. (Its counters
  // may be missing altogether: 2.1.332 skips a counter-only save when the lock is held.)
  // fullscreenBootPending marks a boot in progress: the client removes it itself.
  const transient = new Set(['fullscreenBootPending']);
  const gone = [...everKeys].filter((k) => !(k in cj) && !transient.has(k));
  if (gone.length) {
    // Where each went: the snapshot that dropped it, and whether that write also added or
    // dropped a project (prepare's writes add one; the client's own do not).
    const where = gone.map((k) => {
      const i = snapshots.findIndex((x, j) => j > 0 && snapshots[j - 1].keys.includes(k) && !x.keys.includes(k));
      const a = snapshots[i - 1];
      const b = snapshots[i];
      return i < 0 ? `${k}: ?` : `${k}: dropped at +${b.ms} ms (${a.keys.length} -> ${b.keys.length} keys, projects ${a.projects} -> ${b.projects})`;
    });
    fail(`keys the client wrote were lost: ${where.join('; ')}`);
  }
  const backups = fs.existsSync(path.join(st.cfg, 'backups')) ? fs.readdirSync(path.join(st.cfg, 'backups')).length : 0;
  return { ...out, prepares: trusted.length, client_keys: Object.keys(cj).length, keys_seen: everKeys.size, rewritten, backups };
}

h.run(async () => {
  const summary = {};
  if (args.scenario === 'concurrent-prepare') {
    summary.concurrent_prepare = await scenarioConcurrentPrepare();
    summary.claude = summary.concurrent_prepare.claude;
    summary.total_ms = now() - T0;
    return summary;
  }
  if (args.scenario === 'first-turn') {
    summary.first_turn = await scenarioFirstTurn();
    summary.claude = summary.first_turn.claude;
    summary.total_ms = now() - T0;
    return summary;
  }
  const all = args.scenario === 'all';
  if (all || args.scenario === 'done') summary.done = await scenarioDone();
  if (all || args.scenario === 'timeout') summary.timeout = await scenarioTimeout();
  if (all || args.scenario === 'budget') summary.budget = await scenarioBudget();
  summary.total_ms = now() - T0;
  return summary;
});
