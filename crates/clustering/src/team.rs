//! A team of threads that runs the leaves of one fit's steps, the way OpenMP runs a loop:
//! the helpers keep spinning between two steps instead of going to sleep.
//!
//! **Why.** A fit runs hundreds of steps of tens of microseconds to a few milliseconds, and
//! rayon's idle workers go to sleep after a few microseconds without work. Waking a sleeping
//! thread whose virtual CPU the hypervisor has halted can take longer than such a step: on a
//! 2-vCPU cloud machine a fit of 10^4 points that started after a pause (as a user's single
//! `fit` does) ran at the speed of one thread, its second worker waking only after each step
//! was done. The team's helpers spin for [`SPIN`] after each step, so the steps of one fit
//! find them awake.
//!
//! **Shape.** [`with_team`] makes the calling thread the leader of a team of `threads`
//! threads for the length of a closure (the fit). [`run_on_team`] is how
//! [`crate::cpu::tree`] hands a step's leaves to it: the leader runs leaves too, each thread
//! claims leaves one at a time from a shared counter, and the leader returns once every leaf
//! is done. The helpers are jobs on rayon's own threads (already spread over the cores, so
//! no new thread starts per fit or lands on the leader's core); a helper that sees no step
//! for [`SPIN`] returns its thread to rayon, and the next step starts another. The leader
//! never waits for a helper that has not claimed a leaf. The reduction stays the caller's
//! (the same fixed tree), so results have the same bits as on rayon.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a helper spins for the next step before it returns its thread to rayon: longer
/// than the serial work between two steps (the centres' update), short enough that a helper
/// does not hold a core through the work the fit runs on rayon's threads instead (the
/// k-means++ start), whose jobs it also runs while it waits.
const SPIN: Duration = Duration::from_micros(250);

/// The job of one step, its lifetime erased: valid while its step runs (see [`Team::run`]).
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn(usize) + Sync));

// SAFETY: the closure behind the pointer is `Sync`, and `Team::run` keeps it alive until
// every leaf claimed from it is done; it is dereferenced only for a claimed leaf.
unsafe impl Send for Job {}

/// What the leader and the helpers share.
struct Shared {
    /// The step's number (high 32 bits) and the next unclaimed leaf (low 32 bits): a claim
    /// is one compare-and-swap that fails for a helper still looking at an older step.
    claim: AtomicU64,
    /// The current step: its number, job and leaf count.
    job: Mutex<(u64, Option<Job>, usize)>,
    /// Leaves of the current step done.
    done: AtomicUsize,
    /// Whether a leaf panicked.
    panicked: AtomicBool,
    /// Set when the team ends.
    stop: AtomicBool,
    /// Helpers running (on rayon's threads).
    helpers: AtomicUsize,
}

/// A running team (see the module's documentation).
pub(crate) struct Team {
    shared: Arc<Shared>,
    /// The number of the last step handed out.
    step: Cell<u64>,
    /// Helpers wanted: the team's threads but the leader.
    want: usize,
}

thread_local! {
    /// The team whose leader is this thread, while [`with_team`] runs.
    static CURRENT: Cell<*const Team> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with this thread as the leader of a team of `threads` threads (it and up to
/// `threads - 1` helpers on rayon's threads), which the steps [`crate::cpu::tree`] runs on
/// this thread then use. With one thread, or when this thread already leads a team, `f`
/// simply runs.
pub(crate) fn with_team<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    if threads <= 1 || leads_team() {
        return f();
    }
    let team = Team {
        shared: Arc::new(Shared {
            claim: AtomicU64::new(0),
            job: Mutex::new((0, None, 0)),
            done: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            helpers: AtomicUsize::new(0),
        }),
        step: Cell::new(0),
        want: threads - 1,
    };
    /// Ends the team however `f` returns: the helpers stop and the leader forgets it.
    struct End<'a>(&'a Shared);
    impl Drop for End<'_> {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(std::ptr::null()));
            self.0.stop.store(true, Ordering::SeqCst);
        }
    }
    let _end = End(&team.shared);
    CURRENT.with(|c| c.set(&raw const team));
    f()
}

/// Whether this thread leads a team ([`with_team`] is running on it).
pub(crate) fn leads_team() -> bool {
    !CURRENT.with(Cell::get).is_null()
}

/// Runs `leaf(i)` for every `i < count` on the team this thread leads and returns `true`,
/// or returns `false` at once when it leads none.
///
/// # Panics
/// When a leaf panicked (on any thread of the team).
pub(crate) fn run_on_team(count: usize, leaf: &(dyn Fn(usize) + Sync)) -> bool {
    let team = CURRENT.with(Cell::get);
    if team.is_null() {
        return false;
    }
    // SAFETY: `CURRENT` points to the team of the `with_team` running on this thread, which
    // outlives this call.
    unsafe { &*team }.run(count, leaf);
    true
}

/// `f(i, part)` for every part, in parallel: on the team this thread leads (whose helpers
/// stay awake between the passes of one fit), else on rayon's threads; the results in the
/// parts' order.
pub(crate) fn map_parts<P: Send, R: Send>(
    parts: Vec<P>,
    f: impl Fn(usize, P) -> R + Sync,
) -> Vec<R> {
    if parts.len() > 1 && leads_team() {
        let count = parts.len();
        let cells: Vec<Mutex<Option<P>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
        let out: Vec<Mutex<Option<R>>> = (0..count).map(|_| Mutex::new(None)).collect();
        run_on_team(count, &|i| {
            let part = cells[i]
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let r = f(i, part.expect("each part runs once"));
            *out[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        });
        out.into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(PoisonError::into_inner)
                    .expect("every part ran")
            })
            .collect()
    } else {
        use rayon::prelude::*;
        parts
            .into_par_iter()
            .enumerate()
            .map(|(i, p)| f(i, p))
            .collect()
    }
}

