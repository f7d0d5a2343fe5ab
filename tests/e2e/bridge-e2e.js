#!/usr/bin/env node
'use strict';
// End-to-end test of `teamctl bridge telegram` against the REAL Claude Code 2.1.332, offline:
// `teamctl create` starts a worker in the default permission mode; `teamctl bridge telegram`
// runs against a mock of Telegram's Bot API on 127.0.0.1 (getUpdates, sendMessage, with the
// real field names); the worker asks its lead for permission to run Bash; the request must
// reach the mock chat with a code; a chat message `approve <code>` from the allowed user must
// let the command run.
//
//   node tests/e2e/bridge-e2e.js --teamctl <exe> [--scenario request|run] [--keep] [--verbose]
//                                [--claude-bin <path>] [--deadline <seconds>]
//
// --scenario run: `teamctl run "Exec: echo <tok> > ran-<tok>.txt" --permission-mode default
//   --bridge telegram …`: the lead's own Bash call stops at Claude Code's permission prompt on its
//   screen; the prompt must reach the mock chat with a code (the pane's text, as a `pre`), a
//   stranger's approve must change nothing, and the allowed user's `approve <code>` must be
//   typed into the lead's pane (Enter on `❯ 1. Yes`) so that the command runs. 2.1.332 forms its
//   team (session-<8hex>) at start and ends its turn after the command: the run is done (exit
//   0), its end posted in the chat.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const http = require('http');
const path = require('path');
const TEAM = 'demo';
const TOKEN = '123456:E2E-token';
const h = require('./harness')({
  name: 'bridge-e2e',
  team: TEAM,
  argv: process.argv.slice(2),
  deadline: 90,
  synopsis: '--teamctl <exe> [--scenario request|run] [--keep] [--verbose] [--claude-bin <path>] [--deadline <s>]',
  flags: {
    '--scenario': { key: 'scenario', value: 'request', check: (v) => (['request', 'run'].includes(v) ? null : `bad --scenario ${v}`) },
  },
});

const { args, st, CLAUDE_VERSION, now, hex, fail, check, waitFor, teamctl, mockSaw } = h;

// The mock Bot API: updates queued by `say`, messages kept by sendMessage.
function botApi() {
  const updates = [];
  const sent = [];
  let nextId = 100;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const reply = (status, v) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      const prefix = `/bot${TOKEN}/`;
      if (!req.url.startsWith(prefix)) return reply(401, { ok: false, error_code: 401, description: 'Unauthorized' });
      const method = req.url.slice(prefix.length);
      const b = body ? JSON.parse(body) : {};
      if (method === 'sendMessage') {
        sent.push({ at: now(), body: b });
        return reply(200, { ok: true, result: { message_id: sent.length, date: Math.floor(Date.now() / 1000), chat: { id: b.chat_id }, text: b.text } });
      }
      if (method === 'getUpdates') {
        const offset = b.offset || 0;
        while (updates.length && updates[0].update_id < offset) updates.shift();
        const answer = () => reply(200, { ok: true, result: updates.filter((u) => u.update_id >= offset) });
        if (updates.length) return answer();
        return setTimeout(answer, 300);
      }
      if (method === 'answerCallbackQuery') return reply(200, { ok: true, result: true });
      return reply(404, { ok: false, error_code: 404, description: 'Not Found' });
    });
  });
  const say = (user, text) => updates.push({ update_id: nextId++, message: { message_id: nextId,
    from: { id: user, is_bot: false, first_name: 'P' }, chat: { id: 42, type: 'private' },
    date: Math.floor(Date.now() / 1000), text } });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}`, sent, say, close: () => server.close(),
  })));
}

// The lead's own permission prompt, answered from the chat (`run --bridge`).
async function scenarioRun() {
  const api = await botApi();
  const tok = `P-${hex(4)}`;
  const ran = path.join(st.work, `ran-${tok}.txt`);
  const tStart = now();
  const run = teamctl(['--json', 'run', `Exec: echo ${tok} > ran-${tok}.txt`, '--claude-bin', args.claudeBin,
    '--permission-mode', 'default', '--timeout', '40s', '--settle', '1s', '--name', 'bridge-e2e',
    '--bridge', 'telegram', '--chat', '42', '--allow', '7', '--api', api.url],
  { TEAMCTL_TELEGRAM_TOKEN: TOKEN });
  const posted = await waitFor('the lead\'s prompt in the chat (sendMessage)', 60000,
    () => api.sent.find((x) => x.body.text.includes('permission prompt') && x.body.reply_markup));
  const promptToChatMs = posted.at - tStart;
  const text = posted.body.text;
  check(text.includes(`echo ${tok} > ran-${tok}.txt`) && text.includes('Do you want to proceed?'), `prompt post ${text}`);
  check(posted.body.entities.some((e) => e.type === 'pre'), `no pre entity: ${JSON.stringify(posted.body)}`);
  check(!fs.existsSync(ran), 'the command ran before it was approved');
  const code = posted.body.reply_markup.inline_keyboard[0][0].callback_data.split(' ')[1];
  api.say(8, `approve ${code}`);
  const tApprove = now();
  api.say(7, `approve ${code}`);
  await waitFor(`${ran} (the lead's command approved from the chat ran)`, 30000,
    () => fs.existsSync(ran) && fs.readFileSync(ran, 'utf8').trim() === tok);
  const chatToCommandMs = now() - tApprove;
  const r = await run;
  const result = JSON.parse(r.stdout.trim());
  check(r.code === 0 && result.state === 'done', `run exited ${r.code} (${result.state}: ${result.reason})`);
  check(!/warning/.test(r.stderr), `warnings: ${r.stderr}`);
  const bridgeLines = r.stderr.split('\n').filter((l) => l.includes('"type":"bridge"')).map((l) => JSON.parse(l));
  const events = bridgeLines.map((e) => e.event);
  check(events.includes('posted') && events.includes('approved') && events.includes('refused'), `bridge events ${events}`);
  await waitFor('the run\'s end in the chat', 10000, () => api.sent.some((x) => x.body.text.includes('ended: done')));
  check(!r.stderr.includes(TOKEN), 'the token was printed');
  api.close();
  return { prompt_to_chat_ms: promptToChatMs, chat_to_command_ms: chatToCommandMs, events };
}

