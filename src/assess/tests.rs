//! Unit tests of `assess`.

use super::*;

const SUBJECT: snippets::Subject = snippets::Subject {
    family: ProductFamily::OpenCloud,
    host: "cloud.example.com",
    certificate_issuer: None,
};

fn update(recommended: Option<&str>, available: bool) -> report::UpdateCheck {
    report::UpdateCheck {
        mode: crate::knowledge::update::UpdateMode::Bundled,
        source: Some(crate::knowledge::update::AnswerSource::Bundled),
        installed: "4.0.0".into(),
        recommended: recommended.map(String::from),
        newest: None,
        update_available: Some(available),
        error: None,
        upgrade_path_complete: None,
    }
}

#[test]
fn one_change_that_fixes_several_findings_is_one_step_and_named_in_the_summary() {
    let findings = vec![
        checks::finding_for("vulnerability:GHSA-1", Status::Failed, "x").unwrap(),
        checks::finding_for("versionDisclosure:X-Web-Version", Status::Failed, "x").unwrap(),
        checks::finding_for("tlsTrusted", Status::Failed, "x").unwrap(),
        checks::finding_for("versionDisclosure:X-Idp-Version", Status::Failed, "x").unwrap(),
        checks::finding_for("hstsPreload", Status::Failed, "x").unwrap(),
        checks::finding_for("tlsCertificate", Status::Passed, "x").unwrap(),
    ];
    let plan = remediation_plan(&findings, &update(Some("4.0.8"), true), false, &SUBJECT);
    let steps: Vec<(usize, report::System, Vec<&str>)> = plan
        .steps
        .iter()
        .map(|s| {
            (
                s.order,
                s.fixed_in,
                s.resolves.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        vec![
            (1, checks::INSTANCE, vec!["vulnerability:GHSA-1"]),
            (2, checks::REVERSE_PROXY, vec!["tlsTrusted"]),
            (
                3,
                checks::REVERSE_PROXY,
                vec![
                    "versionDisclosure:X-Web-Version",
                    "versionDisclosure:X-Idp-Version"
                ]
            ),
            (4, checks::REVERSE_PROXY, vec!["hstsPreload"]),
        ]
    );
    assert_eq!(plan.steps[0].action, "Upgrade to 4.0.8.");
    // Grouped by the system edited.
    let systems: Vec<report::System> = plan.groups.iter().map(|g| g.system).collect();
    assert_eq!(systems, vec![checks::INSTANCE, checks::REVERSE_PROXY]);
    assert_eq!(plan.group_summary.len(), 1);
    assert!(
        plan.group_summary[0]
            .contains("versionDisclosure:X-Web-Version, versionDisclosure:X-Idp-Version")
    );
    // The upgrade and the certificate have no snippet; the headers' step has every proxy
    // form, and the plan merges the steps into one snippet per file.
    assert!(plan.steps[0].snippets.is_empty() && plan.steps[1].snippets.is_empty());
    let forms: Vec<&str> = plan.steps[2]
        .snippets
        .iter()
        .map(|s| s.form.as_str())
        .collect();
    assert_eq!(forms, ["nginx", "caddy", "apache", "traefik"]);
    let nginx: Vec<&snippets::Snippet> = plan
        .snippets
        .iter()
        .filter(|s| s.form == snippets::Form::Nginx)
        .collect();
    assert_eq!(nginx.len(), 1, "{nginx:?}");
    for line in [
        "proxy_hide_header X-Web-Version;",
        "proxy_hide_header X-Idp-Version;",
        "add_header Strict-Transport-Security \"max-age=31536000; includeSubDomains; preload\" always;",
    ] {
        assert!(
            nginx[0].text.lines().any(|l| l == line),
            "{line}\n{}",
            nginx[0].text
        );
    }
}

/// The policy and the baseline judge inside the assessment, the policy first: a baseline
/// that finds nothing new never excuses an unmet requirement. A failed scan gets the
/// policy's verdict but no comparison.
#[test]
fn the_document_leaves_with_policy_and_baseline_applied() {
    use crate::output::metrics::testing::{failed, scanned, settings};
    let settings = settings(&["-H", "a.example"]);
    let warned = || {
        let mut r = scanned("a.example", "8.1.0", None);
        r.rating = Some(3);
        r.state = report::State::Warning;
        r
    };
    let accepted = baseline::Baseline::default().updated(&[warned()]);
    let strict = policy::Policy::parse(r#"{"minimum_rating": 4}"#, true).unwrap();
    let rules = |policy| Rules {
        policy,
        baseline: Some(&accepted),
        warn_on_new: true,
        ..settings.assess_rules()
    };

    let lenient = finish(warned(), &rules(None));
    assert_eq!(
        lenient.state,
        report::State::Ok,
        "nothing new since the baseline"
    );
    assert!(lenient.baseline.is_some() && lenient.policy.is_none());

    let gated = finish(warned(), &rules(Some(&strict)));
    assert_eq!(gated.state, report::State::Critical);
    assert!(gated.message.starts_with("policy requirement(s) unmet"));
    assert!(gated.baseline.is_some());
    assert!(gated.policy.as_ref().is_some_and(|p| !p.met));

    let down = failed("a.example");
    let judged = super::failed(
        &rules(Some(&strict)),
        down.host.clone(),
        down.error.clone().unwrap().message,
        1,
        crate::output::metrics::testing::now(),
        0.5,
    );
    assert_eq!(judged.state, report::State::Unknown);
    assert!(judged.policy.is_some() && judged.baseline.is_none());
    assert_eq!(judged.message, down.message);
}

#[test]
fn nothing_open_means_an_empty_plan() {
    let findings = vec![checks::finding_for("tlsTrusted", Status::Passed, "x").unwrap()];
    let plan = remediation_plan(&findings, &update(Some("4.0.0"), false), false, &SUBJECT);
    assert!(plan.steps.is_empty() && plan.groups.is_empty());
}
