//! Sign-in: published demo accounts against the instance's own identity provider, password
//! basic auth (decided by a real credential, never by the `Basic` challenge that every default
//! instance sends), and the identity provider's discovery document.

use super::{
    AcrossNodes, CheckSpec, Fix, IDENTITY_PROVIDER, INSTANCE, Measure, Unmeasured, Verdict,
    finding, verdict,
};
use crate::family::{DemoAccount, ProductFamily};
use crate::net::http::Scheme;
use crate::probe::status::printable;
use crate::probe::{Measurements, plan};
use crate::report::Category;
use crate::report::{Finding, Role, Status};
use crate::severity::Severity;

/// What every row of this module shares: a check of how the instance signs people in.
const SIGN_IN_ROW: CheckSpec = CheckSpec {
    role: Role::Check,
    category: Category::Authentication,
    ..CheckSpec::ROW
};

pub static LOGIN_THROTTLING: CheckSpec = CheckSpec {
    id: "loginThrottling",
    unmeasured: &[Unmeasured::Because(
        "not tried: the discovery document names no built-in identity provider",
    )],
    role: Role::Observation,
    severity: Severity::Low,
    title: "Repeated failed sign-ins are throttled (--login-throttling; never rated)",
    remediation: "Throttle failed sign-ins at the reverse proxy (e.g. nginx limit_req on \
                  /signin/v1/identifier/_/logon) or with fail2ban on the instance's log.",
    documentation: "https://cheatsheetseries.owasp.org/cheatsheets/Authentication_Cheat_Sheet.html#protect-against-automated-attacks",
    fixed_in: super::REVERSE_PROXY,
    verified_by: &[Measure::Probe(plan::OIDC), Measure::Probes(plan::THROTTLE)],
    ..SIGN_IN_ROW
};

pub static DEMO_USERS_DISABLED: CheckSpec = CheckSpec {
    id: "demoUsersDisabled",
    across_nodes: AcrossNodes::DemoSignIn,
    severity: Severity::Critical,
    title: "Published demo accounts cannot sign in",
    remediation: "Delete the demo accounts (dennis, margaret, alan, lynn, mary) and set \
                  IDM_CREATE_DEMO_USERS=false; switching the setting off later does not \
                  remove accounts already created.",
    documentation: "https://docs.opencloud.eu/docs/admin/resources/demo-user",
    fixed_in: IDENTITY_PROVIDER,
    verified_by: &[Measure::Probe(plan::OIDC), Measure::Probes(plan::DEMO)],
    fix: Fix::DemoUsers,
    advice: &[(
        ProductFamily::InfiniteScale,
        "Delete the demo accounts (einstein, marie, moss, richard, katherine) and set \
         IDM_CREATE_DEMO_USERS=false; switching the setting off later does not remove \
         accounts already created.",
    )],
    ..SIGN_IN_ROW
};

pub static BASIC_AUTH_DISABLED: CheckSpec = CheckSpec {
    id: "basicAuthDisabled",
    severity: Severity::Medium,
    title: "Passwords are not accepted over basic auth",
    remediation: "Set PROXY_ENABLE_BASIC_AUTH=false (the default): basic auth takes passwords \
                  on every request and bypasses the identity provider's protections. App \
                  tokens keep working.",
    documentation: "https://docs.opencloud.eu/docs/admin/configuration/",
    fixed_in: INSTANCE,
    verified_by: &[
        Measure::Probe(plan::OIDC),
        // A refused credential proves basic auth off only for an account that signs in.
        Measure::Keys(plan::first_demo_sign_ins),
        Measure::Probes(plan::BASIC),
    ],
    fix: Fix::BasicAuthOff,
    ..SIGN_IN_ROW
};

pub static IDENTITY_PROVIDER_CONSISTENT: CheckSpec = CheckSpec {
    id: "identityProviderConsistent",
    unmeasured: &[Unmeasured::Because(
        "no OpenID discovery document was served",
    )],
    severity: Severity::Medium,
    title: "The identity provider's endpoints share its issuer's origin and use HTTPS",
    remediation: "Set OC_URL (or the external provider's issuer) to the public https:// \
                  address of the instance so every endpoint in the discovery document uses it.",
    documentation: "https://openid.net/specs/openid-connect-discovery-1_0.html",
    fixed_in: IDENTITY_PROVIDER,
    verified_by: &[Measure::Probe(plan::OIDC)],
    fix: Fix::PublicUrl,
    advice: &[(
        ProductFamily::InfiniteScale,
        "Set OCIS_URL (or the external provider's issuer) to the public https:// address \
         of the instance so every endpoint in the discovery document uses it.",
    )],
    ..SIGN_IN_ROW
};

pub static ROWS: &[&CheckSpec] = &[
    &LOGIN_THROTTLING,
    &DEMO_USERS_DISABLED,
    &BASIC_AUTH_DISABLED,
    &IDENTITY_PROVIDER_CONSISTENT,
];

/// Whether a body is a JSON document, read without keeping any of it.
fn is_json(body: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok()
}

