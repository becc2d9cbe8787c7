//! Collectives as steps of point-to-point messages, per rank, by a named algorithm. In each
//! step a rank posts its receives and sends at once and waits for them all (as MPICH's
//! implementations do with sendrecv); a rank's steps run in order. Reductions cost no compute.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// allreduce: reduce-scatter then allgather around a ring, 2(p-1) steps of size/p;
    /// allgather: p-1 steps of one block.
    Ring,
    /// allreduce: log2 p exchanges of the whole vector (ranks past the largest power of two
    /// fold in first and get the result last); allgather: log2 p exchanges of growing blocks
    /// (a ring where p is not a power of two).
    RecursiveDoubling,
    /// alltoall: p-1 steps, in step k sending to rank + k and receiving from rank - k.
    Pairwise,
    /// bcast: a binomial tree from the root, log2 p steps.
    Binomial,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::RecursiveDoubling => "recursive_doubling",
            Algorithm::Pairwise => "pairwise",
            Algorithm::Binomial => "binomial",
        }
    }
}

/// Which collective, for choosing and checking algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Allreduce,
    Alltoall,
    Allgather,
    Bcast,
    Barrier,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Allreduce => "allreduce",
            Kind::Alltoall => "alltoall",
            Kind::Allgather => "allgather",
            Kind::Bcast => "bcast",
            Kind::Barrier => "barrier",
        }
    }

    /// The algorithms this collective can use; the first is its default (allreduce: recursive
    /// doubling below 64 KiB, ring from there, as MPICH chooses).
    pub fn algorithms(self, size: u64) -> &'static [Algorithm] {
        match self {
            Kind::Allreduce if size < 65536 => &[Algorithm::RecursiveDoubling, Algorithm::Ring],
            Kind::Allreduce => &[Algorithm::Ring, Algorithm::RecursiveDoubling],
            Kind::Alltoall => &[Algorithm::Pairwise],
            Kind::Allgather => &[Algorithm::Ring, Algorithm::RecursiveDoubling],
            Kind::Bcast => &[Algorithm::Binomial],
            Kind::Barrier => &[Algorithm::RecursiveDoubling],
        }
    }
}

/// One step of one rank: messages to send and to receive, as (peer index in the group, bytes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    pub sends: Vec<(u32, u64)>,
    pub recvs: Vec<(u32, u64)>,
}

