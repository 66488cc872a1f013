use super::*;
use crate::family::ProductFamily;
use crate::report::{Role, Status};
use crate::severity::Severity;
use jiff::civil::date;

const TODAY: Date = date(2026, 11, 22);

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

/// The rehearsal of an OpenCloud instance at `installed` with the bundled knowledge, as the
/// assessment runs it (recommended: the installed line's upgrade target).
fn rehearse_opencloud(installed: &str, findings: &[Finding]) -> Vec<report::UpgradeOption> {
    let schedule = ReleaseSchedule::bundled(ProductFamily::OpenCloud);
    let advisories = advisories::bundled(ProductFamily::OpenCloud);
    let installed = v(installed);
    let life = lifecycle::assess(&schedule, &installed, TrackChoice::Auto, TODAY, None);
    let recommended = life.upgrade_target.clone();
    rehearse(&Rehearsal {
        installed: &installed,
        schedule: Some(&schedule),
        advisories: &advisories,
        track_choice: TrackChoice::Auto,
        today: TODAY,
        life: Some(&life),
        recommended: recommended.as_ref(),
        findings,
    })
}

fn best(options: &[report::UpgradeOption]) -> &report::UpgradeOption {
    let best: Vec<_> = options.iter().filter(|o| o.best).collect();
    assert_eq!(best.len(), 1, "{options:?}");
    best[0]
}

/// 4.0.2 on the LTS track, hit by both bundled advisories: the LTS patch 4.0.8 (also the
/// newest on its track) fixes both and keeps the LTS support; the newest production release
/// 7.2.4 fixes both too. Same rating: the smaller step wins.
#[test]
fn an_lts_instance_behind_on_patches_is_told_to_take_the_patch() {
    let options = rehearse_opencloud("4.0.2", &[]);
    let versions: Vec<(&str, Vec<&str>)> = options
        .iter()
        .map(|o| {
            (
                o.version.as_str(),
                o.kinds.iter().map(|k| k.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        versions,
        [
            ("4.0.8", vec!["patch", "track"]),
            ("7.2.4", vec!["production"])
        ]
    );
    let patch = &options[0];
    assert_eq!(patch.fixes, ["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7"]);
    assert!(patch.stays_open.is_empty());
    assert_eq!((patch.rating, patch.grade.as_str()), (5, "A+"));
    assert_eq!(
        patch.line_support_end.map(|d| d.to_string()).as_deref(),
        Some("2027-12-01")
    );
    assert_eq!(patch.outlasts_installed, Some(false), "the same line");
    // The production line runs "until its successor": no date to compare with the LTS date.
    assert_eq!(options[1].outlasts_installed, None);
    assert_eq!(best(&options).version, "4.0.8");
    assert_eq!(
        best_line(&options).unwrap(),
        "Upgrade rehearsal: best 4.0.8 (newest patch of the installed line, newest on the \
         track): fixes GHSA-vf5j-r2hw-2hrw, GHSA-gf4p-7p27-26w7, nothing stays open, rating A+, \
         support ends no later than the installed line's"
    );
}

/// The newest patch closes what the bundled advisories list; an advisory that no release
/// fixes stays open on every candidate, is named there, and caps every candidate at 1 (high).
#[test]
fn what_stays_open_is_named() {
    let options = rehearse_opencloud("4.0.1", &[]);
    let patch = options.iter().find(|o| o.version == "4.0.8").unwrap();
    assert!(patch.stays_open.is_empty());
    // A hand-made advisory that no release fixes stays open on every candidate, and caps
    // them: none reaches more than 1 (high).
    let schedule = ReleaseSchedule::bundled(ProductFamily::OpenCloud);
    let mut advisories = advisories::bundled(ProductFamily::OpenCloud);
    let mut unfixed = advisories[0].clone();
    unfixed.id = "GHSA-unfixed".into();
    unfixed.severity = Some(Severity::High);
    unfixed.ranges = advisories::parse_document(
        r#"{"advisories": [{"id": "GHSA-unfixed", "introduced": "1.0.0"}]}"#,
        ProductFamily::OpenCloud,
    )
    .unwrap()[0]
        .ranges
        .clone();
    advisories.push(unfixed);
    let installed = v("4.0.1");
    let life = lifecycle::assess(&schedule, &installed, TrackChoice::Auto, TODAY, None);
    let options = rehearse(&Rehearsal {
        installed: &installed,
        schedule: Some(&schedule),
        advisories: &advisories,
        track_choice: TrackChoice::Auto,
        today: TODAY,
        life: Some(&life),
        recommended: life.upgrade_target.as_ref(),
        findings: &[],
    });
    assert!(!options.is_empty());
    for o in &options {
        assert_eq!(o.stays_open, ["GHSA-unfixed"], "{o:?}");
        assert_eq!(o.rating, 1, "{o:?}");
        assert!(!o.fixes.contains(&"GHSA-unfixed".to_string()));
    }
}

/// An end-of-life rolling line: no newer patch exists, so the candidates are the newest
/// rolling release (a supported line, the rating the track asks for) and the newest production
/// release (a whole line behind the track's newest: 3). Both outlast the ended line.
#[test]
fn an_end_of_life_line_is_told_to_move_on() {
    let options = rehearse_opencloud("7.0.0", &[]);
    let versions: Vec<&str> = options.iter().map(|o| o.version.as_str()).collect();
    assert_eq!(versions, ["8.1.0", "7.2.4"]);
    let rolling = &options[0];
    assert_eq!(rolling.kinds, [Kind::Track]);
    assert_eq!(rolling.fixes, ["GHSA-gf4p-7p27-26w7"]);
    assert_eq!(rolling.rating, 5);
    assert_eq!(rolling.outlasts_installed, Some(true));
    let production = &options[1];
    assert_eq!(production.rating, 3);
    assert_eq!(production.outlasts_installed, Some(true));
    assert_eq!(best(&options).version, "8.1.0");
}

/// The newest release on every count: nothing to rehearse.
#[test]
fn the_newest_release_has_no_options() {
    assert!(rehearse_opencloud("8.1.0", &[]).is_empty());
    assert!(best_line(&[]).is_none());
    // One release that is all three kinds at once is one option.
    let options = rehearse_opencloud("7.2.1", &[]);
    assert_eq!(options.len(), 1, "{options:?}");
    assert_eq!(
        options[0].kinds,
        [Kind::Patch, Kind::Track, Kind::Production]
    );
    assert!(options[0].best);
}

/// An upgrade changes the release, not the configuration: a critical failed check caps every
/// candidate at 2.
#[test]
fn failed_checks_cap_every_candidate() {
    let mut failed =
        crate::checks::finding_for("demoUsersDisabled", Status::Failed, "dennis").unwrap();
    assert_eq!(
        (failed.role, failed.severity),
        (Role::Check, Severity::Critical)
    );
    failed.counts = true;
    let options = rehearse_opencloud("4.0.2", &[failed]);
    assert!(options.iter().all(|o| o.rating == 2), "{options:?}");
    assert_eq!(best(&options).version, "4.0.8");
}
