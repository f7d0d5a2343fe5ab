#!/usr/bin/env python3
"""What `teamctl export` costs in memory, time and page size (issue 38, item 4).

Builds, in a temp dir:
- the status benchmark's team (bench/run.py `status_team`): 50 members x 1,000 messages,
  100 tasks and a 20 MiB lead transcript; and measures `teamctl --team big export` to a
  folder, to a `.tar.gz` and `--report-only`: peak RSS (GNU time's "Maximum resident set
  size" of the process) and wall time, best of --runs;
- a team of 10 members x 300 messages with transcripts (bench/run.py `make_transcript_team`,
  10 MiB of them: every member has a cost over time); and measures its export and the size of
  its report.html.

Usage: python3 bench/export_memory.py [--bin BIN] [--runs N] [--compare OLD_BIN]
  --bin      the binary to measure (default: builds and uses target/release/teamctl)
  --compare  also record both teams with OLD_BIN and with BIN, as a folder and as a .tar.gz
             (unpacked, and `cmp` of the archives), at one fixed time (TEAMCTL_NOW), and
             `diff -r` each pair: prints "identical" or the differences, and exits 1 on a
             difference
Needs: cargo, GNU time (/usr/bin/time), diff, cmp, tar.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (bench/run.py: the teams and the clean environment)

NOW = "2026-11-30T12:00:00Z"


def measure(cmd, env):
    """Runs `cmd` under GNU time; returns (wall ms, peak RSS MiB)."""
    fd, out = tempfile.mkstemp(prefix="teamctl-time-")
    os.close(fd)
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", "-o", out, *cmd], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        raise SystemExit(f"{cmd} exited {p.returncode}: {p.stderr.decode()[-2000:]}")
    with open(out) as f:
        rss = next(int(l.split(":")[1]) for l in f if "Maximum resident set size" in l)
    os.unlink(out)
    return wall, rss / 1024


def best(cmd, env, runs, clean):
    samples = []
    for _ in range(runs):
        clean()
        samples.append(measure(cmd, env))
    clean()
    return min(w for w, _ in samples), max(r for _, r in samples)


def remove(path):
    shutil.rmtree(path, ignore_errors=True)
    if os.path.exists(path):
        os.remove(path)


def small_team(tmp):
    """10 members x 300 messages, each member with a transcript (its cost over time)."""
    root = os.path.join(tmp, "claude-small")
    bench.make_transcript_team(root, 10)
    inboxes = os.path.join(root, "teams", bench.TEAM_T, "inboxes")
    names = ["team-lead"] + [f"worker-{i}" for i in range(1, 10)]
    for i, n in enumerate(names):
        entries = []
        for j in range(300):
            e = bench.entry(i * 300 + j)
            e["from"] = names[(i + j + 1) % 10]
            e["timestamp"] = f"2026-11-29T{9 + j // 60:02d}:{j % 60:02d}:00.000Z"
            entries.append(e)
        with open(os.path.join(inboxes, f"{n}.json"), "w") as f:
            f.write(json.dumps(entries, indent=2, ensure_ascii=False))
    return root


def record(binary, env, team, out):
    """The record of `team` by `binary` at `out` (a folder, or a .tar.gz unpacked beside it)."""
    subprocess.run([binary, "--team", team, "export", "--out", out], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if out.endswith(".tar.gz"):
        unpacked = out[:-len(".tar.gz")] + "-unpacked"
        os.makedirs(unpacked)
        subprocess.run(["tar", "-xzf", out, "-C", unpacked], check=True)
        return unpacked
    return out


def compare(old, new, teams, tmp):
    """`diff -r` of each team's records by `old` and `new`, folder and archive; True when all
    are identical."""
    same = True
    for team, env in teams:
        for form in ("folder", "tar.gz"):
            ext = ".tar.gz" if form == "tar.gz" else ""
            # The same name in two folders: an archive's root folder is named after it.
            a = record(old, env, team, os.path.join(tmp, "old", f"{team}{ext}"))
            b = record(new, env, team, os.path.join(tmp, "new", f"{team}{ext}"))
            p = subprocess.run(["diff", "-r", a, b], capture_output=True, text=True)
            if p.returncode == 0 and ext:
                # The archives themselves too, byte for byte.
                p = subprocess.run(["cmp", os.path.join(tmp, "old", team + ext),
                                    os.path.join(tmp, "new", team + ext)],
                                   capture_output=True, text=True)
            print(f"diff -r of {team}'s record ({form}), {old} against {new}: "
                  + ("identical" if p.returncode == 0 else "DIFFERENT"))
            if p.returncode != 0:
                same = False
                print(p.stdout[-4000:])
    return same


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", help="the binary to measure (default: this tree's release build)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--compare", metavar="OLD_BIN",
                    help="diff -r both teams' records by OLD_BIN and by the measured binary")
    args = ap.parse_args()
    binary = args.bin
    if not binary:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=bench.ROOT, check=True)
        binary = bench.BIN
    tmp = tempfile.mkdtemp(prefix="teamctl-export-mem-")
    try:
        base = dict(bench.env_base(), TEAMCTL_NOW=NOW,
                    TEAMCTL_DATA_DIR=os.path.join(tmp, "data"))
        big = dict(base, CLAUDE_CONFIG_DIR=bench.status_team(tmp))
        rows = []
        for label, out in (("`--out rec`", "rec"), ("`--out rec.tar.gz`", "rec.tgz")):
            path = os.path.join(tmp, out)
            cmd = [binary, "--team", "big", "export", "--out", path]
            rows.append((label, *best(cmd, big, args.runs, lambda p=path: remove(p))))
        cmd = [binary, "--team", "big", "export", "--report-only"]
        rows.append(("`--report-only`", *best(cmd, big, args.runs, lambda: None)))

        small = dict(base, CLAUDE_CONFIG_DIR=small_team(tmp))
        path = os.path.join(tmp, "small-rec")
        cmd = [binary, "--team", bench.TEAM_T, "export", "--out", path]
        wall, rss = best(cmd, small, args.runs, lambda: remove(path))
        subprocess.run(cmd, env=small, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        html = os.path.getsize(os.path.join(path, "report.html"))

        print("| 50 members x 1,000 messages, 20 MiB lead transcript | time (best) | peak RSS |")
        print("|---|---:|---:|")
        for label, w, r in rows:
            print(f"| {label} | {w:,.0f} ms | {r:,.1f} MiB |")
        print()
        print("| 10 members x 300 messages, 10 MiB of transcripts | time (best) | peak RSS "
              "| report.html |")
        print("|---|---:|---:|---:|")
        print(f"| `--out rec` | {wall:,.0f} ms | {rss:,.1f} MiB | {html / 1e6:,.2f} MB |")
        if args.compare:
            print()
            remove(path)
            if not compare(args.compare, binary, [("big", big), (bench.TEAM_T, small)], tmp):
                return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
