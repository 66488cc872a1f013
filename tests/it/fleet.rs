//! `check-storage-scanner fleet <paths>`: the real binary on result documents the plugin and
//! `scan <host>` produced from fake instances at `NOW`, judged again more than a year later
//! (after OpenCloud's 4.0 LTS line ended on 2027-12-01): the order, the reasons, the exit
//! codes, `--format json`, and the lines for files that are not result documents.

use crate::support::plugin::{NOW, healthy, hermetic, scratch};
use crate::support::{FakeInstance, InstanceConfig};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The day the fleet is judged: 4.0 (LTS) ended on 2027-12-01; 8.1 (rolling) is still
/// supported (the bundled schedule knows no successor).
const LATER: &str = "2027-12-10T00:00:00Z";

struct Out {
    stdout: String,
    stderr: String,
    code: i32,
}

fn scanner(dir: &Path, args: &[&str], now: &str) -> Out {
    let output = Command::new(env!("CARGO_BIN_EXE_check-storage-scanner"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("COS_NOW", now)
        .current_dir(dir)
        .output()
        .expect("run the scanner");
    Out {
        stdout: String::from_utf8(output.stdout).expect("UTF-8"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().expect("exit code"),
    }
}

fn write(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// The fleet's documents in `dir/results/`, as a nightly job would have saved them at `NOW`:
/// returns the host names (lts, vuln, demo, fresh).
fn saved_fleet(dir: &Path) -> [String; 4] {
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    // 4.0.8 on the LTS track; 4.0.5 too, affected by GHSA-gf4p-7p27-26w7 (medium, fixed in
    // 4.0.8); a default 8.1.0 install whose demo accounts were waived until 2027-01-31; a
    // healthy 8.1.0.
    let lts = FakeInstance::start(healthy("4.0.8"));
    let vuln = FakeInstance::start(healthy("4.0.5"));
    let demo = FakeInstance::start(InstanceConfig::default().version("8.1.0"));
    let fresh = FakeInstance::start(healthy("8.1.0"));
    let base = hermetic(&lts.ca_file());
    let hosts = format!(
        "{},{},{}",
        lts.host_port(),
        vuln.host_port(),
        demo.host_port()
    );
    let mut args: Vec<&str> = vec![
        "-H",
        &hosts,
        "--format",
        "json",
        "--waive-until",
        "demoUsersDisabled|2027-01-31T00:00:00Z|accounts go in the January maintenance",
    ];
    args.extend(base.iter().map(String::as_str));
    let plugin = crate::support::plugin::run("fleet-plugin", &args, &[]);
    let mut array: Value = serde_json::from_str(&plugin.stdout).expect("the plugin's JSON");
    let docs = array.as_array_mut().unwrap();
    assert_eq!(docs.len(), 3);
    for doc in docs.iter() {
        assert_eq!(doc["scannedAt"], NOW);
    }
    // The 4.0.5 document as saved before the advisory was known: nothing listed, OK.
    let v = &mut docs[1];
    assert_eq!(
        v["vulnerabilities"][0]["id"], "GHSA-gf4p-7p27-26w7",
        "{v:#}"
    );
    v["vulnerabilities"] = Value::Array(Vec::new());
    v["state"] = "OK".into();
    v["rating"] = 5.into();
    write(&results.join("nightly.json"), &array);

    // One document of `scan <host>` (an object, not an array), saved yesterday.
    let mut scan_args: Vec<&str> = vec!["scan"];
    let fresh_host = fresh.host_port();
    scan_args.push(&fresh_host);
    scan_args.extend(base.iter().map(String::as_str));
    let out = scanner(dir, &scan_args, NOW);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let mut one: Value = serde_json::from_str(&out.stdout).unwrap();
    one["scannedAt"] = "2027-12-09T03:00:00Z".into();
    write(&results.join("yesterday.json"), &one);
    [
        lts.host_port(),
        vuln.host_port(),
        demo.host_port(),
        fresh.host_port(),
    ]
}

const FIX: &str = "give fleet what check-storage-security --format json or check-storage-scanner \
                   scan printed, as files or directories of *.json files";

/// The table's rows: (rank, host, product, state, reasons).
fn rows(stdout: &str) -> Vec<(String, String, String, String, Vec<String>)> {
    let mut rows: Vec<(String, String, String, String, Vec<String>)> = Vec::new();
    for line in stdout
        .lines()
        .skip_while(|l| !l.starts_with("#  HOST"))
        .skip(1)
    {
        if line.starts_with('|') {
            break;
        }
        if line.starts_with(' ') {
            rows.last_mut().unwrap().4.push(line.trim().to_string());
            continue;
        }
        let cells: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(cells.len(), 5, "{line}");
        rows.push((
            cells[0].into(),
            cells[1].into(),
            cells[2].into(),
            cells[3].into(),
            vec![cells[4].to_string()],
        ));
    }
    rows
}

fn row(
    rank: &str,
    host: &str,
    product: &str,
    state: &str,
    why: &[&str],
) -> (String, String, String, String, Vec<String>) {
    (
        rank.into(),
        host.into(),
        product.into(),
        state.into(),
        why.iter().map(|w| w.to_string()).collect(),
    )
}

const EOL: &str = "line 4.0 reached end of life on 2027-12-01 (since the scan); upgrade to 7.2.4 (production track)";
const ADVISORY: &str = "GHSA-gf4p-7p27-26w7 (medium) published since the scan; fixed in 4.0.8";
const WAIVER: &str = "waiver for demoUsersDisabled expired 2027-01-31; it no longer hides demoUsersDisabled (critical)";
const OLD: &str = "scanned 382 days ago";

#[test]
fn the_fleet_judged_again_most_urgent_first() {
    let dir = scratch("fleet-view");
    let [lts, vuln, demo, fresh] = saved_fleet(&dir);
    let results = dir.join("results");
    // Files that are not result documents: skipped with a line on stderr each.
    std::fs::write(results.join("notes.json"), "remember the milk").unwrap();
    std::fs::write(results.join("empty.json"), "[]").unwrap();
    std::fs::write(results.join("README.txt"), "not read: not *.json").unwrap();
    let folder = results.display().to_string();

    let out = scanner(&dir, &["fleet", &folder], LATER);
    assert_eq!(out.code, 2, "a host is CRITICAL now\n{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0], "CRITICAL: 3 of 4 hosts need action now (2 critical, 1 warning)",
        "{}",
        out.stdout
    );
    assert!(
        lines[1].starts_with(
            "Judged 4 result documents of 4 hosts from 2 files at 2027-12-10T00:00:00Z with \
             OpenCloud release schedule of "
        ) && lines[1].ends_with("; 2 files skipped (see stderr)"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "");
    assert!(
        lines[3].starts_with("#  HOST")
            && lines[3].ends_with("  PRODUCT          STATE          WHY"),
        "{}",
        lines[3]
    );
    assert_eq!(
        rows(&out.stdout),
        [
            // Both CRITICAL now; the 4.0.5 one has more news.
            row(
                "1",
                &vuln,
                "OpenCloud 4.0.5",
                "OK → CRITICAL",
                &[EOL, ADVISORY, OLD]
            ),
            row("2", &lts, "OpenCloud 4.0.8", "OK → CRITICAL", &[EOL, OLD]),
            // The demo accounts count again: a critical check caps the rating at 2.
            row(
                "3",
                &demo,
                "OpenCloud 8.1.0",
                "OK → WARNING",
                &[WAIVER, OLD]
            ),
            row("4", &fresh, "OpenCloud 8.1.0", "OK → OK", &["nothing new"]),
        ],
        "{}",
        out.stdout
    );
    assert_eq!(
        lines.last().copied(),
        Some("| hosts=4;;;0 critical=2;;;0 warning=1;;;0 none=1;;;0")
    );
    assert!(!out.stdout.contains('\x1b'), "plain text");
    assert_eq!(
        out.stderr.lines().collect::<Vec<_>>(),
        [
            format!(
                "check-storage-scanner: skipped result file {folder}/empty.json is not a result \
                 document (an empty array holds no result document); {FIX}"
            ),
            format!(
                "check-storage-scanner: skipped result file {folder}/notes.json is not JSON \
                 (expected value at line 1 column 1); {FIX}"
            ),
        ]
    );

    // The same as JSON, in the same order.
    let out = scanner(&dir, &["fleet", "--format", "json", &folder], LATER);
    assert_eq!(out.code, 2);
    let view: Value = serde_json::from_str(&out.stdout).expect("a JSON array");
    let view = view.as_array().unwrap();
    let kinds = |n: usize| -> Vec<&str> {
        view[n]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["kind"].as_str().unwrap())
            .collect()
    };
    assert_eq!(view.len(), 4);
    assert_eq!(
        view[0],
        serde_json::json!({
            "priority": 1,
            "host": vuln,
            "product": "opencloud",
            "version": "4.0.5",
            "scannedAt": NOW,
            "daysSinceScan": 382,
            "stateThen": "OK",
            "stateNow": "CRITICAL",
            "urgency": "critical",
            "reasons": [
                {"kind": "end-of-life", "detail": EOL},
                {"kind": "advisory", "detail": ADVISORY},
                {"kind": "old-scan", "detail": OLD},
            ],
        })
    );
    assert_eq!(kinds(1), ["end-of-life", "old-scan"]);
    assert_eq!(
        (&view[2]["host"], &view[2]["stateNow"], kinds(2)),
        (
            &Value::from(demo.as_str()),
            &Value::from("WARNING"),
            vec!["waiver-expired", "old-scan"]
        )
    );
    assert_eq!(view[3]["host"], fresh.as_str());
    assert_eq!(view[3]["reasons"], serde_json::json!([]));
    assert_eq!(view[3]["urgency"], "none");

    // Files named one by one: the healthy host alone needs nothing (exit 0), the demo host
    // alone is a warning (exit 1); a day before 4.0 ends, nothing is critical.
    let yesterday = results.join("yesterday.json").display().to_string();
    let out = scanner(&dir, &["fleet", &yesterday, "--format=text"], LATER);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("OK: none of 1 host needs action now\n"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let nightly: Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("nightly.json")).unwrap())
            .unwrap();
    let single = dir.join("demo.json");
    write(&single, &nightly[2]);
    let out = scanner(&dir, &["fleet", &single.display().to_string()], LATER);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("WARNING: 1 of 1 host needs action now (0 critical, 1 warning)\n"),
        "{}",
        out.stdout
    );
    let nightly_path = results.join("nightly.json").display().to_string();
    let out = scanner(&dir, &["fleet", &nightly_path], "2027-11-30T00:00:00Z");
    assert_eq!(out.code, 1, "{}", out.stdout);
    // At the scan's own clock only what the saved 4.0.5 document lacks is new.
    let out = scanner(&dir, &["fleet", &nightly_path], NOW);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let now_rows = rows(&out.stdout);
    assert_eq!(
        now_rows[0],
        row("1", &vuln, "OpenCloud 4.0.5", "OK → WARNING", &[ADVISORY])
    );
    assert!(
        now_rows[1..]
            .iter()
            .all(|r| r.3 == "OK → OK" && r.4 == ["nothing new"]),
        "{}",
        out.stdout
    );
}

#[test]
fn files_that_are_not_result_documents_are_named_with_the_fix() {
    let dir = scratch("fleet-refused");
    let notes = dir.join("notes.json");
    std::fs::write(&notes, "remember the milk").unwrap();
    let notes = notes.display().to_string();
    let missing = dir.join("missing.json").display().to_string();
    let empty_dir = dir.join("nothing");
    std::fs::create_dir_all(&empty_dir).unwrap();
    let empty_dir = empty_dir.display().to_string();
    for (args, expected) in [
        (
            vec![notes.as_str()],
            format!(
                "UNKNOWN: result file {notes} is not JSON (expected value at line 1 column 1); {FIX}"
            ),
        ),
        (
            vec![missing.as_str()],
            format!("UNKNOWN: result file {missing} does not exist; {FIX}"),
        ),
        (
            vec![empty_dir.as_str()],
            format!("UNKNOWN: directory {empty_dir} holds no *.json file; {FIX}"),
        ),
        (
            vec![],
            "UNKNOWN: fleet needs result documents: check-storage-scanner fleet results/ (a \
             directory of what check-storage-security --format json printed) or fleet a.json \
             b.json"
                .to_string(),
        ),
        (
            vec![notes.as_str(), "--format", "xml"],
            "UNKNOWN: --format \"xml\" is not a fleet output format; use one of text, json"
                .to_string(),
        ),
    ] {
        let mut all = vec!["fleet"];
        all.extend(args);
        let out = scanner(&dir, &all, LATER);
        assert_eq!(out.code, 3, "{}", out.stdout);
        assert_eq!(out.stdout, format!("{expected}\n"));
    }

    // Several, and nothing readable: every line, after one that says so.
    let out = scanner(&dir, &["fleet", &notes, &missing], LATER);
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stdout,
        format!(
            "UNKNOWN: no result document to judge in 2 files or directories\nresult file {notes} \
             is not JSON (expected value at line 1 column 1); {FIX}\nresult file {missing} does \
             not exist; {FIX}\n"
        )
    );

    // --format belongs to fleet (and the plugin) only.
    let out = scanner(&dir, &["scan", "x.example", "--format", "json"], LATER);
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stdout,
        "UNKNOWN: --format is an option of check-storage-security and fleet, not of scan; see \
         check-storage-scanner -h\n"
    );
}
