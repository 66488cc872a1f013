//! Settings: every option once (the table in `options`), layered
//! flag > `COS_*` variable > configuration file > profile > default, with secret references
//! resolved here and nowhere else.

pub mod cli;
pub mod config_file;
pub mod manual;
pub mod options;
pub mod secrets;

use crate::knowledge::Track;
use crate::knowledge::lifecycle::TrackChoice;
use crate::target::{self, Target};
use config_file::{ConfigFile, ConfigValue};
use options::{Availability, Kind, OptionSpec};
use secrets::Environment;
use std::path::PathBuf;
use std::time::Duration;

/// A threshold profile (spec "Threshold profiles").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Strict,
    Ops,
    Lenient,
}

impl Profile {
    fn parse(text: &str) -> Option<Profile> {
        match text.trim().to_ascii_lowercase().as_str() {
            "strict" => Some(Profile::Strict),
            "ops" => Some(Profile::Ops),
            "lenient" => Some(Profile::Lenient),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Strict => "strict",
            Profile::Ops => "ops",
            Profile::Lenient => "lenient",
        }
    }

    /// The profile's value for a row, if the profile sets it.
    fn value(self, id: &str) -> Option<&'static str> {
        use Profile::*;
        Some(match (self, id) {
            (Strict, "warning") => "4",
            (Strict, "critical") => "2",
            (Strict, "check_hardening") => "true",
            (Strict, "update_warning") => "true",
            (Strict, "eol_warning") => "90",
            (Ops, "warning") => "3",
            (Ops, "critical") => "1",
            (Ops, "check_hardening") => "true",
            (Ops, "update_warning") => "false",
            (Ops, "eol_warning") => "30",
            (Lenient, "warning") => "2",
            (Lenient, "critical") => "0",
            (Lenient, "check_hardening") => "false",
            (Lenient, "update_warning") => "false",
            (Lenient, "eol_warning") => "0",
            _ => return None,
        })
    }
}

/// Output formats of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Monitoring,
    Metrics,
    Otlp,
    AgentLocal,
    Summary,
    Json,
    Sarif,
    Junit,
}

impl Format {
    fn parse(text: &str) -> Option<Format> {
        Some(match text {
            "metrics" => Format::Metrics,
            "otlp" => Format::Otlp,
            "agentlocal" => Format::AgentLocal,
            "summary" => Format::Summary,
            "json" => Format::Json,
            "sarif" => Format::Sarif,
            "junit" => Format::Junit,
            _ => return None,
        })
    }
}

/// Where the update check learns the newest release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpdateSource {
    Auto,
    Feed,
    Pinned(semver::Version),
    Bundled,
    Off,
}

impl UpdateSource {
    pub fn mode_name(&self) -> &'static str {
        match self {
            UpdateSource::Auto => "auto",
            UpdateSource::Feed => "feed",
            UpdateSource::Pinned(_) => "pinned",
            UpdateSource::Bundled => "bundled",
            UpdateSource::Off => "off",
        }
    }
}

/// Which layer a value came from; shown in `--debug` so an operator can see why a value holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Flag,
    Variable(String),
    ConfigFile(PathBuf),
    Profile(Profile),
    Default,
}

