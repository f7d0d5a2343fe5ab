//! Every verb's help, short and long, lists its own options first and the global ones last.

use crate::common::TestEnv;

/// The names under a help text's `Commands:` heading.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// The headings of a help text's blocks of options (`X:` whose next line is a flag as clap
/// draws one: `  -x, --long` or `      --long`, not the `  --long` of a text after them).
fn option_headings(help: &str) -> Vec<String> {
    let lines: Vec<&str> = help.lines().collect();
    lines
        .windows(2)
        .filter(|w| {
            let flag = w[1].starts_with("      --")
                || (w[1].starts_with("  -") && !w[1].starts_with("  --"));
            w[0].ends_with(':') && !w[0].starts_with(' ') && flag
        })
        .map(|w| w[0].trim_end_matches(':').to_owned())
        .collect()
}

fn help(env: &TestEnv, words: &[&str], flag: &str) -> String {
    let out = env.cmd().args(words).arg(flag).output().unwrap();
    assert!(out.status.success(), "{words:?} {flag}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_verb_lists_its_global_options_last() {
    let env = TestEnv::new();
    let verbs = commands(&help(&env, &[], "--help"));
    assert!(verbs.len() > 20, "{verbs:?}");
    let mut checked = 0;
    let mut paths: Vec<Vec<String>> = verbs.into_iter().map(|v| vec![v]).collect();
    while let Some(path) = paths.pop() {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        for flag in ["--help", "-h"] {
            let text = help(&env, &words, flag);
            let headings = option_headings(&text);
            assert_eq!(
                headings.last().map(String::as_str),
                Some("Global options"),
                "`teamctl {} {flag}` lists {headings:?}",
                words.join(" ")
            );
            checked += 1;
        }
        for sub in commands(&help(&env, &words, "--help")) {
            let mut deeper = path.clone();
            deeper.push(sub);
            paths.push(deeper);
        }
    }
    assert!(checked > 50, "{checked}");
}
