//! OpenCloud: the primary target. The checks' own texts are written for it, so it overrides
//! nothing. Facts: `shared/data/opencloud-facts.md`.

use super::Track;
use super::{DemoAccount, Family};

pub static FAMILY: Family = Family {
    id: "opencloud",
    name: "OpenCloud",
    status_names: &["OpenCloud"],
    deployment_files: &[
        "/opencloud.yaml",
        "/config/opencloud.yaml",
        "/.opencloud/config/opencloud.yaml",
        "/idm/idm.boltdb",
    ],
    // proxy, frontend, graph, idp, idm.
    debug_ports: &[9205, 9141, 9124, 9134, 9239],
    // Password `demo` for all (OpenCloud's demo-user documentation); dennis is an
    // administrator.
    demo_accounts: &[
        DemoAccount {
            user: "dennis",
            password: "demo",
            role: Some("administrator"),
        },
        DemoAccount {
            user: "margaret",
            password: "demo",
            role: None,
        },
        DemoAccount {
            user: "alan",
            password: "demo",
            role: None,
        },
        DemoAccount {
            user: "lynn",
            password: "demo",
            role: None,
        },
        DemoAccount {
            user: "mary",
            password: "demo",
            role: None,
        },
    ],
    tracks: &[Track::Rolling, Track::Production, Track::Lts],
    releases_url: "https://api.github.com/repos/opencloud-eu/opencloud/releases",
    package: "github.com/opencloud-eu/opencloud",
    release_schedule: include_str!("../../assets/opencloud/release-schedule.json"),
    advisories: include_str!("../../assets/opencloud/advisories.json"),
    docs: "https://docs.opencloud.eu/docs/admin/",
    documentation: &[],
    settings_prefix: "OC_",
    config_dir: "/etc/opencloud",
    // From 4.0.0 PROXY_CSP_CONFIG_FILE_LOCATION is merged into the built-in policy (it can
    // only add sources); the override file replaces it (opencloud-facts.md 2.4).
    csp_replace_setting: "PROXY_CSP_CONFIG_FILE_OVERRIDE_LOCATION",
};
