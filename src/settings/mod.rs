//! Settings: every option once (the table in `options`), layered
//! flag > `COS_*` variable > configuration file > profile > default, with secret references
//! resolved here and nowhere else.

pub mod cli;
pub mod config_file;
pub mod manual;
mod operator_files;
pub use operator_files::NamedFile;
pub mod options;
/// The secret guard lives at the bottom (every layer's text passes it); named here too.
pub use crate::redact;
pub mod secrets;
pub mod state_dir;

use crate::knowledge::Track;
use crate::knowledge::lifecycle::TrackChoice;
use crate::target::{self, Target};
use config_file::{ConfigFile, ConfigValue};
use options::{Kind, OptionSpec, Type};
use secrets::Environment;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A threshold profile (spec "Threshold profiles"): its name and its values of
/// `PROFILE_ROWS`, in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile(&'static str, [&'static str; 5]);

const PROFILES: [Profile; 3] = [
    Profile("strict", ["4", "2", "true", "true", "90"]),
    Profile("ops", ["3", "1", "true", "false", "30"]),
    Profile("lenient", ["2", "0", "false", "false", "0"]),
];

/// The rows a profile sets.
const PROFILE_ROWS: [&str; 5] = [
    "warning",
    "critical",
    "check_hardening",
    "update_warning",
    "eol_warning",
];

impl Profile {
    pub(crate) fn parse(text: &str) -> Option<Profile> {
        let text = text.trim().to_ascii_lowercase();
        PROFILES.into_iter().find(|p| p.0 == text)
    }

    pub fn name(self) -> &'static str {
        self.0
    }

    /// The profile's value for a row, if the profile sets it.
    pub(crate) fn value(self, id: &str) -> Option<&'static str> {
        let row = PROFILE_ROWS.iter().position(|r| *r == id)?;
        Some(self.1[row])
    }
}

pub use crate::knowledge::update::UpdateSource;

/// Which layer a value came from: a file's booleans are strict, a flag in clear is a warning,
/// a waiver names its variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Flag,
    Variable,
    ConfigFile,
    Profile,
}

/// Declares a struct of settings together with how each field is read, in the order the
/// fields are read (so of two wrong values the first one is named): a field is written once.
/// `= value` (or any other reader of `Layers` taking an id) reads the row named as the field;
/// `= { .. }` is the reading itself and may use the fields and `let` values read before it.
/// A `let` line reads a value at its place in the order that is no field of its own.
macro_rules! settings_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident read from $l:ident $(, $arg:ident: $arg_type:ty)* {
            $(
                $(let $value:ident = $reading:expr;)*
                $(#[$field_meta:meta])*
                pub $field:ident: $type:ty = $read:tt,
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: $type,)*
        }

        impl $name {
            fn read($l: &Layers $(, $arg: $arg_type)*) -> Result<$name, SettingsError> {
                $(
                    $(let $value = $reading;)*
                    let $field: $type = settings_struct!(@read $l $field $read);
                )*
                Ok($name { $($field),* })
            }
        }
    };
    (@read $l:ident $field:ident { $($read:tt)* }) => {{ $($read)* }};
    (@read $l:ident $field:ident $reader:ident) => { $l.$reader(stringify!($field))? };
}

settings_struct! {
    /// Everything a run needs, typed and validated.
    #[derive(Clone, Debug)]
    pub struct Settings read from l, config_file: Option<PathBuf> {
        pub targets: Vec<Target> = {
            if l.component.scans_configured_targets() {
                targets(l)?
            } else {
                // A server's targets come with its requests; -H still names some if given.
                targets(l).unwrap_or_default()
            }
        },
        pub warning: u8 = value,
        pub critical: u8 = { critical_within_warning(l, warning)? },
        pub format: Format = {
            use Format::*;
            let formats = [Metrics, Otlp, AgentLocal, Summary, Json, Sarif, Junit];
            l.chosen("format", &formats)?.unwrap_or(Monitoring)
        },
        // Read in the order of the manual, so of two wrong values the first is named.
        /// How to reach the instances, what to probe and where knowledge comes from.
        pub scan: crate::scanner::Config = { scan_config(l)? },
        /// The whole run's time limit (`--time-budget`).
        pub time_budget: Duration = value,
        pub release_track: TrackChoice = {
            l.parsed_or_default("release_track", |t| match t {
                "auto" => Some(TrackChoice::Auto),
                other => Track::parse(other).map(TrackChoice::Fixed),
            })?
        },
        pub eol_warning: Option<i64> = optional,
        pub tls_min_days: i64 = value,
        /// Waivers: permanent (`--ignore-hardening`) and time-limited (`--waive-until`).
        pub waivers: Vec<crate::assess::waivers::Waiver> = { waivers(l)? },
        pub now: Option<jiff::Timestamp> = { l.parsed("now", |t| t.parse().ok())? },
        pub webhook: Option<crate::notify::WebhookSettings> = {
            webhook_settings(l, scan.retries, scan.backoff_factor, scan.proxy.clone())?
        },
        /// The metrics exporter (`--prometheus-listen-port`); `None`: the plugin scans once.
        pub exporter: Option<ExporterSettings> = { exporter_settings(l, format)? },
        let service_listen = listen_address(l, "listen", "port")?;
        let web_listen = listen_address(l, "web_listen", "web_port")?;
        /// `--diff-format`: the change report instead of the normal output (needs `--baseline`).
        pub diff_format: Option<DiffFormat> = { diff_format(l)? },
        pub debug: bool = switch,
        pub check_hardening: bool = switch,
        pub update_warning: bool = switch,
        /// `--self-update-check`: look for a newer release of the plugin, at most once a day.
        pub self_update_check: bool = switch,
        /// `--self-update-url`: the plugin's own release feed (`self_update`).
        pub self_update_url: String = {
            l.parsed_or_default("self_update_url", |t| {
                let lower = t.to_ascii_lowercase();
                (lower.starts_with("https://") || lower.starts_with("http://")).then(|| t.into())
            })?
        },
        pub use_release_schedule: bool = switch,
        pub extra_checks_rating: bool = switch,
        /// Names pinned to addresses (`scanner.resolve`).
        pub resolve: std::collections::HashMap<String, Vec<std::net::IpAddr>> = {
            l.parsed("resolve", crate::net::resolve::parse_pins)?.unwrap_or_default()
        },
        pub waiver_warning: Option<i64> = optional,
        pub policy: Option<crate::assess::policy::Policy> = {
            l.given("policy")?
                .map(|given| {
                    crate::assess::policy::Policy::load(Path::new(&given.text))
                        .map_err(|e| SettingsError(given.scrub(&e)))
                })
                .transpose()?
        },
        pub baseline: Option<PathBuf> = {
            l.operator_file("baseline", crate::files::Kind::Baseline)?
        },
        pub warn_on_new: bool = switch,
        /// `--verify-remediation`: finding ids, comma-separated lists flattened.
        pub verify_remediation: Vec<String> = comma_list,
        pub config_file: Option<PathBuf> = { config_file },
        /// The scanner's own settings.
        pub scanner: ScannerSettings = { ScannerSettings::read(l, service_listen, web_listen)? },
        /// What the operator should change though the run goes on (a secret written in clear on
        /// the command line); a server prints each once on stderr when it starts.
        pub warnings: Vec<String> = { secrets_in_clear_on_the_command_line(l)? },
        /// Values never to print (`redact`): what came from references, and tokens. Last:
        /// every value is read.
        pub secrets: Vec<redact::Secret> = { l.secrets() },
    }
}

