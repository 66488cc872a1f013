//! Product families: everything that differs between OpenCloud and its parent, ownCloud
//! Infinite Scale, in one description per family (one file each). Probes, checks and the
//! knowledge loader read these descriptions; nothing else in the crate asks which product it
//! is looking at.
//!
//! Adding a family: write its file (a `Family` value), add its variant to [`ProductFamily`]
//! and its line to [`ProductFamily::describe`] and [`ProductFamily::ALL`], and put its release
//! schedule and advisories under `assets/<id>/`.

mod ocis;
mod opencloud;

use crate::vocabulary::Vocabulary;
use serde::{Deserialize, Serialize};
use std::fmt;

crate::vocabulary::vocabulary! {
    /// A release track of the product (spec "Release schedule and tracks"), named as the
    /// schedules, the documents and `--release-track` name it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum Track {
        Rolling = "rolling",
        Production = "production",
        Lts = "lts",
    }
}

/// `--release-track`'s choices: `auto`, then every track.
pub const TRACK_CHOICES: [&str; Track::NAMES.len() + 1] = {
    let mut choices = [AUTO_TRACK; Track::NAMES.len() + 1];
    let mut at = 0;
    while at < Track::NAMES.len() {
        choices[at + 1] = Track::NAMES[at];
        at += 1;
    }
    choices
};

/// The choice that lets the schedule pick the track.
pub const AUTO_TRACK: &str = "auto";

impl Track {
    /// A track by its name, in any case.
    pub fn parse(text: &str) -> Option<Track> {
        let named = Track::NAMED.iter().copied();
        named
            .into_iter()
            .find(|track| track.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// A product family the scanner recognises from `/status.php`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum ProductFamily {
    /// OpenCloud (the primary target).
    #[serde(rename = "opencloud")]
    OpenCloud,
    /// ownCloud Infinite Scale, the parent product: same endpoints, its own releases.
    #[serde(rename = "ocis", alias = "infinitescale")]
    InfiniteScale,
}

/// A published demo account: created by the product's demo setting, with a documented
/// password.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoAccount {
    pub user: &'static str,
    pub password: &'static str,
    /// What the account may do beyond a plain user, said next to its name in a finding.
    pub role: Option<&'static str>,
}

/// What one product family is, as far as an outside check can tell it apart.
#[derive(Debug)]
pub struct Family {
    /// Stable identifier: asset folder, JSON `product.family`, schedule `product`.
    pub id: &'static str,
    /// The name operators know it by.
    pub name: &'static str,
    /// `productname` / `product` values of `/status.php` (compared without case).
    pub status_names: &'static [&'static str],
    /// Where a deployment exposes the family's configuration file, probed as
    /// `exposed:<path>`.
    pub deployment_files: &'static [&'static str],
    /// The debug listeners' ports a default deployment binds (to loopback): what a scan
    /// probes when the operator names none (`scanner.debug_ports`).
    pub debug_ports: &'static [u16],
    /// Demo accounts its demo-user setting creates; the first one also decides
    /// `basicAuthDisabled`.
    pub demo_accounts: &'static [DemoAccount],
    /// The release tracks the vendor publishes.
    pub tracks: &'static [Track],
    /// The GitHub releases API of the family, for the update check.
    pub releases_url: &'static str,
    /// The Go module the advisory databases (OSV, GitHub) file the family under; matched as
    /// a prefix so major-version suffixes (`/v2`) count too.
    pub package: &'static str,
    /// The bundled release schedule and advisories.
    pub release_schedule: &'static str,
    pub advisories: &'static str,
    /// The root of the family's administrator documentation.
    pub docs: &'static str,
    /// Documentation links that differ: the checks' link and the family's. A link to the
    /// OpenCloud documentation not listed here is replaced by [`Family::docs`].
    pub documentation: &'static [(&'static str, &'static str)],
    /// The prefix of the family's product-wide settings (`OC_URL`, `OCIS_URL`); a service's
    /// own settings (`PROXY_*`, `IDM_*`) carry no product prefix. Fix snippets use it.
    pub settings_prefix: &'static str,
    /// Where the container image reads its configuration (a CSP file named in a fix snippet
    /// lives there).
    pub config_dir: &'static str,
    /// The setting naming a Content-Security-Policy file that replaces the built-in policy.
    pub csp_replace_setting: &'static str,
}

/// Where the checks' documentation links point (they are written for OpenCloud).
pub const OPENCLOUD_DOCS_HOST: &str = "https://docs.opencloud.eu/";

impl ProductFamily {
    pub const ALL: [ProductFamily; 2] = [ProductFamily::OpenCloud, ProductFamily::InfiniteScale];

    pub fn describe(self) -> &'static Family {
        match self {
            ProductFamily::OpenCloud => &opencloud::FAMILY,
            ProductFamily::InfiniteScale => &ocis::FAMILY,
        }
    }

    /// The stable identifier used in asset paths, JSON and schedules.
    pub fn id(self) -> &'static str {
        self.describe().id
    }

    pub fn display_name(self) -> &'static str {
        self.describe().name
    }

    /// Recognises the family from the `productname` / `product` fields of `/status.php`.
    pub fn from_product_name(name: &str) -> Option<ProductFamily> {
        let name = name.trim();
        ProductFamily::ALL.into_iter().find(|f| {
            f.describe()
                .status_names
                .iter()
                .any(|known| known.eq_ignore_ascii_case(name))
        })
    }

    /// The Go module the advisory databases (OSV, GitHub) file this product under.
    pub fn package_name(self) -> &'static str {
        self.describe().package
    }

    /// "OpenCloud or ownCloud Infinite Scale": every family's name, for messages about an
    /// instance that is none of them.
    pub fn all_names() -> String {
        let names: Vec<&str> = ProductFamily::ALL
            .iter()
            .map(|f| f.display_name())
            .collect();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }

    /// Every family's deployment files, each once: an instance migrated from one family to
    /// another may still serve the other's file, so every scan probes them all.
    pub fn all_deployment_files() -> Vec<&'static str> {
        let mut files: Vec<&'static str> = Vec::new();
        for file in ProductFamily::ALL
            .map(|f| f.describe().deployment_files)
            .concat()
        {
            if !files.contains(&file) {
                files.push(file);
            }
        }
        files
    }

    /// Every family's demo account names, each once (what `--verify-remediation` may ask
    /// for before the product is known).
    #[cfg(test)]
    pub fn all_demo_users() -> Vec<&'static str> {
        let mut users: Vec<&'static str> = Vec::new();
        for family in ProductFamily::ALL {
            for account in family.describe().demo_accounts {
                if !users.contains(&account.user) {
                    users.push(account.user);
                }
            }
        }
        users
    }
}

impl Family {
    /// The documentation link for this family in place of the check's `link`.
    pub fn documentation_for(&self, link: &str) -> String {
        if let Some((_, ours)) = self.documentation.iter().find(|(from, _)| *from == link) {
            return ours.to_string();
        }
        if link.starts_with(OPENCLOUD_DOCS_HOST) && !self.docs.starts_with(OPENCLOUD_DOCS_HOST) {
            return self.docs.to_string();
        }
        link.to_string()
    }

    /// Whether the vendor publishes `track` for this family.
    pub fn offers(&self, track: Track) -> bool {
        self.tracks.contains(&track)
    }
}

impl fmt::Display for ProductFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

#[cfg(test)]
mod tests;
