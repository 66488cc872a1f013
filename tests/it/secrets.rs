//! A secret never reaches the output: values read from references (`env://`, `file://`,
//! `secret://`, `exec://`, `_file`) and secrets by nature (tokens, webhook URLs and headers,
//! proxy passwords) are planted with a marker, and every output format, the UNKNOWN lines and
//! the `--debug` log are searched for it. Every message about such a value names its reference
//! instead. (The settings layer's own refusals are tested option by option in
//! `settings::tests::no_message_prints_a_value_read_from_a_reference`.)

use crate::support::plugin::{Run, scratch};
use crate::support::{FakeInstance, FeedServer, InstanceConfig};
use std::path::Path;

const MARKER: &str = "XXXXSECRET";

/// Runs the plugin hermetically (cleared environment, pinned clock) with `args` and `env`.
fn run(name: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    crate::support::plugin::run(&format!("secrets-{name}"), args, env)
}

fn assert_clean(what: &str, out: &Run) {
    assert!(
        !out.stdout.contains(MARKER),
        "{what}: stdout shows the secret\n{}",
        out.stdout
    );
    assert!(
        !out.stderr.contains(MARKER),
        "{what}: stderr shows the secret\n{}",
        out.stderr
    );
}

fn hermetic(fake: &FakeInstance) -> Vec<String> {
    let mut args = vec!["-H".to_string(), fake.host_port()];
    args.extend(crate::support::plugin::hermetic(&fake.ca_file()));
    args
}

#[test]
fn planted_secrets_stay_out_of_every_format_and_the_debug_log() {
    let fake = FakeInstance::start(InstanceConfig::default().version("4.0.0"));
    let feed = FeedServer::start(vec![(500, "{}".to_string())]);
    let closed = crate::support::closed_port();
    // A receiver that refuses the connection: the delivery error lands in the result.
    let hook = format!("http://127.0.0.1:{closed}/services/T000/{MARKER}");
    let releases = feed.url(&format!("/{MARKER}/releases"));
    let header = format!("Authorization: Bearer {MARKER}-header");
    let token = format!("ghp_{MARKER}token");
    let env = [
        ("HOOK", hook.as_str()),
        ("HOOK_HEADER", header.as_str()),
        ("TOKEN", token.as_str()),
        ("RELEASES", releases.as_str()),
    ];
    for format in [
        "default", "json", "sarif", "junit", "metrics", "otlp", "summary",
    ] {
        let mut args = hermetic(&fake);
        args.retain(|a| a != "--update-source" && a != "bundled");
        args.extend(
            [
                "--debug",
                "--webhook-url",
                "env://HOOK",
                "--webhook-header",
                "env://HOOK_HEADER",
                "--webhook-on",
                "always",
                "--allow-private-webhooks",
                "--webhook-timeout",
                "2",
                "--release-token",
                "env://TOKEN",
                "--update-source",
                "feed",
            ]
            .map(String::from),
        );
        if format != "default" {
            args.extend(["--format".to_string(), format.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut env = env.to_vec();
        env.push(("COS_RELEASES_URL", "env://RELEASES"));
        let out = run(&format!("all-{format}"), &args, &env);
        assert_clean(format, &out);
        if format == "default" {
            assert!(
                out.stdout.contains("Webhook delivery failed"),
                "{}",
                out.stdout
            );
        }
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
            let error = doc[0]["webhook"]["error"].as_str().unwrap_or_default();
            assert!(error.starts_with("env://HOOK: "), "{error}");
        }
    }
    // The token really went to the feed: it was used, just never shown.
    assert!(
        feed.requests()
            .iter()
            .any(|r| r.authorization.as_deref() == Some(&format!("Bearer {token}"))),
        "{:?}",
        feed.requests()
    );
}

#[test]
fn a_proxy_password_is_never_shown() {
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let closed = crate::support::closed_port();
    let proxy = format!("http://ops:{MARKER}@127.0.0.1:{closed}");
    for (name, value) in [("literal", proxy.as_str()), ("reference", "env://PROXY")] {
        let mut args = hermetic(&fake);
        args.extend([
            "--proxy".to_string(),
            value.to_string(),
            "--debug".to_string(),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for format in ["default", "json"] {
            let mut all = args.clone();
            if format == "json" {
                all.extend(["--format", "json"]);
            }
            let out = run(
                &format!("proxy-{name}-{format}"),
                &all,
                &[("PROXY", proxy.as_str())],
            );
            assert_eq!(out.code, 3, "the proxy refuses: {}", out.stdout);
            assert_clean(&format!("proxy {name} {format}"), &out);
        }
    }
}

#[test]
fn files_named_by_references_are_named_by_the_reference() {
    let fake = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let dir = scratch(&format!("secrets-files-{MARKER}"));
    let baseline = dir.join("baseline.json");
    std::fs::write(&baseline, "{ not json").unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, "no certificate here").unwrap();
    let policy = dir.join("policy.yml");
    std::fs::write(&policy, "minimum_rating: 9\n").unwrap();
    let (baseline, ca, policy) = (path(&baseline), path(&ca), path(&policy));
    let cases: [(&str, &str, &str); 3] = [
        ("--baseline", "BASELINE", baseline.as_str()),
        ("--ca-file", "CA", ca.as_str()),
        ("--policy", "POLICY", policy.as_str()),
    ];
    for (flag, var, value) in cases {
        let mut args = vec!["-H".to_string(), fake.host_port()];
        if flag != "--ca-file" {
            args.extend(["--ca-file".to_string(), path(&fake.ca_file())]);
        }
        args.extend(
            [
                "--update-source",
                "bundled",
                "--no-debug-ports",
                "--retries",
                "0",
                flag,
            ]
            .map(String::from),
        );
        args.push(format!("env://{var}"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&format!("file-{var}"), &args, &[(var, value)]);
        assert_eq!(out.code, 3, "{flag}: {}", out.stdout);
        assert_clean(flag, &out);
        assert!(
            out.stdout.contains(&format!("env://{var}")),
            "{flag} names its reference: {}",
            out.stdout
        );
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}