/// Everything a run needs, typed and validated.
#[derive(Clone, Debug)]
pub struct Settings {
    pub targets: Vec<Target>,
    pub debug: bool,
    pub check_hardening: bool,
    pub warning: u8,
    pub critical: u8,
    pub profile: Option<Profile>,
    pub format: Format,
    pub concurrency: usize,
    pub insecure: bool,
    pub ca_file: Option<PathBuf>,
    pub proxy: Option<String>,
    pub timeout: Duration,
    pub retries: u32,
    pub backoff_factor: f64,
    pub update_source: UpdateSource,
    pub release_token: Option<String>,
    pub releases_url: String,
    pub update_warning: bool,
    pub eol_warning: Option<i64>,
    pub release_track: TrackChoice,
    pub target_port: Option<u16>,
    pub tls_min_days: i64,
    pub use_release_schedule: bool,
    pub release_schedule: Option<PathBuf>,
    pub vulnerability_db: Vec<PathBuf>,
    pub vulnerability_feed: Option<String>,
    pub extra_checks_rating: bool,
    /// Run the additional probes (off with `--no-extra-checks`).
    pub extra_checks: bool,
    /// Repeat checks against every address of the name (`--all-addresses`).
    pub all_addresses: bool,
    /// Include IPv6 addresses with `--all-addresses` (`scanner.ipv6_enabled`).
    pub ipv6_enabled: bool,
    /// Names pinned to addresses (`scanner.resolve`).
    pub resolve: std::collections::HashMap<String, Vec<std::net::IpAddr>>,
    /// DNS server for CAA lookups (`scanner.dns_server`); the system's when unset.
    pub dns_server: Option<std::net::SocketAddr>,
    /// Six failed sign-ins to see whether the instance throttles them (`--login-throttling`).
    pub login_throttling: bool,
    /// Waivers: permanent (`--ignore-hardening`) and time-limited (`--waive-until`).
    pub waivers: Vec<crate::assess::waivers::Waiver>,
    /// `--waiver-warning DAYS`.
    pub waiver_warning: Option<i64>,
    pub policy: Option<crate::assess::policy::Policy>,
    pub baseline: Option<PathBuf>,
    pub warn_on_new: bool,
    /// `--verify-remediation`: finding ids, comma-separated lists flattened.
    pub verify_remediation: Vec<String>,
    pub webhook: Option<crate::notify::WebhookSettings>,
    /// Debug ports to probe; empty with `--no-debug-ports` / `scanner.check_debug_ports: false`.
    pub debug_ports: Vec<u16>,
    pub debug_port_timeout: Duration,
    pub now: Option<jiff::Timestamp>,
    pub config_file: Option<PathBuf>,
}

/// A setting the operator got wrong: one line naming the problem and the fix. Ends the run
/// UNKNOWN (exit 3), so a typo in a service definition never pages as CRITICAL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError(pub String);

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for SettingsError {
    fn from(s: String) -> Self {
        SettingsError(s)
    }
}

/// Boolean variables: `1`, `true`, `yes`, `on` (any case) enable; anything else disables.
pub fn truthy(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// Looks up one setting through the layers.
pub struct Layers<'a> {
    pub cli: &'a cli::CommandLine,
    pub env: &'a dyn Environment,
    pub config: Option<&'a ConfigFile>,
    pub profile: Option<Profile>,
}

