//! The update check: which release the instance should run on its own track, and the newest
//! release overall, from the release feed (GitHub releases API shape), a pinned version or the
//! bundled schedule. Pure: the feed body is fetched by the caller.

use super::parse_version;
use semver::Version;

/// Reads a GitHub-releases-shaped feed: a JSON array of objects with `tag_name`, `draft` and
/// `prerelease`. Drafts, pre-releases and tags that are not versions are skipped.
pub fn parse_release_feed(body: &[u8]) -> Result<Vec<Version>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("release feed is not JSON ({e})"))?;
    let items = value
        .as_array()
        .ok_or("release feed is not a list of releases")?;
    let mut versions: Vec<Version> = items
        .iter()
        .filter(|r| !r["draft"].as_bool().unwrap_or(false))
        .filter(|r| !r["prerelease"].as_bool().unwrap_or(false))
        .filter_map(|r| r["tag_name"].as_str())
        .filter_map(parse_version)
        .filter(|v| v.pre.is_empty())
        .collect();
    if versions.is_empty() {
        return Err("release feed lists no release".into());
    }
    versions.sort();
    versions.dedup();
    Ok(versions)
}

/// Versions of the line `major.minor`.
fn in_line(versions: &[Version], line: (u64, u64)) -> impl Iterator<Item = &Version> {
    versions.iter().filter(move |v| (v.major, v.minor) == line)
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
        in_line(feed, line).max()
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
