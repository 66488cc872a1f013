//! ownCloud Infinite Scale (oCIS), OpenCloud's parent. Facts and their sources:
//! `shared/data/ocis-facts.md`; answers of a real 7.0.0: `tests/fixtures/ocis-7.0.0`.
//!
//! What differs from OpenCloud, as an outside check sees it: the product name in
//! `/status.php` ("Infinite Scale"), the `OCIS_` prefix of its settings, `ocis.yaml`, its demo
//! accounts (einstein and friends, each with their own password), its tracks (production and
//! rolling; no LTS), its release feed and its documentation. The endpoints, the built-in
//! identity provider (LibreGraph Connect), the debug listeners and their ports, the version
//! headers (`X-*-Version`) and the proxy's security headers are the same.

use super::Track;
use super::{DemoAccount, Family};

const DOCS: &str = "https://doc.owncloud.com/ocis/next/";

pub static FAMILY: Family = Family {
    id: "ocis",
    name: "ownCloud Infinite Scale",
    status_names: &["Infinite Scale", "ownCloud Infinite Scale", "oCIS"],
    // `ocis init` writes `$OCIS_CONFIG_DIR/ocis.yaml` (default `~/.ocis/config/`).
    deployment_files: &[
        "/ocis.yaml",
        "/config/ocis.yaml",
        "/.ocis/config/ocis.yaml",
        "/idm/ocis.boltdb",
    ],
    // proxy, frontend, graph, idp, idm (ocis-facts.md §4): the same as OpenCloud's.
    debug_ports: &[9205, 9141, 9124, 9134, 9239],
    // Created only with IDM_CREATE_DEMO_USERS=true (ocis-facts.md §6); moss and katherine
    // are space administrators.
    demo_accounts: &[
        DemoAccount {
            user: "einstein",
            password: "relativity",
            role: None,
        },
        DemoAccount {
            user: "marie",
            password: "radioactivity",
            role: None,
        },
        DemoAccount {
            user: "moss",
            password: "vista",
            role: Some("space administrator"),
        },
        DemoAccount {
            user: "richard",
            password: "superfluidity",
            role: None,
        },
        DemoAccount {
            user: "katherine",
            password: "gemini",
            role: Some("space administrator"),
        },
    ],
    // No stored owncloud source names an LTS track for oCIS (ocis-facts.md §1).
    tracks: &[Track::Rolling, Track::Production],
    releases_url: "https://api.github.com/repos/owncloud/ocis/releases",
    package: "github.com/owncloud/ocis",
    release_schedule: include_str!("../../assets/ocis/release-schedule.json"),
    advisories: include_str!("../../assets/ocis/advisories.json"),
    docs: DOCS,
    documentation: &[
        (
            "https://docs.opencloud.eu/docs/admin/resources/lifecycle/",
            "https://owncloud.dev/ocis/release_roadmap/",
        ),
        (
            "https://docs.opencloud.eu/docs/dev/server/services/proxy",
            "https://owncloud.dev/services/proxy/",
        ),
        (
            "https://github.com/opencloud-eu/opencloud/security/advisories",
            "https://github.com/owncloud/ocis/security/advisories",
        ),
    ],
    settings_prefix: "OCIS_",
    config_dir: "/etc/ocis",
    // The embedded policy applies while this is empty; a file named here replaces it
    // (ocis-facts.md 5).
    csp_replace_setting: "PROXY_CSP_CONFIG_FILE_LOCATION",
};
