//! Where a value comes from (flag > `COS_*` variable > configuration file > profile >
//! default) and how its text becomes a typed value.

use super::*;
use crate::vocabulary::Vocabulary;

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
pub(super) fn closing_quote(text: &str) -> Option<usize> {
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
pub(super) fn boolean(text: &str) -> Option<bool> {
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
    /// Every row asked for, given or not: a row no reading asks for is a row without a field
    /// (`every_row_is_read_by_a_field`).
    pub asked: std::cell::RefCell<std::collections::BTreeSet<Id>>,
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
            asked: Default::default(),
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
    pub(super) fn resolved(
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

    pub(super) fn raw_unrecorded(
        &self,
        spec: &OptionSpec,
    ) -> Result<Option<(Vec<Given>, Source)>, SettingsError> {
        self.asked.borrow_mut().insert(spec.option);
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
        let flags = self.cli.all(spec.option);
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
            let name = config.name_of(key);
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
                let name = config.name_of(&file_key);
                let given = value_file(path, name, format!("{file_key} ({path})"))?;
                return Ok(Some((given, Source::ConfigFile)));
            }
        }
        if let Some(profile) = self.profile
            && let Some(value) = profile.value(spec.option)
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
    /// The value of row `id` as this reading met it, without reading it again (a secret
    /// reference is resolved once).
    pub fn already_read(&self, id: Id) -> Option<Given> {
        let row = options::spec(id).id;
        let read = self.read.borrow();
        read.iter()
            .rev()
            .find(|(r, _)| *r == row)
            .map(|(_, given)| given.clone())
    }

    pub fn given(&self, id: Id) -> Result<Option<Given>, SettingsError> {
        Ok(self
            .raw(options::spec(id))?
            .and_then(|(mut v, _)| v.pop())
            .filter(|v| !v.text.trim().is_empty()))
    }

    pub fn string(&self, id: Id) -> Result<Option<String>, SettingsError> {
        Ok(self.given(id)?.map(|g| g.text))
    }

    /// Every value of a repeatable setting, with where each came from.
    pub fn given_list(&self, id: Id) -> Result<Vec<Given>, SettingsError> {
        Ok(self
            .raw(options::spec(id))?
            .map(|(v, _)| v)
            .unwrap_or_default())
    }

    /// Switches and boolean settings, the row's default when unset. Variables follow the
    /// spec's boolean rule (`1`, `true`, `yes`, `on` enable; anything else disables). A
    /// configuration file has real booleans, so a value there that is neither true nor false
    /// (`check_hardening: maybe`) is refused rather than quietly read as off.
    pub fn switch(&self, id: Id) -> Result<bool, SettingsError> {
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
    pub fn optional<T: FromText>(&self, id: Id) -> Result<Option<T>, SettingsError> {
        let ty = options::spec(id).ty();
        self.parsed(id, |t| T::from_text(ty, t))
    }

    /// Like `optional`, the row's default when unset.
    pub fn value<T: FromText>(&self, id: Id) -> Result<T, SettingsError> {
        let ty = options::spec(id).ty();
        self.parsed_or_default(id, |t| T::from_text(ty, t))
    }

    /// The value of a row read with `parse`; a refusal says what the row's type must be.
    pub fn parsed<T>(
        &self,
        id: Id,
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
        id: Id,
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

    /// The row's choice as a value of its vocabulary, whose names are the row's choices;
    /// `None`: unset.
    pub(super) fn chosen<T: Vocabulary>(&self, id: Id) -> Result<Option<T>, SettingsError> {
        let choices = options::spec(id).choices;
        assert_eq!(
            choices,
            T::NAMES,
            "the row {id:?} offers its vocabulary's names"
        );
        self.parsed(id, T::from_name)
    }

    /// A refusal together with every other value the rows' types alone refuse, so that an
    /// operator with several wrong values learns of them all in one run: `3 settings are
    /// wrong: A; B; C`, the first as the reading met it, then the others in manual order.
    /// Only a run that already fails looks further, so a valid configuration reads as before.
    pub(super) fn with_every_refusal(&self, first: SettingsError) -> SettingsError {
        let mut all = vec![first.0.clone()];
        for refusal in self.refusals() {
            if !all.contains(&refusal.0) {
                all.push(refusal.0);
            }
        }
        SettingsError::together(all)
    }

    /// Every value of a row this component reads that the row's type alone refuses (a
    /// number out of bounds, not a boolean, not one of the choices, ...).
    fn refusals(&self) -> Vec<SettingsError> {
        let refused = |spec: &OptionSpec| -> Result<(), SettingsError> {
            let id = spec.option;
            match spec.kind {
                Kind::Repeatable(..) => Ok(()),
                Kind::Switch | Kind::Value(_, Type::Bool) => self.switch(id).map(drop),
                Kind::Value(_, ty) => match ty {
                    Type::Number { .. } => self.optional::<f64>(id).map(drop),
                    Type::Seconds { .. } => self.optional::<Duration>(id).map(drop),
                    Type::Port { .. } => self.optional::<u16>(id).map(drop),
                    Type::Choice(_) => {
                        let chosen = |t: &str| spec.choices.contains(&t).then_some(());
                        self.parsed(id, chosen).map(drop)
                    }
                    Type::Text | Type::Checked(_) | Type::Bool => Ok(()),
                },
            }
        };
        options::OPTIONS
            .iter()
            .filter(|spec| spec.read_by(self.component))
            .filter_map(|spec| refused(spec).err())
            .collect()
    }

    /// The entries of comma-separated lists, every value's (`--ignore-hardening a,b`).
    pub(super) fn comma_list(&self, id: Id) -> Result<Vec<String>, SettingsError> {
        self.entries(id, |entry| Some(entry.to_string()))
    }

    /// The entries of comma-separated lists, every value's, each read with `parse`; a refusal
    /// names the entry and what the row's type says it must be.
    pub(super) fn entries<T>(
        &self,
        id: Id,
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
pub(super) fn fix_hint(spec: &OptionSpec) -> String {
    if spec.choices.is_empty() {
        String::new()
    } else {
        format!("; use one of {}", spec.choices.join(", "))
    }
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

/// The entries of a repeatable setting given as one variable (or one scalar in the file):
/// headers are separated by `;`, waivers by newlines (a reason may hold `;` and `,`), anything
/// else by `,`.
pub(super) fn split_list(value: &str, spec: &OptionSpec) -> Vec<String> {
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

pub(super) fn parse_ports(text: &str) -> Option<Vec<u16>> {
    let ports: Option<Vec<u16>> = text
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u16>().ok().filter(|p| *p > 0))
        .collect();
    ports.filter(|p| !p.is_empty())
}

whole_numbers!(u8, u16, u32, u64, usize, i64);
