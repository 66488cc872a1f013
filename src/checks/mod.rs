//! Checks: the registry of every check (one row each) and the pure functions that turn
//! measurements into findings. SARIF rules, JUnit cases, the remediation plan and the docs are
//! all read from the registry.

pub mod cookies;
pub mod debug;
pub mod dns;
pub mod exposure;
pub mod headers;
pub mod identity;
pub mod parity;
pub mod pattern;
pub mod sharing;
pub mod tls_extra;
pub mod transport;

use crate::family::ProductFamily;
use crate::probe::Measurements;
use crate::report::{Category, Finding, Role, Status, System};
use crate::severity::Severity;

/// The system an operator edits to fix a finding.
pub const REVERSE_PROXY: System = System::ReverseProxy;
pub const INSTANCE: System = System::Instance;
pub const IDENTITY_PROVIDER: System = System::IdentityProvider;
pub const DNS_ZONE: System = System::DnsZone;

/// One row of the registry.
#[derive(Debug)]
pub struct CheckSpec {
    pub id: &'static str,
    /// Family root (`exposed`, `authentication`, ...) for ids of the form `root:detail`.
    pub family: Option<&'static str>,
    pub role: Role,
    pub severity: Severity,
    pub category: Category,
    pub title: &'static str,
    pub remediation: &'static str,
    /// Where the operator reads more (every rule links one: SARIF's helpUri, JUnit, pages).
    pub documentation: &'static str,
    pub fixed_in: System,
    /// What the check reads of a scan's measurements, and so what `--verify-remediation` runs
    /// to settle it. Empty: only a full scan settles it (the version standing,
    /// `httpsAvailable`, the address-parity checks).
    pub verified_by: &'static [Measure],
    /// Its fix in the operator's configuration, which `assess::snippets` writes in each form.
    pub fix: Fix,
    /// Remediation for a product family whose settings or behaviour differ from what
    /// `remediation` (written for OpenCloud) says.
    pub advice: &'static [(ProductFamily, &'static str)],
    /// A family root's members: which exist before measuring, and what measures one the
    /// operator names (`--verify-remediation exposed:/.env`).
    pub members: Option<Members>,
    /// What it means when the checks produced no finding for it: `Some(detail)` of a pass
    /// (no cookie seen is no failing cookie), `None` when nothing follows. Given the member's
    /// detail for a member of a family.
    pub when_absent: fn(member: Option<&str>, m: &Measurements) -> Option<String>,
    /// Why it can go unmeasured, the first that applies; else the probes got no answer.
    pub unmeasured: &'static [Unmeasured],
    /// What `addressParity` compares of it between the nodes behind one name.
    pub across_nodes: AcrossNodes,
}

/// The members of a family of checks (`exposed:/.env`, `debugPort:9205`).
#[derive(Clone, Copy, Debug)]
pub struct Members {
    /// Every member's detail, when the members are known before measuring; `None` when they
    /// are known only once measured (the version headers, the debug listeners).
    pub listed: Option<fn() -> Vec<String>>,
    /// A member by its detail as the operator wrote it, with what measures it; `None` when
    /// the family has no such member.
    pub named: fn(&str) -> Option<Member>,
}

/// One member of a family and what measures it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The detail as the checks write it (`X-Web-Version` for `x-web-version`, `9205` for
    /// `09205`).
    pub detail: String,
    /// The probes that measure it, by key.
    pub keys: Vec<String>,
    /// Read from every HTTP answer (a version header), as the full scan reads it.
    pub every_answer: bool,
}

impl Member {
    pub fn measured_by(detail: impl Into<String>, keys: &[&str]) -> Member {
        Member {
            detail: detail.into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            every_answer: false,
        }
    }
}

