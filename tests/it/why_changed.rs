//! Why it changed (`--baseline` with `--diff-format`): the plugin records a baseline of a fake
//! instance, then sees it again after the instance, our knowledge and a waiver changed, and
//! says for each new finding which of them it was, as text, Markdown or chat blocks.

use crate::support::FakeInstance;
use crate::support::plugin::{NOW, hermetic, run, scan_with_env, scratch};
use serde_json::Value;

/// The plugin against `fake` with `--baseline <dir>/baseline.json` and `extra`, and env.
fn scan(
    name: &str,
    fake: &FakeInstance,
    dir: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> crate::support::plugin::Run {
    let baseline = dir.join("baseline.json").display().to_string();
    let mut args = vec!["--baseline", baseline.as_str()];
    args.extend_from_slice(extra);
    scan_with_env(name, &fake.host_port(), fake, &args, env)
}

#[test]
fn each_new_finding_is_traced_to_the_instance_knowledge_or_a_waiver() {
    let dir = scratch("why-changed");
    let advisories = dir.join("advisories.json");
    std::fs::write(
        &advisories,
        r#"{"advisories": [{"id": "GHSA-test-0001", "introduced": "8.1.0", "fixed": "8.1.1",
            "severity": "medium", "summary": "test advisory"}]}"#,
    )
    .unwrap();
    let advisories = advisories.display().to_string();

    // The baseline: 8.1.0 without demo accounts, its version headers waived.
    let first = FakeInstance::start(
        crate::support::InstanceConfig::default()
            .version("8.1.0")
            .demo_users(false),
    );
    let waive = ["--ignore-hardening", "versionDisclosure"];
    let recorded = scan("why-1", &first, &dir, &waive, &[]);
    assert_eq!(recorded.code, 0, "{}", recorded.stdout);

    // Later: the same address now has demo accounts (the instance), an advisory is known
    // for its release (our knowledge), and the waiver is gone.
    let addr = first.addr();
    drop(first);
    let second = FakeInstance::start_at(
        crate::support::InstanceConfig::default().version("8.1.0"),
        addr,
    )
    .expect("the address is free again");
    let env = [("COS_SCANNER_VULNERABILITY_DB", advisories.as_str())];
    let report = scan("why-2", &second, &dir, &["--diff-format", "text"], &env);
    // A critical check caps the rating at 2 and a medium advisory starts it there: WARNING.
    assert_eq!(report.code, 1, "the verdict's exit code: {}", report.stdout);
    let text = &report.stdout;
    assert!(text.starts_with("Changes since the baseline\n"), "{text}");
    assert!(
        text.contains(&format!(
            "{} (baseline of 2026-11-22): 5 changes",
            second.host_port()
        )),
        "{text}"
    );
    assert!(
        text.contains("  vulnerability:GHSA-test-0001 [knowledge]: GHSA-test-0001 matches the same release since the baseline: the advisory data changed"),
        "{text}"
    );
    assert!(
        text.contains(
            "  demoUsersDisabled [instance]: the instance changed: demo accounts sign in"
        ),
        "{text}"
    );
    assert!(
        text.contains("  versionDisclosure:X-Web-Version [waiver]: a waiver hid it at the baseline; it expired or was removed"),
        "{text}"
    );

    let markdown = scan(
        "why-md",
        &second,
        &dir,
        &["--diff-format", "markdown"],
        &env,
    );
    assert!(
        markdown.stdout.contains("| demoUsersDisabled | instance |"),
        "{}",
        markdown.stdout
    );
    let blocks = scan(
        "why-blocks",
        &second,
        &dir,
        &["--diff-format", "chatblocks"],
        &env,
    );
    let v: Value = serde_json::from_str(&blocks.stdout).unwrap();
    assert_eq!(v["blocks"][0]["type"], "header");
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("5 change(s) on 1 host(s)")
    );

    // The JSON document carries the conditions and the causes.
    let json = scan("why-json", &second, &dir, &["--format", "json"], &env);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    let conditions = &doc[0]["conditions"];
    assert_eq!(conditions["scannerVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(conditions["advisorySources"][1], advisories.as_str());
    assert!(conditions["checks"].as_u64().unwrap() > 30);
    let causes: Vec<&str> = doc[0]["baseline"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cause"].as_str().unwrap())
        .collect();
    assert_eq!(
        causes,
        ["waiver", "waiver", "waiver", "instance", "knowledge"],
        "{}",
        doc[0]["baseline"]
    );

    // --diff-format needs a baseline.
    let mut args: Vec<String> = vec![
        "-H".into(),
        second.host_port(),
        "--diff-format".into(),
        "text".into(),
    ];
    args.extend(hermetic(&second.ca_file()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let refused = run("why-no-baseline", &args, &[("COS_NOW", NOW)]);
    assert_eq!(refused.code, 3, "{}", refused.stdout);
    assert!(
        refused.stdout.contains("add --baseline FILE"),
        "{}",
        refused.stdout
    );
}
