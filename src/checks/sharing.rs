//! Hardening measures the instance reports in its capabilities document: public-link
//! passwords and expiry, user enumeration, the password policy. Evaluated with
//! `--check-hardening`; a missing measure never caps the rating.

use super::{AcrossNodes, CheckSpec, Fix, INSTANCE, Measure, Verdict, finding, verdict};
use crate::family::ProductFamily;
use crate::probe::Measurements;
use crate::probe::plan;
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;
use serde_json::Value;

const SHARING_DOCS: &str = "https://docs.opencloud.eu/docs/admin/configuration/";

/// What every row of this module shares: a hardening measure set on the instance and read
/// from its capabilities document.
const SHARING_ROW: CheckSpec = CheckSpec {
    role: Role::Hardening,
    category: Category::Sharing,
    documentation: SHARING_DOCS,
    fixed_in: INSTANCE,
    verified_by: &[Measure::Probe(plan::CAPABILITIES)],
    ..CheckSpec::ROW
};

/// The capabilities each check reads, which the address comparison compares too.
const PUBLIC_LINK_PASSWORD: &str = "/files_sharing/public/password";
const PUBLIC_LINK_EXPIRY: &str = "/files_sharing/public/expire_date";
const USER_ENUMERATION: &str = "/files_sharing/user_enumeration";
const PASSWORD_POLICY: &str = "/password_policy";

pub static PUBLIC_LINK_PASSWORD_ENFORCED: CheckSpec = CheckSpec {
    id: "publicLinkPasswordEnforced",
    across_nodes: AcrossNodes::Capability(PUBLIC_LINK_PASSWORD),
    severity: Severity::Medium,
    title: "Every public link needs a password",
    remediation: "Set OC_SHARING_PUBLIC_SHARE_MUST_HAVE_PASSWORD=true and \
                  OC_SHARING_PUBLIC_WRITEABLE_SHARE_MUST_HAVE_PASSWORD=true.",
    fix: Fix::PublicLinkPassword,
    advice: &[(
        ProductFamily::InfiniteScale,
        "Set OCIS_SHARING_PUBLIC_SHARE_MUST_HAVE_PASSWORD=true and \
         OCIS_SHARING_PUBLIC_WRITEABLE_SHARE_MUST_HAVE_PASSWORD=true.",
    )],
    ..SHARING_ROW
};

pub static PUBLIC_LINK_EXPIRATION_ENFORCED: CheckSpec = CheckSpec {
    id: "publicLinkExpirationEnforced",
    across_nodes: AcrossNodes::Capability(PUBLIC_LINK_EXPIRY),
    severity: Severity::Low,
    title: "Public links expire",
    remediation: "Enforce an expiry date on public links where the product offers a setting \
                  for it; until then review old links regularly.",
    ..SHARING_ROW
};

pub static USER_ENUMERATION_RESTRICTED: CheckSpec = CheckSpec {
    id: "userEnumerationRestricted",
    across_nodes: AcrossNodes::Capability(USER_ENUMERATION),
    severity: Severity::Low,
    title: "Users can only find members of their own groups",
    remediation: "Restrict user search for sharing to group members.",
    ..SHARING_ROW
};

pub static PASSWORD_POLICY_ENFORCED: CheckSpec = CheckSpec {
    id: "passwordPolicyEnforced",
    across_nodes: AcrossNodes::Capability(PASSWORD_POLICY),
    severity: Severity::Medium,
    category: Category::Authentication,
    title: "A password policy of at least 8 characters with every character class",
    remediation: "Keep the password policy on (OC_PASSWORD_POLICY_DISABLED=false) with \
                  OC_PASSWORD_POLICY_MIN_CHARACTERS of 8 or more and at least one lower-case, \
                  upper-case, digit and special character.",
    fix: Fix::PasswordPolicy,
    advice: &[(
        ProductFamily::InfiniteScale,
        "Keep the password policy on (OCIS_PASSWORD_POLICY_DISABLED=false) with \
         OCIS_PASSWORD_POLICY_MIN_CHARACTERS of 8 or more and at least one lower-case, \
         upper-case, digit and special character.",
    )],
    ..SHARING_ROW
};

