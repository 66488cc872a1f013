//! Settings: every option once (the table in `options`), layered
//! flag > `COS_*` variable > configuration file > profile > default, with secret references
//! resolved here and nowhere else.

pub mod cli;
pub mod config_file;
pub mod manual;
mod operator_files;
pub use operator_files::NamedFile;
use operator_files::named_file;
pub mod options;
/// The secret guard lives at the bottom (every layer's text passes it); named here too.
pub use crate::redact;
pub mod secrets;
pub mod start_rules;
pub mod state_dir;

mod in_clear;
mod layers;
mod listeners;
mod scan;
mod webhook;

use in_clear::*;
pub use layers::*;
use listeners::*;
pub use listeners::{ExporterSettings, parse_cidr};
use scan::*;
use webhook::*;

use crate::knowledge::Track;
use crate::knowledge::lifecycle::TrackChoice;
use crate::target::{self, Target};
use config_file::{ConfigFile, ConfigValue};
use options::{Id, Kind, OptionSpec, Type};
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

/// The profiles' names, `--profile`'s choices.
pub const PROFILE_NAMES: [&str; PROFILES.len()] = {
    let mut names = [""; PROFILES.len()];
    let mut at = 0;
    while at < PROFILES.len() {
        names[at] = PROFILES[at].0;
        at += 1;
    }
    names
};

/// The rows a profile sets.
const PROFILE_ROWS: [Id; 5] = [
    Id::warning,
    Id::critical,
    Id::check_hardening,
    Id::update_warning,
    Id::eol_warning,
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
    pub(crate) fn value(self, id: Id) -> Option<&'static str> {
        let row = PROFILE_ROWS.iter().position(|r| *r == id)?;
        Some(self.1[row])
    }
}

pub use crate::knowledge::update::UpdateSource;

/// Which layer a value came from: a file's booleans are strict, a flag in clear is a warning,
/// a waiver names its variable. In order of strength: the first wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Flag,
    Variable,
    ConfigFile,
    Profile,
}

