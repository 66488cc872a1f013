//! Unit tests of `baseline`.

use super::*;
use crate::checks::finding_for;
use crate::output::metrics::testing::{failed, scanned};
use crate::report::Fingerprint;
use std::fs;
use std::path::PathBuf;

impl Baseline {
    /// The baseline `save` writes after a run of `results`.
    pub(crate) fn updated(&self, results: &[ScanResult]) -> Baseline {
        let mut next = self.clone();
        next.hosts.extend(self.changes(results));
        next
    }

    /// The hosts the baseline knows, sorted.
    fn hosts(&self) -> impl Iterator<Item = &str> {
        self.hosts.keys().map(String::as_str)
    }

    /// The file's text as `save` writes it.
    fn to_json(&self) -> String {
        let file = File1 {
            version: FORMAT_VERSION,
            hosts: self.hosts.clone(),
        };
        let mut text = serde_json::to_string_pretty(&file).unwrap();
        text.push('\n');
        text
    }
}

/// A healthy host: rating 5, OK, two passed checks, the `eol` check passed, fingerprint `f1`.
fn healthy(host: &str) -> ScanResult {
    let mut r = scanned(host, "8.1.0", Some(200));
    r.message = "OpenCloud 8.1.0 is up to date and no check failed".into();
    r.findings = vec![
        finding_for("exposed:/opencloud.yaml", Status::Passed, "refused").unwrap(),
        finding_for("corsOriginRestricted", Status::Passed, "restricted").unwrap(),
        finding_for("directoryListing", Status::Passed, "no listing").unwrap(),
        finding_for("eol", Status::Passed, "release line 8.1 is supported").unwrap(),
    ];
    r.configuration_fingerprint = Some(fingerprint("f1"));
    r
}

fn fingerprint(digest: &str) -> Fingerprint {
    Fingerprint {
        short: digest.chars().take(8).collect(),
        digest: digest.into(),
        areas: BTreeMap::new(),
    }
}

fn set(r: &mut ScanResult, id: &str, status: Status) {
    let f = r.findings.iter_mut().find(|f| f.id == id).unwrap();
    f.status = status;
}

/// `exposed:/opencloud.yaml` failed (high): rating 3, WARNING.
fn exposed(host: &str) -> ScanResult {
    let mut r = healthy(host);
    set(&mut r, "exposed:/opencloud.yaml", Status::Failed);
    r.rating = Some(3);
    r.grade = crate::report::grade(Some(3)).into();
    r.state = State::Warning;
    r.message = "exposed:/opencloud.yaml failed (high): served".into();
    r
}

fn with_cors_failed(mut r: ScanResult) -> ScanResult {
    set(&mut r, "corsOriginRestricted", Status::Failed);
    r.message
        .push_str("; corsOriginRestricted failed (medium): any origin");
    r
}

/// Judges `now` with a baseline recorded from `before`.
fn compared(before: ScanResult, mut now: ScanResult, warn_on_new: bool) -> ScanResult {
    Baseline::default()
        .updated(&[before])
        .judge(&mut now, warn_on_new);
    now
}

/// A scratch directory, removed when the test ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("cos-baseline-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

fn temp_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn the_first_run_records_and_keeps_the_normal_verdict() {
    let mut results = [exposed("a.example"), failed("down.example")];
    results
        .iter_mut()
        .for_each(|r| Baseline::default().judge(r, true));
    let comparison = results[0].baseline.clone().unwrap();
    assert!(comparison.recorded);
    assert_eq!(
        comparison,
        BaselineComparison {
            recorded: true,
            ..Default::default()
        }
    );
    assert_eq!(
        results[0].state,
        State::Warning,
        "nothing to compare with yet"
    );
    assert_eq!(
        results[0].message,
        "exposed:/opencloud.yaml failed (high): served"
    );
    // A failed scan gets no comparison and no entry.
    assert_eq!(results[1].baseline, None);
    assert_eq!(results[1].state, State::Unknown);

    let baseline = Baseline::default().updated(&results);
    assert_eq!(baseline.hosts().collect::<Vec<_>>(), ["a.example"]);
    let entry = baseline.hosts.get("a.example").unwrap();
    assert_eq!(entry.recorded_at, "2026-11-22T03:00:00Z");
    assert_eq!(entry.rating, Some(3));
    assert_eq!(
        entry.failed.iter().collect::<Vec<_>>(),
        ["exposed:/opencloud.yaml"]
    );
    assert_eq!(
        entry.concluded.iter().collect::<Vec<_>>(),
        [
            "corsOriginRestricted",
            "directoryListing",
            "eol",
            "exposed:/opencloud.yaml"
        ]
    );
    assert_eq!(entry.fingerprint.as_deref(), Some("f1"));
}

