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

  // Units as teamctl's terminal shows them (crate::units): $0.42, $0.0042, 1.2k, 45s 3m 2h 5d.
  function usd(v) {
    if (v === null || v === undefined) return '—';
    if (v > 0 && v < 0.01) {
      if (v >= 0.0001) return '$' + v.toFixed(4);
      const d = Math.floor(-Math.log10(v)) + 2;
      return ('$' + v.toFixed(d)).replace(/0+$/, '');
    }
    return '$' + Number(v).toFixed(2);
  }

  function count(n) {
    if (n < 1000) return String(n);
    if (n < 1e6) return (n / 1e3).toFixed(1) + 'k';
    return (n / 1e6).toFixed(1) + 'M';
  }

  function tokensOf(t) {
    return t ? t.input + t.output + t.cache_read + t.cache_creation : 0;
  }

  function ageOf(iso) {
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return '';
    const s = Math.max(0, Math.round((Date.now() + state.skew - t) / 1000));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm';
    if (s < 86400) return Math.floor(s / 3600) + 'h';
    return Math.floor(s / 86400) + 'd';
  }

  function age(iso) {
    const e = el('span', 'age', ageOf(iso));
    e.dataset.at = iso || '';
    e.title = iso || '';
    return e;
  }

  function ago(prefix, iso) {
    const s = el('span', 'when', prefix);
    s.append(age(iso), ' ago');
    return s;
  }

  // `14:05`, or `12-03 14:05` on an axis longer than a day.
  function clock(ms, long) {
    const d = new Date(ms);
    const two = (n) => String(n).padStart(2, '0');
    const hm = two(d.getHours()) + ':' + two(d.getMinutes());
    return long ? `${two(d.getMonth() + 1)}-${two(d.getDate())} ${hm}` : hm;
  }

  function section(title, count, cls) {
    const s = el('section', 'card' + (cls ? ' ' + cls : ''));
    const h = el('h2', null, title);
    if (count !== undefined) h.append(el('span', 'count', count));
    s.append(h);
    return s;
  }

  function pill(text, cls) {
    return el('span', 'pill' + (cls ? ' ' + cls : ''), text);
  }

  // Each member's colour (its swatch and its line on the cost chart): its colour in Claude
  // Code's palette when config.json gives one, else the next of the others.
  const PALETTE = ['red', 'blue', 'green', 'yellow', 'purple', 'orange', 'pink', 'cyan'];
  const OTHERS = ['c8', 'c9', 'c5', 'c3', 'c6', 'c4', 'c0', 'c1', 'c2', 'c7'];
  function hues(v) {
    const out = new Map();
    let k = 0;
    for (const m of v.members) {
      out.set(m.name, PALETTE.includes(m.color) ? 'k-' + m.color : OTHERS[k++ % OTHERS.length]);
    }
    return out;
  }

  function swatch(hue) {
    return el('span', 'sw ' + (hue || 'c8'));
  }

  // ---- the fleet ----
  function renderFleet(view) {
    $('where').textContent = 'every team';
    const s = section('Teams', state.teams.size, 'wide');
    if (state.teams.size === 0) s.append(el('p', 'muted', 'No team teamctl leads is here yet.'));
    const list = el('ul', 'fleet');
    for (const t of [...state.teams.values()].sort((a, b) => a.team.localeCompare(b.team))) {
      const li = el('li', 'fleet-team');
      const a = el('a', null, t.team);
      a.setAttribute('href', '#team=' + encodeURIComponent(t.team));
      li.append(a);
      if (t.trouble) {
        li.append(el('span', 'bad', 'cannot be read'));
      } else if (t.view) {
        const v = t.view;
        const active = v.members.filter((m) => m.state === 'active').length;
        li.append(el('span', 'muted', `${v.members.length} members, ${active} active, `
          + `${v.requests.length} waiting, ${usd(v.team.cost_usd)}`));
        if (t.needs.length) li.append(pill(`needs you (${t.needs.length})`, 'warn'));
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
      const s = section('Cannot be read', undefined, 'wide trouble');
      s.append(el('p', null, t.trouble));
      s.append(el('p', 'muted', 'The file is left as it is; this page shows it again once it reads.'));
      view.append(s);
      return;
    }
    const v = t.view;
    view.append(header(t, v));
    if (t.needs.length) view.append(needs(t.needs));
    // Two columns on a wide screen: what to answer and who does what, then how it goes.
    const main = el('div', 'col');
    const side = el('div', 'col');
    main.append(requests(t, v), members(v), tasks(v));
    side.append(costChart(t, v), messages(v));
    if (v.warnings.length) {
      const s = section('Files that could not be read', v.warnings.length);
      const ul = el('ul', 'warnings');
      for (const w of v.warnings) ul.append(el('li', null, w));
      s.append(ul);
      side.append(s);
    }
    view.append(main, side);
  }

  function header(t, v) {
    const s = el('section', 'card head wide');
    const title = el('div', 'title');
    title.append(el('h1', null, v.team.name));
    if (!t.writable) title.append(pill('read-only'));
    s.append(title);
    if (v.team.description) s.append(el('p', 'desc', v.team.description));
    const stats = el('dl', 'stats');
    const stat = (label, value, title) => {
      const d = el('div', 'stat');
      const dd = el('dd');
      dd.append(value);
      if (title) d.title = title;
      d.append(el('dt', null, label), dd);
      stats.append(d);
    };
    const active = v.members.filter((m) => m.state === 'active').length;
    stat('Lead', (v.team.lead || '—') + (v.team.lead_alive === false ? ' (not running)' : ''));
    stat('Active', `${active} of ${v.members.length}`);
    stat('Waiting for you', String(v.requests.length));
    stat('Spent', usd(v.team.cost_usd), v.team.cost_usd === null ? unknownTeamCost(v) : undefined);
    if (v.team.last_change_at) stat('Last change', ago('', v.team.last_change_at));
    s.append(stats);
    if (!t.writable && t.read_only_why) s.append(el('p', 'muted', 'Read-only: ' + t.read_only_why));
    return s;
  }

  function unknownTeamCost(v) {
    if (!v.members.some((m) => m.tokens)) return 'No transcript of any member was found yet.';
    return 'A member\'s cost is unknown (a model teamctl has no price for): the team\'s sum is too.';
  }

  // The requests are answered below: the banner counts them; every other need is said as
  // `teamctl` says it.
  function needs(list) {
    const s = el('section', 'card banner wide');
    s.append(el('h2', null, 'A person is needed'));
    const ul = el('ul');
    const asked = list.filter((n) => n.cause === 'request');
    if (asked.length) {
      ul.append(el('li', null, asked.length === 1
        ? `${asked[0].member || 'A teammate'} has waited over a minute for an answer (below).`
        : `${asked.length} requests have waited over a minute for an answer (below).`));
    }
    for (const n of list.filter((x) => x.cause !== 'request')) ul.append(el('li', null, n.todo));
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
      return { label: 'plan', body: plan || r.summary, file: q.plan_file_path };
    }
    return { label: 'sandbox host', body: q.host || r.summary };
  }

  function requests(t, v) {
    const s = section('Waiting for the lead', v.requests.length, v.requests.length ? 'asks' : '');
    if (!v.requests.length) s.append(el('p', 'muted', 'Nothing is waiting.'));
    const held = new Map(t.held.map((h) => [h.request_id, h]));
    const earlier = new Map((t.earlier_holds || []).map((h) => [h.request_id, h]));
    const list = el('div', 'requests');
    for (const r of v.requests) {
      const box = el('article', 'request');
      const line = el('p', 'req-head');
      const what = requestWhat(r);
      line.append(el('strong', null, r.from), pill(what.label, 'kind'), ago('', r.at));
      box.append(line);
      if (what.file) box.append(el('p', 'muted file', what.file));
      box.append(el('pre', 'cmd', what.body));
      box.append(el('p', 'muted id', r.request_id));
      const h = held.get(r.request_id);
      if (h) box.append(el('p', 'held', `Approved, and held by this server until ${h.from} reports idle `
        + '(Claude Code loses a plan approval that arrives earlier). Stopping the server ends the hold.'));
      const e = earlier.get(r.request_id);
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
      list.append(box);
    }
    s.append(list);
    return s;
  }

  // A member's cost, or why it is not known.
  function memberCost(m) {
    const c = el('span', 'cost', usd(m.cost_usd));
    if (m.cost_usd === null || m.cost_usd === undefined) {
      c.title = m.tokens
        ? `${count(tokensOf(m.tokens))} tokens; the cost is unknown: a model teamctl has no price for`
        : 'No transcript of this member was found yet: nothing to count';
      c.classList.add('unknown');
      if (m.tokens) c.textContent = count(tokensOf(m.tokens)) + ' tokens';
    } else if (m.cost_source === 'claude_code') {
      c.title = 'Claude Code\'s own figure (the session ended)';
    } else {
      c.title = 'Computed from each response\'s usage at Claude Code\'s prices';
    }
    return c;
  }

  function contextBar(m) {
    const x = m.context;
    if (!x) return null;
    const wrap = el('span', 'ctx');
    if (x.percent === null || x.percent === undefined) {
      wrap.append(`context ${count(x.used)}`);
      wrap.title = `${x.used} tokens of context; the model's window is not known`;
      return wrap;
    }
    const meter = el('span', 'meter');
    const fill = el('span', 'fill' + (x.percent >= 80 ? ' high' : ''));
    fill.style.width = Math.min(100, x.percent) + '%';
    meter.append(fill);
    wrap.append('context ', meter, ` ${Math.round(x.percent)}%`);
    wrap.title = `${x.used} of ${x.window} tokens of context`;
    return wrap;
  }

  function members(v) {
    const s = section('Members', v.members.length);
    const list = el('div', 'members');
    const hue = hues(v);
    for (const m of v.members) {
      const c = el('article', 'member state-' + m.state);
      const top = el('p', 'm-head');
      top.append(swatch(hue.get(m.name)), el('strong', null, m.name));
      if (m.lead) top.append(pill('lead'));
      top.append(pill(m.state, 'st-' + m.state));
      if (m.waiting) top.append(pill('waits: ' + m.waiting, 'warn'));
      if (m.process_alive === false) top.append(pill('not running', 'bad'));
      c.append(top);
      if (m.waiting_detail && m.waiting_detail.message) c.append(el('p', 'muted', m.waiting_detail.message));
      const doing = el('p', 'doing', m.doing || (m.tokens ? '—' : 'no transcript yet'));
      if (m.doing) doing.title = m.doing;
      c.append(doing);
      const facts = el('p', 'facts');
      facts.append(memberCost(m));
      const ctx = contextBar(m);
      if (ctx) facts.append(ctx);
      facts.append(el('span', null, `${m.tasks_in_progress}/${m.tasks_owned} tasks`));
      if (m.unread) facts.append(el('span', null, `${m.unread} unread`));
      if (m.last_event_at) facts.append(ago('seen ', m.last_event_at));
      c.append(facts);
      list.append(c);
    }
    s.append(list);
    return s;
  }

  function tasks(v) {
    const total = v.tasks.pending.length + v.tasks.in_progress.length + v.tasks.completed.length;
    const s = section('Tasks', total);
    if (!total) {
      s.append(el('p', 'muted', 'No tasks.'));
      return s;
    }
    const cols = el('div', 'columns');
    const col = (title, cards, cls, describe) => {
      const d = el('div', 'column ' + cls);
      const h = el('h3', null, title);
      h.append(el('span', 'count', cards.length));
      d.append(h);
      const ul = el('ul', 'cards');
      for (const k of cards.slice(-30)) {
        const li = el('li', 'task');
        li.append(el('span', 'tid', '#' + k.id), el('span', 'subject', k.subject));
        const more = describe(k);
        if (more) li.append(el('span', 'muted owner', more));
        ul.append(li);
      }
      if (cards.length > 30) d.append(el('p', 'muted', `the newest 30 of ${cards.length}`));
      d.append(ul);
      return d;
    };
    cols.append(
      col('Pending', v.tasks.pending, 'col-pending', (k) => (k.blocked_by.length ? 'blocked by #' + k.blocked_by.join(', #') : (k.owner || ''))),
      col('In progress', v.tasks.in_progress, 'col-doing', (k) => k.active_form || k.owner || ''),
      col('Completed', v.tasks.completed, 'col-done', (k) => k.owner || ''),
    );
    s.append(cols);
    return s;
  }

  function messages(v) {
    const s = section('Newest messages', v.messages.length);
    const ul = el('ul', 'messages');
    for (const m of v.messages.slice(-30).reverse()) {
      const li = el('li', 'msg');
      const head = el('p', 'm-head');
      head.append(el('strong', null, m.from), el('span', 'muted', '→'), el('strong', null, m.to), ago('', m.at));
      if (m.delivery === 'unread') head.append(pill('unread'));
      li.append(head, el('p', 'text', m.text !== null && m.text !== undefined && !m.frame ? m.text : m.preview));
      ul.append(li);
    }
    if (!v.messages.length) s.append(el('p', 'muted', 'No messages yet.'));
    s.append(ul);
    return s;
  }

  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, val] of Object.entries(attrs || {})) e.setAttribute(k, String(val));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  // [[iso, usd], …] as [[ms, usd], …].
  function pointsOf(series) {
    return (series || []).map(([at, v]) => [Date.parse(at), v]).filter(([x]) => !Number.isNaN(x));
  }

  // A step line from $0: the value rises at each point and holds until the next (as
  // report.html draws it), carried on to the right edge.
  function steps(pts, X, Y, x1) {
    let d = '';
    let prev = Y(0);
    for (const [x, y] of pts) {
      d += `${d ? 'L' : 'M'}${X(x).toFixed(1)} ${prev.toFixed(1)}L${X(x).toFixed(1)} ${Y(y).toFixed(1)}`;
      prev = Y(y);
    }
    return d + `L${X(x1).toFixed(1)} ${prev.toFixed(1)}`;
  }

  function costChart(t, v) {
    const s = section('Cost over time');
    const cost = t.cost || { total: [], members: [] };
    const total = pointsOf(cost.total);
    if (!total.length) {
      s.append(el('p', 'muted', v.members.some((m) => m.tokens)
        ? 'No response in the transcripts has a time yet.'
        : 'No transcript of any member was found yet: the line starts at the first response.'));
      return s;
    }
    const hue = hues(v);
    const lines = cost.members.map((m) => ({ name: m.name, hue: hue.get(m.name), pts: pointsOf(m.series) }));
    const x0 = total[0][0];
    const last = total[total.length - 1][0];
    // Up to now, unless the team has been quiet for longer than it worked.
    const now = Date.now() + state.skew;
    const x1 = now > last && now - last <= Math.max(last - x0, 60000) ? now : last;
    const long = x1 - x0 > 20 * 3600 * 1000;
    const ymax = Math.max(...total.map((p) => p[1])) || 1;
    // Drawn about as wide as it is shown, so that its labels read at the page's size.
    const W = window.innerWidth < 600 ? 340 : 460;
    const H = 190; const L = 50; const R = 6; const T = 10; const B = 24;
    const X = (x) => L + ((x - x0) / Math.max(1, x1 - x0)) * (W - L - R);
    const Y = (y) => H - B - (y / ymax) * (H - T - B);
    const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img',
      'aria-label': `The team's cost over time, ${usd(total[total.length - 1][1])} now` });
    for (const f of [0.5, 1]) chart.append(svg('path', { d: `M${L} ${Y(ymax * f).toFixed(1)}H${W - R}`, class: 'grid' }));
    chart.append(svg('path', { d: `M${L} ${T}V${H - B}H${W - R}`, class: 'axis' }));
    chart.append(svg('text', { x: L - 6, y: Y(ymax) + 4, 'text-anchor': 'end' }, usd(ymax)));
    chart.append(svg('text', { x: L - 6, y: Y(ymax / 2) + 4, 'text-anchor': 'end' }, usd(ymax / 2)));
    chart.append(svg('text', { x: L - 6, y: H - B + 4, 'text-anchor': 'end' }, '$0'));
    chart.append(svg('text', { x: L, y: H - 6 }, clock(x0, long)));
    chart.append(svg('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, x1 === now ? 'now' : clock(x1, long)));
    for (const m of lines) chart.append(svg('path', { d: steps(m.pts, X, Y, x1), class: 'line ' + (m.hue || 'c8') }));
    chart.append(svg('path', { d: steps(total, X, Y, x1), class: 'line total' }));
    s.append(chart);
    const legend = el('ul', 'legend');
    const tot = el('li');
    tot.append(el('span', 'sw total'), 'team ', el('strong', null, usd(total[total.length - 1][1])));
    legend.append(tot);
    for (const m of lines) {
      const li = el('li');
      li.append(swatch(m.hue), m.name + ' ', el('strong', null, usd(m.pts[m.pts.length - 1][1])));
      legend.append(li);
    }
    s.append(legend);
    const note = v.team.cost_usd === null
      ? 'A model teamctl has no price for: the lines count the responses it could price. '
      : '';
    s.append(el('p', 'muted small', note + 'From the transcripts: each member\'s cost up to each of its responses, '
      + 'ending at its cost now; the dashed line is the team\'s. Times are this browser\'s.'));
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
