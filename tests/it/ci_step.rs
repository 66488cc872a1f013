//! The CI step wrapper (action.yml + packaging/ci/action.sh), run the way a GitHub runner runs
//! a composite action: the step's `run:` line from action.yml, under `bash --noprofile --norc
//! -eo pipefail`, with the inputs mapped into the variables action.yml's `env:` names (read
//! from action.yml, so the test and the action cannot drift), GITHUB_OUTPUT,
//! GITHUB_STEP_SUMMARY, GITHUB_ENV and RUNNER_TEMP in a temporary directory. The release comes
//! from a release server on loopback (COS_SELF_UPDATE_URL): the current version holds the
//! freshly built programs, a newer 99.0.0 holds wrappers that name their version, record how
//! the step ran them and run the freshly built plugin. Every scan goes to fake instances on
//! loopback with bundled release data; nothing waits for real time.

use crate::support::FakeInstance;
use crate::support::plugin::{self, NOW};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;
use storage_security::self_update;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const NEWER: &str = "99.0.0";
const PLUGIN: &str = "check-storage-security";
const SCANNER: &str = "check-storage-scanner";
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const TOKEN: &str = "ghp_ciStepToken0123456789abcdefXYZ";

/// The inputs of the spec's CI step wrapper, with their defaults (`None`: required).
const INPUTS: &[(&str, Option<&str>)] = &[
    ("target", None),
    ("version", Some("")), // checked apart: the pinned tag
    ("format", Some("json")),
    ("output-file", Some("storage-security.json")),
    ("fail-on", Some("warning")),
    ("warning", Some("")),
    ("critical", Some("")),
    ("check-hardening", Some("true")),
    ("ignore-hardening", Some("")),
    ("waive-until", Some("")),
    ("release-track", Some("auto")),
    ("releases-token", Some("")),
    ("summary", Some("true")),
    ("extra-args", Some("")),
];
const OUTPUTS: &[&str] = &[
    "exit-code",
    "status",
    "rating",
    "rating-label",
    "message",
    "result-file",
];

// --- action.yml --------------------------------------------------------------------------------

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn action() -> Value {
    yaml("action.yml")
}

/// The action's only step.
fn action_step(action: &Value) -> &Value {
    let steps = action["runs"]["steps"].as_array().expect("runs.steps");
    assert_eq!(steps.len(), 1, "one step, which calls the script");
    &steps[0]
}

/// The step's `env:` mapping as (variable, input) pairs: every value is `${{ inputs.NAME }}`.
fn input_variables(action: &Value) -> Vec<(String, String)> {
    action_step(action)["env"]
        .as_object()
        .expect("the step maps the inputs in env:")
        .iter()
        .map(|(variable, value)| {
            let input = value
                .as_str()
                .and_then(|v| v.strip_prefix("${{ inputs."))
                .and_then(|v| v.strip_suffix(" }}"))
                .unwrap_or_else(|| panic!("{variable}: {value} is not ${{{{ inputs.NAME }}}}"));
            (variable.clone(), input.to_string())
        })
        .collect()
}

fn input_default(action: &Value, input: &str) -> Option<String> {
    match &action["inputs"][input]["default"] {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => panic!("the default of {input} is not a string: {other}"),
    }
}

// --- release archives --------------------------------------------------------------------------

/// This platform's preferred release target, as the plugin's own --upgrade-self names it.
fn target() -> String {
    self_update::targets()[0].clone()
}

fn archive_name(version: &str) -> String {
    format!("{PLUGIN}-{version}-{}.tar.gz", target())
}

fn sha256_file(path: &Path) -> String {
    let mut file = std::fs::File::open(path).unwrap();
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).unwrap();
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    storage_security::text::hex(&hasher.finalize())
}

fn tar_gz(out: &Path, top: &str, members: &[&Path]) {
    let mut command = Command::new("tar");
    command
        .arg("--use-compress-program=gzip -1")
        .arg("-cf")
        .arg(out)
        .arg("--transform")
        .arg(format!("s,^,{top}/,"));
    for member in members {
        command
            .arg("-C")
            .arg(member.parent().unwrap())
            .arg(member.file_name().unwrap());
    }
    let status = command.status().expect("run tar");
    assert!(status.success(), "tar -czf {}", out.display());
}

/// The freshly built programs packed as the current release's archive, as a release packs
/// them (one top directory holding both). Built once per build of the programs and shared by
/// the test processes (written under a temporary name, then linked into place).
fn current_archive() -> PathBuf {
    let programs = [
        PathBuf::from(env!("CARGO_BIN_EXE_check-storage-security")),
        PathBuf::from(env!("CARGO_BIN_EXE_check-storage-scanner")),
    ];
    let stamp: String = programs
        .iter()
        .map(|p| {
            let meta = std::fs::metadata(p).unwrap();
            let modified = meta
                .modified()
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            format!("{}:{}:{modified};", p.display(), meta.len())
        })
        .collect();
    let key = &storage_security::text::hex(&Sha256::digest(stamp.as_bytes()))[..16];
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ci_step-archives");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{key}-{}", archive_name(VERSION)));
    if path.exists() {
        return path;
    }
    // Archives of earlier builds are of no use any more.
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        if !entry.file_name().to_string_lossy().contains(key) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let staging = dir.join(format!(
        ".{key}-{}-{:?}",
        std::process::id(),
        thread::current().id()
    ));
    let top = format!("{PLUGIN}-{VERSION}-{}", target());
    tar_gz(&staging, &top, &[&programs[0], &programs[1]]);
    // Never replaced once there: another test may have published its checksum already.
    match std::fs::hard_link(&staging, &path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => panic!("{}: {e}", path.display()),
    }
    let _ = std::fs::remove_file(&staging);
    path
}