h.run(async () => {
  if (args.scenario === 'run') return { claude: CLAUDE_VERSION, run: await scenarioRun() };
  const c = await teamctl(['--json', 'create', TEAM, '--member', 'worker:You are worker. Wait for messages.',
    '--claude-bin', args.claudeBin, '--permission-mode', 'default', '--timeout', '30s']);
  if (c.code !== 0) fail(`create exited ${c.code}: ${c.stderr}\n${c.stdout}`);
  const result = JSON.parse(c.stdout.trim().split('\n').pop());
  check(result.state === 'ready', `create state ${result.state}: ${result.reason}`);
  check(result.claude.version === `${CLAUDE_VERSION} (Claude Code)`, `claude version ${result.claude.version}`);

  const api = await botApi();
  let bridgeProc = null;
  const bridge = teamctl(['--team', TEAM, '--json', 'bridge', 'telegram', '--chat', '42', '--allow', '7',
    '--api', api.url, '--timeout', `${args.deadline}s`], { TEAMCTL_TELEGRAM_TOKEN: TOKEN },
  { onSpawn: (p) => { bridgeProc = p; } });

  const tok = `R-${hex(4)}`;
  const s = await teamctl(['send', 'worker', `Run: ${tok}`]);
  if (s.code !== 0) fail(`send Run exited ${s.code}: ${s.stderr}`);
  const tAsk = now();
  let asks = 1;
  const posted = await waitFor('the request in the chat (sendMessage)', 60000, async () => {
    const m = api.sent.find((x) => x.body.text.includes(tok) && /approve [0-9a-z]{10}/.test(x.body.text));
    if (!m && asks < h.REQUEST_SENDS && mockSaw('could not be delivered to the team lead', asks)) {
      asks += 1;
      await teamctl(['send', 'worker', `Run: ${tok}`]);
    }
    return m;
  });
  const askToChatMs = posted.at - tAsk;
  const code = posted.body.text.match(/approve ([0-9a-z]{10})/)[1];
  const ran = path.join(st.work, `ran-${tok}.txt`);
  check(!fs.existsSync(ran), 'the command ran before it was approved');
  check(posted.body.entities.some((e) => e.type === 'pre'), `no pre entity: ${JSON.stringify(posted.body)}`);

  // Someone else first: nothing runs; then the allowed user.
  api.say(8, `approve ${code}`);
  const tApprove = now();
  api.say(7, `approve ${code}`);
  await waitFor(`${ran} (the command approved from the chat ran)`, 30000,
    () => fs.existsSync(ran) && fs.readFileSync(ran, 'utf8').trim() === tok);
  const chatToCommandMs = now() - tApprove;
  await waitFor('the reply in the chat', 10000, () => api.sent.some((x) => x.body.text.includes('approved')));

  bridgeProc.kill('SIGTERM');
  const b = await bridge;
  const events = b.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).event);
  check(events.includes('posted') && events.includes('approved'), `bridge events ${events}`);
  check(events.filter((e) => e === 'refused').length === 1, `bridge events ${events}`);
  check(!b.stderr.includes(TOKEN), 'the token was printed');
  api.close();

  const d = await teamctl(['--json', 'delete', TEAM, '--timeout', '20s']);
  if (d.code !== 0) fail(`delete exited ${d.code}: ${d.stderr}`);

  return {
    claude: result.claude.version,
    request_to_chat_ms: askToChatMs,
    chat_to_command_ms: chatToCommandMs,
    events,
  };
});
