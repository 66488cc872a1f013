//! The scan result document: one per host, built by the assessment, rendered by every output
//! format and nothing else. The JSON format is this document.
//!
//! Every type of the document is here, and so is the one reader of documents written earlier
//! ([`read_document`], [`read_documents`]): stores, pages, exports, MCP, the fleet view and the
//! waiver review read this type, so a member renamed here fails to compile where it is shown.
//!
//! Reading back: a member a reader cannot do without is required (a document's `host`,
//! `scannedAt`, `state`, `findings` and `waivers`; a finding's `id`, `status` and `severity`; the
//! names of a product, a lifecycle, an advisory, a waiver). Every other member reads as absent,
//! empty, zero or false when it is missing (`#[serde(default)]`; serde reads a missing `Option`
//! member as `None` without it): documents of earlier versions
//! lack the members added since (`upgradeOptions`, `coverage`, `conditions`, `baseline`, ...),
//! and a missing member says no more than an empty one. A finding without a `role` is an
//! observation: it was never rated. Members this version does not know (a newer scanner's) are
//! skipped.

use crate::knowledge::lifecycle::LineState;
use crate::knowledge::{ProductFamily, Track};
use crate::severity::Severity;
use serde::{Deserialize, Serialize};

/// Monitoring state, ordered by how much attention it needs; the discriminant is the
/// monitoring plugin's exit code.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum State {
    Ok = 0,
    Warning = 1,
    Critical = 2,
    /// Also what a document says before anything is known.
    #[default]
    Unknown = 3,
}

impl State {
    pub fn exit_code(self) -> i32 {
        self as i32
    }

    pub fn label(self) -> &'static str {
        match self {
            State::Ok => "OK",
            State::Warning => "WARNING",
            State::Critical => "CRITICAL",
            State::Unknown => "UNKNOWN",
        }
    }

    /// Multi-host priority: CRITICAL > WARNING > UNKNOWN > OK.
    pub fn priority(self) -> u8 {
        // By the discriminant (the exit code): OK 0, WARNING 2, CRITICAL 3, UNKNOWN 1.
        [0, 2, 3, 1][self as usize]
    }

    /// The worse of two states by monitoring priority.
    pub fn worst(self, other: State) -> State {
        std::cmp::max_by_key(self, other, |s| s.priority())
    }
}

/// Grade letters of the numeric ratings 0-5 (spec "Grades and ratings"); `U` when unknown.
/// The grades of the ratings 0 to 5 (there is no B); `U` is an unknown rating.
pub const GRADES: [&str; 6] = ["F", "E", "D", "C", "A", "A+"];

pub fn grade(rating: Option<u8>) -> &'static str {
    let known = rating.and_then(|r| GRADES.get(usize::from(r)));
    known.copied().unwrap_or("U")
}

/// Whether a check found its measure in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    Failed,
    /// Ran but could not decide (server answered garbage, a credential was needed, ...).
    Indeterminate,
    /// Ran but the network kept it from an answer (timeout, reset, scan deadline).
    #[serde(rename = "network-limited")]
    NetworkLimited,
    /// Not run (its precondition was not met, e.g. no built-in identity provider).
    Skipped,
}

impl Status {
    /// As the document writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Indeterminate => "indeterminate",
            Status::NetworkLimited => "network-limited",
            Status::Skipped => "skipped",
        }
    }
}

/// What role a check plays in the rating.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// An additional check: a failure caps the rating by its severity.
    Check,
    /// A hardening measure: listed as missing with `--check-hardening`, never caps the rating.
    Hardening,
    /// The version's standing: end of life or a matched advisory; sets the starting rating.
    Version,
    /// Reported for information only: never rated, never changes the state.
    #[default]
    Observation,
}

impl Role {
    /// As the document writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Check => "check",
            Role::Hardening => "hardening",
            Role::Version => "version",
            Role::Observation => "observation",
        }
    }
}