#[test]
fn a_host_missing_from_the_file_is_recorded_on_this_run() {
    let previous = Baseline::default().updated(&[healthy("a.example")]);
    let mut results = [healthy("a.example"), healthy("b.example")];
    results.iter_mut().for_each(|r| previous.judge(r, false));
    assert!(!results[0].baseline.as_ref().unwrap().recorded);
    assert!(results[1].baseline.as_ref().unwrap().recorded);
}

#[test]
fn a_second_run_with_nothing_new_compares_clean() {
    let r = compared(exposed("a.example"), exposed("a.example"), false);
    assert_eq!(
        r.baseline,
        Some(BaselineComparison {
            recorded_on: Some(jiff::civil::date(2026, 11, 22)),
            ..BaselineComparison::default()
        })
    );
    assert_eq!(
        r.state,
        State::Warning,
        "without --warn-on-new nothing changes"
    );
    assert_eq!(r.message, "exposed:/opencloud.yaml failed (high): served");
}

#[test]
fn a_new_failed_finding_is_listed_and_restores_the_normal_state() {
    let r = compared(
        exposed("a.example"),
        with_cors_failed(exposed("a.example")),
        true,
    );
    let b = r.baseline.unwrap();
    assert_eq!(b.new_findings, ["corsOriginRestricted"]);
    assert!(!b.worse_rating && !b.recorded);
    assert_eq!(r.state, State::Warning);
    assert!(
        r.message.starts_with("exposed:/opencloud.yaml failed"),
        "{}",
        r.message
    );
    assert_eq!(BaselineComparison::summary_cell(Some(&b)), "+1");
}

#[test]
fn waived_failures_are_not_new_and_observations_never_count() {
    let mut now = healthy("a.example");
    set(&mut now, "corsOriginRestricted", Status::Failed);
    set(&mut now, "exposed:/opencloud.yaml", Status::Failed);
    now.findings[0].ignored = true;
    let mut observation = finding_for("loginThrottling", Status::Failed, "not throttled").unwrap();
    observation.role = Role::Observation;
    now.findings.push(observation);
    let r = compared(healthy("a.example"), now, false);
    assert_eq!(r.baseline.unwrap().new_findings, ["corsOriginRestricted"]);
}

#[test]
fn a_lower_rating_is_worse_and_restores_the_normal_state() {
    let mut now = exposed("a.example");
    now.rating = Some(2);
    now.grade = crate::report::grade(Some(2)).into();
    let r = compared(exposed("a.example"), now, true);
    let b = r.baseline.unwrap();
    assert!(b.worse_rating);
    assert!(b.new_findings.is_empty());
    assert_eq!(r.state, State::Warning);
    assert_eq!(r.rating, Some(2));

    // A better rating is not worse.
    let r = compared(exposed("a.example"), healthy("a.example"), false);
    assert!(!r.baseline.unwrap().worse_rating);
}

