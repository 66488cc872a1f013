//! The Debian package (`make deb`, `packaging/deb/build.sh`), built here from the test build's
//! binaries:
//!
//! - lintian shows no error and no warning but the one overridden with its reason;
//! - the files sit where the Debian policy and the consuming programs look;
//! - as root (CI is): `dpkg -i` installs it, the installed programs run (the plugin from
//!   Nagios' plugin directory, as the user Icinga runs checks as), the shipped units pass
//!   `systemd-analyze verify` and score an exposure below 2.0 in `systemd-analyze security`,
//!   they start and work under systemd's sandbox (a systemd booted for the test, see
//!   [`Systemd`]), and `dpkg --purge` leaves nothing behind.

use crate::support::plugin::healthy;
use crate::support::{FakeInstance, closed_port};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const PACKAGE: &str = "check-storage-security";
const VERSION: &str = env!("CARGO_PKG_VERSION");
const PLUGIN: &str = env!("CARGO_BIN_EXE_check-storage-security");
const SCANNER: &str = env!("CARGO_BIN_EXE_check-storage-scanner");
const UNITS: [&str; 5] = [
    "check-storage-scanner.service",
    "check-storage-scanner-web.service",
    "check-storage-security-exporter.service",
    "check-storage-security.service",
    "check-storage-security.timer",
];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a command, failing the test with its output when it does not succeed.
fn ok(command: &mut Command) -> String {
    let out = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{command:?} does not run ({e}): run `make deps`"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// `packaging/deb/build.sh` over the binaries this test was built with.
fn build_package(name: &str) -> PathBuf {
    let out = fresh_dir(name);
    let bin_dir = Path::new(PLUGIN).parent().unwrap();
    let printed = ok(Command::new("sh")
        .arg(repo().join("packaging/deb/build.sh"))
        .arg(bin_dir)
        .arg(&out));
    let deb = PathBuf::from(printed.lines().last().unwrap_or_default());
    assert!(deb.is_file(), "build.sh printed {printed:?}");
    assert!(
        deb.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(&format!("{PACKAGE}_{VERSION}_")),
        "{}",
        deb.display()
    );
    deb
}

/// `dpkg-deb --contents`: path (without the leading `.`) to (mode string, owner, link target).
fn contents(deb: &Path) -> BTreeMap<String, (String, String, Option<String>)> {
    ok(Command::new("dpkg-deb").arg("--contents").arg(deb))
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (mode, owner) = (fields.first()?, fields.get(1)?);
            let path = fields.get(5)?.trim_start_matches('.').trim_end_matches('/');
            let link = (fields.get(6) == Some(&"->")).then(|| fields[7].to_string());
            Some((
                path.to_string(),
                (mode.to_string(), owner.to_string(), link),
            ))
        })
        .collect()
}

/// Every file the package must ship, with its mode, by the Debian policy and the place each
/// consuming program reads it from.
const LAYOUT: &[(&str, &str)] = &[
    ("/usr/bin/check-storage-security", "-rwxr-xr-x"),
    ("/usr/bin/check-storage-scanner", "-rwxr-xr-x"),
    (
        "/usr/share/man/man1/check-storage-security.1.gz",
        "-rw-r--r--",
    ),
    (
        "/usr/share/man/man1/check-storage-scanner.1.gz",
        "-rw-r--r--",
    ),
    (
        "/usr/share/doc/check-storage-security/copyright",
        "-rw-r--r--",
    ),
    (
        "/usr/share/doc/check-storage-security/changelog.gz",
        "-rw-r--r--",
    ),
    (
        "/usr/share/bash-completion/completions/check-storage-security",
        "-rw-r--r--",
    ),
    (
        "/usr/share/bash-completion/completions/check-storage-scanner",
        "-rw-r--r--",
    ),
    (
        "/usr/share/zsh/vendor-completions/_check-storage-security",
        "-rw-r--r--",
    ),
    (
        "/usr/share/zsh/vendor-completions/_check-storage-scanner",
        "-rw-r--r--",
    ),
    (
        "/usr/share/fish/vendor_completions.d/check-storage-security.fish",
        "-rw-r--r--",
    ),
    (
        "/usr/share/fish/vendor_completions.d/check-storage-scanner.fish",
        "-rw-r--r--",
    ),
    (
        "/lib/systemd/system/check-storage-scanner.service",
        "-rw-r--r--",
    ),
    (
        "/lib/systemd/system/check-storage-security-exporter.service",
        "-rw-r--r--",
    ),
    (
        "/lib/systemd/system/check-storage-security.service",
        "-rw-r--r--",
    ),
    (
        "/lib/systemd/system/check-storage-security.timer",
        "-rw-r--r--",
    ),
    (
        "/usr/share/icinga2/include/plugins-contrib.d/check-storage-security.conf",
        "-rw-r--r--",
    ),
    (
        "/etc/nagios-plugins/config/check-storage-security.cfg",
        "-rw-r--r--",
    ),
    (
        "/usr/lib/check-storage-security/checkmk/storage_security",
        "-rwxr-xr-x",
    ),
    (
        "/usr/share/check-storage-security/prometheus/storage-security.rules.yml",
        "-rw-r--r--",
    ),
    ("/etc/check-storage-security/config.yml", "-rw-r-----"),
    (
        "/usr/share/lintian/overrides/check-storage-security",
        "-rw-r--r--",
    ),
];