/// One evaluated check.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub id: String,
    #[serde(default)]
    pub role: Role,
    pub status: Status,
    pub severity: Severity,
    #[serde(default)]
    pub category: Category,
    /// What was observed, in one sentence.
    #[serde(default)]
    pub detail: String,
    #[serde(default)]
    pub remediation: String,
    pub documentation: Option<String>,
    /// The system an operator edits to fix it.
    #[serde(default)]
    pub fixed_in: System,
    /// A failed check counts against the rating (false with `--insecure` for `tlsTrusted`,
    /// with `scanner.extra_checks_rating: false`, and for hardening measures).
    #[serde(default)]
    pub counts: bool,
    /// This failure set or limited the final rating.
    #[serde(default)]
    pub decisive: bool,
    /// Waived by the operator; waived findings stay in the document.
    #[serde(default)]
    pub ignored: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    pub family: ProductFamily,
    #[serde(default)]
    pub name: String,
    pub version: String,
    /// The legacy `version` field of `/status.php` (`0.1.0.0` on OpenCloud): not the release.
    pub legacy_version: Option<String>,
    pub edition: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Vulnerability {
    pub id: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub severity: Option<Severity>,
    #[serde(default)]
    pub summary: String,
    pub url: Option<String>,
    /// Affected ranges as text, e.g. `>=4.0.0, <4.0.3`.
    #[serde(default)]
    pub affected: Vec<String>,
    /// Lowest fixed release at or above the installed one, when known.
    pub fixed_in: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    pub line: String,
    pub track: Option<Track>,
    #[serde(default)]
    pub track_detected: bool,
    /// Why the track judged is not the one the operator asked for (a track the product does
    /// not publish, e.g. lts for Infinite Scale); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track_note: Option<String>,
    pub state: LineState,
    pub line_opened: Option<jiff::civil::Date>,
    pub support_end: Option<jiff::civil::Date>,
    pub support_days_left: Option<i64>,
    #[serde(default)]
    pub current_release: bool,
    pub latest_in_line: Option<String>,
    /// The release to move to given the line's state (past the `--eol-warning` window for a
    /// line ending soon), and the track its line is on.
    pub upgrade_target: Option<String>,
    pub upgrade_target_track: Option<Track>,
    /// The release schedule's date; `""` in the JSON when no schedule was known.
    #[serde(default, with = "date_or_empty")]
    #[schemars(with = "String")]
    pub schedule_updated: Option<jiff::civil::Date>,
    #[serde(default)]
    pub schedule_stale: bool,
}

crate::vocabulary::vocabulary! {
    /// What a candidate upgrade is, in the order a person would consider them (the smallest
    /// step first).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum UpgradeKind {
        /// The newest release of the installed line.
        Patch = "patch",
        /// The newest release on the instance's track.
        Track = "track",
        /// The newest release of the current production line.
        Production = "production",
    }
}

