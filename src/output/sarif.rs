//! `--format sarif`: one SARIF 2.1.0 document for all hosts (spec "Versioning" item 3), shaped
//! for code-scanning consumers such as GitHub code scanning.
//!
//! - One run. `tool.driver.rules` holds every row of the check registry, in registry order, so
//!   `ruleIndex` is stable for a given plugin version.
//! - One result per failed finding of role check, hardening or version; passed findings and
//!   observations give none. The rule of `exposed:/.env` is its family root `exposed`; the
//!   result level follows the finding's own severity (a member may differ from its root).
//! - Every result names its host twice: `physicalLocation.artifactLocation.uri` is the host's
//!   base URL (code scanning requires a physical location) and a logical location of kind
//!   `resource` carries the host name.
//! - `partialFingerprints.primaryLocationLineHash` is the SHA-256 of `<host>|<finding id>`:
//!   nothing that changes between runs (time, detail text) goes in, so one finding stays one
//!   alert.
//! - Waived findings are results with an external suppression.
//! - A failed scan is a tool execution notification; `executionSuccessful` is false when any
//!   scan failed.
//!
//! The document is built as `serde_json::Value` and printed by serde_json: every string a
//! server sent is escaped by serde_json, never by hand.

use super::Context;
use crate::checks::{self, CheckSpec};
use crate::clock::Now;
use crate::report::{Finding, Role, ScanResult, Status};
use crate::severity::Severity;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub fn render(results: &[ScanResult], ctx: &Context) -> String {
    // `{:#}`: serde_json's pretty print of a `Value` (which cannot fail).
    format!("{:#}\n", document(results, ctx.now))
}

/// The SARIF log of a run over `results`, `now` being the run's clock.
pub fn document(results: &[ScanResult], now: Now) -> Value {
    let mut rules = Rules::registry();
    let mut sarif_results = Vec::new();
    for result in results {
        for finding in result.findings.iter().filter(|f| reported(f)) {
            let index = rules.index_of(finding);
            sarif_results.push(sarif_result(result, finding, index, &rules.ids[index]));
        }
    }
    let notifications: Vec<Value> = results.iter().filter_map(notification).collect();
    let invocation = json!({
        "executionSuccessful": results.iter().all(|r| r.error.is_none()),
        "endTimeUtc": now.stamp(),
        "toolExecutionNotifications": notifications,
    });
    let version = env!("CARGO_PKG_VERSION");
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": crate::program::PROGRAM,
                    "version": version,
                    "semanticVersion": version,
                    "informationUri": "https://github.com/storage-security/check-storage-security",
                    "rules": rules.descriptors,
                },
            },
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": sarif_results,
            "properties": {
                "hosts": results.iter().map(host_summary).collect::<Vec<_>>(),
            },
        }],
    })
}

/// Whether a finding becomes a SARIF result: failed, and not an observation.
fn reported(f: &Finding) -> bool {
    f.status == Status::Failed && matches!(f.role, Role::Check | Role::Hardening | Role::Version)
}

/// `error` for critical and high, `warning` for medium, `note` for low.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// The score GitHub code scanning reads from `properties.security-severity`.
pub fn security_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "9.0",
        Severity::High => "7.0",
        Severity::Medium => "5.0",
        Severity::Low => "3.0",
    }
}

/// SHA-256 (hex) of `<host>|<finding id>`: the same finding on the same host keeps its value
/// from run to run.
pub fn fingerprint(host: &str, finding_id: &str) -> String {
    crate::text::hex(&Sha256::digest(format!("{host}|{finding_id}").as_bytes()))
}

/// The host's base URL: the scanned URL, or `https://<host>/` when the scan never got one.
pub fn base_url(result: &ScanResult) -> String {
    let mut url = result
        .url
        .clone()
        .unwrap_or_else(|| format!("https://{}", result.host));
    if !url.ends_with('/') {
        url.push('/');
    }
    url
}

/// `Strict-Transport-Security` -> `StrictTransportSecurity`, `httpsAvailable` ->
/// `HttpsAvailable`: the rule's `name`, an identifier without separators.
fn pascal_case(id: &str) -> String {
    id.split(|c: char| !c.is_ascii_alphanumeric())
        .flat_map(|word| {
            let mut chars = word.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase());
            first.into_iter().chain(chars)
        })
        .collect()
}

/// The rules of the run: every registry row, plus (defensively) a rule made from a finding
/// whose id the registry does not know, so every `ruleId` resolves.
struct Rules {
    ids: Vec<String>,
    descriptors: Vec<Value>,
}

impl Rules {
    fn registry() -> Rules {
        Rules {
            ids: checks::registry().map(|s| s.id.to_string()).collect(),
            descriptors: checks::registry().map(rule_descriptor).collect(),
        }
    }

