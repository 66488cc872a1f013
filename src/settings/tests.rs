//! Layering: flag > variable > configuration file > profile > default, and the refusals.

use super::*;
use secrets::MapEnv;

/// What any component reads of its own, read as that component's type: one helper resolves
/// the settings of every component.
#[derive(Clone, Debug)]
enum ByComponent {
    Nothing,
    Serve(ServeSettings),
    Web(WebSettings),
    Review(ReviewSettings),
    Snippets(SnippetsSettings),
    Fleet(FleetSettings),
}

impl ComponentSettings for ByComponent {
    /// Every component.
    const COMPONENTS: &'static [Component] = &[
        Component::Plugin,
        Component::Scan,
        Component::Serve,
        Component::Web,
        Component::ReviewWaivers,
        Component::Fleet,
        Component::Snippets,
        Component::Upgrade,
        Component::Limits,
    ];

    fn read(l: &Layers) -> Result<Self, SettingsError> {
        fn own<T: ComponentSettings>(l: &Layers) -> Result<T, SettingsError> {
            assert!(T::COMPONENTS.contains(&l.component));
            T::read(l)
        }
        Ok(match l.component {
            Component::Plugin | Component::Scan | Component::Upgrade => {
                own::<()>(l).map(|()| ByComponent::Nothing)?
            }
            Component::Serve => ByComponent::Serve(own(l)?),
            Component::Web | Component::Limits => ByComponent::Web(own(l)?),
            Component::ReviewWaivers => ByComponent::Review(own(l)?),
            Component::Snippets => ByComponent::Snippets(own(l)?),
            Component::Fleet => ByComponent::Fleet(own(l)?),
        })
    }

    fn start_refusals(&self) -> Vec<(Id, String)> {
        match self {
            ByComponent::Serve(s) => s.start_refusals(),
            ByComponent::Web(w) => w.start_refusals(),
            _ => Vec::new(),
        }
    }
}

impl ByComponent {
    fn serve(&self) -> &ServeSettings {
        match self {
            ByComponent::Serve(s) => s,
            other => panic!("not serve's: {other:?}"),
        }
    }

    fn web(&self) -> &WebSettings {
        match self {
            ByComponent::Web(w) => w,
            other => panic!("not web's: {other:?}"),
        }
    }
}

/// The subcommands that read saved results read `--result` and their own choice each.
#[test]
fn saved_result_readers_read_their_own_choices() {
    let dir = temp_dir("saved-result-files");
    let file = dir.join("a.json");
    std::fs::write(&file, "{}").unwrap();
    let file = file.display().to_string();
    let env = clean_env("saved-results", &[]);
    let read = |component, args: &[&str]| resolve_in(component, args, &env).unwrap().own;
    let ByComponent::Review(review) = read(Component::ReviewWaivers, &["--result", &file]) else {
        panic!("review-waivers reads ReviewSettings");
    };
    assert_eq!(review.results.len(), 1);
    let snippets = read(Component::Snippets, &["--result", &file, "--for", "caddy"]);
    let ByComponent::Snippets(snippets) = snippets else {
        panic!("snippets reads SnippetsSettings");
    };
    assert_eq!(snippets.form, Some(crate::assess::snippets::Form::Caddy));
    let ByComponent::Fleet(fleet) = read(Component::Fleet, &["--result", &file]) else {
        panic!("fleet reads FleetSettings");
    };
    assert!(!fleet.json && fleet.results.len() == 1);
    // `--format` is the scanner's here (the plugin's row is another).
    let mut line = match cli::parse_for(options::Program::Scanner, ["--format", "json"]) {
        Ok((cli::Invocation::Scan(line), _)) => line,
        other => panic!("{other:?}"),
    };
    line.bind_to(Component::Fleet, options::Program::Scanner)
        .unwrap();
    let fleet = Settings::<FleetSettings>::resolve_for(&line, &env, Component::Fleet).unwrap();
    assert!(fleet.own.json && fleet.own.results.is_empty());
}

