//! Staying current: the plugin's own releases.
//!
//! - [`check`]: `--self-update-check`, at most one look a day at the plugin's release feed,
//!   one extra line while a newer release exists, silent on any failure, never a change of the
//!   exit code.
//! - [`upgrade`]: `--upgrade-self [check]`, the operator's action that replaces the binary
//!   with the verified release asset for this platform.
//!
//! The release feed (`--self-update-url`) has the shape of GitHub's releases API: a list of
//! releases (or one release, as `/releases/latest` answers), each with `tag_name` (`vX.Y.Z`),
//! `draft`, `prerelease` and `assets` (`name`, `browser_download_url`, `size`). A release
//! publishes, per platform, `check-storage-security-X.Y.Z-TARGET.tar.gz` (holding
//! `check-storage-security` and `check-storage-scanner`) or the bare binaries
//! `check-storage-security-X.Y.Z-TARGET` and `check-storage-scanner-X.Y.Z-TARGET`, and one
//! `SHA256SUMS` (`sha256sum` output: `<hex>  <asset name>` per line) covering them; a
//! `<asset>.sha256` beside an asset is read when there is no `SHA256SUMS`.

pub mod archive;
pub mod check;
pub mod owner;
pub mod upgrade;

use crate::capped::{self, Flag, ForEach, Obj, Reader, Shallow, Text};
use crate::knowledge::update::published;
use semver::Version;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess};
use std::marker::PhantomData;

pub fn running_version() -> Version {
    Version::parse(env!("CARGO_PKG_VERSION")).expect("the package version is semver")
}

/// The name of the checksum file a release publishes.
pub const CHECKSUMS: &str = "SHA256SUMS";

/// Assets kept of one release: the binaries and checksums of every platform fit many times.
const MAX_ASSETS: usize = 256;

/// One downloadable file of a release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asset {
    pub name: String,
    pub url: String,
    /// As the feed announces it; the download is capped whatever it says.
    pub size: Option<u64>,
}

/// The newest published release of a feed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub version: Version,
    pub tag: String,
    /// The assets this program may use (its own and the scanner's binaries, archives and
    /// checksums); others are skipped unread.
    pub assets: Vec<Asset>,
}

