//! The scan result document: one per host, built by the assessment, rendered by every output
//! format and nothing else. The JSON format is this document.

use crate::knowledge::lifecycle::LineState;
use crate::knowledge::{ProductFamily, Track};
use crate::severity::Severity;
use serde::Serialize;

/// Monitoring state, ordered by how much attention it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum State {
    Ok,
    Warning,
    Critical,
    Unknown,
}

impl State {
    pub fn exit_code(self) -> i32 {
        match self {
            State::Ok => 0,
            State::Warning => 1,
            State::Critical => 2,
            State::Unknown => 3,
        }
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
        match self {
            State::Ok => 0,
            State::Unknown => 1,
            State::Warning => 2,
            State::Critical => 3,
        }
    }

    /// The worse of two states by monitoring priority.
    pub fn worst(self, other: State) -> State {
        if other.priority() > self.priority() {
            other
        } else {
            self
        }
    }
}

/// Grade letters of the numeric ratings 0-5 (spec "Grades and ratings"); `U` when unknown.
pub fn grade(rating: Option<u8>) -> &'static str {
    match rating {
        Some(5) => "A+",
        Some(4) => "A",
        Some(3) => "C",
        Some(2) => "D",
        Some(1) => "E",
        Some(0) => "F",
        _ => "U",
    }
}

/// Whether a check found its measure in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

/// What role a check plays in the rating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// An additional check: a failure caps the rating by its severity.
    Check,
    /// A hardening measure: listed as missing with `--check-hardening`, never caps the rating.
    Hardening,
    /// The version's standing: end of life or a matched advisory; sets the starting rating.
    Version,
    /// Reported for information only: never rated, never changes the state.
    Observation,
}

/// One evaluated check.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub id: String,
    pub role: Role,
    pub status: Status,
    pub severity: Severity,
    pub category: &'static str,
    /// What was observed, in one sentence.
    pub detail: String,
    pub remediation: String,
    pub documentation: Option<String>,
    /// The system an operator edits to fix it.
    pub fixed_in: &'static str,
    /// A failed check counts against the rating (false with `--insecure` for `tlsTrusted`,
    /// with `scanner.extra_checks_rating: false`, and for hardening measures).
    pub counts: bool,
    /// This failure set or limited the final rating.
    pub decisive: bool,
    /// Waived by the operator; waived findings stay in the document.
    pub ignored: bool,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    pub family: ProductFamily,
    pub name: String,
    pub version: String,
    /// The legacy `version` field of `/status.php` (`0.1.0.0` on OpenCloud): not the release.
    pub legacy_version: Option<String>,
    pub edition: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Vulnerability {
    pub id: String,
    pub aliases: Vec<String>,
    pub severity: Option<Severity>,
    pub summary: String,
    pub url: Option<String>,
    /// Affected ranges as text, e.g. `>=4.0.0, <4.0.3`.
    pub affected: Vec<String>,
    /// Lowest fixed release at or above the installed one, when known.
    pub fixed_in: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    pub line: String,
    pub track: Option<Track>,
    pub track_detected: bool,
    /// Why the track judged is not the one the operator asked for (a track the product does
    /// not publish, e.g. lts for Infinite Scale); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub track_note: Option<String>,
    pub state: LineState,
    pub line_opened: Option<String>,
    pub support_end: Option<String>,
    pub support_days_left: Option<i64>,
    pub current_release: bool,
    pub latest_in_line: Option<String>,
    /// The release to move to given the line's state (past the `--eol-warning` window for a
    /// line ending soon), and the track its line is on.
    pub upgrade_target: Option<String>,
    pub upgrade_target_track: Option<Track>,
    pub schedule_updated: String,
    pub schedule_stale: bool,
}