#[test]
fn the_package_is_lintian_clean_and_lays_its_files_out_by_policy() {
    let deb = build_package("deb-lint");
    let lintian = Command::new("lintian")
        .args(["--fail-on", "error,warning", "--no-tag-display-limit"])
        .arg(&deb)
        .output()
        .expect("lintian does not run: run `make deps`");
    let report = text(&lintian.stdout);
    assert!(
        lintian.status.success()
            && !report
                .lines()
                .any(|l| l.starts_with("E:") || l.starts_with("W:")),
        "lintian:\n{report}{}",
        text(&lintian.stderr)
    );

    // The description names what ships, the public scan API included.
    let description = ok(Command::new("dpkg-deb")
        .arg("-f")
        .arg(&deb)
        .arg("Description"));
    for part in ["public scan API", "MCP", "PDF", "check-storage-scanner"] {
        assert!(description.contains(part), "{part}: {description}");
    }

    let files = contents(&deb);
    for (path, mode) in LAYOUT {
        let (found, owner, _) = files
            .get(*path)
            .unwrap_or_else(|| panic!("{path} is not in the package"));
        assert_eq!(found, mode, "{path}");
        assert_eq!(owner, "root/root", "{path}");
    }
    // The README and the guides ship laid out as in the repository, so that every relative link
    // of theirs names a file of the package (Markdown compressed: `<file>.gz`).
    let doc = Path::new("/usr/share/doc/check-storage-security");
    let shipped = |path: &Path| {
        let gz = format!("{}.gz", path.display());
        files.contains_key(path.to_str().unwrap()) || files.contains_key(&gz)
    };
    for document in crate::docs_links::documents() {
        assert!(
            shipped(&doc.join(&document)),
            "{} is not in the package",
            document.display()
        );
        let text = std::fs::read_to_string(repo().join(&document)).unwrap();
        for target in crate::docs_links::link_targets(&text) {
            let path = target.split('#').next().unwrap_or_default();
            if path.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let mut linked = doc.join(document.parent().unwrap());
            for part in Path::new(path).components() {
                match part {
                    std::path::Component::ParentDir => _ = linked.pop(),
                    other => linked.push(other),
                }
            }
            assert!(
                shipped(&linked),
                "{}: the link {target} names {}, which is not in the package",
                document.display(),
                linked.display()
            );
        }
    }
    let (_, _, link) = &files["/usr/lib/nagios/plugins/check-storage-security"];
    assert_eq!(link.as_deref(), Some("../../../bin/check-storage-security"));
    // Nothing under /usr/local, /home, /opt or /tmp (policy 9.1).
    for path in files.keys() {
        for forbidden in ["/usr/local", "/home", "/opt", "/tmp", "/var/lib"] {
            assert!(!path.starts_with(forbidden), "{path}");
        }
    }

    let field = |name: &str| ok(Command::new("dpkg-deb").arg("--field").arg(&deb).arg(name));
    assert_eq!(field("Package").trim(), PACKAGE);
    assert_eq!(field("Version").trim(), VERSION);
    let depends = field("Depends");
    assert!(
        depends.contains("libc6 (>= ") && depends.contains("adduser"),
        "{depends}"
    );
    assert_eq!(
        ok(Command::new("dpkg-deb")
            .arg("--info")
            .arg(&deb)
            .arg("conffiles"))
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>(),
        [
            "/etc/check-storage-security/config.yml",
            "/etc/nagios-plugins/config/check-storage-security.cfg"
        ]
    );
}

/// The packaged sample configuration with every setting it shows uncommented: what an operator
/// who enables every section runs.
fn uncommented_sample() -> Vec<String> {
    let sample = std::fs::read_to_string(repo().join("packaging/deb/config.yml")).unwrap();
    let setting = |line: &str| {
        let rest = line.strip_prefix("# ")?;
        let key = rest.trim_start();
        let name: String = key
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        (!name.is_empty()
            && key[name.len()..].starts_with(':')
            && key[name.len() + 1..]
                .chars()
                .next()
                .is_none_or(|c| c == ' '))
        .then(|| rest.to_string())
    };
    sample.lines().filter_map(setting).collect()
}

/// The uncommented sample made to run here: each place it names (a host, a file, a port) is
/// replaced by the test's, and every replaced text must occur, so the sample cannot drift
/// away from what this test runs.
fn sample_with(replacements: &[(&str, String)]) -> String {
    let mut text = uncommented_sample().join("\n");
    text.push('\n');
    for (shown, here) in replacements {
        assert!(text.contains(shown), "the sample no longer shows {shown:?}");
        text = text.replace(shown, here);
    }
    text
}

/// The text of a host list naming `host` (the sample's `host_list`, which adds to its `host`:
/// the one target is scanned once).
fn host_list_text(host: &str) -> String {
    format!("# the sample's fleet\n{host}\n")
}