#[test]
fn warn_on_new_reports_ok_when_nothing_is_new_or_worse() {
    let r = compared(exposed("a.example"), exposed("a.example"), true);
    assert_eq!(r.state, State::Ok);
    assert_eq!(
        r.message,
        "nothing new or worse since the baseline of 2026-11-22 (normally WARNING: \
         exposed:/opencloud.yaml failed (high): served)"
    );
    // Rating, grade and findings stay as assessed.
    assert_eq!(r.rating, Some(3));
    assert_eq!(r.grade, "C");
    assert_eq!(r.failed_checks().count(), 1);
    assert_eq!(BaselineComparison::summary_cell(r.baseline.as_ref()), "+0");

    // CRITICAL too; an OK stays as it is.
    let mut critical = exposed("a.example");
    critical.state = State::Critical;
    let r = compared(critical.clone(), critical, true);
    assert_eq!(r.state, State::Ok);
    assert!(r.message.contains("(normally CRITICAL: "), "{}", r.message);
    let r = compared(healthy("a.example"), healthy("a.example"), true);
    assert_eq!(r.state, State::Ok);
    assert_eq!(
        r.message,
        "OpenCloud 8.1.0 is up to date and no check failed"
    );
}

#[test]
fn warn_on_new_never_excuses_an_unmet_policy() {
    let mut now = exposed("a.example");
    now.state = State::Critical;
    now.message = format!(
        "policy requirement(s) unmet: rating C below A; {}",
        now.message
    );
    now.policy = Some(crate::report::PolicyVerdict {
        met: false,
        unmet: vec!["rating C below A".into()],
    });
    let r = compared(exposed("a.example"), now.clone(), true);
    assert_eq!(r.state, State::Critical);
    assert_eq!(r.message, now.message);
    // A met policy does not stand in the way.
    now.policy = Some(crate::report::PolicyVerdict {
        met: true,
        unmet: Vec::new(),
    });
    now.state = State::Warning;
    assert_eq!(compared(exposed("a.example"), now, true).state, State::Ok);
}

#[test]
fn warn_on_new_never_hides_unknown() {
    let mut now = healthy("a.example");
    now.rating = None;
    now.state = State::Unknown;
    let r = compared(healthy("a.example"), now, true);
    assert_eq!(r.state, State::Unknown);
}

#[test]
fn end_of_life_always_alerts() {
    let mut eol = healthy("a.example");
    eol.lifecycle.as_mut().unwrap().state = LineState::EndOfLife;
    set(&mut eol, "eol", Status::Failed);
    eol.rating = Some(0);
    eol.state = State::Critical;
    eol.message = "OpenCloud 8.1.0 is end of life".into();
    let r = compared(eol.clone(), eol.clone(), true);
    let b = r.baseline.unwrap();
    assert!(b.new_findings.is_empty() && !b.worse_rating);
    assert_eq!(r.state, State::Critical);
    assert_eq!(r.message, "OpenCloud 8.1.0 is end of life");

    // Also when only the finding says so (no lifecycle block).
    eol.lifecycle = None;
    let r = compared(eol.clone(), eol, true);
    assert_eq!(r.state, State::Critical);
}

#[test]
fn a_check_concluded_before_and_inconclusive_now_warns() {
    let mut now = healthy("a.example");
    set(&mut now, "corsOriginRestricted", Status::Indeterminate);
    set(&mut now, "directoryListing", Status::NetworkLimited);
    let r = compared(healthy("a.example"), now, false);
    let b = r.baseline.as_ref().unwrap();
    assert_eq!(
        b.inconclusive_now,
        ["corsOriginRestricted", "directoryListing"]
    );
    assert_eq!(r.state, State::Warning);
    assert_eq!(
        r.message,
        "OpenCloud 8.1.0 is up to date and no check failed; 2 check(s) concluded before \
         are inconclusive now: corsOriginRestricted, directoryListing"
    );
    assert_eq!(r.rating, Some(5), "rating unchanged");
    assert_eq!(r.state.exit_code(), 1);

    // A check that never concluded is no news.
    let mut before = healthy("a.example");
    set(&mut before, "directoryListing", Status::Indeterminate);
    let mut now = healthy("a.example");
    set(&mut now, "directoryListing", Status::NetworkLimited);
    let r = compared(before, now, false);
    assert!(r.baseline.unwrap().inconclusive_now.is_empty());
    assert_eq!(r.state, State::Ok);
}

