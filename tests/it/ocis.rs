//! ownCloud Infinite Scale as a product family of its own: the plugin against a fake instance
//! answering as a real oCIS 7.0.0 (`tests/fixtures/ocis-7.0.0`): its lifecycle from the oCIS
//! schedule, its own demo accounts (never OpenCloud's), its settings in the advice, its release
//! feed, the tracks it publishes, and no false alarm from its defaults.

use crate::support::plugin::{NOW, hermetic, run, scan, scan_with_env};
use crate::support::{FakeInstance, FeedServer, InstanceConfig, RawResponse};
use serde_json::Value;

/// A default oCIS minus the weaknesses a default install has (demo accounts, CORS for any
/// origin), so the version decides.
fn healthy_ocis(version: &str) -> InstanceConfig {
    InstanceConfig::ocis()
        .version(version)
        .demo_users(false)
        .remove_header("Access-Control-Allow-Origin")
}

fn json_of(stdout: &str) -> Value {
    let value: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    match value {
        Value::Array(mut hosts) => hosts.remove(0),
        one => one,
    }
}

fn finding<'a>(document: &'a Value, id: &str) -> &'a Value {
    document["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no finding {id}"))
}

/// The captured default: 7.0.0, demo accounts created. Its line lost support when 7.1.0
/// opened; the demo accounts are oCIS's own (einstein and friends), found with their own
/// passwords, and the advice names oCIS settings.
#[test]
fn the_captured_default_7_0_0_gets_its_own_verdict() {
    let fake = FakeInstance::start(InstanceConfig::ocis());
    let host = fake.host_port();
    let run = scan("ocis-default", &host, &fake, &[]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.line(0).starts_with(
            "CRITICAL: Infinite Scale 7.0.0+860e1ad9 is end of life: release line 7.0 \
             (production) lost support on 2025-03-06; upgrade to 8.1.0 (production track)"
        ),
        "{}",
        run.stdout
    );
    // Line 1 names the failure; the long output says it in full.
    assert!(
        run.line(0).contains("demoUsersDisabled failed (critical)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.lines().any(|l| l.starts_with("Causes: ")
            && l.contains(
                "demo accounts sign in with their published password: einstein, marie, moss \
                 (space administrator), richard, katherine (space administrator)"
            )),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.line(1),
        format!("Infinite Scale 7.0.0+860e1ad9 on {host}, rating: F, last scanned: {NOW}")
    );
    assert!(run.has_line(
        "Release lifecycle: 7.0 (production) is end of life since 2025-03-06; upgrade to 8.1.0 \
         (production track)"
    ));
    // No advisory is known for oCIS: none is invented.
    assert_eq!(
        run.perf("vulnerabilities").as_deref(),
        Some("vulnerabilities=0;0;;0")
    );

    // Only oCIS's accounts were tried, each with its own password; OpenCloud's never.
    let sign_ins: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.path() == "/signin/v1/identifier/_/logon")
        .map(|r| r.body_str())
        .collect();
    assert_eq!(sign_ins.len(), 5, "{sign_ins:?}");
    for (user, password) in [
        ("einstein", "relativity"),
        ("marie", "radioactivity"),
        ("moss", "vista"),
        ("richard", "superfluidity"),
        ("katherine", "gemini"),
    ] {
        assert!(
            sign_ins
                .iter()
                .any(|b| b.contains(&format!("[\"{user}\",\"{password}\""))),
            "{user}: {sign_ins:?}"
        );
    }
    assert!(!sign_ins.iter().any(|b| b.contains("dennis")));

    let json = run_json("ocis-default-json", &fake, &[]);
    assert_eq!(json["product"]["family"], "ocis");
    assert_eq!(json["product"]["name"], "Infinite Scale");
    assert_eq!(json["product"]["legacyVersion"], "10.11.0.0");
    let demo = finding(&json, "demoUsersDisabled");
    assert_eq!(demo["status"], "failed");
    let advice = demo["remediation"].as_str().unwrap();
    assert!(
        advice.contains("einstein") && !advice.contains("dennis"),
        "{advice}"
    );
    assert!(
        demo["documentation"]
            .as_str()
            .unwrap()
            .starts_with("https://doc.owncloud.com/ocis/"),
        "{demo}"
    );
    // Basic auth is off by default, and einstein's real sign-in proves it.
    let basic = finding(&json, "basicAuthDisabled");
    assert_eq!(basic["status"], "passed", "{basic}");
    // The lifecycle link is oCIS's roadmap; no advice names an OpenCloud setting.
    assert_eq!(
        finding(&json, "eol")["documentation"],
        "https://owncloud.dev/ocis/release_roadmap/"
    );
    for f in json["findings"].as_array().unwrap() {
        let text = format!("{} {}", f["remediation"], f["documentation"]);
        assert!(
            !text.contains("OC_") && !text.contains("opencloud"),
            "{}: {text}",
            f["id"]
        );
    }
}

