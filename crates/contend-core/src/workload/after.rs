//! The transfers one transfer waits for (`Transfer::after`): indices into its workload, up to
//! three kept in place and more on the heap. Most transfers wait for one to three (an NCCL step
//! for its data, its own last send and its slot), and a vector each was a heap allocation per
//! transfer: on a ring all-reduce of a million transfers (32 x dgx-a100), allocating and freeing
//! them was 5% of the call's instructions (docs/benchmarks.md, issue 25's twenty-first round).

use std::ops::{Deref, DerefMut};

/// Indices kept in place; past them the list moves to the heap.
const INLINE: usize = 3;

#[derive(Clone)]
pub struct After(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, ids: [usize; INLINE] },
    Heap(Vec<usize>),
}

impl Default for After {
    fn default() -> Self {
        After(Repr::Inline { len: 0, ids: [0; INLINE] })
    }
}

impl After {
    pub fn push(&mut self, id: usize) {
        match &mut self.0 {
            Repr::Inline { len, ids } if (*len as usize) < INLINE => {
                ids[*len as usize] = id;
                *len += 1;
            }
            Repr::Inline { ids, .. } => {
                let mut v = Vec::with_capacity(2 * INLINE);
                v.extend_from_slice(ids);
                v.push(id);
                self.0 = Repr::Heap(v);
            }
            Repr::Heap(v) => v.push(id),
        }
    }

    pub fn extend_from_slice(&mut self, ids: &[usize]) {
        ids.iter().for_each(|&id| self.push(id));
    }
}

/// Equal as lists, wherever each keeps its indices.
impl PartialEq for After {
    fn eq(&self, o: &Self) -> bool {
        self[..] == o[..]
    }
}

impl Eq for After {}

impl Deref for After {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        match &self.0 {
            Repr::Inline { len, ids } => &ids[..*len as usize],
            Repr::Heap(v) => v,
        }
    }
}

impl DerefMut for After {
    fn deref_mut(&mut self) -> &mut [usize] {
        match &mut self.0 {
            Repr::Inline { len, ids } => &mut ids[..*len as usize],
            Repr::Heap(v) => v,
        }
    }
}

impl<'a> IntoIterator for &'a After {
    type Item = &'a usize;
    type IntoIter = std::slice::Iter<'a, usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl FromIterator<usize> for After {
    fn from_iter<I: IntoIterator<Item = usize>>(ids: I) -> Self {
        let mut a = After::default();
        ids.into_iter().for_each(|id| a.push(id));
        a
    }
}

impl From<Vec<usize>> for After {
    fn from(v: Vec<usize>) -> Self {
        if v.len() <= INLINE {
            v.into_iter().collect()
        } else {
            After(Repr::Heap(v))
        }
    }
}

impl std::fmt::Debug for After {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list reads the same however long it grows, in place or on the heap, and as long as a
    /// vector's header.
    #[test]
    fn after_reads_as_its_indices_in_place_and_on_the_heap() {
        let mut a = After::default();
        assert!(a.is_empty());
        for n in 1..=7 {
            a.push(10 * n);
            assert_eq!(&a[..], (1..=n).map(|k| 10 * k).collect::<Vec<_>>().as_slice());
        }
        a.iter_mut().for_each(|x| *x += 1);
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), vec![11, 21, 31, 41, 51, 61, 71]);
        assert_eq!(After::from(vec![1, 2]), [1, 2].into_iter().collect());
        assert_eq!(After::from(vec![1, 2, 3, 4, 5]), [1, 2, 3, 4, 5].into_iter().collect());
        let mut b: After = [4, 5].into_iter().collect();
        b.extend_from_slice(&[6, 7]);
        assert_eq!(format!("{b:?}"), "[4, 5, 6, 7]");
        assert_eq!(std::mem::size_of::<After>(), 32);
    }
}
