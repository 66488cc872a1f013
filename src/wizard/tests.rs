//! The wizard driven by scripted answers: every group, answers refused and asked again (at a
//! terminal) or stopping the wizard (without one), secrets only as references, confirmation
//! before replacing, mode 0600, and a file that a run reads back.

use super::*;
use crate::settings::secrets::MapEnv;
use std::io::Cursor;

fn temp_dir(name: &str) -> PathBuf {
    // Plain characters only: the printed command line quotes a path that has others.
    let thread: String = format!("{:?}", std::thread::current().id())
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let dir =
        std::env::temp_dir().join(format!("cos-wizard-{name}-{}-{thread}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An environment with HOME in the test's own directory, plus `pairs`.
fn env_in(dir: &Path, pairs: &[(&str, &str)]) -> MapEnv {
    let mut env = MapEnv::with(pairs);
    env.0.insert("HOME".into(), dir.display().to_string());
    env
}

struct Drive {
    result: Result<Written, Stopped>,
    transcript: String,
}

/// Runs the wizard on `answers` (one per line).
fn drive(request: &Request, answers: &[&str], terminal: bool, env: &MapEnv) -> Drive {
    let mut text = answers.join("\n");
    if !answers.is_empty() {
        text.push('\n');
    }
    let mut input = Cursor::new(text.into_bytes());
    let mut output = Vec::new();
    let result = run(
        request,
        Io {
            input: &mut input,
            output: &mut output,
            terminal,
        },
        env,
    );
    Drive {
        result,
        transcript: String::from_utf8(output).unwrap(),
    }
}

fn plugin(path: &Path) -> Request {
    Request {
        program: Program::Plugin,
        config: Some(path.display().to_string()),
        root: false,
    }
}

fn scanner(path: &Path) -> Request {
    Request {
        program: Program::Scanner,
        config: Some(path.display().to_string()),
        root: false,
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A run with `--config <file>` (and `extra` flags), as the printed command line does.
fn read_back(path: &Path, extra: &[&str], env: &MapEnv) -> Settings {
    let mut args = vec!["--config".to_string(), path.display().to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let line = match cli::parse(args).unwrap() {
        cli::Invocation::Scan(line) => line,
        other => panic!("{other:?}"),
    };
    Settings::resolve(&line, env).unwrap_or_else(|e| panic!("the written file reads: {}", e.0))
}

/// No group: the answers to the plugin's optional groups, all Enter.
const NO_GROUPS: [&str; 6] = ["", "", "", "", "", ""];

#[test]
fn the_host_alone_makes_a_file_a_run_reads() {
    let dir = temp_dir("host-only");
    let path = dir.join("config.json");
    let env = env_in(&dir, &[]);
    let mut answers = vec!["cloud.example.com, 192.0.2.10:9200"];
    answers.extend(NO_GROUPS);
    let d = drive(&plugin(&path), &answers, false, &env);
    let written = d
        .result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    assert_eq!(written.path, path);
    assert_eq!(
        json(&path),
        serde_json::json!({"host": "cloud.example.com, 192.0.2.10:9200"})
    );
    #[cfg(unix)]
    assert_eq!(mode(&path), 0o600, "a new file is the owner's only");
    let settings = read_back(&path, &[], &env);
    assert_eq!(settings.targets.len(), 2);
    assert_eq!(settings.config_file.as_deref(), Some(path.as_path()));
    // The transcript shows the answers and ends with the command line that uses the file.
    assert!(
        d.transcript
            .contains("with an optional :port): cloud.example.com, 192.0.2.10:9200\n"),
        "{}",
        d.transcript
    );
    let command = format!("check-storage-security --config {}", path.display());
    assert_eq!(written.command, command);
    assert!(
        d.transcript
            .contains(&format!("Run the check with it:\n  {command}\n")),
        "{}",
        d.transcript
    );
    assert!(d.transcript.contains("In Icinga 2 or Nagios"));
    // Nothing but the file is left in the directory (no temporary file of the atomic write).
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("config.json")]);
}

#[test]
fn every_group_of_the_plugin() {
    let dir = temp_dir("plugin-groups");
    let path = dir.join("config.json");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\n").unwrap();
    let token = dir.join("token");
    std::fs::write(&token, "feed-token\n").unwrap();
    let ca_answer = ca.display().to_string();
    let token_answer = format!("file://{}", token.display());
    let env = env_in(
        &dir,
        &[
            ("HOOK", "https://chat.example/hooks/T0K3N"),
            ("HOOK_AUTH", "Authorization: Bearer s3cr3t"),
        ],
    );
    let answers = [
        "cloud.example.com",
        // thresholds or a profile
        "yes",
        "ops",
        "4",
        "2",
        "45",
        "y",
        // connection
        "y",
        "5",
        "40",
        "1",
        "http://proxy.example:3128",
        &ca_answer,
        // hardening
        "y",
        "",
        "yes",
        "no",
        // webhook
        "y",
        "env://HOOK",
        "warning",
        "chatblocks",
        "env://HOOK_AUTH",
        "",
        "7",
        "",
        // releases
        "y",
        "bundled",
        "lts",
        &token_answer,
        // output
        "y",
        "summary",
    ];
    let d = drive(&plugin(&path), &answers, false, &env);
    let written = d
        .result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    assert_eq!(
        json(&path),
        serde_json::json!({
            "host": "cloud.example.com",
            "profile": "ops",
            "warning": 4,
            "critical": 2,
            "eol_warning": 45,
            "update_warning": true,
            "timeout": 5,
            "time_budget": 40,
            "retries": 1,
            "proxy": "http://proxy.example:3128",
            "check_hardening": true,
            "webhook_url": "env://HOOK",
            "webhook_on": "warning",
            "webhook_format": "chatblocks",
            "webhook_headers": ["env://HOOK_AUTH"],
            "webhook_timeout": 7,
            "release_track": "lts",
            "releases": {"mode": "bundled", "token": token_answer},
            "scanner": {
                "tls_ca_file": ca_answer,
                "check_all_addresses": true,
                "check_login_throttling": false,
            },
        })
    );
    // --format has no key: it goes on the printed command line.
    assert_eq!(
        written.command,
        format!(
            "check-storage-security --config {} --format summary",
            path.display()
        )
    );
    let s = read_back(&path, &["--format", "summary"], &env);
    assert_eq!((s.warning, s.critical, s.eol_warning), (4, 2, Some(45)));
    assert!(
        s.update_warning && s.check_hardening && s.scan.all_addresses && !s.scan.login_throttling
    );
    assert_eq!(s.scan.timeout, std::time::Duration::from_secs(5));
    assert_eq!(s.scan.retries, 1);
    assert_eq!(s.scan.ca_file.as_deref(), Some(ca.as_path()));
    assert_eq!(s.scan.update_source, settings::UpdateSource::Bundled);
    // Written to the file (above), but a run judging from the bundled data never asks the
    // feed, so it never resolves the token's reference.
    assert_eq!(s.scan.release_token, None);
    let hook = s.webhook.expect("the webhook is on");
    assert_eq!(hook.url, "https://chat.example/hooks/T0K3N");
    assert_eq!(hook.headers.len(), 1);
    assert_eq!(s.format, settings::Format::Summary);
    // References are written as references: the values are nowhere.
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in ["T0K3N", "s3cr3t", "feed-token"] {
        assert!(!text.contains(secret), "{text}");
        assert!(!d.transcript.contains(secret), "{}", d.transcript);
    }
}

#[test]
fn the_scanner_asks_for_the_service() {
    let dir = temp_dir("scanner");
    let path = dir.join("scanner.json");
    let token = dir.join("token");
    std::fs::write(&token, "0123456789abcdef0123456789abcdef0123\n").unwrap();
    let token_answer = format!("file://{}", token.display());
    let env = env_in(&dir, &[]);
    let answers = [
        // no host: scan and serve name theirs
        "",
        "",
        "",
        "",
        "",
        // the scan service
        "y",
        "0.0.0.0",
        "8900",
        &token_answer,
        "600",
    ];
    let d = drive(&scanner(&path), &answers, false, &env);
    let written = d
        .result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    assert_eq!(
        json(&path),
        serde_json::json!({"service": {
            "listen": "0.0.0.0", "port": 8900, "token": token_answer, "cache_ttl": 600,
        }})
    );
    assert_eq!(
        written.command,
        format!("check-storage-scanner --config {} serve", path.display())
    );
    let line = cli::CommandLine {
        values: vec![(
            options::spec(crate::settings::options::Id::config),
            path.display().to_string(),
        )],
    };
    let s = Settings::<ServeSettings>::resolve_for(&line, &env, Component::Serve).unwrap();
    assert_eq!(s.own.port, 8900);
    assert_eq!(s.own.cache_ttl, std::time::Duration::from_secs(600));
    assert!(s.own.token.is_some());
    // Neither the webhook nor the output format is the scanner's.
    assert!(!d.transcript.contains("webhook"), "{}", d.transcript);
    assert!(!d.transcript.contains("Output format"), "{}", d.transcript);
}

#[test]
fn the_scanners_host_is_checked_as_the_plugin_reads_it() {
    let dir = temp_dir("scanner-host");
    let path = dir.join("scanner.json");
    let d = drive(
        &scanner(&path),
        &["ftp://cloud.example.com"],
        false,
        &env_in(&dir, &[]),
    );
    let Err(Stopped(line)) = d.result else {
        panic!("{}", d.transcript)
    };
    assert!(line.contains("unsupported scheme \"ftp\""), "{line}");
}

#[test]
fn the_service_refuses_a_listen_address_without_a_good_token() {
    let dir = temp_dir("scanner-token");
    let path = dir.join("scanner.json");
    let short = dir.join("short");
    std::fs::write(&short, "too-short").unwrap();
    let short_answer = format!("file://{}", short.display());
    let env = env_in(&dir, &[]);
    let prefix = ["", "", "", "", "", "y", "0.0.0.0", ""];
    // At a terminal: no token, then a short one, are refused with serve's own reasons; a
    // token only the service's environment holds is kept with a note.
    let mut answers = prefix.to_vec();
    answers.extend(["", &short_answer, "env://SCANNER_TOKEN", ""]);
    let d = drive(&scanner(&path), &answers, true, &env);
    d.result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    assert!(
        d.transcript
            .contains("refusing to listen on 0.0.0.0 without a token"),
        "{}",
        d.transcript
    );
    assert!(
        d.transcript.contains("shorter than 32 characters"),
        "{}",
        d.transcript
    );
    assert!(
        d.transcript
            .contains("environment variable SCANNER_TOKEN is unset or empty"),
        "{}",
        d.transcript
    );
    assert_eq!(json(&path)["service"]["token"], "env://SCANNER_TOKEN");
    // Without a terminal the first refusal stops it.
    std::fs::remove_file(&path).unwrap();
    let mut answers = prefix.to_vec();
    answers.extend([""]);
    let d = drive(&scanner(&path), &answers, false, &env);
    let Err(Stopped(line)) = d.result else {
        panic!("{}", d.transcript)
    };
    assert!(line.contains("without a token"), "{line}");
    assert!(!path.exists());
}

#[test]
fn refused_answers_are_asked_again_at_a_terminal() {
    let dir = temp_dir("terminal");
    let path = dir.join("config.json");
    let env = env_in(&dir, &[]);
    let answers = [
        "",
        "ftp://cloud.example.com",
        "cloud.example.com",
        "perhaps",
        "y",
        "paranoid",
        "",
        "9",
        "3",
        "4",
        "1",
        "",
        "maybe",
        "",
        "",
        "",
        "",
        "",
        "",
    ];
    let d = drive(&plugin(&path), &answers, true, &env);
    d.result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    // Each refusal is one line with the parser's own message.
    for expected in [
        "  ! the check needs a host; give at least one\n",
        "ftp",
        "  ! answer yes or no\n",
        "  ! profile \"paranoid\" is not a profile; use one of strict, ops, lenient\n",
        "  ! warning \"9\" is not a rating from 0 to 5\n",
        "  ! critical 4 exceeds warning 3; both are ratings 0-5 and critical must be at or \
         below warning\n",
        "  ! update_warning \"maybe\" is not a boolean; write true or false\n",
    ] {
        assert!(
            d.transcript.contains(expected),
            "missing {expected:?} in\n{}",
            d.transcript
        );
    }
    assert_eq!(
        json(&path),
        serde_json::json!({"host": "cloud.example.com", "warning": 3, "critical": 1})
    );
}

#[test]
fn without_a_terminal_a_refused_answer_stops_with_nothing_written() {
    let dir = temp_dir("pipe-refused");
    let path = dir.join("config.json");
    let env = env_in(&dir, &[]);
    let d = drive(
        &plugin(&path),
        &["cloud.example.com", "y", "", "9", "3"],
        false,
        &env,
    );
    assert_eq!(
        d.result.unwrap_err(),
        Stopped(
            "answer to \"WARNING at this rating (0-5) and below\" refused: warning \"9\" is not \
             a rating from 0 to 5; nothing written"
                .to_string()
        )
    );
    assert!(!path.exists());
}

#[test]
fn the_end_of_the_input_stops_with_nothing_written() {
    let dir = temp_dir("eof");
    let path = dir.join("config.json");
    let env = env_in(&dir, &[]);
    for answers in [&[][..], &["cloud.example.com", "y", "strict"][..]] {
        for terminal in [false, true] {
            let d = drive(&plugin(&path), answers, terminal, &env);
            let Err(Stopped(line)) = d.result else {
                panic!("{}", d.transcript)
            };
            assert!(line.starts_with("the input ended at \""), "{line}");
            assert!(line.ends_with("; nothing written"), "{line}");
            assert!(!line.contains('\n'));
            assert!(!path.exists());
        }
    }
}

#[test]
fn secrets_are_taken_only_as_references() {
    let dir = temp_dir("secrets");
    let path = dir.join("config.json");
    let env = env_in(&dir, &[("BAD_HOOK", "ftp://chat.example/T0K3N")]);
    let answers = [
        "cloud.example.com",
        "",
        // connection: a proxy with a password is a secret; without one it is written
        "y",
        "",
        "",
        "",
        "http://user:pa55word@proxy.example:3128",
        "http://proxy.example:3128",
        "",
        "",
        // webhook
        "y",
        "https://chat.example/hooks/T0K3N",
        "exec://pass show hook",
        "file://relative/hook",
        "secret://../hook",
        "env://BAD_HOOK",
        "env://HOOK",
        "",
        "",
        "Authorization: Bearer s3cr3t",
        "secret://hook-auth",
        "",
        "",
        "",
        // releases
        "y",
        "",
        "",
        "ghp_0123456789",
        "",
        "",
    ];
    let d = drive(&plugin(&path), &answers, true, &env);
    d.result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    let t = &d.transcript;
    for expected in [
        "  ! a proxy with a user and password is a secret: give it as a reference",
        "  ! --webhook-url is a secret: give a reference (env://NAME, file:///path or \
         secret://NAME), never the value itself; the answer was not kept\n",
        "  ! the wizard writes env://, file:// and secret:// references",
        "  ! \"file://relative/hook\" is relative to the directory of the run",
        "  ! secret reference \"secret://../hook\": the name must be a plain file name",
        "  ! --webhook-url (from env://BAD_HOOK) is not an http(s) address",
        "  note: secret reference \"env://HOOK\": environment variable HOOK is unset or empty",
        "  ! --webhook-header is a secret: give a reference",
        "  note: secret reference \"secret://hook-auth\": not found",
        "  ! --release-token is a secret: give a reference",
    ] {
        assert!(t.contains(expected), "missing {expected:?} in\n{t}");
    }
    // A refused value is never repeated, and never kept.
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in ["pa55word", "T0K3N", "s3cr3t", "ghp_0123456789"] {
        assert!(!text.contains(secret), "{text}");
        assert!(!t.contains(secret), "{t}");
    }
    assert_eq!(
        json(&path),
        serde_json::json!({
            "host": "cloud.example.com",
            "proxy": "http://proxy.example:3128",
            "webhook_url": "env://HOOK",
            "webhook_headers": ["secret://hook-auth"],
        })
    );
    // Where the references resolve, the file reads.
    let secrets = dir.join("secrets");
    std::fs::create_dir_all(&secrets).unwrap();
    std::fs::write(secrets.join("hook-auth"), "Authorization: Bearer x\n").unwrap();
    let env = env_in(
        &dir,
        &[
            ("HOOK", "https://chat.example/hooks/x"),
            ("COS_SECRETS_DIR", &secrets.display().to_string()),
        ],
    );
    assert!(read_back(&path, &[], &env).webhook.is_some());
}

#[test]
fn without_a_terminal_a_plaintext_secret_stops_unrepeated() {
    let dir = temp_dir("pipe-secret");
    let path = dir.join("config.json");
    let env = env_in(&dir, &[]);
    let d = drive(
        &plugin(&path),
        &[
            "cloud.example.com",
            "",
            "",
            "",
            "y",
            "https://chat.example/T0K3N",
        ],
        false,
        &env,
    );
    let Err(Stopped(line)) = d.result else {
        panic!("{}", d.transcript)
    };
    assert!(line.contains("--webhook-url is a secret"), "{line}");
    assert!(!line.contains("T0K3N") && !d.transcript.contains("T0K3N"));
    assert!(!path.exists());
}

#[test]
fn an_existing_file_is_replaced_only_when_confirmed() {
    let dir = temp_dir("replace");
    let path = dir.join("config.json");
    let env = env_in(&dir, &[]);
    std::fs::write(&path, "{\"host\": \"old.example\"}\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    // Enter is no: the file stays as it was.
    for answer in ["", "no"] {
        let d = drive(&plugin(&path), &[answer], false, &env);
        let Err(Stopped(line)) = d.result else {
            panic!("{}", d.transcript)
        };
        assert_eq!(
            line,
            format!("{} kept as it is; nothing written", path.display())
        );
        assert!(
            d.transcript
                .contains(&format!("{} exists. Replace it? [no]: ", path.display())),
            "{}",
            d.transcript
        );
        assert_eq!(json(&path)["host"], "old.example");
    }
    // Yes: replaced, and the replacement is mode 0600 whatever the old file's mode was.
    let mut answers = vec!["yes", "new.example"];
    answers.extend(NO_GROUPS);
    let d = drive(&plugin(&path), &answers, false, &env);
    d.result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    assert_eq!(json(&path), serde_json::json!({"host": "new.example"}));
    #[cfg(unix)]
    assert_eq!(mode(&path), 0o600);
}

#[cfg(unix)]
#[test]
fn a_replaced_file_keeps_its_owner() {
    use std::os::unix::fs::MetadataExt;
    if !is_root() {
        return; // Only root can hand a file to another user.
    }
    let dir = temp_dir("owner");
    let path = dir.join("config.json");
    std::fs::write(&path, "{}\n").unwrap();
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    let mut answers = vec!["y", "cloud.example.com"];
    answers.extend(NO_GROUPS);
    let d = drive(&plugin(&path), &answers, false, &env_in(&dir, &[]));
    d.result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn the_file_is_asked_for_with_the_default_a_run_finds() {
    let dir = temp_dir("default-path");
    let env = env_in(&dir, &[]);
    let user = Request {
        program: Program::Plugin,
        config: None,
        root: false,
    };
    let mut answers = vec!["", "cloud.example.com"];
    answers.extend(NO_GROUPS);
    let d = drive(&user, &answers, false, &env);
    let written = d
        .result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    let expected = dir.join(".config/check-storage-security/.env.json");
    assert_eq!(written.path, expected);
    assert!(expected.is_file());
    assert!(
        d.transcript.contains("this user's file of the search list"),
        "{}",
        d.transcript
    );
    // A run of this user finds it without --config.
    assert_eq!(
        config_file::locate(None, &env).unwrap().as_deref(),
        Some(expected.as_path())
    );

    // As root the system-wide file is offered (the input ends before anything is written).
    let root = Request {
        root: true,
        ..user.clone()
    };
    let d = drive(&root, &[], false, &env);
    assert!(d.result.is_err());
    assert!(
        d.transcript
            .contains("Configuration file to write [/etc/check-storage-security/config.json]: "),
        "{}",
        d.transcript
    );
    // COS_CONFIG_FILE, when it names a JSON file, is what a run reads: it is offered.
    let named = dir.join("named.json");
    let env = env_in(&dir, &[("COS_CONFIG_FILE", &named.display().to_string())]);
    let d = drive(&root, &[], false, &env);
    assert!(
        d.transcript.contains(&format!(
            "Configuration file to write [{}]: ",
            named.display()
        )),
        "{}",
        d.transcript
    );
    // A name a run would read as YAML is refused; another is taken.
    let other = dir.join("other.json");
    let mut answers = vec!["config.yml", other.to_str().unwrap(), "cloud.example.com"];
    answers.extend(NO_GROUPS);
    let d = drive(&user, &answers, true, &env_in(&dir, &[]));
    assert_eq!(d.result.unwrap().path, other);
    assert!(
        d.transcript.contains(
            "  ! the wizard writes JSON, which a run reads only from a name ending in .json"
        ),
        "{}",
        d.transcript
    );
}

#[test]
fn pinned_and_bad_formats_are_refused_by_the_parsers() {
    let dir = temp_dir("parsers");
    let path = dir.join("config.json");
    let env = env_in(&dir, &[]);
    let answers = [
        "cloud.example.com",
        "",
        "",
        "",
        "",
        "y",
        "pinned",
        "feed",
        "",
        "",
        "y",
        "xml",
        "json",
    ];
    let d = drive(&plugin(&path), &answers, true, &env);
    let written = d
        .result
        .unwrap_or_else(|e| panic!("{e:?}\n{}", d.transcript));
    assert!(
        d.transcript.contains(
            "  ! --update-source pinned needs --latest-version VERSION (the newest release to \
             compare with)\n"
        ),
        "{}",
        d.transcript
    );
    assert!(
        d.transcript
            .contains("  ! --format \"xml\" is not an output format; use one of metrics"),
        "{}",
        d.transcript
    );
    assert_eq!(json(&path)["releases"]["mode"], "feed");
    assert!(written.command.ends_with(" --format json"));
}

#[test]
fn validate_reads_answers_as_a_file_and_ignores_the_shells_variables() {
    let env = MapEnv::with(&[("COS_WARNING", "1"), ("COS_HOST", "elsewhere.example")]);
    let mut file = BTreeMap::new();
    file.insert("host".to_string(), ConfigValue::Scalar("a.example".into()));
    file.insert("warning".to_string(), ConfigValue::Scalar("4".into()));
    let s = settings::validate::<()>(&file, &[], &env, Component::Plugin).unwrap();
    assert_eq!(s.warning, 4, "COS_WARNING of this shell does not count");
    assert_eq!(s.targets[0].display_name(), "a.example");
    file.insert("timeout".to_string(), ConfigValue::Scalar("0".into()));
    assert_eq!(
        settings::validate::<()>(&file, &[], &env, Component::Plugin).unwrap_err(),
        "timeout \"0\" is not a number of seconds above 0 (at most 3600)"
    );
}

#[test]
fn words_are_quoted_for_the_shell_only_when_needed() {
    assert_eq!(shell_word("/etc/x/config.json"), "/etc/x/config.json");
    assert_eq!(shell_word("/tmp/my dir/c.json"), "'/tmp/my dir/c.json'");
    assert_eq!(shell_word("it's.json"), r"'it'\''s.json'");
}
