//! The three readers, on captured documents and on hostile ones.

use super::*;

const OSV_4447: &str = include_str!("../../../tests/fixtures/advisories/OSV-GO-2026-4447.json");
const OSV_4444: &str = include_str!("../../../tests/fixtures/advisories/OSV-GO-2026-4444.json");
const GHSA_GLOBAL: &str =
    include_str!("../../../tests/fixtures/advisories/github-global-GHSA-vf5j-r2hw-2hrw.json");
const GHSA_REPO: &str =
    include_str!("../../../tests/fixtures/advisories/github-repository-advisories.json");

fn v(s: &str) -> Version {
    parse_version(s).unwrap()
}

fn range(introduced: Option<&str>, fixed: Option<&str>) -> AffectedRange {
    AffectedRange {
        introduced: introduced.map(v),
        fixed: fixed.map(v),
        last_affected: None,
    }
}

fn find<'a>(list: &'a [Advisory], id: &str) -> &'a Advisory {
    list.iter()
        .find(|a| a.id == id)
        .unwrap_or_else(|| panic!("{id} missing"))
}

#[test]
fn half_open_range_boundaries() {
    let r = range(Some("4.0.0"), Some("4.0.3"));
    assert!(r.contains(&v("4.0.0")), "introduced is included");
    assert!(r.contains(&v("4.0.2")));
    assert!(!r.contains(&v("4.0.3")), "fixed is excluded");
    assert!(!r.contains(&v("3.7.0")));
    assert!(
        r.contains(&v("4.0.3-rc.1")),
        "a pre-release of the fix is still affected"
    );
    assert!(
        !r.contains(&v("4.0.0-rc.3")),
        "pre-releases before introduced are not"
    );
    assert!(
        r.contains(&Version::parse("4.0.1+abc").unwrap()),
        "build metadata ignored"
    );

    let last = AffectedRange {
        last_affected: Some(v("1.2.0")),
        ..range(Some("1.0.0"), None)
    };
    assert!(last.contains(&v("1.2.0")), "last_affected is included");
    assert!(!last.contains(&v("1.2.1")));
    assert!(!last.contains(&v("0.9.0")));

    let open = range(None, None);
    assert!(open.contains(&v("0.0.1")) && open.contains(&v("99.0.0")));
    assert!(range(None, Some("2.0.0")).contains(&v("0.1.0")));
}

#[test]
fn native_document_with_ranges_disabled_entries_and_bad_versions() {
    let doc = r#"{"updated": "2026-01-01", "advisories": [
        {"id": "OC-EOL", "severity": "critical", "introduced": null, "fixed": null, "enabled": false},
        {"id": "X-1", "title": "One", "summary": "long", "severity": "moderate",
         "url": "https://example.org/x1", "aliases": ["CVE-1"], "cve": "CVE-1",
         "introduced": "1.0.0", "fixed": "1.0.5"},
        {"id": "X-2", "summary": "Two", "introduced": "4.0.0", "fixed": "4.0.3",
         "ranges": [{"introduced": "v4.0.0", "fixed": "4.0.3"}, {"introduced": "junk", "fixed": "5.0.2"},
                    {"introduced": "5.0.0", "fixed": "5.0.2"}]},
        {"id": "X-3", "introduced": "not-a-version", "fixed": "1.0.0"},
        {"id": "X-4", "introduced": "2.0.0", "fixed": "1.0.0"},
        {"id": "X-5", "title": "no range fields"},
        {"id": "X-6", "introduced": "0", "last_affected": "2.1"},
        {"id": "X-7", "introduced": null, "fixed": null}
    ]}"#;
    let list = parse_document(doc, ProductFamily::OpenCloud).unwrap();
    let ids: Vec<&str> = list.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids,
        ["X-1", "X-2", "X-6"],
        "disabled, unreadable, empty and unbounded are skipped"
    );
    let x1 = find(&list, "X-1");
    assert_eq!(x1.summary, "One");
    assert_eq!(x1.severity, Some(Severity::Medium));
    assert_eq!(x1.aliases, ["CVE-1"]);
    assert_eq!(x1.url.as_deref(), Some("https://example.org/x1"));
    let x2 = find(&list, "X-2");
    assert_eq!(
        x2.ranges,
        [
            range(Some("4.0.0"), Some("4.0.3")),
            range(Some("5.0.0"), Some("5.0.2"))
        ],
        "`ranges` replaces the single pair and the unreadable range is skipped"
    );
    assert_eq!(x2.severity, None);
    assert_eq!(x2.fixed_versions(), [v("4.0.3"), v("5.0.2")]);
    let x6 = find(&list, "X-6");
    assert!(x6.affects(&v("0.1.0")) && x6.affects(&v("2.1.0")) && !x6.affects(&v("2.1.1")));
}

