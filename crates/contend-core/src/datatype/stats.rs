//! Statistics of a flattened datatype, computed once: what every cost needs (bytes, blocks)
//! and what a user reads to understand a layout (block sizes by power of two).

use super::flatten::Flat;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub size_bytes: u64,
    pub extent_bytes: i64,
    pub lb_bytes: i64,
    /// Blocks of one instance, adjacent ones merged.
    pub blocks: u64,
    pub min_block_bytes: u64,
    pub max_block_bytes: u64,
    pub mean_block_bytes: f64,
    /// Blocks by size: bucket k holds blocks of 2^k to 2^(k+1) - 1 bytes (empty buckets left out).
    pub histogram: Vec<Bucket>,
    /// Whether instance k + 1's first block continues instance k's last (they merge when sent
    /// with a count above one).
    pub joins_next: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bucket {
    pub from_bytes: u64,
    pub blocks: u64,
    pub bytes: u64,
}

/// What one message of `count` instances moves: the inputs of every method's cost.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Message {
    pub count: u64,
    pub bytes: u64,
    pub blocks: u64,
    pub mean_block_bytes: f64,
}

impl Stats {
    pub fn of(f: &Flat) -> Stats {
        let mut buckets = [(0u64, 0u64); 64];
        for &(_, l) in &f.blocks {
            let k = 63 - l.leading_zeros() as usize;
            buckets[k].0 += 1;
            buckets[k].1 += l;
        }
        let histogram = buckets.iter().enumerate().filter(|(_, b)| b.0 > 0).map(|(k, &(blocks, bytes))| Bucket { from_bytes: 1 << k, blocks, bytes }).collect();
        let n = f.blocks.len() as u64;
        let joins_next = match (f.blocks.first(), f.blocks.last()) {
            (Some(a), Some(z)) => z.0 + z.1 as i64 == a.0 + f.extent(),
            _ => false,
        };
        Stats {
            size_bytes: f.size,
            extent_bytes: f.extent(),
            lb_bytes: f.lb,
            blocks: n,
            min_block_bytes: f.blocks.iter().map(|b| b.1).min().unwrap_or(0),
            max_block_bytes: f.blocks.iter().map(|b| b.1).max().unwrap_or(0),
            mean_block_bytes: if n > 0 { f.size as f64 / n as f64 } else { 0.0 },
            histogram,
            joins_next,
        }
    }

    /// `count` instances, each one extent after the previous (MPI's count argument): O(1).
    pub fn message(&self, count: u64) -> Message {
        let joins = if self.joins_next { count.saturating_sub(1) } else { 0 };
        let blocks = count * self.blocks - joins;
        let bytes = count * self.size_bytes;
        Message { count, bytes, blocks, mean_block_bytes: if blocks > 0 { bytes as f64 / blocks as f64 } else { 0.0 } }
    }
}