#[test]
fn inconclusive_now_is_not_suppressed_by_warn_on_new_and_never_downgrades() {
    let mut now = exposed("a.example");
    set(&mut now, "directoryListing", Status::Indeterminate);
    let r = compared(exposed("a.example"), now.clone(), true);
    assert_eq!(r.state, State::Warning);
    assert!(
        r.message
            .starts_with("nothing new or worse since the baseline of 2026-11-22"),
        "{}",
        r.message
    );
    assert!(
        r.message
            .ends_with("; 1 check(s) concluded before are inconclusive now: directoryListing"),
        "{}",
        r.message
    );

    // A CRITICAL stays CRITICAL.
    now.state = State::Critical;
    let r = compared(exposed("a.example"), now, false);
    assert_eq!(r.state, State::Critical);
}

#[test]
fn fingerprint_drift_changes_nothing_else() {
    let mut now = exposed("a.example");
    now.configuration_fingerprint = Some(fingerprint("f2"));
    for warn_on_new in [false, true] {
        let r = compared(exposed("a.example"), now.clone(), warn_on_new);
        assert_eq!(
            r.baseline,
            Some(BaselineComparison {
                fingerprint_drift: true,
                recorded_on: Some(jiff::civil::date(2026, 11, 22)),
                ..Default::default()
            })
        );
        let expected = if warn_on_new {
            State::Ok
        } else {
            State::Warning
        };
        assert_eq!(r.state, expected);
    }
    let r = compared(exposed("a.example"), now.clone(), false);
    assert_eq!(r.message, now.message);
    // An unknown fingerprint on either side is no drift.
    now.configuration_fingerprint = None;
    assert!(
        !compared(exposed("a.example"), now, false)
            .baseline
            .unwrap()
            .fingerprint_drift
    );
}

#[test]
fn the_entry_tightens_and_never_absorbs_new_failures() {
    let before = with_cors_failed(exposed("a.example"));
    let mut baseline = Baseline::default().updated(&[before]);
    // Run 2: CORS fixed, a listing appears, the rating improves, the fingerprint drifts.
    let mut now = exposed("a.example");
    set(&mut now, "directoryListing", Status::Failed);
    now.rating = Some(4);
    now.scanned_at = "2026-11-23T03:00:00Z".parse().unwrap();
    now.configuration_fingerprint = Some(fingerprint("f2"));
    baseline = baseline.updated(&[now.clone()]);
    let entry = baseline.hosts.get("a.example").unwrap();
    assert_eq!(entry.recorded_at, "2026-11-22T03:00:00Z");
    assert_eq!(entry.rating, Some(4));
    assert_eq!(
        entry.failed.iter().collect::<Vec<_>>(),
        ["exposed:/opencloud.yaml"],
        "the fixed CORS finding leaves, the new listing is not absorbed"
    );
    assert_eq!(entry.fingerprint.as_deref(), Some("f1"));
    // Run 3: the listing still alerts, CORS coming back is new again.
    let mut run3 = with_cors_failed(now);
    run3.rating = Some(3);
    let mut results = [run3];
    results.iter_mut().for_each(|r| baseline.judge(r, true));
    assert_eq!(
        results[0].baseline.as_ref().unwrap().new_findings,
        ["corsOriginRestricted", "directoryListing"]
    );
    assert_eq!(results[0].state, State::Warning);
    // A rating that drops after improving is worse.
    assert!(results[0].baseline.as_ref().unwrap().worse_rating);
}

#[test]
fn failed_and_unscanned_hosts_keep_their_entries() {
    let previous = Baseline::default().updated(&[exposed("a.example"), healthy("b.example")]);
    let next = previous.updated(&[failed("a.example")]);
    assert_eq!(next, previous);
    let next = previous.updated(&[healthy("c.example")]);
    assert_eq!(
        next.hosts().collect::<Vec<_>>(),
        ["a.example", "b.example", "c.example"]
    );
    assert_eq!(next.hosts.get("a.example"), previous.hosts.get("a.example"));
}

#[test]
fn summary_cell_of_the_new_column() {
    assert_eq!(BaselineComparison::summary_cell(None), "-");
    let recorded = BaselineComparison {
        recorded: true,
        ..Default::default()
    };
    assert_eq!(BaselineComparison::summary_cell(Some(&recorded)), "new");
}