pub use options::Component;

settings_struct! {
    /// The scanner's own settings (`check-storage-scanner serve` and `review-waivers`).
    #[derive(Clone, Debug)]
    pub struct ScannerSettings read from l,
        service_listen: std::net::SocketAddr,
        web_listen: std::net::SocketAddr
    {
        /// `--listen`: the address `serve` listens on.
        pub listen: std::net::IpAddr = { service_listen.ip() },
        /// `--port`, or the port written in `--listen` (which wins).
        pub port: u16 = { service_listen.port() },
        /// `check-storage-scanner web`.
        pub web: WebSettings = { WebSettings::read(l, web_listen)? },
        /// `--token`: the bearer token of `/api/` calls (a secret: never printed).
        pub token: Option<String> = string,
        /// `service.cache_ttl`: how long a host's result is served from the cache.
        pub cache_ttl: Duration = value,
        /// `--result`: the result documents `review-waivers` reads.
        pub results: Vec<NamedFile> = {
            l.named_operator_files("result", crate::files::Kind::ResultDocument)?
        },
        /// `--for`: the one form `snippets` prints; `None`: every form.
        pub snippets_for: Option<crate::assess::snippets::Form> = {
            l.parsed("snippets_for", crate::assess::snippets::Form::from_name)?
        },
        /// `fleet --format json`: the judgement as JSON instead of the table.
        pub fleet_json: bool = { l.choice("fleet_format")? == "json" },
    }
}

settings_struct! {
    /// The public scan API's settings (`check-storage-scanner web`).
    #[derive(Clone, Debug)]
    pub struct WebSettings read from l, web_listen: std::net::SocketAddr {
        /// `--listen` with its port, else `--port`, else 8080.
        pub listen: std::net::SocketAddr = { web_listen },
        /// `--base-url`, without a trailing slash; `None`: `http://<listen>`.
        pub base_url: Option<String> = {
            l.parsed("base_url", |t| {
                // Kept without a trailing slash: routes are appended to it.
                let t = t.trim_end_matches('/');
                let rest = t
                    .strip_prefix("https://")
                    .or_else(|| t.strip_prefix("http://"))?;
                let host = rest.split('/').next().unwrap_or_default();
                (!host.is_empty() && !rest.contains(['?', '#', ' ', '"', '<', '>', '\\']))
                    .then(|| t.to_string())
            })?
        },
        /// `--store`: `sqlite:PATH` or `redis://...`; `None`: SQLite in the state directory.
        pub store: Option<String> = string,
        /// `--store-timeout`: the deadline of one store call.
        pub store_timeout: Duration = value,
        pub workers: usize = value,
        pub connections_per_address: usize = value,
        pub record_ttl: Duration = value,
        /// `--trusted-proxy`: (network, prefix length).
        pub trusted_proxies: Vec<(std::net::IpAddr, u8)> = {
            l.entries("trusted_proxy", parse_cidr)?
        },
        pub allow_private_targets: bool = switch,
        /// `--mcp-token`: the bearer token `/mcp` requires (a secret: never printed).
        pub mcp_token: Option<String> = string,
        /// Not `--no-mcp`.
        pub mcp: bool = { !l.switch("no_mcp")? },
    }
}

/// `10.0.0.0/8` or a lone address (its full length); `None` when it is neither.
pub fn parse_cidr(text: &str) -> Option<(std::net::IpAddr, u8)> {
    let (address, length) = match text.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (text, None),
    };
    let address = ip_address(address.trim())?;
    let max = if address.is_ipv4() { 32 } else { 128 };
    let length = match length {
        Some(l) => l.trim().parse::<u8>().ok().filter(|l| *l <= max)?,
        None => max,
    };
    Some((address, length))
}

/// The metrics exporter's settings; present only when the exporter runs.
#[derive(Clone, Debug)]
pub struct ExporterSettings {
    /// Where `/metrics` is served: `--prometheus-listen-addr` and `--prometheus-listen-port`
    /// (port 0: a free port).
    pub listen: std::net::SocketAddr,
    /// `--scrape-interval`: from the start of one round to the start of the next.
    pub scrape_interval: Duration,
}

/// A setting the operator got wrong: one line naming the problem and the fix. Ends the run
/// UNKNOWN (exit 3), so a typo in a service definition never pages as CRITICAL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError(pub String);

pub use crate::output::{DiffFormat, Format};

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

