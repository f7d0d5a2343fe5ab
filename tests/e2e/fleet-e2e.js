#!/usr/bin/env node
'use strict';
// End-to-end test of the fleet recipe's unit script (examples/fleet/teamctl-unit.sh, what each
// pod of the Kubernetes Indexed Job runs) against the REAL Claude Code, offline: units 0, 1 and
// 2 run at once, each as a pod would, with its own empty config dir, work dir, tmux server and
// teamctl data dir, the prompts in one folder named by index (the ConfigMap) and the records in
// one shared folder (the volume). Each prompt is `Spawn: worker TOK-<i>`: the lead spawns a
// teammate, it reports, the lead ends with "FINAL ANSWER: the team reported TOK-<i>".
//
//   node tests/e2e/fleet-e2e.js --teamctl <exe> [--keep] [--verbose] [--claude-bin <path>]
//                               [--deadline <seconds>]
//
// Then, per unit: exit 0, its config dir prepared by `teamctl prepare` alone, its record
// (team-<i>.tar.gz, holding what each member cost) and run's result (team-<i>.json: done, that
// final answer); and `teamctl report` over the three records: three teams, all done, each with
// the cost its record holds and the total, in both forms, and the fleet's page (report --html)
// holding the same report.
//
// Exit codes: 0 pass (one JSON summary line on stdout), 1 fail (diagnostics on stderr),
// 2 usage error, 77 skipped (claude binary or tmux not installed).

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const UNITS = [0, 1, 2];
const h = require('./harness')({
  name: 'fleet-e2e',
  team: null,
  argv: process.argv.slice(2),
  deadline: 180,
  dirs: ['prompts', 'records', ...UNITS.flatMap((i) => [`cfg${i}`, `work${i}`, `tmux${i}`, `data${i}`])],
  mockTeamctl: false,
  mockLogLine: (j) => `${j.n} +${j.ms}ms ${j.ua} ${JSON.stringify(j.reply)} ${j.why}`,
  // Each unit's own tmux server (its pod's); run ends its lead itself, this is for a failure.
  onCleanup: (s) => {
    for (const i of UNITS) {
      if (!s[`tmux${i}`]) continue;
      const r = spawnSync('tmux', ['list-panes', '-a', '-F', '#{pane_pid}'], { env: { ...process.env, TMUX_TMPDIR: s[`tmux${i}`] }, encoding: 'utf8' });
      spawnSync('tmux', ['kill-server'], { env: { ...process.env, TMUX_TMPDIR: s[`tmux${i}`] } });
      for (const pid of (r.stdout || '').split('\n').filter(Boolean)) {
        try { process.kill(Number(pid), 'SIGKILL'); } catch (_) { /* gone */ }
      }
    }
  },
});

const { args, st, CLAUDE_VERSION, now, hex, check, exec } = h;
const UNIT = path.join(__dirname, '..', '..', 'examples', 'fleet', 'teamctl-unit.sh');

