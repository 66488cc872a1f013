//! The configuration wizard: `check-storage-security --configure` and
//! `check-storage-scanner configure`. Asks for the host, offers the optional groups on request,
//! and writes a JSON configuration file with mode 0600, atomically, after confirming before it
//! replaces one; at the end it prints the command line that uses the file.
//!
//! - **Checked as typed.** Every answer is checked by `settings::validate`: the answers so far
//!   are read as a configuration file holding them, with the very layers and parsers of a run,
//!   so an answer is refused with the message a run would end with, and a file the wizard
//!   writes is one a run reads. At a terminal a refused answer is asked again.
//! - **Scriptable.** Without a terminal the same questions read their answers line by line
//!   from the input; an empty line takes the default or leaves an optional group out. A refused
//!   answer, or the end of the input before the last question, stops the wizard with one line
//!   and nothing written (the programs exit 3).
//! - **Secrets as references.** The release-feed token, the webhook URL and headers, the
//!   service token and a proxy with credentials are asked for as a reference (`env://NAME`,
//!   `file:///path`, `secret://NAME`) and a value is refused without being repeated or kept.
//!   `exec://` is not written by the wizard: checking it would run the program at configure
//!   time; a file edited by hand may use it. A reference that cannot be resolved here (the
//!   variable or the credential exists only where the check runs) is kept with a note, and the
//!   answers after it are checked with a stand-in value of its kind.
//! - **Where.** `--config PATH` names the file. Otherwise the question offers `COS_CONFIG_FILE`
//!   when it names a `.json` file, else the file of the search list that runs of the same user
//!   find: `/etc/check-storage-security/config.json` as root (the system-wide place; the
//!   monitoring core's user reads it once it owns it), `~/.config/check-storage-security/.env.json`
//!   otherwise. The `./` entries of the search list depend on the working directory of the run,
//!   which a monitoring core does not share with the person configuring it. Directories the
//!   path needs are created when the path is accepted.

use crate::process::{Outcome, unknown};
use crate::settings::config_file::{self, ConfigValue};
use crate::settings::options::Id;
use crate::settings::options::{self, Kind, Program, Type};
use crate::settings::secrets::{self, Environment};
use crate::settings::{self, Component, Profile, ServeSettings, Settings, cli};
use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The reference schemes the wizard writes for a secret.
pub const SCHEMES: [&str; 3] = ["env://", "file://", "secret://"];

/// Where the answers come from and the questions go.
pub struct Io<'a> {
    pub input: &'a mut dyn BufRead,
    pub output: &'a mut dyn Write,
    /// A person answers at a terminal: a refused answer is asked again. Otherwise (a pipe, a
    /// file) a refused answer stops the wizard, as the end of the input does, so a script
    /// never has its later answers taken for other questions.
    pub terminal: bool,
}

/// What the wizard is run for.
#[derive(Clone, Debug)]
pub struct Request {
    pub program: Program,
    /// `--config PATH`: the file to write, not asked for.
    pub config: Option<String>,
    /// The process runs as root: the default file is the system-wide one.
    pub root: bool,
}

/// What the wizard wrote.
#[derive(Debug)]
pub struct Written {
    pub path: PathBuf,
    /// The command line that uses the file.
    pub command: String,
}

/// Why nothing was written: one line.
#[derive(Debug, PartialEq, Eq)]
pub struct Stopped(pub String);

/// `--configure` and `configure`: the wizard on the standard input and output. Only `--config`
/// may come with it; the rest is what the wizard asks for.
pub fn main(program: Program, line: &cli::CommandLine, env: &dyn Environment) -> Outcome {
    if let Some((spec, _)) = line
        .values
        .iter()
        .find(|(spec, _)| !matches!(spec.id, "config" | "configure"))
    {
        return unknown(format!(
            "{} cannot be given to the configuration wizard: it asks for the settings (only \
             --config PATH, the file to write, comes with it)",
            spec.display_name()
        ));
    }
    let request = Request {
        program,
        config: line.last(Id::config).map(String::from),
        root: is_root(),
    };
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    let mut input = stdin.lock();
    let mut output = std::io::stdout().lock();
    let io = Io {
        input: &mut input,
        output: &mut output,
        terminal,
    };
    Outcome::of(
        run(&request, io, env)
            .map(|_| String::new())
            .map_err(|Stopped(line)| line),
    )
}