/// The sample's addresses, files and release mode replaced: `host` scanned, the CA bundle and
/// webhook address files given, the scan service and the public API on the ports given (0:
/// a free one), the release data bundled (the tests never leave loopback). The webhook names
/// a closed loopback port, which the destination guard refuses anyway. The debug ports are
/// `debug_ports` (a comma-separated list the test holds closed: the machine's own 9205, ...
/// may be a developer's OpenCloud).
fn runnable_sample(
    host: &str,
    ca: &Path,
    hook: &Path,
    hosts: &Path,
    service_port: u16,
    web_port: u16,
    debug_ports: &str,
) -> String {
    sample_with(&[
        (
            "debug_ports: [9205, 9141, 9124, 9134, 9239]",
            format!("debug_ports: [{debug_ports}]"),
        ),
        (
            "host: cloud.example.com,files.example.org:9200",
            format!("host: {host}"),
        ),
        (
            "/etc/check-storage-security/hosts.txt",
            hosts.display().to_string(),
        ),
        ("/etc/ssl/private/private-ca.pem", ca.display().to_string()),
        (
            "/etc/check-storage-security/webhook-url",
            hook.display().to_string(),
        ),
        ("mode: auto", "mode: bundled".to_string()),
        ("port: 8811", format!("port: {service_port}")),
        (
            "listen: 127.0.0.1:8080",
            format!("listen: 127.0.0.1:{web_port}"),
        ),
    ])
}

/// Variables as the process runners take them.
fn borrow<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// The sample holds no secret in clear (only references), and with every setting it shows
/// uncommented each component of the package starts and works, resolving only the secrets it
/// uses: the plugin and `scan` none (the scan service's token and the public API's MCP token
/// are not theirs; the release feed's token is not read when the bundled data judges), the
/// exporter none, `serve` its token only, `web` its MCP token only.
#[test]
fn every_component_runs_on_the_sample_configuration_with_every_setting_uncommented() {
    let uncommented = uncommented_sample();
    assert!(uncommented.len() >= 20, "{uncommented:?}");
    for secret in ["token", "mcp_token", "webhook_url"] {
        for line in uncommented
            .iter()
            .filter(|l| l.trim_start().starts_with(&format!("{secret}:")))
        {
            let value = line
                .split_once(':')
                .unwrap()
                .1
                .split('#')
                .next()
                .unwrap()
                .trim();
            assert!(
                ["secret://", "file://", "env://", "exec://"]
                    .iter()
                    .any(|s| value.starts_with(s)),
                "{line}: a secret in clear"
            );
        }
    }
    let fake = FakeInstance::start(healthy("7.2.4"));
    let dir = fresh_dir("deb-sample");
    let hook = dir.join("webhook-url");
    std::fs::write(&hook, format!("https://127.0.0.1:{}/hook\n", closed_port())).unwrap();
    let (_held, (_, debug_ports)) = crate::support::held_debug_ports(5);
    let hosts = dir.join("hosts.txt");
    std::fs::write(&hosts, host_list_text(&fake.host_port())).unwrap();
    let config_text = runnable_sample(
        &fake.host_port(),
        &fake.ca_file(),
        &hook,
        &hosts,
        0,
        0,
        &debug_ports,
    );
    assert!(!config_text.contains("/etc/"), "{config_text}");
    let config = dir.join("config.yml");
    std::fs::write(&config, &config_text).unwrap();
    let config_env = config.display().to_string();
    // Each component sees only the credentials its unit hands it.
    let secrets = |name: &str, held: &[&str]| {
        let secrets = dir.join(name);
        std::fs::create_dir(&secrets).unwrap();
        for secret in held {
            std::fs::write(secrets.join(secret), "t".repeat(40)).unwrap();
        }
        secrets.display().to_string()
    };
    let none = secrets("no-secrets", &[]);
    let state = dir.join("state").display().to_string();
    let env = |secrets: &str| -> Vec<(&'static str, String)> {
        vec![
            ("COS_CONFIG_FILE", config_env.clone()),
            ("COS_SECRETS_DIR", secrets.to_string()),
            ("COS_NOW", crate::support::PINNED_NOW.to_string()),
            ("COS_STATE_DIR", state.clone()),
        ]
    };
    let run = |program: &str, args: &[&str], env: &[(&'static str, String)]| {
        let mut command = Command::new(program);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &dir)
            .current_dir(&dir);
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().unwrap()
    };

    // The plugin as the timer and Nagios run it: the configured host, a verdict (not UNKNOWN).
    let plugin = run(PLUGIN, &[], &env(&none));
    let line = text(&plugin.stdout);
    assert!(
        matches!(plugin.status.code(), Some(0..=2)) && line.contains(&fake.host_port()),
        "the plugin: {line}{}",
        text(&plugin.stderr)
    );
    let summary = run(PLUGIN, &["--format", "summary"], &env(&none));
    assert!(
        text(&summary.stdout).contains("GRADE"),
        "the timer's run: {}{}",
        text(&summary.stdout),
        text(&summary.stderr)
    );
    let scan = run(SCANNER, &["scan", &fake.host_port()], &env(&none));
    assert!(
        matches!(scan.status.code(), Some(0..=2)) && text(&scan.stdout).contains("\"rating\""),
        "scan: {}{}",
        text(&scan.stdout),
        text(&scan.stderr)
    );

    // The exporter, started as its unit does.
    let mut exporter_env = env(&none);
    exporter_env.push(("COS_PROMETHEUS_LISTEN_PORT", "0".to_string()));
    let exporter = crate::support::exporter::ExporterProcess::start(
        Path::new(PLUGIN),
        &["--prometheus-listen-port".to_string(), "0".to_string()],
        &borrow(&exporter_env),
        &dir,
    );
    let metrics = exporter.get("/metrics");
    assert!(
        metrics.body.contains("storage_security_rating_score{"),
        "the exporter: {}\n{}",
        metrics.body,
        exporter.stderr()
    );

    // The scan service with its token, and without: the token is its own to resolve.
    let serve_env = env(&secrets("serve-secrets", &["scanner-token"]));
    let service = crate::support::service::ScannerService::start_with(
        Path::new(SCANNER),
        &dir,
        &["serve"],
        &borrow(&serve_env),
    )
    .unwrap_or_else(|refused| panic!("serve did not start: {refused:?}"));
    let token = "t".repeat(40);
    let scanned = service.get(
        &format!("/api/scan?url={}", fake.host_port()),
        &[("Authorization", &format!("Bearer {token}"))],
    );
    assert_eq!(scanned.status, 200, "serve: {}", scanned.text());
    let tokenless = env(&none);
    let refused = crate::support::service::ScannerService::start_with(
        Path::new(SCANNER),
        &dir,
        &["serve"],
        &borrow(&tokenless),
    )
    .err()
    .expect("serve without its token credential refuses to start");
    assert!(
        refused.stderr.contains("secret://scanner-token"),
        "{refused:?}"
    );

    // The public API with its MCP token only; it listens where web.listen says, never on
    // the scan service's address.
    let mut web_env = env(&secrets("web-secrets", &["web-mcp-token"]));
    web_env.push(("COS_WEB_ALLOW_PRIVATE_TARGETS", "1".to_string()));
    let web = crate::support::service::ScannerService::start_with(
        Path::new(SCANNER),
        &dir,
        &["web"],
        &borrow(&web_env),
    )
    .unwrap_or_else(|refused| panic!("web did not start: {refused:?}"));
    assert_ne!(web.addr, service.addr);
    let health = web.get("/healthz", &[]);
    assert_eq!(health.status, 200, "web: {}", health.text());
    let mcp = web.request(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ],
        br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(
        mcp.status, 401,
        "the MCP token from the credential guards /mcp"
    );
}