/// A setting's value as the operator gave it, and the reference it was read from, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Given {
    pub text: String,
    /// How the setting was named where this value was given, for messages: `--timeout`,
    /// `COS_TIMEOUT`, `timeout (in /etc/check-storage-security/config.yml)`.
    pub name: String,
    /// Where the value was read from when it was not written literally: `env://HOOK`,
    /// `file:///run/x`, `COS_WEBHOOK_URL_FILE (/run/x)`, `webhook_url_file (/run/x)`.
    pub reference: Option<String>,
}

impl Given {
    /// How a message names the value: quoted when it was written literally, by its reference
    /// when it came from one, so a secret never reaches the monitoring output or a log.
    pub fn shown(&self) -> String {
        match &self.reference {
            Some(reference) => format!("from {reference}"),
            None => format!("{:?}", self.text),
        }
    }

    /// A validator's message about this value, made fit to print: for a value that came from
    /// a reference, the value and every quoted part of it are taken out and the reference is
    /// named instead, keeping what is wrong and the fix. Literal values pass unchanged.
    pub fn scrub(&self, message: &str) -> String {
        let Some(reference) = &self.reference else {
            return message.to_string();
        };
        let mut out = String::with_capacity(message.len());
        let mut rest = message;
        // Quoted parts are `{:?}`-formatted pieces of the value (an entry, a port, a scheme).
        while let Some(open) = rest.find('"') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let Some(close) = closing_quote(after) else {
                out.push_str(&rest[open..]);
                rest = "";
                break;
            };
            let inner = &after[..close];
            let unescaped = inner.replace("\\\"", "\"").replace("\\\\", "\\");
            if !unescaped.is_empty() && self.text.contains(&unescaped) {
                out.push_str("(value not shown)");
            } else {
                out.push('"');
                out.push_str(inner);
                out.push('"');
            }
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        let trimmed = self.text.trim();
        if !trimmed.is_empty() {
            out = out.replace(trimmed, "(value not shown)");
        }
        if out.contains(reference.as_str()) {
            out
        } else {
            format!("{out} (the value came from {reference})")
        }
    }
}

