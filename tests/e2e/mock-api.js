#!/usr/bin/env node
'use strict';
// A tiny mock of the Anthropic Messages API for running the real Claude Code
// binary offline (shared/spec/real-claude-offline.md §2). No dependencies.
//
// Listens on 127.0.0.1, port 0 (or $MOCK_PORT), and prints {"port":N} as the
// first stdout line.
//
//   POST /v1/messages[?...]  -> one streaming SSE reply (sent as a single body
//                               with content-length), chosen from the LAST
//                               non-system entry of `messages`:
//     * text with <teammate-message teammate_id="X" ...> blocks containing
//       `Token: <tok>`  -> ONE tool_use SendMessage
//                          {to: X of the block with the first token,
//                           summary: "echo", message: "ECHO tok1 tok2 ..."},
//                          stop_reason tool_use
//     * else a tool_result block -> text "done", end_turn; except when it is
//       the failed result of our SendMessage ({"success":false,...} or
//       is_error): then the same SendMessage is issued again, at most
//       $MOCK_SEND_RETRIES (default 3) times in a row. 2.1.332 sometimes fails
//       a send with "Couldn't read the roster of team ..." when it reads its
//       own config.json mid-write; a model would retry, and so does the mock.
//     * a shutdown_request frame -> ONE tool_use SendMessage {to: "team-lead",
//       message: {type: "shutdown_response", request_id, approve: true}}
//     * text with `Run: <tok>` in a <teammate-message> -> ONE tool_use Bash
//       {command: "echo <tok> > ran-<tok>.txt", description}: a tool that needs the
//       user's permission, which a pane teammate asks its lead for (permission_request)
//     * text with `SPAWN-TEAMMATE` (typed into a real lead by lead-e2e.js) -> ONE
//       tool_use TeamCreate {team_name: "lead-team"} when the client still has that tool
//       (2.1.177 and older), else the spawn below; after TeamCreate's result, the spawn:
//       ONE tool_use Agent (or Task, on clients that call it that) {description, prompt,
//       name: "worker", and team_name / subagent_type when its schema has them}
//     * text with `Plan: <tok>` -> ONE tool_use ExitPlanMode; when its result says "No plan
//       file found at <path>" (a --plan-mode-required teammate) -> ONE tool_use Write of a
//       plan to <path>, and after that -> ExitPlanMode again
//     * text with `Exec: <command>` in a <teammate-message> -> ONE tool_use Bash
//       {command: <command> (to the end of the line, or a `"` or `<`), description}
//     * a task_assignment frame (teamctl tasks add --owner) -> the teammate completes the task
//       it was given: ONE tool_use Bash {command: "<$MOCK_TEAMCTL> tasks done <id>"} when
//       $MOCK_TEAMCTL is set, else TaskUpdate {taskId, status: "completed"}. 2.1.332 offline
//       offers no Task* tools ("TaskUpdate is disabled for this session"), so the e2e tests
//       set MOCK_TEAMCTL and the task file is changed through teamctl's locks instead
//     * lead mode: `Spawn2: <a> <tokA> <b> <tokB>` in the lead's first prompt -> Agent for a,
//       and on its result Agent for b (a lead that starts two teammates; limit-e2e.js)
//     * lead mode (teamctl run): text `Spawn: <name> <tok>` -> ONE tool_use Agent
//       {description, name, prompt: "Report: <tok>"} (a lead spawns a teammate); with
//       ` type=<t>` and/or ` model=<m>` after the token, subagent_type and model are set too;
//       text `Report: <tok>` -> ONE tool_use SendMessage {to: "team-lead",
//       summary: "report", message: "REPORT <tok>"} (the teammate reports);
//       any <teammate-message> with `REPORT <tok>` in the conversation -> text
//       "FINAL ANSWER: the team reported <tok>" (every later lead turn ends with it)
//     * text `Hang: <ms>` -> text "ok" after <ms> ms (a lead whose turn does not end)
//     * `Subagent: <tok>` in a <teammate-message> -> ONE tool_use Agent without a name (a plain
//       subagent, not a teammate); the subagent's own prompt gets the default "ok"
//     * else                     -> text "ok", end_turn
//   anything else (HEAD/GET/other POST) -> 200 {}
//
// Usage and shape knobs (environment), for the transcript and cost tests:
//   MOCK_USAGE_START  JSON merged into message_start's usage; a string "$n+K" becomes K plus the
//                     request number, e.g. {"input_tokens":"$n+1000","cache_read_input_tokens":30000}
//   MOCK_USAGE_DELTA  JSON used as message_delta's usage (default {"output_tokens":5})
//   MOCK_BLOCKS       comma list of blocks sent before the real one: thinking, text (a response
//                     the client then writes as several assistant entries)
//   MOCK_MODEL        the model message_start reports (default: the requested one)
//   MOCK_SIDE_ZERO    a request without tools (session-title generation, 2.1.112-2.1.210)
//                     reports zero usage, so a client's own figure is what its transcripts hold
//   MOCK_LOG_GREP     a regex: each request's log line gets `grep`, its first 5 matches in the
//                     raw request body (e.g. a marker from an agent definition's prompt)
//
// Each request is logged as one JSON line to $MOCK_LOG (appended) or stderr.
//
// More reply rules (for the probe-*.js scripts, and SendTo/SENDTO for misaddressed-e2e.js):
//   * `SendTo: <name> <tok>` in a <teammate-message> -> ONE tool_use SendMessage {to: <name>,
//     summary: "sendto", message: "SENDTO <tok>"} (a send to any name: a misspelt one, `lead`, ...)
//   * `SENDTO <tok>` in a <teammate-message> from X (such a send that reached a teammate, e.g.
//     moved there by `teamctl redeliver`) -> ONE tool_use SendMessage {to: X, summary: "echo",
//     message: "ECHO <tok>"} (misaddressed-e2e.js)
//   * `Say: <text>` (to the end of its line) in a <teammate-message> -> text <text>, end_turn
//     (a turn that ends in plain text, without SendMessage)
//   * `SpawnWT: <a> <fileA> [<b> <fileB> …]` in a lead's prompt -> ONE tool_use Agent a turn, each
//     {name, isolation: "worktree", prompt: "Exec: echo <name> > <file> && git add … && git commit …"}
//     ($MOCK_SPAWNWT_WAIT=<s>: the command first waits <s> seconds)
//   * `Tell: <name> <tok>` in a lead's own prompt -> ONE tool_use SendMessage {to: <name>,
//     summary: "tell", message: "Token: <tok>"} (a lead writing to a teammate; probe-inherit.js)
//   * a lead's prompt from `teamctl run --resume` ("this session was interrupted") -> text
//     "FINAL ANSWER: the team reported <tok>" when it carries `REPORT <tok>`, else ONE tool_use
//     Agent spawning again the teammate of the conversation's first `Spawn: <name> <tok>`
//   * a <teammate-message> from teamctl keeping the team going (its body starts `teamctl`: a
//     nudge, `teamctl restarted you …`) -> ONE tool_use Bash `<$MOCK_TEAMCTL> tasks done <id>`
//     when it names `task #<id>`, else ONE SendMessage {to: its sender, summary: "carried on",
//     message: "CARRIED ON after: …"}
//   * `Work: <tok>` in a <teammate-message> -> ONE tool_use Bash {command: "timeout 30 tail -f
//     /dev/null; echo work-<tok>-done"}: a turn still running (a teammate busy with its task) for
//     30 s (2.1.332 refuses `sleep 30`, alone or followed by more: "Blocked: standalone sleep 30")
//
// Faults (per request), for probing what the client does with API errors. A rule applies to the
// requests it matches, in order; the first rule with uses left wins; a request no rule takes is
// answered as above. Rules come from $MOCK_FAULTS (JSON: one rule or an array) at start, and from
// the control endpoint at any time:
//   POST /_mock/faults          body: a rule or an array of rules; replaces the list
//                               (?append=1: appends). Answers the list.
//   GET  /_mock/faults          the list, each rule with `used` (how many requests it took)
//   GET  /_mock/state           {requests, hung} (requests seen, connections held open)
//   POST /_mock/release         ends every held connection (hang/stall) by destroying it
// Rule fields (all optional):
//   action   "status" (default): answer `status` with an Anthropic error body and `headers`;
//            "hang": never answer (hold the connection; no headers);
//            "drop": destroy the socket before any header;
//            "drop-after-headers": send 200 and SSE headers, then destroy the socket;
//            "cut": send headers, message_start and half a text block, then destroy the socket;
//            "stall": send headers and message_start, then nothing more (hold the connection);
//            "ok": answer normally, with `headers` added (e.g. anthropic-ratelimit-* on success);
//            "delay": answer normally after `delayMs`
//   status   HTTP status for "status" (default 429); type/message: the error body's
//            {"type":"error","error":{type,message}} (defaults by status: 429 rate_limit_error,
//            529 overloaded_error "Overloaded", 500 api_error, 503 api_error, 401
//            authentication_error, 400 invalid_request_error ...); body: a raw body instead
//   headers  extra response headers, e.g. {"retry-after":"1"}; the string "$now+S" in a value
//            becomes the epoch seconds S from now (for *-reset headers)
//   delayMs  wait this long before acting ("status", "ok", "delay", "drop"), or before
//            destroying the socket ("drop-after-headers", "cut"; default 50)
//   times    how many requests it takes (default 1; 0 = every matching request)
//   skip     let this many matching requests through (answered normally) first
//   match    regex (JS source) on the text of the last non-system message (tool results included)
//   raw      regex on the whole request body (system prompt, tools and messages)
//   session  the request's x-claude-code-session-id must equal this
//   ua       regex on user-agent ("sdk-cli" is `claude -p`, "\\(external, cli\\)" interactive)
// Every request's log line gains `session` (x-claude-code-session-id) and, when a rule took it,
// `fault` ({rule index, action, status}).