impl Release {
    pub fn asset(&self, name: &str) -> Option<&Asset> {
        self.assets.iter().find(|a| a.name == name)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawRelease {
    tag_name: Text,
    draft: Flag,
    prerelease: Flag,
    assets: Assets,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawAsset {
    name: Text,
    browser_download_url: Text,
    size: Size,
}

/// Whether an asset is one this program could use; the rest of a release is not kept.
fn wanted(name: &str) -> bool {
    name == CHECKSUMS || name.starts_with("check-storage-")
}

/// The assets of a release, read one by one and kept only when [`wanted`] (at most
/// [`MAX_ASSETS`]), so a hostile list of millions of `{}` costs nothing kept.
#[derive(Default)]
struct Assets(Vec<Asset>);

impl<'de> Deserialize<'de> for Assets {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Assets, D::Error> {
        let mut kept = Vec::new();
        let each = |Obj(raw): Obj<RawAsset>| {
            let Some(raw) = raw else { return };
            let (Some(name), Some(url)) = (raw.name.get(), raw.browser_download_url.get()) else {
                return;
            };
            if wanted(name) && kept.len() < MAX_ASSETS {
                kept.push(Asset {
                    name: name.to_string(),
                    url: url.to_string(),
                    size: raw.size.0,
                });
            }
        };
        let seed = PhantomData;
        ForEach { seed, each }.deserialize(d)?;
        Ok(Assets(kept))
    }
}

/// A size in bytes; any other JSON value reads as absent.
#[derive(Default, Deserialize)]
#[serde(from = "Shallow")]
struct Size(Option<u64>);

impl From<Shallow> for Size {
    fn from(value: Shallow) -> Size {
        match value {
            Shallow::Number(n) => Size(n.parse().ok()),
            _ => Size(None),
        }
    }
}

/// Reads the feed: a list of releases, or one release object. Keeps the newest release that is
/// published (neither a draft nor a pre-release) and tagged with a version.
pub fn parse_feed(body: &[u8]) -> Result<Release, String> {
    struct Newest(Option<Release>);
    impl Newest {
        fn offer(&mut self, raw: RawRelease) {
            let Some((tag, version)) = published(&raw.tag_name, raw.draft, raw.prerelease) else {
                return;
            };
            if self.0.as_ref().is_some_and(|r| r.version >= version) {
                return;
            }
            self.0 = Some(Release {
                version,
                tag: tag.to_string(),
                assets: raw.assets.0,
            });
        }
    }
    struct Feed<'a>(&'a mut Newest);
    impl<'de> Reader<'de> for Feed<'_> {
        type Value = bool;
        fn shallow<E: de::Error>(self, _: Shallow) -> Result<bool, E> {
            Ok(false)
        }
        fn list<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            while let Some(Obj(raw)) = seq.next_element::<Obj<RawRelease>>()? {
                if let Some(raw) = raw {
                    self.0.offer(raw);
                }
            }
            Ok(true)
        }
        fn mapping<A: MapAccess<'de>>(self, map: A) -> Result<bool, A::Error> {
            let raw = RawRelease::deserialize(de::value::MapAccessDeserializer::new(map))?;
            self.0.offer(raw);
            Ok(true)
        }
    }
    let mut newest = Newest(None);
    let mut de = serde_json::Deserializer::from_slice(body);
    let shaped = capped::read(&mut de, Feed(&mut newest))
        .and_then(|shaped| de.end().map(|()| shaped))
        .map_err(|e| format!("the release feed is not JSON ({e})"))?;
    if !shaped {
        return Err("the release feed is not a list of releases".into());
    }
    newest
        .0
        .ok_or_else(|| "the release feed lists no published release".into())
}

/// The target names of this platform's release assets, preferred first (`x86_64-unknown-
/// linux-gnu`, then the static musl build, which runs on any Linux); empty where no release is
/// built.
pub fn targets() -> Vec<String> {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "linux" if cfg!(target_env = "musl") => vec![format!("{arch}-unknown-linux-musl")],
        "linux" => vec![
            format!("{arch}-unknown-linux-gnu"),
            format!("{arch}-unknown-linux-musl"),
        ],
        "macos" => vec![format!("{arch}-apple-darwin")],
        "freebsd" => vec![format!("{arch}-unknown-freebsd")],
        _ => Vec::new(),
    }
}

/// The name of the bare binary asset of `program` in `version` for `target`.
pub fn binary_asset(program: &str, version: &Version, target: &str) -> String {
    format!("{program}-{version}-{target}")
}

/// The name of the archive asset (both programs) in `version` for `target`.
pub fn archive_asset(version: &Version, target: &str) -> String {
    format!(
        "{}.tar.gz",
        binary_asset(crate::settings::manual::PROGRAM, version, target)
    )
}

/// The SHA-256 a checksum file gives for `asset`: `sha256sum` lines (`<hex>  <name>` or
/// `<hex> *<name>`), or a single hash (a `<asset>.sha256` file may hold only that).
pub fn checksum_for(text: &str, asset: &str) -> Option<[u8; 32]> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let only_hash = |line: &str| {
        let mut words = line.split_whitespace();
        let hash = words.next()?;
        words.next().is_none().then(|| parse_hex(hash)).flatten()
    };
    let all: Vec<&str> = lines.by_ref().collect();
    if let [single] = all.as_slice()
        && let Some(hash) = only_hash(single)
    {
        return Some(hash);
    }
    all.iter().find_map(|line| {
        let (hash, name) = line.split_once(char::is_whitespace)?;
        let name = name.trim_start();
        let name = name.strip_prefix('*').unwrap_or(name);
        let name = name.strip_prefix("./").unwrap_or(name);
        (name == asset).then(|| parse_hex(hash)).flatten()
    })
}

