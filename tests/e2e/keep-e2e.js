#!/usr/bin/env node
'use strict';
// End to end for keeping a team going (`status` waiting reasons, `wait --on-rate-limit/
// --on-stall/--on-dead`, `resume`, `run --resume`) against the REAL Claude Code 2.1.332,
// offline (harness.js), with the mock's fault rules (mock-api.js, "Faults"). The client runs with
// CLAUDE_CODE_MAX_RETRIES=2 and API_TIMEOUT_MS=5000 so that its retries run out in seconds and a
// request that gets no answer is given up after 5 s.
//
//   node tests/e2e/keep-e2e.js --teamctl <exe> --scenario reasons|keep|resume [--keep] [--verbose]
//
// reasons: `teamctl status --json` while the API fails, for a pane teammate of `teamctl create`
//   (429, 529, 500, a dropped connection, a request that never gets an answer) and for the lead
//   of `teamctl run` (429): every waiting reason and waiting_detail the statuses went through is
//   recorded in the summary (`seen`), and the last one of each fault must name it. The run whose
//   lead's retries ran out must not end `done`.
// keep: in a team `teamctl create` made: `wait --on-rate-limit exit` exits 7 once the client's
//   retries of a 429 ran out; `wait --on-stall exit` exits 8 on a stalled request; `wait
//   --on-stall nudge` nudges the teammate whose request stalled, and once the request is
//   released it answers the nudge; with a task in progress, its pane killed, `wait --on-dead
//   exit` exits 9 and `wait --on-dead restart --tasks-done` starts it again on its session and
//   it completes the task.
// resume: `tmux kill-server` under a team `teamctl create` made; `teamctl resume` brings the
//   teammate back on its session and a message sent afterwards is answered. Then `teamctl run`
//   whose lead is SIGKILLed: (a) under a running `run`, which ends failed; `run --resume` makes
//   the resumed lead spawn its teammate again, and ends done; (b) with `run` killed too, so its
//   teammate goes on and its report lands unread: `run --resume` ends that orphan, carries the
//   report in the lead's prompt, and ends done. Each time the team's leadSessionId is the
//   resumed session.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const http = require('http');
const path = require('path');
const { spawn } = require('child_process');

const SCENARIOS = ['reasons', 'keep', 'resume'];
const h = require('./harness')({
  name: 'keep-e2e',
  team: null,
  argv: process.argv.slice(2),
  deadline: 240,
  synopsis: '--teamctl <exe> --scenario reasons|keep|resume [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]',
  flags: {
    '--scenario': { key: 'scenario', required: true, check: (v) => (SCENARIOS.includes(v) ? null : `--scenario ${SCENARIOS.join('|')}`) },
  },
  dirs: ['data'],
  env: (env, st) => ({ ...env, TEAMCTL_DATA_DIR: st.data, CLAUDE_CODE_MAX_RETRIES: '2', API_TIMEOUT_MS: '5000' }),
  mockLogLine: (j) => `${j.n} +${j.ms}ms ${j.session || ''} ${j.fault ? JSON.stringify(j.fault) : ''} ${JSON.stringify(j.reply)} ${j.why}`,
});

const { args, st, now, hex, trace, fail, check, waitFor, teamctl, lastJson, tmux, inbox, sleep, readJson } = h;

// The mock's control endpoint: POST /_mock/<what> with `body`.
function control(what, body) {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body === undefined ? {} : body));
    const req = http.request({ host: '127.0.0.1', port: st.port, method: 'POST', path: `/_mock/${what}`,
      headers: { 'content-type': 'application/json', 'content-length': data.length } }, (res) => {
      let out = '';
      res.on('data', (d) => { out += d; });
      res.on('end', () => resolve(JSON.parse(out || 'null')));
    });
    req.on('error', reject);
    req.end(data);
  });
}
const faults = (rules) => { trace(`faults: ${JSON.stringify(rules)}`); return control('faults', rules); };
// How many connections the mock holds open (hang, stall).
function held() {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: st.port, path: '/_mock/state' }, (res) => {
      let out = '';
      res.on('data', (d) => { out += d; });
      res.on('end', () => resolve(JSON.parse(out).hung));
    }).on('error', reject);
  });
}