#[test]
fn save_then_load_round_trips_and_keeps_other_hosts() {
    let dir = scratch("round-trip");
    let path = dir.join("baseline.json");
    assert_eq!(Baseline::load(&path), Ok(Baseline::default()));
    Baseline::default()
        .save(&path, &[exposed("a.example"), failed("b.example")])
        .unwrap();
    let loaded = Baseline::load(&path).unwrap();
    assert_eq!(loaded.hosts().collect::<Vec<_>>(), ["a.example"]);
    let text = fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(
        json["hosts"]["a.example"],
        serde_json::json!({
            "recordedAt": "2026-11-22T03:00:00Z",
            "rating": 3,
            "failed": ["exposed:/opencloud.yaml"],
            "concluded": ["corsOriginRestricted", "directoryListing", "eol",
                          "exposed:/opencloud.yaml"],
            "fingerprint": "f1"
        })
    );
    // Another host (another service check sharing the file) is added beside it.
    loaded.save(&path, &[healthy("c.example")]).unwrap();
    let both = Baseline::load(&path).unwrap();
    assert_eq!(both.hosts().collect::<Vec<_>>(), ["a.example", "c.example"]);
    assert_eq!(both.hosts.get("a.example"), loaded.hosts.get("a.example"));
    assert!(temp_files(&dir).is_empty());
    // Written from the entries as they are, the text is that of the whole baseline.
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        loaded.updated(&[healthy("c.example")]).to_json()
    );
}

#[test]
fn hosts_and_ids_beyond_the_caps_are_refused_while_reading() {
    let dir = scratch("caps");
    let path = dir.join("baseline.json");
    let entry = |ids: &str| {
        format!(
            "{{\"recordedAt\": \"2026-11-22T03:00:00Z\", \"rating\": 5, \"failed\": [{ids}], \
             \"concluded\": [], \"fingerprint\": null}}"
        )
    };
    let hosts: Vec<String> = (0..=MAX_HOSTS)
        .map(|n| format!("\"h{n}\": {}", entry("")))
        .collect();
    fs::write(
        &path,
        format!("{{\"version\": 1, \"hosts\": {{{}}}}}", hosts.join(",")),
    )
    .unwrap();
    let error = Baseline::load(&path).unwrap_err();
    assert!(error.contains("holds more than 4096 hosts;"), "{error}");

    let ids: Vec<String> = (0..=MAX_IDS).map(|n| format!("\"{n}\"")).collect();
    fs::write(
        &path,
        format!(
            "{{\"version\": 1, \"hosts\": {{\"a\": {}}}}}",
            entry(&ids.join(","))
        ),
    )
    .unwrap();
    let error = Baseline::load(&path).unwrap_err();
    assert!(
        error.contains("holds more than 65536 finding ids"),
        "{error}"
    );

    // At the caps exactly the file is read.
    let ids: Vec<String> = (0..MAX_IDS).map(|n| format!("\"{n}\"")).collect();
    fs::write(
        &path,
        format!(
            "{{\"version\": 1, \"hosts\": {{\"a\": {}}}}}",
            entry(&ids.join(","))
        ),
    )
    .unwrap();
    let loaded = Baseline::load(&path).unwrap();
    assert_eq!(loaded.hosts.get("a").unwrap().failed.len(), MAX_IDS);
    // The counts start afresh for every file.
    assert!(Baseline::load(&path).is_ok());
}

#[test]
fn the_version_is_read_first_whatever_follows() {
    let dir = scratch("version-first");
    let path = dir.join("baseline.json");
    for (content, expected) in [
        (
            "{\"hosts\": {\"a\": [1, 2]}, \"version\": 2}",
            "has version 2;",
        ),
        ("{\"version\": [1], \"hosts\": {}}", "has version [...];"),
        ("{\"version\": 1.0, \"hosts\": {}}", "has version 1.0;"),
        ("\"text\"", "no JSON object"),
    ] {
        fs::write(&path, content).unwrap();
        let error = Baseline::load(&path).unwrap_err();
        assert!(error.contains(expected), "{content}: {error}");
    }
}