pub static ROWS: &[&CheckSpec] = &[
    &PUBLIC_LINK_PASSWORD_ENFORCED,
    &PUBLIC_LINK_EXPIRATION_ENFORCED,
    &USER_ENUMERATION_RESTRICTED,
    &PASSWORD_POLICY_ENFORCED,
];

fn link_passwords(caps: &Value) -> Verdict {
    let Some(enforced_for) = caps
        .pointer(&format!("{PUBLIC_LINK_PASSWORD}/enforced_for"))
        .and_then(Value::as_object)
    else {
        let detail = "no public-link password settings reported";
        return (Status::Indeterminate, detail.into());
    };
    let open: Vec<&str> = [
        "read_only",
        "read_write",
        "read_write_delete",
        "upload_only",
    ]
    .into_iter()
    .filter(|kind| enforced_for.get(*kind).and_then(Value::as_bool) != Some(true))
    .collect();
    if open.is_empty() {
        let detail = "passwords are enforced on every kind of public link";
        (Status::Passed, detail.into())
    } else {
        let kinds = open.join(", ");
        let detail = format!("public links without a password are allowed for: {kinds}");
        (Status::Failed, detail)
    }
}

fn link_expiry(caps: &Value) -> Verdict {
    let expire = caps.pointer(PUBLIC_LINK_EXPIRY);
    match expire
        .and_then(|e| e.get("enforced"))
        .and_then(Value::as_bool)
    {
        Some(true) => (
            Status::Passed,
            "public links must carry an expiry date".into(),
        ),
        Some(false) => (Status::Failed, "public links may live forever".into()),
        // OpenCloud reports a fixed `expire_date.enabled: false` that no setting changes:
        // alerting on it would be a warning nobody can clear.
        None => {
            let detail = "the instance reports no setting for enforcing link expiry";
            (Status::Indeterminate, detail.into())
        }
    }
}

fn enumeration(caps: &Value) -> Verdict {
    let Some(e) = caps.pointer(USER_ENUMERATION) else {
        return (
            Status::Indeterminate,
            "no user enumeration setting reported".into(),
        );
    };
    let enabled = e["enabled"].as_bool().unwrap_or(true);
    let group_only = e["group_members_only"].as_bool().unwrap_or(false);
    let (status, detail) = if !enabled {
        (Status::Passed, "user search for sharing is switched off")
    } else if group_only {
        // OpenCloud and Infinite Scale report this value fixed in their code: the pass says
        // what the instance claims, which no outside scan can try without an account.
        (
            Status::Passed,
            "the instance reports user search limited to group members (a value both products \
             report as fixed in their code; not tried by a search)",
        )
    } else {
        (
            Status::Failed,
            "any user can list every other user while sharing",
        )
    };
    (status, detail.into())
}

fn password_policy(caps: &Value) -> Verdict {
    let Some(policy) = caps.pointer(PASSWORD_POLICY).filter(|p| p.is_object()) else {
        return (Status::Indeterminate, "no password policy reported".into());
    };
    let number = |key: &str| policy.get(key).and_then(Value::as_u64);
    let mut problems = Vec::new();
    match number("min_characters") {
        Some(n) if n >= 8 => {}
        Some(n) => problems.push(format!("minimum length {n}")),
        None => problems.push("no minimum length (policy disabled?)".to_string()),
    }
    for (key, what) in [
        ("min_lowercase_characters", "lower-case"),
        ("min_uppercase_characters", "upper-case"),
        ("min_digits", "digit"),
        ("min_special_characters", "special"),
    ] {
        if number(key).unwrap_or(0) < 1 {
            problems.push(format!("no {what} character required"));
        }
    }
    if problems.is_empty() {
        let detail = "8 or more characters with every character class";
        (Status::Passed, detail.into())
    } else {
        (Status::Failed, problems.join(", "))
    }
}

