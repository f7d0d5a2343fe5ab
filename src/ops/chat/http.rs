//! What every transport's HTTP shares: an API URL that is https, or http only to this machine
//! (a token never crosses a network in the clear); an agent on ureq (blocking, no async
//! runtime, no redirects); and error text with the secret cut out.

use std::time::Duration;

use anyhow::{Result, bail};
use url::{Host, Url};

use crate::error::usage;

/// Reads an API or webhook URL: `https`, or `http` to a loopback address (`127.0.0.0/8`,
/// `::1`, `localhost`).
///
/// # Errors
/// A usage error for anything else.
pub fn api_url(s: &str) -> Result<Url> {
    let url = Url::parse(s).map_err(|e| usage(format!("invalid URL '{s}': {e}")))?;
    let loopback = match url.host() {
        Some(Host::Ipv4(a)) => a.is_loopback(),
        Some(Host::Ipv6(a)) => a.is_loopback(),
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match url.scheme() {
        "https" if url.host().is_some() => {}
        "http" if loopback => {}
        "http" => {
            return Err(usage(format!(
                "refusing {s}: http only to this machine (127.0.0.1, ::1, localhost), else https, \
                 so a token never crosses a network in the clear"
            )));
        }
        _ => {
            return Err(usage(format!(
                "invalid URL '{s}': https:// or http://127.0.0.1 only"
            )));
        }
    }
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() {
        bail!(usage(format!(
            "invalid URL '{s}': no user, password or query (the token comes from the environment)"
        )));
    }
    Ok(url)
}

/// An agent that answers every status (the caller reads the service's own error body), never
/// follows a redirect, and gives up after `timeout`.
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

/// `text` with every occurrence of `secret` replaced by `<token>` (URL-encoded forms too).
pub fn redact(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        return text.to_string();
    }
    let encoded: String =
        percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
            .to_string();
    text.replace(secret, "<token>").replace(&encoded, "<token>")
}

/// The next wait after a failure: doubled, from 1 s up to 60 s.
pub fn backoff(last: Duration) -> Duration {
    (last * 2).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

/// How many times a post waits out a 429 before it gives up.
const RATE_LIMIT_TRIES: usize = 3;

/// Why a call to a chat service's API failed.
pub(super) enum Failure {
    /// 429: wait this long.
    RateLimited(Duration),
    /// The service refused this request for good (a 400 Bad Request: too long, malformed):
    /// the same request would be refused again (the token cut out).
    Refused(String),
    /// Anything else, which may succeed later: a 5xx, the network, the bot or the chat refused
    /// as a whole (the token cut out).
    Other(String),
}

/// A post the chat service refused for good ([`Failure::Refused`]): sent again it would be
/// refused again, so it is dropped (journaled) and never holds up the next post.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Whether an HTTP status refuses the request itself for good: 400 Bad Request, 413 Content
/// Too Large, 422 Unprocessable Content. Others may succeed later: 429 (waited out), a 5xx,
/// and 401, 403 and 404, which refuse the bot or the chat as a whole (every post alike, so
/// dropping one would drop them all; they are backed off and tried again).
pub(super) fn refused_for_good(status: u16) -> bool {
    matches!(status, 400 | 413 | 422)
}

impl Failure {
    /// What a polling thread says after this failure of `service`'s `method`; `wait` (the last
    /// wait) becomes the wait before it tries again: as told for a 429, else backed off.
    pub(super) fn told(self, service: &str, method: &str, wait: &mut Duration) -> String {
        match self {
            Failure::RateLimited(d) => {
                *wait = d;
                format!(
                    "{service} {method}: rate limited (429), waiting {}s as told",
                    d.as_secs()
                )
            }
            Failure::Other(e) | Failure::Refused(e) => {
                *wait = backoff(*wait);
                format!("{service} {e} (trying again in {}s)", wait.as_secs())
            }
        }
    }
}

/// Posts by `call` to `service`'s `method`, waiting as told (and saying so through `warn`) while
/// it is rate limited, at most [`RATE_LIMIT_TRIES`] times.
///
/// # Errors
/// [`Refused`] for a post refused for good; any other failure, or a service still rate
/// limited.
pub(super) fn post(
    service: &str,
    method: &str,
    warn: &mut dyn FnMut(&str),
    mut call: impl FnMut() -> Result<(), Failure>,
) -> Result<()> {
    for _ in 0..RATE_LIMIT_TRIES {
        match call() {
            Ok(()) => return Ok(()),
            Err(Failure::RateLimited(d)) => {
                warn(&format!(
                    "{service} {method}: rate limited (429), waiting {}s as told",
                    d.as_secs()
                ));
                std::thread::sleep(d);
            }
            Err(Failure::Refused(e)) => return Err(Refused(format!("{service} {e}")).into()),
            Err(Failure::Other(e)) => bail!("{service} {e}"),
        }
    }
    bail!("{service} {method}: still rate limited")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_anywhere_http_only_to_this_machine() {
        for ok in [
            "https://api.telegram.org",
            "http://127.0.0.1:8081",
            "http://127.9.9.9/x",
            "http://[::1]:80",
            "http://localhost:1",
        ] {
            assert!(api_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://api.telegram.org",
            "http://10.0.0.1",
            "http://127.0.0.1.evil.com",
            "ftp://127.0.0.1",
            "file:///etc/passwd",
            "https://u:p@api.telegram.org",
            "https://api.telegram.org/?token=1",
            "not a url",
        ] {
            assert!(api_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn secrets_are_cut_out_of_text() {
        let t = "http://x/bot123:AB/getUpdates and bot123%3AAB";
        assert_eq!(
            redact(t, "123:AB"),
            "http://x/bot<token>/getUpdates and bot<token>"
        );
        assert_eq!(redact("x", ""), "x");
        assert_eq!(backoff(Duration::ZERO), Duration::from_secs(1));
        assert_eq!(backoff(Duration::from_secs(40)), Duration::from_secs(60));
    }
}