#[cfg(unix)]
#[test]
fn only_regular_files_are_read() {
    let error = Baseline::load(Path::new("/dev/zero")).unwrap_err();
    assert_eq!(
        error,
        "baseline file /dev/zero is a character device, not a regular file; point \
         --baseline at a baseline file, or at a path that does not exist yet to record one"
    );
}

#[test]
fn nothing_is_written_without_anything_to_record() {
    let dir = scratch("nothing");
    let path = dir.join("baseline.json");
    Baseline::default()
        .save(&path, &[failed("a.example")])
        .unwrap();
    assert!(!path.exists());
}

#[test]
fn a_corrupt_file_is_an_error_naming_the_file_and_the_fix() {
    let dir = scratch("corrupt");
    let path = dir.join("baseline.json");
    let cases: &[(&str, &str)] = &[
        ("{\"version\": 1, \"hosts\": {", "is not valid JSON"),
        ("", "is not valid JSON"),
        ("[1, 2]", "no JSON object"),
        ("{\"hosts\": {}}", "no \"version\" member"),
        ("{\"version\": 2, \"hosts\": {}}", "has version 2"),
        ("{\"version\": \"1\", \"hosts\": {}}", "has version \"1\""),
        ("{\"version\": 1}", "is not a baseline of version 1"),
        (
            "{\"version\": 1, \"hosts\": []}",
            "is not a baseline of version 1",
        ),
        (
            "{\"version\": 1, \"hosts\": {\"a\": {\"recordedAt\": \"2026-11-22T03:00:00Z\", \
             \"rating\": 9, \"failed\": [], \"concluded\": [], \"fingerprint\": null}}}",
            "rating of a outside 0-5",
        ),
        (
            "{\"version\": 1, \"hosts\": {\"a\": {\"recordedAt\": \"yesterday\", \
             \"rating\": 1, \"failed\": [], \"concluded\": [], \"fingerprint\": null}}}",
            "recordedAt of a is no timestamp",
        ),
        (
            "{\"version\": 1, \"hosts\": {\"a\": {\"recordedAt\": \"2026-11-22T03:00:00Z\", \
             \"rating\": 1, \"failed\": \"x\", \"concluded\": [], \"fingerprint\": null}}}",
            "is not a baseline of version 1",
        ),
        (
            "{\"version\": 1, \"hosts\": {}, \"extra\": true}",
            "is not a baseline of version 1",
        ),
    ];
    for (content, expected) in cases {
        fs::write(&path, content).unwrap();
        let error = Baseline::load(&path).unwrap_err();
        assert!(error.contains(expected), "{content}: {error}");
        assert!(
            error.starts_with(&format!("baseline file {} ", path.display())),
            "{error}"
        );
        assert!(
            error.ends_with("; delete it to record a new baseline"),
            "{error}"
        );
        assert!(!error.contains('\n'), "{error}");
        // Never a silent reset: the file stays as it was.
        assert_eq!(fs::read_to_string(&path).unwrap(), *content);
    }
    // A directory in place of the file.
    let error = Baseline::load(&dir).unwrap_err();
    assert!(error.contains("is a directory"), "{error}");
}

#[test]
fn an_oversized_file_is_refused() {
    let dir = scratch("oversized");
    let path = dir.join("baseline.json");
    let file = File::create(&path).unwrap();
    file.set_len(Kind::Baseline.cap() + 1).unwrap();
    let error = Baseline::load(&path).unwrap_err();
    assert_eq!(
        error,
        format!(
            "baseline file {} is larger than 4 MiB ({} bytes); point --baseline at a \
             baseline file, or at a path that does not exist yet to record one",
            path.display(),
            Kind::Baseline.cap() + 1
        )
    );
}