/// Which of the family's demo accounts signed in; `None` when no sign-in was tried.
fn demo_sign_ins(m: &Measurements) -> Option<(Vec<&'static DemoAccount>, usize, usize)> {
    let mut accepted = Vec::new();
    let mut answered = 0;
    let mut tried = 0;
    for account in m.family().describe().demo_accounts {
        let Some(observation) = m.http.get(&format!("demo:{}", account.user)) else {
            continue;
        };
        tried += 1;
        if let Ok(r) = observation {
            answered += 1;
            if plan::is_successful_sign_in(r) {
                accepted.push(account);
            }
        }
    }
    (tried > 0).then_some((accepted, answered, tried))
}

fn demo_users(m: &Measurements) -> Verdict {
    match demo_sign_ins(m) {
        None => {
            let detail = "not tried: the discovery document names no built-in identity provider";
            (Status::Skipped, detail.into())
        }
        Some((accepted, _, _)) if !accepted.is_empty() => {
            let names: Vec<String> = accepted
                .iter()
                .map(|a| match a.role {
                    Some(role) => format!("{} ({role})", a.user),
                    None => a.user.to_string(),
                })
                .collect();
            let names = names.join(", ");
            let detail = format!("demo accounts sign in with their published password: {names}");
            (Status::Failed, detail)
        }
        Some((_, answered, tried)) if answered == tried => {
            (Status::Passed, "no published demo account signs in".into())
        }
        Some(_) => (Status::NetworkLimited, NO_SIGN_IN_ANSWER.into()),
    }
}

/// The demo sign-ins and the throttling probe say so when an attempt got no answer.
const NO_SIGN_IN_ANSWER: &str = "some sign-in attempts got no answer";

fn basic_auth(m: &Measurements) -> Verdict {
    let undecided = || {
        let detail = "no credential could decide it (the Basic challenge alone proves nothing)";
        (Status::Indeterminate, detail.to_string())
    };
    let user = m.family().describe().demo_accounts[0].user;
    let Some(observation) = m.http.get(&format!("basic:{user}")) else {
        return undecided();
    };
    let account_exists =
        demo_sign_ins(m).is_some_and(|(accepted, _, _)| accepted.iter().any(|a| a.user == user));
    match observation {
        Ok(r) if (200..300).contains(&r.status) && is_json(&r.body) => (
            Status::Failed,
            format!("the password of {user} is accepted over basic auth on /graph/v1.0/me"),
        ),
        Ok(r) if r.status == 401 && account_exists => (
            Status::Passed,
            format!("{user} signs in through the identity provider but not over basic auth"),
        ),
        Ok(_) => undecided(),
        Err(e) => (
            Status::NetworkLimited,
            format!("no answer: {}", printable(e.message())),
        ),
    }
}

/// Scheme and host of a URL, lower-cased (`https://cloud.example:443`).
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty()).then(|| {
        format!(
            "{}://{}",
            scheme.to_ascii_lowercase(),
            host.to_ascii_lowercase()
        )
    })
}

fn discovery(m: &Measurements) -> Option<Finding> {
    let id = &IDENTITY_PROVIDER_CONSISTENT;
    let r = m.answer(plan::OIDC)?;
    if r.status != 200 {
        return None;
    }
    let doc = plan::parse_discovery(&r.body)?;
    let issuer = doc.issuer.as_deref()?;
    let issuer_origin = origin_of(issuer)?;
    let mut problems = Vec::new();
    for (key, url) in doc.endpoints() {
        if let Some(url) = url
            && origin_of(url).as_deref() != Some(issuer_origin.as_str())
        {
            problems.push(format!(
                "{key} {} is not on the issuer's origin",
                printable(url)
            ));
        }
    }
    if m.endpoint.scheme == Scheme::Https && !issuer_origin.starts_with("https://") {
        problems.push(format!("the issuer {} is not https", printable(issuer)));
    }
    Some(if problems.is_empty() {
        finding(id, Status::Passed, format!("issuer {}", printable(issuer)))
    } else {
        finding(id, Status::Failed, problems.join("; "))
    })
}

fn throttling(m: &Measurements) -> Option<Finding> {
    let id = &LOGIN_THROTTLING;
    let answers: Vec<&crate::probe::Observation> = (1..=plan::THROTTLING_ATTEMPTS)
        .filter_map(|n| m.http.get(&format!("throttle:{n}")))
        .collect();
    if answers.is_empty() {
        return None;
    }
    let throttled_at = answers.iter().position(|o| {
        matches!(o, Ok(r) if r.status == 429 || r.status == 423
            || (r.status == 503 && r.header("retry-after").is_some()))
    });
    let (status, detail) = match throttled_at {
        Some(n) => (
            Status::Passed,
            format!("failed sign-ins are throttled from attempt {}", n + 1),
        ),
        None if answers.iter().all(|o| o.is_ok()) => (
            Status::Failed,
            format!(
                "{} failed sign-ins for an account that cannot exist were all answered at once",
                answers.len()
            ),
        ),
        None => (Status::NetworkLimited, NO_SIGN_IN_ANSWER.into()),
    };
    Some(Finding {
        counts: false,
        ..finding(id, status, detail)
    })
}

