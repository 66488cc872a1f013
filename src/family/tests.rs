use super::*;
use crate::checks::registry;

#[test]
fn families_are_recognised_by_their_status_names() {
    for (name, family) in [
        ("OpenCloud", Some(ProductFamily::OpenCloud)),
        ("opencloud", Some(ProductFamily::OpenCloud)),
        ("Infinite Scale", Some(ProductFamily::InfiniteScale)),
        (
            " ownCloud Infinite Scale ",
            Some(ProductFamily::InfiniteScale),
        ),
        ("OCIS", Some(ProductFamily::InfiniteScale)),
        ("Nextcloud", None),
        ("reva", None),
        ("", None),
    ] {
        assert_eq!(ProductFamily::from_product_name(name), family, "{name:?}");
    }
    assert_eq!(
        ProductFamily::all_names(),
        "OpenCloud or ownCloud Infinite Scale"
    );
}

#[test]
fn json_names_the_family_by_its_id_and_reads_the_old_name() {
    for family in ProductFamily::ALL {
        let text = serde_json::to_string(&family).unwrap();
        assert_eq!(text, format!("\"{}\"", family.id()));
        assert_eq!(
            serde_json::from_str::<ProductFamily>(&text).unwrap(),
            family
        );
    }
    // Baselines written before the family had its own id.
    assert_eq!(
        serde_json::from_str::<ProductFamily>("\"infinitescale\"").unwrap(),
        ProductFamily::InfiniteScale
    );
}

#[test]
fn every_family_is_complete_and_distinct() {
    let mut ids = Vec::new();
    for family in ProductFamily::ALL {
        let f = family.describe();
        assert!(!ids.contains(&f.id), "{}", f.id);
        ids.push(f.id);
        assert!(
            !f.status_names.is_empty() && !f.demo_accounts.is_empty(),
            "{}",
            f.id
        );
        assert!(f.tracks.contains(&Track::Production), "{}", f.id);
        assert!(f.releases_url.starts_with("https://api.github.com/repos/"));
        assert!(f.deployment_files.iter().all(|p| p.starts_with('/')));
        assert!(
            f.deployment_files
                .iter()
                .any(|p| p.ends_with(&format!("/{}.yaml", f.id))),
            "{}: the spec's <product>.yaml",
            f.id
        );
        assert!(f.docs.starts_with("https://"));
        // The bundled knowledge names this family.
        crate::knowledge::releases::ReleaseSchedule::bundled(family);
        crate::knowledge::advisories::bundled(family);
    }
    // A status name belongs to one family only.
    for a in ProductFamily::ALL {
        for b in ProductFamily::ALL.into_iter().filter(|b| *b != a) {
            for name in a.describe().status_names {
                assert_ne!(ProductFamily::from_product_name(name), Some(b), "{name}");
            }
        }
    }
}

/// Nothing a Infinite Scale operator reads sends them to OpenCloud: no OpenCloud setting
/// (`OC_`), name, demo account or documentation in any check's advice.
#[test]
fn infinite_scale_advice_names_its_own_settings_accounts_and_documentation() {
    let ocis = ProductFamily::InfiniteScale.describe();
    let opencloud_words = ["OpenCloud", "opencloud", "OC_", "dennis", "margaret"];
    for spec in registry() {
        let remediation = spec
            .advice_for(ProductFamily::InfiniteScale)
            .unwrap_or(spec.remediation);
        for word in opencloud_words {
            assert!(
                !remediation.contains(word),
                "{}: {word} in {remediation:?}",
                spec.id
            );
        }
        let ours = ocis.documentation_for(spec.documentation);
        assert!(!ours.contains("opencloud"), "{}: {ours}", spec.id);
    }
    // OpenCloud keeps the checks' own texts.
    let opencloud = ProductFamily::OpenCloud.describe();
    assert!(
        registry().all(|c| c.advice_for(ProductFamily::OpenCloud).is_none()),
        "the checks' remediation is written for OpenCloud"
    );
    assert_eq!(
        opencloud.documentation_for("https://docs.opencloud.eu/docs/admin/x"),
        "https://docs.opencloud.eu/docs/admin/x"
    );
    assert_eq!(
        ocis.documentation_for("https://openid.net/specs/x"),
        "https://openid.net/specs/x"
    );
    // A member id finds its root's advice.
    let advice = |id| crate::checks::spec(id)?.advice_for(ProductFamily::InfiniteScale);
    assert!(advice("debugEndpoint").is_some());
    assert_eq!(advice("debugEndpoint"), advice("debugEndpoint:9205/config"));
}

#[test]
fn infinite_scale_has_no_lts_track_and_shares_the_debug_ports() {
    let ocis = ProductFamily::InfiniteScale.describe();
    assert!(!ocis.offers(Track::Lts));
    assert!(ocis.offers(Track::Production) && ocis.offers(Track::Rolling));
    assert!(ProductFamily::OpenCloud.describe().offers(Track::Lts));
    assert_eq!(
        ocis.debug_ports,
        ProductFamily::OpenCloud.describe().debug_ports
    );
    let users: Vec<&str> = ocis.demo_accounts.iter().map(|a| a.user).collect();
    assert_eq!(users, ["einstein", "marie", "moss", "richard", "katherine"]);
    assert_eq!(ProductFamily::all_demo_users().len(), 10);
    let files = ProductFamily::all_deployment_files();
    assert!(files.contains(&"/ocis.yaml") && files.contains(&"/opencloud.yaml"));
}

/// The spec fixes one default list of debug ports (`scanner.debug_ports`, shown in `--help`);
/// a scan without that setting probes its family's list, and every family binds exactly the
/// spec's. A family with other ports would have to say so in the help text.
#[test]
fn every_family_binds_the_default_debug_ports() {
    let default: Vec<u16> =
        crate::settings::options::spec(crate::settings::options::Id::debug_ports)
            .default
            .unwrap()
            .split(',')
            .map(|p| p.parse().unwrap())
            .collect();
    for family in ProductFamily::ALL {
        assert_eq!(
            family.describe().debug_ports,
            default.as_slice(),
            "{family:?}"
        );
    }
}