fn is_root() -> bool {
    ok(Command::new("id").arg("-u")).trim() == "0"
}

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Status}", package])
        .output()
        .is_ok_and(|o| text(&o.stdout) == "installed")
}

/// Installs the package; purges it again when dropped, whatever the test did.
struct Installed;

impl Installed {
    fn install(deb: &Path) -> Installed {
        assert!(
            !installed(PACKAGE),
            "{PACKAGE} is already installed on this machine; this test installs and purges it: \
             remove it first (dpkg --purge {PACKAGE})"
        );
        let guard = Installed;
        ok(Command::new("dpkg")
            .arg("-i")
            .arg(deb)
            .env("DEBIAN_FRONTEND", "noninteractive"));
        assert!(installed(PACKAGE));
        guard
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["--purge", PACKAGE]).output();
    }
}

#[test]
fn as_root_the_package_installs_runs_its_units_under_systemd_and_purges_cleanly() {
    if !is_root() {
        eprintln!("not root: dpkg -i is left to CI (the package is still built and linted above)");
        return;
    }
    let deb = build_package("deb-install");
    let guard = Installed::install(&deb);

    // The files are where the policy and the consuming programs say.
    for (path, _) in LAYOUT {
        assert!(Path::new(path).exists(), "{path} was not installed");
    }
    // Prometheus loads the alerting rules from where they are installed.
    ok(Command::new("promtool").args([
        "check",
        "rules",
        "/usr/share/check-storage-security/prometheus/storage-security.rules.yml",
    ]));
    let config = std::fs::metadata("/etc/check-storage-security/config.yml").unwrap();
    assert_eq!(config.permissions().mode() & 0o777, 0o640);
    assert_eq!(config.uid(), 0);
    let group = ok(Command::new("getent").args(["group", "check-storage-security"]));
    let gid: u32 = group.split(':').nth(2).unwrap().parse().unwrap();
    assert_eq!(
        config.gid(),
        gid,
        "the configuration belongs to group check-storage-security"
    );

    // The installed programs run.
    let version = ok(Command::new("/usr/bin/check-storage-security").arg("--version"));
    assert!(
        version.starts_with(&format!("check-storage-security {VERSION}\n")),
        "{version}"
    );
    let scanner = ok(Command::new("/usr/bin/check-storage-scanner").arg("--version"));
    assert!(
        scanner.starts_with(&format!("check-storage-scanner {VERSION}\n")),
        "{scanner}"
    );
    // A packaged binary is upgraded by the package manager.
    let upgrade = Command::new("/usr/bin/check-storage-security")
        .args(["--upgrade-self", "check"])
        .output()
        .unwrap();
    assert_eq!(upgrade.status.code(), Some(3));
    assert!(
        text(&upgrade.stdout).contains("apt"),
        "{}",
        text(&upgrade.stdout)
    );
    assert!(
        ok(Command::new("man").args(["-w", "check-storage-scanner"]))
            .contains("/usr/share/man/man1/")
    );

    // The plugin from Nagios' plugin directory, as the user Icinga 2 and Nagios run checks
    // as (a member of the configuration's group), scans an instance with the installed
    // sample configuration, every section uncommented: it needs none of the servers'
    // credentials.
    let fake = FakeInstance::start(healthy("7.2.4"));
    let shared = fresh_dir("deb-ca");
    let ca = shared.join("ca.pem");
    std::fs::copy(fake.ca_file(), &ca).unwrap();
    std::fs::set_permissions(&ca, std::fs::Permissions::from_mode(0o644)).unwrap();
    let hook = shared.join("webhook-url");
    std::fs::write(&hook, format!("https://127.0.0.1:{}/hook\n", closed_port())).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).unwrap();
    let hosts = shared.join("hosts.txt");
    std::fs::write(&hosts, host_list_text(&fake.host_port())).unwrap();
    std::fs::set_permissions(&hosts, std::fs::Permissions::from_mode(0o644)).unwrap();
    // Written in place: the file keeps its owner, group and mode.
    let (_held, (_, debug_ports)) = crate::support::held_debug_ports(5);
    std::fs::write(
        "/etc/check-storage-security/config.yml",
        runnable_sample(
            &fake.host_port(),
            &ca,
            &hook,
            &hosts,
            closed_port(),
            closed_port(),
            &debug_ports,
        ),
    )
    .unwrap();
    let as_nagios = Command::new("getent")
        .args(["passwd", "nagios"])
        .output()
        .unwrap();
    let mut check = if as_nagios.status.success() {
        let mut c = Command::new("runuser");
        c.args([
            "-u",
            "nagios",
            "--",
            "/usr/lib/nagios/plugins/check-storage-security",
        ]);
        c
    } else {
        Command::new("/usr/lib/nagios/plugins/check-storage-security")
    };
    let out = check
        .args(["-H", &fake.host_port()])
        .env("COS_NOW", crate::support::PINNED_NOW)
        .current_dir("/")
        .output()
        .unwrap();
    // The sample's check_hardening turns the healthy instance's hardening gaps into WARNING.
    assert!(
        matches!(out.status.code(), Some(0 | 1))
            && (text(&out.stdout).starts_with("OK: ")
                || text(&out.stdout).starts_with("WARNING: ")),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // A user outside the group is told how to join it, and the run is UNKNOWN, not a page.
    let outsider = Command::new("runuser")
        .args([
            "-u",
            "nobody",
            "--",
            "/usr/bin/check-storage-security",
            "-H",
            "127.0.0.1:1",
        ])
        .current_dir("/")
        .output()
        .unwrap();
    assert_eq!(outsider.status.code(), Some(3));
    let line = text(&outsider.stdout);
    assert!(
        line.starts_with(
            "UNKNOWN: configuration file /etc/check-storage-security/config.yml cannot be read"
        ) && line.contains("adduser <user> check-storage-security"),
        "{line}"
    );

    // The units as installed: verify is clean, the sandbox keeps the exposure below 2.0.
    for unit in UNITS {
        let path = format!("/lib/systemd/system/{unit}");
        let verify = Command::new("systemd-analyze")
            .args(["verify", &path])
            .output()
            .unwrap();
        assert!(
            verify.status.success() && verify.stdout.is_empty() && verify.stderr.is_empty(),
            "systemd-analyze verify {unit}:\n{}{}",
            text(&verify.stdout),
            text(&verify.stderr)
        );
        if unit.ends_with(".service") {
            let report =
                ok(Command::new("systemd-analyze").args(["security", "--offline=true", &path]));
            let exposure: f64 = report
                .lines()
                .find_map(|l| {
                    l.split_once(&format!("Overall exposure level for {unit}: "))?
                        .1
                        .split_whitespace()
                        .next()?
                        .parse()
                        .ok()
                })
                .unwrap_or_else(|| panic!("no exposure level in:\n{report}"));
            assert!(exposure < 2.0, "{unit}: exposure {exposure}\n{report}");
        }
    }

    // The units start and work under systemd's sandbox.
    Systemd::boot_and_check_units(&fake, &ca);

    drop(guard);
    assert!(
        !installed(PACKAGE),
        "dpkg --purge left the package installed"
    );
    for path in [
        "/usr/bin/check-storage-security",
        "/usr/bin/check-storage-scanner",
        "/etc/check-storage-security",
        "/usr/lib/nagios/plugins/check-storage-security",
        "/lib/systemd/system/check-storage-scanner.service",
    ] {
        assert!(!Path::new(path).exists(), "{path} is left after the purge");
    }
}

