//! The bridge's loop, whatever the chat ([`Chat`]): read the teams, post what is new (backing
//! off while the chat refuses), hear what the chat said, until a deadline or the team is gone.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::hear::Incoming;
use super::http::Refused;
use super::journal::{Record, What};
use super::out::Outgoing;
use super::render::Post;
use super::state::{Bridge, Scope};
use super::transport::{Chat, Inbound};
use crate::team::config::Team;

/// How often the teams are read for new requests while the chat is quiet.
pub const LOOK_EVERY: Duration = Duration::from_millis(250);

/// What the loop tells its caller about, and asks of it. `teamctl bridge` answers by its
/// rules before each look ([`Hooks::before_look`]); a run plugs its own in through the rest
/// (each with a default that does nothing): its notes each round ([`Hooks::round`]: its team,
/// its events to post, its lead's permission prompt), the answer taken after the chat was heard
/// ([`Hooks::heard`]), and a chat that goes on past a journal that failed
/// ([`Hooks::hear_failed`]).
pub trait Hooks {
    /// Before each look at `team`: answer what the rules decide (`--policy`).
    ///
    /// # Errors
    /// An error ends the bridge.
    fn before_look(&mut self, _team: &Team) -> Result<()> {
        Ok(())
    }
    /// A journaled record (a post, an answer, a refusal, the end).
    ///
    /// # Errors
    /// An error ends the bridge (such as a closed pipe).
    fn record(&mut self, r: &Record) -> Result<()>;
    /// A warning.
    fn warn(&mut self, msg: &str);
    /// At the start of each round: what the caller brings to `bridge` (the team to serve:
    /// [`Bridge::serve`]) and to `ahead` (what to post before the look). `Some` ends the loop.
    fn round(
        &mut self,
        _bridge: &mut Bridge,
        _ahead: &mut Ahead,
        _now: DateTime<Utc>,
    ) -> Option<Stop> {
        None
    }
    /// After each round's messages were heard (a run takes the answer to its lead's prompt:
    /// [`Bridge::take_verdict`]).
    fn heard(&mut self, _bridge: &mut Bridge) {}
    /// A message could not be heard (its answer could not be journaled, or told): `Err` ends
    /// the bridge, as it does by default.
    ///
    /// # Errors
    /// `e`, unless the caller goes on.
    fn hear_failed(&mut self, e: anyhow::Error) -> Result<()> {
        Err(e)
    }
}

/// What the caller posts before the look, in this order (a run's: [`Hooks::round`]).
#[derive(Debug, Default)]
pub struct Ahead {
    /// A post with a code, journaled once the chat has it (the lead's permission prompt).
    pub asking: Option<Outgoing>,
    /// Posts that are told, not journaled (a run's events); one the chat refuses for good is
    /// dropped.
    pub posts: VecDeque<Post>,
}

/// Why the caller ends the loop ([`Hooks::round`]).
#[derive(Debug)]
pub struct Stop {
    /// The `end` record's detail (`run_ended`).
    pub why: &'static str,
    /// The last post, after what is still [`Ahead`] (none: nothing more is said).
    pub bye: Option<Post>,
}

/// Runs the bridge until `deadline` (returns `timeout`), its team is gone (`team_gone`; a
/// run's bridge outlives its team, whose folder the run's cleanup removes: it stops looking),
/// the cap is crossed (`budget`) or the hooks stop it ([`Hooks::round`]), with `now` as its
/// clock. The last record is the `end`, given to the hooks (not journaled).
///
/// # Errors
/// The journal cannot be written; errors of the hooks.
pub fn run(
    bridge: &mut Bridge,
    chat: &mut dyn Chat,
    hooks: &mut dyn Hooks,
    deadline: Option<Instant>,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<&'static str> {
    let mut c = Cycle {
        bridge,
        chat,
        hooks,
        now,
        ahead: Ahead::default(),
    };
    let mut backoff = Duration::ZERO;
    let mut next_post = Instant::now();
    let stop = loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break said_bye(c.bridge, "timeout");
        }
        if let Some(stop) = c.hooks.round(c.bridge, &mut c.ahead, now()) {
            break stop;
        }
        let looking = !c.bridge.team_gone();
        if !looking && !matches!(c.bridge.scope, Scope::Run(_)) {
            break said_bye(c.bridge, "team_gone");
        }
        if c.bridge.over_budget().is_some() {
            break said_bye(c.bridge, "budget");
        }
        if looking {
            c.refresh()?;
        }
        if Instant::now() >= next_post {
            match c.post_pending(looking, now()) {
                Ok(()) => backoff = Duration::ZERO,
                Err(e) => {
                    backoff = super::http::backoff(backoff);
                    c.hooks.warn(&format!(
                        "could not post to the chat: {e:#} (trying again in {}s)",
                        backoff.as_secs()
                    ));
                    next_post = Instant::now() + backoff;
                }
            }
        }
        let max = deadline.map_or(LOOK_EVERY, |d| {
            d.saturating_duration_since(Instant::now()).min(LOOK_EVERY)
        });
        for inbound in c.chat.receive(max) {
            match inbound {
                Inbound::Warning(w) => c.hooks.warn(&w),
                Inbound::Message(m) => {
                    if let Err(e) = c.hear(&m, now()) {
                        c.hooks.hear_failed(e)?;
                    }
                }
            }
        }
        c.hooks.heard(c.bridge);
    };
    c.finish(stop)
}