/// One candidate upgrade, rehearsed (`assess::upgrade`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct UpgradeOption {
    pub version: String,
    /// What the candidate is.
    #[schemars(length(min = 1))]
    pub kinds: Vec<UpgradeKind>,
    /// Advisories matching the installed release that this one does not.
    pub fixes: Vec<String>,
    /// Advisories that still match this release.
    pub stays_open: Vec<String>,
    /// The rating the instance would reach: this release's standing, capped by today's
    /// failed checks.
    #[schemars(range(max = 5))]
    pub rating: u8,
    #[schemars(transform = schema::known_grade)]
    pub grade: String,
    pub line: String,
    pub line_state: Option<LineState>,
    pub line_support_end: Option<jiff::civil::Date>,
    /// Whether this line's support lasts longer than the installed line's; `None` when
    /// either end is unknown.
    pub outlasts_installed: Option<bool>,
    /// The rehearsal's choice: highest rating, then a supported line, then smallest step.
    pub best: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct UpdateCheck {
    pub mode: crate::knowledge::update::UpdateMode,
    /// Where the answer came from in the end, or none.
    pub source: Option<crate::knowledge::update::AnswerSource>,
    pub installed: String,
    /// Newest release on the instance's track.
    pub recommended: Option<String>,
    /// Newest release of any track.
    pub newest: Option<String>,
    /// `None` when the check was off or could not decide.
    pub update_available: Option<bool>,
    /// Why the feed was not used, when it was wanted.
    pub error: Option<String>,
    /// With advisories matching the installed release: whether the recommended release is
    /// affected by none of the known advisories. `None` without matching advisories.
    pub upgrade_path_complete: Option<bool>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Tls {
    /// The scheme the instance was reached over (`http` after falling back).
    pub scheme: crate::target::Scheme,
    pub protocol: Option<String>,
    pub cipher_suite: Option<String>,
    pub trusted: Option<bool>,
    pub trust_error: Option<String>,
    pub certificate_subject: Option<String>,
    pub certificate_issuer: Option<String>,
    pub certificate_not_after: Option<jiff::Timestamp>,
    pub cert_days_left: Option<i64>,
    /// Why HTTPS was not used, after falling back to plain HTTP.
    pub https_error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RatingLimit {
    pub id: String,
    pub severity: Severity,
    #[schemars(range(max = 5))]
    pub cap: u8,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct RatingExplanation {
    #[schemars(range(max = 5))]
    pub starting_rating: Option<u8>,
    pub starting_reason: String,
    /// Every failed check that counts, with the cap it imposes.
    pub limits: Vec<RatingLimit>,
    #[schemars(range(max = 5))]
    pub final_rating: Option<u8>,
    #[schemars(transform = schema::grade)]
    pub final_grade: String,
    #[schemars(range(max = 5))]
    pub warning_threshold: u8,
    #[schemars(range(max = 5))]
    pub critical_threshold: u8,
    /// Why checks were left out of the rating (`--insecure`, `extra_checks_rating: false`).
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct RemediationStep {
    pub order: usize,
    pub action: String,
    /// Finding ids this step resolves.
    pub resolves: Vec<String>,
    pub fixed_in: System,
    /// The change in the syntax of each file it can be made in (nginx, Caddy, Apache,
    /// Traefik, environment lines, zone file); empty when no file expresses it (an upgrade).
    pub snippets: Vec<Snippet>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct RemediationGroup {
    pub system: System,
    pub findings: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct RemediationPlan {
    pub steps: Vec<RemediationStep>,
    pub groups: Vec<RemediationGroup>,
    pub group_summary: Vec<String>,
    /// Every step's snippets merged: one per file and form.
    pub snippets: Vec<Snippet>,
}

/// Why a scan produced no assessment.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScanError {
    pub message: String,
    #[serde(default)]
    pub attempts: u32,
}

/// One reason for a host's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// In full, as `message` says it.
    pub text: String,
    /// In a few words (`demoUsersDisabled failed (critical)`, `2 known vulnerabilities`).
    pub short: String,
}

impl Cause {
    pub fn new(text: impl Into<String>, short: impl Into<String>) -> Cause {
        Cause {
            text: text.into(),
            short: short.into(),
        }
    }

    /// A reason short enough to say the same in a few words.
    pub fn same(text: String) -> Cause {
        Cause::new(text.clone(), text)
    }
}

crate::vocabulary::vocabulary! {
    /// The system an operator edits to fix a finding (`fixedIn`, a remediation group's
    /// `system`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum System {
        ReverseProxy = "reverse proxy",
        Instance = "the instance",
        IdentityProvider = "identity provider",
        DnsZone = "DNS zone",
        /// Not stated: written `""` (a row that states none fails `every_row_states_its_texts`).
        #[default]
        Unstated,
    }
}
crate::vocabulary::written_by_name!(System);

crate::vocabulary::vocabulary! {
    /// The area of a check (`category`; JUnit's class name, SARIF's tag).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum Category {
        Lifecycle = "lifecycle",
        Vulnerability = "vulnerability",
        Transport = "transport",
        Headers = "headers",
        Cookies = "cookies",
        Exposure = "exposure",
        Authentication = "authentication",
        Sharing = "sharing",
        Dns = "dns",
        Deployment = "deployment",
        /// Not stated: written `""` (a row that states none fails `every_row_states_its_texts`).
        #[default]
        Unstated,
    }
}
crate::vocabulary::written_by_name!(Category);

/// The result document of one host.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(
    rename_all = "camelCase",
    expecting = "a result document (a JSON object)"
)]
pub struct ScanResult {
    pub host: String,
    pub url: Option<String>,
    pub scanned_at: jiff::Timestamp,
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub duration_seconds: f64,
    pub state: State,
    /// What made the state, most urgent first: the texts of `causes` joined by "; ".
    #[serde(default)]
    pub message: String,
    /// The same reasons one by one, each also in a few words: line 1 of the monitoring output
    /// is built from them within its limit. Not a member of the document: `message` is.
    #[serde(skip)]
    pub causes: Vec<Cause>,
    #[schemars(range(max = 5))]
    pub rating: Option<u8>,
    #[serde(default)]
    #[schemars(transform = schema::grade)]
    pub grade: String,
    pub error: Option<ScanError>,
    pub product: Option<Product>,
    pub lifecycle: Option<Lifecycle>,
    pub update: Option<UpdateCheck>,
    /// Candidate upgrades and what each would bring; empty when none is newer.
    #[serde(default)]
    pub upgrade_options: Vec<UpgradeOption>,
    pub tls: Option<Tls>,
    /// Matched advisories; empty means nothing in the configured database matched, not that
    /// the version is safe.
    #[serde(default)]
    pub vulnerabilities: Vec<Vulnerability>,
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub check_hardening: bool,
    /// Whether the additional checks ran: false with `--no-extra-checks` (only the version and
    /// the transport were judged) and for a scan that failed. A document written before this
    /// member existed ran them.
    #[serde(default = "ran")]
    pub extra_checks: bool,
    #[serde(default)]
    pub rating_explanation: RatingExplanation,
    #[serde(default)]
    pub remediation_plan: RemediationPlan,
    /// Each waiver of the run and what it did to this host's findings.
    pub waivers: Vec<WaiverReport>,
    /// Days until the next time-limited waiver stops hiding a failing check.
    #[schemars(range(min = 0))]
    pub waiver_days_left: Option<i64>,
    /// The verdict of `--policy`, when one was given.
    pub policy: Option<PolicyVerdict>,
    /// Comparison with `--baseline`, when one was given.
    pub baseline: Option<BaselineComparison>,
    /// Webhook delivery for this host, when one was attempted.
    pub webhook: Option<WebhookDelivery>,
    /// Counts of checks by outcome; absent when the scan produced no findings.
    pub coverage: Option<Coverage>,
    /// Digests of what the instance reports, by area; no configuration values.
    pub configuration_fingerprint: Option<Fingerprint>,
    /// Knowledge the verdict was based on (bundled data date, configured sources).
    #[serde(default)]
    pub knowledge: KnowledgeInfo,
    /// The conditions of the scan; `None` for a scan that produced no assessment.
    pub conditions: Option<Conditions>,
    /// What the submitter's waivers make of a scan of the public API, beside the headline
    /// (which is always without them); absent everywhere else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitter_waivers: Option<SubmitterWaivers>,
}