/// A systemd of its own for the test: PID 1 of a new PID namespace, in a mount namespace whose
/// root is an overlay of this machine's root with a throw-away upper layer, so nothing it
/// writes reaches the machine (boot-time clean-ups included). Kernel-wide services (sysctl,
/// udev, modules, clock) are masked. It shares the network, so the units reach the fake
/// instance and the test reaches the units on loopback.
struct Systemd {
    /// `unshare`, whose child is the namespace's PID 1.
    unshare: Child,
    pid: u32,
}

/// Units of a booting system that reach beyond the namespace (kernel settings, devices, the
/// clock, the console) or do nothing for the test.
const MASKED: &[&str] = &[
    "systemd-sysctl.service",
    "systemd-udevd.service",
    "systemd-udevd-control.socket",
    "systemd-udevd-kernel.socket",
    "systemd-udev-trigger.service",
    "systemd-udev-settle.service",
    "systemd-modules-load.service",
    "kmod-static-nodes.service",
    "systemd-binfmt.service",
    "proc-sys-fs-binfmt_misc.automount",
    "sys-kernel-config.mount",
    "sys-kernel-debug.mount",
    "sys-kernel-tracing.mount",
    "sys-fs-fuse-connections.mount",
    "dev-hugepages.mount",
    "dev-mqueue.mount",
    "systemd-remount-fs.service",
    "systemd-timesyncd.service",
    "systemd-hwdb-update.service",
    "systemd-firstboot.service",
    "systemd-random-seed.service",
    "systemd-pstore.service",
    "systemd-networkd.service",
    "systemd-resolved.service",
    "getty.target",
    "console-getty.service",
    "timers.target",
    "cron.service",
];

