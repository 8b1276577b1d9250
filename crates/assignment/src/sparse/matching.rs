//! Hopcroft–Karp maximum cardinality matching: whether a sparse square problem has a perfect
//! matching at all (the auction does not terminate without one).

use std::collections::VecDeque;

/// No row / no column.
const NONE: u32 = u32::MAX;

/// The size of a maximum matching of the bipartite graph with `rows` rows whose edges are
/// `indices[indptr[i]..indptr[i + 1]]` (columns below `cols`). Iterative (no recursion, so a
/// long augmenting path cannot overflow the stack), `O(E sqrt(V))`.
pub(crate) fn maximum_matching(rows: usize, cols: usize, indptr: &[u64], indices: &[u32]) -> usize {
    let mut mate_row = vec![NONE; rows]; // column of each row
    let mut mate_col = vec![NONE; cols]; // row of each column
    let mut dist = vec![u32::MAX; rows];
    let mut queue = VecDeque::with_capacity(rows);
    let mut cursor = vec![0u64; rows];
    let mut stack: Vec<u32> = Vec::new();
    let mut matched = 0usize;
    // Greedy start: each row takes a free column if it has one.
    for i in 0..rows {
        for &j in &indices[indptr[i] as usize..indptr[i + 1] as usize] {
            if mate_col[j as usize] == NONE {
                mate_col[j as usize] = i as u32;
                mate_row[i] = j;
                matched += 1;
                break;
            }
        }
    }
    loop {
        // BFS from the free rows over alternating paths; `found` when a free column is reached.
        queue.clear();
        for i in 0..rows {
            if mate_row[i] == NONE {
                dist[i] = 0;
                queue.push_back(i as u32);
            } else {
                dist[i] = u32::MAX;
            }
        }
        let mut found = false;
        while let Some(i) = queue.pop_front() {
            let i = i as usize;
            for &j in &indices[indptr[i] as usize..indptr[i + 1] as usize] {
                let r = mate_col[j as usize];
                if r == NONE {
                    found = true;
                } else if dist[r as usize] == u32::MAX {
                    dist[r as usize] = dist[i] + 1;
                    queue.push_back(r);
                }
            }
        }
        if !found {
            return matched;
        }
        // DFS along the layers from each free row, with an explicit stack of rows.
        for (i, c) in cursor.iter_mut().enumerate() {
            *c = indptr[i];
        }
        for f in 0..rows {
            if mate_row[f] != NONE {
                continue;
            }
            stack.clear();
            stack.push(f as u32);
            while let Some(&top) = stack.last() {
                let i = top as usize;
                let end = indptr[i + 1];
                let mut advanced = false;
                while cursor[i] < end {
                    let j = indices[cursor[i] as usize];
                    cursor[i] += 1;
                    let r = mate_col[j as usize];
                    if r == NONE {
                        // Augment along the stack: each row takes the column it went through.
                        let mut col = j;
                        while let Some(row) = stack.pop() {
                            let prev = mate_row[row as usize];
                            mate_row[row as usize] = col;
                            mate_col[col as usize] = row;
                            col = prev;
                        }
                        matched += 1;
                        advanced = true;
                        break;
                    }
                    if dist[r as usize] == dist[i] + 1 {
                        stack.push(r);
                        advanced = true;
                        break;
                    }
                }
                if !advanced {
                    dist[i] = u32::MAX; // a dead end for the rest of this phase
                    stack.pop();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(rows: &[&[u32]]) -> (Vec<u64>, Vec<u32>) {
        let (mut p, mut i) = (vec![0u64], Vec::new());
        for r in rows {
            i.extend_from_slice(r);
            p.push(i.len() as u64);
        }
        (p, i)
    }

    #[test]
    fn matchings_of_small_graphs() {
        let (p, i) = csr(&[&[0, 1, 2], &[0], &[0]]);
        assert_eq!(maximum_matching(3, 3, &p, &i), 2);
        let (p, i) = csr(&[&[1], &[0, 2], &[1]]);
        assert_eq!(maximum_matching(3, 3, &p, &i), 2);
        // the greedy start takes column 0 for row 0; row 1 needs it: one augmentation
        let (p, i) = csr(&[&[0, 1], &[0]]);
        assert_eq!(maximum_matching(2, 2, &p, &i), 2);
        let (p, i) = csr(&[&[], &[]]);
        assert_eq!(maximum_matching(2, 2, &p, &i), 0);
    }

    /// A long chain that the greedy start matches badly: every augmenting path is long.
    #[test]
    fn long_chains_without_recursion() {
        let n = 200_000u32;
        let rows: Vec<Vec<u32>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1, i] } else { vec![i] })
            .collect();
        let refs: Vec<&[u32]> = rows.iter().map(|r| &r[..]).collect();
        let (p, i) = csr(&refs);
        assert_eq!(maximum_matching(n as usize, n as usize, &p, &i), n as usize);
    }
}