pub fn evaluate(m: &Measurements) -> Vec<Finding> {
    let Some(caps) = &m.capabilities else {
        let detail = "the capabilities document could not be read";
        return ROWS
            .iter()
            .map(|row| finding(*row, Status::Indeterminate, detail))
            .collect();
    };
    vec![
        verdict(&PUBLIC_LINK_PASSWORD_ENFORCED, link_passwords(caps)),
        verdict(&PUBLIC_LINK_EXPIRATION_ENFORCED, link_expiry(caps)),
        verdict(&USER_ENUMERATION_RESTRICTED, enumeration(caps)),
        verdict(&PASSWORD_POLICY_ENFORCED, password_policy(caps)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::HttpsObservation;
    use crate::net::http::{Endpoint, Scheme};
    use crate::probe::{fixture, status::parse_capabilities};

    fn with(caps: Option<Value>) -> Measurements {
        let endpoint = Endpoint {
            scheme: Scheme::Https,
            url_host: "x".into(),
            port: 443,
            base_path: String::new(),
        };
        let mut m = Measurements::empty(endpoint, HttpsObservation::Unavailable("x".into()));
        m.capabilities = caps;
        m
    }

    fn real() -> Value {
        parse_capabilities(&fixture("opencloud-4.0.0/ocs-v1-capabilities.txt").body).unwrap()
    }

    fn status(findings: &[Finding], id: &str) -> Status {
        findings.iter().find(|f| f.id == id).unwrap().status
    }

    #[test]
    fn the_real_defaults() {
        let findings = evaluate(&with(Some(real())));
        assert_eq!(
            status(&findings, "publicLinkPasswordEnforced"),
            Status::Passed
        );
        assert_eq!(
            status(&findings, "publicLinkExpirationEnforced"),
            Status::Indeterminate
        );
        assert_eq!(
            status(&findings, "userEnumerationRestricted"),
            Status::Passed
        );
        assert_eq!(status(&findings, "passwordPolicyEnforced"), Status::Passed);
    }

    #[test]
    fn weakened_settings_fail() {
        let mut caps = real();
        caps["files_sharing"]["public"]["password"]["enforced_for"]["read_write"] = false.into();
        caps["files_sharing"]["user_enumeration"]["group_members_only"] = false.into();
        caps["password_policy"] = serde_json::json!({"max_characters": 72});
        caps["files_sharing"]["public"]["expire_date"]["enforced"] = false.into();
        let findings = evaluate(&with(Some(caps)));
        for id in [
            "publicLinkPasswordEnforced",
            "userEnumerationRestricted",
            "passwordPolicyEnforced",
            "publicLinkExpirationEnforced",
        ] {
            assert_eq!(status(&findings, id), Status::Failed, "{id}");
        }
    }

    /// Search switched off passes for what it is; the reported group limit passes saying it is
    /// only what the instance claims.
    #[test]
    fn user_enumeration_says_what_it_rests_on() {
        let mut caps = real();
        let detail = |caps: serde_json::Value| {
            let findings = evaluate(&with(Some(caps)));
            let f = findings
                .iter()
                .find(|f| f.id == "userEnumerationRestricted")
                .unwrap();
            (f.status, f.detail.clone())
        };
        let (status, said) = detail(caps.clone());
        assert_eq!(status, Status::Passed);
        assert!(said.contains("not tried by a search"), "{said}");
        caps["files_sharing"]["user_enumeration"]["enabled"] = false.into();
        assert_eq!(
            detail(caps),
            (
                Status::Passed,
                "user search for sharing is switched off".to_string()
            )
        );
    }

    #[test]
    fn no_capabilities_is_indeterminate() {
        let findings = evaluate(&with(None));
        assert_eq!(findings.len(), ROWS.len());
        assert!(findings.iter().all(|f| f.status == Status::Indeterminate));
    }
}