/// Whether this process runs as root (Linux: the owner of `/proc/self`; the crate builds for
/// Unix only, as `atomic_file` does).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The whole conversation; the file is written only when every question was answered.
pub fn run(request: &Request, io: Io, env: &dyn Environment) -> Result<Written, Stopped> {
    let mut w = Wizard {
        io,
        env,
        program: request.program,
        file: BTreeMap::new(),
        flags: Vec::new(),
        stand_ins: Vec::new(),
    };
    w.say(&format!(
        "{} configuration wizard\n\
         Writes a JSON configuration file (mode 0600). Every answer is checked as it is given; \
         Enter takes\nthe value in [brackets] or leaves the setting out. Secrets are given as \
         references\n(env://NAME, file:///path, secret://NAME), never as values. The end of \
         the input (Ctrl-D)\nstops without writing anything.\n",
        request.program.name()
    ))?;
    let path = w.path(request)?;
    w.host()?;
    for group in GROUPS {
        if group.programs.contains(&w.program)
            && w.yes_no(&format!("Configure {}?", group.title), false)?
        {
            w.group(group.questions)?;
        }
    }
    w.write(&path)
}

/// An optional group of questions.
struct Group {
    title: &'static str,
    programs: &'static [Program],
    questions: &'static [Ask],
}

/// One question of a group, by its configuration key and prompt.
#[derive(Clone, Copy)]
enum Ask {
    /// A plain setting, the default a run takes shown.
    Setting(&'static str, &'static str),
    /// A boolean setting; `Some`: what Enter means when it is not the run's default.
    Switch(&'static str, &'static str, Option<bool>),
    /// A secret, as a reference; left empty, the rest of the group is left out (nothing to
    /// notify without a webhook URL).
    Secret(&'static str, &'static str),
    /// The entries of a list of secrets, asked until one is left empty.
    Secrets(&'static str, &'static str),
    /// A question with rules of its own.
    Own(fn(&mut Wizard) -> Result<(), Stopped>),
}

const BOTH: &[Program] = &[Program::Plugin, Program::Scanner];

const GROUPS: &[Group] = &[
    Group {
        title: "thresholds or a profile",
        programs: BOTH,
        questions: &[
            Ask::Setting("profile", "Profile: strict, ops or lenient (empty: none)"),
            Ask::Setting("warning", "WARNING at this rating (0-5) and below"),
            Ask::Setting("critical", "CRITICAL at this rating (0-5) and below"),
            Ask::Own(|w| w.eol_warning()),
            Ask::Switch(
                "update_warning",
                "A pending update turns OK into WARNING?",
                None,
            ),
        ],
    },
    Group {
        title: "the connection (time limits, retries, proxy, private CA)",
        programs: BOTH,
        questions: &[
            Ask::Setting("timeout", "Time limit of each request, in seconds"),
            Ask::Setting(
                "time_budget",
                "Time limit of the whole run, in seconds (below the monitoring core's check \
                 timeout)",
            ),
            Ask::Setting("retries", "Retries after a scan fails on a transient error"),
            Ask::Own(|w| w.proxy()),
            Ask::Own(|w| w.ca_file()),
        ],
    },
    Group {
        title: "hardening and what else is checked",
        programs: BOTH,
        questions: &[
            Ask::Switch(
                "check_hardening",
                "Evaluate hardening measures and security headers (a missing one turns OK into \
                 WARNING)?",
                Some(true),
            ),
            Ask::Switch(
                "scanner.check_all_addresses",
                "Repeat the checks against every address the name resolves to?",
                None,
            ),
            Ask::Switch(
                "scanner.check_login_throttling",
                "Send six failed sign-ins for an account that cannot exist to see whether they \
                 are throttled?",
                None,
            ),
        ],
    },
    Group {
        title: "a webhook notification",
        programs: &[Program::Plugin],
        questions: &[
            Ask::Secret(
                "webhook_url",
                "Webhook URL, as a reference (env://NAME, file:///path or secret://NAME; empty: \
                 no webhook)",
            ),
            Ask::Setting(
                "webhook_on",
                "Notify from this state: critical, warning, unknown or always",
            ),
            Ask::Setting(
                "webhook_format",
                "Body format: generic, chatblocks, chatembed, pushtopic or pushserver",
            ),
            Ask::Secrets(
                "webhook_headers",
                "Extra request header, as a reference to its 'Name: value' line (empty: no \
                 more)",
            ),
            Ask::Setting("webhook_timeout", "Time limit of a delivery, in seconds"),
            Ask::Switch(
                "allow_private_webhooks",
                "Permit private, loopback and link-local receivers, and delivery through the \
                 proxy?",
                None,
            ),
        ],
    },
    Group {
        title: "the release track and the update check",
        programs: BOTH,
        questions: &[
            Ask::Setting(
                "releases.mode",
                "Update source: auto, feed, bundled or off (pinned takes --latest-version on the \
                 command line)",
            ),
            Ask::Setting(
                "release_track",
                "Release track of the instance: auto, rolling, production or lts",
            ),
            Ask::Secret(
                "releases.token",
                "Release-feed token, as a reference (empty: none; it raises the anonymous limit \
                 of 60 requests an hour)",
            ),
        ],
    },
    Group {
        title: "the output format",
        programs: &[Program::Plugin],
        questions: &[Ask::Own(|w| w.output())],
    },
    Group {
        title: "the scan service (serve)",
        programs: &[Program::Scanner],
        questions: &[
            Ask::Setting(
                "service.listen",
                "Address serve listens on (any but loopback needs a token)",
            ),
            Ask::Setting("service.port", "Port serve listens on (0: a free one)"),
            Ask::Own(|w| w.service_token()),
            Ask::Setting(
                "service.cache_ttl",
                "Seconds a host's result is served from the cache",
            ),
        ],
    },
];