/// Why a check went unmeasured.
#[derive(Clone, Copy, Debug)]
pub enum Unmeasured {
    /// It judges HTTPS, and the instance was reached over plain HTTP.
    OverPlainHttp,
    /// No debug port was configured to probe.
    NoDebugPort,
    /// This reason, whatever the measurements.
    Because(&'static str),
}

/// What the address comparison compares of a check between nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcrossNodes {
    Nothing,
    /// This response header of the root page.
    Header(&'static str),
    /// The capability at this JSON pointer.
    Capability(&'static str),
    /// Whether a published demo account signs in.
    DemoSignIn,
}

/// The default of `when_absent`: a missing finding says nothing.
fn nothing_follows(_: Option<&str>, _: &Measurements) -> Option<String> {
    None
}

impl CheckSpec {
    /// What a row leaves out when it has none: a family, a measurement `--verify-remediation`
    /// can run, a fix snippet, a family's own advice. The texts, role and severity every row
    /// states itself (`every_row_states_its_texts`).
    pub const ROW: CheckSpec = CheckSpec {
        id: "",
        family: None,
        role: Role::Check,
        severity: Severity::Low,
        category: Category::Unstated,
        title: "",
        remediation: "",
        documentation: "",
        fixed_in: System::Unstated,
        verified_by: &[],
        fix: Fix::None,
        advice: &[],
        members: None,
        when_absent: nothing_follows,
        unmeasured: &[],
        across_nodes: AcrossNodes::Nothing,
    };

    /// `--verify-remediation` can settle it with the probes that measure it.
    pub fn verifiable(&self) -> bool {
        !self.verified_by.is_empty()
    }

    /// The detail of `id` when it names a member of this family (`/.env` of `exposed:/.env`).
    pub fn member_of<'a>(&self, id: &'a str) -> Option<&'a str> {
        id.strip_prefix(self.id)?.strip_prefix(':')
    }

    /// The family's own remediation, when it differs from the check's.
    pub fn advice_for(&self, family: ProductFamily) -> Option<&'static str> {
        self.advice
            .iter()
            .find(|(f, _)| *f == family)
            .map(|(_, text)| *text)
    }
}

/// One measurement a check reads. Declared on the check's row beside the code that reads it,
/// so a verification runs exactly what the full scan's check rests on.
#[derive(Clone, Copy, Debug)]
pub enum Measure {
    /// The transport selection every run makes (the TLS handshake, its certificate).
    Transport,
    /// One probe by key: an HTTP probe of the plan (`plan::ROOT`, ...) or `probe::LEGACY_TLS`,
    /// `probe::PLAIN_HTTP`, `probe::DNS`.
    Probe(&'static str),
    /// Every HTTP probe of the plan whose key starts so (`plan::DEMO`: every family's demo
    /// sign-ins, of which the scan sends those of the family it finds).
    Probes(&'static str),
    /// The HTTP probes with these keys, one or more per product family (the scan sends those
    /// of the family it finds).
    Keys(fn() -> Vec<String>),
    /// Every HTTP answer (cookies and version headers are read from all of them), except the
    /// sign-in throttling's, which only `loginThrottling` sends.
    EveryAnswer,
    /// Every configured debug port.
    DebugPorts,
}

/// How the operator fixes a failing check: `assess::snippets` writes it in each form (nginx,
/// Caddy, Apache, Traefik, environment lines, zone file). `None`: no snippet, never a guessed
/// one (upgrades, certificates, DNSSEC, settings the product does not offer). A family's fix
/// reads the member's detail (the path of `exposed:<path>`, the port of `debugPort:<port>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fix {
    None,
    HttpsRedirect,
    /// TLS 1.2 and 1.3 only.
    TlsMinimum,
    Hsts {
        preload: bool,
    },
    /// The reverse proxy sends `name: value`; `traefik` is the headers middleware's option.
    Header {
        name: &'static str,
        value: &'static str,
        traefik: &'static str,
    },
    /// The reverse proxy passes the instance's own Content-Security-Policy on.
    CspPassthrough,
    CspWithoutInline,
    /// The reverse proxy refuses the member's path.
    DenyPath,
    DirectoryListing,
    TraceDisabled,
    CorsReflection,
    /// The reverse proxy strips the member's header.
    StripVersionHeader,
    Cookie(CookieAttribute),
    DebugPort,
    DebugEndpoint,
    DemoUsers,
    BasicAuthOff,
    PublicUrl,
    PublicLinkPassword,
    PasswordPolicy,
    CaaRecord,
}

/// A cookie attribute the reverse proxy adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CookieAttribute {
    Secure,
    HttpOnly,
    SameSite,
}

pub(crate) const DOCS: &str = "https://docs.opencloud.eu/docs/admin/";
/// The product's published security advisories.
const ADVISORIES_DOCS: &str = "https://github.com/opencloud-eu/opencloud/security/advisories";

/// Rows of the version standing; the other rows live beside the checks that produce them.
pub static EOL: CheckSpec = CheckSpec {
    id: "eol",
    role: Role::Version,
    severity: Severity::Critical,
    category: Category::Lifecycle,
    title: "The release line is supported",
    remediation: "Upgrade to a supported release line; an end-of-life line receives no \
                  security fixes.",
    documentation: "https://docs.opencloud.eu/docs/admin/resources/lifecycle/",
    fixed_in: INSTANCE,
    ..CheckSpec::ROW
};

