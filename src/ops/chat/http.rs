//! What every transport's HTTP shares: an API URL that is https, or http only to this machine
//! (a token never crosses a network in the clear); the one client every transport posts and
//! reads with ([`Client`]: one agent on ureq, blocking, no async runtime, no redirects); error
//! text with the secret cut out; what a failure is, which post is refused for good, and how a
//! rate limit is waited out.

use std::fmt::Display;
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

/// How long a request may take, but for a long poll ([`Client::waiting`]).
const TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read.
const MAX_ANSWER: u64 = 8 << 20;
/// The longest `Retry-After` honoured in one wait.
pub(super) const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// The one HTTP client every transport posts and reads with: an agent on ureq (blocking; TLS by
/// rustls; a proxy as ureq reads it from the environment) that answers every status (the
/// caller reads the service's own error body), never follows a redirect, gives up on a request
/// after 30 s (a long poll waits longer: [`Client::waiting`]) and reads an answer up to 8 MiB.
/// Every error it makes starts with the service's name and has the secret cut out.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    service: &'static str,
    secret: String,
    timeout: Duration,
}

impl Client {
    /// A client of `service` (`telegram`, `slack`, `webhook`) with `secret`, cut out of every
    /// error.
    pub fn new(service: &'static str, secret: &str) -> Client {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        Client {
            agent,
            service,
            secret: secret.to_string(),
            timeout: TIMEOUT,
        }
    }

    /// This client (the same agent), its requests given up after `timeout` (a long poll).
    pub fn waiting(&self, timeout: Duration) -> Client {
        Client {
            timeout,
            ..self.clone()
        }
    }

    /// How `method` is named in what is said: `telegram sendMessage`, or the service alone
    /// when `method` is empty.
    pub fn what(&self, method: &str) -> String {
        match method {
            "" => self.service.to_string(),
            m => format!("{} {m}", self.service),
        }
    }

    /// `what: text` ([`Client::what`]), the secret cut out.
    pub fn said(&self, method: &str, text: impl Display) -> String {
        redact(&format!("{}: {text}", self.what(method)), &self.secret)
    }

    /// A failure of `method` that may pass later ([`Failure::Other`]).
    pub(super) fn failed(&self, method: &str, text: impl Display) -> Failure {
        Failure::Other(self.said(method, text))
    }

    /// POSTs `body` (JSON) to `url` with `headers` (`Content-Type: application/json` unless
    /// they name one): the answer, whatever its status.
    ///
    /// # Errors
    /// The service could not be reached ([`Failure::Other`]).
    pub(super) fn post_json<'a>(
        &'a self,
        method: &'a str,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Answer<'a>, Failure> {
        let mut req = self
            .agent
            .post(url)
            .config()
            .timeout_global(Some(self.timeout))
            .build();
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            req = req.header("Content-Type", "application/json");
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send(body).map_err(|e| self.failed(method, e))?;
        Ok(Answer {
            client: self,
            method,
            resp,
        })
    }

    /// GETs `url` with `headers` and `query`: the answer, whatever its status.
    ///
    /// # Errors
    /// The service could not be reached ([`Failure::Other`]).
    pub(super) fn get<'a>(
        &'a self,
        method: &'a str,
        url: &str,
        headers: &[(&str, &str)],
        query: &[(&str, &str)],
    ) -> Result<Answer<'a>, Failure> {
        let mut req = self
            .agent
            .get(url)
            .config()
            .timeout_global(Some(self.timeout))
            .build();
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        for (k, v) in query {
            req = req.query(*k, *v);
        }
        let resp = req.call().map_err(|e| self.failed(method, e))?;
        Ok(Answer {
            client: self,
            method,
            resp,
        })
    }
}

/// What a service answered to one request.
pub(super) struct Answer<'a> {
    client: &'a Client,
    method: &'a str,
    resp: ureq::http::Response<ureq::Body>,
}