struct Wizard<'a, 'e> {
    io: Io<'a>,
    env: &'e dyn Environment,
    program: Program,
    /// The configuration keys answered so far, as the file will hold them.
    file: BTreeMap<String, ConfigValue>,
    /// Flags for the printed command line (row id, value): what a file cannot hold.
    flags: Vec<(Id, String)>,
    /// References that do not resolve here, and the stand-in each is checked with.
    stand_ins: Vec<(String, &'static str)>,
}

impl Wizard<'_, '_> {
    fn say(&mut self, text: &str) -> Result<(), Stopped> {
        self.io
            .output
            .write_all(text.as_bytes())
            .and_then(|()| self.io.output.flush())
            .map_err(|e| Stopped(format!("cannot write to the output ({e}); nothing written")))
    }

    /// Asks one question and returns the answer, trimmed (empty: Enter). Without a terminal
    /// the answer is not shown yet: `accepted` shows it once it is kept.
    fn read(&mut self, prompt: &str, default: Option<&str>) -> Result<String, Stopped> {
        let shown = match default {
            Some(d) => format!("{prompt} [{d}]: "),
            None => format!("{prompt}: "),
        };
        self.say(&shown)?;
        let mut line = String::new();
        let read = self.io.input.read_line(&mut line).map_err(|e| {
            Stopped(format!(
                "cannot read the answer to \"{prompt}\" ({e}); nothing written"
            ))
        })?;
        if read == 0 {
            self.say("\n")?;
            return Err(Stopped(format!(
                "the input ended at \"{prompt}\"; nothing written"
            )));
        }
        Ok(line.trim().to_string())
    }

    /// An answer is kept: without a terminal the transcript shows it (a secret's answer is a
    /// reference, never a value).
    fn accepted(&mut self, answer: &str) -> Result<(), Stopped> {
        if self.io.terminal {
            Ok(())
        } else {
            self.say(&format!("{answer}\n"))
        }
    }

    /// An answer is refused: at a terminal the problem is shown and the question asked again;
    /// otherwise the wizard stops. The message never quotes a refused secret.
    fn refused(&mut self, prompt: &str, problem: &str) -> Result<(), Stopped> {
        if self.io.terminal {
            self.say(&format!("  ! {problem}\n"))
        } else {
            self.say("\n")?;
            Err(Stopped(format!(
                "answer to \"{prompt}\" refused: {problem}; nothing written"
            )))
        }
    }