/// A current oCIS without demo accounts is OK: its defaults (the built-in CSP, the proxy's
/// headers, the Basic challenge, the debug listeners on loopback) raise no false alarm, and
/// the metrics name the product.
#[test]
fn a_current_infinite_scale_is_ok_and_every_format_names_it() {
    let fake = FakeInstance::start(healthy_ocis("8.1.0"));
    let host = fake.host_port();
    let run = scan("ocis-current", &host, &fake, &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.line(0).starts_with("OK: "), "{}", run.stdout);
    assert_eq!(
        run.line(1),
        format!("Infinite Scale 8.1.0 on {host}, rating: A+, last scanned: {NOW}")
    );
    assert!(
        run.has_line("Release lifecycle: 8.1.0 is the current release (production)"),
        "{}",
        run.stdout
    );

    let metrics = scan("ocis-metrics", &host, &fake, &["--format", "metrics"]);
    assert!(
        metrics.stdout.contains(&format!(
            "storage_security_rating_score{{host=\"{host}\",domain=\"127.0.0.1\",product=\"Infinite Scale\",version=\"8.1.0\"}} 5"
        )),
        "{}",
        metrics.stdout
    );
    let sarif = scan("ocis-sarif", &host, &fake, &["--format", "sarif"]);
    assert!(sarif.stdout.contains("Infinite Scale"), "{}", sarif.stdout);
}

