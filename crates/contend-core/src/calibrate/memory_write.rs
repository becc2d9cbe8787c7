//! Host memory's write efficiency from nvbandwidth's tests of every GPU writing to the host at
//! once (`all_to_host_memcpy_ce`): the one measurement in which writes alone can reach a host
//! memory's bandwidth. On the public HGX H800 output eight GPUs write 44.8 GB/s each, 358.7
//! GB/s in all, where each alone writes 55.2 and reads from the host run at 55.2 all together:
//! the sockets' memories take writes at about 0.58 of their bandwidth. One value for every host
//! memory of the machine, by golden-section search on the tests' squared log errors (each
//! prediction a maxmin run); the bidirectional host tests stay out of it, so that they check it.

use crate::model::maxmin::MaxminParams;
use crate::tools::concurrent::{self, Concurrent, End};
use crate::topology::{DeviceKind, Machine, MachineSpec};
use crate::workload::Access;

/// The tests the fit reads: every copy a GPU's write into host memory.
pub fn tests(all: &[Concurrent]) -> Vec<&Concurrent> {
    all.iter().filter(|c| c.flows.len() > 1 && c.flows.iter().all(|f| matches!((f.src, f.dst, f.access), (End::Gpu(_), End::Host(_), Access::Write)))).collect()
}

/// The write efficiency that fits `tests` best on `spec`, or None where no value below 1 does
/// better than the memory's whole bandwidth (the writes are bound elsewhere, or run at it).
pub fn fit(spec: &MachineSpec, origin: &str, tests: &[&Concurrent], params: &MaxminParams) -> Result<Option<f64>, String> {
    if tests.is_empty() {
        return Ok(None);
    }
    let cost = |w: f64| -> Result<f64, String> {
        let mut s = spec.clone();
        s.devices.iter_mut().filter(|d| d.kind == DeviceKind::HostMemory).for_each(|d| d.write_efficiency = Some(w));
        let m = Machine::from_spec(s, origin).map_err(|e| e.to_string())?;
        let mut sum = 0.0;
        for c in tests {
            let p = concurrent::predict(&m, c, params)?;
            sum += (p / c.gbps).ln().powi(2);
        }
        Ok(sum)
    };
    // Golden-section search on (0.05, 1]: the error falls as w falls until the memory binds at
    // the measured rate, and rises after, so it has one minimum.
    let w = super::golden::golden_min(0.05, 1.0, 1e-4, &cost)?;
    Ok((cost(w)? < cost(1.0)? * (1.0 - 1e-6)).then_some(w))
}
