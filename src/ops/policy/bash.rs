//! How bash reads a command line, for the policy ([`crate::ops::policy`]): the simple commands
//! it runs, each as the words bash splits it into, and whether teamctl knows that for certain.
//!
//! The line is parsed with brush-parser, a bash-compatible parser, with bash's defaults for
//! `bash -c` (no extended globbing). It is *certain* only when it is a list of simple commands
//! (joined by `;`, `&&`, `||`, `|`, `&`, newlines, optionally `!` or `time`) whose every word,
//! assignment and redirection is literal text: plain, single- or double-quoted, or escaped
//! characters. Anything whose words teamctl would have to guess makes it uncertain, and an
//! uncertain line is never approved by an allow rule: command and process substitution,
//! parameter and arithmetic expansion, ANSI-C (`$'…'`) and locale (`$"…"`) quoting, brace
//! expansion, `~user`, here-documents, compound commands (subshells, groups, `if`, loops,
//! `case`, `[[ ]]`, `(( ))`), function definitions, and anything that does not parse. The tests
//! fuzz this against bash itself (`tests/it/fuzz.rs`).
//!
//! For deny and ask rules, which should match wherever they can, [`Parsed::anywhere`] also
//! holds the simple commands found inside compound commands and substitutions.

use std::io::BufReader;

use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item};
use brush_parser::word::{self, WordPiece};
use brush_parser::{Parser, ParserOptions};

use crate::host::claude::shell_quote;

/// How a simple command follows the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// It starts a list: the first command, or after `;`, `&` or a newline.
    Sequence,
    /// After `&&`: it runs when the pipeline before it succeeded.
    And,
    /// After `||`: it runs when the pipeline before it failed.
    Or,
    /// After `|`: it runs in the same pipeline.
    Pipe,
}

/// One simple command bash runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// How it follows the command before it.
    pub op: Op,
    /// Its pipeline is negated (`! a | b`).
    pub negated: bool,
    /// Its list runs in the background (ends with `&`).
    pub background: bool,
    /// Its words after quote removal (the command name first), without assignments and
    /// redirections. Empty for a command of assignments or redirections only.
    pub words: Vec<String>,
    /// The files its redirections name, after quote removal.
    pub files: Vec<String>,
    /// The command as rules see it: assignments, words and redirections in order, each word
    /// shell-quoted when it holds anything but plain characters, joined by single spaces
    /// (`FOO=1 npm test '--grep=a b' 2>&1`).
    pub text: String,
}

/// What teamctl knows about a command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The simple commands bash runs, in order, when the line is certain (see the module
    /// docs); `None` when it is not.
    pub certain: Option<Vec<Command>>,
    /// The text of every simple command found anywhere in the line, substitutions and
    /// compound commands included (what could not be read literally kept as written).
    pub anywhere: Vec<String>,
}

/// A line longer than this, or with more opening brackets and backquotes, is not parsed (it is
/// uncertain): the parser recurses, and nothing a person writes by hand comes near.
const MAX_LEN: usize = 16 * 1024;
const MAX_OPENINGS: usize = 256;
/// Substitutions inside substitutions are looked into this deep for deny rules.
const MAX_DEPTH: usize = 8;

fn options() -> ParserOptions {
    ParserOptions {
        // `bash -c` starts with extglob off: `@(x)` is then a syntax error, not a pattern.
        enable_extended_globbing: false,
        ..ParserOptions::default()
    }
}

/// Reads `line` as bash would (see the module docs).
pub fn parse(line: &str) -> Parsed {
    let mut w = Walk::default();
    match program(line) {
        Some(p) => w.program(&p, true, 0),
        None => w.certain = false,
    }
    let certain = (w.certain && !w.commands.is_empty()).then_some(w.commands);
    Parsed {
        certain,
        anywhere: w.anywhere,
    }
}

fn program(line: &str) -> Option<ast::Program> {
    let openings = line
        .bytes()
        .filter(|b| matches!(b, b'(' | b'{' | b'[' | b'`'))
        .count();
    if line.len() > MAX_LEN || openings > MAX_OPENINGS {
        return None;
    }
    let opts = options();
    // A parser bug must not take teamctl down with it: a panic is an uncertain line.
    std::panic::catch_unwind(|| {
        Parser::new(BufReader::new(line.as_bytes()), &opts)
            .parse_program()
            .ok()
    })
    .ok()
    .flatten()
}