h.run(async () => {
  const tokens = UNITS.map((i) => `TOK${i}-${hex(3)}`);
  for (const i of UNITS) fs.writeFileSync(path.join(st.prompts, String(i)), `Spawn: worker ${tokens[i]}\n`);
  // teamctl on PATH, as in the image.
  const binDir = path.join(st.root, 'bin');
  fs.mkdirSync(binDir);
  fs.symlinkSync(args.teamctl, path.join(binDir, 'teamctl'));
  const t0 = now();
  const units = await Promise.all(UNITS.map((i) => exec('sh', [UNIT], {
    PATH: `${binDir}:${st.env.PATH}`,
    JOB_COMPLETION_INDEX: String(i),
    PROMPTS_DIR: st.prompts,
    RECORDS_DIR: st.records,
    WORK_DIR: st[`work${i}`],
    CLAUDE_CONFIG_DIR: st[`cfg${i}`],
    TMUX_TMPDIR: st[`tmux${i}`],
    TEAMCTL_DATA_DIR: st[`data${i}`],
    TEAMCTL_CLAUDE_BIN: args.claudeBin,
    MAX_COST: '5',
    RUN_TIMEOUT: '120s',
  })));
  const wall = now() - t0;
  const out = { units: [] };
  for (const i of UNITS) {
    const u = units[i];
    check(u.code === 0, `unit ${i} exited ${u.code}:\n${u.stderr}`);
    const cj = JSON.parse(fs.readFileSync(path.join(st[`cfg${i}`], '.claude.json'), 'utf8'));
    check(cj.hasCompletedOnboarding === true, `unit ${i}: not prepared`);
    const result = JSON.parse(fs.readFileSync(path.join(st.records, `team-${i}.json`), 'utf8'));
    check(result.state === 'done', `unit ${i}: state ${result.state} (${result.reason})`);
    check(result.result === `FINAL ANSWER: the team reported ${tokens[i]}`, `unit ${i}: result ${JSON.stringify(result.result)}`);
    check(result.claude.version === `${CLAUDE_VERSION} (Claude Code)`, `unit ${i}: claude ${JSON.stringify(result.claude)}`);
    const record = path.join(st.records, `team-${i}.tar.gz`);
    check(fs.existsSync(record) && fs.statSync(record).size > 0, `unit ${i}: no record ${record}`);
    out.units.push({ index: i, elapsed_ms: result.elapsed_ms, wall_ms: u.ms });
  }
  const records = UNITS.map((i) => path.join(st.records, `team-${i}.tar.gz`));
  const rj = await exec(args.teamctl, ['--json', 'report', ...records]);
  check(rj.code === 0, `report --json exited ${rj.code}: ${rj.stderr}`);
  const report = JSON.parse(rj.stdout);
  check(report.teams.length === 3, `report: ${rj.stdout}`);
  check(report.teams.every((t) => t.outcome === 'done'), `report outcomes: ${rj.stdout}`);
  check(report.totals.teams === 3 && report.totals.outcomes.done === 3, `report totals: ${JSON.stringify(report.totals)}`);
  check(report.unreadable.length === 0, `unreadable: ${JSON.stringify(report.unreadable)}`);
  for (const i of UNITS) {
    const t = report.teams[i];
    check(t.name === `unit-${i}` && t.result === `FINAL ANSWER: the team reported ${tokens[i]}`, `report team ${i}: ${JSON.stringify(t)}`);
    // The cost the record holds (each member's, in total), as report shows it.
    const sj = spawnSync('tar', ['-xzOf', records[i], `team-${i}/summary.json`], { encoding: 'utf8' });
    const summary = JSON.parse(sj.stdout);
    check(summary.cost && summary.cost.cost_usd > 0 && summary.cost.members.some((m) => m.name === 'worker' && m.cost_usd > 0),
      `unit ${i}: record cost ${JSON.stringify(summary.cost)}`);
    check(t.cost_usd === summary.cost.cost_usd, `report team ${i} cost ${t.cost_usd}, record ${summary.cost.cost_usd}`);
    out.units[i].cost_usd = t.cost_usd;
  }
  const sum = report.teams.reduce((a, t) => a + t.cost_usd, 0);
  check(Math.abs(report.totals.cost_usd - sum) < 1e-12, `report total cost ${report.totals.cost_usd}, teams ${sum}`);
  const md = await exec(args.teamctl, ['report', ...records]);
  check(md.code === 0 && md.stdout.startsWith('# 3 teams: 3 done\n'), `report: ${md.code}\n${md.stdout}\n${md.stderr}`);
  for (const i of UNITS) {
    check(new RegExp(`\\| ${i + 1} \\| unit\\\\-${i} \\| done \\| [^|]+ \\| \\$0\\.[0-9]+ \\|`).test(md.stdout), `no row with a cost for unit-${i}:\n${md.stdout}`);
  }
  out.report_md_bytes = md.stdout.length;
  // The fleet's page: written beside the records, the same report embedded, every archive named.
  const page = path.join(st.records, 'fleet.html');
  const ph = await exec(args.teamctl, ['report', '--html', '--out', page, ...records]);
  check(ph.code === 0 && ph.stdout === md.stdout, `report --html: ${ph.code}\n${ph.stderr}`);
  const html = fs.readFileSync(page, 'utf8');
  const open = '<script type="application/json" id="teamctl-fleet">';
  const embedded = JSON.parse(html.slice(html.indexOf(open) + open.length, html.indexOf('</script>')));
  check(JSON.stringify(embedded) === JSON.stringify(report), `fleet page data: ${JSON.stringify(embedded)}`);
  check(html.includes('<h1>Fleet: 3 teams</h1>') && UNITS.every((i) => html.includes(`team-${i}.tar.gz`)), `fleet page:\n${html}`);
  out.fleet_html_bytes = html.length;
  out.wall_ms = wall;
  out.claude = `${CLAUDE_VERSION} (Claude Code)`;
  return out;
});