impl Systemd {
    fn boot_and_check_units(fake: &FakeInstance, ca: &Path) {
        let prep = fresh_dir("deb-systemd-root");
        let scanner_port = closed_port();
        let exporter_port = closed_port();
        let token = "a-scanner-token-of-at-least-32-characters-for-the-test";
        let write = |path: &str, content: &str| {
            let file = prep.join(path.trim_start_matches('/'));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, content).unwrap();
        };
        let web_port = closed_port();
        // Held until the units were checked: their scans' debug ports.
        let (_held, (_, debug_ports)) = crate::support::held_debug_ports(5);
        // The package's sample, every section uncommented, as the operator who enables every
        // component writes it; the files it names are where it names them.
        write(
            "/etc/check-storage-security/config.yml",
            &runnable_sample(
                &fake.host_port(),
                Path::new("/etc/check-storage-security/ca.pem"),
                Path::new("/etc/check-storage-security/webhook-url"),
                Path::new("/etc/check-storage-security/hosts.txt"),
                scanner_port,
                web_port,
                &debug_ports,
            ),
        );
        write(
            "/etc/check-storage-security/webhook-url",
            &format!("https://127.0.0.1:{}/hook\n", closed_port()),
        );
        write(
            "/etc/check-storage-security/hosts.txt",
            &host_list_text(&fake.host_port()),
        );
        // The sample's instruction for the public API's MCP token.
        write("/etc/check-storage-security/web-mcp-token", &"m".repeat(40));
        write(
            "/etc/check-storage-security/ca.pem",
            &std::fs::read_to_string(ca).unwrap(),
        );
        write("/etc/check-storage-security/scanner-token", token);
        write(
            "/etc/systemd/system/check-storage-security-exporter.service.d/test.conf",
            &format!("[Service]\nEnvironment=COS_PROMETHEUS_LISTEN_PORT={exporter_port}\n"),
        );
        // The units run with the test's clock, so the bundled data judges as the tests do.
        for unit in UNITS.iter().filter(|u| u.ends_with(".service")) {
            write(
                &format!("/etc/systemd/system/{unit}.d/clock.conf"),
                &format!(
                    "[Service]\nEnvironment=COS_NOW={}\n",
                    crate::support::PINNED_NOW
                ),
            );
        }
        write(
            "/etc/systemd/system/check-storage-scanner-web.service.d/test.conf",
            "[Service]\nLoadCredential=web-mcp-token:/etc/check-storage-security/web-mcp-token\n\
             Environment=COS_WEB_ALLOW_PRIVATE_TARGETS=1\n",
        );
        let masks = prep.join("etc/systemd/system");
        for unit in MASKED {
            std::os::unix::fs::symlink("/dev/null", masks.join(unit)).unwrap();
        }

        let systemd = Systemd::boot(&prep);
        systemd.wait_until_booted();

        // The scan service: starts, answers its health check and a scan with the token.
        systemd.start("check-storage-scanner.service");
        systemd.wait_active("check-storage-scanner.service");
        let health = wait_for_http(scanner_port, "/healthz", None);
        assert!(
            health.starts_with("HTTP/1.1 200"),
            "{health}\n{}\n{}",
            systemd.systemctl(&["status", "check-storage-scanner.service"]),
            systemd.journal("check-storage-scanner.service")
        );
        let scan = http(
            scanner_port,
            &format!("/api/scan?url={}", fake.host_port()),
            Some(token),
        );
        assert!(
            scan.starts_with("HTTP/1.1 200"),
            "{scan}\n{}",
            systemd.journal("check-storage-scanner.service")
        );
        assert!(scan.contains("\"rating\""), "{scan}");
        systemd.assert_sandboxed("check-storage-scanner.service");

