//! teamctl's own records, all in its data dir: the lead and run records ([`Leads`]), the sent
//! log ([`SentLog`]), the journal of its restarts and resumes ([`Actions`]) and the transcript
//! index. One value, made from the data dir and passed on
//! whole: a reader that opens a team again opens it with everything the first open knew.

use std::path::{Path, PathBuf};

use crate::team::actions::Actions;
use crate::team::lead::Leads;
use crate::team::sentlog::SentLog;

/// Where teamctl's own records are (see the module docs); every part is missing without a data
/// dir. Made only whole ([`Records::in_dir`], [`Records::none`]), so that no part can be left
/// out by accident.
#[derive(Debug, Clone, Default)]
pub struct Records {
    data_dir: Option<PathBuf>,
    leads: Option<Leads>,
    sent_log: Option<SentLog>,
    actions: Option<Actions>,
}

impl Records {
    /// The records kept in `data_dir` (`None`: teamctl has no data dir, and no records).
    pub fn in_dir(data_dir: Option<&Path>) -> Records {
        Records {
            data_dir: data_dir.map(Path::to_path_buf),
            leads: data_dir.map(Leads::in_dir),
            sent_log: data_dir.map(SentLog::in_dir),
            actions: data_dir.map(Actions::in_dir),
        }
    }

    /// No records: teamctl leads no team here and logs nothing it sends.
    pub fn none() -> Records {
        Records::default()
    }

    /// teamctl's data dir (`None`: the transcript index is kept in memory only).
    pub fn data_dir(&self) -> Option<&Path> {
        self.data_dir.as_deref()
    }

    /// teamctl's record of the teams it leads, and of the teams its runs' leads formed.
    pub fn leads(&self) -> Option<&Leads> {
        self.leads.as_ref()
    }

    /// teamctl's log of what it sent.
    pub fn sent_log(&self) -> Option<&SentLog> {
        self.sent_log.as_ref()
    }

    /// teamctl's journal of the restarts and resumes it made.
    pub fn actions(&self) -> Option<&Actions> {
        self.actions.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_is_in_the_one_data_dir_or_none_is() {
        let r = Records::in_dir(Some(Path::new("/d")));
        assert_eq!(r.data_dir(), Some(Path::new("/d")));
        assert_eq!(r.leads().map(Leads::data_dir), Some(Path::new("/d")));
        assert_eq!(
            r.sent_log().map(SentLog::path),
            Some(Path::new("/d/sent.jsonl"))
        );
        assert_eq!(
            r.actions().map(Actions::path),
            Some(PathBuf::from("/d/actions.jsonl"))
        );
        let n = Records::none();
        assert!(n.data_dir().is_none() && n.leads().is_none() && n.sent_log().is_none());
        assert!(n.actions().is_none());
    }
}