pub static VULNERABILITY: CheckSpec = CheckSpec {
    id: "vulnerability",
    family: Some("vulnerability"),
    role: Role::Version,
    severity: Severity::High,
    category: Category::Vulnerability,
    title: "No published advisory affects the running release",
    remediation: "Upgrade to a release that fixes the advisory.",
    documentation: ADVISORIES_DOCS,
    fixed_in: INSTANCE,
    ..CheckSpec::ROW
};

/// A module of checks: its rows, when a scan evaluates them, and how.
pub struct Module {
    pub rows: &'static [&'static CheckSpec],
    pub stage: Stage,
    pub evaluate: fn(&Measurements, &Context) -> Vec<Finding>,
}

/// When a module's checks run. Findings come in this order, each stage's modules in the order
/// of [`MODULES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// The version standing: the assessment decides it, from the knowledge base.
    Version,
    /// Always: whether and how the instance is reached.
    Transport,
    /// With the extra checks: what the application answers (paths, sign-ins).
    Application,
    /// With the extra checks: what surrounds it (TLS details, cookies, debug listeners, DNS).
    Surroundings,
    /// With the extra checks: every address of the name against the first.
    AcrossNodes,
    /// With the hardening checks: headers and sharing settings.
    Hardening,
}

impl Stage {
    fn runs(self, m: &Measurements, ctx: &Context) -> bool {
        match self {
            Stage::Version => false,
            Stage::Transport => true,
            Stage::Application | Stage::Surroundings | Stage::AcrossNodes => m.extra_checks,
            Stage::Hardening => ctx.check_hardening,
        }
    }
}

/// Every module of checks, in the registry's order (SARIF rules, docs/checks.md). A new
/// check module adds one line here.
pub static MODULES: &[Module] = &[
    Module {
        rows: &[&EOL, &VULNERABILITY],
        stage: Stage::Version,
        evaluate: |_, _| Vec::new(),
    },
    Module {
        rows: transport::ROWS,
        stage: Stage::Transport,
        evaluate: transport::evaluate,
    },
    Module {
        rows: tls_extra::ROWS,
        stage: Stage::Surroundings,
        evaluate: |m, _| tls_extra::evaluate(m),
    },
    Module {
        rows: headers::ROWS,
        stage: Stage::Hardening,
        evaluate: |m, _| headers::evaluate(m),
    },
    Module {
        rows: exposure::ROWS,
        stage: Stage::Application,
        evaluate: |m, _| exposure::evaluate(m),
    },
    Module {
        rows: identity::ROWS,
        stage: Stage::Application,
        evaluate: |m, _| identity::evaluate(m),
    },
    Module {
        rows: parity::ROWS,
        stage: Stage::AcrossNodes,
        evaluate: |m, ctx| parity::evaluate(m, &ctx.waived),
    },
    Module {
        rows: sharing::ROWS,
        stage: Stage::Hardening,
        evaluate: |m, _| sharing::evaluate(m),
    },
    Module {
        rows: cookies::ROWS,
        stage: Stage::Surroundings,
        evaluate: |m, _| cookies::evaluate(m),
    },
    Module {
        rows: debug::ROWS,
        stage: Stage::Surroundings,
        evaluate: |m, _| debug::evaluate(m),
    },
    Module {
        rows: dns::ROWS,
        stage: Stage::Surroundings,
        evaluate: |m, _| dns::evaluate(m),
    },
];

/// Every check, once.
pub fn registry() -> impl Iterator<Item = &'static CheckSpec> {
    MODULES
        .iter()
        .flat_map(|module| module.rows.iter().copied())
}

/// Looks a check up by id, or by family root for ids such as `vulnerability:GHSA-...`.
pub fn spec(id: &str) -> Option<&'static CheckSpec> {
    registry().find(|c| c.id == id).or_else(|| {
        let root = id.split_once(':')?.0;
        registry().find(|c| c.family == Some(root))
    })
}

/// What the pure checks need besides the measurements.
#[derive(Clone, Debug)]
pub struct Context {
    pub now: jiff::Timestamp,
    pub tls_min_days: i64,
    pub insecure: bool,
    pub check_hardening: bool,
    pub extra_checks_rating: bool,
    /// Waiver patterns: waived headers and checks are left out of the address comparison.
    pub waived: Vec<String>,
}

/// A finding of `check`: a registry row (`&headers::HSTS_PRELOAD`) or a member of a family
/// made from its row (`exposure::EXPOSED.member("/.env")`), so a finding of an unknown check
/// cannot be written.
pub fn finding(check: impl Check, status: Status, detail: impl Into<String>) -> Finding {
    finding_as(check.spec(), check.id(), status, detail.into())
}

