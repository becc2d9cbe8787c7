//! Pattern generators: the scatter, gather, all-to-all and random graphs of the SC16
//! validation, and the cluster patterns of network studies (permutation, nearest neighbours on
//! a rank grid, group shift).

use super::TransferSpec;
use crate::units::Bytes;

fn spec(src: &str, dst: &str, size: Bytes) -> TransferSpec {
    TransferSpec { src: src.into(), dst: dst.into(), size, ..Default::default() }
}

/// `root` sends `size` to every other device in `peers`.
pub fn scatter(root: &str, peers: &[String], size: Bytes) -> Vec<TransferSpec> {
    peers.iter().filter(|p| *p != root).map(|p| spec(root, p, size)).collect()
}

/// Every device in `peers` sends `size` to `root`.
pub fn gather(root: &str, peers: &[String], size: Bytes) -> Vec<TransferSpec> {
    peers.iter().filter(|p| *p != root).map(|p| spec(p, root, size)).collect()
}

/// Every ordered pair of distinct devices.
pub fn all_to_all(peers: &[String], size: Bytes) -> Vec<TransferSpec> {
    let mut out = Vec::new();
    for s in peers {
        for d in peers {
            if s != d {
                out.push(spec(s, d, size));
            }
        }
    }
    out
}

/// `count` ordered pairs drawn uniformly from `peers` with a fixed seed: distinct while there
/// are distinct pairs left, then repeating (each further pair drawn uniformly).
pub fn random_graph(peers: &[String], count: usize, size: Bytes, seed: u64) -> Vec<TransferSpec> {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for s in 0..peers.len() {
        for d in 0..peers.len() {
            if s != d {
                pairs.push((s, d));
            }
        }
    }
    let mut rng = SplitMix64(seed);
    // Partial Fisher-Yates: the first `count` entries are a uniform sample without replacement.
    let distinct = count.min(pairs.len());
    for i in 0..distinct {
        let j = i + (rng.next_u64() % (pairs.len() - i) as u64) as usize;
        pairs.swap(i, j);
    }
    let mut out: Vec<TransferSpec> = pairs[..distinct].iter().map(|&(s, d)| spec(&peers[s], &peers[d], size)).collect();
    for _ in distinct..count {
        let (s, d) = pairs[(rng.next_u64() % pairs.len() as u64) as usize];
        out.push(spec(&peers[s], &peers[d], size));
    }
    out
}

/// Every device sends `size` to one other, all receiving once: a seeded random permutation
/// without fixed points.
pub fn permutation(peers: &[String], size: Bytes, seed: u64) -> Vec<TransferSpec> {
    let n = peers.len();
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rng = SplitMix64(seed);
    for i in (1..n).rev() {
        perm.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    // Fixed points swap targets with their successor: still a permutation, now without any.
    for i in 0..n {
        if perm[i] == i {
            let j = (i + 1) % n;
            perm.swap(i, j);
        }
    }
    (0..n).map(|i| spec(&peers[i], &peers[perm[i]], size)).collect()
}

/// Ranks on a grid (row-major, the last dimension fastest) send `size` to each neighbour
/// along every dimension, with wrap-around where `periodic`.
pub fn neighbours(peers: &[String], grid: &[u32], periodic: bool, size: Bytes) -> Vec<TransferSpec> {
    let mut stride = vec![1usize; grid.len()];
    for d in (0..grid.len().saturating_sub(1)).rev() {
        stride[d] = stride[d + 1] * grid[d + 1] as usize;
    }
    let mut out = Vec::new();
    for r in 0..peers.len() {
        for (d, &g) in grid.iter().enumerate() {
            let c = (r / stride[d]) % g as usize;
            for step in [-1i64, 1] {
                let to = c as i64 + step;
                let to = if (0..g as i64).contains(&to) {
                    to as usize
                } else if periodic && g > 2 {
                    to.rem_euclid(g as i64) as usize
                } else {
                    continue;
                };
                out.push(spec(&peers[r], &peers[r - c * stride[d] + to * stride[d]], size));
            }
        }
    }
    out
}

/// A tiny, stable PRNG: results must not change when a dependency is upgraded.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("GPU{i}")).collect()
    }

    #[test]
    fn pattern_sizes() {
        let g = gpus(8);
        assert_eq!(scatter("GPU0", &g, Bytes(1)).len(), 7);
        assert_eq!(gather("GPU0", &g, Bytes(1)).len(), 7);
        assert_eq!(all_to_all(&g, Bytes(1)).len(), 56);
    }

    #[test]
    fn random_is_seeded_and_distinct() {
        let g = gpus(8);
        let a = random_graph(&g, 32, Bytes(1), 7);
        assert_eq!(a, random_graph(&g, 32, Bytes(1), 7));
        assert_ne!(a, random_graph(&g, 32, Bytes(1), 8));
        let mut pairs: Vec<_> = a.iter().map(|t| (t.src.clone(), t.dst.clone())).collect();
        pairs.sort();
        pairs.dedup();
        assert_eq!(pairs.len(), 32);
        assert!(a.iter().all(|t| t.src != t.dst));
    }
}