/// The byte index of the `"` that closes a `{:?}`-quoted string (escaped quotes skipped).
fn closing_quote(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

/// A boolean written in a configuration file: the enabling words of `truthy` and their
/// opposites (`0`, `false`, `no`, `off`); anything else is no boolean.
fn boolean(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Boolean variables: `1`, `true`, `yes`, `on` (any case) enable; anything else disables.
pub fn truthy(text: &str) -> bool {
    boolean(text) == Some(true)
}

/// Looks up one setting through the layers.
pub struct Layers<'a> {
    /// Who reads: a row another component owns is never read, so its secret never resolved.
    pub component: Component,
    pub cli: &'a cli::CommandLine,
    pub env: &'a dyn Environment,
    pub config: Option<&'a ConfigFile>,
    pub profile: Option<Profile>,
    /// Every value read so far, by setting id: where the secrets to keep out of the output
    /// come from (`redact`).
    pub read: std::cell::RefCell<Vec<(&'static str, Given)>>,
}

impl<'a> Layers<'a> {
    pub fn new(
        component: Component,
        cli: &'a cli::CommandLine,
        env: &'a dyn Environment,
        config: Option<&'a ConfigFile>,
    ) -> Layers<'a> {
        Layers {
            component,
            cli,
            env,
            config,
            profile: None,
            read: Default::default(),
        }
    }

    /// The values never to print: references of free-form settings, and secrets by nature
    /// however they were given (see `redact`).
    pub fn secrets(&self) -> Vec<redact::Secret> {
        let mut secrets = Vec::new();
        /// `scheme://user:password@host`: what is before the last `@`.
        fn userinfo(text: &str) -> Option<&str> {
            Some(text.split_once("://")?.1.rsplit_once('@')?.0)
        }
        for (id, given) in self.read.borrow().iter() {
            let text = given.text.as_str();
            if let Some(reference) = &given.reference
                && redact::FREE_FORM.contains(id)
            {
                secrets.push(redact::Secret::from_reference(text, reference));
            }
            let parts = match *id {
                "release_token" | "token" | "mcp_token" => vec![(Some(text), "token")],
                "webhook_url" => {
                    // The path and query alone carry a chat service's token.
                    let path = text.split_once("://").and_then(|(_, rest)| {
                        let at = rest.find(['/', '?'])?;
                        (rest.len() > at + 1).then(|| &rest[at..])
                    });
                    vec![(Some(text), "webhook URL"), (path, "webhook URL path")]
                }
                "webhook_header" => vec![(text.split_once(':').map(|(_, v)| v), "header value")],
                "proxy" => vec![(userinfo(text), "proxy credentials")],
                // redis://:PASSWORD@host/0
                "store" => vec![(userinfo(text), "store credentials")],
                _ => Vec::new(),
            };
            for (part, what) in parts {
                secrets.extend(part.map(|p| redact::Secret::literal(p, what)));
            }
        }
        secrets.dedup();
        secrets
    }
}

impl Layers<'_> {
    /// The strongest source's values (several for repeatable settings), references resolved,
    /// each with the reference it came from.
    pub fn raw(&self, spec: &OptionSpec) -> Result<Option<(Vec<Given>, Source)>, SettingsError> {
        let found = self.raw_unrecorded(spec)?;
        if let Some((values, _)) = &found {
            let mut read = self.read.borrow_mut();
            for given in values {
                if !read.iter().any(|(id, g)| *id == spec.id && g == given) {
                    read.push((spec.id, given.clone()));
                }
            }
        }
        Ok(found)
    }

    /// The values with their references resolved, named `name` in messages.
    fn resolved(
        &self,
        values: &[impl AsRef<str>],
        name: &str,
    ) -> Result<Vec<Given>, SettingsError> {
        let resolve = |v: &str| {
            let text =
                secrets::resolve(v, self.env).map_err(|e| SettingsError(format!("{name}: {e}")))?;
            Ok(Given {
                text,
                name: name.to_string(),
                reference: secrets::is_reference(v).then(|| v.to_string()),
            })
        };
        values.iter().map(|v| resolve(v.as_ref())).collect()
    }

    fn raw_unrecorded(
        &self,
        spec: &OptionSpec,
    ) -> Result<Option<(Vec<Given>, Source)>, SettingsError> {
        if !spec.read_by(self.component) {
            return Ok(None);
        }
        let repeatable = matches!(spec.kind, Kind::Repeatable(..));
        // The `_FILE` / `_file` forms: the value is the file's text.
        let value_file = |path: &str, name: String, reference: String| {
            let text = secrets::read_value_file(Path::new(path))
                .map_err(|e| SettingsError(format!("{name}: {e}")))?;
            Ok::<_, SettingsError>(vec![Given {
                text,
                name,
                reference: Some(reference),
            }])
        };
        let flags = self.cli.all(spec.id);
        if let Some(last) = flags.last() {
            let given = if repeatable { &flags[..] } else { &[*last][..] };
            return Ok(Some((
                self.resolved(given, &spec.display_name())?,
                Source::Flag,
            )));
        }
        for name in spec.env {
            if let Some(value) = self.env.var(name) {
                // An empty variable counts as set only for switches, where the spec says empty
                // means disabled; for values it is the usual "defined but blank" of unit files.
                if value.is_empty() && spec.kind != Kind::Switch {
                    continue;
                }
                let values = if repeatable {
                    split_list(&value, spec)
                } else {
                    vec![value]
                };
                return Ok(Some((self.resolved(&values, name)?, Source::Variable)));
            }
            let file_var = format!("{name}_FILE");
            if let Some(path) = self.env.var(&file_var).filter(|p| !p.is_empty()) {
                let given = value_file(&path, file_var.clone(), format!("{file_var} ({path})"))?;
                return Ok(Some((given, Source::Variable)));
            }
        }
        if let (Some(config), Some(key)) = (self.config, spec.config_key) {
            let name = format!("{key} (in {})", config.path.display());
            if let Some(value) = config.values.get(key) {
                let values = match (value, repeatable) {
                    (ConfigValue::Scalar(s), true) => split_list(s, spec),
                    (ConfigValue::Scalar(s), false) => vec![s.clone()],
                    (ConfigValue::List(items), true) => items.clone(),
                    // Lists of ports and the like are kept as one comma-joined value.
                    (ConfigValue::List(items), false) => vec![items.join(",")],
                };
                // `key: ""` is a mistake, not "use the default" (`key:` with nothing is unset).
                if values.is_empty() || values.iter().any(|v| v.trim().is_empty()) {
                    return Err(SettingsError(format!(
                        "{name} has an empty value; give a value or remove the key"
                    )));
                }
                return Ok(Some((self.resolved(&values, &name)?, Source::ConfigFile)));
            }
            let file_key = format!("{key}_file");
            if let Some(ConfigValue::Scalar(path)) = config.values.get(&file_key) {
                let name = format!("{file_key} (in {})", config.path.display());
                let given = value_file(path, name, format!("{file_key} ({path})"))?;
                return Ok(Some((given, Source::ConfigFile)));
            }
        }
        if let Some(profile) = self.profile
            && let Some(value) = profile.value(spec.id)
        {
            let given = Given {
                text: value.to_string(),
                name: format!("--profile {}", profile.name()),
                reference: None,
            };
            return Ok(Some((vec![given], Source::Profile)));
        }
        Ok(None)
    }

    /// The value of a single-valued setting, with where it came from; blank counts as unset.
    pub fn given(&self, id: &str) -> Result<Option<Given>, SettingsError> {
        Ok(self
            .raw(options::spec(id))?
            .and_then(|(mut v, _)| v.pop())
            .filter(|v| !v.text.trim().is_empty()))
    }

    pub fn string(&self, id: &str) -> Result<Option<String>, SettingsError> {
        Ok(self.given(id)?.map(|g| g.text))
    }

    /// Every value of a repeatable setting, with where each came from.
    pub fn given_list(&self, id: &str) -> Result<Vec<Given>, SettingsError> {
        Ok(self
            .raw(options::spec(id))?
            .map(|(v, _)| v)
            .unwrap_or_default())
    }

    /// Switches and boolean settings, the row's default when unset. Variables follow the
    /// spec's boolean rule (`1`, `true`, `yes`, `on` enable; anything else disables). A
    /// configuration file has real booleans, so a value there that is neither true nor false
    /// (`check_hardening: maybe`) is refused rather than quietly read as off.
    pub fn switch(&self, id: &str) -> Result<bool, SettingsError> {
        let spec = options::spec(id);
        Ok(match self.raw(spec)? {
            Some((values, Source::ConfigFile)) => {
                let given = values.last().expect("a value was found");
                boolean(&given.text).ok_or_else(|| {
                    SettingsError(format!(
                        "{} {} is not a boolean; write true or false",
                        given.name,
                        given.shown()
                    ))
                })?
            }
            Some((values, _)) => values.last().is_some_and(|v| truthy(&v.text)),
            None => spec.default.is_some_and(truthy),
        })
    }

    /// The value of a row read as its [`Type`] says (bounds included); `None`: unset.
    pub fn optional<T: FromText>(&self, id: &str) -> Result<Option<T>, SettingsError> {
        let ty = options::spec(id).ty();
        self.parsed(id, |t| T::from_text(ty, t))
    }

    /// Like `optional`, the row's default when unset.
    pub fn value<T: FromText>(&self, id: &str) -> Result<T, SettingsError> {
        let ty = options::spec(id).ty();
        self.parsed_or_default(id, |t| T::from_text(ty, t))
    }

    /// The value of a row read with `parse`; a refusal says what the row's type must be.
    pub fn parsed<T>(
        &self,
        id: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, SettingsError> {
        let spec = options::spec(id);
        let Some(given) = self.given(id)? else {
            return Ok(None);
        };
        let refusal = || {
            let (name, shown, what) = (&given.name, given.shown(), spec.ty().what());
            SettingsError(format!("{name} {shown} is not {what}{}", fix_hint(spec)))
        };
        parse(given.text.trim()).map(Some).ok_or_else(refusal)
    }

    /// Like `parsed`, the row's default (read with `parse` too) when unset.
    pub fn parsed_or_default<T>(
        &self,
        id: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, SettingsError> {
        if let Some(value) = self.parsed(id, &parse)? {
            return Ok(value);
        }
        let default = options::spec(id).default_value();
        Ok(default
            .and_then(parse)
            .unwrap_or_else(|| panic!("the default {default:?} of row {id:?} does not parse")))
    }

    /// The name of one of the row's choices, the row's default when unset.
    fn choice(&self, id: &str) -> Result<&'static str, SettingsError> {
        let choices = options::spec(id).choices;
        self.parsed_or_default(id, |t| choices.iter().find(|c| **c == t).copied())
    }

    /// The row's choice as one of `values`, which hold a value for each of the row's choices,
    /// in their order (the row names them once); `None`: unset.
    fn chosen<T: Copy + std::fmt::Debug>(
        &self,
        id: &str,
        values: &[T],
    ) -> Result<Option<T>, SettingsError> {
        let choices = options::spec(id).choices;
        assert_eq!(choices.len(), values.len(), "the choices of {id:?}");
        // Each variant is named as its choice, so a list out of the row's order fails every
        // test that reads the option instead of mapping one choice onto another.
        debug_assert!(
            choices
                .iter()
                .zip(values)
                .all(|(choice, value)| format!("{value:?}").eq_ignore_ascii_case(choice)),
            "the values of {id:?} follow the order of its choices"
        );
        self.parsed(id, |t| Some(values[choices.iter().position(|c| *c == t)?]))
    }

    /// The entries of comma-separated lists, every value's (`--ignore-hardening a,b`).
    fn comma_list(&self, id: &str) -> Result<Vec<String>, SettingsError> {
        self.entries(id, |entry| Some(entry.to_string()))
    }

    /// The entries of comma-separated lists, every value's, each read with `parse`; a refusal
    /// names the entry and what the row's type says it must be.
    fn entries<T>(
        &self,
        id: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Vec<T>, SettingsError> {
        let what = options::spec(id).ty().what();
        let mut entries = Vec::new();
        for given in self.given_list(id)? {
            for entry in given.text.split(',').map(str::trim) {
                if entry.is_empty() {
                    continue;
                }
                entries.push(parse(entry).ok_or_else(|| {
                    let refusal = format!("{} {entry:?} is not {what}", given.name);
                    SettingsError(given.scrub(&refusal))
                })?);
            }
        }
        Ok(entries)
    }
}

/// What to write instead, when the option has a fixed set of values; otherwise the message's
/// "is not <what>" already says it, and saying it twice helps nobody.
fn fix_hint(spec: &OptionSpec) -> String {
    if spec.choices.is_empty() {
        String::new()
    } else {
        format!("; use one of {}", spec.choices.join(", "))
    }
}

/// A Rust type a row's text is read into, within the bounds of the row's [`Type`].
pub trait FromText: Sized {
    fn from_text(ty: Type, text: &str) -> Option<Self>;
}

/// Seconds: fractions above 0 for `Type::Seconds`, whole ones for `Type::Number`.
impl FromText for Duration {
    fn from_text(ty: Type, text: &str) -> Option<Duration> {
        match ty {
            Type::Seconds { max } => {
                let value: f64 = text.parse().ok()?;
                (value.is_finite() && value > 0.0 && value <= max as f64)
                    .then(|| Duration::from_secs_f64(value))
            }
            _ => u64::from_text(ty, text).map(Duration::from_secs),
        }
    }
}

/// A number with fractions (`--backoff-factor 0.5`).
impl FromText for f64 {
    fn from_text(ty: Type, text: &str) -> Option<f64> {
        let Type::Number { min, max, .. } = ty else {
            return None;
        };
        let value: f64 = text.parse().ok()?;
        (value.is_finite() && (min as f64..=max as f64).contains(&value)).then_some(value)
    }
}

macro_rules! whole_numbers {
    ($($t:ty),*) => {$(
        impl FromText for $t {
            fn from_text(ty: Type, text: &str) -> Option<$t> {
                let (min, max) = match ty {
                    Type::Number { min, max, .. } => (min, max),
                    Type::Port { free } => (i64::from(!free), 65535),
                    _ => return None,
                };
                let value: i64 = text.parse().ok()?;
                (min..=max).contains(&value).then(|| value.try_into().ok())?
            }
        }
    )*};
}
whole_numbers!(u8, u16, u32, u64, usize, i64);

/// The entries of a repeatable setting given as one variable (or one scalar in the file):
/// headers are separated by `;`, waivers by newlines (a reason may hold `;` and `,`), anything
/// else by `,`.
fn split_list(value: &str, spec: &OptionSpec) -> Vec<String> {
    let separator = match spec.id {
        "webhook_header" => ';',
        "waive_until" => '\n',
        _ => ',',
    };
    value
        .split(separator)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn parse_ports(text: &str) -> Option<Vec<u16>> {
    let ports: Option<Vec<u16>> = text
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u16>().ok().filter(|p| *p > 0))
        .collect();
    ports.filter(|p| !p.is_empty())
}

impl Settings {
    /// What the assessment takes of the settings: the rules a verdict follows.
    pub fn assess_rules(&self) -> crate::assess::Rules<'_> {
        crate::assess::Rules {
            warning: self.warning,
            critical: self.critical,
            check_hardening: self.check_hardening,
            release_track: self.release_track,
            eol_warning: self.eol_warning,
            waiver_warning: self.waiver_warning,
            extra_checks_rating: self.extra_checks_rating,
            insecure: self.scan.insecure,
            use_release_schedule: self.use_release_schedule,
            update_source: self.scan.update_source.clone(),
            update_warning: self.update_warning,
            tls_min_days: self.tls_min_days,
            policy: self.policy.as_ref(),
            waivers: &self.waivers,
            // Loaded by the run that scans (`Scanner::with_baseline`), not with the settings.
            baseline: None,
            warn_on_new: self.warn_on_new,
        }
    }

    /// What the renderers take of the settings: the thresholds and the debug switch.
    pub fn output_context(&self, now: crate::clock::Now) -> crate::output::Context {
        crate::output::Context {
            thresholds: crate::output::Thresholds {
                warning: self.warning,
                critical: self.critical,
                update_warning: self.update_warning,
                eol_warning: self.eol_warning,
                tls_min_days: self.tls_min_days,
                waiver_warning: self.waiver_warning,
            },
            debug: self.debug,
            now,
        }
    }

    /// The scanner of these settings: their scan configuration and assessment rules. `Err` is
    /// an operator mistake found before any traffic (a CA file that holds no certificate).
    pub fn scanner(
        &self,
        now: crate::clock::Now,
        budget: crate::budget::Budget,
    ) -> Result<crate::scanner::Scanner<'_>, String> {
        crate::scanner::Scanner::new(self.scan.clone(), self.assess_rules(), now, budget)
    }

    /// Builds the settings of a scan from the command line, the environment and the
    /// configuration file it names or finds.
    pub fn resolve(
        line: &cli::CommandLine,
        env: &dyn Environment,
    ) -> Result<Settings, SettingsError> {
        Settings::resolve_for(line, env, Component::Plugin)
    }

    /// Like `resolve`, for the component that reads them (which may need no targets).
    pub fn resolve_for(
        line: &cli::CommandLine,
        env: &dyn Environment,
        component: Component,
    ) -> Result<Settings, SettingsError> {
        let no_profile = Layers::new(component, line, env, None);
        let explicit_config = no_profile.given("config")?;
        let config = config_file::locate(explicit_config.as_ref().map(|g| g.text.as_str()), env)
            .and_then(|path| path.map(|path| config_file::load(&path)).transpose())
            .map_err(|e| match &explicit_config {
                Some(given) => SettingsError(given.scrub(&e)),
                None => SettingsError(e),
            })?;
        // The configuration file's own reference is a secret of this run as well.
        Settings::with_config(
            line,
            env,
            config.as_ref(),
            no_profile.read.take(),
            component,
        )
    }

    /// The settings from a command line, an environment and a configuration file already
    /// read; `earlier` are the values read to find the file.
    fn with_config(
        line: &cli::CommandLine,
        env: &dyn Environment,
        config: Option<&ConfigFile>,
        earlier: Vec<(&'static str, Given)>,
        component: Component,
    ) -> Result<Settings, SettingsError> {
        let mut layers = Layers::new(component, line, env, config);
        layers.read.borrow_mut().extend(earlier);
        layers.profile = layers.parsed("profile", Profile::parse)?;
        Settings::read(&layers, config.map(|c| c.path.clone()))
    }
}

/// What a scan reads of the settings besides the assessment's rules, read in the order of the
/// manual.
fn scan_config(l: &Layers) -> Result<crate::scanner::Config, SettingsError> {
    let mut config = crate::scanner::Config {
        concurrency: l.value("concurrency")?,
        insecure: l.switch("insecure")? || !l.switch("verify_tls")?,
        ca_file: l.operator_file("ca_file", crate::files::Kind::CaBundle)?,
        proxy: proxy(l)?,
        timeout: l.value("timeout")?,
        retries: l.value("retries")?,
        backoff_factor: l.value("backoff_factor")?,
        update_source: update_source(l)?,
        target_port: l.optional("target_port")?,
        debug_ports: if !l.switch("no_debug_ports")? && l.switch("check_debug_ports")? {
            l.parsed_or_default("debug_ports", parse_ports)?
        } else {
            Vec::new()
        },
        debug_ports_given: l.given("debug_ports")?.is_some(),
        debug_port_timeout: l.value("debug_port_timeout")?,
        release_token: None,
        releases_url: l.string("releases_url")?,
        feed_cache_ttl: l.value("feed_cache_ttl")?,
        state_dir: l
            .string("state_dir")?
            .map(PathBuf::from)
            .or_else(|| state_dir::default_state_dir(l.env)),
        release_schedule: l
            .operator_file("release_schedule", crate::files::Kind::ReleaseSchedule)?,
        vulnerability_db: l
            .named_operator_files("vulnerability_db", crate::files::Kind::AdvisoryFile)?
            .into_iter()
            .map(|file| file.path)
            .collect(),
        vulnerability_feed: l.string("vulnerability_feed")?,
        extra_checks: !l.switch("no_extra_checks")?,
        all_addresses: l.switch("all_addresses")? || l.switch("check_all_addresses")?,
        ipv6_enabled: l.switch("ipv6_enabled")?,
        dns_server: l.parsed("dns_server", |t| {
            t.parse::<std::net::SocketAddr>()
                .ok()
                .or_else(|| t.parse::<std::net::IpAddr>().ok().map(|ip| (ip, 53).into()))
        })?,
        login_throttling: l.switch("login_throttling")? || l.switch("check_login_throttling")?,
    };
    // Read only where the feed is asked: a run that never asks it needs no credential.
    if matches!(
        config.update_source,
        UpdateSource::Auto | UpdateSource::Feed
    ) {
        config.release_token = l.string("release_token")?;
    }
    Ok(config)
}

/// `--critical`, which must not exceed `--warning`.
fn critical_within_warning(l: &Layers, warning: u8) -> Result<u8, SettingsError> {
    let critical: u8 = l.value("critical")?;
    if critical <= warning {
        return Ok(critical);
    }
    // Each as it was given; one read from a reference by its reference.
    let named = |id: &str, value: u8| -> Result<String, SettingsError> {
        Ok(match l.given(id)? {
            Some(given) => match &given.reference {
                Some(reference) => format!("{} (from {reference})", given.name),
                None => format!("{} {value}", given.name),
            },
            None => format!("--{id} {value} (the default)"),
        })
    };
    Err(SettingsError(format!(
        "{} exceeds {}; both are ratings 0-5 and critical must be at or below warning",
        named("critical", critical)?,
        named("warning", warning)?,
    )))
}

/// `--proxy`, checked here so that a wrong one is refused before any traffic.
fn proxy(l: &Layers) -> Result<Option<String>, SettingsError> {
    let proxy = l.given("proxy")?;
    if let Some(given) = &proxy {
        let shown = match &given.reference {
            Some(_) => given.shown(),
            None => format!("{:?}", crate::net::proxy::redacted(given.text.trim())),
        };
        crate::net::proxy::Proxy::parse_shown(given.text.trim(), &shown)?;
    }
    Ok(proxy.map(|g| g.text))
}

/// `--update-source`, with `--no-update-check` and the version `pinned` needs.
fn update_source(l: &Layers) -> Result<UpdateSource, SettingsError> {
    let latest_version = l.parsed("latest_version", crate::knowledge::parse_version)?;
    let update_source = if l.switch("no_update_check")? {
        UpdateSource::Off
    } else {
        match l.choice("update_source")? {
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
    Ok(update_source)
}

/// The waivers of `--ignore-hardening` and `--waive-until`.
fn waivers(l: &Layers) -> Result<Vec<crate::assess::waivers::Waiver>, SettingsError> {
    use crate::assess::waivers::Waiver;
    // A waiver names where it was given: the flag, or the variable (COS_IGNORE_HARDENING,
    // COS_WAIVE_UNTIL) that a CI step sets.
    let source = |id: &str, flag: &'static str| -> Result<&'static str, SettingsError> {
        let spec = options::spec(id);
        Ok(match l.raw(spec)? {
            Some((_, Source::Variable)) => spec.env[0],
            _ => flag,
        })
    };
    let ignore_source = source("ignore_hardening", "--ignore-hardening")?;
    let until_source = source("waive_until", "--waive-until")?;
    let mut waivers: Vec<Waiver> = l
        .comma_list("ignore_hardening")?
        .iter()
        .map(|p| Waiver::permanent(p, ignore_source))
        .collect();
    for given in l.given_list("waive_until")? {
        let mut waiver = Waiver::parse_until(&given.text).map_err(|e| {
            // Named the way it was given: `COS_WAIVE_UNTIL expiry ...`.
            let e = match e.strip_prefix("--waive-until") {
                Some(rest) => format!("{}{rest}", given.name),
                None => e,
            };
            SettingsError(given.scrub(&e))
        })?;
        waiver.source = until_source;
        waivers.push(waiver);
    }
    Ok(waivers)
}

/// `--diff-format`, which needs `--baseline`.
fn diff_format(l: &Layers) -> Result<Option<DiffFormat>, SettingsError> {
    use DiffFormat::{ChatBlocks, Markdown, Text};
    let diff_format = l.chosen("diff_format", &[Text, Markdown, ChatBlocks])?;
    if diff_format.is_some() && l.string("baseline")?.is_none() {
        return Err(SettingsError(
            "--diff-format reports the changes since a baseline; add --baseline FILE (the \
             first run records it) or remove --diff-format"
                .into(),
        ));
    }
    Ok(diff_format)
}

/// A warning for each secret written in clear on the command line (`--token VALUE`,
/// `--mcp-token VALUE`, a password in `--store redis://:pw@host`), which every user of the host
/// reads in `ps` and which shell histories keep. It is no refusal, since the operator may have
/// no other way at hand, but it names the form that keeps the value out of sight.
fn secrets_in_clear_on_the_command_line(l: &Layers) -> Result<Vec<String>, SettingsError> {
    let mut warnings = Vec::new();
    for id in ["token", "mcp_token", "store"] {
        let spec = options::spec(id);
        let Some((values, Source::Flag)) = l.raw(spec)? else {
            continue;
        };
        let in_clear = values.iter().any(|given| {
            given.reference.is_none() && (id != "store" || url_has_password(&given.text))
        });
        if in_clear {
            let what = if id == "store" {
                "the store's password"
            } else {
                "the token"
            };
            warnings.push(format!(
                "warning: {} on the command line shows {what} to every user of this host (ps, \
                 /proc) and to shell histories; give it as a reference instead: \
                 secret://NAME (a systemd credential), file:///PATH or env://NAME",
                spec.display_name()
            ));
        }
    }
    Ok(warnings)
}

/// Whether a store address carries a password: `redis://user:pw@host` or
/// `redis+unix:///socket?pass=pw`.
fn url_has_password(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let in_userinfo = authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.split_once(':').is_some_and(|(_, p)| !p.is_empty()));
    let in_query = rest.split_once('?').is_some_and(|(_, query)| {
        query.split(['&', '#']).any(|pair| {
            pair.split_once('=').is_some_and(|(name, value)| {
                !value.is_empty()
                    && (name.eq_ignore_ascii_case("pass") || name.eq_ignore_ascii_case("password"))
            })
        })
    });
    in_userinfo || in_query
}

/// A server's address: `listen_id` (`ADDRESS[:PORT]`, a port written there wins) and
/// `port_id` (0: a free port, named on stderr at start).
fn listen_address(
    l: &Layers,
    listen_id: &str,
    port_id: &str,
) -> Result<std::net::SocketAddr, SettingsError> {
    let (ip, port_in_listen) = l.parsed_or_default(listen_id, |t| {
        if let Ok(socket) = t.parse::<std::net::SocketAddr>() {
            return Some((socket.ip(), Some(socket.port())));
        }
        ip_address(t).map(|ip| (ip, None))
    })?;
    let port = l.value(port_id)?;
    Ok(std::net::SocketAddr::new(
        ip,
        port_in_listen.unwrap_or(port),
    ))
}

/// An IP address, IPv6 with or without brackets.
fn ip_address(text: &str) -> Option<std::net::IpAddr> {
    text.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Checks settings the way a run reads them: `file` as a configuration file holding exactly
/// these keys, `flags` as a command line holding exactly these flags (by row id), through the
/// same layers and parsers as `Settings::resolve`, so a value is refused with the very message a
/// run would print (less the file's name). Used by the configuration wizard on every answer.
///
/// The table's own variables (`COS_*` and their `_FILE` forms) are hidden, so a variable of
/// this shell cannot stand in for a value being checked; everything else of `env` is there
/// for secret references (`env://NAME`, `CREDENTIALS_DIRECTORY`, `COS_SECRETS_DIR`).
pub fn validate(
    file: &std::collections::BTreeMap<String, ConfigValue>,
    flags: &[(&str, String)],
    env: &dyn Environment,
    component: Component,
) -> Result<Settings, String> {
    /// How the checked values are named in messages, taken out again below.
    const ORIGIN: &str = "<answers>";
    struct Hidden<'a>(&'a dyn Environment);
    impl Environment for Hidden<'_> {
        fn var(&self, name: &str) -> Option<String> {
            let row = name.strip_suffix("_FILE").unwrap_or(name);
            if options::OPTIONS.iter().any(|o| o.env.contains(&row)) {
                return None;
            }
            self.0.var(name)
        }
    }
    let config = ConfigFile {
        path: PathBuf::from(ORIGIN),
        values: file.clone(),
    };
    let line = cli::CommandLine {
        values: flags
            .iter()
            .map(|(id, value)| (options::spec(id), value.clone()))
            .collect(),
    };
    Settings::with_config(&line, &Hidden(env), Some(&config), Vec::new(), component)
        .map_err(|e| e.0.replace(&format!(" (in {ORIGIN})"), ""))
}

/// The targets: every `-H` adds its list, a target named twice is scanned once (it would
/// otherwise be scanned twice and collide in the performance data).
fn targets(l: &Layers) -> Result<Vec<Target>, SettingsError> {
    let mut targets: Vec<Target> = Vec::new();
    for given in l.given_list("host")? {
        // A secret read as a host name would be sent to DNS servers: targets are written
        // literally.
        if let Some(reference) = &given.reference {
            return Err(SettingsError(format!(
                "{} is given as the reference {reference}; targets are not read from secret \
                 references (a target goes to DNS): write the host itself",
                given.name
            )));
        }
        if given.text.trim().is_empty() {
            continue;
        }
        for target in target::parse_list(&given.text).map_err(|e| SettingsError(e.to_string()))? {
            let same = |t: &Target| {
                t.display_name() == target.display_name()
                    && t.scheme == target.scheme
                    && t.base_path == target.base_path
            };
            if !targets.iter().any(same) {
                targets.push(target);
            }
        }
    }
    if targets.is_empty() {
        return Err(SettingsError(
            "no target given; pass -H/--host (or set COS_HOST)".to_string(),
        ));
    }
    Ok(targets)
}

fn webhook_settings(
    l: &Layers,
    retries: u32,
    backoff_factor: f64,
    proxy: Option<String>,
) -> Result<Option<crate::notify::WebhookSettings>, SettingsError> {
    use crate::notify::{BodyFormat, NotifyOn, WebhookSettings};
    let Some(url) = l.given("webhook_url")? else {
        return Ok(None);
    };
    let named = crate::notify::url_named(url.reference.as_deref());
    let lower = url.text.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(SettingsError(format!(
            "{named} is not an http(s) address; give the receiver's URL"
        )));
    }
    use BodyFormat::{ChatBlocks, ChatEmbed, Generic, PushServer, PushTopic};
    use NotifyOn::{Always, Critical, Unknown, Warning};
    let on = l.chosen("webhook_on", &[Critical, Warning, Unknown, Always])?;
    let formats = [Generic, ChatBlocks, ChatEmbed, PushTopic, PushServer];
    let format = l.chosen("webhook_format", &formats)?;
    let mut headers = Vec::new();
    for (n, entry) in l.given_list("webhook_header")?.iter().enumerate() {
        // Entries are named by position, never quoted: a header carries credentials.
        let (name, value) = entry
            .text
            .split_once(':')
            .filter(|(n, _)| !n.trim().is_empty() && !n.contains(char::is_whitespace))
            .ok_or_else(|| {
                let from = entry
                    .reference
                    .as_ref()
                    .map(|r| format!(" (from {r})"))
                    .unwrap_or_default();
                SettingsError(format!(
                    "--webhook-header entry {}{from} must be 'Name: value', e.g. \
                     'Authorization: Bearer xyz'",
                    n + 1
                ))
            })?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let settings = WebhookSettings {
        url: url.text,
        url_reference: url.reference,
        on: on.unwrap_or(Critical),
        format: format.unwrap_or(Generic),
        headers,
        timeout: l.value("webhook_timeout")?,
        allow_private: l.switch("allow_private_webhooks")?,
        retries,
        backoff_factor,
        proxy,
    };
    settings.validate()?;
    Ok(Some(settings))
}

/// The exporter runs when its port is set (flag, variable or key). Its address and interval
/// are read in every run, so a wrong value is refused wherever it stands; a file shared with
/// single runs may hold them. On the command line they can only mean the exporter, so there
/// they need the port, and the flags of single runs are refused beside it.
fn exporter_settings(
    l: &Layers,
    format: Format,
) -> Result<Option<ExporterSettings>, SettingsError> {
    let address = l.parsed_or_default("prometheus_listen_addr", ip_address)?;
    let scrape_interval = l.value("scrape_interval")?;
    let port = l.optional("prometheus_listen_port")?;
    let given = |id: &str| !l.cli.all(id).is_empty();
    let Some(port) = port else {
        for id in ["prometheus_listen_addr", "scrape_interval"] {
            if given(id) {
                let flag = options::spec(id).display_name();
                return Err(SettingsError(format!(
                    "{flag} configures the metrics exporter, which only --prometheus-listen-port \
                     starts; add --prometheus-listen-port 9102 or remove {flag}"
                )));
            }
        }
        return Ok(None);
    };
    for id in ["baseline", "warn_on_new", "verify_remediation"] {
        if given(id) {
            return Err(SettingsError(format!(
                "{} belongs to single runs, not to the metrics exporter \
                 (--prometheus-listen-port); remove one of them",
                options::spec(id).display_name()
            )));
        }
    }
    if given("format") && format != Format::Metrics {
        return Err(SettingsError(
            "the metrics exporter (--prometheus-listen-port) serves the metrics format on \
             /metrics; remove --format"
                .to_string(),
        ));
    }
    Ok(Some(ExporterSettings {
        listen: std::net::SocketAddr::new(address, port),
        scrape_interval,
    }))
}

#[cfg(test)]
mod tests;
