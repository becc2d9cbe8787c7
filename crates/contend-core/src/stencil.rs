//! Stream-ordered against CPU-posted communication (seed 004, GPUDirect Async; sources-digest
//! §2.4, §4.4), as one iteration of the seed's 2D stencil: a closed form per iteration, every
//! term a named parameter (docs/models.md, "Stream-ordered communication"). It stands in until
//! rank programs run on the executor; it never advances a clock of its own beyond one iteration's
//! arithmetic.
//!
//! The kernels are the seed's seven: interior, x and y boundary, pack and unpack per dimension.
//! CPU-posted (normal MPI), per dimension: post two receives, launch boundary and pack,
//! synchronise, post two sends; then wait for all, launch both unpacks, synchronise. The CPU is
//! on the critical path. Stream-ordered (LibMP): the CPU enqueues the same work and the GPU
//! triggers the sends and waits for the receives; the iteration takes the longer of the GPU's
//! path and the CPU's enqueueing.

use crate::error::{Error, Result};
use crate::params::{Kind, Param, Values};
use crate::units::{Bandwidth, Bytes, Time};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StencilParams {
    /// CPU seconds to launch a kernel, until it can run.
    pub launch: f64,
    /// Seconds from a stream's last kernel ending until the host knows (cudaStreamSynchronize).
    pub sync: f64,
    /// CPU seconds to post one MPI receive or send.
    pub post: f64,
    /// CPU seconds to enqueue one stream-ordered operation (kernel, send or wait on a stream).
    pub enqueue: f64,
    /// GPU front-end seconds to trigger a queued send or pass a stream wait.
    pub trigger: f64,
    /// Shortest time of a kernel on the GPU (grid start and drain).
    pub kernel_min: f64,
    /// Grid points per second a compute kernel updates.
    pub point_rate: f64,
    /// Bytes/s of the pack and unpack kernels for large blocks, and each block's extra bytes.
    pub pack_bw: f64,
    pub pack_block: f64,
    /// One message's latency on the network and the NIC's bandwidth (it sends one at a time).
    pub net_latency: f64,
    pub net_bw: f64,
    /// Width of the boundary strips computed apart from the interior, and of the halo sent.
    pub boundary: u64,
    pub ghost: u64,
    pub value_bytes: u64,
}

impl Default for StencilParams {
    fn default() -> Self {
        StencilParams::read(&Values::defaults(PARAMS))
    }
}

/// Grid widths and value sizes: whole numbers from 1 to 2^20.
const GRID: Kind = Kind::Count { min: 1, max: 1 << 20 };

pub const PARAMS: &[Param] = &[
    Param::new("launch", Kind::Time, "5us", "CPU time to launch a kernel until it can run"),
    Param::new("sync", Kind::Time, "5us", "stream synchronisation: last kernel's end until the host knows"),
    Param::new("post", Kind::Time, "1us", "CPU time to post one MPI receive or send"),
    Param::new("enqueue", Kind::Time, "2us", "CPU time to enqueue one stream-ordered operation"),
    Param::new("trigger", Kind::Time, "1us", "GPU front-end time to trigger a queued send or pass a stream wait"),
    Param::new("kernel_min", Kind::Time, "2us", "shortest GPU time of a kernel"),
    Param::new("point_rate", Kind::POSITIVE, "12e9", "grid points a compute kernel updates per second"),
    Param::new("pack_bw", Kind::Bandwidth, "100GB/s", "pack/unpack kernel throughput for large blocks"),
    Param::new("pack_block", Kind::Bytes { min: 0 }, "32B", "extra bytes each block costs a pack/unpack kernel"),
    Param::new("net_latency", Kind::Time, "1.5us", "one message's network latency (GPUDirect RDMA)"),
    Param::new("net_bw", Kind::Bandwidth, "6GB/s", "NIC bandwidth; it sends one message at a time"),
    Param::new("boundary", GRID, "16", "width of the boundary strips, grid points"),
    Param::new("ghost", GRID, "1", "halo width sent to each neighbour, grid points"),
    Param::new("value_bytes", GRID, "8", "bytes per grid value"),
];

impl StencilParams {
    pub fn parse(pairs: &[(String, String)]) -> Result<StencilParams> {
        Ok(StencilParams::read(&Values::flags("the stencil", PARAMS, pairs)?))
    }

    fn read(v: &Values) -> StencilParams {
        StencilParams {
            launch: v.secs("launch"),
            sync: v.secs("sync"),
            post: v.secs("post"),
            enqueue: v.secs("enqueue"),
            trigger: v.secs("trigger"),
            kernel_min: v.secs("kernel_min"),
            point_rate: v.real("point_rate"),
            pack_bw: v.bytes_per_sec("pack_bw"),
            pack_block: v.bytes("pack_block") as f64,
            net_latency: v.secs("net_latency"),
            net_bw: v.bytes_per_sec("net_bw"),
            boundary: v.count("boundary"),
            ghost: v.count("ghost"),
            value_bytes: v.count("value_bytes"),
        }
    }