fn parse_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_published_release_and_its_wanted_assets() {
        let body = br#"[
            {"tag_name": "v0.3.0-rc.1", "prerelease": true, "assets": []},
            {"tag_name": "v0.4.0", "draft": true},
            {"tag_name": "v0.2.0", "assets": [
                {"name": "check-storage-security-0.2.0-x86_64-unknown-linux-gnu.tar.gz",
                 "browser_download_url": "https://example.org/a.tar.gz", "size": 4194304},
                {"name": "SHA256SUMS", "browser_download_url": "https://example.org/sums"},
                {"name": "notes.txt", "browser_download_url": "https://example.org/n"},
                {"name": "check-storage-security-0.2.0.deb", "size": "big"},
                {}, 1, null
            ]},
            {"tag_name": "nightly"},
            {"tag_name": "v0.1.5", "assets": {}}
        ]"#;
        let release = parse_feed(body).unwrap();
        assert_eq!(release.version, Version::new(0, 2, 0));
        assert_eq!(release.tag, "v0.2.0");
        let names: Vec<&str> = release.assets.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "check-storage-security-0.2.0-x86_64-unknown-linux-gnu.tar.gz",
                "SHA256SUMS"
            ]
        );
        assert_eq!(release.assets[0].size, Some(4 * 1024 * 1024));
        assert_eq!(release.assets[1].size, None);
        // `/releases/latest` answers one object.
        let one = parse_feed(br#"{"tag_name": "1.0.0", "assets": []}"#).unwrap();
        assert_eq!(one.version, Version::new(1, 0, 0));
    }

    #[test]
    fn feeds_that_name_no_release_are_refused() {
        for body in [
            &b"[]"[..],
            b"[{}, 1, \"x\"]",
            b"\"x\"",
            b"<html>",
            b"[{\"tag_name\": \"v1.0.0\"}] trailing",
        ] {
            assert!(
                parse_feed(body).is_err(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        let empties = format!("[{}{{}}]", "{},".repeat(100_000));
        assert!(parse_feed(empties.as_bytes()).is_err());
        let assets = format!(
            r#"[{{"tag_name": "v1.0.0", "assets": [{}{{}}]}}]"#,
            r#"{"name": "check-storage-x", "browser_download_url": "u"},"#.repeat(10_000)
        );
        assert_eq!(
            parse_feed(assets.as_bytes()).unwrap().assets.len(),
            MAX_ASSETS
        );
    }

    #[test]
    fn checksum_lines_are_matched_by_asset_name() {
        let a = "ab".repeat(32);
        let b = "CD".repeat(32);
        let sums = format!("{a}  other\n{b} *./check-storage-security-1.0.0-x\n\n");
        assert_eq!(
            checksum_for(&sums, "check-storage-security-1.0.0-x"),
            Some([0xcd; 32])
        );
        assert_eq!(checksum_for(&sums, "other"), Some([0xab; 32]));
        assert_eq!(checksum_for(&sums, "missing"), None);
        assert_eq!(
            checksum_for(&format!("{a}\n"), "anything"),
            Some([0xab; 32])
        );
        assert_eq!(checksum_for("zz  x", "x"), None);
        assert_eq!(checksum_for(&format!("{}  x", &a[..62]), "x"), None);
        assert_eq!(crate::text::hex(&[0xab, 0x01]), "ab01");
    }

    #[test]
    fn asset_names() {
        let v = Version::new(1, 2, 3);
        assert_eq!(
            binary_asset("check-storage-scanner", &v, "x86_64-unknown-linux-gnu"),
            "check-storage-scanner-1.2.3-x86_64-unknown-linux-gnu"
        );
        assert_eq!(
            archive_asset(&v, "aarch64-apple-darwin"),
            "check-storage-security-1.2.3-aarch64-apple-darwin.tar.gz"
        );
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            assert_eq!(
                targets()[0],
                format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
            );
        }
    }
}