crate::vocabulary::vocabulary! {
    /// What a waiver did to a host's findings.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum WaiverState {
        /// It hides at least one failing finding.
        Active = "active",
        /// Its expiry has passed: the check alerts again, with no change of configuration.
        Expired = "expired",
        /// It hides nothing.
        #[default]
        Unmatched = "unmatched",
    }
}

/// One waiver of the run as a document lists it (`waivers`), with what it did to this host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WaiverReport {
    pub pattern: String,
    /// Where it was given: `--ignore-hardening`, `--waive-until`, `waive` (a submitter's).
    pub source: String,
    #[serde(default)]
    pub state: WaiverState,
    #[serde(default)]
    pub permanent: bool,
    /// For time-limited waivers; a document whose expiry is no timestamp is no result document.
    #[serde(default, deserialize_with = "waiver_expiry")]
    pub expires: Option<jiff::Timestamp>,
    pub reason: Option<String>,
    /// Whole days until a time-limited waiver expires (never negative).
    #[schemars(range(min = 0))]
    pub days_left: Option<i64>,
    /// Failing findings it hides (or would hide, once expired).
    #[serde(default)]
    pub matched: Vec<String>,
}

/// A date written as `""` when there is none (the lifecycle's `scheduleUpdated`, as documents
/// have always written it).
mod date_or_empty {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        date: &Option<jiff::civil::Date>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match date {
            Some(date) => s.collect_str(date),
            None => s.serialize_str(""),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<jiff::civil::Date>, D::Error> {
        match String::deserialize(d)?.as_str() {
            "" => Ok(None),
            text => text.parse().map(Some).map_err(serde::de::Error::custom),
        }
    }
}

/// Reads a waiver's `expires`, refusing what is no timestamp in the words of the tools that
/// read saved documents (`review-waivers`, `fleet`), the text shortened and on one line.
fn waiver_expiry<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<jiff::Timestamp>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    text.parse().map(Some).map_err(|_| {
        let shown: String = crate::text::one_line(&text).chars().take(40).collect();
        serde::de::Error::custom(format!(
            "a waiver expiry {shown:?} that is no timestamp with a time zone"
        ))
    })
}

