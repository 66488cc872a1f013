//! The update check: which release the instance should run on its own track, and the newest
//! release overall, from the release feed (GitHub releases API shape), a pinned version or the
//! bundled schedule. Pure: the feed body is fetched by the caller.

use super::parse_version;
use crate::capped::{Flag, ForEach, Obj, Text};
use semver::Version;
use serde::Deserialize;
use serde::de::DeserializeSeed;
use std::collections::BTreeMap;
use std::marker::PhantomData;

/// Where the update check learns the newest release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpdateSource {
    Auto,
    Feed,
    Pinned(semver::Version),
    Bundled,
    Off,
}

crate::vocabulary::vocabulary! {
    /// How the update check runs (`--update-source`), as the option and the result document
    /// (`update.mode`) name it.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum UpdateMode {
        #[default]
        Auto = "auto",
        Feed = "feed",
        Pinned = "pinned",
        Bundled = "bundled",
        Off = "off",
    }
}

crate::vocabulary::vocabulary! {
    /// Where the update check's answer came from in the end (`update.source`,
    /// `conditions.releaseFeed`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum AnswerSource {
        /// The release feed, asked now.
        Feed = "feed",
        /// The release feed's answer of an earlier run, kept in the state directory.
        Cache = "cache",
        /// The release schedule the program ships.
        Bundled = "bundled",
        /// `--latest-version`.
        Pinned = "pinned",
    }
}

impl UpdateSource {
    pub fn mode(&self) -> UpdateMode {
        match self {
            UpdateSource::Auto => UpdateMode::Auto,
            UpdateSource::Feed => UpdateMode::Feed,
            UpdateSource::Pinned(_) => UpdateMode::Pinned,
            UpdateSource::Bundled => UpdateMode::Bundled,
            UpdateSource::Off => UpdateMode::Off,
        }
    }
}

/// Release lines a feed may list; OpenCloud has a dozen. A feed listing more is refused rather
/// than allowed to grow the process.
pub const MAX_RELEASE_LINES: usize = 1000;

/// The members of a release we read; the rest (notes, assets, authors...) is skipped unread.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Release {
    tag_name: Text,
    draft: Flag,
    prerelease: Flag,
}

/// The tag and version of a release of a GitHub-releases-shaped feed when it is published:
/// neither a draft nor a pre-release, and tagged with a version that is no pre-release.
pub fn published(tag: &Text, draft: Flag, prerelease: Flag) -> Option<(&str, Version)> {
    if draft.0 == Some(true) || prerelease.0 == Some(true) {
        return None;
    }
    let tag = tag.get()?;
    parse_version(tag)
        .filter(|v| v.pre.is_empty())
        .map(|v| (tag, v))
}

/// Reads a GitHub-releases-shaped feed: a JSON array of objects with `tag_name`, `draft` and
/// `prerelease`. Drafts, pre-releases and tags that are not versions are skipped. Gives the
/// newest release of every line (major.minor), ascending: all the update check compares.
///
/// Releases are read one by one into typed values, so a hostile answer (millions of `{}`)
/// costs about the lines it names, never a `serde_json::Value` per element.
pub fn parse_release_feed(body: &[u8]) -> Result<Vec<Version>, String> {
    let mut newest: BTreeMap<(u64, u64), Version> = BTreeMap::new();
    let mut too_many = false;
    let mut de = serde_json::Deserializer::from_slice(body);
    let was_list = ForEach {
        seed: PhantomData::<Obj<Release>>,
        each: |release: Obj<Release>| {
            let Some(release) = release.0 else { return };
            let Some((_, version)) =
                published(&release.tag_name, release.draft, release.prerelease)
            else {
                return;
            };
            let line = (version.major, version.minor);
            if !newest.contains_key(&line) && newest.len() >= MAX_RELEASE_LINES {
                too_many = true;
                return;
            }
            let slot = newest.entry(line).or_insert_with(|| version.clone());
            if version > *slot {
                *slot = version;
            }
        },
    }
    .deserialize(&mut de)
    .and_then(|other| de.end().map(|()| other.is_none()))
    .map_err(|e| format!("release feed is not JSON ({e})"))?;
    if !was_list {
        return Err("release feed is not a list of releases".into());
    }
    if too_many {
        return Err(format!(
            "release feed lists more than {MAX_RELEASE_LINES} release lines; is it a release feed?"
        ));
    }
    if newest.is_empty() {
        return Err("release feed lists no release".into());
    }
    Ok(newest.into_values().collect())
}