impl Layers<'_> {
    /// The strongest source's raw values (several for repeatable settings), references resolved.
    pub fn raw(&self, spec: &OptionSpec) -> Result<Option<(Vec<String>, Source)>, SettingsError> {
        let resolve = |v: &str| {
            secrets::resolve(v, self.env)
                .map_err(|e| SettingsError(format!("{}: {e}", spec.display_name())))
        };
        let flags = self.cli.all(spec.id);
        if !flags.is_empty() {
            let values = match spec.kind {
                Kind::Repeatable(_) => {
                    flags.iter().map(|v| resolve(v)).collect::<Result<_, _>>()?
                }
                _ => vec![resolve(flags[flags.len() - 1])?],
            };
            return Ok(Some((values, Source::Flag)));
        }
        for name in spec.env {
            if let Some(value) = self.env.var(name) {
                // An empty variable counts as set only for switches, where the spec says empty
                // means disabled; for values it is the usual "defined but blank" of unit files.
                if value.is_empty() && spec.kind != Kind::Switch {
                    continue;
                }
                let values = match spec.kind {
                    Kind::Repeatable(_) => split_list(&value, spec)
                        .iter()
                        .map(|v| resolve(v))
                        .collect::<Result<_, _>>()?,
                    _ => vec![resolve(&value)?],
                };
                return Ok(Some((values, Source::Variable(name.to_string()))));
            }
            let file_var = format!("{name}_FILE");
            if let Some(path) = self.env.var(&file_var).filter(|p| !p.is_empty()) {
                let value = secrets::read_value_file(std::path::Path::new(&path))
                    .map_err(|e| SettingsError(format!("{file_var}: {e}")))?;
                return Ok(Some((vec![value], Source::Variable(file_var))));
            }
        }
        if let (Some(config), Some(key)) = (self.config, spec.config_key) {
            let source = Source::ConfigFile(config.path.clone());
            if let Some(value) = config.values.get(key) {
                let values = match value {
                    ConfigValue::Scalar(s) => match spec.kind {
                        Kind::Repeatable(_) => split_list(s, spec),
                        _ => vec![s.clone()],
                    },
                    ConfigValue::List(items) => match spec.kind {
                        Kind::Repeatable(_) => items.clone(),
                        // Lists of ports and the like are kept as one comma-joined value.
                        _ => vec![items.join(",")],
                    },
                };
                let values = values
                    .iter()
                    .map(|v| resolve(v))
                    .collect::<Result<_, _>>()?;
                return Ok(Some((values, source)));
            }
            if let Some(ConfigValue::Scalar(path)) = config.values.get(&format!("{key}_file")) {
                let value = secrets::read_value_file(std::path::Path::new(path))
                    .map_err(|e| SettingsError(format!("{key}_file: {e}")))?;
                return Ok(Some((vec![value], source)));
            }
        }
        if let Some(profile) = self.profile
            && let Some(value) = profile.value(spec.id)
        {
            return Ok(Some((vec![value.to_string()], Source::Profile(profile))));
        }
        Ok(None)
    }

    pub fn string(&self, id: &str) -> Result<Option<String>, SettingsError> {
        Ok(self
            .raw(options::spec(id))?
            .and_then(|(mut v, _)| v.pop())
            .filter(|v| !v.trim().is_empty()))
    }

    pub fn list(&self, id: &str) -> Result<Vec<String>, SettingsError> {
        Ok(self
            .raw(options::spec(id))?
            .map(|(v, _)| v)
            .unwrap_or_default())
    }

    /// Switches and boolean settings: the boolean rules for every textual source.
    pub fn switch(&self, id: &str, default: bool) -> Result<bool, SettingsError> {
        Ok(match self.raw(options::spec(id))? {
            Some((values, _)) => values.last().is_some_and(|v| truthy(v)),
            None => default,
        })
    }

    pub fn parsed<T>(
        &self,
        id: &str,
        what: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, SettingsError> {
        let spec = options::spec(id);
        match self.string(id)? {
            None => Ok(None),
            Some(text) => parse(text.trim()).map(Some).ok_or_else(|| {
                SettingsError(format!(
                    "{} {:?} is not {what}; {}",
                    spec.display_name(),
                    text,
                    fix_hint(spec, what)
                ))
            }),
        }
    }
}

fn fix_hint(spec: &OptionSpec, what: &str) -> String {
    if spec.choices.is_empty() {
        format!("give {what}")
    } else {
        format!("use one of {}", spec.choices.join(", "))
    }
}

fn split_list(value: &str, spec: &OptionSpec) -> Vec<String> {
    let separator = if spec.id == "webhook_header" {
        ';'
    } else {
        ','
    };
    value
        .split(separator)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn seconds(text: &str) -> Option<Duration> {
    let value: f64 = text.parse().ok()?;
    (value.is_finite() && value > 0.0 && value <= 3600.0).then(|| Duration::from_secs_f64(value))
}

/// Debug listeners of the proxy, frontend, graph, idp and idm services.
pub const DEFAULT_DEBUG_PORTS: [u16; 5] = [9205, 9141, 9124, 9134, 9239];

fn parse_ports(text: &str) -> Option<Vec<u16>> {
    let ports: Option<Vec<u16>> = text
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u16>().ok().filter(|p| *p > 0))
        .collect();
    ports.filter(|p| !p.is_empty())
}

fn rating(text: &str) -> Option<u8> {
    text.parse::<u8>().ok().filter(|r| *r <= 5)
}

