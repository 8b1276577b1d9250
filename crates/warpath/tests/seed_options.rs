//! The options that redraw seed 001's and 002's experiments as published: `perm --steps`
//! (next_permutation steps per unrank), `lap --solver greedy --ties K` and
//! `fhn --scheme implicit --implicit-variant seed`.

mod common;

use common::{dir, json_of, ok_json, warpath};

/// The seed's 6 x 6 greedy example with its columns mirrored, so that row-major tie-breaking
/// meets first the 25 that leads to 174.
const SEED_6X6_MIRRORED: &str = "\
37,21,6,79,31,62
17,9,66,23,27,45
25,63,38,25,59,83
51,80,100,53,37,1
31,82,32,74,72,69
82,100,64,61,95,34
";

#[test]
fn lap_ties_follows_the_tie_paths_of_the_seed_example() {
    let d = dir("lap-ties");
    std::fs::write(d.join("m.csv"), SEED_6X6_MIRRORED).unwrap();
    let cost = |extra: &[&str]| {
        let out = warpath()
            .args(["lap", "m.csv", "--solver", "greedy", "--json"])
            .args(extra)
            .current_dir(&d)
            .output()
            .unwrap();
        let j = ok_json(&out);
        assert_eq!(j["verified"], true);
        j["cost"].as_f64().unwrap()
    };
    assert_eq!(cost(&[]), 174.0);
    assert_eq!(cost(&["--ties", "1"]), 174.0);
    assert_eq!(cost(&["--ties", "2"]), 167.0);
    assert_eq!(cost(&["--ties", "16"]), 167.0);
    for bad in [
        &["--ties", "0", "--solver", "greedy"][..],
        &["--ties", "2", "--solver", "jv"][..],
    ] {
        let out = warpath()
            .args(["lap", "m.csv"])
            .args(bad)
            .current_dir(&d)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--ties"));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn perm_steps_are_the_seeds_versions() {
    for steps in ["0", "1", "9"] {
        let out = warpath()
            .args([
                "perm",
                "--n",
                "9",
                "--start",
                "5",
                "--count",
                "100003",
                "--discard",
            ])
            .args(["--backend", "cpu", "--json", "--steps", steps])
            .output()
            .unwrap();
        let j = ok_json(&out);
        assert_eq!(j["verified"], true);
        assert_eq!(j["steps"].as_u64(), Some(steps.parse().unwrap()));
        assert_eq!(j["count"], 100_003);
    }
}

#[test]
fn fhn_implicit_variant_seed_is_the_seeds_scheme_on_the_cpu() {
    let run = |extra: &[&str]| {
        warpath()
            .args([
                "fhn", "--scheme", "implicit", "--dt", "0.25", "--t-end", "10",
            ])
            .args(["--json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let mut speeds = Vec::new();
    for (variant, backend) in [("ours", "cpu"), ("seed", "cpu"), ("seed", "auto")] {
        let out = run(&["--implicit-variant", variant, "--backend", backend]);
        let j = ok_json(&out);
        assert_eq!(j["newton"]["variant"], variant);
        assert_eq!(j["backend"], "cpu");
        assert_eq!(j["steps"], 40);
        speeds.push(j["speed"].as_f64().unwrap());
    }
    // a different scheme, a nearby answer: the front speed differs, but not by much
    assert_ne!(speeds[0], speeds[1]);
    assert!(
        (speeds[0] - speeds[1]).abs() < 0.05 * speeds[0],
        "{speeds:?}"
    );
    let out = run(&["--implicit-variant", "seed", "--backend", "cuda"]);
    assert_eq!(out.status.code(), Some(2));
    let j = json_of(&out);
    assert_eq!(j["kind"], "usage");
    assert!(
        j["error"].as_str().unwrap().contains("has no GPU path"),
        "{j}"
    );
}