#[test]
fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
    let dir = scratch("failed-write");
    let path = dir.join("baseline.json");
    Baseline::default()
        .save(&path, &[exposed("a.example")])
        .unwrap();
    let old = fs::read_to_string(&path).unwrap();
    // The writer dies half-way, as a killed run would.
    let error = write_atomically(&path, |file| {
        file.write_all(b"{\"version\": 1, \"ho")?;
        Err(io::Error::other("killed"))
    })
    .unwrap_err();
    assert!(error.contains("cannot write (killed)"), "{error}");
    assert_eq!(fs::read_to_string(&path).unwrap(), old);
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    assert!(Baseline::load(&path).is_ok());
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_keeps_the_old_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("read-only");
    let path = dir.join("baseline.json");
    Baseline::default()
        .save(&path, &[exposed("a.example")])
        .unwrap();
    let old = fs::read_to_string(&path).unwrap();
    let previous = Baseline::load(&path).unwrap();
    fs::set_permissions(&*dir, fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes anyway: then there is no failure to observe.
    let writable = File::create(dir.join("probe")).is_ok();
    let result = previous.save(&path, &[healthy("b.example")]);
    fs::set_permissions(&*dir, fs::Permissions::from_mode(0o755)).unwrap();
    let _ = fs::remove_file(dir.join("probe"));
    if !writable {
        let error = result.unwrap_err();
        assert!(
            error.starts_with(&format!("cannot save baseline file {}", path.display())),
            "{error}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), old);
    } else {
        result.unwrap();
    }
    assert!(temp_files(&dir).is_empty(), "{:?}", temp_files(&dir));
    assert!(Baseline::load(&path).is_ok());
}

#[test]
fn save_replaces_the_file_and_keeps_its_permissions() {
    let dir = scratch("replace");
    let path = dir.join("baseline.json");
    Baseline::default()
        .save(&path, &[exposed("a.example")])
        .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    }
    let previous = Baseline::load(&path).unwrap();
    previous.save(&path, &[healthy("b.example")]).unwrap();
    let loaded = Baseline::load(&path).unwrap();
    assert_eq!(
        loaded.hosts().collect::<Vec<_>>(),
        ["a.example", "b.example"]
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }
    assert!(temp_files(&dir).is_empty());
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_stays_a_link() {
    let dir = scratch("symlink");
    let real = dir.join("real.json");
    let link = dir.join("link.json");
    Baseline::default()
        .save(&real, &[exposed("a.example")])
        .unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let previous = Baseline::load(&link).unwrap();
    previous.save(&link, &[healthy("b.example")]).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let loaded = Baseline::load(&real).unwrap();
    assert_eq!(loaded.hosts().count(), 2);
}

/// `result` with the conditions a scan records, advisories from `sources`.
fn with_conditions(mut r: ScanResult, sources: &[&str]) -> ScanResult {
    r.conditions = Some(crate::report::Conditions {
        scanner_version: env!("CARGO_PKG_VERSION").into(),
        advisories_updated: Some(jiff::civil::date(2026, 10, 12)),
        advisory_sources: sources.iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    });
    r
}

fn with_failed(mut r: ScanResult, id: &str) -> ScanResult {
    r.findings
        .push(finding_for(id, Status::Failed, "seen now").unwrap());
    r
}

fn causes(r: &ScanResult) -> Vec<(String, Cause)> {
    r.baseline
        .as_ref()
        .unwrap()
        .changes
        .iter()
        .map(|c| (c.id.clone(), c.cause))
        .collect()
}

/// The same release newly matched by an advisory: our knowledge changed, not the
/// instance. The same finding after an upgrade: the instance changed.
#[test]
fn a_new_advisory_is_knowledge_and_a_new_release_is_the_instance() {
    let before = with_conditions(healthy("a.example"), &["bundled"]);
    let now = with_failed(
        with_conditions(healthy("a.example"), &["bundled", "feed.example"]),
        "vulnerability:GHSA-new",
    );
    let r = compared(before.clone(), now.clone(), false);
    assert_eq!(
        causes(&r),
        [("vulnerability:GHSA-new".to_string(), Cause::Knowledge)]
    );
    let detail = &r.baseline.as_ref().unwrap().changes[0].detail;
    assert!(
        detail.contains(
            "GHSA-new matches the same release since the baseline: the advisory data changed \
             (advisories now from bundled, feed.example, bundled data of 2026-10-12; then \
             from bundled, of 2026-10-12)"
        ),
        "{detail}"
    );

    let mut upgraded = now;
    upgraded.product.as_mut().unwrap().version = "8.1.1".into();
    let r = compared(before, upgraded, false);
    assert_eq!(
        causes(&r),
        [("vulnerability:GHSA-new".to_string(), Cause::Instance)]
    );
    assert!(
        r.baseline.as_ref().unwrap().changes[0]
            .detail
            .contains("now runs 8.1.1 (it ran 8.1.0 at the baseline)")
    );
}

/// A line reaching end of life on the same release is knowledge; a finding a waiver hid at
/// the baseline is the waiver; a check the baseline's scanner did not have is the scanner;
/// anything else is the instance, with the fingerprint drift named.
#[test]
fn every_cause_is_told_apart() {
    let mut before = with_conditions(healthy("a.example"), &["bundled"]);
    let mut waived = finding_for("corsOriginRestricted", Status::Failed, "any origin").unwrap();
    waived.ignored = true;
    before.findings.retain(|f| f.id != "corsOriginRestricted");
    before.findings.push(waived);
    let mut previous = Baseline::default().updated(&[before]);
    // A baseline recorded by an older scanner, which never decided dnssec.
    let entry = previous.hosts.get_mut("a.example").unwrap();
    entry.conditions.as_mut().unwrap().scanner_version = "0.0.9".into();
    assert!(!entry.concluded.contains("dnssec"));

    let mut now = with_conditions(healthy("a.example"), &["bundled"]);
    set(&mut now, "eol", Status::Failed);
    set(&mut now, "corsOriginRestricted", Status::Failed);
    set(&mut now, "directoryListing", Status::Failed);
    now.findings
        .push(finding_for("dnssec", Status::Failed, "not signed").unwrap());
    now.configuration_fingerprint = Some(fingerprint("f2"));
    let mut results = [now];
    results.iter_mut().for_each(|r| previous.judge(r, false));
    let mut got = causes(&results[0]);
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        [
            ("corsOriginRestricted".to_string(), Cause::Waiver),
            ("directoryListing".to_string(), Cause::Instance),
            ("dnssec".to_string(), Cause::Scanner),
            ("eol".to_string(), Cause::Knowledge),
        ]
    );
    let changes = &results[0].baseline.as_ref().unwrap().changes;
    let listing = changes.iter().find(|c| c.id == "directoryListing").unwrap();
    assert!(
        listing.detail.contains("fingerprint changed"),
        "{}",
        listing.detail
    );
}