/// What a check decided of one finding: its status and the detail saying why.
pub type Verdict = (Status, String);

/// The finding of `check` that `verdict` decided.
pub fn verdict(check: impl Check, (status, detail): Verdict) -> Finding {
    finding(check, status, detail)
}

/// What a finding can be made of: a registry row, or a member of a family of checks.
pub trait Check {
    fn spec(&self) -> &'static CheckSpec;
    fn id(&self) -> String;
}

impl Check for &'static CheckSpec {
    fn spec(&self) -> &'static CheckSpec {
        self
    }
    fn id(&self) -> String {
        self.id.to_string()
    }
}

/// The id of one member of a family of checks (`exposed:/.env`, `debugPort:9205`).
#[derive(Clone, Debug)]
pub struct MemberId {
    root: &'static CheckSpec,
    id: String,
}

impl CheckSpec {
    /// A member of this family of checks (`self` is the family's root row).
    pub fn member(&'static self, member: impl std::fmt::Display) -> MemberId {
        debug_assert_eq!(self.family, Some(self.id), "{} is no family root", self.id);
        MemberId {
            root: self,
            id: format!("{}:{member}", self.id),
        }
    }
}

impl MemberId {
    pub fn as_str(&self) -> &str {
        &self.id
    }
}

impl Check for &MemberId {
    fn spec(&self) -> &'static CheckSpec {
        self.root
    }
    fn id(&self) -> String {
        self.id.clone()
    }
}

/// A finding for an id that came from outside the code (`--verify-remediation`, a document):
/// `None` when no check has it.
pub fn finding_for(id: &str, status: Status, detail: impl Into<String>) -> Option<Finding> {
    spec(id).map(|check| finding_as(check, id.to_string(), status, detail.into()))
}

fn finding_as(check: &'static CheckSpec, id: String, status: Status, detail: String) -> Finding {
    Finding {
        id,
        role: check.role,
        status,
        severity: check.severity,
        category: check.category,
        detail,
        remediation: check.remediation.to_string(),
        documentation: Some(check.documentation.to_string()),
        fixed_in: check.fixed_in,
        counts: check.role == Role::Check,
        decisive: false,
        ignored: false,
    }
}

/// Every check that follows from the measurements (version standing is added by the assessment).
pub fn evaluate(m: &Measurements, ctx: &Context) -> Vec<Finding> {
    let mut modules: Vec<&Module> = MODULES.iter().collect();
    modules.sort_by_key(|module| module.stage);
    let mut findings: Vec<Finding> = modules
        .into_iter()
        .filter(|module| module.stage.runs(m, ctx))
        .flat_map(|module| (module.evaluate)(m, ctx))
        .collect();
    if !ctx.extra_checks_rating {
        for f in findings.iter_mut().filter(|f| f.role == Role::Check) {
            f.counts = false;
        }
    }
    findings
}

#[cfg(test)]
mod ocis_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_fixed_severities() {
        assert_eq!(spec("httpsAvailable").unwrap().severity, Severity::Critical);
    }

    #[test]
    fn family_ids_resolve_to_their_root() {
        assert_eq!(spec("vulnerability:GHSA-xxxx").unwrap().id, "vulnerability");
        assert!(spec("nonsense").is_none());
    }

    #[test]
    fn every_row_states_its_texts() {
        for c in registry() {
            for (what, text) in [
                ("id", c.id),
                ("category", c.category.as_str()),
                ("title", c.title),
                ("remediation", c.remediation),
                ("documentation", c.documentation),
                ("fixed_in", c.fixed_in.as_str()),
            ] {
                assert!(!text.trim().is_empty(), "{}: no {what}", c.id);
            }
            assert!(c.documentation.starts_with("https://"), "{}", c.id);
        }
    }

    /// `--verify-remediation` expands a family root by its members, so every verifiable
    /// family states them, and a row that is no family has none.
    #[test]
    fn every_verifiable_family_states_its_members() {
        for c in registry() {
            let root = c.family == Some(c.id);
            if c.verifiable() {
                assert_eq!(c.members.is_some(), root, "{}", c.id);
            }
            if let Some(members) = c.members {
                let listed = members.listed.map(|listed| listed()).unwrap_or_default();
                for detail in listed {
                    let member = (members.named)(&detail);
                    assert!(
                        member.is_some_and(|m| m.detail == detail),
                        "{}:{detail}",
                        c.id
                    );
                }
            }
        }
    }

    #[test]
    fn ids_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for c in registry() {
            assert!(seen.insert(c.id), "{} twice", c.id);
        }
    }
}