    /// Asks `prompt` until `take` keeps the answer (what it returns) or the wizard stops: each
    /// answer is `accepted` or `refused` with `take`'s problem.
    fn ask<T>(
        &mut self,
        prompt: &str,
        default: Option<&str>,
        mut take: impl FnMut(&mut Self, &str) -> Result<T, String>,
    ) -> Result<T, Stopped> {
        loop {
            let answer = self.read(prompt, default)?;
            match take(self, &answer) {
                Ok(kept) => {
                    self.accepted(&answer)?;
                    return Ok(kept);
                }
                Err(problem) => self.refused(prompt, &problem)?,
            }
        }
    }

    /// A question the wizard itself asks (yes or no).
    fn yes_no(&mut self, prompt: &str, default: bool) -> Result<bool, Stopped> {
        let shown = if default { "yes" } else { "no" };
        self.ask(prompt, Some(shown), |_, answer| {
            match answer.to_ascii_lowercase().as_str() {
                "" => Ok(default),
                "y" | "yes" => Ok(true),
                "n" | "no" => Ok(false),
                _ => Err("answer yes or no".to_string()),
            }
        })
    }

    /// The file to write: `--config`, else asked with a default; confirmed when it exists.
    fn path(&mut self, request: &Request) -> Result<PathBuf, Stopped> {
        let prompt = "Configuration file to write";
        let path = match &request.config {
            Some(given) => {
                let path = file_path(given).map_err(|problem| {
                    Stopped(format!("--config {given:?}: {problem}; nothing written"))
                })?;
                self.say(&format!("{prompt}: {} (--config)\n", path.display()))?;
                path
            }
            None => {
                let (default, why) = default_path(self.env, request.root);
                self.say(&format!("The default is {why}.\n"))?;
                let default = default.display().to_string();
                self.ask(prompt, Some(&default), |_, answer| {
                    file_path(if answer.is_empty() { &default } else { answer })
                })?
            }
        };
        if std::fs::symlink_metadata(&path).is_ok()
            && !self.yes_no(&format!("{} exists. Replace it?", path.display()), false)?
        {
            return Err(Stopped(format!(
                "{} kept as it is; nothing written",
                path.display()
            )));
        }
        Ok(path)
    }

    fn host(&mut self) -> Result<(), Stopped> {
        match self.program {
            Program::Plugin => {
                let prompt = "Host(s) to check, comma-separated (name, IP, [IPv6] or URL, each \
                              with an optional :port)";
                self.ask(prompt, None, |w, answer| {
                    if answer.is_empty() {
                        return Err("the check needs a host; give at least one".to_string());
                    }
                    w.try_value("host", ConfigValue::Scalar(answer.to_string()))
                        .map(drop)
                })
            }
            Program::Scanner => self.setting(
                "host",
                "Host(s) for check-storage-security runs that read this file (empty: none; \
                 scan and serve name theirs)",
                None,
            ),
        }
    }

    /// The questions of a group, in order.
    fn group(&mut self, questions: &[Ask]) -> Result<(), Stopped> {
        for question in questions {
            match *question {
                Ask::Setting(key, prompt) => {
                    let default = self.shown_default(spec_of(key).option);
                    self.setting(key, prompt, default.as_deref())?;
                }
                Ask::Switch(key, prompt, default) => self.switch(key, prompt, default)?,
                Ask::Secret(key, prompt) => {
                    if !self.secret(key, prompt)? {
                        return Ok(());
                    }
                }
                Ask::Secrets(key, prompt) => while self.secret(key, prompt)? {},
                Ask::Own(ask) => ask(self)?,
            }
        }
        Ok(())
    }

    /// Off unless given: no default of the table's to show.
    fn eol_warning(&mut self) -> Result<(), Stopped> {
        let eol = self
            .shown_default(Id::eol_warning)
            .unwrap_or_else(|| "off".to_string());
        self.setting(
            "eol_warning",
            "WARNING when the release line has this many days of support left or fewer",
            Some(&eol),
        )
    }

