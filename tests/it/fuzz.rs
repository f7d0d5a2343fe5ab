//! teamctl's readings checked against the real thing over generated inputs: Bash command lines
//! against bash itself, `WebFetch` URLs against Node's `new URL()`, and the numbers a
//! re-rendered file writes against Node's `JSON.stringify`. A disagreement that would widen an
//! allow rule (teamctl certain of commands bash does not run, or of a host Node does not see)
//! fails. What teamctl writes (teammate text in Markdown, edits of a large config) is
//! fuzz_writes.rs, on the same generator.
//!
//! Deterministic: seed `TEAMCTL_FUZZ_SEED` (default 22), `TEAMCTL_FUZZ_CASES` cases per fuzzer
//! (default 300 for bash, 2000 for URLs and numbers, each run in one bash or node process).
//! Run more with e.g. `TEAMCTL_FUZZ_CASES=20000 cargo test --test it fuzz`.

use std::io::Write;
use std::process::{Command, Stdio};

use teamctl::ops::policy::bash::{self, Op};

/// xorshift64*: enough randomness, no dependency, the same on every machine.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(salt: u64) -> Rng {
        let seed = std::env::var("TEAMCTL_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(22u64);
        Rng((seed ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(crate) fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

pub(crate) fn cases(default: usize) -> usize {
    std::env::var("TEAMCTL_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn have(program: &str) -> bool {
    let ok = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{program} is needed for the fuzz tests"
        );
        eprintln!("skipping: {program} is not installed");
    }
    ok
}

/// Runs `program args` with `input` on stdin; its stdout.
fn pipe(program: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{program} failed");
    out.stdout
}

// ---- Bash ----------------------------------------------------------------------------------

/// A word, in one of the many spellings bash reads as (roughly) the same thing, or one that
/// bash expands.
fn word(r: &mut Rng, command: bool) -> String {
    let base = if command {
        r.pick(&["echo", "touch", "ls", "git", "rm", "cat", "PW", "npm", "x"])
    } else {
        r.pick(&[
            "a", "PW", "-la", "--f=v", "x y", "a;b", "a&&b", "#", "a#b", "'", "\"", "\\", "$", "*",
            "a*", "?", "[ab]", "{a,b}", "{1..2}", "~", "~/x", "a=b", "!", "(", ")", "<", ">", "|",
            "&", "\n", "\t", " ", "", "é", "$'x'",
        ])
    };
    let mut w = match r.below(12) {
        // As it is: bash reads its metacharacters.
        0..=3 => base.to_string(),
        4 => format!("'{}'", base.replace('\'', "'\\''")),
        5 => format!(
            "\"{}\"",
            base.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
                .replace('`', "\\`")
        ),
        6 => base.chars().map(|c| format!("\\{c}")).collect(),
        7 => {
            // Half quoted.
            let cut = base
                .char_indices()
                .nth(base.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            format!("{}'{}'", &base[..cut], &base[cut..])
        }
        8 => format!("$'{}'", base.replace('\\', "\\\\").replace('\'', "\\'")),
        9 => r
            // (What runs in a process substitution is not waited for: `:` records nothing.)
            .pick(&["$X", "${X}", "$(echo a)", "`echo b`", "$((1+1))", "<(:)", "${X:-a}"])
            .to_string(),
        10 => format!("{base}\\\n"),
        _ => format!("\"{base}\"{}", r.pick(&["", "'z'", "\\ ", "$'\\n'"])),
    };
    if r.chance(5) {
        w.push_str(r.pick(&["\\", "'", "\"", "`", "$("]));
    }
    w
}

fn simple(r: &mut Rng) -> String {
    let mut parts = Vec::new();
    if r.chance(15) {
        parts.push(r.pick(&["X=1", "Y='a b'", "X=$Y", "X=(a)"]).to_string());
    }
    parts.push(word(r, true));
    for _ in 0..r.below(4) {
        if r.chance(15) {
            parts.push(
                r.pick(&[
                    ">f", "2>&1", ">>f", "<f", "&>f", "<<<w", ">&2", "1>f", "< f",
                ])
                .to_string(),
            );
        } else {
            parts.push(word(r, false));
        }
    }
    if r.chance(5) {
        parts.push(r.pick(&["# c", "#c ; touch PW", "#"]).to_string());
    }
    let sep = r.pick(&[" ", " ", " ", "  ", "\t"]);
    parts.join(sep)
}

fn line(r: &mut Rng) -> String {
    let mut out = String::new();
    if r.chance(5) {
        out.push_str(r.pick(&["! ", "time ", "{ ", "( ", "if ", "for x in a; do "]));
    }
    out.push_str(&simple(r));
    for _ in 0..r.below(4) {
        out.push_str(r.pick(&[
            "; ", ";", " && ", "&&", " || ", " | ", "|", " & ", "\n", " ;; ", " |& ", "&",
        ]));
        if r.chance(5) {
            out.push_str("! ");
        }
        out.push_str(&simple(r));
    }
    if r.chance(5) {
        out.push_str(r.pick(&[" &", ";", " }", " )", "; fi", "; done", "\\", "'"]));
    }
    out
}

/// What bash runs of `cmds` when every command exits with `ok`: each pipeline's commands'
/// words (sorted: the commands of a pipeline run at the same time), pipelines in order.
fn expected(cmds: &[bash::Command], ok: bool) -> Vec<Vec<Vec<String>>> {
    let mut out = Vec::new();
    let mut status = true;
    let mut i = 0;
    while i < cmds.len() {
        let start = i;
        i += 1;
        while i < cmds.len() && cmds[i].op == Op::Pipe {
            i += 1;
        }
        let pipeline = &cmds[start..i];
        let run = match pipeline[0].op {
            Op::Sequence | Op::Pipe => true,
            Op::And => status,
            Op::Or => !status,
        };
        if run {
            // A command of assignments and redirections only runs nothing, and succeeds.
            let mut group: Vec<Vec<String>> = pipeline
                .iter()
                .filter(|c| !c.words.is_empty())
                .map(|c| c.words.clone())
                .collect();
            group.sort();
            if !group.is_empty() {
                out.push(group);
            }
            let last_ok = pipeline.last().is_some_and(|c| c.words.is_empty()) || ok;
            status = last_ok != pipeline[0].negated;
        }
    }
    out
}

/// Commands the probe cannot run as functions, so their records say nothing: a name with a
/// slash (bash runs that file), a redirection duplicating a descriptor that is not a number
/// (bash refuses it and skips the command).
fn probe_cannot_run(c: &bash::Command) -> bool {
    let bad_dup = |op: &str| {
        c.text.match_indices(op).any(|(i, _)| {
            let next = c.text[i + op.len()..].chars().next();
            !next.is_some_and(|n| n.is_ascii_digit() || n == '-')
        })
    };
    c.words.first().is_some_and(|w| w.contains('/')) || bad_dup("<&") || bad_dup(">&")
}

/// Whether bash ran nothing teamctl did not read: `got` (bash's records, in the order written)
/// is `want`'s pipelines from the first, each whole, up to some point (bash stops at a syntax
/// error teamctl's parser let through: what it never runs widens nothing).
fn runs_within(want: &[Vec<Vec<String>>], got: &[Vec<String>], background: bool) -> bool {
    if background {
        // Background lists run in any order: every record must be one teamctl read.
        let mut pool: Vec<&Vec<String>> = want.iter().flatten().collect();
        return got.iter().all(|r| match pool.iter().position(|w| *w == r) {
            Some(i) => {
                pool.swap_remove(i);
                true
            }
            None => false,
        });
    }
    let mut rest = got;
    for group in want {
        if rest.is_empty() {
            return true;
        }
        if rest.len() < group.len() {
            return false;
        }
        let mut chunk = rest[..group.len()].to_vec();
        chunk.sort();
        if chunk != *group {
            return false;
        }
        rest = &rest[group.len()..];
    }
    rest.is_empty()
}

/// Runs every line in bash (`eval`, as Claude Code's Bash tool does), twice: with every command
/// succeeding, then failing. Every command, builtins included, is a function that records its
/// words; nothing else runs. Returns, per line, the two passes' records.
fn bash_runs(lines: &[String], files: &[String]) -> Vec<[Vec<Vec<String>>; 2]> {
    let dir = tempfile::tempdir().unwrap();
    // Files read by redirections exist, so that bash runs their commands.
    for f in files {
        let p = dir.path().join("work").join(f);
        if p.starts_with(dir.path().join("work")) {
            let _ = std::fs::create_dir_all(p.parent().unwrap());
            let _ = std::fs::write(&p, "");
        }
    }
    let cases = dir.path().join("cases");
    let records = dir.path().join("records");
    let mut input = Vec::new();
    for l in lines {
        input.extend_from_slice(l.as_bytes());
        input.push(0);
    }
    std::fs::write(&cases, input).unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    let script = r#"
cd "$1" || exit 9
__rec() { builtin printf '%s\0' "$__tag" "$@" $'\001' >&9; return $__status; }
command_not_found_handle() { __rec "$@"; }
for __b in $(compgen -b); do
  case $__b in builtin|eval|wait|exit|return|printf|read|set|shopt|unset|local|declare|typeset|export|readonly|trap|exec|source|.|:|compgen) ;;
  *) eval "$__b() { __rec $__b \"\$@\"; }" 2>/dev/null ;;
  esac
done
printf() { __rec printf "$@"; }
exec 9>>"$2"
__n=0
while IFS= read -r -d '' __case; do
  for __status in 0 1; do
    __tag="$__n.$__status"
    ( set -f; HOME='~'; PATH=/nonexistent; eval "$__case"; builtin wait ) </dev/null >/dev/null 2>&1
  done
  __n=$((__n + 1))
done < "$3"
"#;
    let status = Command::new("bash")
        .args(["-c", script, "probe"])
        .arg(dir.path().join("work"))
        .arg(&records)
        .arg(&cases)
        .env_clear()
        .status()
        .unwrap();
    assert!(status.success(), "the bash probe failed");
    // A record is its case's tag (`<line>.<pass>`: what a line left running in the background
    // may write late), then its words, each ending in NUL, then \x01 NUL: one write, so records
    // of commands running at once never mix.
    let bytes = std::fs::read(&records).unwrap();
    let mut out: Vec<[Vec<Vec<String>>; 2]> = vec![[Vec::new(), Vec::new()]; lines.len()];
    let mut fields: Vec<String> = Vec::new();
    let mut pieces: Vec<&[u8]> = bytes.split(|&b| b == 0).collect();
    pieces.pop(); // after the last NUL
    for f in pieces {
        if f != [1] {
            fields.push(String::from_utf8_lossy(f).into_owned());
            continue;
        }
        let mut record = std::mem::take(&mut fields);
        let tag = record.remove(0);
        let slot = tag
            .split_once('.')
            .and_then(|(n, p)| Some((n.parse::<usize>().ok()?, p.parse::<usize>().ok()?)))
            .filter(|&(n, p)| n < lines.len() && p < 2);
        match slot {
            Some((n, pass)) => out[n][pass].push(record),
            None => eprintln!("a record without a tag: {tag:?} {record:?}"),
        }
    }
    out
}

/// Lines teamctl is certain of run exactly the commands it read, word for word, in bash.
#[test]
fn bash_runs_what_teamctl_reads_with_certainty() {
    if !have("bash") {
        return;
    }
    let mut r = Rng::new(1);
    let n = cases(300);
    let mut lines: Vec<String> = vec![
        "echo $'\\''; touch PW #'".into(),
        "echo hi # ; touch PW".into(),
        "ec'ho' a\\ b \"c d\" 'e'\"f\"".into(),
        "a && b || c | d; e & f\ng".into(),
        "! a && b".into(),
        "echo a\\\nb".into(),
        "X=1 echo >f 2>&1 <<<w".into(),
    ];
    while lines.len() < n {
        lines.push(line(&mut r));
    }
    let parsed: Vec<_> = lines.iter().map(|l| bash::parse(l)).collect();
    let files: Vec<String> = parsed
        .iter()
        .flat_map(|p| p.certain.iter().flatten())
        .flat_map(|c| c.files.iter().cloned())
        .filter(|f| !f.is_empty() && !f.contains("..") && !f.starts_with('/'))
        .collect();
    let runs = bash_runs(&lines, &files);
    let mut certain = 0;
    let mut failures = Vec::new();
    for (i, ((l, p), run)) in lines.iter().zip(&parsed).zip(&runs).enumerate() {
        let Some(cmds) = &p.certain else { continue };
        certain += 1;
        if cmds.iter().any(probe_cannot_run) {
            continue;
        }
        for (pass, ok) in [(0, true), (1, false)] {
            let want = expected(cmds, ok);
            let got = &run[pass];
            let background = cmds.iter().any(|c| c.background);
            if !runs_within(&want, got, background) {
                failures.push(format!(
                    "{l:?} (every command {}): teamctl reads {want:?}, bash runs {got:?} \
                     (the line before: {:?})",
                    if ok { "succeeding" } else { "failing" },
                    lines[i.saturating_sub(1)]
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} lines: teamctl is certain of commands bash does not run:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
    // The generator must keep producing lines both ways, or the test proves little.
    assert!(certain * 10 >= lines.len(), "only {certain} certain lines");
    assert!(certain < lines.len(), "no uncertain line");
}

// ---- URLs ----------------------------------------------------------------------------------

fn url(r: &mut Rng) -> String {
    let scheme = r.pick(&[
        "https",
        "http",
        "HTTPS",
        "hTtP",
        "ftp",
        "file",
        "javascript",
        "wss",
        "",
    ]);
    let sep = r.pick(&[
        "://", "://", "://", ":/", ":\\\\", ":", ":///", ":\\/", " ://",
    ]);
    let host = r.pick(&[
        "example.com",
        "evil.com",
        "EXAMPLE.com",
        "example.com.",
        "sub.example.com",
        "exam%70le.com",
        "b\u{fc}cher.de",
        "xn--bcher-kva.de",
        "127.0.0.1",
        "0x7f.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "example.com:8443",
        "example.com:",
        "ex ample.com",
        "ex\tample.com",
        "",
        "%65xample.com",
        "example.com\u{3002}net",
        "ＥＸＡＭＰＬＥ.com",
        // What url's IDNA backend decides (idna_adapter: normalization, bidi, joiners):
        // deviation characters, a final sigma, right-to-left labels, joiners, combining marks.
        "fa\u{df}.de",
        "\u{3c3}\u{3bf}\u{3c2}.gr",
        "\u{645}\u{62b}\u{627}\u{644}.\u{625}\u{62e}\u{62a}\u{628}\u{627}\u{631}",
        "a\u{5d0}.com",
        "\u{5d0}1.com",
        "\u{915}\u{94d}\u{200d}.in",
        "a\u{200c}b.com",
        "\u{644}\u{200c}\u{627}.com",
        "e\u{301}cole.fr",
        "\u{212b}ngstr\u{f6}m.se",
        "\u{2603}.net",
        "\u{d55c}\u{ad6d}.kr",
        "\u{3b1}\u{300}.gr",
        "xn--fa-hia.de",
        "xn--a-ecp.ru",
    ]);
    let user = r.pick(&[
        "",
        "",
        "",
        "user@",
        "u:p@",
        "evil.com@",
        "evil.com\\@",
        "@",
        "a@b@",
    ]);
    let tail = r.pick(&[
        "",
        "/",
        "/a",
        "\\@example.com/",
        "@example.com",
        "?a@example.com",
        "#@example.com",
        "\\.example.com",
        "/..\\evil.com",
        ".evil.net",
        "%2F@example.com",
        ":80@evil.com",
    ]);
    let mut u = format!("{scheme}{sep}{user}{host}{tail}");
    if r.chance(10) {
        u = format!(
            "{}{u}{}",
            r.pick(&[" ", "\t", "\n", ""]),
            r.pick(&[" ", "\n", ""])
        );
    }
    u
}

/// Every host teamctl reads from a URL is the hostname Node's `new URL()` reads.
#[test]
fn url_hosts_are_what_node_reads() {
    if !have("node") {
        return;
    }
    let mut r = Rng::new(2);
    let n = cases(2000);
    let urls: Vec<String> = (0..n).map(|_| url(&mut r)).collect();
    let js = r#"
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(input.map(u => {
  try {
    const x = new URL(u);
    return (x.protocol === 'http:' || x.protocol === 'https:') ? x.hostname : null;
  } catch { return null; }
})));
"#;
    let out = pipe(
        "node",
        &["-e", js],
        serde_json::to_string(&urls).unwrap().as_bytes(),
    );
    let node: Vec<Option<String>> = serde_json::from_slice(&out).unwrap();
    let mut failures = Vec::new();
    let mut agreed = 0;
    for (u, theirs) in urls.iter().zip(node) {
        let ours = teamctl::ops::policy::url_host(u);
        if ours.is_some() && ours != theirs {
            failures.push(format!("{u:?}: teamctl reads {ours:?}, Node {theirs:?}"));
        }
        agreed += usize::from(ours == theirs);
    }
    assert!(
        failures.is_empty(),
        "teamctl reads hosts Node does not:\n{}",
        failures.join("\n")
    );
    assert!(agreed * 10 >= n * 9, "only {agreed} of {n} agree");
}

// ---- Numbers -------------------------------------------------------------------------------

/// Numbers with an exponent are written as Node's `JSON.stringify` writes them.
#[test]
fn numbers_are_written_as_json_stringify_writes_them() {
    if !have("node") {
        return;
    }
    let mut r = Rng::new(3);
    let n = cases(2000);
    let mut texts: Vec<String> = Vec::new();
    while texts.len() < n {
        let f = f64::from_bits(r.next());
        let t = match r.below(4) {
            _ if !f.is_finite() => continue,
            0 => format!("{f:e}"),
            1 => format!("{f:E}"),
            2 => {
                // A short decimal with an exponent, as people write them.
                let m = r.below(100_000) as i64 - 50_000;
                let e = r.below(60) as i64 - 30;
                format!("{m}e{e:+}")
            }
            _ => format!(
                "{}.{}E{}",
                r.below(10),
                r.below(1000),
                r.below(700) as i64 - 350
            ),
        };
        texts.push(t);
    }
    let js = r#"
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(input.map(t => JSON.stringify(JSON.parse(t)))));
"#;
    let out = pipe(
        "node",
        &["-e", js],
        serde_json::to_string(&texts).unwrap().as_bytes(),
    );
    let node: Vec<String> = serde_json::from_slice(&out).unwrap();
    let failures: Vec<String> = texts
        .iter()
        .zip(node)
        .filter_map(|(t, theirs)| {
            let ours = teamctl::store::format::js_number(t).unwrap();
            (ours != theirs).then(|| format!("{t}: teamctl writes {ours}, Node {theirs}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