/// Where a simple command stands in its list.
#[derive(Clone, Copy)]
struct How {
    op: Op,
    negated: bool,
    background: bool,
}

impl Default for How {
    fn default() -> Self {
        How {
            op: Op::Sequence,
            negated: false,
            background: false,
        }
    }
}

#[derive(Default)]
struct Walk {
    certain: bool,
    commands: Vec<Command>,
    anywhere: Vec<String>,
}

impl Walk {
    fn program(&mut self, p: &ast::Program, top: bool, depth: usize) {
        if top {
            self.certain = true;
        }
        for cc in &p.complete_commands {
            self.list(cc, top, depth);
        }
    }

    fn list(&mut self, l: &ast::CompoundList, top: bool, depth: usize) {
        for item in &l.0 {
            let and_or = &item.0;
            let background = matches!(item.1, ast::SeparatorOperator::Async);
            let how = |op| How {
                op,
                negated: false,
                background,
            };
            self.pipeline(&and_or.first, how(Op::Sequence), top, depth);
            for next in &and_or.additional {
                let (op, p) = match next {
                    ast::AndOr::And(p) => (Op::And, p),
                    ast::AndOr::Or(p) => (Op::Or, p),
                };
                self.pipeline(p, how(op), top, depth);
            }
        }
    }

    /// Each command of pipeline `p`, the first joined to what came before as `first` says
    /// (its operator, in the background or not), the others by a pipe.
    fn pipeline(&mut self, p: &ast::Pipeline, first: How, top: bool, depth: usize) {
        for (i, c) in p.seq.iter().enumerate() {
            let how = How {
                op: if i == 0 { first.op } else { Op::Pipe },
                negated: p.bang,
                background: first.background,
            };
            match c {
                ast::Command::Simple(s) => self.simple(s, how, top, depth),
                ast::Command::Compound(c, redirects) => {
                    self.uncertain(top);
                    self.compound(c, depth);
                    for r in redirects.iter().flat_map(|r| r.0.iter()) {
                        self.redirect(r, depth);
                    }
                }
                ast::Command::Function(f) => {
                    self.uncertain(top);
                    self.compound(&f.body.0, depth);
                }
                ast::Command::ExtendedTest(..) => self.uncertain(top),
            }
        }
    }

    fn uncertain(&mut self, top: bool) {
        if top {
            self.certain = false;
        }
    }

