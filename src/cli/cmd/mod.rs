//! The verbs, one file each with its `Args` beside its `run` (nested verbs get a folder:
//! `tasks/`). A verb imports the library (`teamctl`) and what verbs share, one level up in
//! [`crate::cli`]; never another verb. It builds the library's inputs from its arguments, calls
//! one or two library functions and renders the result.

pub(crate) mod approve;
pub(crate) mod ask;
pub(crate) mod bridge;
pub(crate) mod completions;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod deny;
pub(crate) mod diff;
pub(crate) mod doctor;
pub(crate) mod export;
pub(crate) mod inbox;
pub(crate) mod log;
pub(crate) mod man;
pub(crate) mod merge;
pub(crate) mod pending;
pub(crate) mod pr;
pub(crate) mod prepare;
pub(crate) mod redeliver;
pub(crate) mod report;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod send;
pub(crate) mod serve;
pub(crate) mod shutdown;
pub(crate) mod status;
pub(crate) mod tasks;
pub(crate) mod top;
pub(crate) mod wait;
pub(crate) mod watch;
