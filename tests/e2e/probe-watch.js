'use strict';
// The probes' shared watcher (probe-errors.js, probe-resume.js): each call prints what changed
// since the last one in a Claude Code config dir and the mock's log: the mock's requests (and the
// fault that took each), new transcript lines (bookkeeping lines one word each, every other
// non-user/assistant line in full, synthetic API-error messages in full), config.json's
// leadSessionId and members (backend, pane, isActive, model, agentType), new inbox entries (and
// an inbox emptied) and, with `panes`, each tmux pane whose text changed (digits ignored).
//
//   const watchOnce = require('./probe-watch')({ cfg, mockLog, log, tmux, panes, full });
//   watchOnce();

const fs = require('fs');
const path = require('path');

module.exports = function probeWatch({ cfg, mockLog, log, tmux, panes = false, full = () => false }) {
  const seen = { mock: 0, files: new Map(), members: new Map(), inbox: new Map(), pane: '' };
  const readJson = (f) => { try { return JSON.parse(fs.readFileSync(f, 'utf8')); } catch (_) { return null; } };
  function walk(dir, out = []) {
    let ents = [];
    try { ents = fs.readdirSync(dir, { withFileTypes: true }); } catch (_) { return out; }
    for (const e of ents) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p, out); else out.push(p);
    }
    return out;
  }
  const QUIET = new Set(['api-request-shape', 'api-request-blob', 'queue-operation', 'atis-latch', 'last-prompt']);
  function summarizeLine(e) {
    const m = e.message || {};
    const content = Array.isArray(m.content) ? m.content : [{ type: 'text', text: String(m.content || '') }];
    const parts = content.map((b) => {
      if (b.type === 'text') return `text(${JSON.stringify(b.text.slice(0, 160))})`;
      if (b.type === 'tool_use') return `tool_use(${b.name} ${JSON.stringify(b.input).slice(0, 160)})`;
      if (b.type === 'tool_result') {
        const t = typeof b.content === 'string' ? b.content : (b.content || []).map((c) => c.text || '').join('');
        return `tool_result(${b.is_error ? 'ERR ' : ''}${JSON.stringify(t.slice(0, 160))})`;
      }
      return b.type;
    }).join('+');
    const extra = {};
    for (const k of ['isApiErrorMessage', 'error', 'apiError', 'requestDigest', 'querySource', 'errorDetails', 'isMeta']) if (e[k] !== undefined) extra[k] = e[k];
    if (m.model && e.type === 'assistant') extra.model = m.model;
    if (m.stop_reason) extra.stop = m.stop_reason;
    return `${e.type}${e.subtype ? '/' + e.subtype : ''} ${parts} ${Object.keys(extra).length ? JSON.stringify(extra) : ''}`;
  }
  function watchOnce() {
    // mock log
    let lines = [];
    try { lines = fs.readFileSync(mockLog, 'utf8').split('\n').filter(Boolean); } catch (_) { /* none yet */ }
    for (const l of lines.slice(seen.mock)) {
      const j = JSON.parse(l);
      if (j.control) log(`MOCK control ${j.control}`);
      else log(`MOCK #${j.n} ${j.ua || ''} session=${(j.session || '').slice(0, 8)} model=${j.model || ''} ${j.fault ? 'FAULT ' + JSON.stringify(j.fault) : 'ok'} -> ${JSON.stringify(j.reply || {}).slice(0, 120)} (${j.why || ''})`);
    }
    seen.mock = lines.length;
    // transcripts and other files in the config dir
    for (const f of walk(path.join(cfg, 'projects'))) {
      if (!f.endsWith('.jsonl')) continue;
      let text = '';
      try { text = fs.readFileSync(f, 'utf8'); } catch (_) { continue; }
      const all = text.split('\n');
      const done = all.slice(0, -1); // the last piece may be torn
      const k = seen.files.get(f) || 0;
      for (const l of done.slice(k)) {
        let e;
        try { e = JSON.parse(l); } catch (_) { log(`TRANSCRIPT ${path.basename(f)} unparsable: ${l.slice(0, 200)}`); continue; }
        const short = path.relative(path.join(cfg, 'projects'), f).replace(/^[^/]+\//, '');
        if (e.type === 'assistant' && e.isApiErrorMessage) log(`T ${short}: API ERROR MESSAGE ${JSON.stringify(e, (k2, v2) => (['cwd', 'userType', 'entrypoint', 'gitBranch', 'version', 'uuid', 'parentUuid'].includes(k2) ? undefined : v2))}`);
        else if (e.type === 'user' || e.type === 'assistant') log(`T ${short}: ${summarizeLine(e)}`);
        else if (e.type === 'api-request') log(`T ${short}: api-request querySource=${e.querySource} digest=${String(e.requestDigest).slice(0, 12)}`);
        else if (QUIET.has(e.type)) { if (full()) log(`T ${short}: ${JSON.stringify(e).slice(0, 300)}`); }
        else if (e.type === 'attachment') log(`T ${short}: attachment ${e.attachment && e.attachment.type}`);
        else log(`T ${short}: ${JSON.stringify(e, (k2, v2) => (['cwd', 'userType', 'entrypoint', 'gitBranch', 'version', 'sessionId', 'uuid', 'parentUuid', 'isSidechain'].includes(k2) ? undefined : v2)).slice(0, 1500)}`);
      }
      seen.files.set(f, done.length);
    }
    // teams
    let teams = [];
    try { teams = fs.readdirSync(path.join(cfg, 'teams')); } catch (_) { /* none */ }
    for (const t of seen.teams || []) if (!teams.includes(t)) log(`TEAM FOLDER ${t} REMOVED`);
    seen.teams = teams;
    for (const t of teams) {
      const c = readJson(path.join(cfg, 'teams', t, 'config.json'));
      if (c && Array.isArray(c.members)) {
        const top = `${t}:leadSessionId=${c.leadSessionId || ''}`;
        if (seen.members.get(`${t}/`) !== top) { log(`CONFIG ${top}`); seen.members.set(`${t}/`, top); }
        const names = c.members.map((m) => m.name);
        for (const k of [...seen.members.keys()].filter((x) => x.startsWith(`${t}/`) && x !== `${t}/` && !x.startsWith(`${t}//`))) {
          if (!names.includes(k.slice(t.length + 1))) { log(`CONFIG ${k} REMOVED from members`); seen.members.delete(k); }
        }
        const created = `${t}:createdAt=${c.createdAt} leadProcess=${JSON.stringify(c.leadProcess || null)}`;
        if (seen.members.get(`${t}//created`) !== created) { log(`CONFIG ${created}`); seen.members.set(`${t}//created`, created); }
        for (const m of c.members) {
          const s = `backend=${m.backendType} pane=${m.tmuxPaneId} isActive=${m.isActive} model=${m.model} agentType=${m.agentType}`;
          if (seen.members.get(`${t}/${m.name}`) !== s) { log(`CONFIG ${t}/${m.name}: ${s}`); seen.members.set(`${t}/${m.name}`, s); }
        }
      }
      let boxes = [];
      try { boxes = fs.readdirSync(path.join(cfg, 'teams', t, 'inboxes')).filter((f) => f.endsWith('.json')); } catch (_) { /* none */ }
      for (const b of boxes) {
        const v = readJson(path.join(cfg, 'teams', t, 'inboxes', b));
        if (!Array.isArray(v)) continue;
        const key = `${t}/${b}`;
        const ids = new Set(seen.inbox.get(key) || []);
        for (const e of v) {
          const id = e.msg_id || `${e.from}|${e.timestamp}`;
          if (!ids.has(id)) log(`INBOX ${key} + ${JSON.stringify(e).slice(0, 700)}`);
        }
        const now = v.map((e) => e.msg_id || `${e.from}|${e.timestamp}`);
        if ((seen.inbox.get(key) || []).length && !now.length) log(`INBOX ${key} emptied`);
        seen.inbox.set(key, now);
      }
    }
    // the pane(s)
    if (panes) {
      const r = tmux('list-panes', '-a', '-F', '#{pane_id}');
      const ids = r.status === 0 ? r.stdout.trim().split('\n').filter(Boolean) : [];
      for (const id of ids) {
        const c = tmux('capture-pane', '-p', '-t', id);
        const text = (c.stdout || '').split('\n').map((l) => l.trimEnd()).filter(Boolean).join('\n');
        const norm = text.replace(/[0-9]+/g, '#').replace(/[✢✳✶✻✽·*]/g, '');
        const k = `pane${id}`;
        if (seen.members.get(k) !== norm) {
          seen.members.set(k, norm);
          const tail = text.split('\n').slice(-12).join('\n    ');
          log(`PANE ${id}:\n    ${tail}`);
        }
      }
    }
  }
  return watchOnce;
};
