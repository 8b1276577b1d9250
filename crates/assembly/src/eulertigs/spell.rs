//! The eulertigs spelled: the unitigs read back from the store and packed ([`load_unitigs`]),
//! the circuit cut into walks ([`walks`]), the walks spelled as FASTA by the run's threads in
//! rounds, a round written while the next is spelled ([`write_walks`]).

use std::io::Write;

use crate::AssemblyError;
use crate::bases::{append_letters, pack_letters};
use crate::records::unitig_records;
use crate::store::Store;

use super::arcs::Directed;

/// Letters of the eulertigs' text per batch of walks spelled by one thread (a round holds one
/// batch per thread in memory).
pub(super) const SPELL_BATCH: usize = 4 << 20;

/// One step of a walk: a unitig, read backward or not.
pub(super) type Step = (u32, bool);

/// A walk: the steps `steps[a..b]`.
pub(super) type Walk = (u32, u32);

/// The unitigs in memory, their bases packed 2 bits each, in parts (one per chunk of the
/// store, as read).
pub(super) struct Unitigs {
    packed: Vec<Vec<u8>>,
    /// Where each unitig's bases start: byte `offset & PART_MASK` of part `offset >>
    /// PART_SHIFT`.
    offset: Vec<u64>,
    length: Vec<u32>,
    counts: Vec<u64>,
    /// Whether each is a cycle.
    pub(super) circular: Vec<bool>,
}

/// The unitigs of one chunk of the store, packed.
#[derive(Default)]
struct Part {
    packed: Vec<u8>,
    offset: Vec<u64>,
    length: Vec<u32>,
    counts: Vec<u64>,
    circular: Vec<bool>,
}

const PART_SHIFT: u32 = 40;
const PART_MASK: u64 = (1 << PART_SHIFT) - 1;

/// The store's `u_total` unitigs, read and packed by chunks on `threads` threads.
///
/// # Errors
/// [`AssemblyError::Disk`] reading the store; [`AssemblyError::Internal`] when it holds
/// another number of unitigs.
pub(super) fn load_unitigs(
    store: &Store,
    threads: usize,
    u_total: usize,
) -> Result<Unitigs, AssemblyError> {
    let parts = store.map_chunks(threads, &|buf| {
        let mut part = Part::default();
        for r in unitig_records(buf) {
            part.offset.push(part.packed.len() as u64);
            part.length.push(r.sequence.len() as u32);
            pack_letters(r.sequence, &mut part.packed);
            part.counts.push(r.count);
            part.circular.push(r.circular);
        }
        part
    })?;
    let mut u = Unitigs {
        packed: Vec::with_capacity(parts.len()),
        offset: Vec::with_capacity(u_total),
        length: Vec::with_capacity(u_total),
        counts: Vec::with_capacity(u_total),
        circular: Vec::with_capacity(u_total),
    };
    for (i, p) in parts.into_iter().enumerate() {
        u.offset
            .extend(p.offset.iter().map(|&o| (i as u64) << PART_SHIFT | o));
        u.length.extend_from_slice(&p.length);
        u.counts.extend_from_slice(&p.counts);
        u.circular.extend_from_slice(&p.circular);
        u.packed.push(p.packed);
    }
    if u.offset.len() != u_total {
        return Err(AssemblyError::Internal(format!(
            "the store holds {} unitigs, its figures {u_total}",
            u.offset.len()
        )));
    }
    Ok(u)
}

/// The walks of a circuit (edge indices in circuit order) of `g`: the unitigs (and their
/// directions) between two virtual or hub arcs, the circuit read from the hub; then each cycle
/// alone, as the unitig reads. Returns the steps `(unitig, reversed)` and the walks as ranges
/// of steps: walk `i` is eulertig `i`.
pub(super) fn walks(order: &[u32], g: &Directed, circular: &[bool]) -> (Vec<Step>, Vec<Walk>) {
    let u_total = circular.len();
    let pos = order
        .iter()
        .position(|&e| g.edges[e as usize].0 == g.hub)
        .unwrap_or(0);
    let mut steps: Vec<Step> = Vec::with_capacity(u_total);
    let mut walks: Vec<Walk> = Vec::new();
    let mut from = 0usize;
    for j in 0..order.len() {
        let w = g.what[order[(pos + j) % order.len()] as usize];
        if w == u32::MAX || (w / 2) as usize >= u_total {
            if from < steps.len() {
                walks.push((from as u32, steps.len() as u32));
            }
            from = steps.len();
        } else {
            steps.push((w / 2, w & 1 == 1));
        }
    }
    if from < steps.len() {
        walks.push((from as u32, steps.len() as u32));
    }
    for (u, &c) in circular.iter().enumerate() {
        if c {
            walks.push((steps.len() as u32, steps.len() as u32 + 1));
            steps.push((u as u32, false));
        }
    }
    (steps, walks)
}

/// What the spelling wrote: strings, bases, k-mers.
#[derive(Default)]
pub(super) struct Spelled {
    pub(super) strings: u64,
    pub(super) bases: u64,
    pub(super) kmers: u64,
}