    /// `--format` is a flag only (no variable, no key): the answer goes on the printed
    /// command line, checked by the same parser.
    fn output(&mut self) -> Result<(), Stopped> {
        let prompt = "Output format: metrics, otlp, agentlocal, summary, json, sarif or junit \
                      (empty: the monitoring line; it goes on the command line, a file cannot \
                      hold it)";
        self.ask(prompt, None, |w, answer| {
            if answer.is_empty() {
                return Ok(());
            }
            w.flags.push((Id::format, answer.to_string()));
            w.check().map(drop).inspect_err(|_| {
                w.flags.pop();
            })
        })
    }

    /// The service's token, refused by the service's own rule for the listen address given.
    fn service_token(&mut self) -> Result<(), Stopped> {
        let prompt = "Token every /api/ call presents, as a reference to a random value of 32 \
                      characters or more (empty: none)";
        loop {
            self.secret("service.token", prompt)?;
            // The service's own rule, as `serve` applies it at start.
            let refusal = self
                .serve_settings()
                .and_then(|s| s.ready_to_start().map_err(|e| e.0));
            let Err(problem) = refusal else {
                return Ok(());
            };
            self.file.remove("service.token");
            if self.io.terminal {
                self.say(&format!("  ! {problem}\n"))?;
            } else {
                return Err(Stopped(format!(
                    "answer to \"{prompt}\" refused: {problem}; nothing written"
                )));
            }
        }
    }

    /// The default a run takes for a row: the profile's value when the answers name a profile
    /// that sets it, else the table's default.
    fn shown_default(&self, id: Id) -> Option<String> {
        let profile = match self.file.get("profile") {
            Some(ConfigValue::Scalar(name)) => Profile::parse(name),
            _ => None,
        };
        match profile.and_then(|p| p.value(id)) {
            Some(value) => Some(format!("{value}, from the profile")),
            None => options::spec(id).default.map(String::from),
        }
    }

    /// A plain setting: empty leaves it out of the file (the run takes the default shown).
    fn setting(&mut self, key: &str, prompt: &str, default: Option<&str>) -> Result<(), Stopped> {
        self.ask(prompt, default, |w, answer| {
            if answer.is_empty() {
                return Ok(());
            }
            w.try_value(key, ConfigValue::Scalar(answer.to_string()))
                .map(drop)
        })
    }

    /// A boolean setting. `default`: what Enter means when it is not the run's default
    /// (written then); `None`: Enter leaves it out.
    fn switch(&mut self, key: &str, prompt: &str, default: Option<bool>) -> Result<(), Stopped> {
        let spec = spec_of(key);
        let run_default = spec.default.is_some_and(settings::truthy);
        let shown = match default {
            Some(d) => yes(d).to_string(),
            None => self
                .shown_default(spec.option)
                .map(|d| match d.split_once(',') {
                    Some((value, from)) => format!("{},{from}", yes(settings::truthy(value))),
                    None => yes(settings::truthy(&d)).to_string(),
                })
                .unwrap_or_else(|| yes(run_default).to_string()),
        };
        self.ask(prompt, Some(&shown), |w, answer| {
            let text = match answer.to_ascii_lowercase().as_str() {
                "" => match default {
                    Some(d) if d != run_default => d.to_string(),
                    _ => return Ok(()),
                },
                "y" => "yes".to_string(),
                "n" => "no".to_string(),
                other => other.to_string(),
            };
            // The file's own boolean rule decides what counts as yes or no.
            w.try_value(key, ConfigValue::Scalar(text)).map(drop)
        })
    }

    /// The proxy: written as it is, unless it carries a user and password, which makes it a
    /// secret given as a reference.
    fn proxy(&mut self) -> Result<(), Stopped> {
        let prompt = "Web proxy, http://host:port (empty: none; with a user and password give it \
                      as a reference)";
        let note = self.ask(prompt, None, |w, answer| {
            if answer.is_empty() {
                return Ok(None);
            }
            if secrets::is_reference(answer) {
                return w.reference("proxy", answer);
            }
            let authority = answer.split_once("://").map_or(answer, |(_, r)| r);
            if authority.split('/').next().is_some_and(|a| a.contains('@')) {
                return Err(
                    "a proxy with a user and password is a secret: give it as a reference \
                     (env://NAME, file:///path or secret://NAME); the answer was not kept"
                        .to_string(),
                );
            }
            w.try_value("proxy", ConfigValue::Scalar(answer.to_string()))
                .map(|_| None)
        })?;
        self.maybe_note(note)
    }