/// The release to recommend on the instance's track.
///
/// `schedule_target` is what the bundled schedule recommends on the track (its upgrade target);
/// `rolling` says whether the track is rolling, where every newer release is the next step.
/// On production and LTS tracks only newer patches of the target line count, so a feed that
/// cannot tell tracks apart never pushes an LTS instance onto a rolling release.
pub fn recommend(
    installed: &Version,
    schedule_target: Option<&Version>,
    rolling: bool,
    feed: &[Version],
) -> Option<Version> {
    let from_feed = if rolling {
        feed.iter().max()
    } else {
        let line = schedule_target
            .map(|t| (t.major, t.minor))
            .unwrap_or((installed.major, installed.minor));
        feed.iter().filter(|v| (v.major, v.minor) == line).max()
    };
    [from_feed, schedule_target]
        .into_iter()
        .flatten()
        .max()
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn github_feed_skips_drafts_prereleases_and_odd_tags() {
        let body = br#"[
            {"tag_name": "v8.2.0", "draft": false, "prerelease": false},
            {"tag_name": "v8.3.0-rc.1", "draft": false, "prerelease": true},
            {"tag_name": "v9.0.0", "draft": true, "prerelease": false},
            {"tag_name": "nightly", "draft": false, "prerelease": false},
            {"tag_name": "v4.0.9", "draft": false, "prerelease": false}
        ]"#;
        assert_eq!(
            parse_release_feed(body).unwrap(),
            vec![v("4.0.9"), v("8.2.0")]
        );
        assert!(parse_release_feed(b"{}").is_err());
        assert!(parse_release_feed(b"[]").is_err());
        assert!(parse_release_feed(b"<html>").is_err());
        assert!(parse_release_feed(b"[{}, 1, \"x\", [], null]").is_err());
        // Only the newest release of each line is kept.
        let body = br#"[{"tag_name": "v4.0.8"}, {"tag_name": "4.0.9", "assets": [{"x": 1}]},
                        {"tag_name": "v4.0.1"}, {"tag_name": "v7.2.4"}]"#;
        assert_eq!(
            parse_release_feed(body).unwrap(),
            vec![v("4.0.9"), v("7.2.4")]
        );
    }

    #[test]
    fn hostile_feeds_are_refused_or_cost_what_they_name() {
        let empties = format!("[{}{{}}]", "{},".repeat(100_000));
        assert_eq!(
            parse_release_feed(empties.as_bytes()).unwrap_err(),
            "release feed lists no release"
        );
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse_release_feed(deep.as_bytes()).is_err());
        let lines: Vec<String> = (0..=MAX_RELEASE_LINES)
            .map(|n| format!(r#"{{"tag_name": "v1.{n}.0"}}"#))
            .collect();
        let many = format!("[{}]", lines.join(","));
        assert!(
            parse_release_feed(many.as_bytes())
                .unwrap_err()
                .contains("more than 1000 release lines")
        );
    }

    #[test]
    fn lts_stays_on_its_line_and_rolling_takes_the_newest() {
        let feed = [v("4.0.9"), v("7.2.5"), v("8.2.0")];
        assert_eq!(
            recommend(&v("4.0.0"), Some(&v("4.0.8")), false, &feed),
            Some(v("4.0.9"))
        );
        assert_eq!(
            recommend(&v("7.2.1"), Some(&v("7.2.4")), false, &feed),
            Some(v("7.2.5"))
        );
        assert_eq!(
            recommend(&v("8.1.0"), Some(&v("8.1.0")), true, &feed),
            Some(v("8.2.0"))
        );
        // Without a feed the schedule's target stands.
        assert_eq!(
            recommend(&v("4.0.0"), Some(&v("4.0.8")), false, &[]),
            Some(v("4.0.8"))
        );
        // Unknown line, no schedule: newer patches of the installed line.
        assert_eq!(recommend(&v("7.2.1"), None, false, &feed), Some(v("7.2.5")));
    }
}