/// The `policy` member: whether the `--policy` requirements are met.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyVerdict {
    pub met: bool,
    /// One sentence per unmet requirement.
    #[serde(default)]
    pub unmet: Vec<String>,
}

impl PolicyVerdict {
    /// The text after `Policy: ` in the default output.
    pub fn summary(&self) -> String {
        if self.unmet.is_empty() {
            "every requirement is met".to_string()
        } else {
            format!(
                "{} requirement(s) unmet: {}",
                self.unmet.len(),
                self.unmet.join("; ")
            )
        }
    }
}

/// The `submitterWaivers` member of a public API scan: the instance is scanned once and judged
/// twice, and every face (page, PDF, exports, MCP) shows the headline without the submitter's
/// waivers and this beside it, marked as the submitter's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmitterWaivers {
    #[serde(default)]
    pub patterns: Vec<String>,
    /// The grade, rating, state and message with the waivers.
    #[serde(default)]
    #[schemars(transform = schema::grade)]
    pub grade: String,
    #[schemars(range(max = 5))]
    pub rating: Option<u8>,
    pub state: State,
    #[serde(default)]
    pub message: String,
    /// The failed findings the waivers hide (which the headline shows failed).
    #[serde(default)]
    pub waived: Vec<String>,
    /// Their reports.
    #[serde(default)]
    pub waivers: Vec<WaiverReport>,
}

impl SubmitterWaivers {
    pub fn hides(&self, finding_id: &str) -> bool {
        self.waived.iter().any(|w| w == finding_id)
    }

