//! graph-core's undirected Euler circuits and paths against NetworkX's on a few hundred
//! generated graphs (`scripts/compare_networkx.py --quick`): the graphs come from the script,
//! graph-core's answers from the `undirected_euler` example's code run in process, and the
//! script checks them against NetworkX. Skipped when `python3` cannot import `networkx`.

#[path = "../examples/undirected_euler.rs"]
#[allow(dead_code)]
mod undirected_euler;

use std::path::Path;
use std::process::Command;

#[test]
fn undirected_euler_agrees_with_networkx() {
    let has_networkx = Command::new("python3")
        .args(["-c", "import networkx"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_networkx {
        println!("skipped: python3 with networkx not found");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/compare_networkx.py");
    let dir = std::env::temp_dir().join(format!("graph-core-networkx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (graphs, ours) = (dir.join("graphs.jsonl"), dir.join("graph-core.jsonl"));
    let run = |args: &[&Path]| {
        let out = Command::new("python3")
            .arg(&script)
            .args(args)
            .output()
            .expect("python3 could not be started");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{} failed:\n{text}{}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    run(&[Path::new("--quick"), Path::new("--generate"), &graphs]);
    let answers: Vec<String> = std::fs::read_to_string(&graphs)
        .unwrap()
        .lines()
        .map(|line| undirected_euler::answer(line).unwrap())
        .collect();
    assert!(answers.len() > 150);
    std::fs::write(&ours, answers.join("\n") + "\n").unwrap();
    print!("{}", run(&[Path::new("--check"), &graphs, &ours]));
    let _ = std::fs::remove_dir_all(&dir);
}
