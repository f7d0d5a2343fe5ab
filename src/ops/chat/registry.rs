//! The transports teamctl bridges to, each in a file of its own: a new one is one line in
//! [`TRANSPORTS`]. A transport is started here, after its flags are checked ([`open`]).

use anyhow::Result;

use super::transport::{Chat, Flag, Options, Transport};
use crate::error::usage;

/// Every transport, in the order `--help` lists them.
pub static TRANSPORTS: &[&Transport] = &[
    &super::telegram::TRANSPORT,
    &super::slack::TRANSPORT,
    &super::webhook::TRANSPORT,
];

/// Starts `t` with `o`.
///
/// # Errors
/// A usage error for a flag `t` does not take (saying which transports do), or from `t`'s
/// own checks (a bad URL, no secret); whatever keeps it from starting (the `--listen` address
/// taken).
pub fn open(t: &Transport, o: Options) -> Result<Box<dyn Chat + Send>> {
    for flag in Flag::ALL {
        if flag.given(&o) && !t.takes.contains(&flag) {
            let owners: Vec<String> = TRANSPORTS
                .iter()
                .filter(|t| t.takes.contains(&flag))
                .map(|t| format!("`bridge {}`", t.name))
                .collect();
            return Err(usage(format!(
                "{} is for {} only",
                flag.name(),
                owners.join(" or ")
            )));
        }
    }
    (t.start)(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::child_env::SECRETS;
    use crate::ops::chat::{slack, telegram, webhook};

    /// Each transport's name is its own, and its secret is one no child gets.
    #[test]
    fn every_transport_is_named_once_and_its_secret_kept_from_children() {
        for (i, t) in TRANSPORTS.iter().enumerate() {
            assert!(
                !TRANSPORTS[..i].iter().any(|o| o.name == t.name),
                "{}",
                t.name
            );
            assert!(
                SECRETS.contains(&t.secret),
                "{} is not in child_env::SECRETS",
                t.secret
            );
        }
    }

    #[test]
    fn a_flag_of_another_transport_is_refused_naming_whose_it_is() {
        let options = |url: Option<&str>, api: Option<&str>| Options {
            chat: "42".into(),
            api: api.map(String::from),
            url: url.map(String::from),
            listen: None,
            secret: None,
            data_dir: None,
            clock: Box::new(chrono::Utc::now),
        };
        let err = |t, o| open(t, o).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            err(&telegram::TRANSPORT, options(Some("https://x"), None)),
            "--url is for `bridge webhook` only"
        );
        let api = err(&webhook::TRANSPORT, options(None, Some("https://x")));
        assert!(api.starts_with("--api is for `bridge "), "{api}");
        assert!(api.contains("`bridge telegram` or `bridge slack`"), "{api}");
        assert!(!api.contains("webhook"), "{api}");
        assert_eq!(
            err(&slack::TRANSPORT, options(None, None)),
            "set TEAMCTL_SLACK_TOKEN (never on the command line)"
        );
    }
}
