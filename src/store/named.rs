//! Files outside the config dir that a person or a team file names (a team file, a brief, a
//! policy, a member list): read only when they are regular files no larger than a limit, so a
//! FIFO, `/dev/zero` or a folder is refused at once (nothing blocks, nothing is read until
//! memory runs out); and a path a team file gives is taken only inside that file's folder.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use anyhow::{Result, bail};

use super::dir::open_regular;

/// The largest brief, policy, team file or member list teamctl reads: 1 MiB.
pub const NAMED_FILE_LIMIT: u64 = 1024 * 1024;

/// The bytes of the regular file at `path` (symlinks followed: the person named it), at most
/// `limit` bytes.
///
/// # Errors
/// A missing file, anything but a regular file (found without a blocking open), a file larger
/// than `limit` (the error names the limit), I/O errors; each names the path.
pub fn read_named(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let context = |e: io::Error| anyhow::anyhow!("could not read {}: {e}", path.display());
    let Some(f) = open_regular(path).map_err(context)? else {
        bail!("could not read {}: no such file", path.display());
    };
    let len = f.metadata().map_err(context)?.len();
    let too_big = || {
        anyhow::anyhow!(
            "{} is larger than {} KiB, the most teamctl reads from such a file",
            path.display(),
            limit / 1024
        )
    };
    if len > limit {
        return Err(too_big());
    }
    // It may grow as it is read: never more than the limit (and one byte to tell).
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.take(limit + 1).read_to_end(&mut buf).map_err(context)?;
    if buf.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(buf)
}

/// [`read_named`] as UTF-8 text.
///
/// # Errors
/// As [`read_named`], and text that is not UTF-8.
pub fn read_named_text(path: &Path, limit: u64) -> Result<String> {
    String::from_utf8(read_named(path, limit)?)
        .map_err(|_| anyhow::anyhow!("could not read {}: it is not UTF-8 text", path.display()))
}

/// `rel`, a path a file in `dir` gives, resolved inside `dir`: relative, and once every
/// symlink and `..` is resolved, still below `dir` (itself resolved). Returns the resolved
/// path, which is what is read.
///
/// # Errors
/// An absolute path, a path that leaves `dir` (by `..` or a symlink), one that does not
/// exist; each names `rel` and `dir`.
pub fn inside(dir: &Path, rel: &str) -> Result<PathBuf> {
    let given = Path::new(rel);
    if given.is_absolute()
        || given
            .components()
            .any(|c| matches!(c, Component::Prefix(_)))
    {
        bail!(
            "{rel:?} is an absolute path: a team file names files inside its own folder ({}); \
             give an absolute path on the command line instead",
            dir.display()
        );
    }
    let base = dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("could not resolve {}: {e}", dir.display()))?;
    let full = base.join(given);
    let resolved = full
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("could not read {}: {e}", full.display()))?;
    if !resolved.starts_with(&base) || resolved == base {
        bail!(
            "{rel:?} leads outside the team file's folder {} (to {}): a team file names files \
             inside its own folder; give a path outside it on the command line instead",
            base.display(),
            resolved.display()
        );
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::dir::mkfifo;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn only_small_regular_files_are_read() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("brief.md");
        fs::write(&f, "hello").unwrap();
        assert_eq!(read_named_text(&f, 10).unwrap(), "hello");
        let e = read_named(&f, 4).unwrap_err().to_string();
        assert!(e.contains("larger than 0 KiB"), "{e}");
        let fifo = tmp.path().join("fifo");
        mkfifo(&fifo);
        let e = format!("{:#}", read_named(&fifo, 10).unwrap_err());
        assert!(e.contains("fifo"), "{e}");
        let e = format!("{:#}", read_named(tmp.path(), 10).unwrap_err());
        assert!(e.contains("folder") || e.contains("directory"), "{e}");
        let e = format!(
            "{:#}",
            read_named(Path::new("/dev/zero"), NAMED_FILE_LIMIT).unwrap_err()
        );
        assert!(e.contains("/dev/zero"), "{e}");
        assert!(read_named(&tmp.path().join("nope"), 10).is_err());
    }

    #[test]
    fn a_team_file_names_only_what_is_in_its_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("team");
        fs::create_dir_all(dir.join("briefs")).unwrap();
        fs::write(dir.join("briefs/a.md"), "a").unwrap();
        fs::write(tmp.path().join("secret"), "s").unwrap();
        symlink(tmp.path().join("secret"), dir.join("link")).unwrap();
        symlink("briefs/a.md", dir.join("inner")).unwrap();
        let base = dir.canonicalize().unwrap();
        assert_eq!(
            inside(&dir, "briefs/a.md").unwrap(),
            base.join("briefs/a.md")
        );
        assert_eq!(inside(&dir, "inner").unwrap(), base.join("briefs/a.md"));
        assert_eq!(
            inside(&dir, "briefs/../briefs/a.md").unwrap(),
            base.join("briefs/a.md")
        );
        for bad in [
            "../secret",
            "link",
            "/etc/passwd",
            "/proc/self/environ",
            ".",
        ] {
            assert!(inside(&dir, bad).is_err(), "{bad}");
        }
        let e = inside(&dir, "/proc/self/environ").unwrap_err().to_string();
        assert!(e.contains("is an absolute path"), "{e}");
        let e = inside(&dir, "link").unwrap_err().to_string();
        assert!(e.contains("leads outside the team file's folder"), "{e}");
    }
}