/// Each component reads the settings of one type of its own.
#[test]
fn every_component_has_one_type_of_its_own() {
    let lists = [
        <()>::COMPONENTS,
        ServeSettings::COMPONENTS,
        WebSettings::COMPONENTS,
        ReviewSettings::COMPONENTS,
        SnippetsSettings::COMPONENTS,
        FleetSettings::COMPONENTS,
    ];
    for component in ByComponent::COMPONENTS {
        let types = lists.iter().filter(|l| l.contains(component)).count();
        assert_eq!(types, 1, "{component:?}");
    }
    assert_eq!(lists.concat().len(), ByComponent::COMPONENTS.len());
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "cos-settings-{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The command line as the program that owns its flags reads it (the plugin, or the scanner
/// for its own flags such as --listen).
fn line(args: &[&str]) -> cli::CommandLine {
    let program = if args.iter().any(|a| {
        a.strip_prefix("--")
            .and_then(options::by_long)
            .is_some_and(|o| !o.programs.contains(&options::Program::Plugin))
    }) {
        options::Program::Scanner
    } else {
        options::Program::Plugin
    };
    match cli::parse_for(program, args.iter().copied()).unwrap() {
        (cli::Invocation::Scan(l), _) => l,
        other => panic!("{other:?}"),
    }
}

fn resolve(args: &[&str], env: &MapEnv) -> Result<Settings<ByComponent>, SettingsError> {
    // The scanner's own flags belong to the component of their row (`--listen`: serve).
    let component = args.iter().find_map(|a| {
        a.strip_prefix("--")
            .and_then(options::by_long)
            .filter(|o| !o.programs.contains(&options::Program::Plugin))
            .map(|o| o.components.first().copied().unwrap_or(Component::Serve))
    });
    match component {
        Some(component) => resolve_in(component, args, env),
        None => Settings::resolve_for(&line(args), env, Component::Plugin),
    }
}

/// The settings `component` reads from this command line, its flags bound as that
/// component's (`web --listen` is the public API's address).
fn resolve_in(
    component: Component,
    args: &[&str],
    env: &MapEnv,
) -> Result<Settings<ByComponent>, SettingsError> {
    let mut line = line(args);
    line.bind_to(component, options::Program::Scanner)
        .map_err(SettingsError)?;
    Settings::resolve_for(&line, env, component)
}

/// An environment whose HOME is an empty temporary directory, so no user file is found.
fn clean_env(name: &str, pairs: &[(&str, &str)]) -> MapEnv {
    let mut env = MapEnv::with(pairs);
    env.0
        .insert("HOME".into(), temp_dir(name).display().to_string());
    env
}

#[test]
fn defaults_of_the_spec() {
    let s = resolve(&["-H", "cloud.example.com"], &clean_env("defaults", &[])).unwrap();
    assert_eq!((s.warning, s.critical), (3, 1));
    assert_eq!(s.scan.timeout, Duration::from_secs(10));
    assert_eq!(s.scan.retries, 2);
    assert_eq!(s.scan.backoff_factor, 0.5);
    assert_eq!(s.scan.concurrency, 5);
    assert_eq!(s.scan.update_source, UpdateSource::Auto);
    assert_eq!(s.release_track, TrackChoice::Auto);
    assert!(!s.check_hardening && !s.scan.insecure && !s.update_warning && !s.debug);
    assert_eq!(s.eol_warning, None);
    assert!(s.use_release_schedule && s.extra_checks_rating);
}

#[test]
fn flag_beats_variable_beats_file_beats_profile() {
    let dir = temp_dir("precedence");
    let config = dir.join("c.yml");
    std::fs::write(
        &config,
        "host: file.example\nwarning: 4\ncritical: 2\neol_warning: 10\n",
    )
    .unwrap();
    let cfg = config.display().to_string();
    let env = clean_env(
        "precedence-home",
        &[
            ("COS_CONFIG_FILE", &cfg),
            ("COS_WARNING", "3"),
            ("COS_HOST", "env.example"),
        ],
    );

    let s = resolve(&["--warning", "5", "--profile", "lenient"], &env).unwrap();
    assert_eq!(s.warning, 5, "flag wins");
    assert_eq!(s.critical, 2, "file beats profile");
    assert_eq!(s.eol_warning, Some(10), "file beats profile");
    assert_eq!(
        s.targets[0].display_name(),
        "env.example",
        "variable beats file"
    );
    assert!(
        !s.check_hardening,
        "profile lenient where nothing else says"
    );

    let s = resolve(&["--profile", "strict"], &env).unwrap();
    assert_eq!(s.warning, 3, "variable beats file");
    assert!(
        s.check_hardening && s.update_warning,
        "strict profile fills the gaps"
    );

    let env = clean_env("precedence-2", &[("COS_CONFIG_FILE", &cfg)]);
    let s = resolve(&[], &env).unwrap();
    assert_eq!((s.warning, s.critical), (4, 2), "file beats default");
    assert_eq!(s.targets[0].display_name(), "file.example");
}

#[test]
fn profiles_table() {
    let env = clean_env("profiles", &[]);
    for (name, w, c, hardening, update, eol) in [
        ("strict", 4, 2, true, true, Some(90)),
        ("ops", 3, 1, true, false, Some(30)),
        ("lenient", 2, 0, false, false, Some(0)),
    ] {
        let s = resolve(&["-H", "x.example", "--profile", name], &env).unwrap();
        assert_eq!(
            (
                s.warning,
                s.critical,
                s.check_hardening,
                s.update_warning,
                s.eol_warning
            ),
            (w, c, hardening, update, eol),
            "{name}"
        );
    }
    let err = resolve(&["-H", "x.example", "--profile", "paranoid"], &env).unwrap_err();
    assert_eq!(
        err.0,
        "--profile \"paranoid\" is not a profile; use one of strict, ops, lenient"
    );
}

#[test]
fn boolean_variables() {
    for (value, expected) in [
        ("1", true),
        ("TRUE", true),
        ("yes", true),
        ("On", true),
        ("0", false),
        ("", false),
        ("enabled", false),
    ] {
        let env = clean_env("booleans", &[("COS_CHECK_HARDENING", value)]);
        let s = resolve(&["-H", "x.example"], &env).unwrap();
        assert_eq!(s.check_hardening, expected, "COS_CHECK_HARDENING={value:?}");
    }
    // A set-but-disabled variable overrides a file that enables it.
    let dir = temp_dir("bool-file");
    let config = dir.join("c.json");
    std::fs::write(&config, r#"{"host": "x.example", "check_hardening": true}"#).unwrap();
    let cfg = config.display().to_string();
    let env = clean_env(
        "bool-file-home",
        &[("COS_CONFIG_FILE", &cfg), ("COS_CHECK_HARDENING", "no")],
    );
    assert!(!resolve(&[], &env).unwrap().check_hardening);
    let env = clean_env("bool-file-home2", &[("COS_CONFIG_FILE", &cfg)]);
    assert!(resolve(&[], &env).unwrap().check_hardening);
}

#[test]
fn thresholds_are_checked() {
    let env = clean_env("thresholds", &[]);
    let err = resolve(&["-H", "x", "-w", "3", "-c", "4"], &env).unwrap_err();
    assert_eq!(
        err.0,
        "--critical 4 exceeds --warning 3; both are ratings 0-5 and critical must be at or below warning"
    );
    let err = resolve(&["-H", "x", "-w", "6"], &env).unwrap_err();
    assert_eq!(err.0, "--warning \"6\" is not a rating from 0 to 5");
    let err = resolve(&["-H", "x", "-c", "-1"], &env).unwrap_err();
    assert!(
        err.0.starts_with("--critical \"-1\" is not a rating"),
        "{}",
        err.0
    );
    assert!(resolve(&["-H", "x", "-w", "0", "-c", "0"], &env).is_ok());
}

#[test]
fn bad_values_name_the_option_and_the_fix() {
    let env = clean_env("bad-values", &[]);
    let cases: &[(&[&str], &str)] = &[
        (
            &["-H", "x", "--timeout", "ten"],
            "--timeout \"ten\" is not a number of seconds",
        ),
        (
            &["-H", "x", "--concurrency", "33"],
            "--concurrency \"33\" is not a number of workers from 1 to 32",
        ),
        (
            &["-H", "x", "--update-source", "web"],
            "use one of auto, feed, pinned, bundled, off",
        ),
        (
            &["-H", "x", "--release-track", "stable"],
            "use one of auto, rolling, production, lts",
        ),
        (
            &["-H", "x", "--update-source", "pinned"],
            "needs --latest-version",
        ),
        (
            &["-H", "x", "--latest-version", "4.0.8"],
            "only used with --update-source pinned",
        ),
        (
            &["-H", "x", "--ca-file", "/nonexistent/ca.pem"],
            "--ca-file /nonexistent/ca.pem does not exist; give --ca-file the path of a PEM \
             bundle of the CA",
        ),
        (
            &["-H", "x", "--proxy", "proxy.example:3128"],
            "--proxy \"proxy.example:3128\" is not an http:// proxy address; give http://host:port",
        ),
        (&["-H", "ftp://x"], "ftp"),
        (&[], "no target given; pass -H/--host"),
    ];
    for (args, expected) in cases {
        let err = resolve(args, &env).unwrap_err();
        assert!(err.0.contains(expected), "{args:?}: {}", err.0);
        assert!(!err.0.contains('\n'), "one line: {}", err.0);
    }
}

#[test]
fn choices_and_disabled_booleans() {
    let env = clean_env("not-yet", &[]);
    let err = resolve(&["-H", "x", "--format", "xml"], &env).unwrap_err();
    assert!(err.0.contains("use one of metrics, otlp"), "{}", err.0);
    // A disabled boolean variable asks for nothing.
    let env = clean_env("not-yet-off", &[("COS_ALL_ADDRESSES", "0")]);
    assert!(!resolve(&["-H", "x"], &env).unwrap().scan.all_addresses);
}

#[test]
fn the_self_update_settings() {
    let env = clean_env("self-update", &[]);
    let s = resolve(&["-H", "x"], &env).unwrap();
    assert!(!s.self_update_check);
    assert_eq!(
        s.self_update_url,
        "https://api.github.com/repos/storage-security/check-storage-security/releases"
    );
    let env = clean_env(
        "self-update-on",
        &[
            ("COS_SELF_UPDATE_CHECK", "yes"),
            ("COS_SELF_UPDATE_URL", "http://127.0.0.1:1/releases"),
        ],
    );
    let s = resolve(&["-H", "x"], &env).unwrap();
    assert!(s.self_update_check);
    assert_eq!(s.self_update_url, "http://127.0.0.1:1/releases");
    let err = resolve(&["-H", "x", "--self-update-url", "ftp://mirror/x"], &env).unwrap_err();
    assert_eq!(
        err.0,
        "--self-update-url \"ftp://mirror/x\" is not an http(s) address; give the release \
         feed's URL"
    );
}

#[test]
fn the_exporter_runs_when_its_port_is_set() {
    let env = clean_env("exporter-off", &[]);
    let s = resolve(&["-H", "x"], &env).unwrap();
    assert!(
        s.exporter.is_none(),
        "without the port the plugin scans once"
    );
    let s = resolve(&["-H", "x", "--prometheus-listen-port", "9102"], &env).unwrap();
    let e = s.exporter.unwrap();
    assert_eq!(e.listen, "127.0.0.1:9102".parse().unwrap());
    assert_eq!(e.scrape_interval, Duration::from_secs(60));
    // The flag alone is the spec's default port, wherever it stands; a number after it or an
    // attached value is its port.
    for (args, port) in [
        (&["-H", "x", "--prometheus-listen-port"][..], 9102),
        (&["--prometheus-listen-port", "-H", "x"][..], 9102),
        (
            &[
                "--prometheus-listen-port",
                "--scrape-interval",
                "5",
                "-H",
                "x",
            ][..],
            9102,
        ),
        (&["-H", "x", "--prometheus-listen-port", "9300"][..], 9300),
        (&["-H", "x", "--prometheus-listen-port=0"][..], 0),
    ] {
        let e = resolve(args, &env).unwrap().exporter.unwrap();
        assert_eq!(e.listen.port(), port, "{args:?}");
    }
    // A word that is no port is no value of it: the plugin takes no words.
    assert!(cli::parse(["--prometheus-listen-port", "x"]).is_err());
    let s = resolve(
        &[
            "-H",
            "x",
            "--prometheus-listen-port",
            "0",
            "--prometheus-listen-addr",
            "[::]",
            "--scrape-interval",
            "0.2",
        ],
        &env,
    )
    .unwrap();
    let e = s.exporter.unwrap();
    assert_eq!(e.listen, "[::]:0".parse().unwrap());
    assert_eq!(e.scrape_interval, Duration::from_millis(200));
    // The variable and the key start it too, and take the address and interval with it.
    let env = clean_env(
        "exporter-env",
        &[
            ("COS_PROMETHEUS_LISTEN_PORT", "9200"),
            ("COS_PROMETHEUS_LISTEN_ADDR", "0.0.0.0"),
            ("COS_SCRAPE_INTERVAL", "30"),
        ],
    );
    let e = resolve(&["-H", "x"], &env).unwrap().exporter.unwrap();
    assert_eq!(e.listen, "0.0.0.0:9200".parse().unwrap());
    assert_eq!(e.scrape_interval, Duration::from_secs(30));
    let dir = temp_dir("exporter-file");
    let config = dir.join("c.yml");
    std::fs::write(
        &config,
        "prometheus_listen_port: 9300\nscrape_interval: 15\n",
    )
    .unwrap();
    let env = clean_env("exporter-file-env", &[]);
    let config = config.display().to_string();
    let e = resolve(&["-H", "x", "--config", &config], &env)
        .unwrap()
        .exporter
        .unwrap();
    assert_eq!(e.listen, "127.0.0.1:9300".parse().unwrap());
    assert_eq!(e.scrape_interval, Duration::from_secs(15));
    // Address and interval alone configure an exporter that is not running: from a variable
    // (a file shared with single runs) they are read and unused ...
    let env = clean_env("exporter-half", &[("COS_SCRAPE_INTERVAL", "30")]);
    assert!(resolve(&["-H", "x"], &env).unwrap().exporter.is_none());
    // ... but still refused when wrong.
    let env = clean_env("exporter-bad", &[("COS_SCRAPE_INTERVAL", "0")]);
    let err = resolve(&["-H", "x"], &env).unwrap_err();
    assert_eq!(
        err.0,
        "COS_SCRAPE_INTERVAL \"0\" is not a number of seconds above 0 (at most 3600)"
    );
}

#[test]
fn exporter_mistakes_are_refused_with_the_fix() {
    let env = clean_env("exporter-mistakes", &[]);
    for (args, expected) in [
        (
            &["--scrape-interval", "30"][..],
            "--scrape-interval configures the metrics exporter, which only \
             --prometheus-listen-port starts; add --prometheus-listen-port 9102 or remove \
             --scrape-interval",
        ),
        (
            &["--prometheus-listen-addr", "0.0.0.0"][..],
            "--prometheus-listen-addr configures the metrics exporter, which only \
             --prometheus-listen-port starts; add --prometheus-listen-port 9102 or remove \
             --prometheus-listen-addr",
        ),
        (
            &["--prometheus-listen-port", "70000"][..],
            "--prometheus-listen-port \"70000\" is not a port from 0 (a free port) to 65535",
        ),
        (
            &[
                "--prometheus-listen-port",
                "9102",
                "--prometheus-listen-addr",
                "localhost",
            ][..],
            "--prometheus-listen-addr \"localhost\" is not an IP address such as 127.0.0.1, \
             ::1 or 0.0.0.0",
        ),
        (
            &["--prometheus-listen-port", "9102", "--format", "json"][..],
            "the metrics exporter (--prometheus-listen-port) serves the metrics format on \
             /metrics; remove --format",
        ),
        (
            &["--prometheus-listen-port", "9102", "--baseline", "b.json"][..],
            "--baseline belongs to single runs, not to the metrics exporter \
             (--prometheus-listen-port); remove one of them",
        ),
        (
            &[
                "--prometheus-listen-port",
                "9102",
                "--verify-remediation",
                "exposed",
            ][..],
            "--verify-remediation belongs to single runs, not to the metrics exporter \
             (--prometheus-listen-port); remove one of them",
        ),
    ] {
        let mut all = vec!["-H", "x"];
        all.extend(args);
        assert_eq!(resolve(&all, &env).unwrap_err().0, expected, "{args:?}");
    }
    // --format metrics is what the exporter serves anyway.
    let s = resolve(
        &[
            "-H",
            "x",
            "--prometheus-listen-port",
            "9102",
            "--format",
            "metrics",
        ],
        &env,
    )
    .unwrap();
    assert!(s.exporter.is_some());
}

#[test]
fn secret_references_and_file_suffixes() {
    let dir = temp_dir("secrets");
    let token_file = dir.join("token");
    std::fs::write(&token_file, "from-file\n").unwrap();
    let tf = token_file.display().to_string();

    let env = clean_env("secrets-1", &[("MY_TOKEN", "from-env")]);
    let s = resolve(&["-H", "x", "--release-token", "env://MY_TOKEN"], &env).unwrap();
    assert_eq!(s.scan.release_token.as_deref(), Some("from-env"));

    let s = resolve(
        &["-H", "x", "--release-token", &format!("file://{tf}")],
        &env,
    )
    .unwrap();
    assert_eq!(s.scan.release_token.as_deref(), Some("from-file"));

    let env = clean_env("secrets-2", &[("COS_RELEASES_TOKEN_FILE", &tf)]);
    let s = resolve(&["-H", "x"], &env).unwrap();
    assert_eq!(s.scan.release_token.as_deref(), Some("from-file"));

    let config = dir.join("c.yml");
    std::fs::write(
        &config,
        format!("host: x.example\nreleases:\n  token_file: {tf}\n"),
    )
    .unwrap();
    let cfg = config.display().to_string();
    let env = clean_env("secrets-3", &[("COS_CONFIG_FILE", &cfg)]);
    let s = resolve(&[], &env).unwrap();
    assert_eq!(s.scan.release_token.as_deref(), Some("from-file"));

    let env = clean_env("secrets-4", &[]);
    let err = resolve(&["-H", "x", "--release-token", "env://MISSING_TOKEN"], &env).unwrap_err();
    assert!(err.0.starts_with("--release-token: "), "{}", err.0);
}

#[test]
fn configuration_file_problems_are_named() {
    let dir = temp_dir("config-errors");
    let config = dir.join("c.yml");
    std::fs::write(&config, "scanner:\n  tls_min_dayz: 3\n").unwrap();
    let env = clean_env("config-errors-home", &[]);
    let err = resolve(
        &["-H", "x", "--config", &config.display().to_string()],
        &env,
    )
    .unwrap_err();
    assert!(
        err.0.contains("unknown key \"scanner.tls_min_dayz\""),
        "{}",
        err.0
    );
    let err = resolve(&["-H", "x", "--config", "/nonexistent.yml"], &env).unwrap_err();
    assert!(
        err.0.contains("/nonexistent.yml does not exist"),
        "{}",
        err.0
    );
}

#[test]
fn user_configuration_file_is_found_in_home() {
    let home = temp_dir("home-config");
    let dir = home.join(".config/check-storage-security");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(".env.json"),
        r#"{"host": "home.example", "scanner": {"tls_min_days": 30}}"#,
    )
    .unwrap();
    let env = MapEnv::with(&[("HOME", &home.display().to_string())]);
    let s = resolve(&[], &env).unwrap();
    assert_eq!(s.targets[0].display_name(), "home.example");
    assert_eq!(s.tls_min_days, 30);
    assert!(
        s.config_file
            .unwrap()
            .ends_with(".config/check-storage-security/.env.json")
    );
}

#[test]
fn config_only_settings_and_their_variables() {
    // Advisory files are checked while the settings are read: they must exist.
    let dir = temp_dir("config-only-files");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&a, "{}").unwrap();
    std::fs::write(&b, "{}").unwrap();
    let both = format!("{}, {}", a.display(), b.display());
    let env = clean_env(
        "config-only",
        &[
            ("COS_SCANNER_VERIFY_TLS", "false"),
            ("COS_SCANNER_TLS_MIN_DAYS", "21"),
            ("COS_SCANNER_VULNERABILITY_DB", &both),
            ("COS_SCANNER_TARGET_PORT", "9200"),
            ("COS_RELEASES_MODE", "bundled"),
            ("COS_NOW", "2026-11-22T03:00:00Z"),
        ],
    );
    let s = resolve(&["-H", "x"], &env).unwrap();
    assert!(s.scan.insecure, "verify_tls false is --insecure");
    assert_eq!(s.tls_min_days, 21);
    assert_eq!(s.scan.vulnerability_db, vec![a, b]);
    assert_eq!(s.scan.target_port, Some(9200));
    assert_eq!(s.scan.update_source, UpdateSource::Bundled);
    assert_eq!(s.now.unwrap().to_string(), "2026-11-22T03:00:00Z");
    let s = resolve(&["-H", "x", "--no-update-check"], &env).unwrap();
    assert_eq!(s.scan.update_source, UpdateSource::Off);
}

