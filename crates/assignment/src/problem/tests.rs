//! Unit tests of the internal problem: orientation, sign, scipy's entry rules, scaling.

use ndarray::array;

use super::cost::{MINUS_INF_REASON, NAN_REASON, PLUS_INF_REASON};
use super::*;
use crate::{AssignmentError, Sense};

#[test]
fn transposes_and_negates() {
    let a = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let p = Problem::new(a.view(), Sense::Maximize).unwrap();
    assert_eq!((p.nr, p.nc), (2, 3));
    assert!(p.transposed && p.negated && p.integral());
    assert_eq!(p.row(0), &[-1.0, -3.0, -5.0]);
    assert_eq!(p.row(1), &[-2.0, -4.0, -6.0]);
    assert_eq!((p.min, p.max), (-6.0, -1.0));
}

#[test]
fn classifies_entries_as_scipy_does() {
    use Sense::{Maximize, Minimize};
    for sense in [Minimize, Maximize] {
        assert_eq!(
            f64::NAN.classify_cost(sense),
            CostClass::Invalid(NAN_REASON)
        );
        assert_eq!(None::<i64>.classify_cost(sense), CostClass::Forbidden);
        assert_eq!(Some(3i64).classify_cost(sense), CostClass::Finite(3.0));
        assert_eq!(i64::MAX.classify_cost(sense), CostClass::OutOfRange);
    }
    let minus = CostClass::Invalid(MINUS_INF_REASON);
    let plus = CostClass::Invalid(PLUS_INF_REASON);
    assert_eq!(f64::NEG_INFINITY.classify_cost(Minimize), minus);
    assert_eq!(f64::INFINITY.classify_cost(Minimize), CostClass::Forbidden);
    assert_eq!(f32::INFINITY.classify_cost(Minimize), CostClass::Forbidden);
    assert_eq!(f64::INFINITY.classify_cost(Maximize), plus);
    assert_eq!(
        f64::NEG_INFINITY.classify_cost(Maximize),
        CostClass::Forbidden
    );
    assert_eq!(
        f32::NEG_INFINITY.classify_cost(Maximize),
        CostClass::Forbidden
    );
}

#[test]
fn maximising_turns_minus_infinity_into_the_internal_forbidden_value() {
    let a = array![[1.0, f64::NEG_INFINITY], [3.0, 4.0]];
    let p = Problem::new(a.view(), Sense::Maximize).unwrap();
    assert_eq!(p.row(0), &[-1.0, f64::INFINITY]);
    assert_eq!((p.min, p.max), (-4.0, -1.0));
    let a = array![[1.0, f64::INFINITY]];
    assert!(matches!(
        Problem::new(a.view(), Sense::Maximize),
        Err(AssignmentError::InvalidCost { row: 0, col: 1, reason, .. }) if reason == PLUS_INF_REASON
    ));
    // the integer path
    let a = array![[Some(1i64), None]];
    let p = Problem::new(a.view(), Sense::Maximize).unwrap();
    assert_eq!(p.row(0), &[-1.0, f64::INFINITY]);
}

#[test]
fn huge_entries_are_scaled_by_a_power_of_two() {
    let a = array![[1e308, -1e308, 3.0], [f64::MAX, 0.5, 1e-300]];
    let p = Problem::new(a.view(), Sense::Minimize).unwrap();
    assert!(p.scale_exp > 0 && !p.integral());
    let f = pow2(-p.scale_exp);
    assert_eq!(p.row(0), &[1e308 * f, -1e308 * f, 3.0 * f]);
    assert_eq!(p.row(1)[2], 1e-300 * f);
    assert!((p.max.abs().max(p.min.abs()) * 4.0 * 4.0).is_finite());
    assert!(
        !(p.max.abs() * 2.0 * 4.0 * 4.0).is_finite(),
        "the smallest such power"
    );
    let small = array![[1e300, 2.0]];
    assert_eq!(
        Problem::new(small.view(), Sense::Minimize)
            .unwrap()
            .scale_exp,
        0
    );
}
