//! What contend knows of the external benchmarks users run: how each reads its output (for
//! calibration) and what each would print on a machine (prediction). calibrate/ only fits.
//!
//! - p2pBandwidthLatencyTest (CUDA samples): `p2p` predicts its matrices, `p2p_output` reads them;
//! - nvbandwidth: `nvbandwidth` predicts its copy-engine testcases, `nvbandwidth_output` (and
//!   `nvbandwidth_json` for `-j`) reads them;
//! - nccl-tests (NVIDIA/nccl-tests, `<op>_perf`): `nccl_tests` reads its tables and holds its
//!   definitions (bus-bandwidth factors); `crate::nccl` predicts them;
//! - `concurrent`: the flow sets of simultaneous copies both tools measure, and their one runner;
//!   `cells`: the matrix cells both print.

pub mod cells;
pub mod concurrent;
pub mod nccl_tests;
pub mod nvbandwidth;
pub mod nvbandwidth_json;
pub mod nvbandwidth_output;
pub mod p2p;
pub mod p2p_output;