    /// The index of the rule of a finding: its registry row (the family root for
    /// `exposed:/.env`), else an added rule named after the finding.
    fn index_of(&mut self, finding: &Finding) -> usize {
        let id = checks::spec(&finding.id)
            .map(|s| s.id.to_string())
            .unwrap_or_else(|| finding.id.clone());
        if let Some(i) = self.ids.iter().position(|known| *known == id) {
            return i;
        }
        self.descriptors.push(adhoc_descriptor(&id, finding));
        self.ids.push(id);
        self.ids.len() - 1
    }
}

/// The rule of a registry row.
fn rule_descriptor(spec: &'static CheckSpec) -> Value {
    let members = match spec.family {
        Some(root) => format!(" Applies to every `{root}:<member>` finding."),
        None => String::new(),
    };
    let full = format!(
        "{} ({} of severity {}; fixed in: {}).{members}",
        spec.title,
        spec.role.as_str(),
        spec.severity,
        spec.fixed_in
    );
    // A finding of the row carries the row's help, link, severity, category and role.
    let like = checks::finding(spec, Status::Failed, "");
    descriptor(spec.id, spec.title, full, &like)
}

/// The rule of a finding whose id the registry does not know, from what the finding says.
fn adhoc_descriptor(id: &str, finding: &Finding) -> Value {
    let role = finding.role.as_str();
    let full = format!("{id} ({role} of severity {}).", finding.severity);
    descriptor(id, id, full, finding)
}

/// A rule: `short` and `full` describe it, `like` (a finding of the rule) gives the rest.
fn descriptor(id: &str, short: &str, full: String, like: &Finding) -> Value {
    let mut rule = json!({
        "id": id,
        "name": pascal_case(id),
        "shortDescription": { "text": short },
        "fullDescription": { "text": full },
        "help": { "text": like.remediation },
        "defaultConfiguration": { "level": level(like.severity) },
        "properties": {
            "tags": [like.category, "security"],
            "security-severity": security_severity(like.severity),
            "precision": "high",
            "role": like.role.as_str(),
            "fixedIn": like.fixed_in,
        },
    });
    if let Some(doc) = &like.documentation {
        rule["helpUri"] = json!(doc);
    }
    rule
}

fn sarif_result(result: &ScanResult, finding: &Finding, rule_index: usize, rule_id: &str) -> Value {
    let host = result.host.as_str();
    // serde_json keeps members sorted by name, whatever the order they are added in.
    let mut properties = json!({
        "host": host,
        "findingId": finding.id,
        "severity": finding.severity,
        "category": finding.category,
        "role": finding.role.as_str(),
        "remediation": finding.remediation,
        "system": finding.fixed_in,
        "counts": finding.counts,
        "decisive": finding.decisive,
        "tags": [finding.category, "security", finding.role.as_str()],
        "security-severity": security_severity(finding.severity),
    });
    if let Some(doc) = &finding.documentation {
        properties["documentation"] = json!(doc);
    }
    if let Some(advisory_id) = checks::VULNERABILITY.member_of(&finding.id) {
        let advisory = result.vulnerabilities.iter().find(|v| v.id == advisory_id);
        let affected = advisory.map(|v| v.affected.as_slice()).unwrap_or_default();
        properties["affectedVersions"] = json!(affected);
        properties["fixedIn"] = json!(advisory.and_then(|v| v.fixed_in.as_ref()));
        if let Some(v) = advisory {
            properties["advisoryId"] = json!(v.id);
            properties["aliases"] = json!(v.aliases);
            if let Some(url) = &v.url {
                properties["advisoryUrl"] = json!(url);
            }
        }
    }
    let mut out = json!({
        "ruleId": rule_id,
        "ruleIndex": rule_index,
        "kind": "fail",
        "level": level(finding.severity),
        "message": { "text": format!("{}: {} (host {host})", finding.id, finding.detail) },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": { "uri": base_url(result) },
                // Code scanning wants a region; the whole "file" is the host.
                "region": { "startLine": 1 },
            },
            "logicalLocations": host_location(host),
        }],
        "partialFingerprints": {
            "primaryLocationLineHash": fingerprint(host, &finding.id),
        },
        "properties": properties,
    });
    if finding.ignored {
        out["suppressions"] = json!([{
            "kind": "external",
            "status": "accepted",
            "justification": "waived by the operator",
        }]);
    }
    out
}

