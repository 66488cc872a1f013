//! Loading version knowledge: bundled data merged with the operator's files and feed.

use super::{ProductFamily, advisories, releases};

/// Version knowledge for one product family, merged from every configured source.
#[derive(Clone, Debug)]
pub struct Knowledge {
    pub family: ProductFamily,
    pub schedule: Option<releases::ReleaseSchedule>,
    pub advisories: Vec<advisories::Advisory>,
    /// The date the bundled advisory file was last refreshed.
    pub advisories_updated: Option<jiff::civil::Date>,
    /// Where the advisories came from, in merge order (`bundled`, file paths, the feed).
    pub advisory_sources: Vec<String>,
    /// Sources that could not be used (an unreachable feed is logged and ignored).
    pub notes: Vec<String>,
}

/// The advisory feed's answer as the caller got it.
#[derive(Clone, Debug, Default)]
pub struct FeedAdvisories {
    pub advisories: Vec<advisories::Advisory>,
    /// Said about the answer: that it is an earlier run's, standing in for a failed feed.
    pub note: Option<String>,
}

/// Where advisories and the schedule come from besides the bundled data.
#[derive(Clone, Debug, Default)]
pub struct KnowledgeSources {
    pub release_schedule: Option<std::path::PathBuf>,
    pub vulnerability_db: Vec<std::path::PathBuf>,
    pub vulnerability_feed: Option<String>,
}

impl Knowledge {
    /// Merges bundled data, advisory files and the advisory feed, in that order. A file the
    /// operator named that cannot be read is an error (their configuration is wrong; the
    /// settings checked the files before the scan, so this is a file changed since); the feed
    /// is best effort (`fetch` returns its advisories, read with `advisories::parse_document`,
    /// or why it failed).
    pub fn load(
        family: ProductFamily,
        sources: &KnowledgeSources,
        fetch: &dyn Fn(&str) -> Result<FeedAdvisories, String>,
    ) -> Result<Knowledge, String> {
        let mut notes = Vec::new();
        let schedule = Some(match &sources.release_schedule {
            Some(path) => operator_schedule(path, family, &mut notes)?,
            None => releases::ReleaseSchedule::bundled(family),
        });
        let mut merged = vec![advisories::bundled(family)];
        let mut advisory_sources = vec!["bundled".to_string()];
        for path in &sources.vulnerability_db {
            let text = crate::files::read_text(path, crate::files::Kind::AdvisoryFile)
                .map_err(|refusal| refusal.line(&path.display().to_string()))?;
            let list = advisories::parse_document(&text, family)
                .map_err(|e| format!("scanner.vulnerability_db file {}: {e}", path.display()))?;
            merged.push(list);
            advisory_sources.push(path.display().to_string());
        }
        if let Some(url) = &sources.vulnerability_feed {
            match fetch(url) {
                Ok(answer) => {
                    merged.push(answer.advisories);
                    advisory_sources.push(url.clone());
                    notes.extend(answer.note);
                }
                Err(e) => notes.push(format!("advisory feed {url} ignored: {e}")),
            }
        }
        Ok(Knowledge {
            family,
            schedule,
            advisories: advisories::merge(merged),
            advisories_updated: bundled_advisories_updated(family),
            advisory_sources,
            notes,
        })
    }
}

/// The operator's schedule file for `family`. A schedule of another family (a mixed fleet with
/// one schedule file) leaves this family on its bundled one, with a note saying so.
fn operator_schedule(
    path: &std::path::Path,
    family: ProductFamily,
    notes: &mut Vec<String>,
) -> Result<releases::ReleaseSchedule, String> {
    let text = crate::files::read_text(path, crate::files::Kind::ReleaseSchedule)
        .map_err(|refusal| refusal.line(&path.display().to_string()))?;
    if let Some(product) = schedule_product(&text)
        && !product.eq_ignore_ascii_case(family.id())
    {
        notes.push(format!(
            "scanner.release_schedule {} is for \"{product}\"; the bundled {} schedule judges {} \
             instances",
            path.display(),
            family.id(),
            family.display_name()
        ));
        return Ok(releases::ReleaseSchedule::bundled(family));
    }
    releases::ReleaseSchedule::parse(&text, family)
        .map_err(|e| format!("scanner.release_schedule {}: {e}", path.display()))
}

/// The `product` a schedule document names, when it names a known family's id or any other
/// text; `None` when it names none or is not JSON (the full parse reports that).
fn schedule_product(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Product {
        product: Option<String>,
    }
    let named = serde_json::from_str::<Product>(text).ok()?.product?;
    let named = named.trim();
    // Only another family's schedule is set aside; an unknown product stays an error of
    // the file (the parse names it).
    super::ProductFamily::ALL
        .iter()
        .any(|f| f.id().eq_ignore_ascii_case(named))
        .then(|| named.to_string())
}

/// The `updated` date of the bundled advisory file, shown by `--version`.
pub fn bundled_advisories_updated(family: ProductFamily) -> Option<jiff::civil::Date> {
    let text = family.describe().advisories.as_bytes();
    let [updated] = crate::capped::json_members::<crate::capped::Text, 1>(text, ["updated"])?;
    updated.0?.parse().ok()
}
