//! teamctl's data dir (`TEAMCTL_DATA_DIR`, else the platform's data folder + `teamctl`): the
//! folder every record of its own is kept in ([`crate::team::records`]: the lead and run
//! records, the sent log, the journals, the transcript index), and the folders below it, each
//! the user's alone: 0700, tightened when found wider.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use crate::store::dir::{Dir, Loc};

/// teamctl's private data dir `dir`, made when missing (its parents as the user's umask makes
/// them, the folder itself 0700) and opened. Found wider, it is tightened to 0700 when the
/// process owns it (a `TEAMCTL_DATA_DIR` pointing at a shared folder is not taken over).
///
/// # Errors
/// I/O errors.
pub fn private_dir(dir: &Path) -> io::Result<Dir> {
    if let Some(parent) = dir.parent()
        && !parent.as_os_str().is_empty()
    {
        fs::create_dir_all(parent)?;
    }
    match DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let handle = Loc::root(dir).open_dir()?;
    let st = rustix::fs::fstat(&handle)?;
    let mode = st.st_mode & 0o7777;
    if st.st_uid == rustix::process::geteuid().as_raw() && mode & !0o700 != 0 {
        rustix::fs::fchmod(&handle, rustix::fs::Mode::from_raw_mode(mode & 0o700))?;
    }
    Ok(handle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn the_data_dir_is_made_private_and_tightened_when_found_wider() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b/teamctl");
        private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
    }
}
