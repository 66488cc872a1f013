//! Upgrade rehearsal end to end: the plugin against a fake OpenCloud 4.0.2 (two bundled
//! advisories match it) lists the candidate upgrades in the JSON (`upgradeOptions`) and names
//! the best one in `--debug`'s explanation, without changing the default layout.

use crate::support::FakeInstance;
use crate::support::plugin::{healthy, scan};
use serde_json::Value;

#[test]
fn candidate_upgrades_are_rehearsed_in_the_json_and_the_explanation() {
    let fake = FakeInstance::start(healthy("4.0.2"));
    let host = fake.host_port();
    let run = scan("rehearsal-json", &host, &fake, &["--format", "json"]);
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    let options = document[0]["upgradeOptions"].as_array().unwrap();
    let summary: Vec<(String, Value, u64, bool)> = options
        .iter()
        .map(|o| {
            (
                o["version"].as_str().unwrap().to_string(),
                o["kinds"].clone(),
                o["rating"].as_u64().unwrap(),
                o["best"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "4.0.8".to_string(),
                serde_json::json!(["patch", "track"]),
                5,
                true
            ),
            (
                "7.2.4".to_string(),
                serde_json::json!(["production"]),
                5,
                false
            ),
        ],
        "{}",
        run.stdout
    );
    assert_eq!(
        options[0]["fixes"],
        serde_json::json!(["GHSA-vf5j-r2hw-2hrw", "GHSA-gf4p-7p27-26w7"])
    );
    assert_eq!(options[0]["lineSupportEnd"], "2027-12-01");

    let debug = scan("rehearsal-debug", &host, &fake, &["--debug"]);
    assert!(
        debug.has_line(
            "Upgrade rehearsal: best 4.0.8 (newest patch of the installed line, newest on the \
             track): fixes GHSA-vf5j-r2hw-2hrw, GHSA-gf4p-7p27-26w7, nothing stays open, rating \
             A+, support ends no later than the installed line's"
        ),
        "{}",
        debug.stdout
    );
    assert!(debug.has_line(
        "  7.2.4 (production): rating A+, fixes GHSA-vf5j-r2hw-2hrw, GHSA-gf4p-7p27-26w7, stays \
         open none, line 7.2 supported until its successor"
    ));
    // The default layout (spec) is unchanged: no rehearsal line without --debug.
    let plain = scan("rehearsal-plain", &host, &fake, &[]);
    assert!(
        !plain.stdout.contains("Upgrade rehearsal"),
        "{}",
        plain.stdout
    );
}