// `status --json` of `team`; the member `name` of it.
async function memberStatus(team, name, extra = []) {
  const r = await teamctl(['--team', team, '--json', 'status', ...extra]);
  check(r.code === 0, `status exited ${r.code}: ${r.stderr}`);
  return lastJson(r.stdout).members.find((m) => m.name === name) || null;
}

// Polls `status --json` of `name` until `done(member)`; returns every distinct waiting state
// seen on the way, `{ms, waiting, status, attempt, exhausted, message}`, the last one last.
async function watchWaiting(team, name, what, ms, done, extra = ['--no-response-after', '2s']) {
  const seen = [];
  let lastKey = null;
  const t0 = now();
  await waitFor(what, ms, async () => {
    const m = await memberStatus(team, name, extra);
    if (!m) return false;
    const d = m.waiting_detail || {};
    const s = { waiting: m.waiting, status: d.status ?? null, attempt: d.attempt ?? null, exhausted: d.exhausted ?? null, message: d.message ?? null };
    // A new state (the no_response message counts seconds: the same state).
    const key = JSON.stringify({ ...s, message: s.waiting === 'no_response' ? null : s.message });
    if (key !== lastKey) {
      lastKey = key;
      seen.push({ ms: now() - t0, ...s });
      trace(`${name}: ${JSON.stringify(s)}`);
    }
    return done(m);
  });
  return seen;
}

async function createTeam(team, members = ['worker']) {
  const argv = ['--json', 'create', team];
  for (const m of members) argv.push('--member', `${m}:You are ${m}. Wait for messages.`);
  const c = await teamctl([...argv, '--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--timeout', '40s']);
  check(c.code === 0, `create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const r = lastJson(c.stdout);
  check(r.state === 'ready', `create: ${c.stdout}`);
  const w = await teamctl(['--team', team, '--json', 'wait', '--idle', '--timeout', '40s']);
  check(w.code === 0, `wait --idle exited ${w.code}: ${w.stderr}`);
  return r.claude.version;
}

// --- reasons -----------------------------------------------------------------------------------

// What the pane teammate `worker` of `team` goes through for each fault; its failed turns end
// with the synthetic error entry, and it takes the next message.
async function paneReasons(team) {
  const cases = [
    { name: '429', rule: { status: 429, headers: { 'retry-after': '1' } }, want: 'rate_limited', status: 429 },
    { name: '529', rule: { status: 529 }, want: 'overloaded', status: 529 },
    { name: '500', rule: { status: 500 }, want: 'api_error', status: 500 },
    { name: 'drop', rule: { action: 'drop' }, want: 'api_error', status: null },
  ];
  const out = {};
  for (const c of cases) {
    const tok = `E${c.name}-${hex(3)}`;
    await faults([{ match: tok, times: 0, ...c.rule }]);
    const s = await teamctl(['--team', team, 'send', 'worker', `Token: ${tok}`]);
    check(s.code === 0, `send exited ${s.code}: ${s.stderr}`);
    const t0 = new Date().toISOString();
    const seen = await watchWaiting(team, 'worker', `worker's retries to run out on ${c.name}`, 40000, (m) => m.waiting_detail
      && m.waiting_detail.exhausted === true && m.waiting_detail.since >= t0);
    const last = seen[seen.length - 1];
    check(last.waiting === c.want && last.status === c.status, `${c.name}: ended ${JSON.stringify(last)}, not ${c.want} ${c.status}`);
    out[c.name] = seen;
  }
  // A request that gets no answer: no_response after --no-response-after, then (API_TIMEOUT_MS)
  // the client gives up on it and sends it again; the fault lifted, that one is answered.
  const tok = `Ehang-${hex(3)}`;
  await faults([{ match: tok, times: 0, action: 'hang' }]);
  check((await teamctl(['--team', team, 'send', 'worker', `Token: ${tok}`])).code === 0, 'send (hang)');
  let sawNoResponse = false;
  const hang = await watchWaiting(team, 'worker', 'no_response, then the request sent again', 30000, (m) => {
    if (m.waiting === 'no_response') sawNoResponse = true;
    return sawNoResponse && m.waiting === 'api_error';
  });
  await faults([]);
  await control('release');
  await waitFor(`the echo of ${tok}`, 30000, () => (inbox('team-lead', team) || []).some((e) => e.from === 'worker' && e.text.includes(tok)));
  // Its turn over, nothing holds it back.
  hang.push(...await watchWaiting(team, 'worker', 'worker to wait for nothing after its answer', 15000,
    (m) => m.waiting === null && m.is_active === false));
  out.hang = hang;
  return out;
}