    pub fn to_map(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for (k, v) in [
            ("launch", self.launch),
            ("sync", self.sync),
            ("post", self.post),
            ("enqueue", self.enqueue),
            ("trigger", self.trigger),
            ("kernel_min", self.kernel_min),
            ("net_latency", self.net_latency),
        ] {
            m.insert(k.to_string(), Time::from_secs(v).to_string());
        }
        m.insert("point_rate".into(), format!("{:e}", self.point_rate));
        for (k, v) in [("pack_bw", self.pack_bw), ("net_bw", self.net_bw)] {
            m.insert(k.to_string(), Bandwidth(v).to_string());
        }
        m.insert("pack_block".into(), Bytes(self.pack_block as u64).to_string());
        for (k, v) in [("boundary", self.boundary), ("ghost", self.ghost), ("value_bytes", self.value_bytes)] {
            m.insert(k.to_string(), v.to_string());
        }
        m
    }
}

/// One iteration at one local lattice size, both ways, with the kernel mix.
#[derive(Serialize, Debug, Clone)]
pub struct Iteration {
    pub lattice: u64,
    pub cpu_posted_s: f64,
    pub stream_ordered_s: f64,
    /// 1 - stream_ordered / cpu_posted.
    pub gain: f64,
    /// GPU seconds of each kernel (interior, boundary_x, boundary_y, pack_x, pack_y, unpack_x, unpack_y).
    pub kernels: BTreeMap<String, f64>,
    /// Seconds the CPU spends launching, synchronising and posting in a CPU-posted iteration.
    pub cpu_overhead_s: f64,
    /// Seconds the stream-ordered CPU spends enqueueing one iteration.
    pub enqueue_s: f64,
    /// Bytes of one halo message along x and along y.
    pub message_bytes: [u64; 2],
    /// Whether the stream-ordered iteration is bound by the CPU's enqueueing.
    pub cpu_bound: bool,
}

