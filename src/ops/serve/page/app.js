// teamctl serve's page. Everything a teammate wrote is set as text (textContent), never as
// markup; nothing is loaded from another origin. The token comes from the URL's fragment
// (#token=…), is kept in this tab's sessionStorage, and is sent in a header. One browser keeps
// one stream open: the tab holding the lock "teamctl-serve-stream" reads it and hands every
// event to the other tabs (BroadcastChannel), so tabs never use up the browser's six
// connections per host; without those APIs each tab reads its own.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    token: null,
    hello: null,
    teams: new Map(),
    // Server time minus this browser's, per team picture (ages count from the server's clock).
    skew: 0,
    route: null,
    denying: null,
  };

  // ---- the token and the route (both in the fragment) ----
  function readFragment() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ''));
    const token = params.get('token');
    if (token) {
      sessionStorage.setItem('teamctl-token', token);
      params.delete('token');
      const rest = params.toString();
      history.replaceState(null, '', location.pathname + (rest ? '#' + rest : ''));
    }
    state.token = sessionStorage.getItem('teamctl-token');
    state.route = params.get('team');
  }

  function notice(text, bad) {
    const n = $('notice');
    n.textContent = text || '';
    n.hidden = !text;
    n.classList.toggle('bad', !!bad);
  }

  // ---- the stream ----
  const channel = ('BroadcastChannel' in window) ? new BroadcastChannel('teamctl-serve') : null;
  let leader = false;

  function handle(name, data, fromLeader) {
    if (name === 'hello') {
      state.hello = data;
    } else if (name === 'team') {
      state.skew = Date.parse(data.at) - Date.now();
      state.teams.set(data.team, data);
    } else if (name === 'gone') {
      state.teams.delete(data.team);
    } else if (name === 'conn') {
      conn(data.text, data.bad);
      return;
    }
    if (leader && !fromLeader && channel) channel.postMessage({ name, data });
    render();
  }

  function conn(text, bad) {
    const c = $('conn');
    c.textContent = text;
    c.classList.toggle('bad', !!bad);
    if (leader && channel) channel.postMessage({ name: 'conn', data: { text, bad } });
  }

  function parseEvents(buffer, each) {
    let at;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) {
        try { each(name, JSON.parse(data.join('\n'))); } catch (e) { /* a torn event: skipped */ }
      }
    }
    return buffer;
  }

  async function stream() {
    let wait = 500;
    for (;;) {
      try {
        const res = await fetch('/api/events', {
          headers: { Authorization: 'Bearer ' + state.token }, cache: 'no-store',
        });
        if (res.status === 401) {
          conn('token refused', true);
          notice('The token was refused: open the URL `teamctl serve` printed.', true);
          return;
        }
        if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
        conn('live');
        wait = 500;
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer = parseEvents(buffer + decoder.decode(value, { stream: true }), (n, d) => handle(n, d, false));
        }
      } catch (e) { /* the server went away: try again */ }
      conn('reconnecting', true);
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 10000);
    }
  }

  function start() {
    if (!state.token) {
      conn('no token', true);
      notice('No token: open the URL `teamctl serve` printed (it ends in #token=…).', true);
      return;
    }
    if (channel && navigator.locks) {
      channel.onmessage = (e) => {
        const m = e.data || {};
        if (m.name === 'sync') {
          if (leader) {
            if (state.hello) channel.postMessage({ name: 'hello', data: state.hello });
            for (const t of state.teams.values()) channel.postMessage({ name: 'team', data: t });
          }
          return;
        }
        if (!leader) handle(m.name, m.data, true);
      };
      conn('waiting for the stream');
      channel.postMessage({ name: 'sync' });
      // Held for the tab's life: when the leading tab closes, the next one takes the stream.
      navigator.locks.request('teamctl-serve-stream', () => {
        leader = true;
        return stream();
      });
    } else {
      leader = true;
      stream();
    }
  }

  // ---- building elements (text only) ----
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function usd(v) {
    return v === null || v === undefined ? '—' : '$' + Number(v).toFixed(2);
  }

  function ageOf(iso) {
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return '';
    const s = Math.max(0, Math.round((Date.now() + state.skew - t) / 1000));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm';
    if (s < 86400) return Math.floor(s / 3600) + 'h' + String(Math.floor((s % 3600) / 60)).padStart(2, '0');
    return Math.floor(s / 86400) + 'd';
  }

  function age(iso) {
    const e = el('span', 'age', ageOf(iso));
    e.dataset.at = iso || '';
    return e;
  }

  function section(title, count) {
    const s = el('section', 'card');
    const h = el('h2', null, title);
    if (count !== undefined) h.append(' ', el('span', 'count', count));
    s.append(h);
    return s;
  }

  // ---- the fleet ----
  function renderFleet(view) {
    $('where').textContent = 'every team';
    const s = section('Teams', state.teams.size);
    if (state.teams.size === 0) s.append(el('p', 'muted', 'No team teamctl leads is here yet.'));
    const list = el('ul', 'fleet');
    for (const t of [...state.teams.values()].sort((a, b) => a.team.localeCompare(b.team))) {
      const li = el('li', 'fleet-team');
      const a = el('a', null, t.team);
      a.setAttribute('href', '#team=' + encodeURIComponent(t.team));
      li.append(a);
      if (t.trouble) {
        li.append(el('span', 'bad', ' cannot be read'));
      } else if (t.view) {
        const v = t.view;
        const active = v.members.filter((m) => m.state === 'active').length;
        li.append(el('span', 'muted', ` ${v.members.length} members, ${active} active, `
          + `${v.requests.length} waiting, ${usd(v.team.cost_usd)}`));
        if (t.needs.length) li.append(el('span', 'need-pill', `needs you (${t.needs.length})`));
      }
      list.append(li);
    }
    s.append(list);
    view.append(s);
  }

  // ---- one team ----
  function renderTeam(view, t) {
    $('where').textContent = t.team;
    if (t.trouble) {
      const s = section('Cannot be read');
      s.classList.add('trouble');
      s.append(el('p', null, t.trouble));
      s.append(el('p', 'muted', 'The file is left as it is; this page shows it again once it reads.'));
      view.append(s);
      return;
    }
    const v = t.view;
    view.append(header(t, v));
    if (t.needs.length) view.append(needs(t.needs));
    view.append(requests(t, v));
    view.append(members(v));
    view.append(tasks(v));
    view.append(messages(v));
    view.append(costChart(t));
    if (v.warnings.length) {
      const s = section('Files that could not be read', v.warnings.length);
      const ul = el('ul', 'warnings');
      for (const w of v.warnings) ul.append(el('li', null, w));
      s.append(ul);
      view.append(s);
    }
  }

  function header(t, v) {
    const s = el('section', 'card head');
    s.append(el('h1', null, v.team.name));
    if (v.team.description) s.append(el('p', 'desc', v.team.description));
    const facts = el('p', 'facts');
    const active = v.members.filter((m) => m.state === 'active').length;
    facts.append(
      el('span', null, `lead ${v.team.lead || '—'}`
        + (v.team.lead_alive === false ? ' (not running)' : '')),
      el('span', null, `${active} of ${v.members.length} active`),
      el('span', null, `cost ${usd(v.team.cost_usd)}`),
    );
    if (v.team.last_change_at) {
      const c = el('span', null, 'last change ');
      c.append(age(v.team.last_change_at), ' ago');
      facts.append(c);
    }
    s.append(facts);
    if (!t.writable && t.read_only_why) s.append(el('p', 'muted', 'Read-only: ' + t.read_only_why));
    return s;
  }

  function needs(list) {
    const s = el('section', 'card banner');
    s.append(el('h2', null, 'A person is needed'));
    const ul = el('ul');
    for (const n of list) ul.append(el('li', null, n.todo));
    s.append(ul);
    return s;
  }

  function requestWhat(r) {
    const q = r.request;
    if (r.kind === 'permission') {
      const input = q.input || {};
      if (typeof input.command === 'string') return { label: q.tool_name || 'tool', body: input.command };
      return { label: q.tool_name || 'tool', body: r.summary };
    }
    if (r.kind === 'plan_approval') {
      const plan = (q.plan_content || '').split('\n').slice(0, 12).join('\n');
      return { label: 'plan ' + (q.plan_file_path || ''), body: plan || r.summary };
    }
    return { label: 'sandbox host', body: q.host || r.summary };
  }

  function requests(t, v) {
    const s = section('Waiting for the lead', v.requests.length);
    if (!v.requests.length) s.append(el('p', 'muted', 'Nothing is waiting.'));
    const held = new Map(t.held.map((h) => [h.request_id, h]));
    for (const r of v.requests) {
      const box = el('article', 'request');
      const line = el('p', 'req-head');
      const what = requestWhat(r);
      line.append(el('strong', null, r.from), ' asks: ', el('span', 'kind', what.label), ' · ', age(r.at), ' ago');
      box.append(line, el('pre', 'cmd', what.body));
      box.append(el('p', 'muted id', r.request_id));
      const h = held.get(r.request_id);
      if (h) box.append(el('p', 'held', 'Approved: ' + h.detail + '. Stopping the server ends the hold.'));
      const e = (t.earlier_holds || []).find((x) => x.request_id === r.request_id);
      if (e && !h) box.append(el('p', 'held', e.detail));
      if (t.writable && !h) {
        const row = el('div', 'row');
        const yes = el('button', 'approve', 'Approve');
        yes.type = 'button';
        yes.addEventListener('click', () => answer(t.team, r, 'approve', yes));
        const no = el('button', 'danger', 'Deny…');
        no.type = 'button';
        no.addEventListener('click', () => askReason(t.team, r));
        row.append(yes, no);
        box.append(row);
      }
      s.append(box);
    }
    return s;
  }

  function members(v) {
    const s = section('Members', v.members.length);
    const list = el('div', 'members');
    for (const m of v.members) {
      const c = el('article', 'member state-' + m.state);
      const top = el('p', 'm-head');
      top.append(el('strong', null, m.name), el('span', 'pill', m.state));
      if (m.lead) top.append(el('span', 'pill', 'lead'));
      if (m.waiting) top.append(el('span', 'pill warn', 'waits: ' + m.waiting));
      if (m.process_alive === false) top.append(el('span', 'pill bad', 'not running'));
      c.append(top);
      if (m.waiting_detail && m.waiting_detail.message) c.append(el('p', 'muted', m.waiting_detail.message));
      c.append(el('p', 'doing', m.doing || '—'));
      const facts = el('p', 'facts');
      facts.append(el('span', null, 'cost ' + usd(m.cost_usd)));
      if (m.context && m.context.percent !== null && m.context.percent !== undefined) {
        facts.append(el('span', null, `context ${Math.round(m.context.percent)}%`));
      }
      facts.append(el('span', null, `${m.unread} unread`), el('span', null, `${m.tasks_in_progress}/${m.tasks_owned} tasks`));
      if (m.last_event_at) {
        const a = el('span', null, 'seen ');
        a.append(age(m.last_event_at), ' ago');
        facts.append(a);
      }
      c.append(facts);
      list.append(c);
    }
    s.append(list);
    return s;
  }

  function tasks(v) {
    const c = v.tasks.counts || {};
    const s = section('Tasks');
    const cols = el('div', 'columns');
    const col = (title, cards, describe) => {
      const d = el('div', 'column');
      d.append(el('h3', null, `${title} (${cards.length})`));
      const ul = el('ul');
      for (const k of cards.slice(-30)) {
        const li = el('li', null, `#${k.id} ${k.subject}`);
        const more = describe(k);
        if (more) li.append(el('span', 'muted', ' ' + more));
        ul.append(li);
      }
      d.append(ul);
      return d;
    };
    cols.append(
      col('Pending', v.tasks.pending, (k) => (k.blocked_by.length ? 'blocked by ' + k.blocked_by.join(', ') : '')),
      col('In progress', v.tasks.in_progress, (k) => (k.owner ? '— ' + k.owner : '')),
      col('Completed', v.tasks.completed, (k) => (k.owner ? '— ' + k.owner : '')),
    );
    s.append(cols);
    if (c.total === 0) s.append(el('p', 'muted', 'No tasks.'));
    return s;
  }

  function messages(v) {
    const s = section('Newest messages', v.messages.length);
    const ul = el('ul', 'messages');
    for (const m of v.messages.slice(-30)) {
      const li = el('li', 'msg');
      const head = el('p', 'm-head');
      head.append(el('strong', null, m.from), ' → ', el('strong', null, m.to), ' · ', age(m.at), ' ago');
      if (m.delivery === 'unread') head.append(el('span', 'pill', 'unread'));
      li.append(head, el('p', 'text', m.text !== null && m.text !== undefined && !m.frame ? m.text : m.preview));
      ul.append(li);
    }
    if (!v.messages.length) s.append(el('p', 'muted', 'No messages yet.'));
    s.append(ul);
    return s;
  }

  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, val] of Object.entries(attrs || {})) e.setAttribute(k, String(val));
    return e;
  }

  function costChart(t) {
    const s = section('Cost over time');
    const pts = ((t.cost || {}).total || []).map(([at, usdv]) => [Date.parse(at), usdv]).filter(([x]) => !Number.isNaN(x));
    if (pts.length < 2) {
      s.append(el('p', 'muted', pts.length ? `${usd(pts[0][1])} so far; the line starts at the next response.` : 'No cost known yet.'));
      return s;
    }
    const W = 340; const H = 120; const P = 6;
    const x0 = pts[0][0]; const x1 = pts[pts.length - 1][0];
    const ymax = Math.max(...pts.map((p) => p[1])) || 1;
    const X = (x) => P + ((x - x0) / Math.max(1, x1 - x0)) * (W - 2 * P);
    const Y = (y) => H - P - (y / ymax) * (H - 2 * P);
    const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img' });
    chart.append(svg('title'));
    chart.firstChild.textContent = `cost from ${usd(pts[0][1])} to ${usd(pts[pts.length - 1][1])}`;
    chart.append(svg('line', { x1: P, y1: H - P, x2: W - P, y2: H - P, class: 'axis' }));
    chart.append(svg('polyline', { points: pts.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' '), class: 'cost' }));
    s.append(chart, el('p', 'muted', `${usd(pts[pts.length - 1][1])} now, from the transcripts`));
    return s;
  }

  // ---- what the page does ----
  async function post(path, body) {
    const res = await fetch(path, {
      method: 'POST',
      headers: { Authorization: 'Bearer ' + state.token, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      cache: 'no-store',
    });
    let reply = {};
    try { reply = await res.json(); } catch (e) { reply = { ok: false, error: 'HTTP ' + res.status }; }
    return reply;
  }

  async function answer(team, r, verdict, button, reason) {
    if (button) button.disabled = true;
    const reply = await post('/api/answer', { team, request_id: r.request_id, answer: verdict, reason });
    if (reply.ok) {
      const rec = reply.record;
      notice(rec.event === 'held' ? `Approval of ${rec.request_id} held: ${rec.detail}` : `${rec.event} ${rec.request_id}`);
    } else {
      notice(reply.error || 'refused', true);
      if (button) button.disabled = false;
    }
  }

  function askReason(team, r) {
    state.denying = { team, r };
    $('deny-what').textContent = `${r.from}'s ${r.request_id}`;
    $('reason').value = '';
    $('deny').hidden = false;
    $('reason').focus();
  }

  function wire() {
    $('deny-cancel').addEventListener('click', () => { $('deny').hidden = true; state.denying = null; });
    $('deny-go').addEventListener('click', async () => {
      const d = state.denying;
      const reason = $('reason').value.trim();
      if (!d) return;
      if (!reason) { notice('A denial needs a reason.', true); return; }
      $('deny-go').disabled = true;
      await answer(d.team, d.r, 'deny', null, reason);
      $('deny-go').disabled = false;
      $('deny').hidden = true;
      state.denying = null;
    });
    $('send').addEventListener('click', async () => {
      const t = currentTeam();
      const text = $('text').value;
      if (!t || !text.trim()) return;
      $('send').disabled = true;
      const reply = await post('/api/send', { team: t.team, to: $('to').value, text });
      $('send').disabled = false;
      if (reply.ok) { $('text').value = ''; $('sent').textContent = 'sent to ' + reply.record.member; } else { notice(reply.error || 'refused', true); }
    });
    window.addEventListener('hashchange', () => { readFragment(); render(); });
    setInterval(() => {
      for (const a of document.querySelectorAll('[data-at]')) a.textContent = ageOf(a.dataset.at);
    }, 1000);
  }

  function currentTeam() {
    if (state.route) return state.teams.get(state.route) || null;
    if (state.hello && !state.hello.fleet && state.teams.size === 1) return [...state.teams.values()][0];
    return null;
  }

  function composer(t) {
    const box = $('compose');
    const show = !!(t && t.writable && t.view);
    box.hidden = !show;
    if (!show) return;
    const to = $('to');
    const names = t.view.members.filter((m) => !m.lead).map((m) => m.name);
    const now = [...to.options].map((o) => o.value);
    if (now.join('\n') !== names.join('\n')) {
      const keep = to.value;
      to.replaceChildren(...names.map((n) => { const o = el('option', null, n); o.value = n; return o; }));
      if (names.includes(keep)) to.value = keep;
    }
  }

  function render() {
    const view = $('view');
    const t = currentTeam();
    const fresh = document.createDocumentFragment();
    if (t) renderTeam(fresh, t);
    else if (state.route) fresh.append(el('p', 'muted', `No team ${state.route} is served here (yet).`));
    else if (state.hello) renderFleet(fresh);
    view.replaceChildren(fresh);
    composer(t);
    if ($('deny').hidden === false && (!t || !t.writable)) $('deny').hidden = true;
  }

  readFragment();
  wire();
  start();
})();