    /// The private CA bundle: a path, made absolute (the check runs from another directory).
    fn ca_file(&mut self) -> Result<(), Stopped> {
        let prompt = "Private CA bundle, a PEM file (empty: the public roots only)";
        let note = self.ask(prompt, None, |w, answer| {
            if answer.is_empty() {
                return Ok(None);
            }
            let path = match std::path::absolute(answer) {
                Ok(p) => p.display().to_string(),
                Err(e) => return Err(format!("cannot make {answer:?} absolute ({e})")),
            };
            w.try_value("scanner.tls_ca_file", ConfigValue::Scalar(path.clone()))?;
            Ok((path != answer).then(|| format!("written as {path}")))
        })?;
        self.maybe_note(note)
    }

    /// A secret: only a reference is taken. Returns whether one was given (empty: none). A
    /// list setting (`webhook_headers`) gains an entry per call.
    fn secret(&mut self, key: &str, prompt: &str) -> Result<bool, Stopped> {
        // `None`: no answer; else the reference's note.
        let given = self.ask(prompt, None, |w, answer| {
            (!answer.is_empty())
                .then(|| w.reference(key, answer))
                .transpose()
        })?;
        let Some(note) = given else {
            return Ok(false);
        };
        self.maybe_note(note)?;
        Ok(true)
    }

    fn maybe_note(&mut self, note: Option<String>) -> Result<(), Stopped> {
        note.map_or(Ok(()), |text| self.say(&format!("  note: {text}\n")))
    }

    /// Takes a reference for `key` when it is one the wizard writes and the settings read
    /// with it; a value is refused unrepeated. `Ok(Some(note))`: kept, though it does not
    /// resolve here.
    fn reference(&mut self, key: &str, answer: &str) -> Result<Option<String>, String> {
        if !secrets::is_reference(answer) {
            return Err(format!(
                "{} is a secret: give a reference (env://NAME, file:///path or secret://NAME), \
                 never the value itself; the answer was not kept",
                spec_of(key).display_name()
            ));
        }
        if !SCHEMES.iter().any(|s| answer.starts_with(s)) {
            return Err(
                "the wizard writes env://, file:// and secret:// references (checking exec:// \
                 would run the program now); add exec:// to the file by hand if you need it"
                    .to_string(),
            );
        }
        secrets::check_form(answer)?;
        if let Some(path) = answer.strip_prefix("file://")
            && !path.starts_with('/')
        {
            return Err(format!(
                "{answer:?} is relative to the directory of the run, which is not this one; \
                 write file:///absolute/path"
            ));
        }
        let note = match secrets::resolve(answer, self.env) {
            Ok(_) => None,
            Err(e) => {
                self.stand_ins.push((answer.to_string(), stand_in(key)));
                Some(format!(
                    "{e}. Kept: the check must be able to resolve it where it runs; the next \
                     answers are checked with a stand-in"
                ))
            }
        };
        let list = matches!(spec_of(key).kind, Kind::Repeatable(..));
        let value = match (list, self.file.get(key)) {
            (true, Some(ConfigValue::List(items))) => {
                let mut items = items.clone();
                items.push(answer.to_string());
                ConfigValue::List(items)
            }
            (true, _) => ConfigValue::List(vec![answer.to_string()]),
            (false, _) => ConfigValue::Scalar(answer.to_string()),
        };
        match self.try_value(key, value) {
            Ok(_) => Ok(note),
            Err(problem) => {
                if note.is_some() {
                    self.stand_ins.pop();
                }
                Err(problem)
            }
        }
    }

    /// Keeps `value` for `key` when the answers read with it without a problem.
    fn try_value(&mut self, key: &str, value: ConfigValue) -> Result<(), String> {
        let before = self.file.insert(key.to_string(), value);
        let checked = self.check();
        if checked.is_err() {
            match before {
                Some(v) => self.file.insert(key.to_string(), v),
                None => self.file.remove(key),
            };
        }
        checked
    }