impl Settings {
    /// Builds the settings of a scan from the command line, the environment and the
    /// configuration file it names or finds.
    pub fn resolve(
        line: &cli::CommandLine,
        env: &dyn Environment,
    ) -> Result<Settings, SettingsError> {
        // Features that have not landed yet end the run plainly instead of being ignored.
        for spec in options::OPTIONS {
            if spec.availability == Availability::NotYet && is_given(spec, line, env) {
                return Err(SettingsError(format!(
                    "{} is not available in this version yet; remove it to run the check",
                    spec.display_name()
                )));
            }
        }
        let no_profile = Layers {
            cli: line,
            env,
            config: None,
            profile: None,
        };
        let explicit_config = no_profile.string("config")?;
        let config = match config_file::locate(explicit_config.as_deref(), env)? {
            Some(path) => Some(config_file::load(&path)?),
            None => None,
        };
        let mut layers = Layers {
            cli: line,
            env,
            config: config.as_ref(),
            profile: None,
        };
        layers.profile = layers.parsed("profile", "a profile", Profile::parse)?;
        for spec in options::OPTIONS {
            if spec.availability == Availability::NotYet
                && let Some(config) = &config
                && spec
                    .config_key
                    .is_some_and(|k| config.values.contains_key(k))
            {
                return Err(SettingsError(format!(
                    "{} (configuration key {}) is not available in this version yet; remove it \
                     from {}",
                    spec.display_name(),
                    spec.config_key.unwrap_or_default(),
                    config.path.display()
                )));
            }
        }
        Settings::from_layers(&layers, config.as_ref().map(|c| c.path.clone()))
    }

    fn from_layers(l: &Layers, config_file: Option<PathBuf>) -> Result<Settings, SettingsError> {
        let host = l.string("host")?.ok_or_else(|| {
            SettingsError("no target given; pass -H/--host (or set COS_HOST)".to_string())
        })?;
        let targets = target::parse_list(&host).map_err(|e| SettingsError(e.to_string()))?;

        let warning = l
            .parsed("warning", "a rating from 0 to 5", rating)?
            .unwrap_or(3);
        let critical = l
            .parsed("critical", "a rating from 0 to 5", rating)?
            .unwrap_or(1);
        if critical > warning {
            return Err(SettingsError(format!(
                "--critical {critical} exceeds --warning {warning}; both are ratings 0-5 and \
                 critical must be at or below warning"
            )));
        }

        let format = l
            .parsed("format", "an output format", Format::parse)?
            .unwrap_or(Format::Monitoring);

        let concurrency = l
            .parsed("concurrency", "a number of workers from 1 to 32", |t| {
                t.parse::<usize>().ok().filter(|n| (1..=32).contains(n))
            })?
            .unwrap_or(5);

        let insecure = l.switch("insecure", false)? || !l.switch("verify_tls", true)?;
        let ca_file = l.string("ca_file")?.map(PathBuf::from);
        if let Some(path) = &ca_file
            && !path.is_file()
        {
            return Err(SettingsError(format!(
                "--ca-file {} does not exist or is not a file; give the path of a PEM bundle",
                path.display()
            )));
        }
        let proxy = l.string("proxy")?;
        if let Some(url) = &proxy {
            crate::net::proxy::Proxy::parse(url.trim())?;
        }
        let timeout = l
            .parsed(
                "timeout",
                "a number of seconds above 0 (at most 3600)",
                seconds,
            )?
            .unwrap_or(Duration::from_secs(10));
        let retries = l
            .parsed("retries", "a number of retries from 0 to 10", |t| {
                t.parse::<u32>().ok().filter(|n| *n <= 10)
            })?
            .unwrap_or(2);
        let backoff_factor = l
            .parsed("backoff_factor", "a number of seconds from 0 to 60", |t| {
                t.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite() && (0.0..=60.0).contains(f))
            })?
            .unwrap_or(0.5);

