//! What we know about the scanned products, independent of any one instance: release schedules,
//! advisories and the release feed. Knowledge is keyed by product family so that the parent
//! product (ownCloud Infinite Scale) can be added with its own data files.

pub mod advisories;
pub mod lifecycle;
pub mod releases;
mod sources;
pub mod update;
pub use sources::{FeedAdvisories, Knowledge, KnowledgeSources, bundled_advisories_updated};

pub use crate::family::{ProductFamily, Track};

/// Parses a product version as reported by an instance (`4.0.0`, `v4.0.0`, `3.7.0+abc123`),
/// dropping build metadata: it never changes which advisories or lines apply.
pub fn parse_version(text: &str) -> Option<semver::Version> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    semver::Version::parse(text)
        .ok()
        .as_ref()
        .map(without_build)
}

/// `v` without its build metadata, which never says anything about the code (semver's `Ord`
/// would otherwise compare it).
pub fn without_build(v: &semver::Version) -> semver::Version {
    semver::Version {
        build: semver::BuildMetadata::EMPTY,
        ..v.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_drop_build_metadata_and_prefix() {
        assert_eq!(parse_version("v4.0.0"), parse_version("4.0.0"));
        assert_eq!(
            parse_version("3.7.0+b53b4ef1d").unwrap(),
            semver::Version::new(3, 7, 0)
        );
        assert!(parse_version("0.1.0.0").is_none());
        assert!(parse_version("").is_none());
    }

    #[test]
    fn families_from_status_names() {
        assert_eq!(
            ProductFamily::from_product_name("OpenCloud"),
            Some(ProductFamily::OpenCloud)
        );
        assert_eq!(
            ProductFamily::from_product_name("Infinite Scale"),
            Some(ProductFamily::InfiniteScale)
        );
        assert_eq!(ProductFamily::from_product_name("Nextcloud"), None);
    }
}