/// A value no option accepts, with a marker that must never be printed.
const PLANTED: &str = "https://hooks.example.com/services/T000/XXXXSECRET bad";
const MARKER: &str = "XXXXSECRET";

/// Every way a value can come from a reference, for one option: (how it is given, the
/// environment, the extra command line, the reference a message must name).
fn reference_forms(
    spec: &options::OptionSpec,
    dir: &Path,
) -> Vec<(String, MapEnv, Vec<String>, String)> {
    let secret_file = dir.join("planted");
    std::fs::write(&secret_file, format!("{PLANTED}\n")).unwrap();
    let secrets_dir = dir.join("secrets");
    std::fs::create_dir_all(&secrets_dir).unwrap();
    std::fs::write(secrets_dir.join("PLANTED"), PLANTED).unwrap();
    let file_ref = format!("file://{}", secret_file.display());
    let base = |extra: &[(&str, &str)]| {
        let mut pairs = vec![
            ("PLANT", PLANTED),
            ("COS_SECRETS_DIR", secrets_dir.to_str().unwrap()),
            ("HOME", dir.to_str().unwrap()),
        ];
        pairs.extend_from_slice(extra);
        MapEnv::with(&pairs)
    };
    let scanner_only = !spec.programs.contains(&options::Program::Plugin);
    let mut host = if spec.id == "host" || scanner_only {
        vec![]
    } else {
        vec!["-H".to_string(), "x.example".to_string()]
    };
    // The other webhook settings are read only when there is a receiver.
    if spec.id.starts_with("webhook_") && spec.id != "webhook_url" {
        host.extend([
            "--webhook-url".to_string(),
            "https://hooks.example.org/x".to_string(),
        ]);
    }
    let mut forms = Vec::new();
    if let Some(long) = spec.long {
        for reference in [
            "env://PLANT".to_string(),
            file_ref.clone(),
            "secret://PLANTED".to_string(),
            format!("exec://cat {}", secret_file.display()),
        ] {
            let mut args = host.clone();
            args.extend([format!("--{long}"), reference.clone()]);
            forms.push((format!("--{long} {reference}"), base(&[]), args, reference));
        }
    }
    if let Some(var) = spec.env.first() {
        forms.push((
            format!("{var}=env://PLANT"),
            base(&[(var, "env://PLANT")]),
            host.clone(),
            "env://PLANT".to_string(),
        ));
        let file_var = format!("{var}_FILE");
        forms.push((
            file_var.clone(),
            base(&[(&file_var, secret_file.to_str().unwrap())]),
            host.clone(),
            file_var,
        ));
    }
    if let Some(key) = spec.config_key
        && spec.id != "config"
    {
        for (suffix, value, named) in [
            ("", format!("\"{file_ref}\""), file_ref.clone()),
            (
                "_file",
                format!("\"{}\"", secret_file.display()),
                format!("{key}_file"),
            ),
        ] {
            let config = dir.join(format!("config-{}{suffix}.yml", spec.id));
            let mut yaml = String::new();
            let parts: Vec<&str> = key.split('.').collect();
            for (depth, part) in parts.iter().enumerate() {
                let indent = "  ".repeat(depth);
                if depth + 1 == parts.len() {
                    yaml.push_str(&format!("{indent}{part}{suffix}: {value}\n"));
                } else {
                    yaml.push_str(&format!("{indent}{part}:\n"));
                }
            }
            std::fs::write(&config, yaml).unwrap();
            let mut args = host.clone();
            args.extend(["--config".to_string(), config.display().to_string()]);
            forms.push((format!("{key}{suffix} in the file"), base(&[]), args, named));
        }
    }
    forms
}