    /// The simple commands inside a compound command (for [`Parsed::anywhere`] only).
    fn compound(&mut self, c: &ast::CompoundCommand, depth: usize) {
        use ast::CompoundCommand as C;
        match c {
            C::BraceGroup(b) => self.list(&b.list, false, depth),
            C::Subshell(s) => self.list(&s.list, false, depth),
            C::ForClause(f) => {
                for v in f.values.iter().flatten() {
                    self.word(&v.value, depth);
                }
                self.list(&f.body.list, false, depth);
            }
            C::ArithmeticForClause(f) => self.list(&f.body.list, false, depth),
            C::WhileClause(w) | C::UntilClause(w) => {
                self.list(&w.0, false, depth);
                self.list(&w.1.list, false, depth);
            }
            C::IfClause(i) => {
                self.list(&i.condition, false, depth);
                self.list(&i.then, false, depth);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, false, depth);
                    }
                    self.list(&e.body, false, depth);
                }
            }
            C::CaseClause(c) => {
                self.word(&c.value.value, depth);
                for item in &c.cases {
                    if let Some(l) = &item.cmd {
                        self.list(l, false, depth);
                    }
                }
            }
            C::Coprocess(c) => {
                if let ast::Command::Simple(s) = c.body.as_ref() {
                    self.simple(s, How::default(), false, depth);
                } else if let ast::Command::Compound(c, _) = c.body.as_ref() {
                    self.compound(c, depth);
                }
            }
            C::Arithmetic(_) => {}
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand, how: How, top: bool, depth: usize) {
        let mut literal = true;
        let mut words = Vec::new();
        let mut files = Vec::new();
        let mut text = Vec::new();
        let prefix = s
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(|i| (true, Some(i)));
        let suffix = s
            .suffix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(|i| (false, Some(i)));
        let items = prefix.chain(std::iter::once((false, None))).chain(suffix);
        for (before_command, item) in items {
            match item {
                None => {
                    if let Some(w) = &s.word_or_name {
                        let (v, ok) = self.word(&w.value, depth);
                        literal &= ok;
                        text.push(shell_quote(&v));
                        words.push(v);
                    }
                }
                Some(Item::Word(w)) => {
                    let (v, ok) = self.word(&w.value, depth);
                    literal &= ok;
                    text.push(shell_quote(&v));
                    words.push(v);
                }
                // After the command name `a=b` is an argument like any other word.
                Some(Item::AssignmentWord(_, w)) if !before_command => {
                    let (v, ok) = self.word(&w.value, depth);
                    literal &= ok;
                    text.push(shell_quote(&v));
                    words.push(v);
                }
                Some(Item::AssignmentWord(a, w)) => {
                    let array = matches!(a.value, ast::AssignmentValue::Array(_));
                    let (v, ok) = self.word(&w.value, depth);
                    literal &= ok && !array;
                    // `NAME=value`: the name is plain, the value quoted as a word is.
                    text.push(match v.split_once('=') {
                        Some((name, value)) => format!("{name}={}", shell_quote(value)),
                        None => shell_quote(&v),
                    });
                }
                Some(Item::IoRedirect(r)) => {
                    let (t, file, ok) = self.redirect(r, depth);
                    literal &= ok;
                    text.push(t);
                    files.extend(file);
                }
                Some(Item::ProcessSubstitution(_, sub)) => {
                    literal = false;
                    self.list(&sub.list, false, depth + 1);
                    text.push("<(…)".into());
                }
            }
        }
        let text = text.join(" ");
        if !text.is_empty() {
            self.anywhere.push(text.clone());
        }
        if top {
            if literal {
                self.commands.push(Command {
                    op: how.op,
                    negated: how.negated,
                    background: how.background,
                    words,
                    files,
                    text,
                });
            } else {
                self.certain = false;
            }
        }
    }

    /// A redirection as rules see it (`2>&1`, `>out.txt`, `<<<word`), the file it names, and
    /// whether it is literal.
    fn redirect(&mut self, r: &ast::IoRedirect, depth: usize) -> (String, Option<String>, bool) {
        let fd = |fd: &Option<ast::IoFd>| fd.map(|n| n.to_string()).unwrap_or_default();
        match r {
            ast::IoRedirect::File(n, kind, target) => {
                let (t, file, ok) = match target {
                    ast::IoFileRedirectTarget::Filename(w) => {
                        let (v, ok) = self.word(&w.value, depth);
                        (shell_quote(&v), Some(v), ok)
                    }
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let (v, ok) = self.word(&w.value, depth);
                        (shell_quote(&v), None, ok)
                    }
                    ast::IoFileRedirectTarget::Fd(n) => (n.to_string(), None, true),
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        self.list(&sub.list, false, depth + 1);
                        ("(…)".into(), None, false)
                    }
                };
                (format!("{}{kind}{t}", fd(n)), file, ok)
            }
            ast::IoRedirect::HereDocument(n, doc) => {
                self.word(&doc.doc.value, depth);
                (format!("{}<<{}", fd(n), doc.here_end.value), None, false)
            }
            ast::IoRedirect::HereString(n, w) => {
                let (v, ok) = self.word(&w.value, depth);
                (format!("{}<<<{}", fd(n), shell_quote(&v)), None, ok)
            }
            ast::IoRedirect::OutputAndError(w, append) => {
                let (v, ok) = self.word(&w.value, depth);
                let op = if *append { "&>>" } else { "&>" };
                (format!("{op}{}", shell_quote(&v)), Some(v), ok)
            }
        }
    }

    /// A word's value after quote removal, and whether it is literal (see the module docs).
    /// Commands inside its substitutions go to [`Parsed::anywhere`].
    fn word(&mut self, raw: &str, depth: usize) -> (String, bool) {
        let opts = options();
        let Ok(pieces) = word::parse(raw, &opts) else {
            return (raw.to_string(), false);
        };
        let mut out = String::new();
        let mut ok = true;
        for p in &pieces {
            ok &= self.piece(&p.piece, &mut out, false, depth);
        }
        // `{a,b}` and `{1..3}` outside quotes: bash makes several words of one.
        let braces = word::parse_brace_expansions(raw, &opts).map_or(true, |b| {
            b.is_some_and(|parts| {
                parts
                    .iter()
                    .any(|p| !matches!(p, word::BraceExpressionOrText::Text(_)))
            })
        });
        (out, ok && !braces)
    }

    fn piece(&mut self, p: &WordPiece, out: &mut String, quoted: bool, depth: usize) -> bool {
        match p {
            WordPiece::Text(s) | WordPiece::SingleQuotedText(s) => {
                out.push_str(s);
                true
            }
            WordPiece::EscapeSequence(s) => {
                // `\x` is `x`; a backslash-newline (a line continuation) is nothing.
                match s.strip_prefix('\\') {
                    Some("\n") => {}
                    Some(c) => out.push_str(c),
                    None => out.push_str(s),
                }
                true
            }
            WordPiece::DoubleQuotedSequence(inner) if !quoted => {
                let mut ok = true;
                for q in inner {
                    ok &= self.piece(&q.piece, out, true, depth);
                }
                ok
            }
            WordPiece::TildeExpansion(word::TildeExpr::Home) if !quoted => {
                out.push('~');
                true
            }
            WordPiece::CommandSubstitution(inner)
            | WordPiece::BackquotedCommandSubstitution(inner) => {
                out.push_str("$(…)");
                if depth < MAX_DEPTH
                    && let Some(p) = program(inner)
                {
                    let mut sub = Walk::default();
                    sub.program(&p, false, depth + 1);
                    self.anywhere.extend(sub.anywhere);
                }
                false
            }
            _ => {
                out.push('$');
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certain(line: &str) -> Option<Vec<String>> {
        parse(line)
            .certain
            .map(|cs| cs.into_iter().map(|c| c.text).collect())
    }

    #[test]
    fn lists_of_simple_commands_are_split_as_bash_splits_them() {
        assert_eq!(
            certain("git status && npm test | tee out; ls &\necho  'a b'"),
            Some(
                ["git status", "npm test", "tee out", "ls", "echo 'a b'"]
                    .map(String::from)
                    .to_vec()
            )
        );
        assert_eq!(
            certain("echo hi # ; rm -rf /"),
            Some(vec!["echo hi".into()])
        );
        assert_eq!(certain("ec\"ho\" x\\ y"), Some(vec!["echo 'x y'".into()]));
        assert_eq!(
            certain("FOO=1 npm test 2>&1 >out.txt"),
            Some(vec!["FOO=1 npm test 2>&1 >out.txt".into()])
        );
        assert_eq!(certain("! true"), Some(vec!["true".into()]));
    }

    #[test]
    fn what_teamctl_would_have_to_guess_is_uncertain() {
        for line in [
            // ANSI-C quoting hides a quote: bash runs `touch PW`.
            "echo $'\\''; touch PW #'",
            "echo $(id)",
            "echo `id`",
            "echo $HOME",
            "echo ${X@P}",
            "echo $((1+2))",
            "cat <(ls)",
            "echo $\"hi\"",
            "{touch,PW}",
            "echo {1..3}",
            "cat ~root/x",
            "cat <<EOF\nx\nEOF",
            "(rm -rf /)",
            "{ ls; }",
            "if true; then ls; fi",
            "for f in a; do rm $f; done",
            "f() { ls; }",
            "[[ -f x ]]",
            "(( x = 1 ))",
            "X=(a b) ls",
            "echo 'unterminated",
            "",
            "   # only a comment",
            &"(".repeat(1000),
        ] {
            assert_eq!(parse(line).certain, None, "{line:?}");
        }
    }

    #[test]
    fn deny_rules_see_inside_substitutions_and_compounds() {
        let p = parse("echo $(rm -rf / && curl x) `wget y` <(nc z); (scp a b)");
        for want in ["rm -rf /", "curl x", "wget y", "nc z", "scp a b"] {
            assert!(
                p.anywhere.iter().any(|t| t == want),
                "{want}: {:?}",
                p.anywhere
            );
        }
    }
}