/// Writes every walk as a FASTA record to `out`, spelled on `threads` threads in rounds of
/// one batch of walks (about [`SPELL_BATCH`] letters) per thread; a round is written while the
/// threads spell the next.
///
/// # Errors
/// [`AssemblyError::Disk`] for the writer.
pub(super) fn write_walks(
    out: &mut dyn Write,
    tigs: &Tigs<'_>,
    walks: &[Walk],
    threads: usize,
) -> Result<Spelled, AssemblyError> {
    let mut done = Spelled::default();
    let mut ready: Vec<Vec<u8>> = vec![Vec::new(); threads];
    let mut spare: Vec<Vec<u8>> = vec![Vec::new(); threads];
    let mut batches = round(tigs, walks, 0, threads);
    let mut sums: Vec<(u64, u64)> = std::thread::scope(|scope| {
        spell_round(scope, tigs, walks, &batches, &mut ready)
            .into_iter()
            .map(|h| h.join().expect("spelling thread"))
            .collect()
    });
    while !batches.is_empty() {
        let next = round(
            tigs,
            walks,
            batches.last().map_or(walks.len(), |b| b.1),
            threads,
        );
        let (written, next_sums) = std::thread::scope(|scope| {
            let handles = spell_round(scope, tigs, walks, &next, &mut spare);
            let mut written = Ok(());
            for text in &ready[..batches.len()] {
                written = out.write_all(text);
                if written.is_err() {
                    break;
                }
            }
            let sums: Vec<(u64, u64)> = handles
                .into_iter()
                .map(|h| h.join().expect("spelling thread"))
                .collect();
            (written, sums)
        });
        written.map_err(|error| AssemblyError::Disk {
            path: "eulertigs".into(),
            error,
        })?;
        for &(bases, kmers) in &sums {
            done.bases += bases;
            done.kmers += kmers;
        }
        done.strings += (batches.last().map_or(0, |b| b.1) - batches[0].0) as u64;
        std::mem::swap(&mut ready, &mut spare);
        (batches, sums) = (next, next_sums);
    }
    Ok(done)
}

/// The batches of walks of the round that starts at walk `w0`: one per thread, about
/// [`SPELL_BATCH`] letters each (at least one walk).
fn round(tigs: &Tigs<'_>, walks: &[Walk], w0: usize, threads: usize) -> Vec<(usize, usize)> {
    let mut batches = Vec::with_capacity(threads);
    let mut w = w0;
    while batches.len() < threads && w < walks.len() {
        let first = w;
        let mut letters = 0;
        while w < walks.len() && (w == first || letters < SPELL_BATCH) {
            letters += tigs.letters(walks[w]);
            w += 1;
        }
        batches.push((first, w));
    }
    batches
}

/// Spells each batch of walks on a thread of its own into its text (as FASTA, eulertig `i` for
/// walk `i`); each thread returns its bases and k-mers.
fn spell_round<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    tigs: &'scope Tigs<'_>,
    walks: &'scope [Walk],
    batches: &[(usize, usize)],
    texts: &'scope mut [Vec<u8>],
) -> Vec<std::thread::ScopedJoinHandle<'scope, (u64, u64)>> {
    batches
        .iter()
        .zip(texts.iter_mut())
        .map(|(&(a, b), text)| {
            scope.spawn(move || {
                text.clear();
                let mut sum = (0u64, 0u64);
                for (i, &walk) in walks[a..b].iter().enumerate() {
                    let (bases, kmers) = tigs.spell(walk, (a + i) as u64, text);
                    sum.0 += bases;
                    sum.1 += kmers;
                }
                sum
            })
        })
        .collect()
}

/// The unitigs (2-bit, in memory) and the walks' steps, for spelling.
pub(super) struct Tigs<'a> {
    pub(super) k: usize,
    pub(super) unitigs: &'a Unitigs,
    pub(super) steps: &'a [Step],
}

impl Tigs<'_> {
    /// Letters of the walk `steps[a..b]`: its unitigs overlapping by `k - 1`.
    fn letters(&self, (a, b): Walk) -> usize {
        let s = &self.steps[a as usize..b as usize];
        s.iter()
            .map(|&(u, _)| self.unitigs.length[u as usize] as usize)
            .sum::<usize>()
            - (self.k - 1) * (s.len() - 1)
    }

    /// Appends eulertig `id`, the walk `steps[a..b]`, to `text` as FASTA (`>ID LN:i:LEN
    /// KC:i:COUNT km:f:MEAN`); its bases and k-mers.
    fn spell(&self, walk: Walk, id: u64, text: &mut Vec<u8>) -> (u64, u64) {
        let s = &self.steps[walk.0 as usize..walk.1 as usize];
        let len = self.letters(walk);
        let kc: u64 = s
            .iter()
            .map(|&(u, _)| self.unitigs.counts[u as usize])
            .sum();
        let kmers = (len + 1 - self.k) as u64;
        writeln!(
            text,
            ">{id} LN:i:{len} KC:i:{kc} km:f:{:.1}",
            kc as f64 / kmers.max(1) as f64
        )
        .expect("to memory");
        let at = text.len();
        for (j, &(u, rev)) in s.iter().enumerate() {
            let u = u as usize;
            let skip = if j == 0 { 0 } else { self.k - 1 };
            let o = self.unitigs.offset[u];
            append_letters(
                &self.unitigs.packed[(o >> PART_SHIFT) as usize][(o & PART_MASK) as usize..],
                self.unitigs.length[u] as usize,
                skip,
                rev,
                text,
            );
        }
        debug_assert_eq!(text.len() - at, len);
        text.push(b'\n');
        (len as u64, kmers)
    }
}
