#!/usr/bin/env node
'use strict';
// Probe (not a test): what `--resume` (and `--continue`, `--session-id`) does to a team member
// of the real Claude Code, offline against mock-api.js. Prints a timeline (probe-watch.js) and
// ends with a JSON summary. Findings are in docs/research/claude-code-behaviour.md.
//
//   node tests/e2e/probe-resume.js --teamctl target/debug/teamctl [--scenario S] [--kill K]
//        [--resume-flag F] [--claude-bin PATH] [--keep] [--verbose] [--deadline s]
//
// --scenario teammate (default): `teamctl create demo --member worker:<brief>` starts a pane
//              teammate as teamctl does; `send worker "Work: T1"` makes it run `timeout 30 tail -f /dev/null`
//              (a turn still in progress); its pane is then ended (--kill); `send --join --from
//              ops worker "Token: R-1"` and `send worker "Token: R-2"` arrive while it is dead;
//              then it is started again in a new window of the team's tmux session with the
//              same command line plus --resume-flag (default `--resume <its session id>`), and
//              watched for 20 s: which transcript it writes, its member entry, its inbox, the
//              mock's requests, its echoes.
//            lead: an interactive lead started as `teamctl run` starts it (`claude --session-id
//              <S> --dangerously-skip-permissions --teammate-mode tmux -- "Spawn: worker T"`);
//              the worker reports, the lead answers; the lead is ended (--kill), and started
//              again with --resume-flag (default `--resume <S>`) in a new window; then `ops`
//              (joined) sends the worker "Report: T2", so the worker writes to team-lead's inbox:
//              does the resumed lead read it (config.json leadSessionId, leadProcess, the lead's
//              transcript, the mock's requests)?
//            headless: `claude -p` sessions in one cwd: a first one, then `-p --resume <id>`,
//              `-p --continue`, `-p --session-id <the same id>`, `-p --fork-session --resume`:
//              exit codes, output and which transcript files each wrote.
// --quiet-death 1  (teammate) send nothing while it is dead: watch 12 s after the restart for a
//            turn it starts by itself, then send
// --old-lead 1  (lead) prompt SPAWN-TEAMMATE: the mock forms the team with TeamCreate where the
//            client has it (2.1.177 and older); the team is found by its `worker` member
// --kill     pane (default; `tmux kill-pane`: the process gets SIGHUP) | sigkill | sigterm
// --resume-flag  `resume` (default) | `continue` | `none` (the same command line, fresh) |
//            `print` (lead only: `claude -p --resume <S> "Hello again"`, headless, instead of a
//            new interactive lead)
//
// Everything lives in a temp dir (removed unless --keep), a private tmux server and the mock on
// 127.0.0.1 (harness.js); all are stopped at the end.

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { spawnSync } = require('child_process');

const h = require('./harness')({
  name: 'probe-resume',
  team: null,
  argv: process.argv.slice(2),
  deadline: 240,
  synopsis: '--teamctl <exe> [--scenario teammate|lead|headless] [--kill pane|sigkill|sigterm] [--resume-flag resume|continue|none|print] [--keep] [--verbose]',
  flags: {
    '--scenario': { key: 'scenario', value: 'teammate', check: (v) => (['teammate', 'lead', 'headless'].includes(v) ? null : '--scenario teammate|lead|headless') },
    '--quiet-death': { key: 'quietDeath', value: '', check: (v) => (['', '1'].includes(v) ? null : '--quiet-death 1') },
    '--old-lead': { key: 'oldLead', value: '', check: (v) => (['', '1'].includes(v) ? null : '--old-lead 1') },
    '--kill': { key: 'kill', value: 'pane', check: (v) => (['pane', 'sigkill', 'sigterm'].includes(v) ? null : '--kill pane|sigkill|sigterm') },
    '--resume-flag': { key: 'resumeFlag', value: 'resume', check: (v) => (['resume', 'continue', 'none', 'print'].includes(v) ? null : '--resume-flag resume|continue|none|print') },
  },
  settings: (args) => (args.scenario === 'lead' ? { teammateMode: 'tmux' } : {}),
  claudeJson: (args) => (args.scenario === 'lead' ? { teammateMode: 'tmux' } : {}),
});
const { args, st, trace, sleep, waitFor, teamctl, tmux, readJson, exec, shq } = h;