/// The newer release's programs: shell scripts that answer `--version` with 99.0.0, record
/// their arguments and environment (NUL-separated, from /proc) under `$CI_STEP_RECORD`, and
/// run the freshly built programs.
fn newer_archive(dir: &Path) -> PathBuf {
    let staging = dir.join("newer");
    std::fs::create_dir_all(&staging).unwrap();
    let mut members = Vec::new();
    for (program, real) in [
        (PLUGIN, env!("CARGO_BIN_EXE_check-storage-security")),
        (SCANNER, env!("CARGO_BIN_EXE_check-storage-scanner")),
    ] {
        let path = staging.join(program);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\n\
                 if [ \"$1\" = --version ]; then echo '{program} {NEWER}'; exit 0; fi\n\
                 printf '%s\\0' \"$@\" >\"$CI_STEP_RECORD.args\"\n\
                 cat /proc/$$/environ >\"$CI_STEP_RECORD.environ\"\n\
                 exec '{real}' \"$@\"\n"
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        members.push(path);
    }
    let archive = dir.join(archive_name(NEWER));
    let top = format!("{PLUGIN}-{NEWER}-{}", target());
    tar_gz(&archive, &top, &[&members[0], &members[1]]);
    archive
}

// --- the release server ------------------------------------------------------------------------

#[derive(Clone)]
enum Served {
    Bytes(Vec<u8>),
    File(PathBuf),
}

/// One release of the feed.
struct Release {
    tag: String,
    draft: bool,
    prerelease: bool,
    assets: Vec<(String, Served)>,
}

impl Release {
    /// A published release with `archive` and a SHA256SUMS listing `sums` (name, hex).
    fn new(tag: &str, archive: (String, Served), sums: &[(String, String)]) -> Release {
        let text: String = sums.iter().map(|(n, h)| format!("{h}  {n}\n")).collect();
        Release {
            tag: tag.to_string(),
            draft: false,
            prerelease: false,
            assets: vec![
                archive,
                ("SHA256SUMS".to_string(), Served::Bytes(text.into_bytes())),
            ],
        }
    }

    /// A release whose archive `name` is the file `path`, with its true checksum.
    fn verified(tag: &str, name: &str, path: &Path) -> Release {
        let sums = [(name.to_string(), sha256_file(path))];
        Release::new(
            tag,
            (name.to_string(), Served::File(path.to_path_buf())),
            &sums,
        )
    }

    fn unlisted(tag: &str, draft: bool) -> Release {
        Release {
            tag: tag.to_string(),
            draft,
            prerelease: !draft,
            assets: Vec::new(),
        }
    }
}

#[derive(Clone, Debug)]
struct Seen {
    path: String,
    authorization: Option<String>,
}

/// `/releases` answers the feed (a query is ignored, as GitHub's `per_page` would be),
/// `/download/<tag>/<name>` an asset. Every request is recorded with its Authorization.
struct ReleaseServer {
    server: Arc<tiny_http::Server>,
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    published: Arc<Mutex<(String, HashMap<String, Served>)>>,
    worker: Option<thread::JoinHandle<()>>,
}

impl ReleaseServer {
    fn start() -> ReleaseServer {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind"));
        let port = server.server_addr().to_ip().expect("ip listener").port();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let published: Arc<Mutex<(String, HashMap<String, Served>)>> = Arc::default();
        let (srv, log, state) = (server.clone(), seen.clone(), published.clone());
        let worker = thread::spawn(move || {
            for request in srv.incoming_requests() {
                let path = request.url().to_string();
                let authorization = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Authorization"))
                    .map(|h| h.value.to_string());
                log.lock().unwrap().push(Seen {
                    path: path.clone(),
                    authorization,
                });
                let (feed, files) = state.lock().unwrap().clone();
                let bare = path.split('?').next().unwrap_or("");
                let served = if bare == "/releases" {
                    Some(Served::Bytes(feed.into_bytes()))
                } else {
                    bare.strip_prefix("/download/")
                        .and_then(|name| files.get(name).cloned())
                };
                let _ = match served {
                    Some(Served::Bytes(bytes)) => {
                        request.respond(tiny_http::Response::from_data(bytes))
                    }
                    Some(Served::File(path)) => request.respond(tiny_http::Response::from_file(
                        std::fs::File::open(path).unwrap(),
                    )),
                    None => request
                        .respond(tiny_http::Response::from_data(Vec::new()).with_status_code(404)),
                };
            }
        });
        ReleaseServer {
            server,
            port,
            seen,
            published,
            worker: Some(worker),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn publish(&self, releases: Vec<Release>) {
        let mut files = HashMap::new();
        let mut feed = Vec::new();
        for release in releases {
            let mut assets = Vec::new();
            for (name, served) in release.assets {
                let key = format!("{}/{name}", release.tag);
                assets.push(serde_json::json!({
                    "name": name,
                    "browser_download_url": self.url(&format!("/download/{key}")),
                }));
                files.insert(key, served);
            }
            feed.push(serde_json::json!({
                "tag_name": release.tag,
                "draft": release.draft,
                "prerelease": release.prerelease,
                "assets": assets,
            }));
        }
        *self.published.lock().unwrap() = (Value::Array(feed).to_string(), files);
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn downloads(&self) -> Vec<String> {
        self.seen()
            .into_iter()
            .map(|s| s.path)
            .filter(|p| p.starts_with("/download/"))
            .collect()
    }
}

impl Drop for ReleaseServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// The feed of most tests: the current release (the freshly built programs), the newer 99.0.0
/// (recording wrappers), and a pre-release and a draft that an unpinned install must skip.
fn standard_releases(dir: &Path) -> Vec<Release> {
    vec![
        Release::unlisted("v100.0.0-rc.1", false),
        Release::verified(
            &format!("v{NEWER}"),
            &archive_name(NEWER),
            &newer_archive(dir),
        ),
        Release::unlisted("v101.0.0", true),
        Release::verified(
            &format!("v{VERSION}"),
            &archive_name(VERSION),
            &current_archive(),
        ),
    ]
}

// --- the runner --------------------------------------------------------------------------------

/// One emulated job: a workspace, RUNNER_TEMP shared by its steps, HOME and the plugin's state.
struct Runner {
    dir: PathBuf,
    workspace: PathBuf,
    temp: PathBuf,
    server: ReleaseServer,
    steps: std::cell::Cell<usize>,
}

/// What one step left behind.
struct Step {
    code: i32,
    stdout: String,
    stderr: String,
    outputs: BTreeMap<String, String>,
    outputs_raw: String,
    summary: String,
    github_env: String,
}

impl Step {
    fn output(&self, name: &str) -> Option<&str> {
        self.outputs.get(name).map(String::as_str)
    }

    /// Workflow commands of this kind (`error`, `warning`, `notice`, `debug`), their text.
    fn annotations(&self, kind: &str) -> Vec<String> {
        self.stdout
            .lines()
            .filter(|l| {
                l.starts_with(&format!("::{kind} ")) || l.starts_with(&format!("::{kind}::"))
            })
            .map(|l| l[2..].split_once("::").map_or("", |(_, m)| m).to_string())
            .collect()
    }

    fn log(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

impl Runner {
    fn new(name: &str) -> Runner {
        let dir = plugin::scratch(&format!("ci_step-{name}"));
        for sub in ["workspace", "temp", "home", "state"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        Runner {
            workspace: dir.join("workspace"),
            temp: dir.join("temp"),
            dir,
            server: ReleaseServer::start(),
            steps: std::cell::Cell::new(0),
        }
    }

    /// Runs the action's step with these inputs (the rest take action.yml's defaults) and
    /// `extra` variables in the runner's environment.
    fn step(&self, inputs: &[(&str, &str)], extra: &[(&str, &str)]) -> Step {
        let action = action();
        for (input, _) in inputs {
            assert!(
                action["inputs"].get(input).is_some(),
                "action.yml has no input {input}"
            );
        }
        let n = self.steps.get() + 1;
        self.steps.set(n);
        let files = self.dir.join(format!("step-{n}"));
        std::fs::create_dir_all(&files).unwrap();
        let (output, summary, env_file) = (
            files.join("github_output"),
            files.join("step_summary"),
            files.join("github_env"),
        );
        for file in [&output, &summary, &env_file] {
            std::fs::write(file, "").unwrap();
        }
        let step = action_step(&action);
        assert_eq!(step["shell"], "bash");
        let script = files.join("run.sh");
        std::fs::write(&script, step["run"].as_str().expect("run:")).unwrap();
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.join("home"))
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_ACTION_PATH", ROOT)
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("GITHUB_ENV", &env_file)
            .env("RUNNER_TEMP", &self.temp)
            .env("COS_SELF_UPDATE_URL", self.server.url("/releases"))
            .env("COS_NOW", NOW)
            .env("COS_STATE_DIR", self.dir.join("state"))
            .current_dir(&self.workspace)
            .stdin(std::process::Stdio::null());
        for (variable, input) in input_variables(&action) {
            let value = inputs
                .iter()
                .find(|(name, _)| *name == input)
                .map(|(_, v)| v.to_string())
                .or_else(|| input_default(&action, &input))
                .unwrap_or_default();
            command.env(variable, value);
        }
        for (k, v) in extra {
            command.env(k, v);
        }
        let out = command.output().expect("run the step");
        // Kept beside the step's files, for a look after a failure.
        std::fs::write(files.join("stdout"), &out.stdout).unwrap();
        std::fs::write(files.join("stderr"), &out.stderr).unwrap();
        let outputs_raw = std::fs::read_to_string(&output).unwrap();
        Step {
            code: out.status.code().expect("exit code"),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            outputs: parse_outputs(&outputs_raw),
            outputs_raw,
            summary: std::fs::read_to_string(&summary).unwrap(),
            github_env: std::fs::read_to_string(&env_file).unwrap(),
        }
    }

    fn installed(&self, version: &str) -> PathBuf {
        self.temp.join(PLUGIN).join(version).join(PLUGIN)
    }

    fn result(&self, file: &str) -> String {
        std::fs::read_to_string(self.workspace.join(file)).unwrap()
    }
}

/// GITHUB_OUTPUT as the runner reads it: `name=value` lines and `name<<DELIMITER` blocks.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut outputs = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let (name, value) = if let Some((name, delimiter)) = line.split_once("<<") {
            let mut value = Vec::new();
            loop {
                let next = lines.next().expect("the delimiter closes the value");
                if next == delimiter {
                    break;
                }
                value.push(next);
            }
            (name, value.join("\n"))
        } else {
            let (name, value) = line.split_once('=').expect("name=value");
            (name, value.to_string())
        };
        assert!(
            outputs.insert(name.to_string(), value).is_none(),
            "output {name} written twice"
        );
    }
    outputs
}

/// The flags every scan of a fake instance takes: trust its CA, bundled release data, no
/// retries, no debug ports (they would be probed on this machine's loopback).
fn hermetic_args(fake: &FakeInstance) -> String {
    plugin::hermetic(&fake.ca_file()).join(" ")
}

fn first_document(text: &str) -> Value {
    let doc: Value = serde_json::from_str(text).expect("the result file is JSON");
    doc[0].clone()
}

fn failed_findings(doc: &Value) -> usize {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "failed" && f["ignored"] != true)
        .count()
}

fn installed_version(binary: &Path) -> String {
    let out = Command::new(binary)
        .arg("--version")
        .output()
        .expect("run the installed binary");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

// --- tests -------------------------------------------------------------------------------------

#[test]
fn action_yml_has_the_inputs_and_outputs_of_the_spec() {
    let action = action();
    let inputs = action["inputs"].as_object().expect("inputs");
    let mut names: Vec<&str> = inputs.keys().map(String::as_str).collect();
    let mut expected: Vec<&str> = INPUTS.iter().map(|(n, _)| *n).collect();
    names.sort();
    expected.sort();
    assert_eq!(names, expected, "exactly the spec's inputs");
    for (input, default) in INPUTS {
        let spec = &inputs[*input];
        assert!(
            spec["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{input} has a description"
        );
        match default {
            None => {
                assert_eq!(spec["required"], true, "{input} is required");
                assert_eq!(input_default(&action, input), None);
            }
            Some(_) if *input == "version" => {}
            Some(default) => {
                assert_eq!(spec["required"], false, "{input} is optional");
                assert_eq!(
                    input_default(&action, input).as_deref(),
                    Some(*default),
                    "default of {input}"
                );
            }
        }
    }
    assert_eq!(
        input_default(&action, "version"),
        Some(format!("v{VERSION}")),
        "version defaults to the pinned tag: v + the crate version"
    );
    let format = inputs["format"]["description"].as_str().unwrap();
    for value in ["json", "sarif", "junit", "monitoring"] {
        assert!(format.contains(value), "format documents {value}: {format}");
    }

    let outputs = action["outputs"].as_object().expect("outputs");
    let mut names: Vec<&str> = outputs.keys().map(String::as_str).collect();
    let mut expected_outputs = OUTPUTS.to_vec();
    names.sort();
    expected_outputs.sort();
    assert_eq!(names, expected_outputs, "exactly the spec's outputs");
    for name in OUTPUTS {
        assert_eq!(
            outputs[*name]["value"],
            format!("${{{{ steps.check.outputs.{name} }}}}"),
            "output {name}"
        );
    }

    assert_eq!(action["runs"]["using"], "composite");
    let step = action_step(&action);
    assert_eq!(step["id"], "check");
    assert_eq!(step["shell"], "bash");
    assert_eq!(
        step["run"], "bash \"$GITHUB_ACTION_PATH/packaging/ci/action.sh\"",
        "the step only calls the script"
    );
    // Every input reaches the script, each under one variable.
    let mut mapped: Vec<String> = input_variables(&action)
        .into_iter()
        .map(|(variable, input)| {
            assert_eq!(
                variable,
                format!("INPUT_{}", input.to_uppercase().replace('-', "_"))
            );
            input
        })
        .collect();
    mapped.sort();
    let mut all: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    all.sort();
    assert_eq!(mapped, all);
}

#[test]
fn the_example_workflow_and_the_ci_guide_follow_the_action() {
    let action = action();
    let inputs = action["inputs"].as_object().unwrap();
    let example = yaml("docs/ci-example.yml");
    let mut uses = Vec::new();
    for job in example["jobs"].as_object().unwrap().values() {
        for step in job["steps"].as_array().unwrap() {
            if let Some(u) = step["uses"].as_str() {
                uses.push((u.to_string(), step["with"].clone()));
            }
        }
    }
    let ours: Vec<&(String, Value)> = uses
        .iter()
        .filter(|(u, _)| u.starts_with("storage-security/check-storage-security@"))
        .collect();
    assert!(ours.len() >= 2, "{uses:?}");
    for (u, with) in &ours {
        assert_eq!(
            *u,
            format!("storage-security/check-storage-security@v{VERSION}")
        );
        for key in with.as_object().unwrap().keys() {
            assert!(
                inputs.contains_key(key),
                "the example sets unknown input {key}"
            );
        }
        assert!(with.get("target").is_some());
    }
    assert!(
        ours.iter().any(|(_, with)| with["format"] == "sarif"),
        "one example produces SARIF"
    );
    assert!(
        uses.iter()
            .any(|(u, _)| u.starts_with("github/codeql-action/upload-sarif@")),
        "and uploads it"
    );

    // The step's guide: docs/ci-step.md, linked from the README.
    let guide = std::fs::read_to_string(Path::new(ROOT).join(CI_GUIDE)).unwrap();
    let start = guide
        .find("\n## CI step (GitHub Actions)\n")
        .expect("docs/ci-step.md section CI step (GitHub Actions)");
    let section = &guide[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    for (input, _) in INPUTS {
        assert!(
            section.contains(&format!("| `{input}` |")),
            "{CI_GUIDE} lists input {input}"
        );
    }
    for output in OUTPUTS {
        assert!(
            section.contains(&format!("| `{output}` |")),
            "{CI_GUIDE} lists output {output}"
        );
    }
    assert!(section.contains(&format!(
        "storage-security/check-storage-security@v{VERSION}"
    )));
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("]({CI_GUIDE})")),
        "the README links {CI_GUIDE}"
    );
}

/// Where the CI step is documented (inputs, outputs, install).
const CI_GUIDE: &str = "docs/ci-step.md";

#[test]
fn actionlint_passes_on_the_action_and_the_example_workflow() {
    let version = Command::new("actionlint").arg("--version").output();
    assert!(
        version.as_ref().is_ok_and(|o| o.status.success()),
        "actionlint does not run; install it with `make deps` (packaging/ci-deps.sh)"
    );
    let shellcheck = Command::new("shellcheck")
        .arg("packaging/ci/action.sh")
        .current_dir(ROOT)
        .output()
        .expect("shellcheck does not run; install it with `make deps` (packaging/ci-deps.sh)");
    assert!(
        shellcheck.status.success(),
        "shellcheck packaging/ci/action.sh:\n{}",
        String::from_utf8_lossy(&shellcheck.stdout)
    );

    // actionlint lints workflows; a workflow using the action locally (`uses: ./`) makes it
    // read action.yml and check every input set and every output read against it.
    let repo = plugin::scratch("ci_step-actionlint");
    let workflows = repo.join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    // actionlint finds the project (and so `./`) by its .git directory.
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::copy(Path::new(ROOT).join("action.yml"), repo.join("action.yml")).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("docs/ci-example.yml"),
        workflows.join("example.yml"),
    )
    .unwrap();
    let with: String = INPUTS
        .iter()
        .map(|(input, _)| match *input {
            "waive-until" => "          waive-until: |\n            \
                              hstsPreload|2026-12-31T00:00:00Z|reason one; two\n            \
                              exposed|2027-01-31T00:00:00Z|reason, three\n"
                .to_string(),
            "releases-token" => "          releases-token: ${{ secrets.GITHUB_TOKEN }}\n".into(),
            "summary" | "check-hardening" => format!("          {input}: \"false\"\n"),
            "version" => format!("          version: v{VERSION}\n"),
            "target" => "          target: cloud.example.com\n".into(),
            "format" => "          format: sarif\n".into(),
            "warning" => "          warning: \"4\"\n".into(),
            "critical" => "          critical: \"2\"\n".into(),
            other => format!("          {other}: x\n"),
        })
        .collect();
    let env: String = OUTPUTS
        .iter()
        .map(|o| {
            format!(
                "          {}: ${{{{ steps.scan.outputs.{o} }}}}\n",
                o.to_uppercase().replace('-', "_")
            )
        })
        .collect();
    let local = format!(
        "name: local\non: push\npermissions:\n  contents: read\njobs:\n  scan:\n    \
         runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v5\n      \
         - id: scan\n        uses: ./\n        with:\n{with}      - env:\n{env}        \
         run: echo \"$EXIT_CODE $STATUS $RATING $RATING_LABEL $MESSAGE $RESULT_FILE\"\n"
    );
    std::fs::write(workflows.join("local.yml"), &local).unwrap();
    let lint = |dir: &Path| {
        Command::new("actionlint")
            .arg("-no-color")
            .current_dir(dir)
            .output()
            .expect("run actionlint")
    };
    let out = lint(&repo);
    assert!(
        out.status.success(),
        "actionlint:\n{}{}\n{local}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // The control: an input the action does not have, and an output it does not set, fail.
    std::fs::write(
        workflows.join("local.yml"),
        local
            .replace(
                "          target:",
                "          no-such-input: x\n          target:",
            )
            .replace("outputs.rating-label", "outputs.no-such-output"),
    )
    .unwrap();
    let out = lint(&repo);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("no-such-input"), "{text}");
    assert!(text.contains("no-such-output"), "{text}");
}

#[test]
fn the_pinned_release_is_installed_verified_and_every_output_written() {
    let runner = Runner::new("pinned");
    runner.server.publish(standard_releases(&runner.dir));
    let fake = FakeInstance::start(plugin::healthy("4.0.5"));
    let extra = hermetic_args(&fake);
    let base = [
        ("target", fake.host_port()),
        ("releases-token", TOKEN.to_string()),
        ("extra-args", extra.clone()),
        ("check-hardening", "false".to_string()),
    ];
    let inputs = |more: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        let mut all: Vec<(&'static str, String)> = base.to_vec();
        all.extend(more.iter().map(|(k, v)| (*k, v.to_string())));
        all
    };
    let run = |more: &[(&'static str, &str)]| {
        let given = inputs(more);
        let given: Vec<(&str, &str)> = given.iter().map(|(k, v)| (*k, v.as_str())).collect();
        runner.step(&given, &[])
    };

    // Defaults: the pinned version, json, fail-on warning.
    let step = run(&[]);
    let log = step.log();
    assert_eq!(step.code, 1, "WARNING fails with fail-on warning\n{log}");
    assert!(
        step.annotations("warning").is_empty(),
        "pinned: no warning\n{log}"
    );
    assert!(
        step.stdout.contains(&format!(
            "{PLUGIN} {VERSION}: installed {}",
            archive_name(VERSION)
        )),
        "{log}"
    );
    let installed = runner.installed(VERSION);
    assert_eq!(installed_version(&installed), format!("{PLUGIN} {VERSION}"));
    assert_eq!(
        sha256_file(&installed),
        sha256_file(Path::new(env!("CARGO_BIN_EXE_check-storage-security"))),
        "the installed plugin is the released one"
    );
    assert!(installed.with_file_name(SCANNER).is_file(), "both programs");

    let result = runner.result("storage-security.json");
    let doc = first_document(&result);
    assert_eq!(doc["host"], fake.host_port().as_str());
    assert_eq!(step.output("exit-code"), Some("1"));
    assert_eq!(step.output("status"), Some("WARNING"));
    assert_eq!(step.output("rating"), Some("2"));
    assert_eq!(step.output("rating-label"), Some("D"));
    assert_eq!(step.output("message"), doc["message"].as_str());
    assert!(
        step.output("message")
            .unwrap()
            .starts_with("OpenCloud 4.0.5 has 1 known vulnerability")
    );
    assert_eq!(step.output("result-file"), Some("storage-security.json"));
    assert_eq!(step.outputs.len(), OUTPUTS.len(), "{:?}", step.outputs);
    let errors = step.annotations("error");
    assert_eq!(errors.len(), 1, "{log}");
    assert!(errors[0].starts_with(&format!("WARNING (exit code 1) for {}", fake.host_port())));
    assert!(errors[0].ends_with("(fail-on: warning)"), "{}", errors[0]);
    assert!(
        step.summary.contains(&format!(
            "| {} | WARNING | D | 4.0.5 | {} |",
            fake.host_port(),
            failed_findings(&doc)
        )),
        "{}",
        step.summary
    );
    assert!(step.summary.contains("| Host | State | Grade | Version |"));
    assert!(step.github_env.is_empty(), "nothing leaks into later steps");

    // The token went to the release feed only, as a bearer token.
    let seen = runner.server.seen();
    let feed: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.path.starts_with("/releases"))
        .collect();
    assert_eq!(feed.len(), 1);
    assert_eq!(feed[0].authorization, Some(format!("Bearer {TOKEN}")));
    let downloads: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.path.starts_with("/download/"))
        .collect();
    assert_eq!(
        downloads
            .iter()
            .map(|s| s.path.as_str())
            .collect::<Vec<_>>(),
        [
            format!("/download/v{VERSION}/SHA256SUMS"),
            format!("/download/v{VERSION}/{}", archive_name(VERSION)),
        ]
    );
    assert!(downloads.iter().all(|s| s.authorization.is_none()));
    assert_token_hidden(&step, &result);

    // A second step of the job reuses the verified install. SARIF: no rating outputs.
    let step = run(&[
        ("format", "sarif"),
        ("output-file", "reports/storage-security.sarif"),
        ("fail-on", "critical"),
    ]);
    let log = step.log();
    assert_eq!(step.code, 0, "critical tolerates WARNING\n{log}");
    assert!(
        step.stdout.contains("already installed and verified"),
        "{log}"
    );
    assert_eq!(runner.server.downloads().len(), 3, "only SHA256SUMS again");
    let sarif: Value =
        serde_json::from_str(&runner.result("reports/storage-security.sarif")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        step.outputs.keys().collect::<Vec<_>>(),
        ["exit-code", "result-file", "status"]
    );
    assert_eq!(step.output("status"), Some("WARNING"));
    assert_eq!(
        step.output("result-file"),
        Some("reports/storage-security.sarif")
    );
    assert!(step.annotations("error").is_empty(), "{log}");
    let notices = step.annotations("notice");
    assert_eq!(notices.len(), 1, "{log}");
    assert!(notices[0].contains("tolerated by fail-on: critical"));
    assert!(
        step.summary.contains(&format!(
            "| {} | WARNING | 1 | reports/storage-security.sarif |",
            fake.host_port()
        )),
        "{}",
        step.summary
    );
    assert_token_hidden(&step, &runner.result("reports/storage-security.sarif"));

    // JUnit and the plain monitoring line; summary: false writes none.
    let step = run(&[
        ("format", "junit"),
        ("output-file", "junit.xml"),
        ("fail-on", "never"),
    ]);
    assert_eq!(step.code, 0, "{}", step.log());
    assert!(
        runner.result("junit.xml").contains("<testsuite"),
        "JUnit XML"
    );
    let step = run(&[
        ("format", "monitoring"),
        ("output-file", "check.txt"),
        ("fail-on", "never"),
        ("summary", "false"),
    ]);
    assert_eq!(step.code, 0, "{}", step.log());
    let text = runner.result("check.txt");
    assert!(
        text.starts_with("WARNING: OpenCloud 4.0.5 has 1 known vulnerability"),
        "{text}"
    );
    assert!(
        text.lines().last().unwrap().starts_with('|'),
        "performance data: {text}"
    );
    assert_eq!(step.output("exit-code"), Some("1"));
    assert_eq!(step.output("message"), None);
    assert!(step.summary.is_empty(), "summary: false");
    assert_token_hidden(&step, &text);
}

/// The releases token appears only in the `::add-mask::` line the runner consumes (and hides),
/// nowhere in the outputs, the summary, the log or the result.
fn assert_token_hidden(step: &Step, result: &str) {
    let masks: Vec<&str> = step
        .stdout
        .lines()
        .filter(|l| l.starts_with("::add-mask::"))
        .collect();
    assert_eq!(masks, [format!("::add-mask::{TOKEN}")], "masked first");
    assert!(
        step.stdout.starts_with("::add-mask::"),
        "before anything else"
    );
    let rest: String = step
        .stdout
        .lines()
        .filter(|l| !l.starts_with("::add-mask::"))
        .collect();
    for (what, text) in [
        ("stdout", rest.as_str()),
        ("stderr", &step.stderr),
        ("GITHUB_OUTPUT", &step.outputs_raw),
        ("the summary", &step.summary),
        ("GITHUB_ENV", &step.github_env),
        ("the result file", result),
    ] {
        assert!(!text.contains(TOKEN), "the token is in {what}");
    }
}

/// A state to reach: its name, the target, the inputs that get there, and the expected exit
/// code, rating and grade.
type StateCase<'a> = (
    &'a str,
    String,
    Vec<(&'a str, &'a str)>,
    (&'a str, &'a str, &'a str),
);

#[test]
fn fail_on_against_every_state() {
    let runner = Runner::new("fail-on");
    runner.server.publish(standard_releases(&runner.dir));
    // OK: an up-to-date instance whose missing hardening is waived through the variables.
    let ok = FakeInstance::start(plugin::healthy("4.0.8"));
    let warning = FakeInstance::start(plugin::healthy("4.0.5"));
    let critical = FakeInstance::start(plugin::healthy("4.0.0"));
    let closed = format!("127.0.0.1:{}", crate::support::closed_port());
    let ok_args = hermetic_args(&ok);
    let waivers =
        "\n  Permissions-Policy|2027-06-30T00:00:00Z|rollout; tracked in OPS-7, OPS-8  \n\n";
    let cases: Vec<StateCase> = vec![
        (
            "OK",
            ok.host_port(),
            vec![
                ("ignore-hardening", "hstsPreload, cspWithoutUnsafeInline"),
                ("waive-until", waivers),
                ("extra-args", ok_args.as_str()),
            ],
            ("0", "5", "A+"),
        ),
        (
            "WARNING",
            warning.host_port(),
            vec![("check-hardening", "false")],
            ("1", "2", "D"),
        ),
        ("CRITICAL", critical.host_port(), vec![], ("2", "1", "E")),
        ("UNKNOWN", closed.clone(), vec![], ("3", "", "U")),
    ];
    let plain = hermetic_args(&warning);
    let unreachable = format!("{plain} --timeout 1");
    for (state, host, inputs, (code, rating, grade)) in &cases {
        for fail_on in ["warning", "critical", "never"] {
            let mut given: Vec<(&str, &str)> =
                vec![("target", host.as_str()), ("fail-on", fail_on)];
            given.extend(inputs.iter().copied());
            if !given.iter().any(|(k, _)| *k == "extra-args") {
                let args = if *state == "UNKNOWN" {
                    &unreachable
                } else {
                    &plain
                };
                given.push(("extra-args", args));
            }
            let step = runner.step(&given, &[]);
            let log = step.log();
            let fails = match fail_on {
                "warning" => *state != "OK",
                "critical" => *state == "CRITICAL" || *state == "UNKNOWN",
                _ => false,
            };
            let what = format!("{state} with fail-on {fail_on}\n{log}");
            assert_eq!(step.code, i32::from(fails), "{what}");
            assert_eq!(step.output("exit-code"), Some(*code), "{what}");
            assert_eq!(step.output("status"), Some(*state), "{what}");
            assert_eq!(step.output("rating"), Some(*rating), "{what}");
            assert_eq!(step.output("rating-label"), Some(*grade), "{what}");
            let doc = first_document(&runner.result("storage-security.json"));
            assert_eq!(doc["state"], *state, "{what}");
            assert_eq!(step.output("message"), doc["message"].as_str(), "{what}");
            let errors = step.annotations("error");
            if fails {
                assert_eq!(errors.len(), 1, "{what}");
                assert!(
                    errors[0].starts_with(&format!("{state} (exit code {code}) for {host}")),
                    "{what}"
                );
            } else {
                assert!(errors.is_empty(), "{what}");
            }
            let row = if *state == "UNKNOWN" {
                format!(
                    "| {host} | UNKNOWN | U | - | {} |",
                    doc["message"].as_str().unwrap()
                )
            } else {
                format!(
                    "| {host} | {state} | {grade} | {} | {} |",
                    doc["product"]["version"].as_str().unwrap(),
                    failed_findings(&doc)
                )
            };
            assert!(step.summary.contains(&row), "{row}\n{}", step.summary);
            assert!(step.summary.contains(&format!("fail-on: {fail_on}")));
            if *state == "OK" {
                // Every missing hardening measure is waived (low-severity checks stay).
                let hardening: Vec<&Value> = doc["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|f| f["role"] == "hardening" && f["status"] == "failed")
                    .collect();
                assert_eq!(hardening.len(), 3, "{what}");
                assert!(hardening.iter().all(|f| f["ignored"] == true), "{what}");
                let waived: Vec<(&str, &str, &str, &str)> = doc["waivers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| {
                        (
                            w["pattern"].as_str().unwrap(),
                            w["source"].as_str().unwrap(),
                            w["state"].as_str().unwrap(),
                            w["reason"].as_str().unwrap_or(""),
                        )
                    })
                    .collect();
                assert_eq!(
                    waived,
                    [
                        ("hstsPreload", "COS_IGNORE_HARDENING", "active", ""),
                        (
                            "cspWithoutUnsafeInline",
                            "COS_IGNORE_HARDENING",
                            "active",
                            ""
                        ),
                        (
                            "Permissions-Policy",
                            "COS_WAIVE_UNTIL",
                            "active",
                            "rollout; tracked in OPS-7, OPS-8"
                        ),
                    ],
                    "{}",
                    doc["waivers"]
                );
            }
        }
    }
    assert_eq!(
        runner.server.downloads().len(),
        2 + 11,
        "installed once, SHA256SUMS read by every step"
    );
}

#[test]
fn an_unpinned_version_installs_the_newest_release_with_a_warning() {
    let runner = Runner::new("unpinned");
    runner.server.publish(standard_releases(&runner.dir));
    let fake = FakeInstance::start(plugin::healthy("4.0.8"));
    // A file a glob would find: extra-args are split on whitespace, never globbed or unquoted.
    std::fs::write(runner.workspace.join("versionDisclosure:X-glob"), "").unwrap();
    let extra = format!(
        "  {}\n --ignore-hardening\t'versionDisclosure:X-*'  ",
        hermetic_args(&fake)
    );
    let record = runner.dir.join("record");
    let record_var = record.display().to_string();
    let waivers = "hstsPreload|2026-12-31T00:00:00Z|a; b, c\r\nexposed|2027-01-31T00:00:00Z|d\n";
    for version in ["latest", ""] {
        let step = runner.step(
            &[
                ("target", &fake.host_port()),
                ("version", version),
                ("warning", "4"),
                ("critical", "2"),
                ("check-hardening", "false"),
                ("release-track", "lts"),
                (
                    "ignore-hardening",
                    "cspWithoutUnsafeInline,Permissions-Policy",
                ),
                ("waive-until", waivers),
                ("releases-token", TOKEN),
                ("extra-args", &extra),
                ("fail-on", "never"),
            ],
            &[("CI_STEP_RECORD", &record_var)],
        );
        let log = step.log();
        assert_eq!(step.code, 0, "{log}");
        let warnings = step.annotations("warning");
        assert_eq!(warnings.len(), 1, "{log}");
        assert!(warnings[0].contains("not pinned"), "{}", warnings[0]);
        assert!(
            warnings[0].contains(&format!("installed v{NEWER}")),
            "{}",
            warnings[0]
        );
        assert_eq!(
            installed_version(&runner.installed(NEWER)),
            format!("{PLUGIN} {NEWER}")
        );
        assert!(
            !runner.installed(VERSION).exists(),
            "the pinned release is not installed"
        );
        assert_eq!(step.output("status"), Some("OK"), "{log}");

        // How the step ran the plugin: its arguments are extra-args, word by word, and nothing
        // else; the configuration came as COS_* variables.
        let args = std::fs::read(format!("{record_var}.args")).unwrap();
        let args: Vec<String> = args
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let mut expected: Vec<String> = hermetic_args(&fake).split(' ').map(String::from).collect();
        expected.extend([
            "--ignore-hardening".into(),
            "'versionDisclosure:X-*'".into(),
        ]);
        assert_eq!(args, expected);
        for flag in [
            "-H",
            "--host",
            "--warning",
            "--critical",
            "--format",
            "--check-hardening",
        ] {
            assert!(!args.iter().any(|a| a == flag), "{flag} in {args:?}");
        }
        let environ = std::fs::read(format!("{record_var}.environ")).unwrap();
        let environ: BTreeMap<String, String> = environ
            .split(|b| *b == 0)
            .filter_map(|e| {
                let e = String::from_utf8_lossy(e);
                e.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect();
        let cos: BTreeMap<&str, &str> = environ
            .iter()
            .filter(|(k, _)| k.starts_with("COS_"))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let host = fake.host_port();
        let state = runner.dir.join("state").display().to_string();
        let feed = runner.server.url("/releases");
        assert_eq!(
            cos,
            BTreeMap::from([
                ("COS_HOST", host.as_str()),
                ("COS_WARNING", "4"),
                ("COS_CRITICAL", "2"),
                ("COS_CHECK_HARDENING", "false"),
                ("COS_RELEASE_TRACK", "lts"),
                ("COS_FORMAT", "json"),
                (
                    "COS_IGNORE_HARDENING",
                    "cspWithoutUnsafeInline,Permissions-Policy"
                ),
                (
                    "COS_WAIVE_UNTIL",
                    "hstsPreload|2026-12-31T00:00:00Z|a; b, c\nexposed|2027-01-31T00:00:00Z|d"
                ),
                ("COS_RELEASES_TOKEN", TOKEN),
                // The runner's own, passed through.
                ("COS_NOW", NOW),
                ("COS_STATE_DIR", state.as_str()),
                ("COS_SELF_UPDATE_URL", feed.as_str()),
            ])
        );
        assert!(
            !environ.keys().any(|k| k.starts_with("INPUT_")),
            "the inputs stay with the script"
        );
        // And the plugin read them: the waivers of both variables and the flag.
        let doc = first_document(&runner.result("storage-security.json"));
        let patterns: Vec<&str> = doc["waivers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["pattern"].as_str().unwrap())
            .collect();
        assert_eq!(
            patterns,
            ["'versionDisclosure:X-*'", "hstsPreload", "exposed"],
            "the flag replaces COS_IGNORE_HARDENING; COS_WAIVE_UNTIL adds one waiver a line"
        );
        assert_token_hidden(&step, &runner.result("storage-security.json"));
    }
    assert!(
        runner
            .server
            .downloads()
            .iter()
            .all(|d| d.starts_with(&format!("/download/v{NEWER}/"))),
        "neither the pre-release, the draft nor the older release: {:?}",
        runner.server.downloads()
    );
}

#[test]
fn a_release_that_does_not_verify_is_refused() {
    let runner = Runner::new("checksum");
    let archive = archive_name(VERSION);
    let tag = format!("v{VERSION}");
    let bytes = b"not the release".to_vec();
    let wrong = "0".repeat(64);
    let cases: Vec<(Release, &str)> = vec![
        (
            Release::new(
                &tag,
                (archive.clone(), Served::Bytes(bytes.clone())),
                &[(archive.clone(), wrong.clone())],
            ),
            "checksum mismatch",
        ),
        (
            Release::new(
                &tag,
                (archive.clone(), Served::Bytes(bytes.clone())),
                &[("other.tar.gz".into(), wrong.clone())],
            ),
            "has no checksum for",
        ),
        (
            Release {
                tag: tag.clone(),
                draft: false,
                prerelease: false,
                assets: vec![(archive.clone(), Served::Bytes(bytes))],
            },
            "publishes no SHA256SUMS",
        ),
    ];
    for (release, message) in cases {
        runner.server.publish(vec![release]);
        let step = runner.step(&[("target", "cloud.example.com")], &[]);
        let log = step.log();
        assert_eq!(step.code, 1, "{log}");
        let errors = step.annotations("error");
        assert_eq!(errors.len(), 1, "{log}");
        assert!(errors[0].contains(message), "{message}: {log}");
        assert!(errors[0].contains("refusing to install"), "{log}");
        assert!(
            !runner.temp.join(PLUGIN).join(VERSION).exists(),
            "nothing installed"
        );
        assert!(
            step.outputs_raw.is_empty(),
            "no outputs: {}",
            step.outputs_raw
        );
        assert!(
            !runner.workspace.join("storage-security.json").exists(),
            "no scan"
        );
    }
}

#[test]
fn wrong_inputs_and_unpublished_versions_are_refused_by_name() {
    let runner = Runner::new("inputs");
    runner.server.publish(standard_releases(&runner.dir));
    for (input, value, expected) in [
        (
            "fail-on",
            "sometimes",
            "allowed values: warning, critical, never",
        ),
        (
            "format",
            "xml",
            "allowed values: json, sarif, junit, monitoring",
        ),
        (
            "release-track",
            "edge",
            "allowed values: auto, rolling, production, lts",
        ),
        ("summary", "yes", "allowed values: true, false"),
        ("check-hardening", "1", "allowed values: true, false"),
        ("warning", "9", "allowed values: a rating from 0 to 5"),
        (
            "version",
            "main",
            "allowed values: a release vX.Y.Z (or X.Y.Z), or latest",
        ),
        ("target", " ", "input target is required"),
    ] {
        let mut inputs = vec![("target", "cloud.example.com")];
        inputs.retain(|(k, _)| *k != input);
        inputs.push((input, value));
        let step = runner.step(&inputs, &[]);
        let log = step.log();
        assert_eq!(step.code, 1, "{input}: {log}");
        let errors = step.annotations("error");
        assert_eq!(errors.len(), 1, "{input}: {log}");
        if input != "target" {
            assert!(
                errors[0].starts_with(&format!("input {input} is \"{value}\"; {expected}")),
                "{input}: {}",
                errors[0]
            );
        } else {
            assert!(errors[0].starts_with(expected), "{}", errors[0]);
        }
        assert!(step.outputs_raw.is_empty());
    }
    assert!(
        runner.server.seen().is_empty(),
        "refused before any download"
    );

    for version in ["v5.5.5", "5.5.5", "v100.0.0", "v101.0.0"] {
        let step = runner.step(
            &[("target", "cloud.example.com"), ("version", version)],
            &[],
        );
        let log = step.log();
        assert_eq!(step.code, 1, "{log}");
        let errors = step.annotations("error");
        assert_eq!(errors.len(), 1, "{log}");
        let bare = version.trim_start_matches('v');
        assert!(
            errors[0].contains(&format!(
                "has no release v{bare} (input version \"{version}\")"
            )),
            "{}",
            errors[0]
        );
    }
    assert!(runner.server.downloads().is_empty(), "nothing downloaded");
}