/// One candidate upgrade, rehearsed (`assess::upgrade`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeOption {
    pub version: String,
    /// What the candidate is: `patch` (newest of the installed line), `track` (newest on the
    /// instance's track), `production` (newest of the current production line).
    pub kinds: Vec<&'static str>,
    /// Advisories matching the installed release that this one does not.
    pub fixes: Vec<String>,
    /// Advisories that still match this release.
    pub stays_open: Vec<String>,
    /// The rating the instance would reach: this release's standing, capped by today's
    /// failed checks.
    pub rating: u8,
    pub grade: &'static str,
    pub line: String,
    pub line_state: Option<LineState>,
    pub line_support_end: Option<String>,
    /// Whether this line's support lasts longer than the installed line's; `None` when
    /// either end is unknown.
    pub outlasts_installed: Option<bool>,
    /// The rehearsal's choice: highest rating, then a supported line, then smallest step.
    pub best: bool,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateCheck {
    /// `auto`, `feed`, `pinned`, `bundled`, `off`.
    pub mode: String,
    /// Where the answer came from in the end (`feed`, `bundled`, `pinned`), or none.
    pub source: Option<String>,
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

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tls {
    /// `https` or `http` (after falling back).
    pub scheme: String,
    pub protocol: Option<String>,
    pub cipher_suite: Option<String>,
    pub trusted: Option<bool>,
    pub trust_error: Option<String>,
    pub certificate_subject: Option<String>,
    pub certificate_issuer: Option<String>,
    pub certificate_not_after: Option<String>,
    pub cert_days_left: Option<i64>,
    /// Why HTTPS was not used, after falling back to plain HTTP.
    pub https_error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RatingLimit {
    pub id: String,
    pub severity: Severity,
    pub cap: u8,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RatingExplanation {
    pub starting_rating: Option<u8>,
    pub starting_reason: String,
    /// Every failed check that counts, with the cap it imposes.
    pub limits: Vec<RatingLimit>,
    pub final_rating: Option<u8>,
    pub final_grade: &'static str,
    pub warning_threshold: u8,
    pub critical_threshold: u8,
    /// Why checks were left out of the rating (`--insecure`, `extra_checks_rating: false`).
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemediationStep {
    pub order: usize,
    pub action: String,
    /// Finding ids this step resolves.
    pub resolves: Vec<String>,
    pub fixed_in: &'static str,
    /// The change in the syntax of each file it can be made in (nginx, Caddy, Apache,
    /// Traefik, environment lines, zone file); empty when no file expresses it (an upgrade).
    pub snippets: Vec<Snippet>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemediationGroup {
    pub system: &'static str,
    pub findings: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemediationPlan {
    pub steps: Vec<RemediationStep>,
    pub groups: Vec<RemediationGroup>,
    pub group_summary: Vec<String>,
    /// Every step's snippets merged: one per file and form.
    pub snippets: Vec<Snippet>,
}

/// Why a scan produced no assessment.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanError {
    pub message: String,
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
}

/// The result document of one host.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanResult {
    pub host: String,
    pub url: Option<String>,
    pub scanned_at: String,
    pub duration_seconds: f64,
    pub state: State,
    /// What made the state, most urgent first: the texts of `causes` joined by "; ".
    pub message: String,
    /// The same reasons one by one, each also in a few words: line 1 of the monitoring output
    /// is built from them within its limit. Not a member of the document: `message` is.
    #[serde(skip)]
    pub causes: Vec<Cause>,
    pub rating: Option<u8>,
    pub grade: &'static str,
    pub error: Option<ScanError>,
    pub product: Option<Product>,
    pub lifecycle: Option<Lifecycle>,
    pub update: Option<UpdateCheck>,
    /// Candidate upgrades and what each would bring; empty when none is newer.
    pub upgrade_options: Vec<UpgradeOption>,
    pub tls: Option<Tls>,
    /// Matched advisories; empty means nothing in the configured database matched, not that
    /// the version is safe.
    pub vulnerabilities: Vec<Vulnerability>,
    pub findings: Vec<Finding>,
    pub check_hardening: bool,
    pub rating_explanation: RatingExplanation,
    pub remediation_plan: RemediationPlan,
    pub waivers: Vec<serde_json::Value>,
    /// Days until the next time-limited waiver stops hiding a failing check.
    pub waiver_days_left: Option<i64>,
    pub policy: Option<serde_json::Value>,
    /// Comparison with `--baseline`, when one was given.
    pub baseline: Option<BaselineComparison>,
    /// Webhook delivery for this host, when one was attempted.
    pub webhook: Option<WebhookDelivery>,
    /// Counts of checks by outcome; absent when the scan produced no findings.
    pub coverage: Option<Coverage>,
    /// Digests of what the instance reports, by area; no configuration values.
    pub configuration_fingerprint: Option<Fingerprint>,
    /// Knowledge the verdict was based on (bundled data date, configured sources).
    pub knowledge: KnowledgeInfo,
    /// The conditions of the scan; `None` for a scan that produced no assessment.
    pub conditions: Option<Conditions>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    pub delivered: bool,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fingerprint {
    /// First 8 hex characters of the digest over every area.
    pub short: String,
    pub digest: String,
    /// Area name to the digest of what was observed there.
    pub areas: std::collections::BTreeMap<&'static str, String>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KnowledgeInfo {
    pub advisories_updated: Option<String>,
    pub schedule_updated: Option<String>,
    pub advisory_sources: Vec<String>,
    pub notes: Vec<String>,
}

/// The conditions a verdict was reached under (`conditions`): with them, a later run can tell
/// whether a change came from the instance or from what the scanner knew.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Conditions {
    /// This program's version.
    pub scanner_version: String,
    pub schedule_updated: Option<String>,
    pub advisories_updated: Option<String>,
    pub advisory_sources: Vec<String>,
    /// Where the update check's answer came from (`feed`, `bundled`, `pinned`), when it ran.
    pub release_feed: Option<String>,
    /// Digest of the settings that move a verdict (thresholds, track, hardening, waivers, ...):
    /// equal digests, equal rules.
    pub settings_fingerprint: String,
    /// The waivers in force: pattern, and its expiry when it has one (`pattern until <time>`).
    pub waivers: Vec<String>,
    /// How many checks this scanner knows, and a digest of their ids.
    pub checks: usize,
    pub checks_digest: String,
}

impl ScanResult {
    /// The result of a scan that produced no assessment: UNKNOWN, rating unknown.
    #[allow(clippy::too_many_arguments)]
    pub fn failed(
        host: String,
        message: String,
        attempts: u32,
        scanned_at: String,
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
            url: None,
            scanned_at,
            duration_seconds,
            state: State::Unknown,
            rating: None,
            grade: grade(None),
            error: Some(ScanError { message, attempts }),
            product: None,
            lifecycle: None,
            update: None,
            upgrade_options: Vec::new(),
            tls: None,
            vulnerabilities: Vec::new(),
            findings: Vec::new(),
            check_hardening,
            rating_explanation: RatingExplanation {
                starting_rating: None,
                starting_reason: "the scan failed".into(),
                limits: Vec::new(),
                final_rating: None,
                final_grade: grade(None),
                warning_threshold: warning,
                critical_threshold: critical,
                notes: Vec::new(),
            },
            remediation_plan: RemediationPlan::default(),
            waivers: Vec::new(),
            waiver_days_left: None,
            policy: None,
            baseline: None,
            webhook: None,
            coverage: None,
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

    /// The reasons for the state, taken out to be changed and set again: where `message` was
    /// written without them, it is the one cause.
    pub fn take_causes(&mut self) -> Vec<Cause> {
        let causes = std::mem::take(&mut self.causes);
        if self.causes_say_the_message(&causes) {
            causes
        } else {
            vec![Cause::new(self.message.clone(), self.message.clone())]
        }
    }

    /// The causes line 1 is made from: `causes` while they still say `message`, else the
    /// message as one cause.
    pub fn line_causes(&self) -> Vec<Cause> {
        if self.causes_say_the_message(&self.causes) {
            self.causes.clone()
        } else {
            vec![Cause::new(self.message.clone(), self.message.clone())]
        }
    }

    fn causes_say_the_message(&self, causes: &[Cause]) -> bool {
        !causes.is_empty()
            && causes
                .iter()
                .map(|c| c.text.as_str())
                .collect::<Vec<_>>()
                .join("; ")
                == self.message
    }

    /// Sets the reasons for the state, and `message` from them.
    pub fn set_causes(&mut self, causes: Vec<Cause>) {
        self.message = causes
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join("; ");
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

// The parts of the document that assess fills: the fix snippets of the remediation plan and
// the comparison with the baseline.

/// The syntax a snippet is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    Nginx,
    Caddy,
    Apache,
    Traefik,
    /// `KEY=value` lines: an env file, or a Compose service's `environment:` block.
    Env,
    /// DNS zone-file lines.
    Zone,
}

impl Form {
    pub const ALL: [Form; 6] = [
        Form::Nginx,
        Form::Caddy,
        Form::Apache,
        Form::Traefik,
        Form::Env,
        Form::Zone,
    ];

    /// The reverse proxies a proxy fix is written for.
    pub const PROXIES: [Form; 4] = [Form::Nginx, Form::Caddy, Form::Apache, Form::Traefik];

    pub fn name(self) -> &'static str {
        match self {
            Form::Nginx => "nginx",
            Form::Caddy => "caddy",
            Form::Apache => "apache",
            Form::Traefik => "traefik",
            Form::Env => "env",
            Form::Zone => "zone",
        }
    }

    pub fn from_name(name: &str) -> Option<Form> {
        Form::ALL.into_iter().find(|f| f.name() == name)
    }

    /// What starts a comment line in this form.
    pub fn comment(self) -> &'static str {
        match self {
            Form::Zone => ";",
            _ => "#",
        }
    }
}

/// One snippet: the text to put into one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snippet {
    #[serde(rename = "for")]
    pub form: Form,
    /// Which file, and where in it.
    pub file: String,
    /// The lines, without a trailing newline.
    pub text: String,
}

/// What the comparison with the baseline found for one host (the `baseline` member).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
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
    /// The baseline's recording date (`YYYY-MM-DD`), for reports.
    pub recorded_on: Option<String>,
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The finding id, or `rating` for a lower rating without a new finding.
    pub id: String,
    pub cause: ChangeCause,
    pub detail: String,
}

/// Where a change since the baseline came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grade_table_of_the_spec() {
        let grades: Vec<&str> = (0..=5).rev().map(|r| grade(Some(r))).collect();
        assert_eq!(grades, ["A+", "A", "C", "D", "E", "F"]);
        assert_eq!(grade(Some(6)), "U");
        assert_eq!(grade(None), "U");
    }

    #[test]
    fn worst_state_follows_monitoring_priority() {
        assert_eq!(State::Ok.worst(State::Unknown), State::Unknown);
        assert_eq!(State::Unknown.worst(State::Warning), State::Warning);
        assert_eq!(State::Critical.worst(State::Warning), State::Critical);
        assert_eq!(State::Critical.exit_code(), 2);
    }

    #[test]
    fn decisions_through_a_network_limit_move_to_network_limited() {
        let c = Coverage {
            evaluated: 10,
            skipped: 1,
            indeterminate: 2,
            network_limited: 1,
        }
        .limited_by_network(5);
        assert_eq!(
            (c.evaluated, c.skipped, c.indeterminate, c.network_limited),
            (5, 1, 2, 6)
        );
        assert_eq!(
            Coverage::default().limited_by_network(3),
            Coverage::default()
        );
    }
}