    /// The answers so far, read as a run reads its configuration file and flags.
    fn check(&self) -> Result<(), String> {
        let (file, flags) = self.answers();
        // The scanner's file holds serve's settings and may go without a host (serve takes
        // its hosts from requests); a host it holds is checked as the plugin's runs read it.
        if self.program == Program::Plugin || self.file.contains_key("host") {
            settings::validate::<()>(&file, &flags, self.env, Component::Plugin)?;
        }
        if self.program == Program::Scanner {
            settings::validate::<ServeSettings>(&file, &flags, self.env, Component::Serve)?;
        }
        Ok(())
    }

    /// The answers so far as the scan service reads them.
    fn serve_settings(&self) -> Result<Settings<ServeSettings>, String> {
        let (file, flags) = self.answers();
        settings::validate(&file, &flags, self.env, Component::Serve)
    }

    /// The answers so far, as a configuration file (references replaced by their stand-ins)
    /// and the flags of the command line.
    fn answers(&self) -> (BTreeMap<String, ConfigValue>, Vec<(Id, String)>) {
        let stand_in = |text: &String| {
            self.stand_ins
                .iter()
                .find(|(reference, _)| reference == text)
                .map_or_else(|| text.clone(), |(_, s)| s.to_string())
        };
        let file = self
            .file
            .iter()
            .map(|(key, value)| {
                let value = match value {
                    ConfigValue::Scalar(s) => ConfigValue::Scalar(stand_in(s)),
                    ConfigValue::List(items) => {
                        ConfigValue::List(items.iter().map(stand_in).collect())
                    }
                };
                (key.clone(), value)
            })
            .collect();
        (file, self.flags.clone())
    }

    /// Writes the file (atomically, mode 0600) and shows how to use it.
    fn write(mut self, path: &Path) -> Result<Written, Stopped> {
        // `{:#}`: serde_json's pretty print of a `Value` (which cannot fail).
        let text = format!("{:#}\n", document(&self.file));
        // A replaced file keeps its owner and group (a file handed to the monitoring user
        // stays its), never its permissions: the file is its owner's only.
        let previous = std::fs::metadata(path).ok();
        crate::atomic_file::replace(path, 0o600, |file| {
            #[cfg(unix)]
            {
                use std::os::unix::fs::{MetadataExt, PermissionsExt};
                if let Some(old) = &previous {
                    let _ = std::os::unix::fs::fchown(&*file, Some(old.uid()), Some(old.gid()));
                }
                file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            }
            #[cfg(not(unix))]
            let _ = &previous;
            file.write_all(text.as_bytes())
        })
        .map_err(|e| {
            Stopped(format!(
                "cannot write {}: {e}; nothing written",
                path.display()
            ))
        })?;

        let shown = shell_word(&path.display().to_string());
        let mut flags = String::new();
        for (id, value) in &self.flags {
            flags.push_str(&format!(
                " {} {}",
                options::spec(*id).display_name(),
                shell_word(value)
            ));
        }
        let command = match self.program {
            Program::Plugin => format!("check-storage-security --config {shown}{flags}"),
            Program::Scanner => format!("check-storage-scanner --config {shown} serve"),
        };
        let mut end = format!(
            "\nWrote {} (mode 0600).\nRun the check with it:\n  {command}\n",
            path.display()
        );
        match self.program {
            Program::Plugin => end.push_str(&format!(
                "In Icinga 2 or Nagios, add to the check command:\n  --config {shown}{flags}\n  \
                 (a host given there with -H takes the place of the file's)\n"
            )),
            Program::Scanner => end.push_str(&format!(
                "One scan with it:\n  check-storage-scanner --config {shown} scan HOST\n"
            )),
        }
        end.push_str(&format!(
            "Only the file's owner can read it: run the check as that user, or hand the file \
             over\nto the monitoring user (on Debian: chown nagios {shown}).\n"
        ));
        // A run without --config reads the first file it finds: say when that is another.
        let found = match self.env.var("COS_CONFIG_FILE").filter(|v| !v.is_empty()) {
            Some(named) => Some((PathBuf::from(named), "COS_CONFIG_FILE names it")),
            None => config_file::locate(None, self.env)
                .ok()
                .flatten()
                .map(|p| (p, "it comes first in the search list")),
        };
        if let Some((other, why)) = found
            && std::fs::canonicalize(&other).ok() != std::fs::canonicalize(path).ok()
        {
            end.push_str(&format!(
                "Without --config a run here reads {} instead ({why}).\n",
                other.display()
            ));
        }
        self.say(&end)?;
        Ok(Written {
            path: path.to_path_buf(),
            command,
        })
    }
}

/// The row a configuration key belongs to.
fn spec_of(key: &str) -> &'static options::OptionSpec {
    let row = options::by_config_key(key).or_else(|| options::named(key));
    row.unwrap_or_else(|| panic!("the wizard asks for {key:?}, which the option table lacks"))
}