/// The bridge's own stop, and its last post: the person learns it has stopped answering.
fn said_bye(bridge: &Bridge, why: &'static str) -> Stop {
    let names: Vec<String> = bridge.teams().map(|t| t.name.to_string()).collect();
    let bye = Post::say(format!(
        "[{}] the bridge stopped ({}): answer at a terminal from now on",
        names.join(", "),
        why.replace('_', " ")
    ));
    Stop {
        why,
        bye: Some(bye),
    }
}

/// What one run of the loop works with.
struct Cycle<'a> {
    bridge: &'a mut Bridge,
    chat: &'a mut dyn Chat,
    hooks: &'a mut dyn Hooks,
    now: &'a dyn Fn() -> DateTime<Utc>,
    ahead: Ahead,
}

impl Cycle<'_> {
    /// The teams as they are now, and the hooks' look at each first.
    fn refresh(&mut self) -> Result<()> {
        for w in self.bridge.refresh() {
            self.hooks.warn(&w);
        }
        let teams: Vec<Team> = self.bridge.teams().cloned().collect();
        for t in &teams {
            self.hooks.before_look(t)?;
        }
        Ok(())
    }

    /// The end, best effort (the bridge is stopping): a prompt still open withdrawn, what is
    /// still ahead and the last post posted, and the `end` told.
    fn finish(mut self, stop: Stop) -> Result<&'static str> {
        let mut end = self.bridge.record(What::End, (self.now)());
        end.detail = Some(stop.why.to_string());
        let withdrawn = match self.bridge.withdraw_prompt((self.now)()) {
            Ok(p) => p,
            Err(e) => {
                self.hooks.warn(&format!("{e:#}"));
                None
            }
        };
        let posts = std::mem::take(&mut self.ahead.posts);
        for p in withdrawn.iter().chain(&posts).chain(&stop.bye) {
            if let Err(e) = self.post(p) {
                self.hooks
                    .warn(&format!("could not post to the chat: {e:#}"));
            }
        }
        self.hooks.record(&end)?;
        Ok(stop.why)
    }

    /// Posts `p`, a warning said through the hooks.
    fn post(&mut self, p: &Post) -> Result<()> {
        let hooks = &mut *self.hooks;
        self.chat.post(p, &mut |w| hooks.warn(w))
    }

    /// Posts what is [`Ahead`] (the prompt, then the caller's posts), then (when `looking`)
    /// what the look finds; stops at the first failure that may pass (what is left is posted
    /// next time).
    fn post_pending(&mut self, looking: bool, now: DateTime<Utc>) -> Result<()> {
        if let Some(o) = self.ahead.asking.take() {
            match self.deliver(&o, now) {
                Ok(r) => self.hooks.record(&r)?,
                Err(e) => {
                    self.ahead.asking = Some(o);
                    return Err(e);
                }
            }
        }
        while let Some(p) = self.ahead.posts.pop_front() {
            match self.post(&p) {
                Ok(()) => {}
                // Refused for good: dropped, never holding up the next.
                Err(e) if e.downcast_ref::<Refused>().is_some() => self.hooks.warn(&format!(
                    "the chat refused a post for good, and it is dropped: {e:#}"
                )),
                Err(e) => {
                    self.ahead.posts.push_front(p);
                    return Err(e);
                }
            }
        }
        if !looking {
            return Ok(());
        }
        self.post_all(now)
    }

    /// Posts what a look found, journaling each once the chat has it; stops at the first
    /// failure that may pass (a post refused for good is dropped and the next posted:
    /// [`Cycle::deliver`]).
    fn post_all(&mut self, now: DateTime<Utc>) -> Result<()> {
        let (out, warnings) = self.bridge.look(now);
        for w in warnings {
            self.hooks.warn(&w);
        }
        for o in out {
            let r = self.deliver(&o, now)?;
            self.hooks.record(&r)?;
        }
        Ok(())
    }

    /// Posts `o` and journals it once the chat has it; returns the record to tell. A post the
    /// chat refuses for good ([`Refused`]: a 400 Bad Request, …) is dropped instead, said
    /// through the hooks and journaled as `dropped` ([`Bridge::dropped`]), so it never holds
    /// up the next post.
    ///
    /// # Errors
    /// The chat could not take it now (unreachable, a 5xx, still rate limited: try again
    /// later); the journal could not be written.
    fn deliver(&mut self, o: &Outgoing, now: DateTime<Utc>) -> Result<Record> {
        match self.post(&o.post) {
            Ok(()) => {
                self.bridge.posted(o)?;
                Ok(o.record.clone())
            }
            Err(e) => {
                let Some(refused) = e.downcast_ref::<Refused>() else {
                    return Err(e);
                };
                self.hooks.warn(&format!(
                    "the chat refused a post for good, and it is dropped (never tried again \
                     while the bridge runs): {refused}"
                ));
                self.bridge.dropped(o, &refused.0, now)
            }
        }
    }

    /// Hears one message and posts the reply (a reply that cannot be posted is a warning: what
    /// the command did is journaled and stands).
    fn hear(&mut self, m: &Incoming, now: DateTime<Utc>) -> Result<()> {
        let heard = self.bridge.hear(m, now)?;
        if let Some(r) = &heard.record {
            self.hooks.record(r)?;
        }
        if let Some(reply) = &heard.reply
            && let Err(e) = self.post(reply)
        {
            self.hooks
                .warn(&format!("could not post a reply to the chat: {e:#}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::ops::chat::{Ground, Settings};
    use crate::store::lock::LockOptions;
    use crate::store::paths::{Layout, TeamName};
    use crate::team::records::Records;

    /// A chat that keeps what it was given to post and hears nothing.
    struct Kept(Arc<Mutex<Vec<String>>>);

    impl Chat for Kept {
        fn post(&mut self, post: &Post, _warn: &mut dyn FnMut(&str)) -> Result<()> {
            self.0.lock().unwrap().push(post.text());
            Ok(())
        }

        fn receive(&mut self, _max: Duration) -> Vec<Inbound> {
            Vec::new()
        }
    }

    /// Hooks as a run's: the team formed at once (and gone: its folder was never made), a
    /// post of its own, its end on the third round.
    #[derive(Default)]
    struct Run {
        rounds: usize,
        told: Vec<Record>,
    }

    impl Hooks for Run {
        fn record(&mut self, r: &Record) -> Result<()> {
            self.told.push(r.clone());
            Ok(())
        }

        fn warn(&mut self, _msg: &str) {}

        fn round(
            &mut self,
            b: &mut Bridge,
            ahead: &mut Ahead,
            _now: DateTime<Utc>,
        ) -> Option<Stop> {
            self.rounds += 1;
            match self.rounds {
                1 => {
                    b.serve(TeamName::parse("gone").unwrap());
                    ahead
                        .posts
                        .push_back(Post::say("[run] a post of the run's"));
                    None
                }
                3 => Some(Stop {
                    why: "run_ended",
                    bye: Some(Post::say("[run] ended")),
                }),
                _ => None,
            }
        }
    }

    /// A deadline no test should reach (one that does ends with `timeout`, not hangs).
    fn soon() -> Option<Instant> {
        Some(Instant::now() + Duration::from_secs(10))
    }

    fn bridge(dir: &std::path::Path, scope: Scope) -> Bridge {
        let s = Settings {
            transport: "telegram",
            chat: "42".into(),
            allow: vec!["7".into()],
            ttl: Duration::from_secs(60),
            started: Utc::now(),
            force: true,
        };
        let ground = Ground {
            layout: Layout::new(dir.join("claude")),
            records: Records::in_dir(Some(&dir.join("data"))),
            lock: LockOptions::default(),
        };
        Bridge::new(s, scope, ground).unwrap().0
    }

    /// A run's bridge outlives its team's folder (the run's cleanup removes it before the
    /// run's end is posted): it stops when the run says, with the run's last posts.
    #[test]
    fn a_runs_bridge_outlives_its_team_and_ends_when_the_run_does() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = bridge(dir.path(), Scope::Run(None));
        let posted = Arc::new(Mutex::new(Vec::new()));
        let mut hooks = Run::default();
        let why = run(
            &mut b,
            &mut Kept(posted.clone()),
            &mut hooks,
            soon(),
            &Utc::now,
        )
        .unwrap();
        assert_eq!(why, "run_ended");
        assert_eq!(
            *posted.lock().unwrap(),
            ["[run] a post of the run's", "[run] ended"]
        );
        let end = hooks.told.last().unwrap();
        assert_eq!(
            (end.event, end.detail.as_deref()),
            (What::End, Some("run_ended"))
        );
    }

    /// `bridge`'s own: the team gone, it stops and says so in the chat.
    #[test]
    fn a_bridge_stops_when_its_team_is_gone_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = bridge(dir.path(), Scope::One(TeamName::parse("gone").unwrap()));
        let posted = Arc::new(Mutex::new(Vec::new()));
        let mut hooks = Run {
            rounds: 3,
            told: Vec::new(),
        };
        let why = run(
            &mut b,
            &mut Kept(posted.clone()),
            &mut hooks,
            soon(),
            &Utc::now,
        )
        .unwrap();
        assert_eq!(why, "team_gone");
        let posted = posted.lock().unwrap();
        assert_eq!(posted.len(), 1);
        assert!(
            posted[0].contains("the bridge stopped (team gone)"),
            "{posted:?}"
        );
    }
}