pub fn evaluate(m: &Measurements) -> Vec<Finding> {
    let mut findings = vec![
        verdict(&DEMO_USERS_DISABLED, demo_users(m)),
        verdict(&BASIC_AUTH_DISABLED, basic_auth(m)),
    ];
    findings.extend(discovery(m));
    findings.extend(throttling(m));
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::ProductFamily;
    use crate::net::HttpsObservation;
    use crate::net::http::{Endpoint, FetchError, Response};
    use crate::probe::fixture;

    fn m() -> Measurements {
        let endpoint = Endpoint {
            scheme: Scheme::Https,
            url_host: "localhost".into(),
            port: 9200,
            base_path: String::new(),
        };
        let mut m = Measurements::empty(endpoint, HttpsObservation::Unavailable("x".into()));
        m.http.insert(
            plan::OIDC.into(),
            Ok(fixture(
                "opencloud-4.0.0/well-known-openid-configuration.txt",
            )),
        );
        m
    }

    fn with_demo(m: &mut Measurements, dennis_file: &str, basic_file: &str) {
        for account in ProductFamily::OpenCloud.describe().demo_accounts {
            let user = account.user;
            let file = if user == "dennis" {
                dennis_file
            } else {
                "opencloud-4.0.0/login-idp-logon-dennis-wrong.txt"
            };
            m.http.insert(format!("demo:{user}"), Ok(fixture(file)));
        }
        m.http
            .insert("basic:dennis".into(), Ok(fixture(basic_file)));
    }

    fn get(findings: &[Finding], id: &str) -> Finding {
        findings.iter().find(|f| f.id == id).cloned().unwrap()
    }

    #[test]
    fn real_demo_sign_in_is_critical_and_basic_auth_off_is_decided_by_it() {
        let mut m = m();
        with_demo(
            &mut m,
            "opencloud-4.0.0/login-idp-logon-dennis-demo.txt",
            "opencloud-4.0.0/login-basic-dennis-graph-me.txt",
        );
        let findings = evaluate(&m);
        let demo = get(&findings, "demoUsersDisabled");
        assert_eq!(
            (demo.status, demo.severity),
            (Status::Failed, Severity::Critical)
        );
        assert!(demo.detail.contains("dennis (administrator)"));
        let basic = get(&findings, "basicAuthDisabled");
        assert_eq!(basic.status, Status::Passed, "{}", basic.detail);
    }

    #[test]
    fn basic_auth_enabled_is_found_by_a_credential_that_works() {
        let mut m = m();
        with_demo(
            &mut m,
            "opencloud-4.0.0/login-idp-logon-dennis-demo.txt",
            "opencloud-3.7.0-variant/login-basic-dennis-graph-me.txt",
        );
        let basic = get(&evaluate(&m), "basicAuthDisabled");
        assert_eq!(
            (basic.status, basic.severity),
            (Status::Failed, Severity::Medium)
        );
    }

    #[test]
    fn without_a_working_credential_basic_auth_is_indeterminate() {
        let mut m = m();
        with_demo(
            &mut m,
            "opencloud-4.0.0/login-idp-logon-dennis-wrong.txt",
            "opencloud-4.0.0/login-basic-dennis-graph-me.txt",
        );
        let findings = evaluate(&m);
        assert_eq!(get(&findings, "demoUsersDisabled").status, Status::Passed);
        assert_eq!(
            get(&findings, "basicAuthDisabled").status,
            Status::Indeterminate
        );
        // No probes at all (external identity provider): skipped and indeterminate, never failed.
        let findings = evaluate(&self::m());
        assert_eq!(get(&findings, "demoUsersDisabled").status, Status::Skipped);
        assert_eq!(
            get(&findings, "basicAuthDisabled").status,
            Status::Indeterminate
        );
    }

    #[test]
    fn unanswered_sign_ins_are_network_limited() {
        let mut m = m();
        for account in ProductFamily::OpenCloud.describe().demo_accounts {
            m.http.insert(
                format!("demo:{}", account.user),
                Err(FetchError::Transient("reset".into())),
            );
        }
        assert_eq!(
            get(&evaluate(&m), "demoUsersDisabled").status,
            Status::NetworkLimited
        );
    }

    #[test]
    fn discovery_of_the_real_instance_is_consistent() {
        let f = get(&evaluate(&m()), "identityProviderConsistent");
        assert_eq!(f.status, Status::Passed, "{}", f.detail);
        let mut m = m();
        m.http.insert(
            plan::OIDC.into(),
            Ok(Response {
                status: 200,
                headers: vec![],
                body: br#"{"issuer": "http://cloud.example", "authorization_endpoint": "https://idp.other/authorize"}"#.to_vec(),
                truncated: false,
                digest: None,
            }),
        );
        let f = get(&evaluate(&m), "identityProviderConsistent");
        assert_eq!(f.status, Status::Failed);
        assert!(
            f.detail.contains("authorization_endpoint") && f.detail.contains("not https"),
            "{}",
            f.detail
        );
    }
}
