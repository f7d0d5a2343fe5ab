//! The ops layer: what a user asks for that spans the layers. It owns a question and its wait
//! ([`ask`]), answering teammates by rules ([`policy`], reading Bash command lines as bash does),
//! standing a team up ([`create`]), a team led by Claude ([`run`]), the settings an
//! unattended Claude Code needs ([`prepare`]), many teams' records side by side ([`report`]),
//! taking a team down ([`delete`]), the health checks ([`doctor`]), a record of a team that
//! outlives it ([`export`]), the nudges and restarts for a stuck member ([`rescue`]), a team
//! brought back after a crash ([`resume`]) and messages moved from an inbox nobody reads to the
//! member they were meant for ([`redeliver`]). A chat answers a team ([`chat`], a service two
//! flows share: [`bridge`] runs its loop whole, [`run`] plugs its lead's prompt into the same
//! loop; neither flow imports the other).
//! It imports every library layer below it (observe, team, host, store); never the cli.

pub mod ask;
pub mod bridge;
pub mod chat;
pub mod create;
pub mod delete;
pub mod dialogs;
pub mod doctor;
pub mod export;
pub mod merge;
pub mod policy;
pub mod prepare;
pub mod redeliver;
pub mod report;
pub mod rescue;
pub mod resume;
pub mod run;
pub mod serve;
