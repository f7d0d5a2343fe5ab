//! SIGINT, SIGTERM and SIGHUP: finish (or never start) the locked write in progress, release
//! every lock directory, then exit with 128 + the signal number. A second signal exits at once;
//! a lock left behind then is stale after 10 s and Claude Code reclaims it.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

pub(crate) fn install() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        let mut first = true;
        for sig in signals.forever() {
            if !first {
                std::process::exit(128 + sig);
            }
            first = false;
            std::thread::spawn(move || {
                teamctl::lock::drain();
                std::process::exit(128 + sig);
            });
        }
    });
}