#[test]
fn native_structure_errors_are_reported() {
    let no_list = parse_document(r#"{"advisories": {}}"#, ProductFamily::OpenCloud);
    assert!(no_list.unwrap_err().to_string().contains("not a list"));
    let no_id = parse_document(
        r#"{"advisories": [{"introduced": "1.0.0"}]}"#,
        ProductFamily::OpenCloud,
    );
    assert!(no_id.unwrap_err().to_string().contains("has no `id`"));
    assert_eq!(
        parse_document(r#"{"advisories": []}"#, ProductFamily::OpenCloud).unwrap(),
        []
    );
}

#[test]
fn malformed_and_unrecognised_documents_are_errors_not_panics() {
    for text in ["", "{", "[1,", "not json", "{\"advisories\": [}"] {
        let err = parse_document(text, ProductFamily::OpenCloud).unwrap_err();
        assert!(
            err.to_string().contains("not valid JSON"),
            "{text:?}: {err}"
        );
        assert!(!err.to_string().contains('\n'));
    }
    for text in [
        r#"{"foo": 1}"#,
        "42",
        "\"x\"",
        "null",
        "[1, 2]",
        r#"[{"name": "x"}]"#,
        "[{}]",
    ] {
        let err = parse_document(text, ProductFamily::OpenCloud).unwrap_err();
        assert!(
            err.to_string()
                .contains("is not a native, GitHub advisory or OSV document"),
            "{text:?}: {err}"
        );
    }
    assert!(
        parse_document("[]", ProductFamily::OpenCloud)
            .unwrap()
            .is_empty()
    );
    // OSV's query answer when nothing matches.
    assert!(
        parse_document("{}", ProductFamily::OpenCloud)
            .unwrap()
            .is_empty()
    );
    let no_vulns = parse_document(r#"{"vulns": []}"#, ProductFamily::OpenCloud);
    assert!(no_vulns.unwrap().is_empty());
}

#[test]
fn hostile_documents_keep_little_or_are_refused() {
    let oc = ProductFamily::OpenCloud;
    let empties = format!("[{}{{}}]", "{},".repeat(100_000));
    let err = parse_document(&empties, oc).unwrap_err().to_string();
    assert!(
        err.starts_with("list item 1: an empty JSON object is not"),
        "{err}"
    );
    // A syntax error after the first bad item is still reported as one.
    let broken = format!("[{}", "{},".repeat(1000));
    assert!(
        parse_document(&broken, oc)
            .unwrap_err()
            .to_string()
            .contains("not valid JSON")
    );
    let entries = vec![r#"{"id": "X", "title": "no range"}"#; 100_000].join(",");
    let native = format!(r#"{{"advisories": [{entries}]}}"#);
    assert_eq!(parse_document(&native, oc).unwrap(), []);
    let skipped = format!(
        r#"{{"advisories": [], "x": {}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert_eq!(parse_document(&skipped, oc).unwrap(), []);
    // Usable advisories past the budget: refused, not kept.
    let usable: Vec<String> = (0..40_000)
        .map(|n| format!(r#"{{"id": "X-{n}", "introduced": "1.0.0", "fixed": "1.0.1"}}"#))
        .collect();
    let many = format!(r#"{{"advisories": [{}]}}"#, usable.join(","));
    let err = parse_document(&many, oc).unwrap_err().to_string();
    assert!(err.contains("refused"), "{err}");
    let events = vec![r#"{"introduced": "1.0.0"}"#; 100_000].join(",");
    let osv = format!(
        r#"{{"id": "O-1", "affected": [{{"package": {{"name": "github.com/opencloud-eu/opencloud"}},
            "ranges": [{{"type": "SEMVER", "events": [{events}]}}]}}]}}"#
    );
    assert!(parse_document(&osv, oc).is_err());
}

#[test]
fn osv_sample_uses_custom_ranges_not_the_catch_all() {
    let list = parse_document(OSV_4447, ProductFamily::OpenCloud).unwrap();
    assert_eq!(list.len(), 1);
    let a = &list[0];
    assert_eq!(a.id, "GO-2026-4447");
    assert_eq!(a.aliases, ["GHSA-vf5j-r2hw-2hrw"]);
    assert_eq!(
        a.ranges,
        [
            range(Some("4.0.0"), Some("4.0.3")),
            range(Some("5.0.0"), Some("5.0.2"))
        ]
    );
    assert_eq!(
        a.url.as_deref(),
        Some("https://github.com/opencloud-eu/opencloud/security/advisories/GHSA-vf5j-r2hw-2hrw")
    );
    assert_eq!(a.severity, None, "the sample carries no severity");
    assert!(
        !a.affects(&v("3.7.0")),
        "introduced 0 without a fix must not mark everything"
    );
    assert!(!a.affects(&v("8.1.0")));
    assert!(a.affects(&v("4.0.2")) && a.affects(&v("5.0.1")));
    // The parent product is a different module.
    assert!(
        parse_document(OSV_4447, ProductFamily::InfiniteScale)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn osv_reva_component_advisory_is_not_an_opencloud_advisory() {
    assert!(
        parse_document(OSV_4444, ProductFamily::OpenCloud)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn osv_lists_events_severity_and_cvss() {
    let doc = r#"{"vulns": [
        {"id": "OSV-1", "modified": "2026-01-01T00:00:00Z",
         "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:L/A:N"}],
         "affected": [{"package": {"ecosystem": "Go", "name": "github.com/opencloud-eu/opencloud"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "v1.0.0"}, {"last_affected": "v1.2.0"},
                                                      {"introduced": "2.0.0"}]}]}]},
        {"id": "OSV-2", "modified": "2026-01-01T00:00:00Z", "database_specific": {"severity": "MODERATE"},
         "affected": [{"package": {"ecosystem": "Go", "name": "github.com/opencloud-eu/opencloud/v4"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "v3.0.0"}]},
                       {"type": "SEMVER", "events": [{"introduced": "bogus"}, {"fixed": "9.0.0"}]}]}]},
        {"id": "OSV-3", "modified": "2026-01-01T00:00:00Z",
         "affected": [{"package": {"ecosystem": "Go", "name": "github.com/opencloud-eu/opencloud"},
            "ecosystem_specific": {"severity": "critical"},
            "ranges": [{"type": "GIT", "events": [{"introduced": "abc"}]},
                       {"type": "SEMVER", "events": [{"fixed": "6.0.0"}, {"introduced": "5.0.0"}]}]}]},
        {"id": "OSV-4", "modified": "2026-01-01T00:00:00Z", "withdrawn": "2026-02-01T00:00:00Z",
         "affected": [{"package": {"ecosystem": "Go", "name": "github.com/opencloud-eu/opencloud"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}]}]}
    ]}"#;
    let list = parse_document(doc, ProductFamily::OpenCloud).unwrap();
    assert_eq!(list.len(), 3, "withdrawn advisories are dropped");
    let one = find(&list, "OSV-1");
    assert_eq!(one.severity, Some(Severity::High), "CVSS 8.2 is high");
    assert!(one.affects(&v("1.2.0")) && !one.affects(&v("1.3.0")) && one.affects(&v("9.0.0")));
    let two = find(&list, "OSV-2");
    assert_eq!(two.severity, Some(Severity::Medium));
    assert_eq!(
        two.ranges,
        [range(None, Some("3.0.0"))],
        "module /v4 suffix accepted"
    );
    let three = find(&list, "OSV-3");
    assert_eq!(three.severity, Some(Severity::Critical));
    assert_eq!(
        three.ranges,
        [range(Some("5.0.0"), Some("6.0.0"))],
        "events are sorted"
    );
    // A single OSV document in a list.
    let single = format!("[{OSV_4447}]");
    assert_eq!(
        parse_document(&single, ProductFamily::OpenCloud)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn cvss_scores_follow_the_specification() {
    let score = |v: &str| cvss3_base_score(v).unwrap();
    assert_eq!(score("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:L/A:N"), 8.2);
    assert_eq!(score("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"), 9.8);
    assert_eq!(score("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H"), 10.0);
    assert_eq!(score("CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:L/I:N/A:N"), 4.3);
    assert_eq!(score("CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N"), 6.1);
    assert_eq!(score("CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:N/I:N/A:N"), 0.0);
    assert_eq!(
        cvss3_severity("CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"),
        None
    );
    assert_eq!(cvss3_severity("CVSS:3.1/AV:N"), None);
    assert_eq!(
        cvss3_severity("CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N"),
        Some(Severity::Low)
    );
}

#[test]
fn github_global_advisory_filters_packages() {
    let list = parse_document(GHSA_GLOBAL, ProductFamily::OpenCloud).unwrap();
    assert_eq!(list.len(), 1);
    let a = &list[0];
    assert_eq!(a.id, "GHSA-vf5j-r2hw-2hrw");
    assert_eq!(a.severity, Some(Severity::High));
    assert_eq!(
        a.ranges,
        [
            range(Some("4.0.0"), Some("4.0.3")),
            range(Some("5.0.0"), Some("5.0.2"))
        ],
        "the reva package entry is ignored"
    );
    assert_eq!(
        a.url.as_deref(),
        Some("https://github.com/advisories/GHSA-vf5j-r2hw-2hrw")
    );
    assert!(
        parse_document(GHSA_GLOBAL, ProductFamily::InfiniteScale)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn github_repository_advisories_accept_missing_packages() {
    let list = parse_document(GHSA_REPO, ProductFamily::OpenCloud).unwrap();
    let ids: Vec<&str> = list.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids,
        ["GHSA-gf4p-7p27-26w7", "GHSA-aaaa-bbbb-cccc"],
        "the prose-only record and the draft are dropped"
    );
    let gf4p = find(&list, "GHSA-gf4p-7p27-26w7");
    assert_eq!(gf4p.aliases, ["CVE-2026-57500"]);
    assert_eq!(gf4p.severity, Some(Severity::Medium));
    assert_eq!(
        gf4p.ranges,
        [
            range(None, Some("4.0.8")),
            range(Some("4.1.0"), Some("7.2.0"))
        ]
    );
    assert_eq!(gf4p.fixed_versions(), [v("4.0.8"), v("7.2.0")]);
    let other = find(&list, "GHSA-aaaa-bbbb-cccc");
    assert_eq!(
        other.ranges.len(),
        1,
        "the reva and npm packages are ignored"
    );
    let r = &other.ranges[0];
    assert_eq!(r.introduced, Some(successor(&v("2.0.0"))));
    assert_eq!(r.last_affected, Some(v("3.1.0")));
    assert!(!other.affects(&v("2.0.0")) && other.affects(&v("2.0.1-rc.1")));
    assert!(other.affects(&v("3.1.0")) && !other.affects(&v("3.1.1")));
}

#[test]
fn range_expressions() {
    let p = |e: &str| -> Option<Vec<AffectedRange>> {
        parse_range_expression(e).map(|l| l.into_iter().filter(AffectedRange::is_usable).collect())
    };
    let inclusive = |i: Option<&str>, l: &str| AffectedRange {
        last_affected: Some(v(l)),
        ..range(i, None)
    };
    assert_eq!(
        p(">= 4.0.0, < 4.0.3"),
        Some(vec![range(Some("4.0.0"), Some("4.0.3"))])
    );
    assert_eq!(p("< v4.0.8"), Some(vec![range(None, Some("4.0.8"))]));
    assert_eq!(p("<= 5.0.1"), Some(vec![inclusive(None, "5.0.1")]));
    assert_eq!(p("= 7.0.0"), Some(vec![inclusive(Some("7.0.0"), "7.0.0")]));
    assert_eq!(p("7.0.0"), Some(vec![inclusive(Some("7.0.0"), "7.0.0")]));
    assert_eq!(p(">= 1.0"), Some(vec![range(Some("1.0.0"), None)]));
    assert_eq!(
        p(">= 1.0.0, < 3.0.0, < 2.0.0"),
        Some(vec![range(Some("1.0.0"), Some("2.0.0"))])
    );
    // One fix per line, as OpenCloud's repository advisories write it.
    assert_eq!(
        p("< 4.0.8, < 7.2.0"),
        Some(vec![
            range(None, Some("4.0.8")),
            range(Some("4.1.0"), Some("7.2.0"))
        ])
    );
    assert_eq!(
        p("< 7.1.3, < 7.2.0"),
        Some(vec![range(None, Some("7.1.3"))])
    );
    // Prose is never guessed at.
    for prose in [
        "stable releases 4.0.x",
        "rolling releases <= 5.0.1",
        "all versions",
        "< 4.0.8 or so",
    ] {
        assert_eq!(p(prose), None, "{prose}");
    }
    assert_eq!(p(">= 4.0.0, < banana"), None);
    assert_eq!(
        p("= 1.0.0, = 2.0.0"),
        Some(vec![]),
        "contradictory bounds match nothing"
    );
    assert_eq!(successor(&v("4.0.3-rc.1")).to_string(), "4.0.3-rc.1.0");
    assert_eq!(successor(&v("4.0.2")).to_string(), "4.0.3-0");
}

#[test]
fn github_package_names() {
    let pkg = |eco: &str, name: &str| Package {
        name: Text::new(name),
        ecosystem: Text::new(eco),
    };
    let oc = ProductFamily::OpenCloud;
    assert!(github_package_matches(None, oc));
    assert!(github_package_matches(Some(&pkg("go", "")), oc));
    assert!(github_package_matches(
        Some(&pkg("go", "github.com/opencloud-eu/opencloud")),
        oc
    ));
    assert!(github_package_matches(
        Some(&pkg("go", "github.com/opencloud-eu/opencloud/v5")),
        oc
    ));
    assert!(github_package_matches(Some(&pkg("go", "opencloud")), oc));
    assert!(github_package_matches(
        Some(&pkg("opencloud", "OpenCloud")),
        oc
    ));
    assert!(!github_package_matches(Some(&pkg("npm", "opencloud")), oc));
    assert!(!github_package_matches(
        Some(&pkg("go", "github.com/opencloud-eu/opencloud-web")),
        oc
    ));
    assert!(!github_package_matches(
        Some(&pkg("go", "github.com/opencloud-eu/reva/v2")),
        oc
    ));
    let ocis = ProductFamily::InfiniteScale;
    assert!(github_package_matches(
        Some(&pkg("go", "github.com/owncloud/ocis/v2")),
        ocis
    ));
    assert!(!github_package_matches(Some(&pkg("go", "opencloud")), ocis));
}

#[test]
fn github_single_objects_and_fallbacks() {
    let doc = r#"{"ghsa_id": "GHSA-1111-2222-3333", "summary": "S", "severity": "unknown",
        "cvss": {"vector_string": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", "score": 9.8},
        "withdrawn_at": null,
        "vulnerabilities": [{"package": {"ecosystem": "go", "name": "github.com/opencloud-eu/opencloud"},
                             "vulnerable_version_range": null, "first_patched_version": {"identifier": "3.0.1"}}]}"#;
    let list = parse_document(doc, ProductFamily::OpenCloud).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(
        list[0].severity,
        Some(Severity::Critical),
        "from the CVSS vector"
    );
    assert_eq!(list[0].ranges, [range(None, Some("3.0.1"))]);
    let withdrawn = doc.replace(
        "\"withdrawn_at\": null",
        "\"withdrawn_at\": \"2026-01-01T00:00:00Z\"",
    );
    assert!(
        parse_document(&withdrawn, ProductFamily::OpenCloud)
            .unwrap()
            .is_empty()
    );
    let unbounded = r#"{"ghsa_id": "GHSA-x", "vulnerabilities": [{"package": null}]}"#;
    assert!(
        parse_document(unbounded, ProductFamily::OpenCloud)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn merge_keeps_the_first_source_and_matches_aliases() {
    let bundled = bundled(ProductFamily::OpenCloud);
    let osv = parse_document(OSV_4447, ProductFamily::OpenCloud).unwrap();
    let mut file_copy = find(&bundled, "GHSA-gf4p-7p27-26w7").clone();
    file_copy.summary = "file copy".into();
    let other = Advisory {
        id: "X-9".into(),
        aliases: vec![],
        summary: "new".into(),
        severity: None,
        url: None,
        ranges: vec![range(None, Some("1.0.0"))],
    };
    // A third copy sharing an alias only with the dropped OSV entry.
    let third = Advisory {
        id: "OTHER-1".into(),
        aliases: vec!["go-2026-4447".into()],
        ..other.clone()
    };
    let merged = merge(vec![
        bundled.clone(),
        vec![file_copy, other],
        osv,
        vec![third],
    ]);
    let ids: Vec<&str> = merged.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7", "X-9"]);
    assert_eq!(
        find(&merged, "GHSA-gf4p-7p27-26w7"),
        find(&bundled, "GHSA-gf4p-7p27-26w7")
    );
    assert_eq!(
        find(&merged, "GHSA-vf5j-r2hw-2hrw").severity,
        Some(Severity::High)
    );
    // Order of sources decides: the feed first would win.
    let osv = parse_document(OSV_4447, ProductFamily::OpenCloud).unwrap();
    let flipped = merge(vec![osv, bundled]);
    assert_eq!(flipped[0].id, "GO-2026-4447");
    assert_eq!(flipped.len(), 2);
}

#[test]
fn bundled_opencloud_advisories() {
    let list = bundled(ProductFamily::OpenCloud);
    assert_eq!(list.len(), 2);
    let gf4p = find(&list, "GHSA-gf4p-7p27-26w7");
    assert_eq!(gf4p.severity, Some(Severity::Medium));
    assert_eq!(gf4p.aliases, ["CVE-2026-57500"]);
    for affected in ["1.0.0", "4.0.0", "4.0.7", "4.1.0", "7.1.0", "7.2.0-rc.1"] {
        assert!(gf4p.affects(&v(affected)), "{affected}");
    }
    for clean in ["0.9.0", "4.0.8", "4.0.9", "7.2.0", "7.2.4", "8.1.0"] {
        assert!(!gf4p.affects(&v(clean)), "{clean}");
    }
    let vf5j = find(&list, "GHSA-vf5j-r2hw-2hrw");
    assert_eq!(vf5j.severity, Some(Severity::High));
    assert!(vf5j.aliases.iter().any(|a| a == "GO-2026-4447"));
    let ids = |version: &str| -> Vec<String> {
        matching(&list, &v(version))
            .iter()
            .map(|a| a.id.clone())
            .collect()
    };
    assert_eq!(ids("4.0.0"), ["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7"]);
    assert_eq!(ids("4.0.3"), ["GHSA-gf4p-7p27-26w7"]);
    assert_eq!(ids("5.0.1"), ["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7"]);
    assert!(ids("4.0.8").is_empty());
    assert!(ids("7.2.4").is_empty());
    assert!(bundled(ProductFamily::InfiniteScale).is_empty());
}