/// The steps of member `i` of a group of `p` for a collective of `size` bytes.
pub fn steps(kind: Kind, algorithm: Algorithm, i: u32, p: u32, size: u64, root: u32) -> Vec<Step> {
    let mut out = Vec::new();
    if p < 2 {
        return out;
    }
    let exchange = |to: u32, from: u32, bytes: u64| Step { sends: vec![(to, bytes)], recvs: vec![(from, bytes)] };
    match (kind, algorithm) {
        (Kind::Allreduce, Algorithm::Ring) => {
            let block = size.div_ceil(p as u64).max(1);
            for _ in 0..2 * (p - 1) {
                out.push(exchange((i + 1) % p, (i + p - 1) % p, block));
            }
        }
        (Kind::Allgather, Algorithm::Ring) | (Kind::Allgather, Algorithm::RecursiveDoubling) if algorithm == Algorithm::Ring || !p.is_power_of_two() => {
            for _ in 0..p - 1 {
                out.push(exchange((i + 1) % p, (i + p - 1) % p, size));
            }
        }
        (Kind::Alltoall, _) => {
            for k in 1..p {
                out.push(exchange((i + k) % p, (i + p - k) % p, size));
            }
        }
        (Kind::Bcast, _) => {
            let v = (i + p - root % p) % p;
            let real = |x: u32| (x + root) % p;
            let mut mask = 1;
            while mask < p {
                let mut s = Step::default();
                if v >= mask && v < 2 * mask {
                    s.recvs.push((real(v - mask), size));
                }
                if v < mask && v + mask < p {
                    s.sends.push((real(v + mask), size));
                }
                if !s.sends.is_empty() || !s.recvs.is_empty() {
                    out.push(s);
                }
                mask *= 2;
            }
        }
        (Kind::Barrier, _) => {
            // Dissemination: ceil(log2 p) rounds of one small message.
            let mut d = 1;
            while d < p {
                out.push(exchange((i + d) % p, (i + p - d) % p, 8));
                d *= 2;
            }
        }
        (Kind::Allreduce | Kind::Allgather, _) => {
            // Recursive doubling over the largest power of two; the others fold in and out.
            let q = 1 << (31 - p.leading_zeros());
            let extra = p - q;
            let grows = kind == Kind::Allgather; // only with p a power of two (else a ring, above)
            if i >= q {
                out.push(Step { sends: vec![(i - q, size)], recvs: vec![] });
                out.push(Step { sends: vec![], recvs: vec![(i - q, size)] });
                return out;
            }
            if i < extra {
                out.push(Step { sends: vec![], recvs: vec![(i + q, size)] });
            }
            let mut d = 1;
            let mut block = size;
            while d < q {
                out.push(exchange(i ^ d, i ^ d, block));
                if grows {
                    block *= 2;
                }
                d *= 2;
            }
            if i < extra {
                out.push(Step { sends: vec![(i + q, size)], recvs: vec![] });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message a member sends is received by its peer, in the same step order.
    fn balanced(kind: Kind, algorithm: Algorithm, p: u32) {
        let all: Vec<Vec<Step>> = (0..p).map(|i| steps(kind, algorithm, i, p, 1000, 0)).collect();
        let mut sent = std::collections::BTreeMap::new();
        for (i, s) in all.iter().enumerate() {
            for (to, b) in s.iter().flat_map(|x| x.sends.iter()) {
                *sent.entry((i as u32, *to, *b)).or_insert(0) += 1;
            }
            for (from, b) in s.iter().flat_map(|x| x.recvs.iter()) {
                *sent.entry((*from, i as u32, *b)).or_insert(0) -= 1;
            }
        }
        assert!(sent.values().all(|&c| c == 0), "{kind:?} {algorithm:?} p={p}: {sent:?}");
    }

    #[test]
    fn every_send_has_its_receive() {
        for p in [2, 3, 5, 8, 12, 32] {
            balanced(Kind::Allreduce, Algorithm::Ring, p);
            balanced(Kind::Allreduce, Algorithm::RecursiveDoubling, p);
            balanced(Kind::Allgather, Algorithm::Ring, p);
            balanced(Kind::Allgather, Algorithm::RecursiveDoubling, p);
            balanced(Kind::Alltoall, Algorithm::Pairwise, p);
            balanced(Kind::Bcast, Algorithm::Binomial, p);
            balanced(Kind::Barrier, Algorithm::RecursiveDoubling, p);
        }
    }

    #[test]
    fn step_counts() {
        assert_eq!(steps(Kind::Allreduce, Algorithm::Ring, 0, 8, 800, 0).len(), 14);
        assert_eq!(steps(Kind::Allreduce, Algorithm::RecursiveDoubling, 0, 8, 800, 0).len(), 3);
        assert_eq!(steps(Kind::Alltoall, Algorithm::Pairwise, 3, 8, 800, 0).len(), 7);
        // Binomial bcast from 2 over 8: the root sends 3 times, a leaf receives once.
        let root = steps(Kind::Bcast, Algorithm::Binomial, 2, 8, 800, 2);
        assert_eq!(root.iter().map(|s| s.sends.len()).sum::<usize>(), 3);
        let leaf = steps(Kind::Bcast, Algorithm::Binomial, 1, 8, 800, 2); // 7 hops from the root
        assert_eq!((leaf.len(), leaf[0].recvs.len()), (1, 1));
    }
}