    /// One line, for text faces: "with the submitter's waivers (p1, p2): grade A+, state OK".
    pub fn summary(&self) -> String {
        format!(
            "with the submitter's waivers ({}): grade {}, state {}",
            self.patterns.join(", "),
            self.grade,
            self.state.label()
        )
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct WebhookDelivery {
    pub delivered: bool,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Coverage {
    /// Checks that reached a decision (passed or failed).
    pub evaluated: usize,
    pub skipped: usize,
    pub indeterminate: usize,
    pub network_limited: usize,
}

impl Coverage {
    pub fn of(findings: &[Finding]) -> Coverage {
        let mut c = Coverage::default();
        for f in findings {
            match f.status {
                Status::Passed | Status::Failed => c.evaluated += 1,
                Status::Skipped => c.skipped += 1,
                Status::Indeterminate => c.indeterminate += 1,
                Status::NetworkLimited => c.network_limited += 1,
            }
        }
        c
    }

    /// Counts `decided` checks, already counted as evaluated, as network-limited instead: they
    /// passed only as far as the network let us see (a debug port that drops our connect
    /// passes, since nothing answers from here, but a timeout is a network limit).
    pub fn limited_by_network(mut self, decided: usize) -> Coverage {
        let moved = decided.min(self.evaluated);
        self.evaluated -= moved;
        self.network_limited += moved;
        self
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Fingerprint {
    /// First 8 hex characters of the digest over every area.
    #[schemars(regex(pattern = r"^[0-9a-f]{8}$"))]
    pub short: String,
    #[schemars(regex(pattern = r"^[0-9a-f]{64}$"))]
    pub digest: String,
    /// Area name to the digest of what was observed there.
    #[schemars(transform = schema::digests)]
    pub areas: std::collections::BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct KnowledgeInfo {
    pub advisories_updated: Option<jiff::civil::Date>,
    pub schedule_updated: Option<jiff::civil::Date>,
    pub advisory_sources: Vec<String>,
    pub notes: Vec<String>,
}

/// The conditions a verdict was reached under (`conditions`): with them, a later run can tell
/// whether a change came from the instance or from what the scanner knew.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Conditions {
    /// This program's version.
    pub scanner_version: String,
    pub schedule_updated: Option<jiff::civil::Date>,
    pub advisories_updated: Option<jiff::civil::Date>,
    pub advisory_sources: Vec<String>,
    /// Where the update check's answer came from (`feed`, `bundled`, `pinned`), when it ran.
    pub release_feed: Option<crate::knowledge::update::AnswerSource>,
    /// Digest of the settings that move a verdict (thresholds, track, hardening, waivers, ...):
    /// equal digests, equal rules.
    pub settings_fingerprint: String,
    /// The waivers in force: pattern, and its expiry when it has one (`pattern until <time>`).
    pub waivers: Vec<String>,
    /// How many checks this scanner knows, and a digest of their ids.
    pub checks: usize,
    pub checks_digest: String,
}

/// `extra_checks` of a document that does not say.
fn ran() -> bool {
    true
}

impl ScanResult {
    /// The result of a scan that produced no assessment: UNKNOWN, rating unknown.
    #[allow(clippy::too_many_arguments)]
    pub fn failed(
        host: String,
        message: String,
        attempts: u32,
        scanned_at: jiff::Timestamp,
        duration_seconds: f64,
        check_hardening: bool,
        warning: u8,
        critical: u8,
    ) -> ScanResult {
        let cause = Cause::new(
            format!("cannot scan {host}: {message}"),
            format!("cannot scan {host}"),
        );
        ScanResult {
            message: cause.text.clone(),
            causes: vec![cause],
            host,
            scanned_at,
            duration_seconds,
            state: State::Unknown,
            grade: grade(None).into(),
            error: Some(ScanError { message, attempts }),
            check_hardening,
            rating_explanation: RatingExplanation {
                starting_reason: "the scan failed".into(),
                final_grade: grade(None).into(),
                warning_threshold: warning,
                critical_threshold: critical,
                ..RatingExplanation::default()
            },
            ..ScanResult::default()
        }
    }

    /// The reasons for the state, taken out to be changed and set again: where `message` was
    /// written without them, it is the one cause.
    pub fn take_causes(&mut self) -> Vec<Cause> {
        let causes = self.line_causes();
        self.causes.clear();
        causes
    }

    /// The causes line 1 is made from: `causes` while they still say `message`, else the
    /// message as one cause.
    pub fn line_causes(&self) -> Vec<Cause> {
        if !self.causes.is_empty() && message_of(&self.causes) == self.message {
            self.causes.clone()
        } else {
            vec![Cause::same(self.message.clone())]
        }
    }

    /// Sets the reasons for the state, and `message` from them.
    pub fn set_causes(&mut self, causes: Vec<Cause>) {
        self.message = message_of(&causes);
        self.causes = causes;
    }

    pub fn failed_checks(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.role == Role::Check && f.status == Status::Failed)
    }

    pub fn missing_hardening(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.role == Role::Hardening && f.status == Status::Failed && !f.ignored)
    }
}

/// The `message` that says `causes`: their texts joined by "; ".
fn message_of(causes: &[Cause]) -> String {
    let texts: Vec<&str> = causes.iter().map(|c| c.text.as_str()).collect();
    texts.join("; ")
}

// Reading documents back.

/// The most bytes read as result documents: a result file's cap (`files::Kind::ResultDocument`,
/// about 40 KiB a host: the `--format json` array of a few hundred hosts). A document is our
/// own output, read by a derived reader that keeps all it reads: the byte cap bounds its
/// memory, and serde_json's recursion limit (128 levels) its depth.
pub const MAX_READ_BYTES: u64 = crate::files::Kind::ResultDocument.cap();

/// Characters of serde_json's words kept in a [`ReadError`]: it quotes what it did not expect.
const MAX_PROBLEM_CHARS: usize = 160;

/// Why bytes are not result documents. Shown as the rest of a sentence about the file
/// (`result file x.json is not JSON (...)`), on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    TooLarge,
    NotJson(String),
    NotADocument(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            ReadError::TooLarge => write!(
                f,
                "is larger than {}",
                crate::files::size_text(MAX_READ_BYTES)
            ),
            ReadError::NotJson(why) => write!(f, "is not JSON ({why})"),
            ReadError::NotADocument(why) => write!(f, "is not a result document ({why})"),
        }
    }
}

impl From<serde_json::Error> for ReadError {
    fn from(e: serde_json::Error) -> ReadError {
        let mut why = crate::text::one_line(&e.to_string());
        if let Some((at, _)) = why.char_indices().nth(MAX_PROBLEM_CHARS) {
            why.truncate(at);
            why.push_str("...");
        }
        match e.classify() {
            serde_json::error::Category::Data => ReadError::NotADocument(why),
            _ => ReadError::NotJson(why),
        }
    }
}

/// Reads what holds result documents: one document ([`read_document`]), a list
/// ([`read_documents`]), or a store's record of a completed scan. Refuses more than
/// [`MAX_READ_BYTES`] before parsing.
pub fn read<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ReadError> {
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(ReadError::TooLarge);
    }
    Ok(serde_json::from_slice(bytes)?)
}

