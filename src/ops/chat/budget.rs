//! The spending cap in a chat (`bridge --max-cost … --warn-at`): each `--warn-at` crossing of a
//! limit is posted once (per team, and per member for `--max-cost-per-member`), and so is the
//! cap crossed; once that post is in the chat the bridge stops (exit 6, as `wait` would). The
//! spend is the team's reader's, read from its transcripts with the rest of the team. Each
//! post is a notice, journaled, so a restarted bridge posts none twice.

use chrono::{DateTime, Utc};

use super::journal::What;
use super::out::Outgoing;
use super::render::{Part, Post, visible};
use super::state::Bridge;
use crate::observe::budget::Cap;
use crate::store::paths::TeamName;

impl Bridge {
    /// Holds the teams' spend against `cap` (warnings from its `--warn-at`).
    pub fn with_cap(mut self, cap: Cap) -> Bridge {
        self.budget.cap = cap;
        self
    }

    /// The cap crossed, once its post is in the chat (the bridge then stops).
    pub fn over_budget(&self) -> Option<&str> {
        let (key, text) = self.budget.crossed.as_ref()?;
        self.told.contains(key).then_some(text.as_str())
    }

    /// The posts of `name`'s spend as its reader last read it: new `--warn-at` crossings, and
    /// the cap crossed (each once, across restarts too).
    pub(super) fn budget_posts(&mut self, name: &TeamName, now: DateTime<Utc>) -> Vec<Outgoing> {
        let cap = self.budget.cap;
        if !cap.is_set() {
            return Vec::new();
        }
        let Some(spend) = self
            .teams
            .get(name)
            .and_then(|r| r.spend())
            .map(|s| s.spend().clone())
        else {
            return Vec::new();
        };
        let warner = self.budget.warners.entry(name.clone()).or_default();
        let mut said: Vec<(String, String)> = warner
            .check(&cap, &spend)
            .into_iter()
            .map(|w| {
                let key = format!(
                    "{name} budget_warning {} {}",
                    w.limit.flag(),
                    w.member.as_deref().unwrap_or("")
                );
                (key, w.to_string())
            })
            .collect();
        if let Some(e) = cap.exceeded(&spend) {
            let key = format!("{name} budget_exceeded");
            let text = format!("budget exceeded: {e}");
            self.budget.crossed = Some((key.clone(), text.clone()));
            said.push((key, text));
        }
        said.into_iter()
            .filter(|(key, _)| !self.told.contains(key))
            .map(|(key, text)| {
                let mut record = self.record(What::Notice, now);
                record.team = Some(name.to_string());
                record.detail = Some(key);
                let post = Post {
                    parts: vec![
                        Part::Ours(format!("[{name}] ")),
                        // Member names are the teammates' own: shown as code.
                        Part::Theirs(visible(&text, false, 500)),
                    ],
                    code: None,
                };
                Outgoing { post, record }
            })
            .collect()
    }
}
