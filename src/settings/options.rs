//! The option table: every setting of the plugin, declared once. The command-line parser, the
//! environment and configuration-file layering, `-h`, and the man page are all driven by it, so a
//! new option is its `Id`, one row here and its typed field in `Settings`, joined by the
//! compiler (`Id::timeout`), not by a string.

use super::FleetFormat;
use crate::knowledge::update::UpdateMode;
use crate::notify::{BodyFormat, NotifyOn};
use crate::output::{DiffFormat, Format};
use crate::vocabulary::Vocabulary;
use std::sync::LazyLock;

/// Declares [`Id`]: every row of the table by name. Code names a row as `Id::timeout`, and
/// every id has exactly one row (checked when the crate builds), so a row that is missing,
/// doubled or misspelt is a build error, never a panic at run time.
macro_rules! option_ids {
    ($($id:ident),* $(,)?) => {
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Id {
            $($id),*
        }

        impl Id {
            pub const ALL: &[Id] = &[$(Id::$id),*];

            /// The row's name, as its id is written (`time_budget`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Id::$id => stringify!($id)),*
                }
            }
        }
    };
}

option_ids! {
    host,
    host_list,
    warning,
    critical,
    profile,
    check_hardening,
    update_warning,
    eol_warning,
    no_extra_checks,
    no_debug_ports,
    all_addresses,
    login_throttling,
    format,
    debug,
    insecure,
    ca_file,
    proxy,
    timeout,
    time_budget,
    retries,
    update_source,
    release_token,
    feed_cache_ttl,
    state_dir,
    no_update_check,
    release_track,
    policy,
    ignore_hardening,
    waive_until,
    waiver_warning,
    baseline,
    warn_on_new,
    verify_remediation,
    webhook_url,
    webhook_on,
    webhook_header,
    webhook_timeout,
    allow_private_webhooks,
    prometheus_listen_port,
    scrape_interval,
    listen,
    port,
    web_listen,
    web_port,
    token,
    base_url,
    store,
    store_timeout,
    workers,
    allow_private_targets,
    mcp_token,
    no_mcp,
    result,
    snippets_for,
    config,
    configure,
    self_update_check,
    upgrade_self,
    check_only,
    version,
    help,
    verify_tls,
    target_port,
    tls_min_days,
    use_release_schedule,
    release_schedule,
    vulnerability_db,
    vulnerability_feed,
    extra_checks_rating,
    check_debug_ports,
    debug_port_timeout,
    check_login_throttling,
    check_all_addresses,
    releases_url,
    cache_ttl,
    ipv6_enabled,
    backoff_factor,
    concurrency,
    latest_version,
    diff_format,
    webhook_format,
    prometheus_listen_addr,
    connections_per_address,
    record_ttl,
    trusted_proxy,
    fleet_format,
    self_update_url,
    debug_ports,
    resolve,
    dns_server,
    now,
}

/// Every [`Id`] has exactly one row in [`SECTIONS`]: checked at compile time.
const _: () = {
    let mut rows_of = [0u8; Id::ALL.len()];
    let mut section = 0;
    while section < SECTIONS.len() {
        let rows = SECTIONS[section].1;
        let mut row = 0;
        while row < rows.len() {
            rows_of[rows[row].option as usize] += 1;
            row += 1;
        }
        section += 1;
    }
    let mut id = 0;
    while id < rows_of.len() {
        assert!(
            rows_of[id] == 1,
            "an option::Id without exactly one row of the table"
        );
        id += 1;
    }
};

/// How a setting takes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A switch: present on the command line means on; variables use the boolean rules.
    Switch,
    /// Takes one value (`--timeout 5`) of a type; a later source replaces an earlier one.
    Value(&'static str, Type),
    /// May be given several times; all occurrences are kept, in order, each of the type (a
    /// value may be a comma-separated list of them where the row says so).
    Repeatable(&'static str, Type),
}

/// What a setting's value is: how its text is read, what a refusal says it must be
/// ("--timeout \"0\" is not a number of seconds above 0 (at most 3600)"), and the bounds the
/// manual states. `Settings` reads a row as its type says, so the bounds are written here only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// Free text (a path, an address, a token), checked where it is used if at all; a
    /// switch's value is on or off by its `Kind`.
    Text,
    /// true or false (in a variable: the boolean rules of `truthy`).
    Bool,
    /// A number from `min` to `max` (whole, unless read as a fraction); `what` names it:
    /// "a number of workers" makes "a number of workers from 1 to 32".
    Number {
        what: &'static str,
        min: i64,
        max: i64,
    },
    /// A time above 0 seconds, fractions allowed, at most `max`.
    Seconds { max: i64 },
    /// A TCP port; `free`: 0 takes a free one.
    Port { free: bool },
    /// One of the row's `choices`; `what` names the set ("an output format").
    Choice(&'static str),
    /// Read by its own parser in `Settings`; `what` says what it must be.
    Checked(&'static str),
}

impl Type {
    /// What a value must be, as a refusal says it: "is not <this>".
    pub fn what(self) -> String {
        match self {
            Type::Text => "a value".to_string(),
            Type::Bool => "a boolean".to_string(),
            Type::Number { what, min, max } => format!("{what} from {min} to {max}"),
            Type::Seconds { max } => format!("a number of seconds above 0 (at most {max})"),
            Type::Port { free: true } => "a port from 0 (a free port) to 65535".to_string(),
            Type::Port { free: false } => "a port from 1 to 65535".to_string(),
            Type::Choice(what) | Type::Checked(what) => what.to_string(),
        }
    }

    /// The bounds the manual states beside the default.
    pub fn bounds(self) -> Option<String> {
        match self {
            Type::Number { min, max, .. } => Some(format!("from {min} to {max}")),
            Type::Seconds { max } => Some(format!("above 0, at most {max}")),
            _ => None,
        }
    }
}

/// The programs of the package. Variables and the configuration file are shared (one file
/// serves the plugin and the scanner); a flag is accepted only by the programs it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    /// `check-storage-security`, the monitoring plugin (and its exporter).
    Plugin,
    /// `check-storage-scanner`: `scan`, `serve`, `review-waivers`.
    Scanner,
}

impl Program {
    pub fn name(self) -> &'static str {
        match self {
            Program::Plugin => "check-storage-security",
            Program::Scanner => "check-storage-scanner",
        }
    }
}