// `teamctl --json run …` started in the background: its progress events as they come
// (`events`), the team it formed or carries on (`team`), `child`, and `done` (its result).
function startRun(argv) {
  const full = ['--claude-dir', st.cfg, '--json', 'run', ...argv];
  trace(`teamctl ${full.join(' ')}`);
  const t = now();
  const child = spawn(args.teamctl, full, { env: st.env, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { child, events: [], team: null, stdout: '', stderr: '', finished: null };
  let buf = '';
  child.stderr.on('data', (d) => {
    run.stderr += d;
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      trace(`run: ${line.slice(0, 400)}`);
      let e = null;
      try { e = JSON.parse(line); } catch (_) { continue; }
      run.events.push(e);
      const m = e.type === 'progress' && /^team (session-[0-9a-f]{8}) (formed|carried on)/.exec(e.message);
      if (m) run.team = m[1];
    }
  });
  child.stdout.on('data', (d) => { run.stdout += d; });
  run.done = new Promise((resolve) => child.on('close', (code, sig) => {
    run.finished = { code: code === null ? 128 + (sig === 'SIGKILL' ? 9 : 15) : code, ms: now() - t };
    trace(`teamctl run -> ${run.finished.code} in ${run.finished.ms} ms`);
    resolve({ ...run.finished, result: run.stdout.trim() ? lastJson(run.stdout) : null });
  }));
  return run;
}

// The lead of `teamctl run`, whose every request is refused with 429: what status says of it while
// the run goes on, and how the run ends.
async function leadReasons() {
  const tok = `L429-${hex(3)}`;
  await faults([{ match: `Spawn: worker ${tok}`, times: 0, status: 429, headers: { 'retry-after': '1' } }]);
  const run = startRun([`Spawn: worker ${tok}`, '--claude-bin', args.claudeBin, '--dangerously-skip-permissions',
    '--teammate-mode', 'tmux', '--timeout', '40s', '--settle', '2s', '--name', 'reasons']);
  await waitFor("the run lead's team", 30000, () => run.team || run.finished);
  check(run.team, `run ended before its team formed: ${run.stderr}`);
  const seen = await watchWaiting(run.team, 'team-lead', "the lead's retries to run out", 40000,
    (m) => (m.waiting_detail && m.waiting_detail.exhausted === true) || run.finished);
  const last = seen[seen.length - 1];
  check(last.waiting === 'rate_limited' && last.status === 429 && last.exhausted === true, `lead ended ${JSON.stringify(last)}`);
  await faults([]);
  const r = await run.done;
  // Its turn over with the error, nothing left to prompt it: stuck, exit 7 (not done).
  check(r.code === 7 && r.result.state === 'stuck' && /^the lead's turn ended with an API error/.test(r.result.reason),
    `run exited ${r.code}, state ${r.result.state}: ${r.result.reason}`);
  return { seen, run: { code: r.code, state: r.result.state, reason: (r.result.reason || '').split('\n')[0], result: r.result.result } };
}

async function reasons() {
  const claude = await createTeam('demo');
  const pane = await paneReasons('demo');
  const lead = await leadReasons();
  return { claude, pane, lead };
}

// --- keep --------------------------------------------------------------------------------------

// `teamctl --json wait …` on `team` in the background: its action events (stderr JSON Lines) as
// they come, `done` its exit and document.
function startWait(team, argv, extraEnv = {}) {
  const full = ['--claude-dir', st.cfg, '--team', team, '--json', 'wait', ...argv];
  trace(`teamctl ${full.join(' ')}`);
  const t = now();
  const child = spawn(args.teamctl, full, { env: { ...st.env, ...extraEnv }, cwd: st.work, stdio: ['ignore', 'pipe', 'pipe'] });
  const w = { child, actions: [], stdout: '', stderr: '', finished: null };
  let buf = '';
  child.stderr.on('data', (d) => {
    w.stderr += d;
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      trace(`wait: ${line.slice(0, 400)}`);
      try {
        const e = JSON.parse(line);
        if (e.type === 'action') w.actions.push(e);
      } catch (_) { /* a plain line */ }
    }
  });
  child.stdout.on('data', (d) => { w.stdout += d; });
  w.done = new Promise((resolve) => child.on('close', (code) => {
    w.finished = { code, ms: now() - t };
    trace(`teamctl wait -> ${code} in ${w.finished.ms} ms`);
    resolve({ ...w.finished, stderr: w.stderr, doc: w.stdout.trim() ? lastJson(w.stdout) : null });
  }));
  return w;
}

