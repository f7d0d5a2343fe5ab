//! What a chat user may type: `approve <code>`, `deny <code> [reason]`, `say <member> <text>`
//! and `status`. A leading `/` (Telegram's bot commands) and a `@botname` after the verb are
//! allowed; the verb's case does not matter. Anything else is not a command.

use super::code::Code;

/// One command from the chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `approve <code>`.
    Approve(Code),
    /// `deny <code> [reason]`.
    Deny(Code, Option<String>),
    /// `say [team/]<member> <text>`.
    Say(Say),
    /// `status`.
    Status,
}

/// A message from the chat to a member: `say [team/]<member> <text>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Say {
    /// The team, when named.
    pub team: Option<String>,
    /// The member.
    pub member: String,
    /// The message.
    pub text: String,
}

/// Why a text is not a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCommand {
    /// Not one of the verbs: ignored.
    Other,
    /// A verb with bad arguments: what is wrong, for a reply.
    Bad(String),
}

/// Reads a chat message as a command.
///
/// # Errors
/// [`NotCommand::Other`] for ordinary text, [`NotCommand::Bad`] for a verb used wrongly.
pub fn parse(text: &str) -> Result<Command, NotCommand> {
    let text = text.trim();
    let (verb, rest) = text
        .split_once(char::is_whitespace)
        .map_or((text, ""), |(v, r)| (v, r.trim()));
    let verb = verb.strip_prefix('/').unwrap_or(verb);
    let verb = verb.split_once('@').map_or(verb, |(v, _)| v);
    let (first, tail) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(a, b)| (a, b.trim()));
    let code = || {
        Code::parse(first).ok_or_else(|| {
            NotCommand::Bad(format!(
                "'{verb} {}' needs a code: the {} characters in the request's message",
                first.chars().take(20).collect::<String>(),
                super::code::LEN
            ))
        })
    };
    match verb.to_ascii_lowercase().as_str() {
        "approve" if tail.is_empty() => Ok(Command::Approve(code()?)),
        "approve" => Err(NotCommand::Bad(
            "approve takes only the code (deny takes a reason)".into(),
        )),
        "deny" => Ok(Command::Deny(
            code()?,
            (!tail.is_empty()).then(|| tail.to_string()),
        )),
        "say" if first.is_empty() || tail.is_empty() => Err(NotCommand::Bad(
            "say needs a member and a message: say alice check the tests".into(),
        )),
        "say" => {
            let (team, member) = first
                .split_once('/')
                .map_or((None, first), |(t, m)| (Some(t.to_string()), m));
            Ok(Command::Say(Say {
                team,
                member: member.to_string(),
                text: tail.to_string(),
            }))
        }
        "status" => Ok(Command::Status),
        _ => Err(NotCommand::Other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = "ab12cd34ef";

    #[test]
    fn the_four_verbs() {
        let c = Code::parse(CODE).unwrap();
        assert_eq!(parse("approve ab12cd34ef"), Ok(Command::Approve(c.clone())));
        assert_eq!(
            parse("/Approve@team_bot  AB12-CD34-EF "),
            Ok(Command::Approve(c.clone()))
        );
        assert_eq!(parse("deny ab12cd34ef"), Ok(Command::Deny(c.clone(), None)));
        assert_eq!(
            parse("deny ab12cd34ef  not on main\nplease"),
            Ok(Command::Deny(c, Some("not on main\nplease".into())))
        );
        assert_eq!(
            parse("say alice run the tests again"),
            Ok(Command::Say(Say {
                team: None,
                member: "alice".into(),
                text: "run the tests again".into()
            }))
        );
        assert_eq!(
            parse("say ci/alice hi"),
            Ok(Command::Say(Say {
                team: Some("ci".into()),
                member: "alice".into(),
                text: "hi".into()
            }))
        );
        assert_eq!(parse("STATUS"), Ok(Command::Status));
    }

    #[test]
    fn other_text_is_no_command_and_bad_arguments_say_why() {
        for t in ["", "hello", "approved!", "approvex ab12cd34ef"] {
            assert_eq!(parse(t), Err(NotCommand::Other), "{t}");
        }
        for t in [
            "approve",
            "approve nope",
            "approve ab12cd34ef yes",
            "deny",
            "say",
            "say alice",
        ] {
            assert!(matches!(parse(t), Err(NotCommand::Bad(_))), "{t}");
        }
    }
}