const BOTH: &[Program] = &[Program::Plugin, Program::Scanner];
const PLUGIN: &[Program] = &[Program::Plugin];
const SCANNER: &[Program] = &[Program::Scanner];
const SERVE: &[Component] = &[Component::Serve];
const WEB: &[Component] = &[Component::Web];
/// The public API's store, which `limits` opens too.
const WEB_STORE: &[Component] = &[Component::Web, Component::Limits];
const PLUGIN_ONLY: &[Component] = &[Component::Plugin];
const LISTEN: &str =
    "an IP address with an optional port, such as 127.0.0.1, ::1 or 127.0.0.1:8080";
const BASE_URL: &str = "an absolute http:// or https:// URL such as https://scan.example.com, \
    with a path when a reverse proxy serves it there (https://example.com/scanner)";

/// One row of the option table. The table states only what differs from a setting with no
/// flag, key or variable that both programs read; `OPTIONS` holds the rows with their names
/// (`long`, `config_key`, `env`) derived from how the table names them.
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    /// The row's name: the flag, key and variable are derived from it.
    pub id: &'static str,
    /// How the code names the row.
    pub option: Id,
    /// Long command-line flag without dashes; `None` for configuration-only settings.
    pub long: Option<&'static str>,
    pub short: Option<char>,
    /// Environment variables, strongest first. The first is the documented one; a second,
    /// derived from the configuration key (`COS_SCANNER_CONCURRENCY`), is accepted as well.
    pub env: &'static [&'static str],
    /// Configuration-file key (dotted path), if the setting can live in a file.
    pub config_key: Option<&'static str>,
    pub kind: Kind,
    /// Default as shown to the operator (`None`: unset). The value before a remark in
    /// parentheses (`604800 (7 days)`) is the one a run takes where `Settings` reads the
    /// default from here.
    pub default: Option<&'static str>,
    /// The value of the flag written alone, without one (`--prometheus-listen-port`: 9102);
    /// `None`: the flag needs its value.
    pub bare: Option<&'static str>,
    /// Allowed values, when the value is one of a fixed set.
    pub choices: &'static [&'static str],
    pub help: &'static str,
    /// The title of its section of the manual.
    pub section: &'static str,
    /// The programs whose command line takes the flag.
    pub programs: &'static [Program],
    /// The components that read the setting; empty: every component of its programs. Any
    /// other refuses the flag by name and never reads the setting from the environment or the
    /// file, so it never resolves a secret it does not use.
    pub components: &'static [Component],
    /// How the table names the flag, the key and the variable (`resolve` derives the names).
    flag: Name,
    key: Name,
    variable: Name,
}

/// The parts of the package that read settings: the plugin (with its exporter and the
/// timer's runs) and the subcommands of `check-storage-scanner`. One configuration file serves
/// them all; each reads only the rows that are its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    /// `check-storage-security`: a scan of the configured targets, or the exporter.
    Plugin,
    /// `check-storage-scanner scan <host>`.
    Scan,
    /// `check-storage-scanner serve`: the scan service.
    Serve,
    /// `check-storage-scanner web`: the public scan API.
    Web,
    /// `check-storage-scanner review-waivers`: the waivers of saved result documents.
    ReviewWaivers,
    /// `check-storage-scanner fleet`: saved result documents judged again.
    Fleet,
    /// `check-storage-scanner snippets`: the fix snippets of saved result documents.
    Snippets,
    /// The plugin's `--upgrade-self`: no scan.
    Upgrade,
    /// `check-storage-scanner limits`: the public API's store, from an operator's shell.
    Limits,
}

impl Component {
    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Component::Plugin => "check-storage-security",
            Component::Scan => "scan",
            Component::Serve => "serve",
            Component::Web => "web",
            Component::ReviewWaivers => "review-waivers",
            Component::Fleet => "fleet",
            Component::Snippets => "snippets",
            Component::Upgrade => "--upgrade-self",
            Component::Limits => "limits",
        }
    }

    /// Whether it scans the targets its settings name, so that one is required.
    pub fn scans_configured_targets(self) -> bool {
        matches!(self, Component::Plugin | Component::Scan)
    }
}

use Kind::{Repeatable, Switch, Value};
use Type::{Bool, Checked, Choice, Port, Seconds, Text};

/// `Type::Number` on one line.
const fn number(what: &'static str, min: i64, max: i64) -> Type {
    Type::Number { what, min, max }
}
const RATING: Kind = Value("RATING", number("a rating", 0, 5));
const DAYS: Kind = Value("DAYS", number("a number of days", 0, 3650));
const SECONDS: Kind = Value("SECONDS", Seconds { max: 3600 });
/// A cache's lifetime: 0 (no cache) to 30 days.
const CACHE_TTL: Kind = Value("SECONDS", number("a number of seconds", 0, 2_592_000));
const BOOL: Kind = Value("BOOL", Bool);

