//! `warpath lap` on the inputs of issue 35: sparse files (`--sparse` and made dense), integer
//! and float32 matrices in their own type, `--solver auto` and what it reports, and the
//! refusal of a dense matrix that cannot fit.

mod common;

use common::{dir, json_of, ok_json, run_in};

/// A 6 x 6 Matrix Market file whose cheapest full matching costs 1 + 2 + 3 + 4 + 5 + 6.
const MTX: &str = "%%MatrixMarket matrix coordinate integer general
% row i may take column i (cost i + 1) or column i + 1 (cost 50)
6 6 11
1 1 1
1 2 50
2 2 2
2 3 50
3 3 3
3 4 50
4 4 4
4 5 50
5 5 5
5 6 50
6 6 6
";

#[test]
fn sparse_files_solved_sparse_or_dense_agree() {
    let d = dir("lap-sparse");
    std::fs::write(d.join("m.mtx"), MTX).unwrap();
    let sparse = ok_json(&run_in(&d, "--json lap m.mtx --sparse"));
    assert_eq!(sparse["verified"], true);
    assert_eq!(sparse["chosen"], "sparse");
    assert_eq!(sparse["sparse"], true);
    assert_eq!(sparse["nnz"], 11);
    assert_eq!(sparse["elements"], "i64");
    assert_eq!(sparse["arithmetic"], "i64");
    assert_eq!(sparse["cost"], 21.0);
    let dense = ok_json(&run_in(&d, "--json lap m.mtx --solver jv"));
    assert_eq!(
        (dense["sparse"].clone(), dense["cost"].clone()),
        (false.into(), 21.0.into())
    );
    let max = ok_json(&run_in(&d, "--json lap m.mtx --sparse --maximize"));
    // column 1 has only row 1: the diagonal is the only full matching
    assert_eq!(max["cost"], 21.0);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_dense_form_that_cannot_fit_is_refused_with_a_pointer_to_sparse() {
    let d = dir("lap-huge");
    std::fs::write(
        d.join("huge.mtx"),
        "%%MatrixMarket matrix coordinate real general\n3000000 3000000 1\n1 1 5\n",
    )
    .unwrap();
    let out = run_in(&d, "--json lap huge.mtx");
    assert!(!out.status.success());
    let j = json_of(&out);
    assert_eq!(j["kind"], "out_of_memory", "{j}");
    let msg = j["error"].as_str().unwrap();
    assert!(
        msg.contains("72000000000000 bytes") && msg.contains("--sparse"),
        "{msg}"
    );
    // --sparse with another solver is a usage error
    let out = run_in(&d, "lap huge.mtx --sparse --solver hungarian");
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn integer_and_generated_inputs_keep_their_type() {
    let d = dir("lap-types");
    std::fs::write(d.join("c.csv"), "4,1,3\n2,0,5\n3,2,2\n").unwrap();
    std::fs::write(d.join("f.csv"), "4.5,1,3\n2,0,5\n3,2,2\n").unwrap();
    for (file, elements, arithmetic, cost) in
        [("c.csv", "i64", "i64", 5.0), ("f.csv", "f64", "f64", 5.0)]
    {
        let j = ok_json(&run_in(&d, &format!("--json lap {file}")));
        assert_eq!(j["solver"], "auto");
        assert_eq!(j["chosen"], "jv");
        assert_eq!(j["elements"], elements, "{file}");
        assert_eq!(j["arithmetic"], arithmetic, "{file}");
        assert_eq!(j["cost"], cost);
    }
    let j = ok_json(&run_in(&d, "--json lap --generate 300 --dist int --max 9"));
    assert_eq!(
        (j["elements"].clone(), j["verified"].clone()),
        ("i64".into(), true.into())
    );
    let j = ok_json(&run_in(
        &d,
        "--json lap --sparse --generate 3000 --per-row 4",
    ));
    assert_eq!(
        (j["nnz"].as_u64().unwrap() > 3000, j["verified"].clone()),
        (true, true.into())
    );
    let _ = std::fs::remove_dir_all(&d);
}