const http = require('http');
const fs = require('fs');
const crypto = require('crypto');

const LOG = process.env.MOCK_LOG;
// Re-issue a failed SendMessage up to this many times per turn (0 disables).
const RETRY = Number(process.env.MOCK_SEND_RETRIES === undefined ? 3 : process.env.MOCK_SEND_RETRIES);
const TOKEN_RE = /Token: ([A-Za-z0-9_-]+)/g;
// $MOCK_LOG_GREP: a regex; each request's log line gets `grep`, its first 5 matches in the raw body.
const GREP = process.env.MOCK_LOG_GREP ? new RegExp(process.env.MOCK_LOG_GREP, 'g') : null;
const BLOCK_RE = /<teammate-message\s+teammate_id="([^"]*)"[^>]*>([\s\S]*?)<\/teammate-message>/g;
const started = Date.now();
let seq = 0;

// The fault rules (see the header) and the connections held open by hang/stall.
let faults = [];
const held = new Set();
function loadFaults(v) {
  const list = Array.isArray(v) ? v : [v];
  return list.map((r, i) => {
    if (!r || typeof r !== 'object') throw new Error(`rule ${i} is not an object`);
    const rule = { ...r, used: 0, seen: 0 };
    for (const k of ['match', 'raw', 'ua']) if (r[k] !== undefined) rule[`${k}Re`] = new RegExp(r[k]);
    return rule;
  });
}
if (process.env.MOCK_FAULTS) faults = loadFaults(JSON.parse(process.env.MOCK_FAULTS));
const publicRule = (r, i) => {
  const o = { index: i };
  for (const [k, v] of Object.entries(r)) if (!k.endsWith('Re')) o[k] = v;
  return o;
};
const ERROR_TYPES = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error', 502: 'api_error', 503: 'api_error',
  504: 'api_error', 529: 'overloaded_error',
};
const ERROR_MESSAGES = {
  429: 'Number of request tokens has exceeded your per-minute rate limit', 529: 'Overloaded',
  500: 'Internal server error', 503: 'Service unavailable', 401: 'invalid x-api-key',
};
// The rule that takes this request (and counts it), or null.
function pickFault(req, raw, lastText) {
  for (let i = 0; i < faults.length; i++) {
    const r = faults[i];
    const times = r.times === undefined ? 1 : Number(r.times);
    if (times > 0 && r.used >= times) continue;
    if (r.matchRe && !r.matchRe.test(lastText)) continue;
    if (r.rawRe && !r.rawRe.test(raw)) continue;
    if (r.uaRe && !r.uaRe.test(req.headers['user-agent'] || '')) continue;
    if (r.session && req.headers['x-claude-code-session-id'] !== r.session) continue;
    r.seen += 1;
    if (r.seen <= Number(r.skip || 0)) continue;
    r.used += 1;
    return { rule: r, index: i };
  }
  return null;
}
const expand = (v) => String(v).replace(/\$now\+(\d+)/g, (_, s) => String(Math.floor(Date.now() / 1000) + Number(s)));
function faultHeaders(r) {
  const h = {};
  for (const [k, v] of Object.entries(r.headers || {})) h[k.toLowerCase()] = expand(v);
  return h;
}
function hold(res) {
  held.add(res);
  res.on('close', () => held.delete(res));
}
// Carries out a fault rule's action; returns false for "ok"/"delay" (answer normally, see `ok`).
function applyFault(f, res, n, payloadFor) {
  const r = f.rule;
  const action = r.action || 'status';
  const later = (fn) => (r.delayMs ? setTimeout(fn, Number(r.delayMs)) : fn());
  const sseHead = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_mock_${n}` };
  switch (action) {
    case 'status': {
      const status = Number(r.status || 429);
      const type = r.type || ERROR_TYPES[status] || 'api_error';
      const body = Buffer.from(r.body !== undefined ? String(r.body) : JSON.stringify({
        type: 'error', error: { type, message: r.message || ERROR_MESSAGES[status] || `mock error ${status}` },
        request_id: `req_mock_${n}`,
      }));
      later(() => {
        res.writeHead(status, {
          'content-type': 'application/json', 'request-id': `req_mock_${n}`, 'content-length': body.length,
          ...faultHeaders(r),
        });
        res.end(body);
      });
      return true;
    }
    case 'hang':
      hold(res);
      return true;
    case 'drop':
      later(() => res.socket && res.socket.destroy());
      return true;
    case 'drop-after-headers':
      res.writeHead(200, { ...sseHead, ...faultHeaders(r) });
      res.flushHeaders();
      setTimeout(() => res.socket && res.socket.destroy(), Number(r.delayMs || 50));
      return true;
    case 'cut':
    case 'stall': {
      res.writeHead(200, { ...sseHead, ...faultHeaders(r) });
      const all = payloadFor().toString('utf8').split('\n\n');
      // message_start, content_block_start, one delta (cut) / message_start only (stall)
      const part = all.slice(0, action === 'cut' ? 3 : 1).join('\n\n') + '\n\n';
      res.write(part);
      if (action === 'cut') setTimeout(() => res.socket && res.socket.destroy(), Number(r.delayMs || 50));
      else hold(res);
      return true;
    }
    case 'ok':
    case 'delay':
      return false;
    default:
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`mock: unknown fault action ${action}`);
      return true;
  }
}

// The mock's own control endpoints (/_mock/...). Returns true when it answered.
function control(req, res, url, raw) {
  if (!url.pathname.startsWith('/_mock/')) return false;
  const json = (code, v) => {
    const b = Buffer.from(JSON.stringify(v));
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': b.length });
    res.end(b);
  };
  try {
    if (url.pathname === '/_mock/faults' && req.method === 'POST') {
      const list = loadFaults(JSON.parse(raw || '[]'));
      faults = url.searchParams.get('append') ? faults.concat(list) : list;
      log({ ms: Date.now() - started, control: 'faults', faults: faults.map(publicRule) });
      json(200, faults.map(publicRule));
    } else if (url.pathname === '/_mock/faults') {
      json(200, faults.map(publicRule));
    } else if (url.pathname === '/_mock/state') {
      json(200, { requests: seq, hung: held.size });
    } else if (url.pathname === '/_mock/release' && req.method === 'POST') {
      const k = held.size;
      for (const r of [...held]) if (r.socket) r.socket.destroy();
      json(200, { released: k });
    } else {
      json(404, { error: `unknown control ${url.pathname}` });
    }
  } catch (e) {
    json(400, { error: e.message });
  }
  return true;
}

function log(obj) {
  const line = JSON.stringify({ t: new Date().toISOString(), ...obj }) + '\n';
  if (LOG) fs.appendFileSync(LOG, line);
  else process.stderr.write(line);
}

// Text of the top-level text blocks of a message (tool_result contents excluded).
function messageTexts(msg) {
  if (typeof msg.content === 'string') return [msg.content];
  if (!Array.isArray(msg.content)) return [];
  return msg.content.filter((b) => b && b.type === 'text' && typeof b.text === 'string').map((b) => b.text);
}

function toolResults(msg) {
  return Array.isArray(msg.content) ? msg.content.filter((b) => b && b.type === 'tool_result') : [];
}

function toolResultText(b) {
  if (typeof b.content === 'string') return b.content;
  if (Array.isArray(b.content)) return b.content.map((c) => (c && typeof c.text === 'string' ? c.text : '')).join('');
  return '';
}

// A tool_result that says the tool did not do its job: is_error, or SendMessage's
// {"success":false,...} (e.g. "Couldn't read the roster of team ..." when the client
// hits its own torn in-place write of config.json).
function failedResult(b) {
  if (b.is_error === true) return true;
  try { return JSON.parse(toolResultText(b)).success === false; } catch (_) { return false; }
}

// [{teammate: "ops", tokens: ["A-1"]}, ...] in order of appearance.
function teammateBlocks(texts) {
  const out = [];
  for (const text of texts) {
    for (const m of text.matchAll(BLOCK_RE)) {
      const tokens = [...m[2].matchAll(TOKEN_RE)].map((t) => t[1]);
      out.push({ teammate: m[1], tokens });
    }
  }
  return out;
}

// The bodies of every <teammate-message> block.
function teammateBlocksRaw(texts) {
  const out = [];
  for (const text of texts) for (const m of text.matchAll(BLOCK_RE)) out.push(m[2]);
  return out;
}

// How many failed SendMessage results end the conversation up to index `i` (inclusive).
function countFailedAttempts(convo) {
  let n = 0;
  for (let j = convo.length - 1; j >= 1; j -= 2) {
    const res = convo[j];
    const use = convo[j - 1];
    if (res.role !== 'user' || use.role !== 'assistant') break;
    if (!toolResults(res).some(failedResult)) break;
    n++;
  }
  return n;
}

function decide(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  // `messages` may hold role:"system" entries (date, environment) after the user turn.
  const convo = messages.filter((m) => m && m.role !== 'system');
  const last = convo.length ? convo[convo.length - 1] : null;
  if (!last) return { kind: 'text', text: 'ok', why: 'no non-system message' };

  // Did our previous SendMessage fail without sending anything?
  const results = last.role === 'user' ? toolResults(last) : [];
  const prev = convo[convo.length - 2];
  const prevUse = prev && prev.role === 'assistant' && Array.isArray(prev.content)
    ? prev.content.find((b) => b && b.type === 'tool_use' && b.name === 'SendMessage') : null;
  const failed = prevUse ? results.find((b) => b.tool_use_id === prevUse.id && failedResult(b)) : null;
  const attempts = failed ? countFailedAttempts(convo) : 0;
  const retry = Boolean(RETRY && failed && prevUse.input && attempts <= RETRY);
  const failedWhy = failed ? `failed SendMessage: ${toolResultText(failed).slice(0, 300)}` : '';

  // A lead's shutdown_request (teamctl delete): approve it, as the client's own
  // instructions to the model say (shared/spec/real-claude-offline.md §3.7).
  const shutdown = last.role === 'user'
    ? messageTexts(last).join('\n').match(/\\?"type\\?":\\?"shutdown_request\\?"[\s\S]*?\\?"requestId\\?":\\?"(shutdown-[^"\\]+)/)
    : null;
  if (shutdown) {
    return {
      kind: 'tool_use',
      name: 'SendMessage',
      input: { to: 'team-lead', message: { type: 'shutdown_response', request_id: shutdown[1], approve: true } },
      why: `shutdown_request ${shutdown[1]}`,
    };
  }

  // A real lead (lead-e2e.js) is asked to form a team and spawn one teammate.
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const tool = (n) => tools.find((t) => t && t.name === n);
  const prevAny = prev && prev.role === 'assistant' && Array.isArray(prev.content)
    ? prev.content.find((b) => b && b.type === 'tool_use') : null;
  const spawn = (teamName) => {
    const t = tool('Agent') || tool('Task');
    const props = (t && t.input_schema && t.input_schema.properties) || {};
    const input = { description: 'spawn worker', prompt: 'You are worker. Wait for messages.' };
    if (props.name) input.name = 'worker';
    if (props.team_name && teamName) input.team_name = teamName;
    if (props.subagent_type) input.subagent_type = 'general-purpose';
    return { kind: 'tool_use', name: t ? t.name : 'Agent', input, why: `spawn a teammate (${t ? t.name : 'no Agent tool!'})` };
  };
  if (last.role === 'user' && messageTexts(last).join('\n').includes('SPAWN-TEAMMATE')) {
    const tc = tool('TeamCreate');
    if (tc) {
      const props = (tc.input_schema && tc.input_schema.properties) || {};
      const input = { team_name: 'lead-team' };
      if (props.description) input.description = 'compatibility run';
      return { kind: 'tool_use', name: 'TeamCreate', input, why: 'form a team (TeamCreate)' };
    }
    return spawn(null);
  }
  if (prevAny && prevAny.name === 'TeamCreate' && results.length > 0) {
    let teamName = 'lead-team';
    try { teamName = JSON.parse(toolResultText(results[0])).team_name || teamName; } catch (_) { /* keep */ }
    return spawn(teamName);
  }

  // A teammate with --plan-mode-required needs its plan in a file first: when ExitPlanMode
  // says "No plan file found at <path>", write it there (Write), then call ExitPlanMode again.
  const planMissing = results.map(toolResultText).join('\n').match(/No plan file found at (\S+?\.md)/);
  if (planMissing) {
    return {
      kind: 'tool_use',
      name: 'Write',
      input: { file_path: planMissing[1], content: '# Plan\n\n1. echo the token\n' },
      why: `write plan file ${planMissing[1]}`,
    };
  }
  const prevWrite = prev && prev.role === 'assistant' && Array.isArray(prev.content)
    ? prev.content.find((b) => b && b.type === 'tool_use' && b.name === 'Write'
      && String((b.input || {}).file_path).includes('/plans/')) : null;
  if (prevWrite && results.length > 0 && !results.some(failedResult)) {
    return {
      kind: 'tool_use',
      name: 'ExitPlanMode',
      input: { plan: prevWrite.input.content },
      why: 'plan file written: ExitPlanMode',
    };
  }

  // `Plan: <tok>`: ONE ExitPlanMode tool_use (a teammate in plan mode asks its lead to approve).
  const plan = last.role === 'user' ? messageTexts(last).join('\n').match(/Plan: ([A-Za-z0-9_-]+)/) : null;
  if (plan) {
    return {
      kind: 'tool_use',
      name: 'ExitPlanMode',
      input: { plan: `# Plan ${plan[1]}\n\n1. echo ${plan[1]}` },
      why: `plan ${plan[1]}`,
    };
  }

  // `Exec: <command>` (to the end of its line): ONE Bash tool_use running exactly that command.
  const exec = last.role === 'user' ? messageTexts(last).join('\n').match(/Exec: ([^\n<"]+)/) : null;
  if (exec) {
    return {
      kind: 'tool_use',
      name: 'Bash',
      input: { command: exec[1].trim(), description: 'Run a command' },
      why: `exec ${exec[1].trim()}`,
    };
  }
  const assigned = last.role === 'user'
    ? messageTexts(last).join('\n').match(/\\?"type\\?":\\?"task_assignment\\?"[\s\S]*?\\?"taskId\\?":\\?"([0-9]+)/)
    : null;
  if (assigned && process.env.MOCK_TEAMCTL) {
    return {
      kind: 'tool_use',
      name: 'Bash',
      input: { command: `'${process.env.MOCK_TEAMCTL}' tasks done ${assigned[1]}`, description: `Complete task ${assigned[1]}` },
      why: `task_assignment ${assigned[1]} (Bash)`,
    };
  }
  if (assigned) {
    return {
      kind: 'tool_use',
      name: 'TaskUpdate',
      input: { taskId: assigned[1], status: 'completed' },
      why: `task_assignment ${assigned[1]}`,
    };
  }
  // `Subagent: <tok>`: a plain subagent (an Agent call without a teammate name).
  const subm = last.role === 'user' ? messageTexts(last).join('\n').match(/<teammate-message[^>]*>\s*Subagent: ([A-Za-z0-9_-]+)/) : null;
  if (subm) {
    const t = tool('Agent') || tool('Task');
    const props = (t && t.input_schema && t.input_schema.properties) || {};
    const input = { description: `sub ${subm[1]}`, prompt: `plain subagent ${subm[1]}` };
    if (props.subagent_type) input.subagent_type = 'general-purpose';
    return { kind: 'tool_use', name: t ? t.name : 'Agent', input, why: `plain subagent ${subm[1]}` };
  }
  // Lead mode (teamctl run).
  const lastText = last.role === 'user' ? messageTexts(last).join('\n') : '';
  // `Spawn2: <a> <tokA> <b> <tokB>` in the lead's prompt: spawns a, then (on the Agent call's
  // result) b: a lead that starts two teammates, one after the other.
  const firstUser = convo.find((m) => m.role === 'user');
  const two = firstUser ? messageTexts(firstUser).join('\n').match(/Spawn2: ([A-Za-z0-9_-]+) ([A-Za-z0-9_-]+) ([A-Za-z0-9_-]+) ([A-Za-z0-9_-]+)/) : null;
  if (two && !lastText.includes('<teammate-message')) {
    const spawned = convo.filter((m) => m.role === 'assistant' && Array.isArray(m.content))
      .flatMap((m) => m.content).filter((b) => b.type === 'tool_use' && b.name === 'Agent').length;
    if (spawned < 2) {
      const [name, tok] = spawned === 0 ? [two[1], two[2]] : [two[3], two[4]];
      return { kind: 'tool_use', name: 'Agent', input: { description: `spawn ${name}`, name, prompt: `Report: ${tok}` }, why: `spawn ${name}` };
    }
  }
  // `SpawnWT: <a> <fileA> [<b> <fileB> …]` in the lead's prompt: spawns each in turn (one Agent
  // call a turn, on the previous call's result) with `isolation: "worktree"` and the prompt
  // `Exec: echo <name> > <file> && git add <file> && git commit -qm <name>` (a teammate that
  // commits a file of its own in its worktree; probe-worktree.js, run-merge-e2e.js).
  const wt = firstUser ? messageTexts(firstUser).join('\n').match(/SpawnWT:((?: [A-Za-z0-9_-]+ [A-Za-z0-9_.-]+)+)/) : null;
  if (wt && !lastText.includes('<teammate-message')) {
    const words = wt[1].trim().split(' ');
    const spawned = convo.filter((m) => m.role === 'assistant' && Array.isArray(m.content))
      .flatMap((m) => m.content).filter((b) => b.type === 'tool_use' && b.name === 'Agent').length;
    if (spawned * 2 < words.length) {
      const [name, f] = [words[spawned * 2], words[spawned * 2 + 1]];
      // $MOCK_SPAWNWT_WAIT seconds: each helper's command first waits that long (a helper still
      // working after the lead's turn has ended).
      const wait = Number(process.env.MOCK_SPAWNWT_WAIT || 0);
      const first = wait > 0 ? `timeout ${wait} tail -f /dev/null; ` : '';
      const prompt = `Exec: ${first}echo ${name} > ${f} && git add ${f} && git -c user.name=${name} -c user.email=${name}@example.com commit -qm ${name}`;
      return { kind: 'tool_use', name: 'Agent', input: { description: `spawn ${name}`, name, prompt, isolation: 'worktree' }, why: `spawn ${name} (worktree)` };
    }
  }
  // A lead resumed by `teamctl run --resume`: a report it carries in its prompt ends the work;
  // else it spawns again the teammate of its first prompt (`Spawn: <name> <tok>`).
  if (lastText.includes('this session was interrupted')) {
    const carried = lastText.match(/REPORT ([A-Za-z0-9_-]+)/);
    if (carried) return { kind: 'text', text: `FINAL ANSWER: the team reported ${carried[1]}`, why: 'resumed: report carried' };
    for (const m of convo) {
      const first = m.role === 'user' ? messageTexts(m).join('\n').match(/Spawn: ([A-Za-z0-9_-]+) ([A-Za-z0-9_-]+)/) : null;
      if (first) {
        return {
          kind: 'tool_use', name: 'Agent',
          input: { description: `spawn ${first[1]} again`, name: first[1], prompt: `Report: ${first[2]}` },
          why: `resumed: spawn ${first[1]} again`,
        };
      }
    }
    return { kind: 'text', text: 'ok', why: 'resumed: nothing to do' };
  }
  // A message from teamctl keeping a team going (a nudge, `teamctl restarted you …`, `resume`):
  // the task it names is completed (Bash `teamctl tasks done <id>`), else the teammate answers
  // its sender.
  const keepMsg = last.role === 'user'
    ? teammateBlocksRaw(messageTexts(last)).map((b) => b.trim()).find((b) => b.startsWith('teamctl'))
    : null;
  if (keepMsg) {
    const task = keepMsg.match(/task #([0-9]+)/);
    if (task && process.env.MOCK_TEAMCTL) {
      return {
        kind: 'tool_use', name: 'Bash',
        input: { command: `'${process.env.MOCK_TEAMCTL}' tasks done ${task[1]}`, description: `Carry on with task ${task[1]}` },
        why: `teamctl message: complete task ${task[1]}`,
      };
    }
    const from = (messageTexts(last).join('\n').match(/<teammate-message\s+teammate_id="([^"]*)"[^>]*>\s*teamctl/) || [])[1] || 'team-lead';
    return {
      kind: 'tool_use', name: 'SendMessage',
      input: { to: from, summary: 'carried on', message: `CARRIED ON after: ${keepMsg.slice(0, 60)}` },
      why: 'teamctl message: answer it',
    };
  }
  // `Tell: <name> <tok>` in a lead's own prompt (not a teammate's message): the lead writes to
  // its teammate <name> with `Token: <tok>`, which that teammate echoes back (probe-inherit.js).
  const tell = lastText.includes('<teammate-message') ? null : lastText.match(/Tell: ([A-Za-z0-9_-]+) ([A-Za-z0-9_-]+)/);
  if (tell) {
    return {
      kind: 'tool_use', name: 'SendMessage',
      input: { to: tell[1], summary: 'tell', message: `Token: ${tell[2]}` },
      why: `tell ${tell[1]} ${tell[2]}`,
    };
  }
  const spawnM = lastText.match(/Spawn: ([A-Za-z0-9_-]+) ([A-Za-z0-9_-]+)(?: type=([A-Za-z0-9_-]+))?(?: model=([A-Za-z0-9_.-]+))?/);
  if (spawnM && !lastText.includes('<teammate-message')) {
    const input = { description: `spawn ${spawnM[1]}`, name: spawnM[1], prompt: `Report: ${spawnM[2]}` };
    if (spawnM[3]) input.subagent_type = spawnM[3];
    if (spawnM[4]) input.model = spawnM[4];
    return {
      kind: 'tool_use',
      name: 'Agent',
      input,
      why: `spawn ${spawnM[1]}`,
    };
  }
  const reportM = lastText.match(/Report: ([A-Za-z0-9_-]+)/);
  if (reportM && !lastText.includes('REPORT ')) {
    return {
      kind: 'tool_use',
      name: 'SendMessage',
      input: { to: 'team-lead', summary: 'report', message: `REPORT ${reportM[1]}` },
      why: `report ${reportM[1]}`,
    };
  }
  for (const m of convo) {
    if (m.role !== 'user') continue;
    for (const b of teammateBlocksRaw(messageTexts(m))) {
      const r = b.match(/REPORT ([A-Za-z0-9_-]+)/);
      if (r) return { kind: 'text', text: `FINAL ANSWER: the team reported ${r[1]}`, why: 'report received' };
    }
  }
  // Probe rules (probe-errors.js, probe-resume.js): a send to any name, a plain-text end, a
  // long-running turn.
  const lastBlocks = last.role === 'user' ? teammateBlocksRaw(messageTexts(last)).join('\n') : '';
  const sendTo = lastBlocks.match(/SendTo: ([^\s<"]+) ([A-Za-z0-9_-]+)/);
  if (sendTo) {
    return {
      kind: 'tool_use',
      name: 'SendMessage',
      input: { to: sendTo[1], summary: 'sendto', message: `SENDTO ${sendTo[2]}` },
      why: `sendto ${sendTo[1]}`,
    };
  }
  // A misspelt send that reached its member after all (`teamctl redeliver`): echoed back to
  // its sender.
  if (last.role === 'user') {
    for (const text of messageTexts(last)) {
      for (const m of text.matchAll(BLOCK_RE)) {
        const r = m[2].match(/SENDTO ([A-Za-z0-9_-]+)/);
        if (r) {
          return {
            kind: 'tool_use', name: 'SendMessage', input: { to: m[1], summary: 'echo', message: `ECHO ${r[1]}` },
            why: `sendto echo ${r[1]}`,
          };
        }
      }
    }
  }
  const say = lastBlocks.match(/Say: ([^\n<]+)/);
  if (say) return { kind: 'text', text: say[1].trim(), why: 'say' };
  const work = lastBlocks.match(/Work: ([A-Za-z0-9_-]+)/);
  if (work) {
    return {
      kind: 'tool_use',
      name: 'Bash',
      input: { command: `timeout 30 tail -f /dev/null; echo work-${work[1]}-done`, description: `Work on ${work[1]}` },
      why: `work ${work[1]}`,
    };
  }
  const hang = lastText.match(/Hang: ([0-9]+)/);
  if (hang) return { kind: 'text', text: 'ok', delayMs: Number(hang[1]), why: `hang ${hang[1]} ms` };

  const run = last.role === 'user' ? messageTexts(last).join('\n').match(/Run: ([A-Za-z0-9_-]+)/) : null;
  if (run) {
    return {
      kind: 'tool_use',
      name: 'Bash',
      input: { command: `echo ${run[1]} > ran-${run[1]}.txt`, description: `Write ${run[1]} to a file` },
      why: `run ${run[1]}`,
    };
  }

  const blocks = last.role === 'user' ? teammateBlocks(messageTexts(last)) : [];
  const tokens = blocks.flatMap((b) => b.tokens);
  if (tokens.length > 0) {
    // New messages (possibly next to a failed send's result: then resend those tokens too).
    let to = blocks.find((b) => b.tokens.length > 0).teammate;
    let all = tokens;
    if (retry && typeof prevUse.input.message === 'string' && prevUse.input.message.startsWith('ECHO ')) {
      all = [...prevUse.input.message.slice(5).split(' '), ...tokens];
      to = prevUse.input.to;
    }
    return {
      kind: 'tool_use',
      name: 'SendMessage',
      input: { to, summary: 'echo', message: `ECHO ${all.join(' ')}` },
      why: `teammate-message x${blocks.length}${retry ? ` + retry ${attempts}/${RETRY} after ${failedWhy}` : ''}`,
      ...(retry ? { retry: attempts } : {}),
    };
  }
  if (retry) {
    return {
      kind: 'tool_use', name: 'SendMessage', input: prevUse.input,
      why: `retry ${attempts}/${RETRY} after ${failedWhy}`, retry: attempts,
    };
  }
  if (results.length > 0) {
    return { kind: 'text', text: 'done', why: failed ? `tool_result (not retried: ${failedWhy})` : 'tool_result' };
  }
  return { kind: 'text', text: 'ok', why: 'default' };
}

function sse(events) {
  return events.map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`).join('');
}

// A usage knob's JSON with "$n+K" strings replaced by K + n.
function knob(name, n) {
  if (!process.env[name]) return null;
  return JSON.parse(process.env[name].replace(/"\$n\+(\d+)"/g, (_, b) => String(Number(b) + n)));
}

// `n`: the request number; `side`: a request without tools (title generation).
function reply(model, d, n = 0, side = false) {
  const id = `msg_mock_${crypto.randomBytes(12).toString('hex')}`;
  const zero = side && process.env.MOCK_SIDE_ZERO;
  const usage = zero
    ? { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
    : { input_tokens: 10, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...(knob('MOCK_USAGE_START', n) || {}) };
  const events = [['message_start', {
    message: {
      id, type: 'message', role: 'assistant', model: process.env.MOCK_MODEL || model || 'claude-opus-5-5', content: [],
      stop_reason: null, stop_sequence: null, usage,
    },
  }]];
  let index = 0;
  for (const b of (process.env.MOCK_BLOCKS || '').split(',').filter(Boolean)) {
    if (b === 'thinking') {
      events.push(['content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }]);
      events.push(['content_block_delta', { index, delta: { type: 'thinking_delta', thinking: `Thinking about request ${n}.` } }]);
      events.push(['content_block_delta', { index, delta: { type: 'signature_delta', signature: 'c2lnbmF0dXJl' } }]);
    } else {
      events.push(['content_block_start', { index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { index, delta: { type: 'text_delta', text: `Preamble text of request ${n}.` } }]);
    }
    events.push(['content_block_stop', { index }]);
    index += 1;
  }
  let stop;
  if (d.kind === 'tool_use') {
    events.push(['content_block_start', {
      index,
      content_block: { type: 'tool_use', id: `toolu_mock_${crypto.randomBytes(12).toString('hex')}`, name: d.name, input: {} },
    }]);
    events.push(['content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(d.input) } }]);
    stop = 'tool_use';
  } else {
    events.push(['content_block_start', { index, content_block: { type: 'text', text: '' } }]);
    events.push(['content_block_delta', { index, delta: { type: 'text_delta', text: d.text } }]);
    stop = 'end_turn';
  }
  events.push(['content_block_stop', { index }]);
  const delta = zero ? { output_tokens: 0 } : (knob('MOCK_USAGE_DELTA', n) || { output_tokens: 5 });
  events.push(['message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: delta }]);
  events.push(['message_stop', {}]);
  return sse(events);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const raw = Buffer.concat(chunks).toString('utf8');
    if (control(req, res, url, raw)) return;
    const n = ++seq;
    if (req.method === 'POST' && url.pathname === '/v1/messages') {
      let body;
      try {
        body = JSON.parse(raw);
      } catch (e) {
        log({ n, method: req.method, url: req.url, error: `bad json: ${e.message}` });
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'bad json' } }));
        return;
      }
      const d = decide(body);
      const msgs = Array.isArray(body.messages) ? body.messages : [];
      const toolNames = Array.isArray(body.tools) ? body.tools.map((t) => t.name) : [];
      const lastFull = (() => {
        for (let i = msgs.length - 1; i >= 0; i--) {
          if (msgs[i].role !== 'system') return [...messageTexts(msgs[i]), ...toolResults(msgs[i]).map(toolResultText)].join('\n');
        }
        return '';
      })();
      const fault = faults.length ? pickFault(req, raw, lastFull) : null;
      const faultAction = fault ? (fault.rule.action || 'status') : null;
      log({
        n, ms: Date.now() - started, method: req.method, url: req.url,
        session: req.headers['x-claude-code-session-id'],
        ...(fault ? { fault: { rule: fault.index, action: faultAction, ...(faultAction === 'status' ? { status: Number(fault.rule.status || 429) } : {}) } } : {}),
        ua: req.headers['user-agent'], model: body.model, stream: body.stream,
        messages: msgs.length, roles: msgs.map((m) => m.role).join(','),
        hasSendMessage: toolNames.includes('SendMessage'),
        ...(d.name === 'TeamCreate' || d.name === 'Agent' || d.name === 'Task'
          ? { schema: ((Array.isArray(body.tools) ? body.tools : []).find((t) => t.name === d.name) || {}).input_schema } : {}),
        tools: toolNames,
        ...(GREP ? { grep: [...raw.matchAll(GREP)].slice(0, 5).map((m) => m[0]) } : {}),
        lastText: (() => {
          for (let i = msgs.length - 1; i >= 0; i--) {
            if (msgs[i].role !== 'system') return messageTexts(msgs[i]).join('\n---\n').slice(-600);
          }
          return '';
        })(),
        toolResults: (() => {
          for (let i = msgs.length - 1; i >= 0; i--) {
            if (msgs[i].role !== 'system') return toolResults(msgs[i]).map((b) => ({ is_error: b.is_error, text: toolResultText(b).slice(0, 400) }));
          }
          return [];
        })(),
        reply: d.kind === 'tool_use' ? { tool: d.name, input: d.input } : { text: d.text }, why: d.why,
        ...(d.retry ? { retry: d.retry } : {}),
      });
      const side = !(Array.isArray(body.tools) && body.tools.length > 0);
      const payload = Buffer.from(reply(body.model, d, n, side), 'utf8');
      if (fault && applyFault(fault, res, n, () => payload)) return;
      const extra = fault ? faultHeaders(fault.rule) : {};
      if (fault && fault.rule.delayMs && !d.delayMs) d.delayMs = Number(fault.rule.delayMs);
      if (body.stream === false) {
        // Not used by Claude Code, but answer sensibly.
        const content = d.kind === 'tool_use'
          ? [{ type: 'tool_use', id: `toolu_mock_${n}`, name: d.name, input: d.input }]
          : [{ type: 'text', text: d.text }];
        const json = Buffer.from(JSON.stringify({
          id: `msg_mock_${n}`, type: 'message', role: 'assistant', model: body.model, content,
          stop_reason: d.kind === 'tool_use' ? 'tool_use' : 'end_turn', stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        }));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': json.length });
        res.end(json);
        return;
      }
      if (d.delayMs) {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': payload.length, ...extra });
          res.end(payload);
        }, d.delayMs);
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'request-id': `req_mock_${n}`,
        'content-length': payload.length,
        ...extra,
      });
      res.end(payload);
      return;
    }
    log({ n, ms: Date.now() - started, method: req.method, url: req.url, ua: req.headers['user-agent'] });
    const json = Buffer.from('{}');
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': json.length });
    res.end(req.method === 'HEAD' ? undefined : json);
  });
});

server.listen(Number(process.env.MOCK_PORT || 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});

function stop() { server.close(); process.exit(0); }
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
