//! Unit tests of the auction's private parts (the solvers are tested against the other
//! solvers in `tests/solvers.rs`).

use super::cuda::{FIRST_BATCH, MAX_BATCH, next_batch};

/// The batch schedule reads the counter about `log2(r)` times for a phase of `r <= 64`
/// rounds and once per 64 rounds beyond, and queues fewer than 64 no-op rounds.
#[test]
fn batch_schedule_bounds_reads_and_idle_rounds() {
    for rounds in 1u32..=3000 {
        let (mut queued, mut reads, mut batch) = (0u32, 0u32, FIRST_BATCH);
        loop {
            queued += batch;
            reads += 1;
            if queued >= rounds {
                break;
            }
            batch = next_batch(batch);
        }
        assert!(
            queued - rounds < MAX_BATCH,
            "{rounds} rounds: {queued} queued"
        );
        let ramp = (MAX_BATCH / FIRST_BATCH).ilog2() + 1;
        assert!(
            reads <= ramp + rounds.div_ceil(MAX_BATCH),
            "{rounds}: {reads} reads"
        );
    }
}