fn yes(on: bool) -> &'static str {
    if on { "yes" } else { "no" }
}

/// A value fit to check when its reference cannot be resolved here, so the answers after it
/// are still checked.
fn stand_in(key: &str) -> &'static str {
    match key {
        "webhook_url" => "https://webhook.invalid/stand-in",
        "webhook_headers" => "X-Stand-In: stand-in",
        "service.token" => "stand-in-token-for-checking-the-other-answers",
        "proxy" => "http://proxy.invalid:3128",
        _ => "stand-in",
    }
}

/// The file a path names, absolute; the wizard writes JSON, which a run reads from a `.json`
/// name only. Directories it needs are created.
fn file_path(given: &str) -> Result<PathBuf, String> {
    let path =
        std::path::absolute(given).map_err(|e| format!("cannot make {given:?} absolute ({e})"))?;
    if !path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        return Err(
            "the wizard writes JSON, which a run reads only from a name ending in .json; give \
             such a path"
                .to_string(),
        );
    }
    if path.is_dir() {
        return Err(format!("{} is a directory; name a file", path.display()));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the directory {} ({e})", dir.display()))?;
    }
    Ok(path)
}

/// The file offered when `--config` names none, and why.
fn default_path(env: &dyn Environment, root: bool) -> (PathBuf, String) {
    if let Some(named) = env
        .var("COS_CONFIG_FILE")
        .filter(|v| v.to_ascii_lowercase().ends_with(".json"))
    {
        return (
            PathBuf::from(named),
            "the file COS_CONFIG_FILE names".to_string(),
        );
    }
    let home = env.var("HOME").filter(|h| !h.is_empty());
    match home {
        Some(home) if !root => (
            Path::new(&home).join(".config/check-storage-security/.env.json"),
            "this user's file of the search list: runs as this user find it without --config"
                .to_string(),
        ),
        _ => (
            PathBuf::from("/etc/check-storage-security/config.json"),
            "the system-wide file of the search list: every run finds it without --config"
                .to_string(),
        ),
    }
}

/// The answers as the JSON document: dotted keys as nested mappings, booleans and numbers
/// typed, lists as arrays.
fn document(file: &BTreeMap<String, ConfigValue>) -> serde_json::Value {
    let mut root = serde_json::Map::new();
    for (key, value) in file {
        let spec = spec_of(key);
        let json = match value {
            ConfigValue::Scalar(text) => typed(spec, text),
            ConfigValue::List(items) => serde_json::json!(items),
        };
        let mut parts: Vec<&str> = key.split('.').collect();
        let last = parts.pop().unwrap_or(key);
        let mut map = &mut root;
        for part in parts {
            map = map
                .entry(part.to_string())
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
                .as_object_mut()
                .expect("a section key is never also a value");
        }
        map.insert(last.to_string(), json);
    }
    serde_json::Value::Object(root)
}

fn typed(spec: &options::OptionSpec, text: &str) -> serde_json::Value {
    use serde_json::Value;
    match (spec.kind, spec.ty()) {
        (Kind::Switch, _) | (_, Type::Bool) => Value::Bool(settings::truthy(text)),
        (_, Type::Number { .. } | Type::Seconds { .. } | Type::Port { .. }) => {
            if let Ok(n) = text.parse::<u64>() {
                Value::from(n)
            } else {
                text.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or_else(|| Value::String(text.to_string()), Value::Number)
            }
        }
        _ => Value::String(text.to_string()),
    }
}

/// A word for a POSIX shell: as it is when nothing in it is special, else single-quoted.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:@%+,=-".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests;