// The worker's pane (config.json's tmuxPaneId).
function paneOf(team, name) {
  const cfg = readJson(path.join(st.cfg, 'teams', team, 'config.json'));
  return cfg.members.find((m) => m.name === name).tmuxPaneId;
}

// Until `name`'s turn is over and nothing holds it back (its transcript is written a moment
// after what its tools did: a step started before would see the last one's silence).
async function settled(team, name = 'worker') {
  await waitFor(`${name} to be idle, waiting for nothing`, 30000, async () => {
    const m = await memberStatus(team, name);
    // (A turn that failed for good waits for nothing either.)
    const free = m && (m.waiting === null || (m.waiting_detail && m.waiting_detail.exhausted === true));
    return free && m.is_active === false && !(m.activity && m.activity.kind === 'tool_use');
  });
}

// A message from `from` in team-lead's inbox whose text matches `re`.
const fromWorker = (team, re) => (inbox('team-lead', team) || []).some((e) => e.from === 'worker' && re.test(e.text));

async function keep() {
  const team = 'demo';
  const claude = await createTeam(team);
  // A second session keeps the tmux server up once the worker's pane (its session's only one)
  // is killed: with no server at all, no pane can be asked about (teamctl resume is for that).
  tmux('new-session', '-d', '-s', 'keepalive', 'exec sleep 600');
  const out = { claude };

  // 429: wait --on-rate-limit exit ends with 7 as soon as the worker's call is being retried.
  const t429 = `K429-${hex(3)}`;
  await faults([{ match: t429, times: 0, status: 429, headers: { 'retry-after': '1' } }]);
  let w = startWait(team, ['--message-from', 'worker', '--on-rate-limit', 'exit', '--timeout', '60s']);
  check((await teamctl(['--team', team, 'send', 'worker', `Token: ${t429}`])).code === 0, 'send 429');
  let r = await w.done;
  // It waits Claude Code's retries out, and ends once they ran out.
  check(r.code === 7 && /'worker' is rate_limited \(API Error: Request rejected \(429\)/.test(r.stderr),
    `wait --on-rate-limit exit exited ${r.code}: ${r.stderr}`);
  out.rate_limit = { code: r.code, ms: r.ms, error: r.stderr.trim().split('\n').pop() };
  // Its retries run out (its turn ends with the error): the next message takes it on again.
  await watchWaiting(team, 'worker', "worker's retries to run out", 30000, (m) => m.waiting_detail && m.waiting_detail.exhausted === true);
  await faults([]);

  // A stalled request: --on-stall exit ends with 8.
  await settled(team);
  const tStall = `Kstall-${hex(3)}`;
  await faults([{ match: tStall, times: 1, action: 'stall' }]);
  w = startWait(team, ['--message-from', 'worker', '--on-stall', 'exit', '--stall-after', '3s', '--timeout', '60s']);
  check((await teamctl(['--team', team, 'send', 'worker', `Token: ${tStall}`])).code === 0, 'send stall');
  r = await w.done;
  check(r.code === 8, `wait --on-stall exit exited ${r.code}: ${r.stderr}`);
  out.stall = { code: r.code, ms: r.ms, error: r.stderr.trim().split('\n').pop() };
  // Released, the client sends the request again and carries on: the echo comes.
  await control('release');
  await waitFor(`the echo of ${tStall}`, 30000, () => fromWorker(team, new RegExp(tStall)));

  // --on-stall nudge: the worker's request stalls; it is nudged; released, it answers the nudge.
  await settled(team);
  const tNudge = `Knudge-${hex(3)}`;
  await faults([{ match: tNudge, times: 1, action: 'stall' }]);
  w = startWait(team, ['--message-from', 'worker', '--on-stall', 'nudge', '--stall-after', '3s', '--timeout', '60s']);
  check((await teamctl(['--team', team, 'send', 'worker', `Token: ${tNudge}`])).code === 0, 'send nudge');
  await waitFor('the stalled request at the mock', 20000, async () => (await held()) >= 1);
  const tHeld = now();
  await waitFor('the nudge', 30000, () => w.actions.some((a) => a.action === 'nudge') || w.finished);
  const nudge = w.actions.find((a) => a.action === 'nudge');
  check(nudge && nudge.ok && nudge.member === 'worker' && nudge.reason === 'stalled', `nudge: ${JSON.stringify(w.actions)} ${w.stderr}`);
  const tNudged = now();
  await control('release');
  await waitFor('the worker to answer the nudge', 30000, () => fromWorker(team, /^CARRIED ON after: teamctl: you have been silent/));
  r = await w.done;
  check(r.code === 0, `wait --on-stall nudge exited ${r.code}: ${r.stderr}`);
  out.nudge = { held_to_nudge_ms: tNudged - tHeld, release_to_answer_ms: now() - tNudged, outcome: nudge.outcome, wait_ms: r.ms };

  // A task in progress, the worker's pane killed: dead; --on-dead exit ends with 9.
  await settled(team);
  // The worker has claimed a task (no mail: it took it itself) when its pane is killed.
  const add = await teamctl(['--team', team, '--json', 'tasks', 'add', 'Finish the report']);
  check(add.code === 0, `tasks add: ${add.stderr}`);
  const id = lastJson(add.stdout).task.id;
  const claim = await teamctl(['--team', team, 'tasks', 'claim', id, '--as', 'worker']);
  check(claim.code === 0, `tasks claim: ${claim.stderr}`);
  const pane = paneOf(team, 'worker');
  tmux('kill-pane', '-t', pane);
  const dead = await watchWaiting(team, 'worker', 'worker to be dead', 20000, (m) => m.waiting === 'dead');
  w = startWait(team, ['--tasks-done', '--on-dead', 'exit', '--timeout', '60s']);
  r = await w.done;
  check(r.code === 9, `wait --on-dead exit exited ${r.code}: ${r.stderr}`);
  out.dead = { code: r.code, ms: r.ms, error: r.stderr.trim().split('\n').pop(), status: dead[dead.length - 1] };

  // --on-dead restart: started again on its session, told to carry on with its task (a resumed
  // teammate does not take it up by itself), it completes it.
  w = startWait(team, ['--tasks-done', '--on-dead', 'restart', '--timeout', '60s'], { TEAMCTL_CLAUDE_BIN: args.claudeBin });
  r = await w.done;
  const restart = w.actions.find((a) => a.action === 'restart');
  check(r.code === 0, `wait --on-dead restart exited ${r.code}: ${r.stderr}`);
  check(restart && restart.ok && /started worker again in pane %\d+ on session [0-9a-f-]{36}/.test(restart.outcome),
    `restart: ${JSON.stringify(w.actions)}`);
  const newPane = paneOf(team, 'worker');
  check(newPane !== pane, `the worker's pane is still ${pane}`);
  const done = h.mockLines().find((l) => /^teamctl message: complete task/.test(l.why || ''));
  check(done && /teamctl restarted you after you were dead\. Carry on with task #/.test(done.lastText), 'the task was not completed on the restart message');
  out.restart = { code: r.code, ms: r.ms, outcome: restart.outcome };
  return out;
}

// --- resume -------------------------------------------------------------------------------------

// The transcript of session `id` (projects/*/<id>.jsonl), or null.
function transcriptOf(id) {
  const base = path.join(st.cfg, 'projects');
  for (const d of fs.existsSync(base) ? fs.readdirSync(base) : []) {
    const f = path.join(base, d, `${id}.jsonl`);
    if (fs.existsSync(f)) return f;
  }
  return null;
}
// The pane teammate's own session id: the newest transcript whose entries name it.
function sessionOf(name) {
  const base = path.join(st.cfg, 'projects');
  let best = null;
  for (const d of fs.existsSync(base) ? fs.readdirSync(base) : []) {
    for (const f of fs.readdirSync(path.join(base, d)).filter((x) => x.endsWith('.jsonl'))) {
      const p = path.join(base, d, f);
      if (fs.readFileSync(p, 'utf8').includes(`"agentName":"${name}"`)) {
        const m = fs.statSync(p).mtimeMs;
        if (!best || m > best.m) best = { id: f.slice(0, -6), m };
      }
    }
  }
  return best && best.id;
}
const alive = (pid) => { try { process.kill(pid, 0); return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch (_) { return false; } };

// `tmux kill-server` under a team `teamctl create` made; `teamctl resume` brings the teammate
// back on its session; it answers what it is told on the way, and a message sent afterwards.
async function serverKilled() {
  const team = 'demo';
  const claude = await createTeam(team);
  // The worker reports idle before its turn has ended (research §14): its transcript, which
  // names it, can come a moment after `wait --idle` returns.
  const t = now();
  const before = await waitFor("the worker's transcript", 10000, () => sessionOf('worker'));
  const transcriptMs = now() - t;
  const pid = Number(tmux('display-message', '-p', '-t', paneOf(team, 'worker'), '#{pane_pid}').stdout.trim());
  tmux('kill-server');
  await waitFor('the worker to end', 15000, () => !alive(pid));
  const t0 = now();
  const r = await teamctl(['--team', team, '--json', 'resume', '--claude-bin', args.claudeBin]);
  check(r.code === 0, `resume exited ${r.code}: ${r.stderr}\n${r.stdout}`);
  const m = lastJson(r.stdout).members.find((x) => x.name === 'worker');
  check(m && m.action === 'resumed' && m.session_id === before, `resume: ${r.stdout} (session before: ${before})`);
  // Told it was restarted, it answers; then a new message is answered too.
  await waitFor('the answer to the restart note', 30000, () => fromWorker(team, /^CARRIED ON after: teamctl restarted you after the team stopped/));
  const answeredMs = now() - t0;
  const tok = `R-${hex(3)}`;
  check((await teamctl(['--team', team, 'send', 'worker', `Token: ${tok}`])).code === 0, 'send after resume');
  await waitFor(`the echo of ${tok}`, 30000, () => fromWorker(team, new RegExp(`^ECHO ${tok}$`)));
  check(sessionOf('worker') === before, `the worker went on in session ${sessionOf('worker')}, not ${before}`);
  return { claude, transcript_after_idle_ms: transcriptMs, resume_ms: r.ms, note_answered_ms: answeredMs, session: before, echo_ms: now() - t0 - answeredMs };
}

// Every leadSessionId seen in `team`'s config.json until the returned function is called
// (polled), into `seen`; and into `shapes` each new (members, leadProcess pid, inboxes there).
function watchLeadSession(team, seen, shapes) {
  const dir = path.join(st.cfg, 'teams', team);
  const timer = setInterval(() => {
    const cfg = readJson(path.join(dir, 'config.json'));
    if (cfg && cfg.leadSessionId && seen[seen.length - 1] !== cfg.leadSessionId) seen.push(cfg.leadSessionId);
    let inboxes = null;
    try { inboxes = fs.readdirSync(path.join(dir, 'inboxes')).filter((f) => f.endsWith('.json')).sort().join(','); } catch (_) { /* none */ }
    const shape = cfg && `members ${cfg.members.map((m) => m.name).join(',')}; lead pid ${cfg.leadProcess && cfg.leadProcess.pid}; inboxes ${inboxes || 'none'}`;
    if (cfg && shapes[shapes.length - 1] !== shape) shapes.push(shape);
  }, 20);
  return () => clearInterval(timer);
}

// `teamctl run` whose lead is SIGKILLed while its worker's report is held back by the mock (and,
// with `orphan`, `run` itself first, so that nothing ends the worker); then `run --resume`.
async function leadKilled(name, orphan) {
  const tok = `RR${orphan ? 'B' : 'A'}-${hex(3)}`;
  await faults([{ match: `Report: ${tok}`, times: 1, action: 'delay', delayMs: orphan ? 4000 : 60000 }]);
  const flags = ['--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--teammate-mode', 'tmux',
    '--timeout', '60s', '--settle', '2s', '--name', name];
  const first = startRun([`Spawn: worker ${tok}`, ...flags]);
  await waitFor("the worker's report at the mock", 40000, () => h.mockSaw(`report ${tok}`) || first.finished);
  check(!first.finished && first.team, `the first run ended early: ${first.stderr}`);
  const team = first.team;
  const cfg = readJson(path.join(st.cfg, 'teams', team, 'config.json'));
  const leadPid = cfg.leadProcess.pid;
  if (orphan) first.child.kill('SIGKILL');
  process.kill(leadPid, 'SIGKILL');
  const r1 = await first.done;
  if (!orphan) {
    check(r1.code === 1 && r1.result.state === 'failed' && /^the lead exited/.test(r1.result.reason), `first run: ${r1.code} ${JSON.stringify(r1.result)}`);
  } else {
    // The worker goes on: its report lands in team-lead.json, which nobody reads.
    await waitFor('the orphan\'s report in team-lead.json', 30000, () => fromWorker(team, new RegExp(`^REPORT ${tok}$`)));
  }
  const session = cfg.leadSessionId;
  const seen = [];
  const shapes = [];
  const stop = watchLeadSession(team, seen, shapes);
  const again = startRun(['--resume', team, ...flags]);
  const r = await again.done;
  stop();
  const res = r.result;
  check(r.code === 0 && res.state === 'done', `run --resume exited ${r.code}: ${res && res.state}: ${res && res.reason}\n${again.stderr}`);
  check(res.result === `FINAL ANSWER: the team reported ${tok}`, `result ${JSON.stringify(res.result)}`);
  check(res.team === team && res.lead_session_id === session, `team ${res.team}, session ${res.lead_session_id}`);
  check(seen.length > 0 && seen.every((id) => id === session), `leadSessionId went ${JSON.stringify(seen)}, not only ${session}`);
  const rs = res.resumed;
  check(JSON.stringify(rs.ended) === JSON.stringify(orphan ? ['worker'] : []) && rs.messages === (orphan ? 1 : 0),
    `resumed ${JSON.stringify(rs)}`);
  // The resumed lead went on in its own session: the prompt is in its transcript.
  const t = fs.readFileSync(transcriptOf(session), 'utf8');
  check(t.includes('this session was interrupted'), 'the resumed prompt is not in the lead\'s transcript');
  const respawned = h.mockLines().some((l) => l.session === session && l.why === 'resumed: spawn worker again');
  check(respawned === !orphan, `resumed lead spawned its worker again: ${respawned}`);
  return { first_code: r1.code, resume_ms: r.ms, resumed: rs, respawned, lead_session_ids_seen: seen.length, team_seen: shapes };
}

async function resume() {
  const server = await serverKilled();
  const underRun = await leadKilled('ra', false);
  const orphaned = await leadKilled('rb', true);
  return { claude: server.claude, server_killed: server, lead_killed: underRun, lead_and_run_killed: orphaned };
}

h.run(async () => {
  const t0 = now();
  let summary;
  if (args.scenario === 'reasons') summary = await reasons();
  else if (args.scenario === 'keep') summary = await keep();
  else summary = await resume();
  return { scenario: args.scenario, ...summary, total_ms: now() - t0 };
});
