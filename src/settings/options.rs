//! The option table: every setting of the plugin, declared once. The command-line parser, the
//! environment and configuration-file layering, `-h`, and the man page are all driven by it, so a
//! new option is one row here plus its typed field in `Settings`.

/// How a setting takes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A switch: present on the command line means on; variables use the boolean rules.
    Switch,
    /// Takes one value (`--timeout 5`) of a type; a later source replaces an earlier one.
    Value(&'static str, Type),
    /// May be given several times; all occurrences (text) are kept, in order.
    Repeatable(&'static str),
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

/// One row of the option table.
#[derive(Debug)]
pub struct OptionSpec {
    /// Stable identifier used by the code to look the setting up.
    pub id: &'static str,
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
    pub group: Group,
    /// The programs whose command line takes the flag.
    pub programs: &'static [Program],
    /// The components that read the setting; empty: every component of its programs. Any
    /// other refuses the flag by name and never reads the setting from the environment or the
    /// file, so it never resolves a secret it does not use.
    pub components: &'static [Component],
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

/// Sections of the manual.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Target,
    Verdict,
    Output,
    Checks,
    Transport,
    Updates,
    Waivers,
    Webhook,
    Exporter,
    /// The scanner's own settings: the service's address and token, review-waivers' input.
    Scanner,
    Program,
    /// Settings that exist only in the configuration file and as variables.
    ConfigOnly,
}

impl Group {
    pub const ORDER: [Group; 12] = [
        Group::Target,
        Group::Verdict,
        Group::Checks,
        Group::Output,
        Group::Transport,
        Group::Updates,
        Group::Waivers,
        Group::Webhook,
        Group::Exporter,
        Group::Scanner,
        Group::Program,
        Group::ConfigOnly,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Group::Target => "Target",
            Group::Verdict => "Verdict and thresholds",
            Group::Checks => "What is checked",
            Group::Output => "Output",
            Group::Transport => "Connection",
            Group::Updates => "Releases and updates",
            Group::Waivers => "Waivers, policy and baseline",
            Group::Webhook => "Webhook notification",
            Group::Exporter => "Metrics exporter",
            Group::Scanner => "Scan service and waiver review (check-storage-scanner)",
            Group::Program => "The program itself",
            Group::ConfigOnly => "Configuration-file settings (also as COS_* variables)",
        }
    }
}

use Kind::{Repeatable, Switch, Value};
use Type::{Bool, Checked, Choice, Port, Seconds, Text};

/// `Type::Number` on one line.
const fn number(what: &'static str, min: i64, max: i64) -> Type {
    Type::Number { what, min, max }
}
const RATING: Type = number("a rating", 0, 5);
const DAYS: Type = number("a number of days", 0, 3650);
const SECONDS: Type = Seconds { max: 3600 };

const fn row(id: &'static str, help: &'static str) -> OptionSpec {
    OptionSpec {
        id,
        long: None,
        short: None,
        env: &[],
        config_key: None,
        kind: Switch,
        default: None,
        bare: None,
        choices: &[],
        help,
        group: Group::Program,
        programs: BOTH,
        components: &[],
    }
}

/// Every setting, in manual order within its group.
pub static OPTIONS: &[OptionSpec] = &[
    // --- Target -------------------------------------------------------------------------
    OptionSpec {
        long: Some("host"),
        short: Some('H'),
        env: &["COS_HOST"],
        config_key: Some("host"),
        kind: Repeatable("TARGETS"),
        group: Group::Target,
        // The scanner takes its target as `scan <host>`; `serve` from its requests.
        programs: PLUGIN,
        ..row(
            "host",
            "Comma-separated targets: hostname, IPv4, [IPv6] or URL, each with an optional port \
             (cloud.example.com, 192.0.2.10:9200, [2001:db8::1]:443, https://cloud.example.com/; \
             a link-local address with its interface: [fe80::1%25eth0]:9200). \
             Repeat -H to add more; a target named twice is scanned once. Written literally, \
             never as a secret reference (a target goes to DNS). Required.",
        )
    },
    // --- Verdict ------------------------------------------------------------------------
    OptionSpec {
        long: Some("warning"),
        short: Some('w'),
        env: &["COS_WARNING"],
        config_key: Some("warning"),
        kind: Value("RATING", RATING),
        default: Some("3"),
        group: Group::Verdict,
        ..row(
            "warning",
            "Rating (0-5) at or below which the state is WARNING.",
        )
    },
    OptionSpec {
        long: Some("critical"),
        short: Some('c'),
        env: &["COS_CRITICAL"],
        config_key: Some("critical"),
        kind: Value("RATING", RATING),
        default: Some("1"),
        group: Group::Verdict,
        ..row(
            "critical",
            "Rating (0-5) at or below which the state is CRITICAL; must not exceed --warning. \
             A single critical finding caps the rating at 2 (D): use --critical 2 to page on it.",
        )
    },
    OptionSpec {
        long: Some("profile"),
        env: &["COS_PROFILE"],
        config_key: Some("profile"),
        kind: Value("NAME", Choice("a profile")),
        choices: &["strict", "ops", "lenient"],
        group: Group::Verdict,
        ..row(
            "profile",
            "Threshold profile, the weakest source: strict (warning 4, critical 2, hardening, \
             update and 90-day end-of-life warnings), ops (3, 1, hardening, 30 days), lenient (2, 0). \
             Anything set explicitly wins over the profile.",
        )
    },
    OptionSpec {
        long: Some("check-hardening"),
        env: &["COS_CHECK_HARDENING"],
        config_key: Some("check_hardening"),
        group: Group::Verdict,
        ..row(
            "check_hardening",
            "Evaluate hardening measures and security headers; a missing measure turns OK into \
             WARNING (never lowers a worse state).",
        )
    },
    OptionSpec {
        long: Some("update-warning"),
        env: &["COS_UPDATE_WARNING"],
        config_key: Some("update_warning"),
        group: Group::Verdict,
        ..row(
            "update_warning",
            "A pending update on the instance's track turns OK into WARNING.",
        )
    },
    OptionSpec {
        long: Some("eol-warning"),
        env: &["COS_EOL_WARNING"],
        config_key: Some("eol_warning"),
        kind: Value("DAYS", DAYS),
        group: Group::Verdict,
        ..row(
            "eol_warning",
            "Turn OK into WARNING when the release line has DAYS or fewer days of support left; \
             the message names the date and the upgrade target: the newest release of a line \
             still supported after the window, and its track.",
        )
    },
    // --- Checks -------------------------------------------------------------------------
    OptionSpec {
        long: Some("no-extra-checks"),
        group: Group::Checks,
        ..row(
            "no_extra_checks",
            "Disable the additional probes (exposed files, debug services, CORS, ...).",
        )
    },
    OptionSpec {
        long: Some("no-debug-ports"),
        group: Group::Checks,
        ..row("no_debug_ports", "Do not probe the debug ports.")
    },
    OptionSpec {
        long: Some("all-addresses"),
        env: &["COS_ALL_ADDRESSES"],
        group: Group::Checks,
        ..row(
            "all_addresses",
            "Repeat version, header, hardening and demo-account checks against every address the \
             name resolves to (Host and SNI keep the name).",
        )
    },
    OptionSpec {
        long: Some("login-throttling"),
        env: &["COS_LOGIN_THROTTLING"],
        group: Group::Checks,
        ..row(
            "login_throttling",
            "Send six failed sign-ins for an account that cannot exist and report whether the \
             instance throttles them; never rated.",
        )
    },
    // --- Output -------------------------------------------------------------------------
    OptionSpec {
        programs: PLUGIN,
        long: Some("format"),
        env: &["COS_FORMAT"],
        kind: Value("FORMAT", Choice("an output format")),
        default: Some("the monitoring line"),
        choices: &[
            "metrics",
            "otlp",
            "agentlocal",
            "summary",
            "json",
            "sarif",
            "junit",
        ],
        group: Group::Output,
        ..row(
            "format",
            "Output format. Without it: the monitoring line, detail lines and performance data. \
             The exit code keeps its 0/1/2/3 meaning in every format.",
        )
    },
    OptionSpec {
        long: Some("debug"),
        short: Some('d'),
        env: &["COS_DEBUG"],
        group: Group::Output,
        ..row(
            "debug",
            "Print the rating explanation, the remediation plan and the explanation of every \
             finding to stdout, and log at DEBUG level to stderr.",
        )
    },
    // --- Transport ----------------------------------------------------------------------
    OptionSpec {
        long: Some("insecure"),
        env: &["COS_INSECURE"],
        group: Group::Transport,
        ..row(
            "insecure",
            "Skip the verified-HTTPS step. An untrusted chain is still listed but no longer counts \
             against the rating.",
        )
    },
    OptionSpec {
        long: Some("ca-file"),
        env: &["COS_SCANNER_TLS_CA_FILE"],
        config_key: Some("scanner.tls_ca_file"),
        kind: Value("FILE", Text),
        group: Group::Transport,
        ..row(
            "ca_file",
            "PEM bundle of a private CA to trust in addition to the public roots. CA-bundle \
             variables (SSL_CERT_FILE, ...) are never read.",
        )
    },
    OptionSpec {
        long: Some("proxy"),
        env: &["COS_PROXY"],
        config_key: Some("proxy"),
        kind: Value("URL", Text),
        group: Group::Transport,
        ..row(
            "proxy",
            "Web proxy for the scan (http://host:port). HTTP_PROXY, HTTPS_PROXY and .netrc are \
             never read.",
        )
    },
    OptionSpec {
        long: Some("timeout"),
        env: &["COS_TIMEOUT"],
        config_key: Some("timeout"),
        kind: Value("SECONDS", SECONDS),
        default: Some("10"),
        group: Group::Transport,
        ..row(
            "timeout",
            "Time limit for each request, in seconds (fractions allowed).",
        )
    },
    OptionSpec {
        long: Some("time-budget"),
        env: &["COS_TIME_BUDGET"],
        config_key: Some("time_budget"),
        kind: Value("SECONDS", SECONDS),
        default: Some("55"),
        group: Group::Transport,
        ..row(
            "time_budget",
            "Time limit for the whole run, in seconds: no retry starts that could not end \
             within it, and every request, feed and webhook delivery is cut to what is left, so \
             the run ends UNKNOWN naming the slow host before a monitoring core kills the check \
             (Nagios and Icinga do at 60 s). Keep it below the core's check timeout.",
        )
    },
    OptionSpec {
        long: Some("retries"),
        env: &["COS_RETRIES"],
        config_key: Some("retries"),
        kind: Value("N", number("a number of retries", 0, 10)),
        default: Some("2"),
        group: Group::Transport,
        ..row(
            "retries",
            "Retries after the first try when the scan fails on a transient error (timeout, reset, \
             5xx); each retry re-runs the whole scan. 0 disables.",
        )
    },
    OptionSpec {
        long: Some("backoff-factor"),
        env: &["COS_BACKOFF_FACTOR"],
        config_key: Some("backoff_factor"),
        kind: Value("SECONDS", number("a number of seconds", 0, 60)),
        default: Some("0.5"),
        group: Group::Transport,
        ..row(
            "backoff_factor",
            "Wait before retry n (n = 1, 2, ...) is FACTOR * 2^n seconds.",
        )
    },
    OptionSpec {
        long: Some("concurrency"),
        env: &["COS_CONCURRENCY", "COS_SCANNER_CONCURRENCY"],
        config_key: Some("scanner.concurrency"),
        kind: Value("N", number("a number of workers", 1, 32)),
        default: Some("5"),
        group: Group::Transport,
        ..row("concurrency", "Host workers in multi-host runs (1-32).")
    },
    // --- Updates ------------------------------------------------------------------------
    OptionSpec {
        long: Some("update-source"),
        env: &["COS_RELEASES_MODE"],
        config_key: Some("releases.mode"),
        kind: Value("MODE", Choice("an update source")),
        default: Some("auto"),
        choices: &["auto", "feed", "pinned", "bundled", "off"],
        group: Group::Updates,
        ..row(
            "update_source",
            "Where the update check learns the newest release: auto (the release feed, falling back \
             to the bundled data on any failure), feed (the feed only; a failure is reported as \
             unknown), pinned (--latest-version, no network), bundled (shipped data, no network), \
             off. A failing update check never aborts the scan.",
        )
    },
    OptionSpec {
        long: Some("latest-version"),
        kind: Value("VERSION", Checked("a release version such as 4.0.8")),
        group: Group::Updates,
        ..row(
            "latest_version",
            "Newest release to compare with in pinned mode.",
        )
    },
    OptionSpec {
        long: Some("release-token"),
        env: &["COS_RELEASES_TOKEN"],
        config_key: Some("releases.token"),
        kind: Value("TOKEN", Text),
        group: Group::Updates,
        ..row(
            "release_token",
            "Token for the release feed (no scopes needed; raises the anonymous limit of 60 \
             requests an hour). Secret references allowed: secret://, file://, env://, exec://.",
        )
    },
    OptionSpec {
        long: Some("feed-cache-ttl"),
        env: &["COS_FEED_CACHE_TTL", "COS_RELEASES_CACHE_TTL"],
        config_key: Some("releases.cache_ttl"),
        kind: Value("SECONDS", number("a number of seconds", 0, 2_592_000)),
        default: Some("3600"),
        group: Group::Updates,
        ..row(
            "feed_cache_ttl",
            "How long an answer of the release feed or the advisory feed is reused from the \
             state directory without asking the feed again; a stale answer is revalidated \
             (If-None-Match / If-Modified-Since) and stands in, said so, when the feed fails. \
             0 disables the cache. At most 2592000 (30 days).",
        )
    },
    OptionSpec {
        long: Some("state-dir"),
        env: &["COS_STATE_DIR"],
        config_key: Some("state_dir"),
        kind: Value("DIR", Text),
        default: Some(
            "$STATE_DIRECTORY (systemd), else $XDG_STATE_HOME/check-storage-security, else \
             ~/.local/state/check-storage-security",
        ),
        group: Group::Updates,
        ..row(
            "state_dir",
            "Directory for what the plugin keeps between runs: the feed cache (in feeds/, \
             created with mode 0700) and the time of the last --self-update-check look \
             (self-update.json). Without any of these set, nothing is cached.",
        )
    },
    OptionSpec {
        long: Some("no-update-check"),
        group: Group::Updates,
        ..row("no_update_check", "Same as --update-source off.")
    },
    OptionSpec {
        long: Some("release-track"),
        env: &["COS_RELEASE_TRACK"],
        config_key: Some("release_track"),
        kind: Value("TRACK", Choice("a release track")),
        default: Some("auto"),
        choices: &["auto", "rolling", "production", "lts"],
        group: Group::Updates,
        ..row(
            "release_track",
            "Track the instance follows; auto takes the longest-supported track its release line \
             is on. Recommendations stay on this track.",
        )
    },
    // --- Waivers, policy, baseline --------------------------------------------------------
    OptionSpec {
        long: Some("policy"),
        kind: Value("FILE", Text),
        group: Group::Waivers,
        ..row(
            "policy",
            "Policy file (YAML, or JSON with a .json suffix) with minimum_rating, \
             required_hardenings and forbidden; an unmet requirement is CRITICAL.",
        )
    },
    OptionSpec {
        long: Some("ignore-hardening"),
        env: &["COS_IGNORE_HARDENING"],
        kind: Value("PATTERNS", Text),
        group: Group::Waivers,
        ..row(
            "ignore_hardening",
            "Comma-separated waiver patterns accepted permanently: a finding id (hstsPreload), a \
             family root (versionDisclosure) or a pattern with * (versionDisclosure:X-*). Waived \
             findings stay in the result, marked ignored, and no longer count.",
        )
    },
    OptionSpec {
        long: Some("waive-until"),
        env: &["COS_WAIVE_UNTIL"],
        kind: Repeatable("PATTERN|EXPIRY|REASON"),
        group: Group::Waivers,
        ..row(
            "waive_until",
            "Time-limited waiver; EXPIRY is an ISO 8601 timestamp with a time zone, REASON must not \
             be empty. Repeatable; in the variable, one waiver per line (a reason may hold ';' and \
             ',').",
        )
    },
    OptionSpec {
        long: Some("waiver-warning"),
        env: &["COS_WAIVER_WARNING"],
        config_key: Some("waiver_warning"),
        kind: Value("DAYS", DAYS),
        group: Group::Waivers,
        ..row(
            "waiver_warning",
            "Turn OK into WARNING when a waiver hiding a failing check ends within DAYS.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("baseline"),
        kind: Value("FILE", Text),
        group: Group::Waivers,
        ..row(
            "baseline",
            "File for saving and comparing findings between runs.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("warn-on-new"),
        group: Group::Waivers,
        ..row(
            "warn_on_new",
            "With --baseline: alert only on new or worse findings.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("diff-format"),
        env: &["COS_DIFF_FORMAT"],
        kind: Value("FORMAT", Choice("a change report format")),
        choices: &["text", "markdown", "chatblocks"],
        group: Group::Waivers,
        ..row(
            "diff_format",
            "With --baseline: print what changed since the baseline and why (the instance, our \
             knowledge, the scanner or a waiver) instead of the normal output, as text, Markdown \
             or chat blocks JSON; the exit code stays the verdict's.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("verify-remediation"),
        kind: Repeatable("IDS"),
        group: Group::Waivers,
        ..row(
            "verify_remediation",
            "Run only the probes measuring these comma-separated finding ids and report whether \
             they pass now. Repeatable.",
        )
    },
    // --- Webhook ------------------------------------------------------------------------
    OptionSpec {
        programs: PLUGIN,
        long: Some("webhook-url"),
        env: &["COS_WEBHOOK_URL"],
        config_key: Some("webhook_url"),
        kind: Value("URL", Text),
        group: Group::Webhook,
        components: PLUGIN_ONLY,
        ..row(
            "webhook_url",
            "Send a notification to this address (enables the webhook).",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("webhook-on"),
        env: &["COS_WEBHOOK_ON"],
        config_key: Some("webhook_on"),
        kind: Value("LEVEL", Choice("a webhook level")),
        default: Some("critical"),
        choices: &["critical", "warning", "unknown", "always"],
        group: Group::Webhook,
        components: PLUGIN_ONLY,
        ..row("webhook_on", "State from which a host is notified.")
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("webhook-format"),
        env: &["COS_WEBHOOK_FORMAT"],
        config_key: Some("webhook_format"),
        kind: Value("FORMAT", Choice("a webhook format")),
        default: Some("generic"),
        choices: &[
            "generic",
            "chatblocks",
            "chatembed",
            "pushtopic",
            "pushserver",
        ],
        group: Group::Webhook,
        components: PLUGIN_ONLY,
        ..row("webhook_format", "Body format of the notification.")
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("webhook-header"),
        env: &["COS_WEBHOOK_HEADERS"],
        config_key: Some("webhook_headers"),
        kind: Repeatable("NAME: VALUE"),
        group: Group::Webhook,
        components: PLUGIN_ONLY,
        ..row(
            "webhook_header",
            "Extra request header for the receiver; repeat the flag, or separate entries with ';' \
             in the variable.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("webhook-timeout"),
        env: &["COS_WEBHOOK_TIMEOUT"],
        config_key: Some("webhook_timeout"),
        kind: Value("SECONDS", SECONDS),
        default: Some("10"),
        group: Group::Webhook,
        components: PLUGIN_ONLY,
        ..row(
            "webhook_timeout",
            "Time limit of a delivery, independent of --timeout.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("allow-private-webhooks"),
        env: &["COS_ALLOW_PRIVATE_WEBHOOKS"],
        config_key: Some("allow_private_webhooks"),
        group: Group::Webhook,
        components: PLUGIN_ONLY,
        ..row(
            "allow_private_webhooks",
            "Permit private, loopback and link-local destinations, and proxied delivery.",
        )
    },
    // --- Exporter -----------------------------------------------------------------------
    OptionSpec {
        programs: PLUGIN,
        long: Some("prometheus-listen-port"),
        env: &["COS_PROMETHEUS_LISTEN_PORT"],
        config_key: Some("prometheus_listen_port"),
        kind: Value("PORT", Port { free: true }),
        default: Some("9102"),
        bare: Some("9102"),
        group: Group::Exporter,
        components: PLUGIN_ONLY,
        ..row(
            "prometheus_listen_port",
            "Run as a Prometheus exporter instead of scanning once: serve the metrics of every \
             target on http://ADDRESS:PORT/metrics until SIGTERM or SIGINT (exit 0). Only this \
             setting (flag, variable or key) starts the exporter, so keep it out of a \
             configuration file that single runs read. The flag alone listens on 9102; 0 takes \
             a free port; the exporter prints \"listening on ADDRESS:PORT\" on stderr at \
             start.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("prometheus-listen-addr"),
        env: &["COS_PROMETHEUS_LISTEN_ADDR"],
        config_key: Some("prometheus_listen_addr"),
        kind: Value(
            "ADDRESS",
            Checked("an IP address such as 127.0.0.1, ::1 or 0.0.0.0"),
        ),
        default: Some("127.0.0.1"),
        group: Group::Exporter,
        components: PLUGIN_ONLY,
        ..row(
            "prometheus_listen_addr",
            "IP address the exporter listens on (0.0.0.0 or :: for every interface). The \
             exporter has no access control: on any address but loopback, whoever can connect \
             reads the targets' names, versions and ratings (a warning on stderr at start says \
             so). Scrapes never make it scan anything but the configured targets.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("scrape-interval"),
        env: &["COS_SCRAPE_INTERVAL"],
        config_key: Some("scrape_interval"),
        kind: Value("SECONDS", SECONDS),
        default: Some("60"),
        group: Group::Exporter,
        components: PLUGIN_ONLY,
        ..row(
            "scrape_interval",
            "Seconds from the start of one exporter round (a scan of every target, bounded by \
             --time-budget) to the start of the next; a round that takes longer is followed \
             at once, never overlapped. The first scrape of /metrics starts the first round \
             and waits for it up to 8 s; later scrapes answer at once from the last completed \
             round.",
        )
    },
    // --- Program ------------------------------------------------------------------------
    // --- Scanner ------------------------------------------------------------------------
    OptionSpec {
        long: Some("listen"),
        env: &["COS_SERVICE_LISTEN"],
        config_key: Some("service.listen"),
        kind: Value("ADDRESS[:PORT]", Checked(LISTEN)),
        default: Some("127.0.0.1"),
        group: Group::Scanner,
        programs: SCANNER,
        components: SERVE,
        ..row(
            "listen",
            "serve: address to listen on, with an optional port ([::1]:8811, 127.0.0.1:8811) \
             that wins over --port; any address but loopback needs --token.",
        )
    },
    OptionSpec {
        long: Some("port"),
        env: &["COS_SERVICE_PORT"],
        config_key: Some("service.port"),
        kind: Value("PORT", Port { free: true }),
        default: Some("8811"),
        group: Group::Scanner,
        programs: SCANNER,
        components: SERVE,
        ..row(
            "port",
            "serve: port to listen on; 0 picks a free one (the address is named on stderr).",
        )
    },
    // web has listen settings of its own, so a file configuring both servers never makes
    // them compete for one address.
    OptionSpec {
        long: Some("listen"),
        env: &["COS_WEB_LISTEN"],
        config_key: Some("web.listen"),
        kind: Value("ADDRESS[:PORT]", Checked(LISTEN)),
        default: Some("127.0.0.1"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "web_listen",
            "web: address to listen on, with an optional port ([::1]:8080, 127.0.0.1:8080) \
             that wins over --port.",
        )
    },
    OptionSpec {
        long: Some("port"),
        env: &["COS_WEB_PORT"],
        config_key: Some("web.port"),
        kind: Value("PORT", Port { free: true }),
        default: Some("8080"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "web_port",
            "web: port to listen on; 0 picks a free one (the address is named on stderr).",
        )
    },
    OptionSpec {
        long: Some("token"),
        env: &["COS_SERVICE_TOKEN"],
        config_key: Some("service.token"),
        kind: Value("TOKEN", Text),
        group: Group::Scanner,
        programs: SCANNER,
        components: SERVE,
        ..row(
            "token",
            "serve: bearer token every /api/ call must present (Authorization: Bearer TOKEN), \
             at least 32 characters; give it as a secret reference (secret://, file://, env://, \
             exec://) or with the _file / _FILE suffix, never in clear.",
        )
    },
    OptionSpec {
        long: Some("base-url"),
        env: &["COS_WEB_BASE_URL"],
        config_key: Some("web.base_url"),
        kind: Value(
            "URL",
            Checked(
                "an absolute http:// or https:// URL such as https://scan.example.com, with a path \
             when a reverse proxy serves it there (https://example.com/scanner)",
            ),
        ),
        default: Some("http://<listen address>"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB_STORE,
        ..row(
            "base_url",
            "web: the absolute URL the public API is reached at (https://scan.example.com), as \
             its pages, Location headers and discovery documents name it. With a path \
             (https://example.com/scanner) every link, asset, form, redirect and discovery URL \
             carries it, for a reverse proxy that strips the path before forwarding.",
        )
    },
    OptionSpec {
        long: Some("store"),
        env: &["COS_WEB_STORE"],
        config_key: Some("web.store"),
        kind: Value("STORE", Text),
        default: Some("sqlite:<state directory>/web.sqlite"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB_STORE,
        ..row(
            "store",
            "web: where scan records, the queue and the limit counters live: sqlite:PATH (one \
             node; survives restarts) or redis://HOST:PORT/DB (several nodes share it). A \
             password in the address is a secret: give it as a reference.",
        )
    },
    OptionSpec {
        long: Some("store-timeout"),
        env: &["COS_WEB_STORE_TIMEOUT"],
        config_key: Some("web.store_timeout"),
        kind: Value("SECONDS", Seconds { max: 60 }),
        default: Some("2"),
        group: Group::Scanner,
        programs: SCANNER,
        ..row(
            "store_timeout",
            "web and limits: how long one call to the store may take (Redis: connect, read, \
             write; SQLite: waiting for another process's lock), at most 60. A store that does \
             not answer in time makes /healthz and submissions answer 503 with Retry-After; \
             Redis is connected again on the next call.",
        )
    },
    OptionSpec {
        long: Some("workers"),
        env: &["COS_WEB_WORKERS"],
        config_key: Some("web.workers"),
        kind: Value("N", number("a number", 1, 64)),
        default: Some("4"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "workers",
            "web: scans this node runs at once (1-64); submitters set no concurrency or timeout.",
        )
    },
    OptionSpec {
        long: Some("connections-per-address"),
        env: &["COS_WEB_CONNECTIONS_PER_ADDRESS"],
        config_key: Some("web.connections_per_address"),
        kind: Value("N", number("a number", 1, 16)),
        default: Some("8"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "connections_per_address",
            "web: connections one client holds at once, queued or served (1-16 of the 32 that \
             are served at once); one more is answered 429 too_many_connections. A client is \
             an IPv4 address or an IPv6 /64; behind a --trusted-proxy, the forwarded address, \
             counted per request (the proxy's own requests, without X-Forwarded-For, are not \
             counted).",
        )
    },
    OptionSpec {
        long: Some("record-ttl"),
        env: &["COS_WEB_RECORD_TTL"],
        config_key: Some("web.record_ttl"),
        kind: Value("SECONDS", number("a number of seconds", 60, 31_536_000)),
        default: Some("604800 (7 days)"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "record_ttl",
            "web: how long a scan record lives after its submission; then it is gone (404).",
        )
    },
    OptionSpec {
        long: Some("trusted-proxy"),
        env: &["COS_WEB_TRUSTED_PROXY"],
        config_key: Some("web.trusted_proxy"),
        kind: Repeatable("CIDRS"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "trusted_proxy",
            "web: networks (comma-separated CIDRs, 10.0.0.0/8,::1/128) whose X-Forwarded-For \
             names the client; from anyone else the socket's address counts.",
        )
    },
    OptionSpec {
        long: Some("allow-private-targets"),
        env: &["COS_WEB_ALLOW_PRIVATE_TARGETS"],
        config_key: Some("web.allow_private_targets"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "allow_private_targets",
            "web: scan targets on private, loopback and link-local addresses too (internal \
             deployments, tests); off, the public API refuses them.",
        )
    },
    OptionSpec {
        long: Some("mcp-token"),
        env: &["COS_WEB_MCP_TOKEN"],
        config_key: Some("web.mcp_token"),
        kind: Value("TOKEN", Text),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "mcp_token",
            "web: bearer token /mcp requires (Authorization: Bearer TOKEN; 401 otherwise), at \
             least 32 characters; give it as a secret reference (secret://, file://, env://, \
             exec://), never in clear. Unset: /mcp is open like the rest of the public API.",
        )
    },
    OptionSpec {
        long: Some("no-mcp"),
        env: &["COS_WEB_NO_MCP"],
        config_key: Some("web.no_mcp"),
        group: Group::Scanner,
        programs: SCANNER,
        components: WEB,
        ..row(
            "no_mcp",
            "web: no /mcp endpoint, no browser tools (WebMCP) on the pages, and no MCP entry in /.well-known/ai.json.",
        )
    },
    OptionSpec {
        long: Some("result"),
        kind: Repeatable("FILE"),
        group: Group::Scanner,
        programs: SCANNER,
        components: &[
            Component::ReviewWaivers,
            Component::Fleet,
            Component::Snippets,
        ],
        ..row(
            "result",
            "review-waivers, fleet and snippets: a result document (or a JSON array of them) to \
             read; repeatable.",
        )
    },
    OptionSpec {
        long: Some("for"),
        kind: Value("FORM", Choice("a snippet form")),
        default: Some("every form"),
        choices: &["nginx", "caddy", "apache", "traefik", "env", "zone"],
        group: Group::Scanner,
        programs: SCANNER,
        components: &[Component::Snippets],
        ..row(
            "snippets_for",
            "snippets: print only the fix snippets of this form (nginx, caddy, apache, traefik \
             labels, env lines, zone records).",
        )
    },
    // fleet's own --format: the flag names the plugin's output format row in the plugin.
    OptionSpec {
        long: Some("format"),
        kind: Value("FORMAT", Choice("a fleet output format")),
        default: Some("text"),
        choices: &["text", "json"],
        group: Group::Scanner,
        programs: SCANNER,
        components: &[Component::Fleet],
        ..row(
            "fleet_format",
            "fleet: text prints the hosts most urgent first, a table with the reason for each; \
             json prints the same judgement as one JSON document.",
        )
    },
    OptionSpec {
        long: Some("config"),
        env: &["COS_CONFIG_FILE"],
        kind: Value("FILE", Text),
        default: Some("search list"),
        group: Group::Program,
        ..row(
            "config",
            "Configuration file (JSON with a .json suffix, otherwise YAML). Without it the first of \
             ./.env.json, ./check-storage-security.yml, ~/.config/check-storage-security/.env.json, \
             /etc/check-storage-security/{config.json,config.yml,config.yaml} is read.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("configure"),
        group: Group::Program,
        ..row(
            "configure",
            "Interactive wizard writing a JSON configuration file with mode 0600, atomically, \
             asking before it replaces one: it asks for the host and offers the optional \
             groups (thresholds or a profile, connection, hardening, webhook, releases, output \
             format); every answer is checked as a run would read it; secrets are taken only as \
             references (env://, file://, secret://). --config names the file (otherwise the \
             question offers ~/.config/check-storage-security/.env.json, as root \
             /etc/check-storage-security/config.json). Without a terminal the answers are read \
             line by line from standard input. Ends with the command line that uses the file; \
             exits 0 when the file is written, 3 when nothing is (a refused answer without a \
             terminal, the end of the input, a file kept).",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("self-update-check"),
        env: &["COS_SELF_UPDATE_CHECK"],
        config_key: Some("self_update.check"),
        group: Group::Program,
        ..row(
            "self_update_check",
            "Look up the newest release of this plugin in its release feed (--self-update-url) \
             at most once a day (the time of the last look is kept in the state directory; \
             without one there is no look-up) and, while a newer release exists, add one line \
             naming it: before the performance data in the default format, after the tally \
             with --format summary, on stderr in the machine formats. A failing look-up is \
             silent (shown with --debug) and never changes the exit code.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("self-update-url"),
        env: &["COS_SELF_UPDATE_URL"],
        config_key: Some("self_update.url"),
        kind: Value(
            "URL",
            Checked("an http(s) address; give the release feed's URL"),
        ),
        default: Some(
            "https://api.github.com/repos/storage-security/check-storage-security/releases",
        ),
        group: Group::Program,
        ..row(
            "self_update_url",
            "Where this plugin's releases are published (GitHub releases API shape: tags vX.Y.Z, \
             assets check-storage-security-X.Y.Z-TARGET[.tar.gz] and SHA256SUMS), for \
             --self-update-check and --upgrade-self. --upgrade-self needs https (plain http \
             only on loopback).",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("upgrade-self"),
        group: Group::Program,
        ..row(
            "upgrade_self",
            "Upgrade this program to the newest release and scan nothing: download the asset \
             for this platform (at most 64 MiB), verify its SHA-256 against the release's \
             SHA256SUMS (refused on a mismatch or a missing sum), check that it runs and \
             reports the new version, and rename it over the running binary (its mode kept); \
             a check-storage-scanner beside it is upgraded in the same step. A binary \
             installed by a package manager (dpkg, rpm) is refused with the command to use \
             instead. \"--upgrade-self check\" (or --check-only) shows what it would do and \
             changes nothing. Exit 0 when done or already current, 3 with one line otherwise. \
             A flag only: never read from a variable or the configuration file.",
        )
    },
    OptionSpec {
        programs: PLUGIN,
        long: Some("check-only"),
        group: Group::Program,
        ..row(
            "check_only",
            "With --upgrade-self: show what it would do and change nothing.",
        )
    },
    OptionSpec {
        long: Some("version"),
        short: Some('V'),
        group: Group::Program,
        ..row(
            "version",
            "Print the program's version and the date its bundled release and advisory data were \
             last refreshed.",
        )
    },
    OptionSpec {
        long: Some("help"),
        short: Some('h'),
        group: Group::Program,
        ..row("help", "Print this manual.")
    },
    // --- Configuration-only settings ----------------------------------------------------
    OptionSpec {
        env: &["COS_SCANNER_VERIFY_TLS"],
        config_key: Some("scanner.verify_tls"),
        kind: Value("BOOL", Bool),
        default: Some("true"),
        group: Group::ConfigOnly,
        ..row("verify_tls", "false is the same as --insecure.")
    },
    OptionSpec {
        env: &["COS_SCANNER_TARGET_PORT"],
        config_key: Some("scanner.target_port"),
        kind: Value("PORT", Port { free: false }),
        default: Some("443 (80 for plain HTTP)"),
        group: Group::ConfigOnly,
        ..row("target_port", "Port used for targets written without one.")
    },
    OptionSpec {
        env: &["COS_SCANNER_TLS_MIN_DAYS"],
        config_key: Some("scanner.tls_min_days"),
        kind: Value("DAYS", DAYS),
        default: Some("14"),
        group: Group::ConfigOnly,
        ..row(
            "tls_min_days",
            "cert_days_left warns at or below this many days.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_USE_RELEASE_SCHEDULE"],
        config_key: Some("scanner.use_release_schedule"),
        kind: Value("BOOL", Bool),
        default: Some("true"),
        group: Group::ConfigOnly,
        ..row(
            "use_release_schedule",
            "false disables end-of-life detection (no lifecycle line, no support_days_left).",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_RELEASE_SCHEDULE"],
        config_key: Some("scanner.release_schedule"),
        kind: Value("FILE", Text),
        group: Group::ConfigOnly,
        ..row(
            "release_schedule",
            "Release schedule file used instead of the bundled one.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_VULNERABILITY_DB"],
        config_key: Some("scanner.vulnerability_db"),
        kind: Repeatable("FILES"),
        group: Group::ConfigOnly,
        ..row(
            "vulnerability_db",
            "Advisory files (native, GitHub advisory or OSV JSON) merged after the bundled data; \
             the variable separates files with ','.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_VULNERABILITY_FEED"],
        config_key: Some("scanner.vulnerability_feed"),
        kind: Value("URL", Text),
        group: Group::ConfigOnly,
        ..row(
            "vulnerability_feed",
            "Advisory feed fetched over HTTP and merged last; unreachable means logged and ignored.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_EXTRA_CHECKS_RATING"],
        config_key: Some("scanner.extra_checks_rating"),
        kind: Value("BOOL", Bool),
        default: Some("true"),
        group: Group::ConfigOnly,
        ..row(
            "extra_checks_rating",
            "false reports failed additional checks without letting them cap the rating.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_CHECK_DEBUG_PORTS"],
        config_key: Some("scanner.check_debug_ports"),
        kind: Value("BOOL", Bool),
        default: Some("true"),
        group: Group::ConfigOnly,
        ..row(
            "check_debug_ports",
            "false is the same as --no-debug-ports.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_DEBUG_PORTS"],
        config_key: Some("scanner.debug_ports"),
        kind: Value("PORTS", Checked("a list of ports (1-65535)")),
        default: Some("9205,9141,9124,9134,9239"),
        group: Group::ConfigOnly,
        ..row(
            "debug_ports",
            "Debug ports to probe (a list in the file, ',' in the variable).",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_DEBUG_PORT_TIMEOUT"],
        config_key: Some("scanner.debug_port_timeout"),
        kind: Value("SECONDS", SECONDS),
        default: Some("3"),
        group: Group::ConfigOnly,
        ..row(
            "debug_port_timeout",
            "Connect timeout of one debug-port probe.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_IPV6_ENABLED"],
        config_key: Some("scanner.ipv6_enabled"),
        kind: Value("BOOL", Bool),
        default: Some("true"),
        group: Group::ConfigOnly,
        ..row(
            "ipv6_enabled",
            "false skips IPv6 addresses with --all-addresses.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_CHECK_LOGIN_THROTTLING"],
        config_key: Some("scanner.check_login_throttling"),
        kind: Value("BOOL", Bool),
        default: Some("false"),
        group: Group::ConfigOnly,
        ..row(
            "check_login_throttling",
            "true is the same as --login-throttling.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_CHECK_ALL_ADDRESSES"],
        config_key: Some("scanner.check_all_addresses"),
        kind: Value("BOOL", Bool),
        default: Some("false"),
        group: Group::ConfigOnly,
        ..row(
            "check_all_addresses",
            "true is the same as --all-addresses.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_RESOLVE"],
        config_key: Some("scanner.resolve"),
        kind: Value(
            "PINS",
            Checked("a list of pins such as cloud.example=192.0.2.1,192.0.2.2"),
        ),
        group: Group::ConfigOnly,
        ..row(
            "resolve",
            "Pin names to addresses for every direct connection, like curl --resolve: \
             name=address,address;name2=address. Useful to check the nodes behind a name before \
             DNS points at them.",
        )
    },
    OptionSpec {
        env: &["COS_SCANNER_DNS_SERVER"],
        config_key: Some("scanner.dns_server"),
        kind: Value(
            "ADDRESS",
            Checked("a DNS server address such as 192.0.2.53 or 192.0.2.53:53"),
        ),
        default: Some("the first nameserver of /etc/resolv.conf"),
        group: Group::ConfigOnly,
        ..row(
            "dns_server",
            "DNS server (address or address:port) asked for the CAA records of the scanned name \
             and whether its zone is signed (DNSSEC); a validating resolver also says whether the \
             signatures validate. Never asked about names public DNS cannot know (localhost, \
             .local, .internal, .home.arpa, .test, a single label, ...).",
        )
    },
    OptionSpec {
        env: &["COS_RELEASES_URL"],
        config_key: Some("releases.url"),
        kind: Value("URL", Text),
        group: Group::ConfigOnly,
        ..row(
            "releases_url",
            "Release feed (GitHub releases API shape) used by the update check in auto and feed \
             modes. Default: the product's own (api.github.com/repos/opencloud-eu/opencloud/releases \
             or api.github.com/repos/owncloud/ocis/releases). {product} in the URL becomes the \
             product's id (opencloud, ocis); without it, the one feed serves every product.",
        )
    },
    OptionSpec {
        env: &["COS_SERVICE_CACHE_TTL"],
        config_key: Some("service.cache_ttl"),
        kind: Value("SECONDS", number("a number of seconds", 0, 2_592_000)),
        default: Some("900"),
        group: Group::ConfigOnly,
        components: SERVE,
        ..row(
            "cache_ttl",
            "Result cache lifetime of check-storage-scanner serve.",
        )
    },
    OptionSpec {
        env: &["COS_NOW"],
        kind: Value(
            "TIMESTAMP",
            Checked("an RFC 3339 timestamp such as 2026-11-22T03:00:00Z"),
        ),
        group: Group::ConfigOnly,
        ..row(
            "now",
            "Treat this RFC 3339 timestamp as the current time (reproducible reports and tests); \
             check-storage-scanner web's clock (record expiry, limits, leases) starts there and \
             runs on. Variable only.",
        )
    },
];

/// Looks a row up by its identifier. Panics on a typo in our own code, never on operator input.
pub fn spec(id: &str) -> &'static OptionSpec {
    OPTIONS
        .iter()
        .find(|o| o.id == id)
        .unwrap_or_else(|| panic!("option table has no row {id:?}"))
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
            Value(_, ty) => ty,
            Switch | Repeatable(_) => Text,
        }
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
        for o in OPTIONS {
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
    fn config_keys_map_onto_their_variables() {
        // Spec: nested keys join with underscores, upper-cased, prefixed COS_.
        for o in OPTIONS {
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