impl Answer<'_> {
    /// The HTTP status.
    pub(super) fn status(&self) -> u16 {
        self.resp.status().as_u16()
    }

    /// How long its `Retry-After` header says to wait (1 s when it says nothing a number of
    /// seconds), at most [`MAX_RETRY_AFTER`].
    pub(super) fn retry_after(&self) -> Duration {
        let secs = self
            .resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(1);
        Duration::from_secs(secs).min(MAX_RETRY_AFTER)
    }

    /// The body as text (up to 8 MiB).
    ///
    /// # Errors
    /// It could not be read ([`Failure::Other`]).
    pub(super) fn text(self) -> Result<String, Failure> {
        self.resp
            .into_body()
            .with_config()
            .limit(MAX_ANSWER)
            .read_to_string()
            .map_err(|e| self.client.failed(self.method, e))
    }
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

/// Why a call to a chat service's API failed (each text as [`Client::said`] says it: the
/// service and method first, the token cut out).
pub(super) enum Failure {
    /// 429: wait this long.
    RateLimited(Duration),
    /// The service refused this request for good (a 400 Bad Request: too long, malformed):
    /// the same request would be refused again.
    Refused(String),
    /// Anything else, which may succeed later: a 5xx, the network, the bot or the chat refused
    /// as a whole.
    Other(String),
}

/// A post the chat service refused for good (a 400 Bad Request, …): sent again it would be
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
    /// What a polling thread says after this failure of `what` (`telegram getUpdates`); `wait`
    /// (the last wait) becomes the wait before it tries again: as told for a 429, else backed
    /// off.
    pub(super) fn told(self, what: &str, wait: &mut Duration) -> String {
        match self {
            Failure::RateLimited(d) => {
                *wait = d;
                format!(
                    "{what}: rate limited (429), waiting {}s as told",
                    d.as_secs()
                )
            }
            Failure::Other(e) | Failure::Refused(e) => {
                *wait = backoff(*wait);
                format!("{e} (trying again in {}s)", wait.as_secs())
            }
        }
    }
}

/// Posts by `call` to `what` (`slack chat.postMessage`), waiting as told (and saying so through
/// `warn`) while it is rate limited, at most [`RATE_LIMIT_TRIES`] times.
///
/// # Errors
/// [`Refused`] for a post refused for good; any other failure, or a service still rate
/// limited.
pub(super) fn post(
    what: &str,
    warn: &mut dyn FnMut(&str),
    mut call: impl FnMut() -> Result<(), Failure>,
) -> Result<()> {
    for _ in 0..RATE_LIMIT_TRIES {
        match call() {
            Ok(()) => return Ok(()),
            Err(Failure::RateLimited(d)) => {
                warn(&format!(
                    "{what}: rate limited (429), waiting {}s as told",
                    d.as_secs()
                ));
                std::thread::sleep(d);
            }
            Err(Failure::Refused(e)) => return Err(Refused(e).into()),
            Err(Failure::Other(e)) => bail!("{e}"),
        }
    }
    bail!("{what}: still rate limited")
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

    /// A long poll's client waits as long as it is told, on the agent every request shares:
    /// a server that never answers is given up on then, not after the 30 s of a post.
    #[test]
    fn a_client_gives_up_when_told_and_says_so_without_its_secret() {
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/botsecret-123/getUpdates",
            silent.local_addr().unwrap()
        );
        let client = Client::new("telegram", "secret-123").waiting(Duration::from_millis(300));
        let started = std::time::Instant::now();
        let Err(Failure::Other(e)) = client.post_json("getUpdates", &url, &[], b"{}") else {
            panic!("a server that never answers was taken as an answer");
        };
        assert!(started.elapsed() < Duration::from_secs(10), "{e}");
        assert!(e.starts_with("telegram getUpdates: "), "{e}");
        assert!(!e.contains("secret-123"), "{e}");
        assert_eq!(client.what(""), "telegram");
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
