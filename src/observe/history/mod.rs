//! A team's past, read from its record: what the record's drawings ([`crate::ops::export`]'s
//! `report.html`) show over time. A [`History`] is fed every transcript line an export copies,
//! once, and keeps only what it draws:
//! - [`crate::observe::spend::series`]: each member's cost and tokens over time;
//! - [`lanes`]: each member's state over time (working, idle, and why it waited), with the
//!   sessions it started (a restart or a resume in a new session) and the restarts and resumes
//!   teamctl's journal ([`crate::team::actions`]) says it made;
//! - [`tasks`]: what the members did to the tasks, from their task tools' calls.

pub mod lanes;
pub mod tasks;

use crate::observe::spend::series::SeriesBuilder;
use crate::team::transcript::entry;

/// What an export keeps of the transcripts for its drawings.
#[derive(Debug, Default)]
pub struct History {
    /// Each member's responses: cost and tokens over time.
    pub spend: SeriesBuilder,
    /// Each member's turns, API failures and sessions.
    pub lanes: lanes::LaneBuilder,
    /// The members' task tool calls.
    pub tasks: tasks::TaskCalls,
    /// The task files' times of last change (approximations: a file's mtime).
    pub task_files: tasks::TaskFiles,
}

impl History {
    /// One line (without its newline) of one of `member`'s own sessions.
    pub fn feed(&mut self, member: &str, line: &[u8]) {
        self.spend.feed(member, line);
        let Some(l) = entry::parse(line) else { return };
        self.lanes.feed(member, &l);
        self.tasks.feed(member, &l);
    }

    /// One line of a plain subagent of `member`'s (its Task tool's helper): it costs, but its
    /// turns are not the member's.
    pub fn feed_subagent(&mut self, member: &str, line: &[u8]) {
        self.spend.feed(member, line);
    }

    /// Notes the restarts and resumes teamctl made (its journal's lines of the team).
    pub fn note_actions(&mut self, actions: &[crate::team::actions::Action]) {
        for a in actions {
            self.lanes.note_action(a);
        }
    }

    /// Notes when each task file of `board` last changed.
    pub fn note_tasks(&mut self, board: &crate::team::tasks::Board) {
        self.task_files = tasks::TaskFiles::of(board);
    }
}