        let latest_version = l.parsed(
            "latest_version",
            "a release version such as 4.0.8",
            crate::knowledge::parse_version,
        )?;
        let mode = l
            .parsed("update_source", "an update source", |t| {
                ["auto", "feed", "pinned", "bundled", "off"]
                    .contains(&t)
                    .then(|| t.to_string())
            })?
            .unwrap_or_else(|| "auto".to_string());
        let update_source = if l.switch("no_update_check", false)? {
            UpdateSource::Off
        } else {
            match mode.as_str() {
                "feed" => UpdateSource::Feed,
                "bundled" => UpdateSource::Bundled,
                "off" => UpdateSource::Off,
                "pinned" => UpdateSource::Pinned(latest_version.clone().ok_or_else(|| {
                    SettingsError(
                        "--update-source pinned needs --latest-version VERSION (the newest \
                         release to compare with)"
                            .to_string(),
                    )
                })?),
                _ => UpdateSource::Auto,
            }
        };
        if latest_version.is_some() && !matches!(update_source, UpdateSource::Pinned(_)) {
            return Err(SettingsError(
                "--latest-version is only used with --update-source pinned; add \
                 --update-source pinned or remove --latest-version"
                    .to_string(),
            ));
        }

        let release_track = l
            .parsed("release_track", "a release track", |t| match t {
                "auto" => Some(TrackChoice::Auto),
                other => Track::parse(other).map(TrackChoice::Fixed),
            })?
            .unwrap_or(TrackChoice::Auto);

        let eol_warning = l.parsed("eol_warning", "a number of days (0 or more)", |t| {
            t.parse::<i64>().ok().filter(|d| (0..=3650).contains(d))
        })?;
        let target_port = l.parsed("target_port", "a port from 1 to 65535", |t| {
            t.parse::<u16>().ok().filter(|p| *p > 0)
        })?;
        let tls_min_days = l
            .parsed("tls_min_days", "a number of days (0 or more)", |t| {
                t.parse::<i64>().ok().filter(|d| (0..=3650).contains(d))
            })?
            .unwrap_or(14);
        let mut waivers: Vec<crate::assess::waivers::Waiver> = l
            .list("ignore_hardening")?
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| crate::assess::waivers::Waiver::permanent(p, "--ignore-hardening"))
            .collect();
        for text in l.list("waive_until")? {
            waivers.push(crate::assess::waivers::Waiver::parse_until(&text)?);
        }
        let check_debug_ports =
            !l.switch("no_debug_ports", false)? && l.switch("check_debug_ports", true)?;
        let debug_ports = if check_debug_ports {
            l.parsed("debug_ports", "a list of ports (1-65535)", parse_ports)?
                .unwrap_or_else(|| DEFAULT_DEBUG_PORTS.to_vec())
        } else {
            Vec::new()
        };
        let debug_port_timeout = l
            .parsed(
                "debug_port_timeout",
                "a number of seconds above 0 (at most 3600)",
                seconds,
            )?
            .unwrap_or(Duration::from_secs(3));
        let now = l.parsed(
            "now",
            "an RFC 3339 timestamp such as 2026-11-22T03:00:00Z",
            |t| t.parse::<jiff::Timestamp>().ok(),
        )?;

        let webhook = webhook_settings(l, retries, backoff_factor, proxy.clone())?;
        Ok(Settings {
            targets,
            debug: l.switch("debug", false)?,
            check_hardening: l.switch("check_hardening", false)?,
            warning,
            critical,
            profile: l.profile,
            format,
            concurrency,
            insecure,
            ca_file,
            proxy,
            timeout,
            retries,
            backoff_factor,
            update_source,
            release_token: l.string("release_token")?,
            releases_url: l.string("releases_url")?.unwrap_or_else(|| {
                options::spec("releases_url")
                    .default
                    .unwrap_or_default()
                    .to_string()
            }),
            update_warning: l.switch("update_warning", false)?,
            eol_warning,
            release_track,
            target_port,
            tls_min_days,
            use_release_schedule: l.switch("use_release_schedule", true)?,
            release_schedule: l.string("release_schedule")?.map(PathBuf::from),
            vulnerability_db: l
                .list("vulnerability_db")?
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            vulnerability_feed: l.string("vulnerability_feed")?,
            extra_checks_rating: l.switch("extra_checks_rating", true)?,
            extra_checks: !l.switch("no_extra_checks", false)?,
            debug_ports,
            debug_port_timeout,
            all_addresses: l.switch("all_addresses", false)?
                || l.switch("check_all_addresses", false)?,
            ipv6_enabled: l.switch("ipv6_enabled", true)?,
            resolve: l
                .parsed(
                    "resolve",
                    "a list of pins such as cloud.example=192.0.2.1,192.0.2.2",
                    crate::net::resolve::parse_pins,
                )?
                .unwrap_or_default(),
            dns_server: l.parsed(
                "dns_server",
                "a DNS server address such as 192.0.2.53 or 192.0.2.53:53",
                |t| {
                    t.parse::<std::net::SocketAddr>()
                        .ok()
                        .or_else(|| t.parse::<std::net::IpAddr>().ok().map(|ip| (ip, 53).into()))
                },
            )?,
            login_throttling: l.switch("login_throttling", false)?
                || l.switch("check_login_throttling", false)?,
            waivers,
            waiver_warning: l.parsed("waiver_warning", "a number of days (0 or more)", |t| {
                t.parse::<i64>().ok().filter(|d| (0..=3650).contains(d))
            })?,
            policy: match l.string("policy")? {
                Some(path) => Some(crate::assess::policy::Policy::load(std::path::Path::new(
                    &path,
                ))?),
                None => None,
            },
            baseline: l.string("baseline")?.map(PathBuf::from),
            warn_on_new: l.switch("warn_on_new", false)?,
            verify_remediation: l
                .list("verify_remediation")?
                .iter()
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .filter(|id| !id.is_empty())
                .map(String::from)
                .collect(),
            webhook,
            now,
            config_file,
        })
    }
}

