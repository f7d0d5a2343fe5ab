//! What `send` and `ask` share: the recipient and text arguments, the text from stdin, and
//! your identity in the team (checked, and joined with `--join`) before anything is written.

use std::io::{IsTerminal, Read};

use anyhow::{Context, Result};
use teamctl::error::usage;
use teamctl::store::paths::MemberName;
use teamctl::team::config::Team;
use teamctl::team::mailbox::{self, Joined};

use crate::cli::context::Ctx;

/// How a verb names its arguments in errors.
pub(crate) struct Words {
    /// The text: `message`, `question`.
    pub(crate) text: &'static str,
    /// The recipient: `recipient`, `member`.
    pub(crate) recipient: &'static str,
    /// The verb's synopsis: `teamctl send <TO> [TEXT]`.
    pub(crate) synopsis: &'static str,
}

/// Splits `TO [TEXT]` (or, with `--all`, `TEXT` alone) into the recipient and the text
/// argument, named in errors as `words` says.
pub(crate) fn recipient_and_text(
    all: bool,
    to: Option<String>,
    text: Option<String>,
    words: &Words,
) -> Result<(Option<MemberName>, Option<String>)> {
    if all {
        if text.is_some() {
            return Err(usage(format!(
                "with --all, give only the {} TEXT (no {})",
                words.text, words.recipient
            )));
        }
        return Ok((None, to));
    }
    let to = to.ok_or_else(|| usage(format!("missing {}: {}", words.recipient, words.synopsis)))?;
    Ok((Some(MemberName::parse(&to)?), text))
}

/// The team and your identity in it (`--from`, else [`Ctx::identity`]), checked before
/// anything is written (no `team-lead` or `system` where that impersonates, unless `force`),
/// after joining the team as that name with `--join`.
pub(crate) fn sender(
    ctx: &Ctx,
    from: Option<&str>,
    join: bool,
    force: bool,
) -> Result<(Team, MemberName)> {
    if let Some(f) = from {
        MemberName::parse(f)?;
    }
    let team = ctx.team()?;
    let name = MemberName::parse(from.unwrap_or(&ctx.identity(&team)))?;
    team.check_sender(&name, force)?;
    if !join {
        return Ok((team, name));
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    if mailbox::join(&team, &name, &cwd, ctx.now, &ctx.lock)? == Joined::Added {
        crate::cli::output::hint(&format!(
            "joined team '{}' as '{name}': teammates can now reply to you",
            team.name
        ));
    }
    Ok((ctx.team()?, name))
}

/// The message body: the argument, or stdin for `-` or when absent on a non-terminal stdin.
pub(crate) fn message_text(arg: Option<String>) -> Result<String> {
    match arg.as_deref() {
        Some("-") => {}
        Some(_) => return Ok(arg.unwrap_or_default()),
        None if std::io::stdin().is_terminal() => {
            return Err(usage("no message text: give TEXT or pipe it on stdin"));
        }
        None => {}
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("could not read the message from stdin")?;
    // Like $(...): trailing newlines belong to the pipe, not the message.
    Ok(text.trim_end_matches(['\n', '\r']).to_string())
}