impl Team {
    /// Runs `leaf(i)` for every `i < count`, on this thread and the helpers awake.
    fn run(&self, count: usize, leaf: &(dyn Fn(usize) + Sync)) {
        let sh = &*self.shared;
        let count = count.min(u32::MAX as usize);
        let step = self.step.get() + 1;
        self.step.set(step);
        // SAFETY: only the lifetime is erased; the helpers call the closure only for leaves
        // they claim for this step, and this function returns after all of them are done
        // (`done == count`).
        let job = Job(unsafe {
            std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync)>(
                leaf,
            )
        });
        *sh.job.lock().unwrap_or_else(PoisonError::into_inner) = (step, Some(job), count);
        sh.done.store(0, Ordering::SeqCst);
        sh.claim.store(step << 32, Ordering::SeqCst);
        // Helpers for this step where fewer are running than wanted (they left after a
        // pause, or this is the first step).
        let have = sh.helpers.load(Ordering::SeqCst);
        for _ in have..self.want.min(count.saturating_sub(1)) {
            sh.helpers.fetch_add(1, Ordering::SeqCst);
            let shared = Arc::clone(&self.shared);
            rayon::spawn(move || helper(&shared));
        }
        work(sh, step, job, count);
        while sh.done.load(Ordering::Acquire) < count {
            std::hint::spin_loop();
        }
        sh.job.lock().unwrap_or_else(PoisonError::into_inner).1 = None;
        if sh.panicked.swap(false, Ordering::SeqCst) {
            panic!("a leaf of a k-means step panicked");
        }
    }
}

/// Claims and runs leaves of step `step` until none is left (or a newer step began).
fn work(sh: &Shared, step: u64, job: Job, count: usize) {
    loop {
        let v = sh.claim.load(Ordering::Acquire);
        if v >> 32 != step || (v & u64::from(u32::MAX)) as usize >= count {
            return;
        }
        if sh
            .claim
            .compare_exchange_weak(v, v + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            continue;
        }
        let i = (v & u64::from(u32::MAX)) as usize;
        // SAFETY: leaf `i` of `step` is claimed and not done, so the leader is still in
        // `Team::run` for this step and the closure is alive.
        let leaf = unsafe { &*job.0 };
        if catch_unwind(AssertUnwindSafe(|| leaf(i))).is_err() {
            sh.panicked.store(true, Ordering::SeqCst);
        }
        sh.done.fetch_add(1, Ordering::Release);
    }
}

/// A helper's life on a rayon thread: run the leaves of each new step, until no step comes
/// for [`SPIN`] or the team stops.
fn helper(sh: &Shared) {
    let mut seen = 0u64;
    while let Some(step) = wait_for_step(sh, seen) {
        seen = step;
        let (number, job, count) = *sh.job.lock().unwrap_or_else(PoisonError::into_inner);
        if let (true, Some(job)) = (number == step, job) {
            work(sh, step, job, count);
        }
    }
    sh.helpers.fetch_sub(1, Ordering::SeqCst);
}

/// The number of the first step after `seen`, or `None` when none comes within [`SPIN`] or
/// the team stops. While it waits it runs other jobs of rayon's pool, if any.
fn wait_for_step(sh: &Shared, seen: u64) -> Option<u64> {
    let mut start = Instant::now();
    let mut spins = 0u32;
    loop {
        let step = sh.claim.load(Ordering::Acquire) >> 32;
        if sh.stop.load(Ordering::Relaxed) {
            return None;
        }
        if step != seen {
            return Some(step);
        }
        std::hint::spin_loop();
        spins += 1;
        if spins.is_multiple_of(64) {
            if rayon::yield_now() == Some(rayon::Yield::Executed) {
                start = Instant::now();
            } else if start.elapsed() > SPIN {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_leaf_runs_once_on_the_team() {
        let hits: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
        with_team(3, || {
            for step in 0..200 {
                let count = (step * 7) % 1000 + 1;
                assert!(run_on_team(count, &|i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                }));
                if step % 50 == 0 {
                    // A pause longer than the spin: the helpers leave, and new ones start.
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        });
        let expected: Vec<usize> = (0..1000)
            .map(|i| (0..200).filter(|s| (s * 7) % 1000 + 1 > i).count())
            .collect();
        let got: Vec<usize> = hits.iter().map(|h| h.load(Ordering::Relaxed)).collect();
        assert_eq!(got, expected);
        assert!(!run_on_team(1, &|_| {}), "the team ends with `with_team`");
    }

    #[test]
    fn a_leaf_that_panics_panics_the_leader_and_the_team_ends() {
        let r = std::panic::catch_unwind(|| {
            with_team(2, || {
                run_on_team(64, &|i| assert!(i != 37, "leaf 37"));
            })
        });
        assert!(r.is_err());
        assert!(!run_on_team(1, &|_| {}));
    }

    #[test]
    fn one_thread_runs_no_team() {
        with_team(1, || assert!(!run_on_team(3, &|_| {})));
    }
}
