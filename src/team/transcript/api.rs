//! Where a session's calls to the Messages API stand, from its transcript: answered, being
//! retried (and why, when Claude Code wrote it), waiting for an answer, or failed once the
//! retries ran out. What each Claude Code version writes is in
//! `docs/research/claude-code-behaviour.md` §1:
//! - every request is an `api-request` line with a `requestDigest`; a retry repeats the digest;
//! - a headless session (2.1.332; a 2.1.112 pane teammate) writes each failed attempt it will
//!   retry as a `system`/`api_error` line: the HTTP status (or the connection error), the
//!   attempt, the maximum, the wait, Claude Code's one-line text, the rate-limit window;
//! - an interactive 2.1.332 session writes no such line: only the repeated digest tells;
//! - when the retries run out, a synthetic `assistant` entry (`isApiErrorMessage`) ends the turn
//!   with `apiErrorStatus` (absent for a connection error) and the text it showed.

use serde::{Deserialize, Serialize};

use crate::team::transcript::entry::Line;

/// A failed call Claude Code will retry, as its `api_error` line says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retry {
    /// The HTTP status (`None`: a connection error, or not recorded).
    pub status: Option<u16>,
    /// The connection error's code (`ECONNRESET`, `ConnectionIdle`), when there was no answer.
    pub connection: Option<String>,
    /// Claude Code's one-line text (`529 Overloaded`); teammate-reachable text: show escaped.
    pub text: Option<String>,
    /// Which attempt failed (1-based) and how many retries it makes at most.
    pub attempt: Option<u32>,
    /// The most retries.
    pub max_retries: Option<u32>,
    /// When the line was written, and how long until the next attempt.
    pub at: Option<String>,
    /// Milliseconds until the next attempt.
    pub retry_in_ms: Option<u64>,
    /// When the subscription's usage window resets (epoch seconds), when Claude Code recorded
    /// one (`rateLimits.resetsAt`), and which window it is (`five_hour`, …).
    pub resets_at: Option<i64>,
    /// The window (`rateLimits.rateLimitType`).
    pub window: Option<String>,
}

/// The retries ran out: the synthetic entry that ended the turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// `apiErrorStatus` (`None` for a connection error).
    pub status: Option<u16>,
    /// `error` (`rate_limit`, `server_error`, …).
    pub kind: Option<String>,
    /// The text Claude Code showed (`API Error: Request rejected (429) · …`).
    pub text: Option<String>,
    /// When.
    pub at: Option<String>,
}

/// Where the session's API calls stand.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Api {
    /// The digest of the request waiting for an answer, if one is.
    pub digest: Option<String>,
    /// How many times that request was sent (2 and more: retried).
    pub sends: u32,
    /// When it was first sent, and when last.
    pub first_sent: Option<String>,
    /// When it was last sent.
    pub last_sent: Option<String>,
    /// The last failure Claude Code wrote for it.
    pub retry: Option<Retry>,
    /// The retries ran out and nothing came since.
    pub failed: Option<Failure>,
}

/// The `error` object of an `api_error` line (2.1.332 and 2.1.112 shapes).
#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    status: Option<u16>,
    #[serde(default)]
    formatted: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    connection: Option<Connection>,
    #[serde(default, rename = "rateLimits")]
    rate_limits: Option<RateLimits>,
}

#[derive(Deserialize)]
struct Connection {
    #[serde(default)]
    code: Option<String>,
}

#[derive(Deserialize)]
struct RateLimits {
    #[serde(default, rename = "rateLimitType")]
    kind: Option<String>,
    #[serde(default, rename = "resetsAt")]
    resets_at: Option<i64>,
}

impl Api {
    /// An `api-request` line: a new request, or the same one again (a retry).
    pub fn request(&mut self, l: &Line) {
        let digest = l.request_digest.as_deref();
        let at = l.timestamp.as_ref().map(|t| t.to_string());
        if digest.is_some() && digest == self.digest.as_deref() {
            self.sends = self.sends.saturating_add(1);
        } else {
            *self = Api {
                digest: digest.map(String::from),
                sends: 1,
                first_sent: at.clone(),
                ..Api::default()
            };
        }
        self.last_sent = at;
    }

    /// A `system`/`api_error` line: the attempt just made failed and will be retried.
    pub fn error(&mut self, l: &Line) {
        let body: Option<ErrorBody> = l.error.and_then(|e| serde_json::from_str(e.get()).ok());
        let body = body.as_ref();
        let text = body
            .and_then(|b| b.formatted.clone().or_else(|| b.message.clone()))
            .map(|t| crate::team::model::first_line(&t, 200));
        self.retry = Some(Retry {
            status: body.and_then(|b| b.status),
            connection: body.and_then(|b| b.connection.as_ref()?.code.clone()),
            text,
            attempt: l.retry_attempt,
            max_retries: l.max_retries,
            at: l.timestamp.as_ref().map(|t| t.to_string()),
            retry_in_ms: l.retry_in_ms.map(|ms| ms.max(0.0) as u64),
            resets_at: body.and_then(|b| b.rate_limits.as_ref()?.resets_at),
            window: body.and_then(|b| b.rate_limits.as_ref()?.kind.clone()),
        });
        if self.digest.is_none() {
            // 2.1.112 writes no digest: the error itself says a request is being retried.
            self.sends = self.sends.max(1);
        }
    }

    /// An answer came (a real response): nothing is pending or failing any more.
    pub fn answered(&mut self) {
        *self = Api::default();
    }

    /// The synthetic entry that ends a turn whose retries ran out.
    pub fn gave_up(&mut self, l: &Line, text: Option<String>) {
        let kind = l
            .error
            .and_then(|e| serde_json::from_str::<String>(e.get()).ok());
        *self = Api {
            failed: Some(Failure {
                status: l.api_error_status,
                kind,
                text: text.map(|t| crate::team::model::first_line(&t, 200)),
                at: l.timestamp.as_ref().map(|t| t.to_string()),
            }),
            ..Api::default()
        };
    }

    /// A new prompt or message: a failure no longer holds the member back.
    pub fn prompted(&mut self) {
        self.failed = None;
    }

    /// Whether a request was sent and nothing (answer or error) has come since.
    pub fn waiting_for_answer(&self) -> bool {
        self.digest.is_some() || self.sends > 0
    }
}
