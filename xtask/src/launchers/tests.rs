//! Tests of the launcher generator: parsing kernel signatures, grouping families, rendering
//! launchers and checking parameter sizes against the PTX.

use super::*;

#[test]
fn parses_pointers_scalars_structs_and_launch_bounds() {
    let text = r#"
            __device__ void helper(int x) {}
            extern "C" __global__ void __launch_bounds__(256, 2) k1(const float* __restrict__ in, u64* out, unsigned long long n, Coeffs c, int) {}
            extern "C" __global__ void k2(void) {}
            extern "C" __global__ void k3(const unsigned* type, float const* self) {}
        "#;
    let e = parse_entries(text).unwrap();
    assert_eq!(e.len(), 3);
    assert_eq!(e[0].name, "k1");
    assert_eq!(
        e[0].params,
        vec![
            Param::Read {
                name: "r#in".into(),
                ty: "f32"
            },
            Param::Write {
                name: "out".into(),
                ty: "u64"
            },
            Param::Value {
                name: "n".into(),
                ty: "u64"
            },
            Param::Struct {
                name: "c".into(),
                ty: "Coeffs".into()
            },
            Param::Value {
                name: "arg4".into(),
                ty: "i32"
            },
        ]
    );
    assert!(e[1].params.is_empty());
    assert_eq!(
        e[2].params,
        vec![
            Param::Read {
                name: "r#type".into(),
                ty: "u32"
            },
            Param::Read {
                name: "self_".into(),
                ty: "f32"
            },
        ]
    );
}

#[test]
fn rejects_what_it_cannot_type() {
    assert!(parse_entries(r#"extern "C" __global__ void k(float** p) {}"#).is_err());
    assert!(parse_entries(r#"extern "C" __global__ void k(Coeffs* p) {}"#).is_err());
}

#[test]
fn entries_that_differ_by_type_form_one_generic_family() {
    let text = r#"
            extern "C" __global__ void m_sum_u32(const u32* in, u64 n, u64* p) {}
            extern "C" __global__ void m_sum_i32(const int* in, u64 n, i64* p) {}
            extern "C" __global__ void m_sum_f32(const float* in, u64 n, double* p) {}
            extern "C" __global__ void m_step_f32(const float* x, const float* c, u32 k, double* s) {}
            extern "C" __global__ void m_step_f64(const double* x, const double* c, u32 k, double* s) {}
            extern "C" __global__ void m_sort_w32_w32(const u32* k, u32* ko, const u32* v) {}
            extern "C" __global__ void m_sort_w64_w32(const u64* k, u64* ko, const u32* v) {}
            extern "C" __global__ void m_alone_u32(u32* out, u64 n) {}
            extern "C" __global__ void m_other_f32(const float* x) {}
            extern "C" __global__ void m_other_f64(const double* x, u64 n) {}
        "#;
    let entries = parse_entries(text).unwrap();
    let f = families(&entries);
    let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
    // A single entry, and entries whose parameter lists differ, are no family.
    assert_eq!(names, ["m_sum", "m_step", "m_sort"]);
    // Columns that vary differently get their own type parameter.
    let sum = &f[0];
    assert!(!sum.by_width);
    assert_eq!(
        sum.members.iter().map(|m| m.2.clone()).collect::<Vec<_>>(),
        [vec!["u32", "u64"], vec!["i32", "i64"], vec!["f32", "f64"]]
    );
    assert!(matches!(sum.slots[1], Slot::Fixed(_)));
    // Columns that vary together share one (x and c are both `T`).
    let step = &f[1];
    let groups: Vec<Option<usize>> = step
        .slots
        .iter()
        .map(|s| match s {
            Slot::Generic { group, .. } => Some(*group),
            Slot::Fixed(_) => None,
        })
        .collect();
    assert_eq!(groups, [Some(0), Some(0), None, None]);
    // Word widths: matched by size, one parameter per column, fixed columns stay typed.
    let sort = &f[2];
    assert!(sort.by_width);
    assert_eq!(sort.members[1].2, ["u64", "u64"]);
    assert!(matches!(
        sort.slots[2],
        Slot::Fixed(Param::Read { ty: "u32", .. })
    ));

    let text = render("m", "// header", &[("TILE".into(), 256)], &entries);
    assert!(text.contains("module \"m\";\n    constants { TILE: u32 = 256 }\n"));
    // Exact types: each member names the types that select it, then the shared arguments.
    assert!(text.contains(
        "family m_sum<T, U> by exact \"that takes exactly\" [m_sum_u32 (T u32, U u64) \"`T = u32`, `U = u64`: `m_sum_u32(const u32* in, u64 n, u64* p)`\", m_sum_i32 (T i32, U i64)"
    ));
    assert!(text.contains("(r#in: read T, n: value u64, p: write U);"));
    // Word widths: selected by size; fixed columns stay typed.
    assert!(text.contains("m_sort_w64_w32 (T 8, U 8)"));
    assert!(text.contains("(k: read T, ko: write U, v: read u32);"));
    // Members get no launcher of their own; entries outside a family keep theirs.
    assert!(!text.contains("fn m_sum_u32 "));
    assert!(text.contains(
        "    fn m_alone_u32 \"m_alone_u32(u32* out, u64 n)\" (out: write u32, n: value u64);\n"
    ));
    assert!(text.contains("fn m_other_f32 "));
}

#[test]
fn reads_ptx_parameter_sizes() {
    let ptx = ".visible .entry k1(\n .param .u64 .ptr .global .align 4 k1_param_0,\n .param .u32 k1_param_1,\n .param .align 8 .b8 k1_param_2[40]\n)\n{ ret; }\n.visible .entry k2()\n{ ret; }";
    let s = ptx_param_sizes(ptx).unwrap();
    assert_eq!(s["k1"], vec![8, 4, 40]);
    assert!(s["k2"].is_empty());
}

#[test]
fn a_size_mismatch_is_an_error() {
    let e = parse_entries(r#"extern "C" __global__ void k(u32 n) {}"#).unwrap();
    let mut ptx = BTreeMap::new();
    ptx.insert("k".to_owned(), vec![8]);
    assert!(check_sizes("m", &e, &ptx).is_err());
    ptx.insert("k".to_owned(), vec![4]);
    assert!(check_sizes("m", &e, &ptx).is_ok());
    // More argument bytes than a launch holds inline.
    let e = parse_entries(r#"extern "C" __global__ void k(Big b) {}"#).unwrap();
    ptx.insert("k".to_owned(), vec![65 * 8]);
    assert!(check_sizes("m", &e, &ptx).is_err());
}
