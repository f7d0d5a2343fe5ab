//! The seccomp program bubblewrap loads into a teammate's sandbox: `socket(AF_UNIX, …)` fails
//! with `EPERM`, so no control socket on the file system (the tmux server's, the SSH agent's,
//! Docker's, D-Bus's, another Claude Code session's) nor any abstract one can be reached,
//! wherever it lives; `io_uring_setup` fails too (io_uring opens sockets without the system
//! call), and so do the kernel keyring calls (`add_key`, `request_key`, `keyctl`: the user's
//! keyring is shared by every process of the user). Everything else is allowed.
//! A system call of another architecture than the one the program is built for (a 32-bit or
//! x32 binary) fails with `EPERM`. Socket pairs (`socketpair`) still work: they reach nothing.
//!
//! The program is classic BPF over `struct seccomp_data` (nr at 0, arch at 4, args at 16), built
//! for x86_64 and aarch64; another architecture has none, and a sandbox there is refused.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;
const ALLOW: u32 = 0x7fff_0000;
const EPERM: u32 = 0x0005_0000 | 1;
const AF_UNIX: u32 = 1;
const X32_BIT: u32 = 0x4000_0000;

/// The numbers of one architecture's system calls the program looks at.
struct Arch {
    audit: u32,
    socket: u32,
    denied: [u32; 4],
}

/// io_uring_setup (425 everywhere), add_key, request_key, keyctl.
const X86_64: Arch = Arch {
    audit: 0xC000_003E,
    socket: 41,
    denied: [425, 248, 249, 250],
};
const AARCH64: Arch = Arch {
    audit: 0xC000_00B7,
    socket: 198,
    denied: [425, 217, 218, 219],
};

fn arch() -> Option<&'static Arch> {
    match std::env::consts::ARCH {
        "x86_64" => Some(&X86_64),
        "aarch64" => Some(&AARCH64),
        _ => None,
    }
}

fn op(code: u16, jt: u8, jf: u8, k: u32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..2].copy_from_slice(&code.to_le_bytes());
    b[2] = jt;
    b[3] = jf;
    b[4..].copy_from_slice(&k.to_le_bytes());
    b
}

/// The program for `a`, as bytes (native-endian `struct sock_filter`s; both architectures it
/// is built for are little-endian).
fn program(a: &Arch) -> Vec<u8> {
    let mut p: Vec<[u8; 8]> = vec![
        op(LD_W_ABS, 0, 0, 4),
        op(JEQ_K, 1, 0, a.audit),
        op(RET_K, 0, 0, EPERM),
        op(LD_W_ABS, 0, 0, 0),
        op(JGE_K, 0, 1, X32_BIT),
        op(RET_K, 0, 0, EPERM),
    ];
    for nr in a.denied {
        p.push(op(JEQ_K, 0, 1, nr));
        p.push(op(RET_K, 0, 0, EPERM));
    }
    p.extend([
        op(JEQ_K, 0, 3, a.socket),
        // The domain: the low half of args[0] (little-endian).
        op(LD_W_ABS, 0, 0, 16),
        op(JEQ_K, 0, 1, AF_UNIX),
        op(RET_K, 0, 0, EPERM),
        op(RET_K, 0, 0, ALLOW),
    ]);
    p.concat()
}

/// The program for this machine (`None`: none is built for its architecture).
pub fn native() -> Option<Vec<u8>> {
    arch().map(program)
}

/// Writes the program for this machine into `dir` (`unix-sockets-<arch>.bpf`), unless it is
/// there already as it should be, and returns its path. Written to a temp file and renamed, so
/// a teammate starting meanwhile reads the whole program or the earlier one.
///
/// # Errors
/// No program for this architecture; I/O.
pub fn install(dir: &Path) -> Result<PathBuf> {
    let bytes = native().with_context(|| {
        format!(
            "the sandbox's socket filter is not built for {}: only x86_64 and aarch64",
            std::env::consts::ARCH
        )
    })?;
    let path = dir.join(format!("unix-sockets-{}.bpf", std::env::consts::ARCH));
    if std::fs::read(&path).is_ok_and(|b| b == bytes) {
        return Ok(path);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let tmp = dir.join(format!(".unix-sockets.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write()
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
        .with_context(|| format!("could not write {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny interpreter of the instructions the program uses, over one `seccomp_data`.
    fn verdict(prog: &[u8], arch: u32, nr: u32, arg0: u32) -> u32 {
        let mut data = [0u8; 64];
        data[..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        data[16..20].copy_from_slice(&arg0.to_le_bytes());
        let ins: Vec<(u16, u8, u8, u32)> = prog
            .chunks(8)
            .map(|c| {
                (
                    u16::from_le_bytes([c[0], c[1]]),
                    c[2],
                    c[3],
                    u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                )
            })
            .collect();
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let (code, jt, jf, k) = ins[pc];
            pc += 1;
            match code {
                LD_W_ABS => {
                    let o = k as usize;
                    acc = u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
                }
                JEQ_K => pc += if acc == k { jt } else { jf } as usize,
                JGE_K => pc += if acc >= k { jt } else { jf } as usize,
                RET_K => return k,
                _ => panic!("unknown instruction {code:#x}"),
            }
        }
    }

    #[test]
    fn unix_sockets_are_refused_and_the_rest_allowed() {
        for a in [&X86_64, &AARCH64] {
            let p = program(a);
            assert_eq!(verdict(&p, a.audit, a.socket, AF_UNIX), EPERM);
            assert_eq!(verdict(&p, a.audit, a.socket, 2), ALLOW, "AF_INET");
            assert_eq!(verdict(&p, a.audit, a.socket, 10), ALLOW, "AF_INET6");
            assert_eq!(verdict(&p, a.audit, 0, AF_UNIX), ALLOW, "read");
            for nr in a.denied {
                assert_eq!(verdict(&p, a.audit, nr, 0), EPERM);
            }
            assert_eq!(verdict(&p, 0x4000_0003, 1, 0), EPERM, "i386");
            assert_eq!(verdict(&p, a.audit, X32_BIT | 41, 1), EPERM, "x32");
        }
    }

    #[test]
    fn install_writes_once() {
        let Some(bytes) = native() else { return };
        let d = tempfile::tempdir().unwrap();
        let p = install(d.path()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
        assert_eq!(install(d.path()).unwrap(), p);
    }
}