/// A name of a row derived from its id unless written out.
#[derive(Clone, Copy, Debug)]
enum Name {
    /// The row has none (no flag, no key); for the variable: only its key's.
    Absent,
    /// The flag `--time-budget` of `time_budget`, the key `timeout`, the variable `COS_FORMAT`.
    FromId,
    /// The key `web.store` of `store`: the id in a section of the file.
    In(&'static str),
    Named(&'static str),
}

/// A setting without a flag: read from its variable or its key only.
const fn setting(option: Id, kind: Kind) -> OptionSpec {
    OptionSpec {
        id: option.name(),
        option,
        long: None,
        short: None,
        env: &[],
        config_key: None,
        kind,
        default: None,
        bare: None,
        choices: &[],
        help: "",
        section: "",
        programs: BOTH,
        components: &[],
        flag: Name::Absent,
        key: Name::Absent,
        variable: Name::Absent,
    }
}

/// A setting with a flag named after its id (`--time-budget` for `time_budget`).
const fn flag(option: Id, kind: Kind) -> OptionSpec {
    OptionSpec {
        flag: Name::FromId,
        ..setting(option, kind)
    }
}

/// The builder steps of a row, each setting one field (`const`, so the table is built at
/// compile time): `step(argument) => field: value`.
macro_rules! builder_steps {
    ($($(#[$doc:meta])* $step:ident($($arg:ident: $ty:ty)?) => $field:ident: $value:expr;)*) => {
        impl OptionSpec {
            $(
                $(#[$doc])*
                const fn $step(self, $($arg: $ty)?) -> OptionSpec {
                    OptionSpec { $field: $value, ..self }
                }
            )*
        }
    };
}

builder_steps! {
    flag_named(long: &'static str) => flag: Name::Named(long);
    short(short: char) => short: Some(short);
    /// A key at the top of the file named as the id; the key's variable (`COS_TIMEOUT`) is read.
    key() => key: Name::FromId;
    /// The id as a key of a section of the file (`web.store`, read as `COS_WEB_STORE`).
    key_in(section: &'static str) => key: Name::In(section);
    key_named(key: &'static str) => key: Name::Named(key);
    /// The variable named after the id (`COS_CONCURRENCY`), the documented one: before the
    /// key's (`COS_SCANNER_CONCURRENCY`), which is read as well.
    env() => variable: Name::FromId;
    env_named(variable: &'static str) => variable: Name::Named(variable);
    default(default: &'static str) => default: Some(default);
    bare(bare: &'static str) => bare: Some(bare);
    choices(choices: &'static [&'static str]) => choices: choices;
    programs(programs: &'static [Program]) => programs: programs;
    help(help: &'static str) => help: help;
}

impl OptionSpec {
    const fn scope(
        self,
        programs: &'static [Program],
        components: &'static [Component],
    ) -> OptionSpec {
        OptionSpec {
            programs,
            components,
            ..self
        }
    }

    /// The row with its names derived: the flag from the id, the key from the id and its
    /// section, the variables from the id and the key (`COS_` and the key upper-cased, dots
    /// as underscores).
    fn resolve(mut self, section: &'static str) -> OptionSpec {
        // The table lives as long as the program, and so do the names made for it.
        let made = |name: String| -> &'static str { name.leak() };
        self.long = match self.flag {
            Name::FromId => Some(made(self.id.replace('_', "-"))),
            Name::Named(long) => Some(long),
            Name::Absent | Name::In(_) => None,
        };
        self.config_key = match self.key {
            Name::FromId => Some(self.id),
            Name::In(section) => Some(made(format!("{section}.{}", self.id))),
            Name::Named(key) => Some(key),
            Name::Absent => None,
        };
        let variable = |name: &str| format!("COS_{}", name.replace('.', "_").to_ascii_uppercase());
        let mut env = match self.variable {
            Name::FromId => vec![made(variable(self.id))],
            Name::Named(name) => vec![name],
            Name::Absent | Name::In(_) => Vec::new(),
        };
        if let Some(key) = self.config_key.map(variable)
            && !env.contains(&key.as_str())
        {
            env.push(made(key));
        }
        self.env = env.leak();
        self.section = section;
        self
    }
}

/// Every setting, in manual order: the sections in the order of the manual, with the names
/// of their rows derived (made once, on first use).
pub static OPTIONS: LazyLock<Vec<OptionSpec>> = LazyLock::new(|| {
    SECTIONS
        .iter()
        .flat_map(|(section, rows)| rows.iter().map(|row| row.resolve(section)))
        .collect()
});

/// The sections of the manual, in order: each one's title and rows.
const SECTIONS: [(&str, &[OptionSpec]); 12] = [
    ("Target", TARGET),
    ("Verdict and thresholds", VERDICT),
    ("What is checked", CHECKS),
    ("Output", OUTPUT),
    ("Connection", TRANSPORT),
    ("Releases and updates", UPDATES),
    ("Waivers, policy and baseline", WAIVERS),
    ("Webhook notification", WEBHOOK),
    ("Metrics exporter", EXPORTER),
    // The scanner's own settings: the service's address and token, review-waivers' input.
    (
        "Scan service and waiver review (check-storage-scanner)",
        SCANNER_OWN,
    ),
    ("The program itself", PROGRAM),
    // Settings that exist only in the configuration file and as variables.
    (
        "Configuration-file settings (also as COS_* variables)",
        CONFIG_ONLY,
    ),
];

/// The titles of the manual's sections, in order.
pub fn sections() -> impl Iterator<Item = &'static str> {
    SECTIONS.iter().map(|(title, _)| *title)
}

const TARGET: &[OptionSpec] = &[
    // The scanner takes its target as `scan <host>`; `serve` from its requests.
    flag(Id::host, Repeatable("TARGETS", Text))
        .short('H')
        .key()
        .programs(PLUGIN)
        .help(
            "Comma-separated targets: hostname, IPv4, [IPv6] or URL, each with an optional port \
             (cloud.example.com, 192.0.2.10:9200, [2001:db8::1]:443, https://cloud.example.com/; a \
             link-local address with its interface: [fe80::1%25eth0]:9200). Repeat -H to add more; \
             a target named twice is scanned once. Written literally, never as a secret reference \
             (a target goes to DNS). Required, unless --host-list names the targets.",
        ),
    flag(Id::host_list, Value("FILE", Text))
        .key()
        .programs(PLUGIN)
        .help(
            "A file of targets, one a line, written as -H takes them; blank lines and # comments \
             are skipped. For a fleet too large for a command line (up to 100,000 targets). \
             Given beside -H in the same place (both flags, both keys) both count; otherwise the \
             stronger place wins, so a -H on the command line replaces a file's list.",
        ),
];

const VERDICT: &[OptionSpec] = &[
    flag(Id::warning, RATING)
        .short('w')
        .key()
        .default("3")
        .help("Rating (0-5) at or below which the state is WARNING."),
    flag(Id::critical, RATING)
        .short('c')
        .key()
        .default("1")
        .help(
            "Rating (0-5) at or below which the state is CRITICAL; must not exceed --warning. A \
         single critical finding caps the rating at 2 (D): use --critical 2 to page on it.",
        ),
    flag(Id::profile, Value("NAME", Choice("a profile")))
        .key()
        .choices(&super::PROFILE_NAMES)
        .help(
            "Threshold profile, the weakest source: strict (warning 4, critical 2, hardening, \
             update and 90-day end-of-life warnings), ops (3, 1, hardening, 30 days), lenient (2, \
             0). Anything set explicitly wins over the profile.",
        ),
    flag(Id::check_hardening, Switch).key().help(
        "Evaluate hardening measures and security headers; a missing measure turns OK into \
         WARNING (never lowers a worse state).",
    ),
    flag(Id::update_warning, Switch)
        .key()
        .help("A pending update on the instance's track turns OK into WARNING."),
    flag(Id::eol_warning, DAYS).key().help(
        "Turn OK into WARNING when the release line has DAYS or fewer days of support left; \
         the message names the date and the upgrade target: the newest release of a line still \
         supported after the window, and its track.",
    ),
];

const CHECKS: &[OptionSpec] = &[
    flag(Id::no_extra_checks, Switch)
        .help("Disable the additional probes (exposed files, debug services, CORS, ...)."),
    flag(Id::no_debug_ports, Switch).help("Do not probe the debug ports."),
    flag(Id::all_addresses, Switch).env().help(
        "Repeat version, header, hardening and demo-account checks against every address the \
         name resolves to (Host and SNI keep the name).",
    ),
    flag(Id::login_throttling, Switch).env().help(
        "Send six failed sign-ins for an account that cannot exist and report whether the \
         instance throttles them; never rated.",
    ),
];

const OUTPUT: &[OptionSpec] = &[
    flag(Id::format, Value("FORMAT", Choice("an output format")))
        .env()
        .default("the monitoring line")
        .choices(Format::NAMES)
        .programs(PLUGIN)
        .help(
            "Output format. Without it: the monitoring line, detail lines and performance data. \
             The exit code keeps its 0/1/2/3 meaning in every format.",
        ),
    flag(Id::debug, Switch).short('d').env().help(
        "Print the rating explanation, the remediation plan and the explanation of every \
         finding to stdout, and log at DEBUG level to stderr.",
    ),
];

const TRANSPORT: &[OptionSpec] = &[
    flag(Id::insecure, Switch).env().help(
        "Skip the verified-HTTPS step. An untrusted chain is still listed but no longer counts \
         against the rating.",
    ),
    flag(Id::ca_file, Value("FILE", Text))
        .key_named("scanner.tls_ca_file")
        .help(
            "PEM bundle of a private CA to trust in addition to the public roots. CA-bundle \
             variables (SSL_CERT_FILE, ...) are never read.",
        ),
    flag(Id::proxy, Value("URL", Text)).key().help(
        "Web proxy for the scan (http://host:port). HTTP_PROXY, HTTPS_PROXY and .netrc are \
         never read.",
    ),
    flag(Id::timeout, SECONDS)
        .key()
        .default("10")
        .help("Time limit for each request, in seconds (fractions allowed)."),
    flag(Id::time_budget, SECONDS).key().default("55").help(
        "Time limit for the whole run, in seconds: no retry starts that could not end within \
         it, and every request, feed and webhook delivery is cut to what is left, so the run \
         ends UNKNOWN naming the slow host before a monitoring core kills the check (Nagios \
         and Icinga do at 60 s). Keep it below the core's check timeout.",
    ),
    flag(
        Id::retries,
        Value("N", number("a number of retries", 0, 10)),
    )
    .key()
    .default("2")
    .help(
        "Retries after the first try when the scan fails on a transient error (timeout, reset, \
             5xx); each retry re-runs the whole scan. 0 disables.",
    ),
    flag(
        Id::backoff_factor,
        Value("SECONDS", number("a number of seconds", 0, 60)),
    )
    .key()
    .default("0.5")
    .help("Wait before retry n (n = 1, 2, ...) is FACTOR * 2^n seconds."),
    flag(
        Id::concurrency,
        Value("N", number("a number of workers", 1, 32)),
    )
    .key_in("scanner")
    .env()
    .default("5")
    .help("Host workers in multi-host runs (1-32)."),
];

const UPDATES: &[OptionSpec] = &[
    flag(Id::update_source, Value("MODE", Choice("an update source")))
        .key_named("releases.mode")
        .default("auto")
        .choices(UpdateMode::NAMES)
        .help(
            "Where the update check learns the newest release: auto (the release feed, falling \
             back to the bundled data on any failure), feed (the feed only; a failure is reported \
             as unknown), pinned (--latest-version, no network), bundled (shipped data, no \
             network), off. A failing update check never aborts the scan.",
        ),
    flag(
        Id::latest_version,
        Value("VERSION", Checked("a release version such as 4.0.8")),
    )
    .help("Newest release to compare with in pinned mode."),
    flag(Id::release_token, Value("TOKEN", Text))
        .key_named("releases.token")
        .help(
            "Token for the release feed (no scopes needed; raises the anonymous limit of 60 \
             requests an hour). Secret references allowed: secret://, file://, env://, exec://.",
        ),
    flag(Id::feed_cache_ttl, CACHE_TTL)
        .key_named("releases.cache_ttl")
        .env()
        .default("3600")
        .help(
            "How long an answer of the release feed or the advisory feed is reused from the state \
             directory without asking the feed again; a stale answer is revalidated (If-None-Match \
             / If-Modified-Since) and stands in, said so, when the feed fails. 0 disables the \
             cache. At most 2592000 (30 days).",
        ),
    flag(Id::state_dir, Value("DIR", Text))
        .key()
        .default(
            "$STATE_DIRECTORY (systemd), else $XDG_STATE_HOME/check-storage-security, else \
             ~/.local/state/check-storage-security",
        )
        .help(
            "Directory for what the plugin keeps between runs: the feed cache (in feeds/, created \
             with mode 0700) and the time of the last --self-update-check look (self-update.json). \
             Without any of these set, nothing is cached.",
        ),
    flag(Id::no_update_check, Switch).help("Same as --update-source off."),
    flag(Id::release_track, Value("TRACK", Choice("a release track")))
        .key()
        .default(crate::family::AUTO_TRACK)
        .choices(&crate::family::TRACK_CHOICES)
        .help(
            "Track the instance follows; auto takes the longest-supported track its release line \
             is on. Recommendations stay on this track.",
        ),
];

const WAIVERS: &[OptionSpec] = &[
    flag(Id::policy, Value("FILE", Text)).help(
        "Policy file (YAML, or JSON with a .json suffix) with minimum_rating, \
         required_hardenings and forbidden; an unmet requirement is CRITICAL.",
    ),
    flag(Id::ignore_hardening, Value("PATTERNS", Text))
        .env()
        .help(
            "Comma-separated waiver patterns accepted permanently: a finding id (hstsPreload), a \
             family root (versionDisclosure) or a pattern with * (versionDisclosure:X-*). Waived \
             findings stay in the result, marked ignored, and no longer count.",
        ),
    flag(Id::waive_until, Repeatable("PATTERN|EXPIRY|REASON", Text))
        .env()
        .help(
            "Time-limited waiver; EXPIRY is an ISO 8601 timestamp with a time zone, REASON must \
             not be empty. Repeatable; in the variable, one waiver per line (a reason may hold ';' \
             and ',').",
        ),
    flag(Id::waiver_warning, DAYS)
        .key()
        .help("Turn OK into WARNING when a waiver hiding a failing check ends within DAYS."),
    flag(Id::baseline, Value("FILE", Text))
        .programs(PLUGIN)
        .help("File for saving and comparing findings between runs."),
    flag(Id::warn_on_new, Switch)
        .programs(PLUGIN)
        .help("With --baseline: alert only on new or worse findings."),
    flag(
        Id::diff_format,
        Value("FORMAT", Choice("a change report format")),
    )
    .env()
    .choices(DiffFormat::NAMES)
    .programs(PLUGIN)
    .help(
        "With --baseline: print what changed since the baseline and why (the instance, our \
         knowledge, the scanner or a waiver) instead of the normal output, as text, Markdown \
         or chat blocks JSON; the exit code stays the verdict's.",
    ),
    flag(Id::verify_remediation, Repeatable("IDS", Text))
        .programs(PLUGIN)
        .help(
            "Run only the probes measuring these comma-separated finding ids and report whether \
             they pass now. Repeatable.",
        ),
];

const WEBHOOK: &[OptionSpec] = &[
    flag(Id::webhook_url, Value("URL", Text))
        .key()
        .scope(PLUGIN, PLUGIN_ONLY)
        .help("Send a notification to this address (enables the webhook)."),
    flag(Id::webhook_on, Value("LEVEL", Choice("a webhook level")))
        .key()
        .default("critical")
        .choices(NotifyOn::NAMES)
        .scope(PLUGIN, PLUGIN_ONLY)
        .help("State from which a host is notified."),
    flag(
        Id::webhook_format,
        Value("FORMAT", Choice("a webhook format")),
    )
    .key()
    .default("generic")
    .choices(BodyFormat::NAMES)
    .scope(PLUGIN, PLUGIN_ONLY)
    .help("Body format of the notification."),
    flag(Id::webhook_header, Repeatable("NAME: VALUE", Text))
        .key_named("webhook_headers")
        .scope(PLUGIN, PLUGIN_ONLY)
        .help(
            "Extra request header for the receiver; repeat the flag, or separate entries with ';' \
             in the variable.",
        ),
    flag(Id::webhook_timeout, SECONDS)
        .key()
        .default("10")
        .scope(PLUGIN, PLUGIN_ONLY)
        .help("Time limit of a delivery, independent of --timeout."),
    flag(Id::allow_private_webhooks, Switch)
        .key()
        .scope(PLUGIN, PLUGIN_ONLY)
        .help("Permit private, loopback and link-local destinations, and proxied delivery."),
];

const EXPORTER: &[OptionSpec] = &[
    flag(
        Id::prometheus_listen_port,
        Value("PORT", Port { free: true }),
    )
    .key()
    .default("9102")
    .bare("9102")
    .scope(PLUGIN, PLUGIN_ONLY)
    .help(
        "Run as a Prometheus exporter instead of scanning once: serve the metrics of every \
             target on http://ADDRESS:PORT/metrics until SIGTERM or SIGINT (exit 0). Only this \
             setting (flag, variable or key) starts the exporter, so keep it out of a \
             configuration file that single runs read. The flag alone listens on 9102; 0 takes a \
             free port; the exporter prints \"listening on ADDRESS:PORT\" on stderr at start.",
    ),
    flag(
        Id::prometheus_listen_addr,
        Value(
            "ADDRESS",
            Checked("an IP address such as 127.0.0.1, ::1 or 0.0.0.0"),
        ),
    )
    .key()
    .default("127.0.0.1")
    .scope(PLUGIN, PLUGIN_ONLY)
    .help(
        "IP address the exporter listens on (0.0.0.0 or :: for every interface). The exporter \
         has no access control: on any address but loopback, whoever can connect reads the \
         targets' names, versions and ratings (a warning on stderr at start says so). Scrapes \
         never make it scan anything but the configured targets.",
    ),
    flag(Id::scrape_interval, SECONDS)
        .key()
        .default("60")
        .scope(PLUGIN, PLUGIN_ONLY)
        .help(
            "Seconds from the start of one exporter round (a scan of every target, bounded by \
             --time-budget) to the start of the next; a round that takes longer is followed at \
             once, never overlapped. The first scrape of /metrics starts the first round and waits \
             for it up to 8 s; later scrapes answer at once from the last completed round.",
        ),
];

const SCANNER_OWN: &[OptionSpec] = &[
    flag(Id::listen, Value("ADDRESS[:PORT]", Checked(LISTEN)))
        .key_in("service")
        .default("127.0.0.1")
        .scope(SCANNER, SERVE)
        .help(
            "serve: address to listen on, with an optional port ([::1]:8811, 127.0.0.1:8811) that \
             wins over --port; any address but loopback needs --token.",
        ),
    flag(Id::port, Value("PORT", Port { free: true }))
        .key_in("service")
        .default("8811")
        .scope(SCANNER, SERVE)
        .help("serve: port to listen on; 0 picks a free one (the address is named on stderr)."),
    // web has listen settings of its own, so a file configuring both servers never makes
    // them compete for one address.
    flag(Id::web_listen, Value("ADDRESS[:PORT]", Checked(LISTEN)))
        .flag_named("listen")
        .key_named("web.listen")
        .default("127.0.0.1")
        .scope(SCANNER, WEB)
        .help(
            "web: address to listen on, with an optional port ([::1]:8080, 127.0.0.1:8080) that \
             wins over --port.",
        ),
    flag(Id::web_port, Value("PORT", Port { free: true }))
        .flag_named("port")
        .key_named("web.port")
        .default("8080")
        .scope(SCANNER, WEB)
        .help("web: port to listen on; 0 picks a free one (the address is named on stderr)."),
    flag(Id::token, Value("TOKEN", Text))
        .key_in("service")
        .scope(SCANNER, SERVE)
        .help(
            "serve: bearer token every /api/ call must present (Authorization: Bearer TOKEN), at \
             least 32 characters; give it as a secret reference (secret://, file://, env://, \
             exec://) or with the _file / _FILE suffix, never in clear.",
        ),
    flag(Id::base_url, Value("URL", Checked(BASE_URL)))
        .key_in("web")
        .default("http://<listen address>")
        .scope(SCANNER, WEB_STORE)
        .help(
            "web: the absolute URL the public API is reached at (https://scan.example.com), as its \
             pages, Location headers and discovery documents name it. With a path \
             (https://example.com/scanner) every link, asset, form, redirect and discovery URL \
             carries it, for a reverse proxy that strips the path before forwarding.",
        ),
    flag(Id::store, Value("STORE", Text))
        .key_in("web")
        .default("sqlite:<state directory>/web.sqlite")
        .scope(SCANNER, WEB_STORE)
        .help(
            "web: where scan records, the queue and the limit counters live: sqlite:PATH (one \
             node; survives restarts) or redis://HOST:PORT/DB (several nodes share it). A password \
             in the address is a secret: give it as a reference.",
        ),
    flag(Id::store_timeout, Value("SECONDS", Seconds { max: 60 }))
        .key_in("web")
        .default("2")
        .programs(SCANNER)
        .help(
            "web and limits: how long one call to the store may take (Redis: connect, read, write; \
             SQLite: waiting for another process's lock), at most 60. A store that does not answer \
             in time makes /healthz and submissions answer 503 with Retry-After; Redis is \
             connected again on the next call.",
        ),
    flag(Id::workers, Value("N", number("a number", 1, 64)))
        .key_in("web")
        .default("4")
        .scope(SCANNER, WEB)
        .help(
            "web: scans this node runs at once (1-64); submitters set no concurrency or timeout.",
        ),
    flag(
        Id::connections_per_address,
        Value("N", number("a number", 1, 16)),
    )
    .key_in("web")
    .default("8")
    .scope(SCANNER, WEB)
    .help(
        "web: connections one client holds at once, being read, queued or served (1-16 of the \
         32 that are served at once), and one network four times as many; one more is answered \
         429 too_many_connections. A client is an IPv4 address or an IPv6 /64, a network an \
         IPv4 /24 or an IPv6 /56; behind a --trusted-proxy, the forwarded address, counted per \
         request (the proxy's own requests, without X-Forwarded-For, are not counted).",
    ),
    flag(
        Id::record_ttl,
        Value("SECONDS", number("a number of seconds", 60, 31_536_000)),
    )
    .key_in("web")
    .default("604800 (7 days)")
    .scope(SCANNER, WEB)
    .help("web: how long a scan record lives after its submission; then it is gone (404)."),
    flag(
        Id::trusted_proxy,
        Repeatable(
            "CIDRS",
            Checked("a network; give CIDRs such as 10.0.0.0/8,::1/128"),
        ),
    )
    .key_in("web")
    .scope(SCANNER, WEB)
    .help(
        "web: networks (comma-separated CIDRs, 10.0.0.0/8,::1/128) whose X-Forwarded-For names \
             the client; from anyone else the socket's address counts.",
    ),
    flag(Id::allow_private_targets, Switch)
        .key_in("web")
        .scope(SCANNER, WEB)
        .help(
            "web: scan targets on private, loopback and link-local addresses too (internal \
             deployments, tests); off, the public API refuses them.",
        ),
    flag(Id::mcp_token, Value("TOKEN", Text))
        .key_in("web")
        .scope(SCANNER, WEB)
        .help(
            "web: bearer token /mcp requires (Authorization: Bearer TOKEN; 401 otherwise), at \
             least 32 characters; give it as a secret reference (secret://, file://, env://, \
             exec://), never in clear. Unset: /mcp is open like the rest of the public API.",
        ),
    flag(Id::no_mcp, Switch)
        .key_in("web")
        .scope(SCANNER, WEB)
        .help(
            "web: no /mcp endpoint, no browser tools (WebMCP) on the pages, and no MCP entry in \
             /.well-known/ai.json.",
        ),
    flag(Id::result, Repeatable("FILE", Text))
        .scope(
            SCANNER,
            &[
                Component::ReviewWaivers,
                Component::Fleet,
                Component::Snippets,
            ],
        )
        .help(
            "review-waivers, fleet and snippets: a result document (or a JSON array of them) to \
             read; repeatable.",
        ),
    flag(Id::snippets_for, Value("FORM", Choice("a snippet form")))
        .flag_named("for")
        .default("every form")
        .choices(crate::report::Form::NAMES)
        .scope(SCANNER, &[Component::Snippets])
        .help(
            "snippets: print only the fix snippets of this form (nginx, caddy, apache, traefik \
             labels, env lines, zone records).",
        ),
    // fleet's own --format: the flag names the plugin's output format row in the plugin.
    flag(
        Id::fleet_format,
        Value("FORMAT", Choice("a fleet output format")),
    )
    .flag_named("format")
    .default("text")
    .choices(FleetFormat::NAMES)
    .scope(SCANNER, &[Component::Fleet])
    .help(
        "fleet: text prints the hosts most urgent first, a table with the reason for each; \
         json prints the same judgement as one JSON document.",
    ),
];

const PROGRAM: &[OptionSpec] = &[
    flag(Id::config, Value("FILE", Text))
        .env_named("COS_CONFIG_FILE")
        .default("search list")
        .help(
            "Configuration file (JSON with a .json suffix, otherwise YAML). Without it the first \
             of ./.env.json, ./check-storage-security.yml, \
             ~/.config/check-storage-security/.env.json, \
             /etc/check-storage-security/{config.json,config.yml,config.yaml} is read.",
        ),
    flag(Id::configure, Switch).programs(PLUGIN).help(
        "Interactive wizard writing a JSON configuration file with mode 0600, atomically, \
         asking before it replaces one: it asks for the host and offers the optional groups \
         (thresholds or a profile, connection, hardening, webhook, releases, output format); \
         every answer is checked as a run would read it; secrets are taken only as references \
         (env://, file://, secret://). --config names the file (otherwise the question offers \
         ~/.config/check-storage-security/.env.json, as root \
         /etc/check-storage-security/config.json). Without a terminal the answers are read \
         line by line from standard input. Ends with the command line that uses the file; \
         exits 0 when the file is written, 3 when nothing is (a refused answer without a \
         terminal, the end of the input, a file kept).",
    ),
    flag(Id::self_update_check, Switch)
        .key_named("self_update.check")
        .programs(PLUGIN)
        .help(
            "Look up the newest release of this plugin in its release feed (--self-update-url) at \
             most once a day (the time of the last look is kept in the state directory; without \
             one there is no look-up) and, while a newer release exists, add one line naming it: \
             before the performance data in the default format, after the tally with --format \
             summary, on stderr in the machine formats. A failing look-up is silent (shown with \
             --debug) and never changes the exit code.",
        ),
    flag(
        Id::self_update_url,
        Value(
            "URL",
            Checked("an http(s) address; give the release feed's URL"),
        ),
    )
    .key_named("self_update.url")
    .default("https://api.github.com/repos/storage-security/check-storage-security/releases")
    .programs(PLUGIN)
    .help(
        "Where this plugin's releases are published (GitHub releases API shape: tags vX.Y.Z, \
         assets check-storage-security-X.Y.Z-TARGET[.tar.gz] and SHA256SUMS), for \
         --self-update-check and --upgrade-self. --upgrade-self needs https (plain http only \
         on loopback).",
    ),
    flag(Id::upgrade_self, Switch).programs(PLUGIN).help(
        "Upgrade this program to the newest release and scan nothing: download the asset for \
         this platform (at most 64 MiB), verify its SHA-256 against the release's SHA256SUMS \
         (refused on a mismatch or a missing sum), check that it runs and reports the new \
         version, and rename it over the running binary (its mode kept); a \
         check-storage-scanner beside it is upgraded in the same step. A binary installed by a \
         package manager (dpkg, rpm) is refused with the command to use instead. \
         \"--upgrade-self check\" (or --check-only) shows what it would do and changes \
         nothing. Exit 0 when done or already current, 3 with one line otherwise. A flag only: \
         never read from a variable or the configuration file.",
    ),
    flag(Id::check_only, Switch)
        .programs(PLUGIN)
        .help("With --upgrade-self: show what it would do and change nothing."),
    flag(Id::version, Switch).short('V').help(
        "Print the program's version and the date its bundled release and advisory data were \
         last refreshed.",
    ),
    flag(Id::help, Switch).short('h').help("Print this manual."),
];

const CONFIG_ONLY: &[OptionSpec] = &[
    setting(Id::verify_tls, BOOL)
        .key_in("scanner")
        .default("true")
        .help("false is the same as --insecure."),
    setting(Id::target_port, Value("PORT", Port { free: false }))
        .key_in("scanner")
        .default("443 (80 for plain HTTP)")
        .help("Port used for targets written without one."),
    setting(Id::tls_min_days, DAYS)
        .key_in("scanner")
        .default("14")
        .help("cert_days_left warns at or below this many days."),
    setting(Id::use_release_schedule, BOOL)
        .key_in("scanner")
        .default("true")
        .help("false disables end-of-life detection (no lifecycle line, no support_days_left)."),
    setting(Id::release_schedule, Value("FILE", Text))
        .key_in("scanner")
        .help("Release schedule file used instead of the bundled one."),
    setting(Id::vulnerability_db, Repeatable("FILES", Text))
        .key_in("scanner")
        .help(
            "Advisory files (native, GitHub advisory or OSV JSON) merged after the bundled data; \
             the variable separates files with ','.",
        ),
    setting(Id::vulnerability_feed, Value("URL", Text))
        .key_in("scanner")
        .help(
            "Advisory feed fetched over HTTP and merged last; unreachable means logged and \
             ignored.",
        ),
    setting(Id::extra_checks_rating, BOOL)
        .key_in("scanner")
        .default("true")
        .help("false reports failed additional checks without letting them cap the rating."),
    setting(Id::check_debug_ports, BOOL)
        .key_in("scanner")
        .default("true")
        .help("false is the same as --no-debug-ports."),
    setting(
        Id::debug_ports,
        Value("PORTS", Checked("a list of ports (1-65535)")),
    )
    .key_in("scanner")
    .default("9205,9141,9124,9134,9239")
    .help("Debug ports to probe (a list in the file, ',' in the variable)."),
    setting(Id::debug_port_timeout, SECONDS)
        .key_in("scanner")
        .default("3")
        .help("Connect timeout of one debug-port probe."),
    setting(Id::ipv6_enabled, BOOL)
        .key_in("scanner")
        .default("true")
        .help("false skips IPv6 addresses with --all-addresses."),
    setting(Id::check_login_throttling, BOOL)
        .key_in("scanner")
        .default("false")
        .help("true is the same as --login-throttling."),
    setting(Id::check_all_addresses, BOOL)
        .key_in("scanner")
        .default("false")
        .help("true is the same as --all-addresses."),
    setting(
        Id::resolve,
        Value(
            "PINS",
            Checked("a list of pins such as cloud.example=192.0.2.1,192.0.2.2"),
        ),
    )
    .key_in("scanner")
    .help(
        "Pin names to addresses for every direct connection, like curl --resolve: \
         name=address,address;name2=address. Useful to check the nodes behind a name before \
         DNS points at them.",
    ),
    setting(
        Id::dns_server,
        Value(
            "ADDRESS",
            Checked("a DNS server address such as 192.0.2.53 or 192.0.2.53:53"),
        ),
    )
    .key_in("scanner")
    .default("the first nameserver of /etc/resolv.conf")
    .help(
        "DNS server (address or address:port) asked for the CAA records of the scanned name \
         and whether its zone is signed (DNSSEC); a validating resolver also says whether the \
         signatures validate. Never asked about names public DNS cannot know (localhost, \
         .local, .internal, .home.arpa, .test, a single label, ...).",
    ),
    setting(Id::releases_url, Value("URL", Text))
        .key_named("releases.url")
        .help(
            "Release feed (GitHub releases API shape) used by the update check in auto and feed \
             modes. Default: the product's own \
             (api.github.com/repos/opencloud-eu/opencloud/releases or \
             api.github.com/repos/owncloud/ocis/releases). {product} in the URL becomes the \
             product's id (opencloud, ocis); without it, the one feed serves every product.",
        ),
    setting(Id::cache_ttl, CACHE_TTL)
        .key_in("service")
        .default("900")
        .scope(BOTH, SERVE)
        .help("Result cache lifetime of check-storage-scanner serve."),
    setting(
        Id::now,
        Value(
            "TIMESTAMP",
            Checked("an RFC 3339 timestamp such as 2026-11-22T03:00:00Z"),
        ),
    )
    .env()
    .help(
        "Treat this RFC 3339 timestamp as the current time (reproducible reports and tests); \
         check-storage-scanner web's clock (record expiry, limits, leases) starts there and \
         runs on. Variable only.",
    ),
];

/// Looks a row up by its identifier. Panics on a typo in our own code, never on operator input.
/// The row of `id` (every id has one: see [`Id`]).
pub fn spec(id: Id) -> &'static OptionSpec {
    let found = OPTIONS.iter().find(|o| o.option == id);
    found.expect("every option::Id has a row (checked at compile time)")
}

/// The row named `name` (as an operator or a document writes it).
pub fn named(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|o| o.id == name)
}

pub fn by_long(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|o| o.long == Some(name))
}

pub fn by_short(c: char) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|o| o.short == Some(c))
}

pub fn by_config_key(key: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|o| o.config_key == Some(key))
}

/// The row the flag `--name` stands for in `program`, else in another program (which then
/// refuses it by name): `--format` is the plugin's output format and `fleet`'s.
pub fn by_long_in(name: &str, program: Program) -> Option<&'static OptionSpec> {
    OPTIONS
        .iter()
        .find(|o| o.long == Some(name) && o.programs.contains(&program))
        .or_else(|| by_long(name))
}

/// The row the flag `--name` stands for in `component` of `program`: `--listen` is the scan
/// service's address under `serve` and the public API's under `web`. `None` when no row of that
/// flag is the component's.
pub fn by_long_for(
    name: &str,
    program: Program,
    component: Component,
) -> Option<&'static OptionSpec> {
    OPTIONS
        .iter()
        .find(|o| o.long == Some(name) && o.programs.contains(&program) && o.read_by(component))
}

impl OptionSpec {
    /// What the value is (`Text` for a switch and each value of a repeatable setting).
    pub fn ty(&self) -> Type {
        match self.kind {
            Value(_, ty) | Repeatable(_, ty) => ty,
            Switch => Text,
        }
    }

    /// The placeholder of its value (`RATING`); `None` for a switch.
    pub fn meta(&self) -> Option<&'static str> {
        match self.kind {
            Value(meta, _) | Repeatable(meta, _) => Some(meta),
            Switch => None,
        }
    }

    /// How the flag is written: `-c` and `--critical`.
    pub fn forms(&self) -> Vec<String> {
        let short = self.short.map(|c| format!("-{c}"));
        short
            .into_iter()
            .chain(self.long.map(|l| format!("--{l}")))
            .collect()
    }

    /// Whether `component` reads this setting at all.
    pub fn read_by(&self, component: Component) -> bool {
        self.components.is_empty() || self.components.contains(&component)
    }

    /// The default a run takes, without the remark the manual shows after it.
    pub fn default_value(&self) -> Option<&'static str> {
        self.default.map(|d| d.split(" (").next().unwrap_or(d))
    }

    /// How the operator writes this setting on the command line (`--timeout`), or its config key.
    pub fn display_name(&self) -> String {
        match (self.long, self.config_key, self.env.first()) {
            (Some(long), _, _) => format!("--{long}"),
            (None, Some(key), _) => key.to_string(),
            (None, None, Some(env)) => env.to_string(),
            (None, None, None) => self.id.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn identifiers_flags_variables_and_keys_are_unique() {
        let mut ids = HashSet::new();
        let mut shorts = HashSet::new();
        let mut envs = HashSet::new();
        let mut keys = HashSet::new();
        for o in OPTIONS.iter() {
            assert!(ids.insert(o.id), "duplicate id {}", o.id);
            // A flag may name several rows when no component of a program reads two of them.
            if let Some(l) = o.long {
                for other in OPTIONS.iter().filter(|p| p.long == Some(l) && p.id != o.id) {
                    let programs_apart = o.programs.iter().all(|p| !other.programs.contains(p));
                    assert!(
                        programs_apart
                            || (!o.components.is_empty()
                                && !other.components.is_empty()
                                && o.components.iter().all(|c| !other.read_by(*c))),
                        "flag --{l} of {} and {} is read by one component twice",
                        o.id,
                        other.id
                    );
                }
            }
            if let Some(s) = o.short {
                assert!(shorts.insert(s), "duplicate short flag {s}");
            }
            for e in o.env {
                assert!(envs.insert(*e), "duplicate variable {e}");
                assert!(e.starts_with("COS_"), "{e} lacks the COS_ prefix");
            }
            if let Some(k) = o.config_key {
                assert!(keys.insert(k), "duplicate key {k}");
            }
        }
    }

    #[test]
    fn names_are_derived_from_the_id_unless_written_out() {
        let names = |id: &str| {
            let o = named(id).unwrap();
            (o.long, o.config_key, o.env.to_vec())
        };
        let time_budget = (
            Some("time-budget"),
            Some("time_budget"),
            vec!["COS_TIME_BUDGET"],
        );
        assert_eq!(names("time_budget"), time_budget);
        assert_eq!(
            names("store"),
            (Some("store"), Some("web.store"), vec!["COS_WEB_STORE"])
        );
        let concurrency = vec!["COS_CONCURRENCY", "COS_SCANNER_CONCURRENCY"];
        assert_eq!(
            names("concurrency"),
            (
                Some("concurrency"),
                Some("scanner.concurrency"),
                concurrency
            )
        );
        assert_eq!(names("format"), (Some("format"), None, vec!["COS_FORMAT"]));
        assert_eq!(names("snippets_for"), (Some("for"), None, vec![]));
        assert_eq!(
            names("config"),
            (Some("config"), None, vec!["COS_CONFIG_FILE"])
        );
        assert_eq!(names("now"), (None, None, vec!["COS_NOW"]));
    }

    #[test]
    fn config_keys_map_onto_their_variables() {
        // Spec: nested keys join with underscores, upper-cased, prefixed COS_.
        for o in OPTIONS.iter() {
            if let Some(key) = o.config_key {
                let derived = format!("COS_{}", key.replace('.', "_").to_ascii_uppercase());
                assert!(
                    o.env.contains(&derived.as_str()),
                    "{key} should be readable as {derived}"
                );
            }
        }
    }

    #[test]
    fn every_known_key_of_the_spec_is_declared() {
        for key in [
            "host",
            "check_hardening",
            "profile",
            "eol_warning",
            "waiver_warning",
            "scanner.verify_tls",
            "scanner.target_port",
            "scanner.tls_min_days",
            "scanner.check_debug_ports",
            "scanner.debug_ports",
            "scanner.debug_port_timeout",
            "scanner.concurrency",
            "scanner.use_release_schedule",
            "scanner.release_schedule",
            "scanner.vulnerability_db",
            "scanner.vulnerability_feed",
            "scanner.extra_checks_rating",
            "scanner.ipv6_enabled",
            "scanner.check_login_throttling",
            "scanner.check_all_addresses",
            "releases.mode",
            "releases.token",
            "service.cache_ttl",
        ] {
            assert!(by_config_key(key).is_some(), "spec key {key} missing");
        }
    }
}
