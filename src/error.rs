//! The typed errors the command line branches on (the binary maps each to its exit code).
//! Every other failure is an `anyhow::Error` with context and means exit code 1.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// A failure with its own exit code. Found anywhere in an `anyhow` chain with `downcast_ref`.
#[derive(Debug)]
pub enum Error {
    /// Input that breaks a rule before any file is touched: a bad team or member name, an empty
    /// message, an unknown frame type. Exit code 2, like clap's own usage errors.
    Usage(String),
    /// The lock directory could not be taken before the deadline. Nothing was written. Exit 3.
    LockTimeout {
        /// The lock directory that stayed held.
        lock: PathBuf,
        /// How long teamctl tried.
        waited: Duration,
    },
    /// A wait (`watch --timeout`, `send --wait`) ran out before what it waited for. Exit 3.
    Timeout(String),
    /// A teammate went idle without answering what it was asked (`ask`). Exit 5.
    Unanswered(String),
    /// The team's spend crossed `--max-cost` or `--max-tokens` (`wait`, `ask`, `run`). Exit 6.
    Budget(String),
    /// A member stuck for a reason whose action was `exit` (`--on-rate-limit`, `--on-stall`,
    /// `--on-dead` of `wait` and `run`). Exit 7 (the API refused), 8 (stalled or no answer)
    /// or 9 (dead).
    Stuck(Stuck, String),
    /// A merge queue set members aside (a conflict, a failed check, a branch gone) and merged
    /// the others (`merge`). Exit 10.
    SetAside(String),
    /// After writing, the file did not read back as written. Exit 4.
    VerifyFailed {
        /// The file that was written.
        path: PathBuf,
        /// What did not match.
        reason: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg)
            | Error::Timeout(msg)
            | Error::Unanswered(msg)
            | Error::Budget(msg)
            | Error::SetAside(msg)
            | Error::Stuck(_, msg) => f.write_str(msg),
            Error::LockTimeout { lock, waited } => write!(
                f,
                "could not lock {} within {} ms: another writer holds it (nothing was written)",
                lock.display(),
                waited.as_millis()
            ),
            Error::VerifyFailed { path, reason } => {
                write!(
                    f,
                    "read-back verification failed for {}: {reason}",
                    path.display()
                )
            }
        }
    }
}

impl std::error::Error for Error {}

/// Why a team stopped with [`Error::Stuck`]: each has its own exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stuck {
    /// The API refused a member's calls: a rate limit, an overload, another failure. Exit 7.
    Api,
    /// A member stalled, or its request had no answer. Exit 8.
    Stall,
    /// A member's pane or process is gone with work waiting. Exit 9.
    Dead,
}

impl Stuck {
    /// The exit code.
    pub fn code(self) -> u8 {
        match self {
            Stuck::Api => 7,
            Stuck::Stall => 8,
            Stuck::Dead => 9,
        }
    }
}

/// Shorthand for an [`Error::Usage`] wrapped in `anyhow`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    Error::Usage(msg.into()).into()
}