/// A baseline written before conditions were kept: every change is of unknown cause, and
/// the detail says how to fix that. The file still reads, and gains conditions only when
/// the entry is recorded anew.
#[test]
fn an_old_baseline_without_conditions_says_it_cannot_tell() {
    let old = r#"{"version": 1, "hosts": {"a.example": {"recordedAt": "2026-11-01T03:00:00Z",
        "rating": 5, "failed": [], "concluded": ["eol"], "fingerprint": "f1"}}}"#;
    let previous = Baseline::parse(old.as_bytes()).unwrap();
    let now = with_failed(
        with_conditions(healthy("a.example"), &["bundled"]),
        "vulnerability:GHSA-new",
    );
    let mut results = [now];
    results.iter_mut().for_each(|r| previous.judge(r, false));
    let c = results[0].baseline.as_ref().unwrap();
    assert_eq!(c.changes.len(), 1);
    assert_eq!(c.changes[0].cause, Cause::Unknown);
    assert!(c.changes[0].detail.contains("record a new one"));
    assert_eq!(c.recorded_on, Some(jiff::civil::date(2026, 11, 1)));
    // Recorded conditions survive a round trip through the file.
    let recorded = Baseline::default().updated(&[with_conditions(
        healthy("b.example"),
        &["bundled", "x.json"],
    )]);
    let again = Baseline::parse(recorded.to_json().as_bytes()).unwrap();
    let kept = again
        .hosts
        .get("b.example")
        .unwrap()
        .conditions
        .as_ref()
        .unwrap();
    assert_eq!(kept.advisory_sources, ["bundled", "x.json"]);
    assert_eq!(kept.version.as_deref(), Some("8.1.0"));
}