fn webhook_settings(
    l: &Layers,
    retries: u32,
    backoff_factor: f64,
    proxy: Option<String>,
) -> Result<Option<crate::notify::WebhookSettings>, SettingsError> {
    use crate::notify::{BodyFormat, NotifyOn, WebhookSettings};
    let Some(url) = l.string("webhook_url")? else {
        return Ok(None);
    };
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(SettingsError(format!(
            "--webhook-url {url:?} is not an http(s) address; give the receiver's URL"
        )));
    }
    let on = l
        .parsed("webhook_on", "a webhook level", |t| match t {
            "critical" => Some(NotifyOn::Critical),
            "warning" => Some(NotifyOn::Warning),
            "unknown" => Some(NotifyOn::Unknown),
            "always" => Some(NotifyOn::Always),
            _ => None,
        })?
        .unwrap_or(NotifyOn::Critical);
    let format = l
        .parsed("webhook_format", "a webhook format", |t| match t {
            "generic" => Some(BodyFormat::Generic),
            "chatblocks" => Some(BodyFormat::ChatBlocks),
            "chatembed" => Some(BodyFormat::ChatEmbed),
            "pushtopic" => Some(BodyFormat::PushTopic),
            "pushserver" => Some(BodyFormat::PushServer),
            _ => None,
        })?
        .unwrap_or(BodyFormat::Generic);
    let mut headers = Vec::new();
    for entry in l.list("webhook_header")? {
        let (name, value) = entry
            .split_once(':')
            .filter(|(n, _)| !n.trim().is_empty() && !n.contains(char::is_whitespace))
            .ok_or_else(|| {
                SettingsError(format!(
                    "--webhook-header {entry:?} must be 'Name: value', e.g. 'Authorization: Bearer xyz'"
                ))
            })?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let timeout = l
        .parsed(
            "webhook_timeout",
            "a number of seconds above 0 (at most 3600)",
            seconds,
        )?
        .unwrap_or(Duration::from_secs(10));
    let settings = WebhookSettings {
        url,
        on,
        format,
        headers,
        timeout,
        allow_private: l.switch("allow_private_webhooks", false)?,
        retries,
        backoff_factor,
        proxy,
    };
    settings.validate()?;
    Ok(Some(settings))
}

/// Whether a not-yet-available setting was used on the command line or in the environment.
fn is_given(spec: &OptionSpec, line: &cli::CommandLine, env: &dyn Environment) -> bool {
    !line.all(spec.id).is_empty()
        || spec.env.iter().any(|name| {
            env.var(name).is_some_and(|v| match spec.kind {
                // A disabled boolean variable asks for nothing.
                Kind::Switch => truthy(&v),
                _ => !v.is_empty(),
            })
        })
}

#[cfg(test)]
mod tests;
