//! The fake fleet (`tests/support/fleet.rs`) answers like the fake instance it is built from,
//! shape by shape, counts what each instance received, and feeds `--host-list`: a fleet run
//! scans every instance exactly once and reports it in the list's order.

use crate::support::fleet::{FakeFleet, Mix, Shape, address};
use crate::support::plugin::{hermetic_untrusting, run, scratch};
use serde_json::Value;

/// The shapes that answer at once (slow and silent instances cost real time).
fn prompt_mix() -> Mix {
    Mix(vec![
        (Shape::Current, 4),
        (Shape::Behind, 2),
        (Shape::EndOfLife, 2),
        (Shape::Advisory, 2),
        (Shape::DemoAccounts, 2),
    ])
}

#[test]
fn a_fleet_run_scans_each_instance_once_in_the_order_of_its_host_list() {
    let fleet = FakeFleet::start(24, &prompt_mix()).expect("start the fleet");
    let dir = scratch("fake-fleet-list");
    let list = dir.join("hosts.txt");
    fleet.write_host_list(&list).unwrap();
    let list = list.display().to_string();
    let mut args = vec![
        "--host-list",
        &list,
        "--format",
        "json",
        "--concurrency",
        "8",
    ];
    let hermetic = hermetic_untrusting();
    args.extend(hermetic.iter().map(String::as_str));
    let out = run("fake-fleet-run", &args, &[]);
    let documents: Vec<Value> = serde_json::from_str(&out.stdout).expect("a JSON array");
    let targets = fleet.targets();
    assert_eq!(documents.len(), targets.len());
    for (document, target) in documents.iter().zip(&targets) {
        assert_eq!(
            document["url"].as_str().map(|u| u.trim_end_matches('/')),
            Some(target.as_str()),
            "in the list's order"
        );
    }
    // Every instance was scanned, and once: instances of one shape received alike.
    let counts = fleet.request_counts();
    let shapes = fleet.shapes();
    for shape in [
        Shape::Current,
        Shape::Behind,
        Shape::EndOfLife,
        Shape::Advisory,
    ] {
        let of_shape: Vec<usize> = counts
            .iter()
            .zip(&shapes)
            .filter(|(_, s)| **s == shape)
            .map(|(c, _)| *c)
            .collect();
        assert!(of_shape.len() >= 2, "{shape:?}: {of_shape:?}");
        assert!(of_shape[0] > 0, "{shape:?} was scanned");
        assert!(
            of_shape.iter().all(|c| *c == of_shape[0]),
            "{shape:?} scanned once each: {of_shape:?}"
        );
    }
    // Each shape answers as its version and state make a real instance answer.
    for (document, shape) in documents.iter().zip(&shapes) {
        assert_eq!(document["product"]["version"], shape.version(), "{shape:?}");
        let failed = |id: &str| {
            document["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["id"] == id && f["status"] == "failed")
        };
        let host = &document["host"];
        let vulnerable = document["vulnerabilities"]
            .as_array()
            .is_some_and(|v| !v.is_empty());
        match shape {
            Shape::EndOfLife => assert!(failed("eol"), "{host}"),
            Shape::Advisory => assert!(vulnerable, "{host}"),
            Shape::DemoAccounts => assert!(failed("demoUsersDisabled"), "{host}"),
            Shape::Current | Shape::Behind => assert!(!failed("eol") && !vulnerable, "{host}"),
            Shape::Slow | Shape::Silent => unreachable!("not in the mix"),
        }
    }
}

#[test]
fn a_mix_spreads_its_shapes_through_the_fleet() {
    let shapes = Mix::night().assign(1000);
    assert_eq!(shapes.len(), 1000);
    let count = |shape| shapes.iter().filter(|s| **s == shape).count();
    assert_eq!(count(Shape::Current), 600);
    assert_eq!(count(Shape::Silent), 10);
    // Any hundred in a row hold the mix, give or take one.
    for window in shapes.windows(100) {
        let silent = window.iter().filter(|s| **s == Shape::Silent).count();
        assert!(silent <= 2, "{silent}");
        let current = window.iter().filter(|s| **s == Shape::Current).count();
        assert!((58..=62).contains(&current), "{current}");
    }
    assert_eq!(
        Mix::parse("current=3, silent=1").unwrap(),
        Mix(vec![(Shape::Current, 3), (Shape::Silent, 1)])
    );
    assert!(Mix::parse("sleepy=1").unwrap_err().contains("no shape"));
    assert!(Mix::parse("current=0").is_err());
    // Addresses stay in 127.0.0.0/8, 250 to a /24.
    assert_eq!(address(0).to_string(), "127.1.0.1");
    assert_eq!(address(250).to_string(), "127.1.1.1");
    assert_eq!(address(99_999).to_string(), "127.2.143.250");
}