/// The notification of a failed scan; `None` for a scan that ran.
fn notification(result: &ScanResult) -> Option<Value> {
    let error = result.error.as_ref()?;
    Some(json!({
        "level": "error",
        "message": { "text": format!("cannot scan {}: {}", result.host, error.message) },
        "descriptor": { "id": "scanFailed" },
        "locations": [{
            "physicalLocation": { "artifactLocation": { "uri": base_url(result) } },
            "logicalLocations": host_location(&result.host),
        }],
        "properties": { "host": result.host, "attempts": error.attempts },
    }))
}

/// The host as a logical location: a resource named after it.
fn host_location(host: &str) -> Value {
    json!([{ "name": host, "fullyQualifiedName": host, "kind": "resource" }])
}

/// What the run found out about each host, beside the results: state, rating and product.
fn host_summary(result: &ScanResult) -> Value {
    let product = result.product.as_ref();
    json!({
        "host": result.host,
        "url": base_url(result),
        "scannedAt": result.scanned_at,
        "state": result.state,
        "rating": result.rating,
        "grade": result.grade,
        "message": result.message,
        "product": product.map(|p| p.name.clone()),
        "productVersion": product.map(|p| p.version.clone()),
        "edition": product.and_then(|p| p.edition.clone()),
        "error": result.error.as_ref().map(|e| e.message.clone()),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::{
        Coverage, KnowledgeInfo, Product, RatingExplanation, RemediationPlan, ScanError, State,
        Vulnerability,
    };

    fn now() -> Now {
        Now("2026-11-22T03:00:00Z".parse().unwrap())
    }

    pub(crate) fn result(host: &str, findings: Vec<Finding>) -> ScanResult {
        ScanResult {
            host: host.to_string(),
            url: Some(format!("https://{host}")),
            scanned_at: "2026-11-22T03:00:00Z".parse().unwrap(),
            duration_seconds: 0.5,
            state: State::Warning,
            message: "something failed".into(),
            causes: Vec::new(),
            rating: Some(3),
            grade: "C".into(),
            error: None,
            product: Some(Product {
                family: crate::knowledge::ProductFamily::OpenCloud,
                name: "OpenCloud".into(),
                version: "4.0.0".into(),
                legacy_version: None,
                edition: Some("<b>\"\n".into()),
            }),
            lifecycle: None,
            update: None,
            upgrade_options: Vec::new(),
            tls: None,
            vulnerabilities: vec![Vulnerability {
                id: "GHSA-aaaa-bbbb-cccc".into(),
                aliases: vec!["CVE-2026-1".into()],
                severity: Some(Severity::Medium),
                summary: "bad".into(),
                url: None,
                affected: vec![">=4.0.0, <4.0.3".into()],
                fixed_in: Some("4.0.3".into()),
            }],
            coverage: Some(Coverage::of(&findings)),
            findings,
            check_hardening: true,
            extra_checks: true,
            rating_explanation: RatingExplanation {
                starting_rating: Some(5),
                starting_reason: "up to date".into(),
                limits: Vec::new(),
                final_rating: Some(3),
                final_grade: "C".into(),
                warning_threshold: 3,
                critical_threshold: 1,
                notes: Vec::new(),
            },
            remediation_plan: RemediationPlan::default(),
            waivers: Vec::new(),
            waiver_days_left: None,
            policy: None,
            baseline: None,
            webhook: None,
            submitter_waivers: None,
            configuration_fingerprint: None,
            knowledge: KnowledgeInfo {
                advisories_updated: None,
                schedule_updated: None,
                advisory_sources: Vec::new(),
                notes: Vec::new(),
            },
            conditions: None,
        }
    }

    fn findings() -> Vec<Finding> {
        let mut waived =
            checks::finding_for("corsOriginRestricted", Status::Failed, "any origin").unwrap();
        waived.ignored = true;
        let mut member =
            checks::finding_for("exposed:/.env", Status::Failed, "served \"x\" <y>").unwrap();
        member.severity = Severity::Critical;
        let mut vuln =
            checks::finding_for("vulnerability:GHSA-aaaa-bbbb-cccc", Status::Failed, "v").unwrap();
        vuln.severity = Severity::Medium;
        vec![
            checks::finding_for("httpsAvailable", Status::Passed, "HTTPS is available").unwrap(),
            member,
            waived,
            checks::finding_for("hstsPreload", Status::Failed, "no preload").unwrap(),
            checks::finding_for("loginThrottling", Status::Failed, "not throttled").unwrap(),
            checks::finding_for("tlsCertificate", Status::Indeterminate, "?").unwrap(),
            vuln,
        ]
    }

    #[test]
    fn one_result_per_failed_rated_finding_with_its_rule() {
        let doc = document(&[result("cloud.example:8443", findings())], now());
        let run = &doc["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), checks::registry().count());
        let results = run["results"].as_array().unwrap();
        let ids: Vec<&str> = results
            .iter()
            .map(|r| r["properties"]["findingId"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            [
                "exposed:/.env",
                "corsOriginRestricted",
                "hstsPreload",
                "vulnerability:GHSA-aaaa-bbbb-cccc"
            ],
            "passed, indeterminate and observation findings give no result"
        );
        for r in results {
            let index = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[index]["id"], r["ruleId"]);
        }
        assert_eq!(results[0]["ruleId"], "exposed");
        assert_eq!(results[0]["level"], "error", "the member's own severity");
        assert_eq!(
            results[0]["message"]["text"],
            "exposed:/.env: served \"x\" <y> (host cloud.example:8443)"
        );
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "https://cloud.example:8443/"
        );
        assert_eq!(
            results[0]["locations"][0]["logicalLocations"][0]["kind"],
            "resource"
        );
        assert_eq!(
            results[0]["partialFingerprints"]["primaryLocationLineHash"],
            fingerprint("cloud.example:8443", "exposed:/.env")
        );
        assert!(results[0].get("suppressions").is_none());
        assert_eq!(
            results[1]["suppressions"][0]["justification"],
            "waived by the operator"
        );
        assert_eq!(results[1]["suppressions"][0]["kind"], "external");
        assert_eq!(results[2]["level"], "note");
        assert_eq!(results[3]["ruleId"], "vulnerability");
        assert_eq!(results[3]["level"], "warning");
        assert_eq!(
            results[3]["properties"]["affectedVersions"],
            json!([">=4.0.0, <4.0.3"])
        );
        assert_eq!(results[3]["properties"]["fixedIn"], "4.0.3");
        let invocation = &run["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], true);
        assert_eq!(invocation["toolExecutionNotifications"], json!([]));
        assert_eq!(run["properties"]["hosts"][0]["edition"], "<b>\"\n");
    }

    #[test]
    fn rules_carry_the_registry_rows() {
        let doc = document(&[], now());
        let driver = &doc["runs"][0]["tool"]["driver"];
        assert_eq!(driver["name"], "check-storage-security");
        assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
        let rules = driver["rules"].as_array().unwrap();
        for (rule, spec) in rules.iter().zip(checks::registry()) {
            assert_eq!(rule["id"], spec.id);
            assert_eq!(rule["shortDescription"]["text"], spec.title);
            assert_eq!(rule["help"]["text"], spec.remediation);
            assert_eq!(rule["defaultConfiguration"]["level"], level(spec.severity));
            assert_eq!(
                rule["properties"]["tags"],
                json!([spec.category, "security"])
            );
            assert_eq!(
                rule["properties"]["security-severity"],
                security_severity(spec.severity)
            );
            // Every rule links its documentation.
            assert_eq!(rule["helpUri"], spec.documentation);
            assert!(spec.documentation.starts_with("https://"), "{}", spec.id);
            let name = rule["name"].as_str().unwrap();
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric()), "{name}");
        }
        assert_eq!(
            pascal_case("Strict-Transport-Security"),
            "StrictTransportSecurity"
        );
        assert_eq!(pascal_case("httpsAvailable"), "HttpsAvailable");
    }

    #[test]
    fn a_failed_scan_is_a_tool_execution_notification() {
        let mut failed = result("down.example", Vec::new());
        failed.url = None;
        failed.state = State::Unknown;
        failed.error = Some(ScanError {
            message: "connection refused".into(),
            attempts: 3,
        });
        let doc = document(&[result("up.example", findings()), failed], now());
        let invocation = &doc["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false);
        let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0]["level"], "error");
        assert_eq!(
            notes[0]["message"]["text"],
            "cannot scan down.example: connection refused"
        );
        assert_eq!(
            notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "https://down.example/"
        );
    }

    #[test]
    fn an_unknown_finding_id_gets_a_rule_of_its_own() {
        let mut odd = checks::finding_for("hstsPreload", Status::Failed, "x").unwrap();
        odd.id = "brandNewCheck".into();
        let doc = document(&[result("h", vec![odd.clone(), odd])], now());
        let run = &doc["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), checks::registry().count() + 1);
        let results = run["results"].as_array().unwrap();
        assert_eq!(results[0]["ruleIndex"], rules.len() - 1);
        assert_eq!(results[1]["ruleIndex"], rules.len() - 1);
        assert_eq!(rules[rules.len() - 1]["id"], "brandNewCheck");
    }

    #[test]
    fn fingerprints_depend_on_host_and_id_only() {
        assert_eq!(fingerprint("a", "b"), fingerprint("a", "b"));
        assert_ne!(fingerprint("a", "b"), fingerprint("a", "c"));
        assert_eq!(fingerprint("a", "b").len(), 64);
    }
}
