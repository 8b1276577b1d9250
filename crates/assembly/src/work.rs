//! The worker pool every bucket stage shares, and the progress it reports: `threads` scoped
//! threads take buckets in a given order, each with its own state (its spill writers and
//! scratch arrays); the calling thread reports progress until they are done. The first error
//! stops the others; so does the cancel flag.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use crate::AssemblyError;
use crate::reads::ReadStats;
use crate::temp::Cancel;

/// What a long run reports as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// Reading: reads and letters so far.
    Reading(ReadStats),
    /// A stage over buckets (or another unit): `done` of `total` finished.
    Stage {
        /// The stage's name (`counting`, `compaction`, `glue`, `unitigs`, `links`, `writing`,
        /// `verification`, `eulertigs`).
        stage: &'static str,
        /// Units finished.
        done: u64,
        /// Units in all.
        total: u64,
    },
}

/// The next batch a worker of a reader-and-workers pipeline takes from `full`: `None` once the
/// reader is done (the channel is closed) or the run is stopping.
pub(crate) fn next_batch<B>(full: &Mutex<mpsc::Receiver<B>>, stop: &AtomicBool) -> Option<B> {
    let next = full.lock().expect("batches").recv().ok()?;
    (!stop.load(Ordering::Relaxed)).then_some(next)
}

/// Runs `work(state, bucket)` for every bucket of `order` on `threads` threads, each thread
/// with the state `init` makes and `finish` consumes, reporting `Progress::Stage` as buckets
/// finish.
///
/// # Errors
/// The first error of `init`, `work` or `finish`; [`AssemblyError::Interrupted`] when
/// `cancel` is set.
#[allow(clippy::too_many_arguments)]
pub(crate) fn for_each_bucket<S>(
    stage: &'static str,
    threads: usize,
    order: &[usize],
    cancel: &Cancel,
    progress: &mut dyn FnMut(Progress),
    init: &(dyn Fn() -> Result<S, AssemblyError> + Sync),
    work: &(dyn Fn(&mut S, usize) -> Result<(), AssemblyError> + Sync),
    finish: &(dyn Fn(S) -> Result<(), AssemblyError> + Sync),
) -> Result<(), AssemblyError> {
    let total = order.len() as u64;
    let next = AtomicUsize::new(0);
    let done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let (exit_tx, exit_rx) = std::sync::mpsc::channel::<()>();
    let failed: Mutex<Option<AssemblyError>> = Mutex::new(None);
    let fail = |e: AssemblyError| {
        let mut f = failed.lock().expect("failure slot");
        if f.is_none() {
            *f = Some(e);
        }
        stop.store(true, Ordering::Relaxed);
    };
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            let (next, done, stop, fail) = (&next, &done, &stop, &fail);
            let exit_tx = exit_tx.clone();
            s.spawn(move || {
                let run = || -> Result<(), AssemblyError> {
                    let mut state = init()?;
                    loop {
                        if stop.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        if cancel.is_cancelled() {
                            return Err(AssemblyError::Interrupted);
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= order.len() {
                            break;
                        }
                        work(&mut state, order[i])?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    finish(state)
                };
                // A pool of one thread: the parallel sorts a bucket calls run on this worker,
                // not handed to rayon's pool (the workers are the parallelism).
                let result = match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
                    Ok(pool) => pool.install(run),
                    Err(_) => run(),
                };
                if let Err(e) = result {
                    fail(e);
                }
                let _ = exit_tx.send(());
            });
        }
        drop(exit_tx);
        wait_reporting(&exit_rx, threads.max(1), &mut || {
            progress(Progress::Stage {
                stage,
                done: done.load(Ordering::Relaxed),
                total,
            })
        });
    });
    if let Some(e) = failed.into_inner().expect("failure slot") {
        return Err(e);
    }
    cancel.check()?;
    progress(Progress::Stage {
        stage,
        done: total,
        total,
    });
    Ok(())
}

/// Waits for `count` messages on `exits` (one per finished thread), calling `report` every
/// 100 ms meanwhile (and not at all when they finish sooner).
pub(crate) fn wait_reporting(
    exits: &std::sync::mpsc::Receiver<()>,
    count: usize,
    report: &mut dyn FnMut(),
) {
    let mut left = count;
    while left > 0 {
        match exits.recv_timeout(Duration::from_millis(100)) {
            Ok(()) => left -= 1,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => report(),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
}
