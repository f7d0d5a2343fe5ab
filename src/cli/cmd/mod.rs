//! The verbs, one file each with its `Args` beside its `run` (nested verbs get a folder:
//! `tasks/`). What verbs share lives one level up, in [`crate::cli`].

pub(crate) mod approve;
pub(crate) mod ask;
pub(crate) mod completions;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod deny;
pub(crate) mod doctor;
pub(crate) mod export;
pub(crate) mod inbox;
pub(crate) mod man;
pub(crate) mod pending;
pub(crate) mod run;
pub(crate) mod send;
pub(crate) mod shutdown;
pub(crate) mod status;
pub(crate) mod tasks;
pub(crate) mod wait;
pub(crate) mod watch;
