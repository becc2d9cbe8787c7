//! Machine descriptions from what users can dump on a real node: `nvidia-smi topo -m`, NCCL
//! topology XML (NCCL_TOPO_DUMP_FILE) and `sudo lspci -vvv`. No dump fixes every route, bandwidth
//! or switch, so the result is a YAML machine file whose comments list each assumption, for the
//! user to refine.

mod builder;
mod lspci;
mod nccl;
mod smi;
mod xml;

use crate::error::{Error, Result};
use crate::topology::Machine;

pub use builder::Builder;

/// A machine file written from a dump, and the assumptions that went into it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Imported {
    /// The machine description as YAML, assumptions included as comments.
    pub yaml: String,
    pub assumptions: Vec<String>,
    /// "nvidia-smi", "nccl-xml" or "lspci".
    pub format: &'static str,
}

/// NUMA nodes per socket beyond which no CPU goes (AMD NPS4 and Intel SNC4 give 4).
pub const MAX_NUMA_PER_SOCKET: u32 = 8;

/// Read a dump of any kind; `name` names the machine, `origin` the file (for messages);
/// `numa_per_socket` NUMA nodes make one socket (1: each node is a socket, as the dumps show).
pub fn import(text: &str, name: &str, origin: &str, numa_per_socket: i64) -> Result<Imported> {
    if !(1..=i64::from(MAX_NUMA_PER_SOCKET)).contains(&numa_per_socket) {
        return Err(Error::input(
            "--numa-per-socket",
            "",
            format!("{numa_per_socket} is not a count of NUMA nodes per socket; give 1 to {MAX_NUMA_PER_SOCKET} (AMD NPS4 and Intel SNC4: 4)"),
        ));
    }
    let numa_per_socket = numa_per_socket as u32;
    let (builder, format) = if text.trim_start().starts_with('<') {
        (nccl::parse(text, origin, numa_per_socket)?, "nccl-xml")
    } else if lspci::is_dump(text) {
        (lspci::parse_dump(text, origin, numa_per_socket)?, "lspci")
    } else {
        (smi::parse(text, origin, numa_per_socket)?, "nvidia-smi")
    };
    let yaml = builder.to_yaml(name, &format!("imported from {origin} ({format})"));
    // The result must load: a failure here is ours, not the user's.
    Machine::from_text(&yaml, origin).map_err(|e| Error::Runtime(format!("import produced an invalid machine: {e}")))?;
    Ok(Imported { yaml, assumptions: builder.assumptions.clone(), format })
}

#[cfg(test)]
mod tests;