/// One iteration of a local `lattice`² domain with a neighbour on every side (4 messages).
pub fn iteration(lattice: u64, p: &StencilParams) -> Iteration {
    let l = lattice as f64;
    let (b, g, vb) = (p.boundary.min(lattice / 2) as f64, p.ghost as f64, p.value_bytes as f64);
    let compute = |points: f64| p.kernel_min + points / p.point_rate;
    // A halo along x is a column: one block of `ghost` values per row; along y, one block.
    let pack = |bytes: f64, blocks: f64| p.kernel_min + (bytes + blocks * p.pack_block) / p.pack_bw;
    let (msg_x, msg_y) = (g * l * vb, g * l * vb);
    let interior = compute((l - 2.0 * b).max(0.0).powi(2));
    let (bnd_x, bnd_y) = (compute(2.0 * b * (l - 2.0 * b).max(0.0)), compute(2.0 * b * l));
    let (pack_x, pack_y) = (pack(2.0 * msg_x, 2.0 * l), pack(2.0 * msg_y, 2.0));
    let (unpack_x, unpack_y) = (pack_x, pack_y);
    let wire = |bytes: f64| bytes / p.net_bw;

    // CPU-posted: the CPU walks the loop; the GPU runs each kernel once it is launched.
    let mut cpu = p.launch; // interior launched first, on its own stream
    let interior_end = cpu + interior;
    let mut nic_free = 0.0f64;
    let mut arrive = 0.0f64;
    for (bnd, pk, msg) in [(bnd_x, pack_x, msg_x), (bnd_y, pack_y, msg_y)] {
        cpu += 2.0 * p.post + p.launch;
        let gpu_done = cpu + bnd + pk; // pack is launched while boundary runs
        cpu = (cpu + p.launch).max(gpu_done) + p.sync;
        for _ in 0..2 {
            cpu += p.post;
            let start = cpu.max(nic_free);
            nic_free = start + wire(msg);
            arrive = arrive.max(nic_free + p.net_latency);
        }
    }
    cpu = cpu.max(arrive) + p.launch;
    let unpacked = cpu + unpack_x + unpack_y;
    let cpu_posted = (cpu + p.launch).max(unpacked).max(interior_end) + p.sync;
    let cpu_overhead = 4.0 * p.launch + 3.0 * p.sync + 8.0 * p.post;

    // Stream-ordered: the GPU triggers sends when packs finish and waits for receives itself.
    let mut gpu = 0.0f64;
    let (mut nic_free, mut arrive) = (0.0f64, 0.0f64);
    for (bnd, pk, msg) in [(bnd_x, pack_x, msg_x), (bnd_y, pack_y, msg_y)] {
        gpu += bnd + pk + p.trigger;
        for _ in 0..2 {
            let start = gpu.max(nic_free);
            nic_free = start + wire(msg);
            arrive = arrive.max(nic_free + p.net_latency);
        }
    }
    let gpu_path = arrive.max(gpu) + p.trigger + unpack_x + unpack_y;
    // Operations enqueued per iteration: 7 kernels, 4 receives, 4 sends, 1 stream wait.
    let enqueue = 16.0 * p.enqueue;
    let gpu_iter = gpu_path.max(interior);
    let stream_ordered = gpu_iter.max(enqueue);

    let kernels = [
        ("interior", interior),
        ("boundary_x", bnd_x),
        ("boundary_y", bnd_y),
        ("pack_x", pack_x),
        ("pack_y", pack_y),
        ("unpack_x", unpack_x),
        ("unpack_y", unpack_y),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Iteration {
        lattice,
        cpu_posted_s: cpu_posted,
        stream_ordered_s: stream_ordered,
        gain: 1.0 - stream_ordered / cpu_posted,
        kernels,
        cpu_overhead_s: cpu_overhead,
        enqueue_s: enqueue,
        message_bytes: [msg_x as u64, msg_y as u64],
        cpu_bound: enqueue > gpu_iter,
    }
}

#[derive(Serialize, Debug)]
pub struct StencilReport {
    pub params: BTreeMap<String, String>,
    pub iterations: Vec<Iteration>,
}

/// Local lattices the weak-scaling sweep may take.
pub const LATTICE: std::ops::RangeInclusive<u64> = 2..=1 << 20;

/// Seed 004's weak-scaling sweep: each lattice in `lattices`, both ways.
pub fn sweep(lattices: &[u64], params: &[(String, String)]) -> Result<StencilReport> {
    let p = StencilParams::parse(params)?;
    if let Some(&l) = lattices.iter().find(|l| !LATTICE.contains(l)) {
        return Err(Error::input("--lattice", l.to_string(), format!("is out of range; give {} to {}", LATTICE.start(), LATTICE.end())));
    }
    if lattices.is_empty() {
        return Err(Error::input("--lattice", "", "is empty; give at least one local lattice size"));
    }
    Ok(StencilReport { params: p.to_map(), iterations: lattices.iter().map(|&l| iteration(l, &p)).collect() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lattices() -> Vec<u64> {
        (3..=13).map(|k| 1u64 << k).collect()
    }

    /// Small domains (CPU-bound) gain much, large ones (interior-bound) little, and past the
    /// point where the interior dominates the gain only falls. Below it the stream-ordered
    /// iteration is bound by the CPU's enqueueing, which does not grow with the lattice, so
    /// the gain may rise slightly there.
    #[test]
    fn the_gain_grows_as_the_domain_shrinks() {
        let r = sweep(&lattices(), &[]).unwrap();
        let gain = |l: u64| r.iterations.iter().find(|i| i.lattice == l).unwrap().gain;
        assert!(gain(8) > 0.2 && gain(8192) < 0.02);
        let small = (3..=8).map(|k| gain(1 << k)).fold(f64::INFINITY, f64::min);
        let large = (10..=13).map(|k| gain(1 << k)).fold(0.0, f64::max);
        assert!(small > 2.0 * large);
        for k in 10..13 {
            assert!(gain(1 << k) >= gain(1 << (k + 1)));
        }
    }

    #[test]
    fn stream_ordered_is_never_slower_and_equal_without_cpu_costs() {
        for l in lattices() {
            let i = iteration(l, &StencilParams::default());
            assert!(i.stream_ordered_s <= i.cpu_posted_s, "{l}");
        }
        // With free CPU operations and no trigger delay the two coincide up to the order of
        // the kernels: the stream-ordered path is then the GPU's own.
        let free = [("launch", "0s"), ("sync", "0s"), ("post", "0s"), ("enqueue", "0s"), ("trigger", "0s")];
        let pairs: Vec<(String, String)> = free.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let p = StencilParams::parse(&pairs).unwrap();
        for l in lattices() {
            let i = iteration(l, &p);
            assert!((i.cpu_posted_s - i.stream_ordered_s).abs() <= 1e-12 * i.cpu_posted_s, "{l}: {i:?}");
        }
    }

    #[test]
    fn the_1024_domain_is_gpu_bound_and_the_128_one_is_not() {
        let big = iteration(1024, &StencilParams::default());
        let total: f64 = big.kernels.values().sum();
        assert!(big.kernels["interior"] / total > 0.7);
        let small = iteration(128, &StencilParams::default());
        assert!(small.cpu_overhead_s > small.kernels["interior"]);
    }

    #[test]
    fn bad_parameters_name_themselves() {
        let e = sweep(&[64], &[("lunch".into(), "1us".into())]).unwrap_err().to_string();
        assert!(e.contains("lunch") && e.contains("launch"), "{e}");
        let e = sweep(&[0], &[]).unwrap_err().to_string();
        assert!(e.contains("--lattice"), "{e}");
    }
}