/// 8.0.5, the newest 8.0: 8.1.0 is documented but its release day is not, so 8.0's support
/// end is unknown. Said so, never called end of life on a guess; a whole line behind, so
/// WARNING with the upgrade to 8.1.0.
#[test]
fn a_line_whose_successor_is_undated_has_an_unknown_support_end() {
    let fake = FakeInstance::start(healthy_ocis("8.0.5"));
    let host = fake.host_port();
    let run = scan("ocis-unknown-end", &host, &fake, &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.line(0).starts_with(
            "WARNING: Infinite Scale 8.0.5 has an unknown support end; 8.1.0 is available"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.has_line(
            "Release lifecycle: 8.0 (production) support end unknown: the next production line \
             is out, released on a day not documented; upgrade to 8.1.0 (production track)"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(run.perf("support_days_left"), None);
    let json = run_json("ocis-unknown-end-json", &fake, &[]);
    assert_eq!(json["lifecycle"]["state"], "unknown");
    assert_eq!(json["lifecycle"]["supportEnd"], Value::Null);
    assert_eq!(json["rating"], 3);
    let eol = finding(&json, "eol");
    assert_eq!(eol["status"], "indeterminate", "{eol}");
    assert!(
        eol["detail"]
            .as_str()
            .unwrap()
            .contains("support end unknown"),
        "{eol}"
    );
}

/// `--release-track lts`: oCIS publishes none. The verdict says so and judges the production
/// track instead of pretending.
#[test]
fn asking_for_the_lts_track_says_infinite_scale_has_none() {
    let fake = FakeInstance::start(healthy_ocis("8.1.0"));
    let run = scan(
        "ocis-lts",
        &fake.host_port(),
        &fake,
        &["--release-track", "lts"],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        run.has_line(
            "Release lifecycle: 8.1.0 is the current release (production) (ownCloud Infinite \
             Scale publishes no lts track; judged on the production track)"
        ),
        "{}",
        run.stdout
    );
    let json = run_json("ocis-lts-json", &fake, &["--release-track", "lts"]);
    assert_eq!(json["lifecycle"]["track"], "production");
    assert!(
        json["lifecycle"]["trackNote"]
            .as_str()
            .unwrap()
            .contains("no lts track")
    );
    // OpenCloud publishes one: no note there.
    let opencloud = FakeInstance::start(crate::support::plugin::healthy("4.0.8"));
    let json = run_json(
        "opencloud-lts-json",
        &opencloud,
        &["--release-track", "lts"],
    );
    assert_eq!(json["lifecycle"]["track"], "lts");
    assert!(json["lifecycle"].get("trackNote").is_none(), "{json}");
}

/// The update check asks oCIS's feed for an oCIS instance: `{product}` in the operator's
/// feed URL becomes `ocis`, and the answer recommends oCIS releases.
#[test]
fn the_update_check_reads_the_feed_of_the_family() {
    let feed = FeedServer::github_releases(&["v8.1.1", "v8.0.6"]);
    let fake = FakeInstance::start(healthy_ocis("8.1.0"));
    let mut args: Vec<String> = vec!["-H".into(), fake.host_port()];
    args.extend(hermetic(&fake.ca_file()));
    let at = args.iter().position(|a| a == "bundled").unwrap();
    args[at] = "feed".into();
    let url = feed.url("/{product}/releases");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = run(
        "ocis-feed",
        &args,
        &[("COS_NOW", NOW), ("COS_RELEASES_URL", url.as_str())],
    );
    assert!(
        run.has_line(
            "Update check (feed, installed 8.1.0): 8.1.1 available on the production track"
        ),
        "{}",
        run.stdout
    );
    let asked: Vec<String> = feed.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(asked, ["/ocis/releases"]);
}

/// The deployment file oCIS writes, served by a misconfigured web server, is found (high, as
/// the spec rates an exposed deployment file), as is an OpenCloud one left from a migration.
#[test]
fn an_exposed_ocis_yaml_is_found() {
    // The real 7.0.0 answers 404 (its capture, exposed-ocis.yaml.txt); a web server that
    // publishes the home directory serves what `ocis init` wrote.
    assert_eq!(
        RawResponse::load("ocis-7.0.0/exposed-ocis.yaml.txt").status,
        404
    );
    let fake = FakeInstance::start(healthy_ocis("8.1.0").route(
        "GET",
        "/.ocis/config/ocis.yaml",
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n\
         token_manager:\n  jwt_secret: not-a-real-secret\nmachine_auth_api_key: x\n\
         system_user_api_key: y\ntransfer_secret: z\n",
    ));
    let json = run_json("ocis-exposed", &fake, &[]);
    let exposed = finding(&json, "exposed:/.ocis/config/ocis.yaml");
    assert_eq!(exposed["status"], "failed", "{exposed}");
    assert_eq!(exposed["severity"], "high");
    assert_eq!(finding(&json, "exposed:/ocis.yaml")["status"], "passed");
    assert_eq!(
        finding(&json, "exposed:/opencloud.yaml")["status"],
        "passed"
    );
    // High caps the rating at 3: a WARNING, as for OpenCloud.
    assert_eq!(json["rating"], 3, "{}", json["message"]);
    assert_eq!(json["state"], "WARNING", "{}", json["message"]);
}

fn run_json(name: &str, fake: &FakeInstance, extra: &[&str]) -> Value {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(extra);
    let run = scan(name, &fake.host_port(), fake, &args);
    json_of(&run.stdout)
}

/// One schedule file for a mixed fleet: an OpenCloud schedule judges OpenCloud instances; an
/// oCIS instance keeps the bundled oCIS schedule, and the result says why.
#[test]
fn an_opencloud_schedule_file_leaves_infinite_scale_on_its_bundled_schedule() {
    let schedule = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/opencloud/release-schedule.json"
    );
    let fake = FakeInstance::start(healthy_ocis("8.1.0"));
    let run = scan_with_env(
        "ocis-foreign-schedule",
        &fake.host_port(),
        &fake,
        &["--format", "json"],
        &[("COS_SCANNER_RELEASE_SCHEDULE", schedule)],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json = json_of(&run.stdout);
    assert_eq!(json["lifecycle"]["line"], "8.1");
    assert_eq!(json["knowledge"]["scheduleUpdated"], "2026-08-21");
    let notes = json["knowledge"]["notes"].to_string();
    assert!(
        notes.contains("is for \\\"opencloud\\\"; the bundled ocis schedule judges"),
        "{notes}"
    );
}

/// Waivers and policy work by finding id, whatever the product: the demo accounts of a
/// current oCIS waived leave it OK; a policy forbidding them makes it CRITICAL, waived or not.
#[test]
fn waivers_and_policy_name_the_same_ids_on_infinite_scale() {
    let fake = FakeInstance::start(
        InstanceConfig::ocis()
            .version("8.1.0")
            .remove_header("Access-Control-Allow-Origin"),
    );
    let host = fake.host_port();
    let plain = scan("ocis-demo", &host, &fake, &[]);
    // A critical failure caps the rating at 2 (D): WARNING at the default thresholds.
    assert_eq!(plain.code, 1, "{}", plain.stdout);
    assert!(
        plain
            .line(0)
            .contains("demoUsersDisabled failed (critical)")
    );

    let waiver = ["--ignore-hardening", "demoUsersDisabled"];
    let waived = scan("ocis-demo-waived", &host, &fake, &waiver);
    assert_eq!(waived.code, 0, "{}", waived.stdout);

    let dir = crate::support::plugin::scratch("ocis-policy");
    let policy = dir.join("policy.yml");
    std::fs::write(&policy, "forbidden: [demoUsersDisabled]\n").unwrap();
    let policy = policy.display().to_string();
    let mut args = vec!["--policy", policy.as_str()];
    args.extend_from_slice(&waiver);
    let forbidden = scan("ocis-demo-policy", &host, &fake, &args);
    assert_eq!(forbidden.code, 2, "{}", forbidden.stdout);
    assert!(
        forbidden
            .stdout
            .contains("forbidden finding demoUsersDisabled is present"),
        "{}",
        forbidden.stdout
    );
}

/// Advisories reach oCIS through its own Go module: an OSV record filed under
/// github.com/owncloud/ocis/v2 matches an oCIS instance in its range; OpenCloud's real OSV
/// record (GO-2026-4447, in the same list, affecting every version) never does.
#[test]
fn osv_advisories_of_the_ocis_module_apply_and_opencloud_ones_do_not() {
    let dir = crate::support::plugin::scratch("ocis-osv");
    let ocis_osv = serde_json::json!({
        "schema_version": "1.3.1",
        "id": "GHSA-test-ocis-0001",
        "summary": "Test advisory of the oCIS module",
        "affected": [{
            "package": {"ecosystem": "Go", "name": "github.com/owncloud/ocis/v2"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "8.1.0"}, {"fixed": "8.1.1"}]}],
        }],
        "database_specific": {"severity": "HIGH"},
    });
    // OpenCloud's real record, as the Go vulnerability database publishes it (shortened).
    let opencloud_osv = serde_json::json!({
        "schema_version": "1.3.1",
        "id": "GO-2026-4447",
        "aliases": ["GHSA-vf5j-r2hw-2hrw"],
        "summary": "OpenCloud Affected by Public Link Exploit in github.com/opencloud-eu/opencloud",
        "affected": [{
            "package": {"name": "github.com/opencloud-eu/opencloud", "ecosystem": "Go"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}],
        }],
    });
    let list = vec![ocis_osv, opencloud_osv];
    let file = dir.join("osv.json");
    std::fs::write(&file, serde_json::to_string(&list).unwrap()).unwrap();
    let file = file.display().to_string();

    let fake = FakeInstance::start(healthy_ocis("8.1.0"));
    let run = scan_with_env(
        "ocis-osv-run",
        &fake.host_port(),
        &fake,
        &["--format", "json"],
        &[("COS_SCANNER_VULNERABILITY_DB", file.as_str())],
    );
    let json = json_of(&run.stdout);
    let ids: Vec<&str> = json["vulnerabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["GHSA-test-ocis-0001"], "{}", run.stdout);
    // A high advisory starts the rating at 1: CRITICAL, with the fixed release named.
    assert_eq!(json["state"], "CRITICAL", "{}", json["message"]);
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("upgrade to 8.1.1"),
        "{}",
        json["message"]
    );
}