        // The exporter: starts and serves the configured host's rating.
        systemd.start("check-storage-security-exporter.service");
        systemd.wait_active("check-storage-security-exporter.service");
        let metrics = wait_for_http(exporter_port, "/metrics", None);
        assert!(
            metrics.contains("storage_security_rating_score{")
                && metrics.contains("storage_security_scrape_success{"),
            "{metrics}\n{}",
            systemd.journal("check-storage-security-exporter.service")
        );
        systemd.assert_sandboxed("check-storage-security-exporter.service");

        // The public API: starts, keeps its store in its state directory, scans a submission.
        systemd.start("check-storage-scanner-web.service");
        systemd.wait_active("check-storage-scanner-web.service");
        let health = wait_for_http(web_port, "/healthz", None);
        assert!(
            health.starts_with("HTTP/1.1 200"),
            "{health}\n{}",
            systemd.journal("check-storage-scanner-web.service")
        );
        let submitted = post(
            web_port,
            "/api/scans",
            &format!("{{\"target_url\": \"{}\"}}", fake.host_port()),
        );
        assert!(submitted.starts_with("HTTP/1.1 202"), "{submitted}");
        let uuid = submitted
            .split("\"uuid\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default()
            .to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let polled = http(web_port, &format!("/api/scans/{uuid}"), None);
            if polled.contains("\"status\":\"completed\"") {
                assert!(
                    polled.contains("\"state\":\"OK\"") || polled.contains("\"state\":\"WARNING\""),
                    "{polled}"
                );
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{polled}\n{}",
                systemd.journal("check-storage-scanner-web.service")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        systemd.assert_sandboxed("check-storage-scanner-web.service");
        let store = systemd.run(
            "test",
            &[
                "-s",
                "/var/lib/private/check-storage-scanner-web/web.sqlite",
            ],
        );
        assert!(
            store.status.success(),
            "the store is not in the state directory"
        );

        // The timer is accepted; its scan writes the summary table into the journal.
        systemd.start("check-storage-security.timer");
        systemd.wait_active("check-storage-security.timer");
        let run = systemd.run("systemctl", &["start", "check-storage-security.service"]);
        assert!(
            run.status.success(),
            "{}\n{}",
            systemd.systemctl(&["status", "check-storage-security.service"]),
            systemd.journal("check-storage-security.service")
        );
        let journal = systemd.journal("check-storage-security.service");
        assert!(
            journal.contains("HOST")
                && journal.contains("GRADE")
                && journal.contains(&fake.host_port()),
            "{journal}"
        );
        let result = systemd.systemctl(&["show", "-P", "Result", "check-storage-security.service"]);
        assert_eq!(result.trim(), "success", "{journal}");
    }

    fn boot(prep: &Path) -> Systemd {
        // Inside the new namespaces: a tmpfs for the overlay's layers, the overlay as the new
        // root with the test's files copied over it, kernel file systems bound in, then
        // systemd as PID 1 of the namespace in that root.
        let script = r#"
set -eu
prep=$1
base=$2
mkdir -p "$base"
mount -t tmpfs -o mode=0755 tmpfs "$base"
mkdir "$base/upper" "$base/work" "$base/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$base/upper,workdir=$base/work" "$base/root"
root=$base/root
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
cp -a "$prep/." "$root/"
# pivot_root, not a bare chroot: the kernel refuses user namespaces (PrivateUsers=) to a
# chrooted process. Shared propagation, as on a booted system: systemd hands each service's
# credentials (LoadCredential=) over through a mount that must propagate.
mkdir -p "$root/run/oldroot"
cd "$root"
pivot_root . run/oldroot
exec chroot . sh -c 'umount -l /run/oldroot && rmdir /run/oldroot && mount --make-rshared / &&
    exec /lib/systemd/systemd --system --unit=basic.target --log-target=console --log-level=notice'
"#;
        let log = std::fs::File::create(prep.with_extension("log")).unwrap();
        // systemd, PID 1 of its namespace, keeps the machine's real time (it cannot boot under
        // libfaketime); the units read the tests' pinned clock from COS_NOW.
        let unshare = crate::support::on_the_real_clock(&mut Command::new("unshare"))
            .args([
                "--pid",
                "--fork",
                "--mount",
                "--propagation",
                "private",
                "--",
                "sh",
                "-c",
                script,
                "sh",
            ])
            .arg(prep)
            .arg(prep.with_extension("mnt"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("unshare (util-linux) runs");
        let deadline = Instant::now() + Duration::from_secs(10);
        let pid = loop {
            let children =
                std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", unshare.id()))
                    .unwrap_or_default();
            if let Some(pid) = children
                .split_whitespace()
                .next()
                .and_then(|p| p.parse().ok())
            {
                break pid;
            }
            assert!(Instant::now() < deadline, "unshare started no child");
            std::thread::sleep(Duration::from_millis(20));
        };
        Systemd { unshare, pid }
    }

    /// Runs a command inside the namespaces and the root of the booted systemd.
    fn run(&self, program: &str, args: &[&str]) -> Output {
        Command::new("nsenter")
            .args([
                "--target",
                &self.pid.to_string(),
                "--mount",
                "--pid",
                "--root",
                "--wd",
                "--",
            ])
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("nsenter (util-linux) runs")
    }

    fn systemctl(&self, args: &[&str]) -> String {
        text(&self.run("systemctl", args).stdout)
    }

    fn log(&self) -> String {
        let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deb-systemd-root.log");
        std::fs::read_to_string(log).unwrap_or_default()
    }

    fn wait_until_booted(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let state = self.systemctl(&["is-system-running"]);
            if ["running", "degraded"].contains(&state.trim()) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "systemd did not finish booting ({}):\n{}",
                state.trim(),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn start(&self, unit: &str) {
        let out = self.run("systemctl", &["start", unit]);
        assert!(
            out.status.success(),
            "systemctl start {unit}: {}{}\n{}",
            text(&out.stdout),
            text(&out.stderr),
            self.journal(unit)
        );
    }

    fn wait_active(&self, unit: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.systemctl(&["is-active", unit]).trim() != "active" {
            assert!(
                Instant::now() < deadline,
                "{unit} is not active:\n{}",
                self.journal(unit)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn journal(&self, unit: &str) -> String {
        let out = self.run("journalctl", &["--no-pager", "-o", "cat", "-u", unit]);
        text(&out.stdout)
    }

    /// The unit's process runs as a user of its own, without privileges, under a system-call
    /// filter, with the system read-only.
    fn assert_sandboxed(&self, unit: &str) {
        let pid = self.systemctl(&["show", "-P", "MainPID", unit]);
        let status = text(
            &self
                .run("cat", &[&format!("/proc/{}/status", pid.trim())])
                .stdout,
        );
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name}:")))
                .map(|v| v.split_whitespace().collect::<Vec<_>>())
                .unwrap_or_else(|| panic!("no {name} in /proc/{}/status:\n{status}", pid.trim()))
        };
        assert_ne!(field("Uid")[0], "0", "{unit} runs as root");
        assert_eq!(field("NoNewPrivs"), ["1"], "{unit}");
        assert_eq!(field("Seccomp"), ["2"], "{unit} has no system-call filter");
        assert_eq!(
            field("CapEff"),
            ["0000000000000000"],
            "{unit} keeps capabilities"
        );
        let write = self.run(
            "nsenter",
            &[
                "--target",
                pid.trim(),
                "--mount",
                "--root",
                "--wd",
                "--",
                "sh",
                "-c",
                "echo x > /usr/probe",
            ],
        );
        assert!(!write.status.success(), "{unit} can write /usr");
    }
}

impl Drop for Systemd {
    fn drop(&mut self) {
        // PID 1 of the namespace gone, the kernel ends every process in it; the mount
        // namespace and its overlay go with the last of them.
        let _ = Command::new("kill")
            .args(["-KILL", &self.pid.to_string()])
            .status();
        let _ = self.unshare.wait();
    }
}

/// One HTTP/1.1 GET on loopback; the whole answer as text.
fn http(port: u16, path: &str, token: Option<&str>) -> String {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let _ = write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n"
    );
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    text(&answer)
}

/// One HTTP/1.1 POST of a JSON body on loopback; the whole answer as text.
fn post(port: u16, path: &str, body: &str) -> String {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let _ = write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    text(&answer)
}

/// GET until the listener answers (a unit is active before its program listens).
fn wait_for_http(port: u16, path: &str, token: Option<&str>) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = http(port, path, token);
        if !answer.is_empty() || Instant::now() > deadline {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `make deb` (and `make demo`, `make bench`) build where cargo does: under CARGO_TARGET_DIR
/// when it is set, else in target/.
#[test]
fn make_deb_honours_cargo_target_dir() {
    let dry = |target_dir: Option<&str>| {
        let mut command = Command::new("make");
        command
            .current_dir(repo())
            .args(["-n", "deb", "bench", "demo"]);
        command.env_remove("CARGO_TARGET_DIR");
        if let Some(dir) = target_dir {
            command.env("CARGO_TARGET_DIR", dir);
        }
        ok(&mut command)
    };
    let printed = dry(Some("/elsewhere/build"));
    assert!(
        printed.contains("sh packaging/deb/build.sh /elsewhere/build/release /elsewhere/build/deb"),
        "{printed}"
    );
    assert!(
        printed.contains("lintian --fail-on error,warning /elsewhere/build/deb/"),
        "{printed}"
    );
    assert!(
        printed.contains("/elsewhere/build/release/examples/bench"),
        "{printed}"
    );
    assert!(
        printed.contains("/elsewhere/build/debug/examples/fake-instance"),
        "{printed}"
    );
    assert!(!printed.contains(" target/release"), "{printed}");
    let printed = dry(None);
    assert!(
        printed.contains("sh packaging/deb/build.sh target/release target/deb"),
        "{printed}"
    );
}