/// Declares a struct of settings together with how each field is read, in the order the
/// fields are read (so of several wrong values the first one is named first, see
/// `Layers::with_every_refusal`): a field is written once.
/// `= value` (or any other reader of `Layers` taking an id) reads the row named as the field;
/// `= { .. }` is the reading itself and may use the fields and `let` values read before it.
/// A `let` line reads a value at its place in the order that is no field of its own.
macro_rules! settings_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident $(<$own:ident: $bound:ident = $default:ty>)?
            read from $l:ident $(, $arg:ident: $arg_type:ty)* {
            $(
                $(let $value:ident = $reading:expr;)*
                $(#[$field_meta:meta])*
                pub $field:ident: $type:ty = $read:tt,
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name $(<$own: $bound = $default>)? {
            $($(#[$field_meta])* pub $field: $type,)*
        }

        impl $(<$own: $bound>)? $name $(<$own>)? {
            fn read($l: &Layers $(, $arg: $arg_type)*) -> Result<Self, SettingsError> {
                $(
                    $(let $value = $reading;)*
                    let $field: $type = settings_struct!(@read $l $field $read);
                )*
                Ok($name { $($field),* })
            }
        }
    };
    (@read $l:ident $field:ident { $($read:tt)* }) => {{ $($read)* }};
    (@read $l:ident $field:ident $reader:ident) => { $l.$reader(Id::$field)? };
}

// After the macro, which it uses.
mod components;
pub use components::*;

settings_struct! {
    /// Everything a run needs, typed and validated: what every component shares, and `own`,
    /// what the component reads of its own (`components`; `()` for the plugin).
    #[derive(Clone, Debug)]
    pub struct Settings<Own: ComponentSettings = ()> read from l, config_file: Option<PathBuf> {
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
        pub format: Format = { l.chosen(Id::format)?.unwrap_or(Format::Monitoring) },
        // Read in the order of the manual, so of several wrong values the first is named first.
        /// How to reach the instances, what to probe and where knowledge comes from.
        pub scan: crate::scanner::Config = { scan_config(l)? },
        /// The whole run's time limit (`--time-budget`).
        pub time_budget: Duration = value,
        pub release_track: TrackChoice = {
            l.parsed_or_default(Id::release_track, |t| match t {
                crate::family::AUTO_TRACK => Some(TrackChoice::Auto),
                other => Track::parse(other).map(TrackChoice::Fixed),
            })?
        },
        pub eol_warning: Option<i64> = optional,
        pub tls_min_days: i64 = value,
        /// Waivers: permanent (`--ignore-hardening`) and time-limited (`--waive-until`).
        pub waivers: Vec<crate::assess::waivers::Waiver> = { waivers(l)? },
        pub now: Option<jiff::Timestamp> = { l.parsed(Id::now, |t| t.parse().ok())? },
        pub webhook: Option<crate::notify::WebhookSettings> = {
            webhook_settings(l, scan.retries, scan.backoff_factor, scan.proxy.clone())?
        },
        /// The metrics exporter (`--prometheus-listen-port`); `None`: the plugin scans once.
        pub exporter: Option<ExporterSettings> = { exporter_settings(l, format)? },
        /// `--diff-format`: the change report instead of the normal output (needs `--baseline`).
        pub diff_format: Option<DiffFormat> = { diff_format(l)? },
        pub debug: bool = switch,
        pub check_hardening: bool = switch,
        pub update_warning: bool = switch,
        /// `--self-update-check`: look for a newer release of the plugin, at most once a day.
        pub self_update_check: bool = switch,
        /// `--self-update-url`: the plugin's own release feed (`self_update`).
        pub self_update_url: String = {
            l.parsed_or_default(Id::self_update_url, |t| {
                let lower = t.to_ascii_lowercase();
                (lower.starts_with("https://") || lower.starts_with("http://")).then(|| t.into())
            })?
        },
        pub use_release_schedule: bool = switch,
        pub extra_checks_rating: bool = switch,
        /// Names pinned to addresses (`scanner.resolve`).
        pub resolve: std::collections::HashMap<String, Vec<std::net::IpAddr>> = {
            l.parsed(Id::resolve, crate::net::resolve::parse_pins)?.unwrap_or_default()
        },
        pub waiver_warning: Option<i64> = optional,
        pub policy: Option<crate::assess::policy::Policy> = {
            l.given(Id::policy)?
                .map(|given| {
                    crate::assess::policy::Policy::load(Path::new(&given.text))
                        .map_err(|e| SettingsError(given.scrub(&e)))
                })
                .transpose()?
        },
        pub baseline: Option<PathBuf> = {
            l.operator_file(Id::baseline, crate::files::Kind::Baseline)?
        },
        pub warn_on_new: bool = switch,
        /// `--verify-remediation`: finding ids, comma-separated lists flattened.
        pub verify_remediation: Vec<String> = comma_list,
        pub config_file: Option<PathBuf> = { config_file },
        /// What this component reads of its own (a server's address, the files it reads).
        pub own: Own = { Own::read(l)? },
        /// What the operator should change though the run goes on (a secret written in clear on
        /// the command line); a server prints each once on stderr when it starts.
        pub warnings: Vec<String> = { secrets_in_clear_on_the_command_line(l)? },
        /// Values never to print (`redact`): what came from references, and tokens. Last:
        /// every value is read.
        pub secrets: Vec<redact::Secret> = { l.secrets() },
    }
}

pub use options::Component;

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

impl SettingsError {
    /// Several refusals (at least one) as one line, the first met first.
    fn together(all: Vec<String>) -> SettingsError {
        match all.len() {
            1 => SettingsError(all.concat()),
            n => SettingsError(format!("{n} settings are wrong: {}", all.join("; "))),
        }
    }
}

impl From<String> for SettingsError {
    fn from(s: String) -> Self {
        SettingsError(s)
    }
}

/// A Rust type a row's text is read into, within the bounds of the row's [`Type`].
pub trait FromText: Sized {
    fn from_text(ty: Type, text: &str) -> Option<Self>;
}

impl Settings {
    /// Builds the plugin's settings from the command line, the environment and the
    /// configuration file it names or finds.
    pub fn resolve(line: &cli::CommandLine, env: &dyn Environment) -> Result<Self, SettingsError> {
        Settings::resolve_for(line, env, Component::Plugin)
    }
}

impl<Own: ComponentSettings> Settings<Own> {
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

    /// Like `resolve`, for the component that reads them (which may need no targets); `Own`
    /// is what that component reads of its own.
    pub fn resolve_for(
        line: &cli::CommandLine,
        env: &dyn Environment,
        component: Component,
    ) -> Result<Self, SettingsError> {
        debug_assert!(
            Own::COMPONENTS.contains(&component),
            "{component:?} reads other settings of its own"
        );
        let no_profile = Layers::new(component, line, env, None);
        let explicit_config = no_profile.given(Id::config)?;
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
            Check::ToStart,
        )
    }

    /// Whether these settings, each value already right by its own type, meet together what
    /// their component needs to start (`start_rules`: a server's tokens): every rule broken is
    /// named at once. `Settings::resolve_for` applies it and names the references values came
    /// from; this form is for values that came from no reference (the wizard's answers).
    pub fn ready_to_start(&self) -> Result<(), SettingsError> {
        let refusals = self.own.start_refusals();
        match refusals.is_empty() {
            true => Ok(()),
            false => Err(SettingsError::together(
                refusals.into_iter().map(|(_, r)| r).collect(),
            )),
        }
    }

    /// The settings from a command line, an environment and a configuration file already
    /// read; `earlier` are the values read to find the file.
    fn with_config(
        line: &cli::CommandLine,
        env: &dyn Environment,
        config: Option<&ConfigFile>,
        earlier: Vec<(&'static str, Given)>,
        component: Component,
        check: Check,
    ) -> Result<Self, SettingsError> {
        let mut layers = Layers::new(component, line, env, config);
        layers.read.borrow_mut().extend(earlier);
        layers.profile = layers
            .parsed(Id::profile, Profile::parse)
            .map_err(|first| layers.with_every_refusal(first))?;
        let settings = Self::read(&layers, config.map(|c| c.path.clone()))
            .map_err(|first| layers.with_every_refusal(first))?;
        if check == Check::ToStart {
            let refusals = settings.own.start_refusals();
            if !refusals.is_empty() {
                let named = |(id, refusal): (Id, String)| match layers.already_read(id) {
                    Some(
                        given @ Given {
                            reference: Some(_), ..
                        },
                    ) => {
                        format!("{} {}: {refusal}", given.name, given.shown())
                    }
                    _ => refusal,
                };
                return Err(SettingsError::together(
                    refusals.into_iter().map(named).collect(),
                ));
            }
        }
        Ok(settings)
    }
}

/// How far `Settings::with_config` checks the settings it reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Each value by its own type: what the wizard asks answer by answer.
    EachValue,
    /// Each value, then what the component needs of them together to start (`start_rules`).
    ToStart,
}

/// Checks settings the way a run reads them, each value by itself (not `Settings::ready_to_start`,
/// which a wizard asks once every answer it needs is in): `file` as a configuration file holding exactly
/// these keys, `flags` as a command line holding exactly these flags (by row id), through the
/// same layers and parsers as `Settings::resolve`, so a value is refused with the very message a
/// run would print (less the file's name). Used by the configuration wizard on every answer.
///
/// The table's own variables (`COS_*` and their `_FILE` forms) are hidden, so a variable of
/// this shell cannot stand in for a value being checked; everything else of `env` is there
/// for secret references (`env://NAME`, `CREDENTIALS_DIRECTORY`, `COS_SECRETS_DIR`).
pub fn validate<Own: ComponentSettings>(
    file: &std::collections::BTreeMap<String, ConfigValue>,
    flags: &[(Id, String)],
    env: &dyn Environment,
    component: Component,
) -> Result<Settings<Own>, String> {
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
        lines: Default::default(),
    };
    let line = cli::CommandLine {
        values: flags
            .iter()
            .map(|(id, value)| (options::spec(*id), value.clone()))
            .collect(),
    };
    let check = Check::EachValue;
    Settings::with_config(
        &line,
        &Hidden(env),
        Some(&config),
        Vec::new(),
        component,
        check,
    )
    .map_err(|e| e.0.replace(&format!(" (in {ORIGIN})"), ""))
}

#[cfg(test)]
mod tests;