/// One result document (`check-storage-scanner scan`'s output, a public API scan's).
pub fn read_document(bytes: &[u8]) -> Result<ScanResult, ReadError> {
    read(bytes)
}

/// A file of result documents: one document, or a JSON array of at least one (the plugin's
/// `--format json`).
pub fn read_documents(bytes: &[u8]) -> Result<Vec<ScanResult>, ReadError> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'[') {
        return read_document(bytes).map(|one| vec![one]);
    }
    let documents: Vec<ScanResult> = read(bytes)?;
    if documents.is_empty() {
        return Err(ReadError::NotADocument(
            "an empty array holds no result document".into(),
        ));
    }
    Ok(documents)
}

// The parts of the document that assess fills: the fix snippets of the remediation plan and
// the comparison with the baseline.

crate::vocabulary::vocabulary! {
    /// The syntax a snippet is written in, named as documents, `--for` and the pages name it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum Form {
        Nginx = "nginx",
        Caddy = "caddy",
        Apache = "apache",
        Traefik = "traefik",
        /// `KEY=value` lines: an env file, or a Compose service's `environment:` block.
        Env = "env",
        /// DNS zone-file lines.
        Zone = "zone",
    }
}

impl Form {
    /// Every form, in the order of their names.
    pub const ALL: &[Form] = <Form as crate::vocabulary::Vocabulary>::NAMED;

    /// What starts a comment line in this form.
    pub fn comment(self) -> &'static str {
        match self {
            Form::Zone => ";",
            _ => "#",
        }
    }
}

/// One snippet: the text to put into one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Snippet {
    #[serde(rename = "for")]
    pub form: Form,
    /// Which file, and where in it.
    pub file: String,
    /// The lines, without a trailing newline.
    pub text: String,
}

/// What the comparison with the baseline found for one host (the `baseline` member).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct BaselineComparison {
    /// This run recorded the host's first baseline.
    pub recorded: bool,
    /// Failed findings absent from the baseline.
    pub new_findings: Vec<String>,
    /// The rating is lower than the baseline's.
    pub worse_rating: bool,
    /// Checks that concluded in the baseline and are inconclusive now.
    pub inconclusive_now: Vec<String>,
    /// The configuration fingerprint differs (never a finding, never a state change).
    pub fingerprint_drift: bool,
    /// Each new failed finding (and a lower rating without one), with its cause.
    pub changes: Vec<Change>,
    /// The baseline's recording date (UTC), for reports.
    pub recorded_on: Option<jiff::civil::Date>,
}

impl BaselineComparison {
    /// The NEW column of `--format summary`: `-` without a baseline, `new` on the run recording
    /// it, `+<n>` (new failed findings) afterwards.
    pub fn summary_cell(comparison: Option<&BaselineComparison>) -> String {
        match comparison {
            None => "-".into(),
            Some(c) if c.recorded => "new".into(),
            Some(c) => format!("+{}", c.new_findings.len()),
        }
    }
}

/// One change since the baseline, and why it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The finding id, or `rating` for a lower rating without a new finding.
    pub id: String,
    pub cause: ChangeCause,
    #[serde(default)]
    pub detail: String,
}

/// Where a change since the baseline came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChangeCause {
    /// The instance changed: its release or its configuration.
    Instance,
    /// What we know changed: an advisory learned, a line that reached end of life, newer
    /// releases.
    Knowledge,
    /// This scanner gained the check.
    Scanner,
    /// A waiver that hid it expired or was removed.
    Waiver,
    /// The baseline was recorded before conditions were kept: nobody can say.
    Unknown,
}

impl ChangeCause {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeCause::Instance => "instance",
            ChangeCause::Knowledge => "knowledge",
            ChangeCause::Scanner => "scanner",
            ChangeCause::Waiver => "waiver",
            ChangeCause::Unknown => "unknown",
        }
    }
}

pub mod schema;

#[cfg(test)]
mod tests;
