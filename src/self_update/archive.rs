//! Taking one program out of a release archive (`.tar.gz`), bounded: the archive is read as a
//! stream, the member is copied up to a cap, and the whole decompressed stream is cut at
//! [`MAX_UNPACKED`], so a hostile archive (a gzip bomb, a huge member) costs a bounded read,
//! never the disk or the memory. Only regular files count; a member is matched by the last
//! part of its path (`check-storage-security-1.2.3-x86_64-unknown-linux-gnu/check-storage-security`
//! and `./check-storage-security` both match `check-storage-security`).
//!
//! The archive's checksum is verified before it is opened, so what is parsed here comes from
//! the release; the bounds guard against a release built wrong.

use std::io::{self, Read, Write};

/// The most of an archive that is decompressed while looking for a member.
pub const MAX_UNPACKED: u64 = 512 * 1024 * 1024;

const BLOCK: usize = 512;

/// Copies the regular file `name` out of the gzip-compressed tar stream `archive` into `out`,
/// at most `cap` bytes. `Ok(None)`: the archive holds no such file.
pub fn extract(
    archive: impl Read,
    name: &str,
    out: &mut impl Write,
    cap: u64,
) -> Result<Option<u64>, String> {
    let gz = flate2::read::GzDecoder::new(archive);
    let mut tar = gz.take(MAX_UNPACKED);
    let mut header = [0u8; BLOCK];
    // A GNU long name (`L`) or a pax `path` record (`x`) names the next member.
    let mut long_name: Option<String> = None;
    loop {
        if !read_block(&mut tar, &mut header)? {
            return Ok(None);
        }
        if header.iter().all(|b| *b == 0) {
            return Ok(None);
        }
        let size = octal(&header[124..136]).ok_or("a member's size is unreadable")?;
        let padded = size.div_ceil(BLOCK as u64) * BLOCK as u64;
        let kind = header[156];
        if kind == b'L' || kind == b'x' {
            if size > 64 * 1024 {
                return Err("a member's extended header is too long".into());
            }
            let mut data = vec![0u8; padded as usize];
            tar.read_exact(&mut data).map_err(cut)?;
            data.truncate(size as usize);
            long_name = if kind == b'L' {
                Some(text(&data))
            } else {
                pax_path(&data)
            };
            continue;
        }
        let path = long_name.take().unwrap_or_else(|| header_path(&header));
        let base = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        if (kind == b'0' || kind == 0) && base == name {
            if size > cap {
                return Err(format!(
                    "{name} in the archive is {}, more than the {} allowed",
                    crate::files::size_text(size),
                    crate::files::size_text(cap)
                ));
            }
            let copied = io::copy(&mut (&mut tar).take(size), out).map_err(|e| e.to_string())?;
            if copied != size {
                return Err(format!("the archive ends inside {name}"));
            }
            return Ok(Some(size));
        }
        io::copy(&mut (&mut tar).take(padded), &mut io::sink()).map_err(cut)?;
    }
}

/// Reads one header block; `false` at the end of the stream.
fn read_block(tar: &mut impl Read, block: &mut [u8; BLOCK]) -> Result<bool, String> {
    let mut filled = 0;
    while filled < BLOCK {
        match tar.read(&mut block[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err("the archive ends inside a header".into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(cut(e)),
        }
    }
    Ok(true)
}

fn cut(e: io::Error) -> String {
    format!("the archive cannot be read ({e})")
}

/// A NUL-terminated field as text.
fn text(field: &[u8]) -> String {
    let end = field.iter().position(|b| *b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// The member's path: the ustar prefix (when the magic says ustar) and the name.
fn header_path(header: &[u8; BLOCK]) -> String {
    let name = text(&header[0..100]);
    if &header[257..262] == b"ustar" {
        let prefix = text(&header[345..500]);
        if !prefix.is_empty() {
            return format!("{prefix}/{name}");
        }
    }
    name
}

/// An octal number field (space or NUL terminated); the base-256 form of huge sizes is not
/// read (no member of ours comes near 8 GiB).
fn octal(field: &[u8]) -> Option<u64> {
    let digits = text(field);
    let digits = digits.trim_matches(|c: char| c == ' ' || c == '\0');
    if digits.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(digits, 8).ok()
}

/// The `path` record of a pax extended header (`<length> path=<value>\n` records).
fn pax_path(data: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(data);
    text.lines().find_map(|record| {
        let (_, rest) = record.split_once(' ')?;
        rest.strip_prefix("path=").map(str::to_string)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A ustar member header (regular file unless `kind` says otherwise).
    fn header(name: &str, size: usize, kind: u8) -> Vec<u8> {
        let mut h = vec![0u8; BLOCK];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000755");
        h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
        h[136..147].copy_from_slice(b"00000000000");
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        h
    }

    /// A gzip-compressed tar archive of `(name, content, kind)` members.
    pub(crate) fn tar_gz(members: &[(&str, &[u8], u8)]) -> Vec<u8> {
        let mut tar = Vec::new();
        for (name, content, kind) in members {
            tar.extend(header(name, content.len(), *kind));
            tar.extend_from_slice(content);
            tar.resize(tar.len().div_ceil(BLOCK) * BLOCK, 0);
        }
        tar.extend([0u8; 2 * BLOCK]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_member_is_found_by_its_last_path_part() {
        let long = format!("{}/check-storage-scanner", "d".repeat(150));
        let archive = tar_gz(&[
            ("pkg/", b"", b'5'),
            ("pkg/README", b"read me", b'0'),
            ("pkg/check-storage-security-link", b"", b'2'),
            ("././@LongLink", long.as_bytes(), b'L'),
            ("ignored-short-name", b"scanner", b'0'),
            ("pkg/check-storage-security", b"plugin bytes", b'0'),
        ]);
        let mut out = Vec::new();
        let size = extract(&archive[..], "check-storage-security", &mut out, 1024).unwrap();
        assert_eq!((size, out.as_slice()), (Some(12), &b"plugin bytes"[..]));
        let mut out = Vec::new();
        extract(&archive[..], "check-storage-scanner", &mut out, 1024).unwrap();
        assert_eq!(out, b"scanner");
        let mut out = Vec::new();
        assert_eq!(extract(&archive[..], "README.md", &mut out, 1024), Ok(None));
        assert_eq!(
            extract(&archive[..], "check-storage-security-link", &mut out, 1024),
            Ok(None),
            "links are not programs"
        );
    }

    #[test]
    fn caps_and_broken_archives() {
        let archive = tar_gz(&[("check-storage-security", &[7u8; 2048], b'0')]);
        let mut out = Vec::new();
        let err = extract(&archive[..], "check-storage-security", &mut out, 1024).unwrap_err();
        assert!(err.contains("more than"), "{err}");
        assert!(extract(&b"not gzip"[..], "x", &mut out, 1024).is_err());
        let cut_short = &archive[..archive.len() / 2];
        assert!(extract(cut_short, "check-storage-security", &mut Vec::new(), 4096).is_err());
        assert_eq!(
            pax_path(b"30 path=a/check-storage-security\n"),
            Some("a/check-storage-security".into())
        );
    }
}