const T0 = Date.now();
const log = (m) => { process.stderr.write(`[+${String(Date.now() - T0).padStart(6)}] ${m}\n`); trace(m.slice(0, 300)); };
let watchOnce = () => {};
const watch = async (ms, until = () => false) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    watchOnce();
    if (until()) return true;
    await sleep(100);
  }
  watchOnce();
  return false;
};

// Transcript files: path -> sessionId, agentName, lines.
function transcripts() {
  const out = [];
  const base = path.join(st.cfg, 'projects');
  let dirs = [];
  try { dirs = fs.readdirSync(base); } catch (_) { return out; }
  for (const dd of dirs) {
    let files = [];
    try { files = fs.readdirSync(path.join(base, dd)); } catch (_) { continue; }
    for (const f of files.filter((x) => x.endsWith('.jsonl'))) {
      const p = path.join(base, dd, f);
      const lines = fs.readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch (_) { return {}; } });
      const named = lines.find((e) => e.agentName) || {};
      const ids = [...new Set(lines.map((e) => e.sessionId).filter(Boolean))];
      out.push({ file: f, agentName: named.agentName || null, sessionIds: ids, lines: lines.length });
    }
  }
  return out;
}
const paneList = () => {
  const r = tmux('list-panes', '-a', '-F', '#{session_name}\t#{window_name}\t#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{pane_start_command}');
  return r.status === 0 ? r.stdout.trim().split('\n').filter(Boolean).map((l) => {
    const [session, window, id, pid, dead, cmd] = l.split('\t');
    return { session, window, id, pid: Number(pid), dead: dead === '1', cmd };
  }) : [];
};
const childPids = (pid) => {
  const r = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return (r.stdout || '').trim().split(/\s+/).filter(Boolean).map(Number);
};
// The claude process of a pane: the pane's process or its child (a shell runs the command).
// (The native binary is the process's exe; a JavaScript cli.js is node's first argument, or its
// process title.)
const claudePid = (panePid) => {
  const bin = fs.realpathSync(args.claudeBin);
  const isClaude = (p) => {
    try {
      if (fs.readlinkSync(`/proc/${p}/exe`) === bin) return true;
      // 2.1.112 sets its process title: its cmdline reads just "claude".
      const argv0 = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      return argv0[0] === 'claude' || argv0.slice(0, 2).some((a) => a === bin || a === args.claudeBin);
    } catch (_) { return false; }
  };
  if (isClaude(panePid)) return panePid;
  for (const c of childPids(panePid)) if (isClaude(c)) return c;
  return null;
};
const cmdline = (pid) => { try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean); } catch (_) { return []; } };
const alive = (pid) => { try { process.kill(pid, 0); return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z'); } catch (_) { return false; } };

async function killIt(pane, pid) {
  // Keep the tmux session (and server) alive when its only pane goes.
  const sess = tmux('display-message', '-p', '-t', pane, '#{session_name}').stdout.trim();
  tmux('new-window', '-d', '-t', `=${sess}:`, '-n', 'spare', 'exec sleep 86400');
  log(`KILL (${args.kill}) pane ${pane} claude pid ${pid}`);
  if (args.kill === 'pane') tmux('kill-pane', '-t', pane);
  else process.kill(pid, args.kill === 'sigkill' ? 'SIGKILL' : 'SIGTERM');
  await waitFor(`pid ${pid} to end`, 15000, () => !alive(pid));
  log(`pid ${pid} ended`);
}
function restartCmd(cmd, sessionId) {
  // tmux shows pane_start_command quoted.
  if (cmd.startsWith('"') && cmd.endsWith('"')) cmd = cmd.slice(1, -1).replace(/\\(["\\$])/g, '$1');
  const flag = { resume: ` --resume ${sessionId}`, continue: ' --continue', none: '' }[args.resumeFlag];
  // A lead's command line ends in `-- "<prompt>"`: put the flag before it, and drop the prompt.
  if (cmd.includes(' -- ')) return cmd.slice(0, cmd.indexOf(' -- ')).replace(/ --session-id \S+/, '') + flag;
  return cmd + flag;
}
// What a pane gets: the cron-like environment plus what a lead's own shell would have.
const paneEnv = () => {
  const out = [];
  const e = { ...st.env, SHELL: '/bin/sh', CLAUDE_CONFIG_DIR: st.cfg, CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1' };
  for (const [k, v] of Object.entries(e)) out.push('-e', `${k}=${v}`);
  return out;
};
const envArgs = [];
function startWindow(session, name, cmd) {
  envArgs.splice(0, envArgs.length, ...paneEnv());
  const r = tmux('new-window', '-d', '-t', `=${session}:`, '-n', name, '-P', '-F', '#{pane_id}', ...envArgs, cmd);
  if (r.status !== 0) h.fail(`new-window: ${r.stderr}`);
  tmux('set-option', '-w', '-t', r.stdout.trim(), 'remain-on-exit', 'on');
  log(`STARTED window ${name} pane ${r.stdout.trim()}: ${cmd.slice(-200)}`);
  return r.stdout.trim();
}

async function teammateScenario() {
  const c = await teamctl(['--json', 'create', 'demo', '--member', 'worker:Hello worker, this is your brief.', '--claude-bin', args.claudeBin, '--dangerously-skip-permissions', '--timeout', '40s']);
  h.check(c.code === 0, `create: ${c.stderr}`);
  const leadInbox = () => h.inbox('team-lead', 'demo') || [];
  const idles = () => leadInbox().filter((e) => String(e.text).includes('idle_notification'));
  await watch(20000, () => idles().length >= 1);
  const p = paneList().find((x) => x.session === 'teamctl-demo' && !x.dead);
  const pid = claudePid(p.pid);
  const before = transcripts().find((t) => t.agentName === 'worker');
  log(`worker pane ${p.id} pid ${pid} session ${before && before.sessionIds}; start command: ${p.cmd}`);
  log(`argv: ${JSON.stringify(cmdline(pid))}`);
  const s1 = await teamctl(['send', 'worker', 'Work: T1']);
  h.check(s1.code === 0, `send: ${s1.stderr}`);
  await watch(20000, () => h.mockSaw('work T1'));
  await watch(1500);
  const cfgBefore = readJson(path.join(st.cfg, 'teams', 'demo', 'config.json'));
  log(`member before kill: ${JSON.stringify(cfgBefore.members.find((m) => m.name === 'worker'))}`);
  await killIt(p.id, pid);
  await watch(2000);
  const cfgDead = readJson(path.join(st.cfg, 'teams', 'demo', 'config.json'));
  log(`member after kill: ${JSON.stringify(cfgDead.members.find((m) => m.name === 'worker'))}`);
  const sendR1 = () => teamctl(['send', '--join', '--from', 'ops', 'worker', 'Token: R-1']);
  const sendR2 = () => teamctl(['send', 'worker', 'Token: R-2']);
  if (!args.quietDeath) {
    const s2 = await sendR1();
    const s3 = await sendR2();
    log(`sends while dead: ${s2.code} ${s3.code}; worker inbox: ${JSON.stringify(h.inbox('worker', 'demo'))}`);
  }
  await watch(1500);
  const sid = before.sessionIds[0];
  const cmd = restartCmd(p.cmd, sid);
  const t0 = Date.now();
  startWindow('teamctl-demo', 'worker-again', cmd);
  if (args.quietDeath) {
    // Nothing waits in its inbox: does the resumed process start a turn by itself?
    const n0 = h.mockLines().length;
    await watch(12000);
    log(`requests in the 12 s after the restart, with an empty inbox: ${h.mockLines().length - n0}`);
    await sendR1();
    await sendR2();
  }
  await watch(20000, () => (h.inbox('ops', 'demo') || []).some((e) => String(e.text).includes('R-1'))
    && leadInbox().some((e) => String(e.text).includes('R-2')) && Date.now() - t0 > 12000);
  await watch(3000);
  const after = transcripts();
  log(`TRANSCRIPTS: ${JSON.stringify(after)}`);
  const cfgAfter = readJson(path.join(st.cfg, 'teams', 'demo', 'config.json'));
  log(`member after restart: ${JSON.stringify(cfgAfter.members.find((m) => m.name === 'worker'))}`);
  return {
    scenario: 'teammate', kill: args.kill, resume_flag: args.resumeFlag, session_before: sid, transcripts: after,
    echo_r1: (h.inbox('ops', 'demo') || []).filter((e) => e.from === 'worker').map((e) => e.text),
    lead_inbox_after: leadInbox().filter((e) => e.from === 'worker').map((e) => e.text.slice(0, 200)),
    worker_inbox_after: h.inbox('worker', 'demo'),
    mock_requests: h.mockLines().length,
  };
}

async function leadScenario() {
  const S = crypto.randomUUID();
  envArgs.splice(0, envArgs.length, ...paneEnv());
  // --old-lead 1: a lead that forms its team with TeamCreate (2.1.177 and older; the mock's
  // SPAWN-TEAMMATE path), its worker only says "ok".
  fs.writeFileSync(path.join(st.tmp, 'prompt'), args.oldLead ? 'SPAWN-TEAMMATE' : 'Spawn: worker TL1');
  const cmd = `cd ${shq(st.work)} && exec ${shq(args.claudeBin)} --session-id ${S} --dangerously-skip-permissions --teammate-mode tmux -- "$(cat ${shq(path.join(st.tmp, 'prompt'))})"`;
  const r = tmux('new-session', '-d', '-s', 'lead', '-n', 'lead', '-x', '200', '-y', '50', ...envArgs, cmd);
  h.check(r.status === 0, `new-session: ${r.stderr}`);
  tmux('set-option', '-g', 'remain-on-exit', 'on');
  let team = `session-${S.slice(0, 8)}`;
  if (args.oldLead) {
    // The team is whichever has a worker; the worker's first turn must be over.
    const find = () => {
      let ts = [];
      try { ts = fs.readdirSync(path.join(st.cfg, 'teams')); } catch (_) { return null; }
      return ts.find((t) => ((readJson(path.join(st.cfg, 'teams', t, 'config.json')) || {}).members || []).some((m) => m.name === 'worker' && m.backendType));
    };
    await watch(60000, () => find() && h.mockSaw('You are worker'));
    team = find();
  } else {
    await watch(40000, () => h.mockSaw('report received'));
  }
  log(`lead session ${S} team ${team}`);
  const cfgFile = path.join(st.cfg, 'teams', team, 'config.json');
  await watch(3000);
  for (const x of paneList()) log(`pane ${x.window} ${x.id} pid ${x.pid} dead=${x.dead}: ${cmdline(x.pid).join(' ').slice(0, 160)}`);
  const lp = paneList().find((x) => x.window === 'lead' && !x.dead && cmdline(x.pid).some((a) => a.includes('--session-id')))
    || paneList().find((x) => x.window === 'lead' && !x.dead);
  const pid = claudePid(lp.pid);
  log(`config before kill: ${JSON.stringify(readJson(cfgFile))}`);
  await killIt(lp.id, pid);
  await watch(2000);
  log(`config after kill: ${JSON.stringify(readJson(cfgFile))}`);
  log(`panes after kill: ${JSON.stringify(paneList().map((x) => [x.window, x.id, x.dead]))}`);
  const t0 = Date.now();
  if (args.resumeFlag === 'print') {
    const r2 = await exec(args.claudeBin, ['-p', '--resume', S, '--dangerously-skip-permissions', 'Hello again'],
      { CLAUDECODE: '1', CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1', CLAUDE_CONFIG_DIR: st.cfg });
    log(`claude -p --resume ${S}: exit ${r2.code} stdout ${JSON.stringify(r2.stdout.slice(0, 300))} stderr ${JSON.stringify(r2.stderr.slice(0, 300))}`);
  } else {
    const np = startWindow('lead', 'lead-again', restartCmd(cmd, S));
    await watch(6000);
    // A prompt for the resumed lead: which session does its turn go to?
    tmux('send-keys', '-t', np, '-l', 'Hello again');
    tmux('send-keys', '-t', np, 'Enter');
    log('typed "Hello again" into the resumed lead');
  }
  await watch(8000);
  log(`config after restart: ${JSON.stringify(readJson(cfgFile))}`);
  // Make the worker write to team-lead.
  let j = await teamctl(['--team', team, 'send', '--join', '--from', 'ops', 'worker', 'Report: TL2']);
  log(`send to worker: ${j.code} ${j.stderr.trim()}`);
  if (j.code !== 0) {
    // The resumed lead rewrote config.json without the worker: write to its inbox anyway.
    j = await teamctl(['--team', team, 'send', '--force', '--from', 'ops', 'worker', 'Report: TL2']);
    log(`send --force to worker: ${j.code} ${j.stderr.trim()}`);
  }
  log(`inboxes now: ${JSON.stringify((() => { try { return fs.readdirSync(path.join(st.cfg, 'teams', team, 'inboxes')); } catch (e) { return e.code; } })())}`);
  await watch(15000, () => h.mockSaw('team reported TL2') && Date.now() - t0 > 15000);
  await watch(3000);
  log(`config at end: ${JSON.stringify(readJson(cfgFile))}`);
  const tl = h.inbox('team-lead', team);
  log(`team-lead inbox at end: ${JSON.stringify(tl)}`);
  return {
    scenario: 'lead', kill: args.kill, resume_flag: args.resumeFlag, lead_session: S, transcripts: transcripts(),
    config_end: readJson(cfgFile), team_lead_inbox: tl,
    lead_saw_tl2: h.mockLines().some((l) => String(l.lastText || '').includes('REPORT TL2')),
  };
}

async function headlessScenario() {
  const out = {};
  const run = async (label, argv2) => {
    const r = await exec(args.claudeBin, ['-p', ...argv2, '--dangerously-skip-permissions'], { CLAUDECODE: '1', CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1', CLAUDE_CONFIG_DIR: st.cfg });
    out[label] = { code: r.code, stdout: r.stdout.trim().slice(0, 300), stderr: r.stderr.trim().slice(0, 300), transcripts: transcripts().map((t) => `${t.file}:${t.lines}:${t.sessionIds.join('|')}`) };
    log(`${label}: ${JSON.stringify(out[label])}`);
  };
  const S = crypto.randomUUID();
  await run('first', ['--session-id', S, 'hello one']);
  await run('resume', ['--resume', S, 'hello two']);
  await run('continue', ['--continue', 'hello three']);
  await run('session_id_again', ['--session-id', S, 'hello four']);
  await run('fork', ['--resume', S, '--fork-session', 'hello five']);
  const last = h.mockLines().map((l) => `${l.session} msgs=${l.messages}`);
  log(`mock: ${JSON.stringify(last)}`);
  return { scenario: 'headless', lead_session: S, runs: out, mock: last };
}

h.run(async () => {
  watchOnce = require('./probe-watch')({ cfg: st.cfg, mockLog: st.mockLog, log, tmux, panes: args.verbose, full: () => false });
  if (args.scenario === 'teammate') return teammateScenario();
  if (args.scenario === 'lead') return leadScenario();
  return headlessScenario();
});