#[test]
fn no_message_prints_a_value_read_from_a_reference() {
    let dir = temp_dir("planted");
    let mut checked = 0;
    for spec in options::OPTIONS.iter() {
        if spec.kind == options::Kind::Switch {
            continue;
        }
        for (form, env, args, reference) in reference_forms(spec, &dir) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let resolved = match spec.components.first() {
                Some(component) if *component != Component::Plugin => {
                    resolve_in(*component, &args, &env)
                }
                _ if spec.programs.contains(&options::Program::Plugin) => resolve(&args, &env),
                _ => resolve_in(Component::Serve, &args, &env),
            };
            match resolved {
                Err(e) => {
                    checked += 1;
                    assert!(!e.0.contains(MARKER), "{form}: {}", e.0);
                    assert!(!e.0.contains("hooks.example.com"), "{form}: {}", e.0);
                    assert!(
                        e.0.contains(&reference),
                        "{form} must name {reference}: {}",
                        e.0
                    );
                    assert!(!e.0.contains('\n'), "{form}: one line: {}", e.0);
                }
                Ok(settings) => {
                    // Accepted as free text: it must be known as a secret to the output guard.
                    if redact::FREE_FORM.contains(&spec.id) {
                        assert!(
                            settings.secrets.iter().any(|s| s.value == PLANTED),
                            "{form}: {:?}",
                            settings.secrets
                        );
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} refusals were checked");
}

#[test]
fn the_issue_examples_print_the_reference_not_the_value() {
    let env = MapEnv::with(&[
        (
            "HOOK",
            "https://hooks.example.com/services/T000/XXXXSECRET bad",
        ),
        ("HOME", "/nonexistent"),
    ]);
    let err = resolve(&["-H", "x.example", "--webhook-url", "env://HOOK"], &env).unwrap_err();
    assert_eq!(
        err.0,
        "--webhook-url (from env://HOOK) is not a valid URL; give the receiver's http(s) URL"
    );
    let err = resolve(
        &["-H", "x.example", "--warning", "file:///etc/passwd"],
        &env,
    )
    .unwrap_err();
    assert!(
        err.0
            .starts_with("--warning from file:///etc/passwd is not a rating"),
        "{}",
        err.0
    );
    assert!(!err.0.contains("root:"), "{}", err.0);
}

#[test]
fn literal_secrets_are_not_printed_either() {
    let env = clean_env("literal-secrets", &[]);
    // A chat webhook's path is its token; a header value is a credential; a proxy password.
    let err = resolve(
        &[
            "-H",
            "x",
            "--webhook-url",
            "https://hooks.example.com/services/T0/XXXXSECRET bad",
        ],
        &env,
    )
    .unwrap_err();
    assert!(!err.0.contains(MARKER), "{}", err.0);
    let err = resolve(
        &[
            "-H",
            "x",
            "--webhook-url",
            "https://hooks.example.com/x",
            "--webhook-header",
            "Authorization XXXXSECRET",
        ],
        &env,
    )
    .unwrap_err();
    assert_eq!(
        err.0,
        "--webhook-header entry 1 must be 'Name: value', e.g. 'Authorization: Bearer xyz'"
    );
    let err = resolve(
        &[
            "-H",
            "x",
            "--proxy",
            "http://user:XXXXSECRET@proxy.example:3128/path",
        ],
        &env,
    )
    .unwrap_err();
    assert!(!err.0.contains(MARKER), "{}", err.0);
    assert!(err.0.contains("***@proxy.example:3128"), "{}", err.0);
    let settings = resolve(
        &[
            "-H",
            "x",
            "--release-token",
            "ghp_XXXXSECRET",
            "--proxy",
            "http://user:XXXXSECRET@proxy.example:3128",
        ],
        &env,
    )
    .unwrap();
    assert_eq!(
        redact::redact(
            "token ghp_XXXXSECRET via http://user:XXXXSECRET@proxy",
            &settings.secrets
        ),
        "token (token not shown) via http://(proxy credentials not shown)@proxy"
    );
}

#[test]
fn empty_values_and_options_taken_as_values_are_refused() {
    let env = clean_env("empty-values", &[]);
    for (args, expected) in [
        (
            &["-H", "x", "--format", ""][..],
            "--format has an empty value; give a value (FORMAT) or leave the option out",
        ),
        (
            &["-H", "x", "--warning="][..],
            "--warning has an empty value; give a value (RATING) or leave the option out",
        ),
        (
            &["--warning", "-H", "x"][..],
            "--warning needs a value (RATING) but is followed by the option -H; give the value right after --warning",
        ),
        (
            &["-H", "x", "--critical", "--insecure"][..],
            "--critical needs a value (RATING) but is followed by the option --insecure",
        ),
    ] {
        let err = cli::parse(args.iter().copied())
            .map(|_| ())
            .and_then(|()| resolve(args, &env).map(|_| ()).map_err(|e| e.0))
            .unwrap_err();
        assert!(err.starts_with(expected), "{args:?}: {err}");
    }
    // Attached, a dash is a value like any other (and here a wrong one).
    let err = resolve(&["-H", "x", "--warning=-1"], &env).unwrap_err();
    assert!(
        err.0.starts_with("--warning \"-1\" is not a rating"),
        "{}",
        err.0
    );
}

#[test]
fn a_value_is_reported_under_the_name_it_was_given() {
    let dir = temp_dir("named-values");
    let config = dir.join("c.yml");
    std::fs::write(
        &config,
        "host: x.example\ntimeout: abc\nscanner:\n  tls_min_days: soon\n",
    )
    .unwrap();
    let cfg = config.display().to_string();
    let env = clean_env("named-values-home", &[("COS_TIMEOUT", "abc")]);
    let err = resolve(&["-H", "x"], &env).unwrap_err();
    assert!(
        err.0.starts_with("COS_TIMEOUT \"abc\" is not a number"),
        "{}",
        err.0
    );
    let env = clean_env("named-values-file", &[("COS_CONFIG_FILE", &cfg)]);
    // Both wrong values at once, each named with its line, the first met first.
    let err = resolve(&[], &env).unwrap_err();
    assert!(
        err.0.starts_with(&format!(
            "2 settings are wrong: timeout (in {cfg}, line 2) \"abc\" is not a number"
        )) && err.0.contains(&format!(
            "; scanner.tls_min_days (in {cfg}, line 4) \"soon\""
        )),
        "{}",
        err.0
    );
    let err = resolve(&["--timeout", "5"], &env).unwrap_err();
    assert!(
        err.0.starts_with(&format!(
            "scanner.tls_min_days (in {cfg}, line 4) \"soon\" is not"
        )),
        "{}",
        err.0
    );
}

#[test]
fn configuration_booleans_and_empty_values_are_checked() {
    let dir = temp_dir("config-booleans");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let maybe = write("maybe.yml", "host: x.example\ncheck_hardening: maybe\n");
    let err = resolve(&["--config", &maybe], &clean_env("bool-maybe", &[])).unwrap_err();
    assert_eq!(
        err.0,
        format!(
            "check_hardening (in {maybe}, line 2) \"maybe\" is not a boolean; write true or false"
        )
    );
    for (text, on) in [
        ("true", true),
        ("false", false),
        ("\"off\"", false),
        ("yes", true),
    ] {
        let path = write(
            "b.yml",
            &format!("host: x.example\ncheck_hardening: {text}\n"),
        );
        let s = resolve(&["--config", &path], &clean_env("bool-ok", &[])).unwrap();
        assert_eq!(s.check_hardening, on, "{text}");
    }
    let empty = write("empty.yml", "host: x.example\nprofile: \"\"\n");
    let err = resolve(&["--config", &empty], &clean_env("empty-key", &[])).unwrap_err();
    assert_eq!(
        err.0,
        format!("profile (in {empty}, line 2) has an empty value; give a value or remove the key")
    );
    // Variables keep the spec's rule: anything but the enabling words disables.
    let s = resolve(
        &["-H", "x"],
        &clean_env("bool-variable", &[("COS_CHECK_HARDENING", "maybe")]),
    )
    .unwrap();
    assert!(!s.check_hardening);
}

#[test]
fn every_host_option_adds_targets_and_a_repeated_target_is_scanned_once() {
    let env = clean_env("hosts", &[]);
    let s = resolve(&["-H", "a.example", "-H", "b.example,a.example"], &env).unwrap();
    let names: Vec<String> = s.targets.iter().map(|t| t.display_name()).collect();
    assert_eq!(names, ["a.example", "b.example"]);
    let s = resolve(&["-H", "a.example:9200,a.example:9200, a.example"], &env).unwrap();
    let names: Vec<String> = s.targets.iter().map(|t| t.display_name()).collect();
    assert_eq!(names, ["a.example:9200", "a.example"]);
}

#[test]
fn targets_are_never_read_from_secret_references() {
    let env = clean_env("host-reference", &[("TARGET", "db-password-123")]);
    let err = resolve(&["-H", "env://TARGET"], &env).unwrap_err();
    assert_eq!(
        err.0,
        "--host is given as the reference env://TARGET; targets are not read from secret \
         references (a target goes to DNS): write the host itself"
    );
    assert!(!err.0.contains("db-password"));
}

#[test]
fn feed_cache_window_and_state_directory() {
    let home = |name: &str| clean_env(name, &[]).0["HOME"].clone();
    let s = resolve(&["-H", "h"], &clean_env("feed-cache-defaults", &[])).unwrap();
    assert_eq!(s.scan.feed_cache_ttl, Duration::from_secs(3600));
    let expected =
        Path::new(&home("feed-cache-defaults")).join(".local/state/check-storage-security");
    assert_eq!(s.scan.state_dir, Some(expected));
    let env = clean_env(
        "feed-cache-layers",
        &[
            ("STATE_DIRECTORY", "/var/lib/cos"),
            ("COS_RELEASES_CACHE_TTL", "60"),
        ],
    );
    let s = resolve(&["-H", "h"], &env).unwrap();
    assert_eq!(s.scan.state_dir, Some(PathBuf::from("/var/lib/cos")));
    assert_eq!(s.scan.feed_cache_ttl, Duration::from_secs(60));
    let env = clean_env(
        "feed-cache-flags",
        &[
            ("STATE_DIRECTORY", "/var/lib/cos"),
            ("COS_STATE_DIR", "/srv/cos"),
        ],
    );
    let s = resolve(&["-H", "h", "--feed-cache-ttl", "0"], &env).unwrap();
    assert_eq!(s.scan.state_dir, Some(PathBuf::from("/srv/cos")));
    assert_eq!(s.scan.feed_cache_ttl, Duration::ZERO);
    let s = resolve(&["-H", "h", "--state-dir", "/tmp/x"], &env).unwrap();
    assert_eq!(s.scan.state_dir, Some(PathBuf::from("/tmp/x")));
    let s = resolve(&["-H", "h"], &MapEnv::with(&[])).unwrap();
    assert_eq!(
        s.scan.state_dir, None,
        "no HOME, no state directory: nothing cached"
    );
    for bad in ["-1", "2592001", "1h"] {
        let err = resolve(&["-H", "h", "--feed-cache-ttl", bad], &env);
        assert!(
            err.unwrap_err().0.contains("--feed-cache-ttl"),
            "{bad} is refused"
        );
    }
}

#[test]
fn format_ignore_hardening_and_waive_until_have_variables() {
    let env = clean_env(
        "format-waiver-variables",
        &[
            ("COS_FORMAT", "sarif"),
            (
                "COS_IGNORE_HARDENING",
                " hstsPreload, versionDisclosure:X-* ,",
            ),
            (
                "COS_WAIVE_UNTIL",
                "exposed|2026-12-31T00:00:00Z|proxy change; ticket OPS-1, OPS-2\r\n\n\
                 corsOriginRestricted|2027-01-31T00:00:00+01:00|vendor, fix due\n",
            ),
        ],
    );
    let s = resolve(&["-H", "x"], &env).unwrap();
    assert_eq!(s.format, Format::Sarif);
    let waivers: Vec<(&str, &str, Option<String>, Option<&str>)> = s
        .waivers
        .iter()
        .map(|w| {
            (
                w.pattern.as_str(),
                w.source,
                w.expires.map(|t| t.to_string()),
                w.reason.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        waivers,
        [
            ("hstsPreload", "COS_IGNORE_HARDENING", None, None),
            ("versionDisclosure:X-*", "COS_IGNORE_HARDENING", None, None),
            (
                "exposed",
                "COS_WAIVE_UNTIL",
                Some("2026-12-31T00:00:00Z".into()),
                Some("proxy change; ticket OPS-1, OPS-2")
            ),
            (
                "corsOriginRestricted",
                "COS_WAIVE_UNTIL",
                Some("2027-01-30T23:00:00Z".into()),
                Some("vendor, fix due")
            ),
        ],
        "one waiver per line: a reason keeps its ';' and ','"
    );

    // A flag replaces the variable (flag > variable); the file cannot hold them.
    let s = resolve(
        &[
            "-H",
            "x",
            "--format",
            "junit",
            "--ignore-hardening",
            "hstsPreload",
            "--waive-until",
            "exposed|2026-12-31T00:00:00Z|flag",
        ],
        &env,
    )
    .unwrap();
    assert_eq!(s.format, Format::Junit);
    let patterns: Vec<(&str, &str)> = s
        .waivers
        .iter()
        .map(|w| (w.pattern.as_str(), w.source))
        .collect();
    assert_eq!(
        patterns,
        [
            ("hstsPreload", "--ignore-hardening"),
            ("exposed", "--waive-until")
        ]
    );
    assert_eq!(s.waivers[1].reason.as_deref(), Some("flag"));

    // Empty variables are unset; wrong ones are refused under the variable's name.
    let env = clean_env(
        "format-waiver-empty",
        &[
            ("COS_FORMAT", ""),
            ("COS_IGNORE_HARDENING", ""),
            ("COS_WAIVE_UNTIL", ""),
        ],
    );
    let s = resolve(&["-H", "x"], &env).unwrap();
    assert_eq!(s.format, Format::Monitoring);
    assert!(s.waivers.is_empty());
    let env = clean_env("format-bad", &[("COS_FORMAT", "xml")]);
    let err = resolve(&["-H", "x"], &env).unwrap_err().0;
    assert!(
        err.starts_with("COS_FORMAT \"xml\" is not an output format; use one of metrics,"),
        "{err}"
    );
    let env = clean_env(
        "waive-bad",
        &[(
            "COS_WAIVE_UNTIL",
            "exposed|2026-12-31T00:00:00Z|ok
exposed|2026-12-31|x",
        )],
    );
    let err = resolve(&["-H", "x"], &env).unwrap_err().0;
    assert!(
        err.starts_with("COS_WAIVE_UNTIL expiry \"2026-12-31\" is not an ISO 8601 timestamp"),
        "{err}"
    );
    let err = resolve(&["-H", "x", "--waive-until", "exposed||x"], &env)
        .unwrap_err()
        .0;
    assert!(err.starts_with("--waive-until expiry \"\" is not"), "{err}");
}

#[test]
fn the_store_timeout_defaults_to_two_seconds_and_is_bounded() {
    let env = clean_env("store-timeout", &[]);
    let timeout = |args: &[&str], env: &MapEnv| {
        resolve_in(Component::Web, args, env).map(|s| s.own.web().store_timeout)
    };
    assert_eq!(
        timeout(&["--workers", "2"], &env).unwrap(),
        Duration::from_secs(2)
    );
    assert_eq!(
        timeout(&["--store-timeout", "0.5"], &env).unwrap(),
        Duration::from_millis(500)
    );
    let from_env = clean_env("store-timeout-env", &[("COS_WEB_STORE_TIMEOUT", "5")]);
    assert_eq!(
        timeout(&["--workers", "2"], &from_env).unwrap(),
        Duration::from_secs(5)
    );
    for wrong in ["0", "61", "soon"] {
        let error = timeout(&["--store-timeout", wrong], &env).unwrap_err();
        assert!(error.0.contains("--store-timeout"), "{error:?}");
        assert!(error.0.contains("at most 60"), "{error:?}");
    }
}

#[test]
fn every_typed_default_is_a_value_of_its_row() {
    use options::Type;
    for o in options::OPTIONS.iter() {
        let Some(default) = o.default_value() else {
            continue;
        };
        let fits = match o.ty() {
            Type::Bool => boolean(default).is_some(),
            Type::Number { .. } => f64::from_text(o.ty(), default).is_some(),
            Type::Seconds { .. } => Duration::from_text(o.ty(), default).is_some(),
            Type::Port { .. } => u16::from_text(o.ty(), default).is_some(),
            // A default that is a description ("every form") is no choice.
            Type::Choice(_) => o.choices.contains(&default) || default.contains(' '),
            Type::Text | Type::Checked(_) => true,
        };
        assert!(
            fits,
            "the default {default:?} of {} is no value of it",
            o.id
        );
    }
}

#[test]
fn types_read_within_their_bounds_and_say_them() {
    use options::Type;
    let seconds = Type::Seconds { max: 60 };
    assert_eq!(
        Duration::from_text(seconds, "0.5"),
        Some(Duration::from_millis(500))
    );
    for wrong in ["0", "60.5", "-1", "NaN", "inf", "soon"] {
        assert_eq!(Duration::from_text(seconds, wrong), None, "{wrong}");
    }
    assert_eq!(seconds.what(), "a number of seconds above 0 (at most 60)");
    let workers = Type::Number {
        what: "a number of workers",
        min: 1,
        max: 32,
    };
    assert_eq!(usize::from_text(workers, "32"), Some(32));
    assert_eq!(usize::from_text(workers, "0"), None);
    assert_eq!(usize::from_text(workers, "1.5"), None);
    assert_eq!(f64::from_text(workers, "1.5"), Some(1.5));
    assert_eq!(workers.what(), "a number of workers from 1 to 32");
    assert_eq!(workers.bounds().as_deref(), Some("from 1 to 32"));
    // Whole seconds for a number of seconds, fractions for `Seconds`.
    let ttl = Type::Number {
        what: "a number of seconds",
        min: 0,
        max: 10,
    };
    assert_eq!(Duration::from_text(ttl, "0"), Some(Duration::ZERO));
    assert_eq!(Duration::from_text(ttl, "1.5"), None);
    let port = Type::Port { free: false };
    assert_eq!(u16::from_text(port, "0"), None);
    assert_eq!(u16::from_text(Type::Port { free: true }, "0"), Some(0));
    assert_eq!(u16::from_text(port, "65536"), None);
    // A type read as another Rust type than its own is never a value.
    assert_eq!(u8::from_text(Type::Text, "3"), None);
}

#[test]
fn listen_ports_take_a_free_port_and_say_so() {
    let env = clean_env("listen-port", &[]);
    let err = resolve(&["--port", "65536"], &env).unwrap_err();
    assert_eq!(
        err.0,
        "--port \"65536\" is not a port from 0 (a free port) to 65535"
    );
    let settings = resolve(&["--port", "0"], &env).unwrap();
    assert_eq!(settings.own.serve().port, 0);
}

#[test]
fn trusted_proxies_are_networks_of_every_value() {
    let env = clean_env("trusted-proxy", &[]);
    let args = [
        "--trusted-proxy",
        "10.0.0.0/8, ::1",
        "--trusted-proxy",
        "192.0.2.1",
    ];
    let settings = resolve(&args, &env).unwrap();
    let networks: Vec<String> = settings
        .own
        .web()
        .trusted_proxies
        .iter()
        .map(|(address, length)| format!("{address}/{length}"))
        .collect();
    assert_eq!(networks, ["10.0.0.0/8", "::1/128", "192.0.2.1/32"]);
    let err = resolve(&["--trusted-proxy", "10.0.0.0/8,10.0.0.0/33"], &env).unwrap_err();
    assert_eq!(
        err.0,
        "--trusted-proxy \"10.0.0.0/33\" is not a network; give CIDRs such as \
         10.0.0.0/8,::1/128"
    );
}

/// Rows read by the programs from the command line before any settings are (they choose what
/// runs), and so by no field.
const READ_BEFORE_THE_SETTINGS: &[(Id, &str)] = &[
    (Id::help, "prints the manual"),
    (Id::version, "prints the version"),
    (Id::configure, "starts the wizard"),
    (Id::upgrade_self, "runs the self-upgrade"),
    (Id::check_only, "runs the self-upgrade's check"),
];

/// Every row of the table fills a field: reading the settings of every component asks for
/// each row (the rows that choose what runs aside), so a row added without its field fails.
#[test]
fn every_row_is_read_by_a_field() {
    let env = MapEnv(Default::default());
    let mut asked = std::collections::BTreeSet::new();
    for &component in ByComponent::COMPONENTS {
        // A webhook, so that its settings are read too.
        let line = line(&[
            "-H",
            "cloud.example.com",
            "--webhook-url",
            "https://hooks.example/x",
        ]);
        let mut layers = Layers::new(component, &line, &env, None);
        // `config` is read first, to find the file, then `profile`, to layer it.
        layers.given(Id::config).unwrap();
        layers.profile = layers.parsed(Id::profile, Profile::parse).unwrap();
        Settings::<ByComponent>::read(&layers, None)
            .unwrap_or_else(|e| panic!("{component:?}: {e}"));
        asked.extend(layers.asked.take());
    }
    let unread: Vec<&str> = Id::ALL
        .iter()
        .filter(|id| !asked.contains(id))
        .filter(|id| !READ_BEFORE_THE_SETTINGS.iter().any(|(r, _)| r == *id))
        .map(|id| id.name())
        .collect();
    assert!(unread.is_empty(), "rows no field reads: {unread:?}");
}

/// A component's rules over several values are the settings' own: `serve` beyond loopback
/// without a token, and `web` with a weak MCP token, are refused while reading, before any
/// server binds, and every rule broken is named at once. No token is ever printed.
#[test]
fn a_server_is_refused_before_it_starts() {
    let env = clean_env("start-rules", &[]);
    let e = resolve_in(Component::Serve, &["--listen", "0.0.0.0"], &env).unwrap_err();
    assert!(
        e.0.starts_with("refusing to listen on 0.0.0.0 without a token"),
        "{e}"
    );
    let good = "0123456789abcdef0123456789abcdef";
    assert!(
        resolve_in(
            Component::Serve,
            &["--listen", "0.0.0.0", "--token", good],
            &env
        )
        .is_ok()
    );
    // A token read from a reference is named by its reference.
    let env = clean_env("start-rules-reference", &[("WEAK", "short")]);
    let e = resolve_in(Component::Serve, &["--token", "env://WEAK"], &env).unwrap_err();
    assert!(
        e.0.starts_with("--token from env://WEAK: refusing to start: the token is shorter"),
        "{e}"
    );

    let weak = "weak-mcp-token";
    let e = resolve_in(Component::Web, &["--mcp-token", weak], &env).unwrap_err();
    assert!(e.0.contains("MCP token is shorter than 32"), "{e}");
    assert!(!e.0.contains(weak), "{e}");
    assert!(resolve_in(Component::Web, &["--mcp-token", good], &env).is_ok());

    // What the configuration wizard checks answer by answer leaves the rules over several
    // values to the end, when every answer is in.
    let flags = [(Id::listen, "0.0.0.0".to_string())];
    let settings =
        validate::<ServeSettings>(&Default::default(), &flags, &env, Component::Serve).unwrap();
    assert!(settings.ready_to_start().is_err());
}

/// `--host-list`: a target a line after those of -H, blank lines and `#` comments skipped,
/// each target once; a wrong line is named by its number.
#[test]
fn targets_come_from_a_host_list_too() {
    let dir = temp_dir("host-list");
    let file = dir.join("hosts.txt");
    std::fs::write(
        &file,
        "# the night's fleet\n\
         a.example\n\
         \n\
         b.example:8443   # behind a port\n\
         https://c.example/cloud\n\
         a.example\n\
         first.example\n",
    )
    .unwrap();
    let path = file.display().to_string();
    let env = clean_env("host-list-env", &[]);
    let s = resolve(&["-H", "first.example", "--host-list", &path], &env).unwrap();
    let names: Vec<String> = s.targets.iter().map(|t| t.input.clone()).collect();
    assert_eq!(
        names,
        [
            "first.example",
            "a.example",
            "b.example:8443",
            "https://c.example/cloud"
        ]
    );
    // Alone, from the configuration file's key.
    let config = dir.join("config.yml");
    std::fs::write(&config, format!("host_list: {path}\n")).unwrap();
    let config = config.display().to_string();
    let s = resolve(&["--config", &config], &env).unwrap();
    assert_eq!(s.targets.len(), 4);
    // A -H on the command line replaces the file's list, as it replaces its `host`.
    let s = resolve(&["--config", &config, "-H", "z.example"], &env).unwrap();
    assert_eq!(s.targets.len(), 1);
    let env_list = clean_env("host-list-variable", &[("COS_HOST_LIST", &path)]);
    let s = resolve(&["-H", "z.example"], &env_list).unwrap();
    assert_eq!(s.targets.len(), 1, "the flag is stronger than the variable");
    let s = resolve(&[], &env_list).unwrap();
    assert_eq!(s.targets.len(), 4);

    std::fs::write(&file, "a.example\n\nb.example:99999\n").unwrap();
    let e = resolve(&["--host-list", &path], &env).unwrap_err();
    assert!(
        e.0.starts_with(&format!("host list {path}, line 3: ")),
        "{e}"
    );
    let missing = dir.join("none.txt").display().to_string();
    let e = resolve(&["--host-list", &missing], &env).unwrap_err();
    assert_eq!(
        e.0,
        format!(
            "host list {missing} does not exist; point --host-list at a text file of targets, \
             one a line"
        )
    );
    std::fs::write(&file, "# nothing yet\n").unwrap();
    let e = resolve(&["--host-list", &path], &env).unwrap_err();
    assert!(e.0.starts_with("no target given"), "{e}");
}

/// A run takes at most `MAX_TARGETS` targets: a wrong list is refused, not held.
#[test]
fn a_host_list_beyond_the_most_targets_is_refused() {
    let dir = temp_dir("host-list-many");
    let file = dir.join("hosts.txt");
    let text: String = (0..=MAX_TARGETS)
        .map(|n| format!("h{n}.example\n"))
        .collect();
    std::fs::write(&file, text).unwrap();
    let env = clean_env("host-list-many-env", &[]);
    let e = resolve(&["--host-list", &file.display().to_string()], &env).unwrap_err();
    assert_eq!(
        e.0,
        "more than 100000 targets; split them over several runs"
    );
}
