//! What a simulation reports, in columns: a summary, a row per transfer and per loaded link,
//! and, only when asked for, every phase's rates and link loads (whose size grows with the
//! number of transfers squared). Everything is computed here, so that every skin shows the
//! same numbers.

use crate::error::Result;
use crate::flow::FlowTable;
use crate::sim::Outcome;
use crate::topology::Machine;
use crate::workload::{Workload, WorkloadSpec};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// Which optional parts a report carries.
#[derive(Clone, Copy, Debug, Default)]
pub struct Detail {
    /// Every phase's rates and link loads (`--phases`; pictures and traces need them).
    pub phases: bool,
    /// Every NIC's queue over time (`--nics`; traces of clusters show it).
    pub nics: bool,
}

#[derive(Serialize, JsonSchema, Debug)]
pub struct Report {
    pub machine: String,
    pub model: String,
    /// Parameters in force, defaults included.
    pub params: BTreeMap<String, String>,
    pub summary: Summary,
    pub transfers: TransferTable,
    /// Links that carried bytes.
    pub links: LinkTable,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<PhaseTable>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nics: Option<NicTable>,
    /// Transfers sent by a datatype method: the decision and every method's estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub methods: Option<MethodTable>,
}

/// One row per transfer sent by a datatype method. Estimates are each method's time alone on
/// the path (null where the pair does not allow it); the simulated time, under contention, is
/// the transfer table's.
#[derive(Serialize, JsonSchema, Debug, Default)]
pub struct MethodTable {
    /// Row of the transfer table.
    pub transfer: Vec<u32>,
    pub blocks: Vec<u64>,
    pub asked: Vec<String>,
    pub chosen: Vec<String>,
    /// Seconds the next best method would have taken more, alone on the path.
    pub margin_s: Vec<f64>,
    pub pack_s: Vec<Option<f64>>,
    pub zero_copy_s: Vec<Option<f64>>,
    pub staged_s: Vec<Option<f64>>,
    /// Kernels of the chosen method before the first byte and after the last, seconds.
    pub before_s: Vec<f64>,
    pub after_s: Vec<f64>,
}

fn method_table(w: &Workload, flows: &FlowTable) -> Option<MethodTable> {
    use crate::datatype::Method;
    let mut t = MethodTable::default();
    for (i, d) in &flows.decisions {
        let i = *i as usize;
        let est = |m: Method| d.estimates.iter().find(|e| e.method == m).and_then(|e| e.total_s);
        let mine = d.estimates.iter().find(|e| e.method == d.chosen).expect("the chosen method has an estimate");
        t.transfer.push(i as u32);
        t.blocks.push(w.transfers[i].layout.as_ref().map_or(1, |l| l.blocks));
        t.asked.push(d.asked.name().into());
        t.chosen.push(d.chosen.name().into());
        t.margin_s.push(d.margin_s);
        t.pack_s.push(est(Method::Pack));
        t.zero_copy_s.push(est(Method::ZeroCopy));
        t.staged_s.push(est(Method::Staged));
        t.before_s.push(mine.before_s);
        t.after_s.push(mine.after_s);
    }
    (!t.transfer.is_empty()).then_some(t)
}

/// Every NIC that injected messages, and the messages at it (waiting there or on their way
/// through the network) after every change: NIC k's samples are
/// `time_s[offset[k]..offset[k+1]]` with `queued` alongside.
#[derive(Serialize, JsonSchema, Debug, Default)]
pub struct NicTable {
    pub name: Vec<String>,
    /// How the NICs packetise: fcfs, rr or rr-N.
    pub scheduling: String,
    pub offset: Vec<u32>,
    pub time_s: Vec<f64>,
    pub queued: Vec<u32>,
    /// The most messages at each NIC at once.
    pub peak: Vec<u32>,
}

#[derive(Serialize, JsonSchema, Debug)]
pub struct Summary {
    /// First issue to last finish, seconds (the first issue is at 0 s or later).
    pub makespan_s: f64,
    pub transfers: usize,
    /// A sum of u64 sizes: u128, so that it never wraps.
    pub bytes: u128,
    /// Bytes each device sent and received.
    pub devices: DeviceTable,
}

#[derive(Serialize, JsonSchema, Debug, Default)]
pub struct DeviceTable {
    pub name: Vec<String>,
    pub sent_bytes: Vec<u128>,
    pub received_bytes: Vec<u128>,
}

/// One entry per transfer in every column, in the order of the transfers file.
#[derive(Serialize, JsonSchema, Debug, Default)]
pub struct TransferTable {
    pub name: Vec<String>,
    #[schemars(with = "Vec<String>")]
    pub src: DeviceNames,
    #[schemars(with = "Vec<String>")]
    pub dst: DeviceNames,
    pub size_bytes: Vec<u64>,
    /// When the transfer was issued (its start and dependencies allowing), seconds.
    pub start_s: Vec<f64>,
    pub finish_s: Vec<f64>,
    pub duration_s: Vec<f64>,
    /// size / duration, bytes/s.
    pub bandwidth_bps: Vec<f64>,
}

/// A column of device names, held as each row's device and the devices' names: 100,000
/// transfers between 16 GPUs keep 16 strings, not 200,000 copies (making and freeing them was
/// 2.5% of `contend simulate --json`'s instructions). Written as the list of names it stands for.
#[derive(Debug, Default)]
pub struct DeviceNames {
    pub names: Vec<String>,
    pub device: Vec<u32>,
}

impl DeviceNames {
    pub fn get(&self, row: usize) -> &str {
        &self[row]
    }
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.device.iter().map(|&d| self.names[d as usize].as_str())
    }
    pub fn len(&self) -> usize {
        self.device.len()
    }
    pub fn is_empty(&self) -> bool {
        self.device.is_empty()
    }
}

/// `names[row]`: the row's device name, as a column of Strings reads.
impl std::ops::Index<usize> for DeviceNames {
    type Output = String;
    fn index(&self, row: usize) -> &String {
        &self.names[self.device[row] as usize]
    }
}

impl Serialize for DeviceNames {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// One entry per directed link (a host memory's one shared resource) that carried bytes.
#[derive(Serialize, JsonSchema, Debug, Default)]
pub struct LinkTable {
    pub name: Vec<String>,
    /// Bytes/s the model lets through it.
    pub capacity_bps: Vec<f64>,
    /// Bytes that crossed it (a staged copy crosses its host memory twice); under `packet`, the
    /// packets' bytes where they went (per-packet routing parts a message over several links).
    pub bytes: Vec<f64>,
    /// Seconds during which at least one transfer moved bytes through it; under `packet`, the
    /// seconds it spent sending packets (a fluid rate below capacity has no such gaps).
    pub busy_s: Vec<f64>,
    /// The highest load over capacity seen, in [0, 1].
    pub peak_utilisation: Vec<f64>,
}

/// Phases in compressed rows: phase p's moving transfers are `transfer[offset[p]..offset[p+1]]`
/// with `rate_bps` alongside, its loaded links `link[link_offset[p]..link_offset[p+1]]` (rows
/// of the link table) with `load_bps` alongside.
#[derive(Serialize, JsonSchema, Debug, Default)]
pub struct PhaseTable {
    pub start_s: Vec<f64>,
    pub end_s: Vec<f64>,
    pub offset: Vec<u32>,
    pub transfer: Vec<u32>,
    pub rate_bps: Vec<f64>,
    /// rate over the capacity of the transfer's narrowest link: its share of the bandwidth
    /// (sc16's congestion factor).
    pub share: Vec<f64>,
    pub link_offset: Vec<u32>,
    pub link: Vec<u32>,
    pub load_bps: Vec<f64>,
}

/// Resolve the transfers, prepare the named model, run the executor and report: what
/// `contend simulate` does, and what `compare` does once per model.
pub fn simulate(m: &Machine, spec: &WorkloadSpec, origin: &str, model: &str, params: &[(String, String)], detail: Detail) -> Result<Report> {
    let entry = crate::model::registry::get(model)?;
    let mut w = Workload::resolve(spec, m, origin)?;
    let prepared = entry.prepare(m, &w, params)?;
    let o = crate::sim::run_prepared(&w, prepared.as_ref(), detail.phases)?;
    // The workload ends here: its names move into the report instead of being copied (a String
    // made and one freed per transfer, about 15 M instructions on 100,000 transfers).
    let names = w.transfers.iter_mut().map(|x| std::mem::take(&mut x.name)).collect();
    Ok(build_named(m, &w, names, entry.name, prepared.params(), prepared.flows(), &o, detail))
}

pub fn build(m: &Machine, w: &Workload, model: &str, params: BTreeMap<String, String>, flows: &FlowTable, o: &Outcome, detail: Detail) -> Report {
    let names = w.transfers.iter().map(|x| x.name.clone()).collect();
    build_named(m, w, names, model, params, flows, o, detail)
}

/// `build` with the transfers' names given, one per transfer in order (the workload's own are
/// not read).
#[allow(clippy::too_many_arguments)]
fn build_named(
    m: &Machine,
    w: &Workload,
    names: Vec<String>,
    model: &str,
    params: BTreeMap<String, String>,
    flows: &FlowTable,
    o: &Outcome,
    detail: Detail,
) -> Report {
    let n = w.transfers.len();
    debug_assert_eq!(names.len(), n);
    let device_names: Vec<String> = m.devices.iter().map(|d| d.name.clone()).collect();
    let mut t = TransferTable {
        name: names,
        src: DeviceNames { names: device_names.clone(), device: Vec::with_capacity(n) },
        dst: DeviceNames { names: device_names, device: Vec::with_capacity(n) },
        ..Default::default()
    };
    // Bytes sent and received per device, indexed by device (a map's look-up per transfer, twice,
    // cost more than the rest of the row); `seen`: the devices that take part, listed in order.
    let mut sent = vec![(0u128, 0u128); m.devices.len()];
    let mut seen = vec![false; m.devices.len()];
    for (i, x) in w.transfers.iter().enumerate() {
        let d = o.finish[i] - o.start[i];
        t.src.device.push(x.src as u32);
        t.dst.device.push(x.dst as u32);
        t.size_bytes.push(x.size);
        t.start_s.push(o.start[i]);
        t.finish_s.push(o.finish[i]);
        t.duration_s.push(d);
        t.bandwidth_bps.push(if d > 0.0 { x.size as f64 / d } else { f64::INFINITY });
        sent[x.src].0 += u128::from(x.size);
        sent[x.dst].1 += u128::from(x.size);
        (seen[x.src], seen[x.dst]) = (true, true);
    }
    let mut devices = DeviceTable::default();
    for (d, (s, r)) in sent.into_iter().enumerate().filter(|&(d, _)| seen[d]) {
        devices.name.push(m.devices[d].name.clone());
        devices.sent_bytes.push(s);
        devices.received_bytes.push(r);
    }
    let (links, row) = link_table(w, flows, o);
    let phases = detail.phases.then(|| phase_table(flows, o, &row));
    let nics = detail.nics.then(|| nic_table(flows, o));
    Report {
        machine: m.name.clone(),
        model: model.to_string(),
        params,
        summary: Summary { makespan_s: o.makespan(), transfers: n, bytes: w.transfers.iter().map(|x| u128::from(x.size)).sum(), devices },
        transfers: t,
        links,
        phases,
        nics,
        methods: method_table(w, flows),
    }
}

/// Every link that carried bytes or was busy, and the row each resource of the flow table got
/// in it (`u32::MAX`: none). Linear in the transfers' route lengths, so a run that reports no
/// transfers can still afford it.
pub fn link_table(w: &Workload, flows: &FlowTable, o: &Outcome) -> (LinkTable, Vec<u32>) {
    let bytes = o.carried.clone().unwrap_or_else(|| {
        let mut bytes = vec![0.0; flows.cap.len()];
        for (i, x) in w.transfers.iter().enumerate() {
            for (&(l, _), data) in flows.route(i).iter().zip(flows.route_data(i)) {
                bytes[l as usize] += x.size as f64 * data;
            }
        }
        bytes
    });
    let mut row = vec![u32::MAX; flows.cap.len()];
    let mut links = LinkTable::default();
    // A link busy only with the other direction's overhead (duplex loss, read requests) is
    // listed too, with 0 bytes of data.
    for l in (0..flows.cap.len()).filter(|&l| bytes[l] > 0.0 || o.busy[l] > 0.0) {
        row[l] = links.name.len() as u32;
        links.name.push(flows.name[l].clone());
        links.capacity_bps.push(flows.cap[l]);
        links.bytes.push(bytes[l]);
        links.busy_s.push(o.busy[l]);
        links.peak_utilisation.push(o.peak[l]);
    }
    (links, row)
}

fn nic_table(flows: &FlowTable, o: &Outcome) -> NicTable {
    let mut per: Vec<Vec<(f64, u32)>> = vec![Vec::new(); flows.nics.len()];
    for &(t, q, c) in &o.nic_queue {
        per[q as usize].push((t, c));
    }
    let mut n = NicTable { scheduling: flows.nic_scheduling.to_string(), offset: vec![0], ..Default::default() };
    for (nic, samples) in flows.nics.iter().zip(per) {
        n.name.push(nic.name.clone());
        n.peak.push(samples.iter().map(|s| s.1).max().unwrap_or(0));
        n.time_s.extend(samples.iter().map(|s| s.0));
        n.queued.extend(samples.iter().map(|s| s.1));
        n.offset.push(n.time_s.len() as u32);
    }
    n
}

fn phase_table(flows: &FlowTable, o: &Outcome, row: &[u32]) -> PhaseTable {
    let mut p = PhaseTable { offset: vec![0], link_offset: vec![0], ..Default::default() };
    let mut load = vec![0.0; flows.cap.len()];
    let mut used: Vec<u32> = Vec::new();
    let narrowest: Vec<f64> = (0..flows.len()).map(|i| flows.route(i).iter().map(|&(l, _)| flows.cap[l as usize]).fold(f64::INFINITY, f64::min)).collect();
    for ph in &o.phases {
        p.start_s.push(ph.start);
        p.end_s.push(ph.end);
        for (&i, &r) in ph.active.iter().zip(&ph.rates) {
            p.transfer.push(i as u32);
            p.rate_bps.push(r);
            p.share.push(if narrowest[i].is_finite() { r / narrowest[i] } else { 0.0 });
            for &(l, times) in flows.route(i) {
                if load[l as usize] == 0.0 && r > 0.0 {
                    used.push(l);
                }
                load[l as usize] += r * times;
            }
        }
        used.sort_unstable();
        for l in used.drain(..) {
            p.link.push(row[l as usize]);
            p.load_bps.push(std::mem::take(&mut load[l as usize]));
        }
        p.offset.push(p.transfer.len() as u32);
        p.link_offset.push(p.link.len() as u32);
    }
    p
}

/// A column of a report table as it is held, for skins that hand it on without copying row by
/// row (the binding gives numbers to Arrow as their bytes).
pub enum Column<'a> {
    F64(&'a [f64]),
    U64(&'a [u64]),
    /// Byte totals, which may pass 2^64 (`DeviceTable`).
    U128(&'a [u128]),
    Str(&'a [String]),
    Names(&'a DeviceNames),
}

/// The tables `Report::table` gives column by column.
pub const TABLES: &[&str] = &["transfers", "links", "devices"];

impl Report {
    /// A table's columns in their schema order: transfers, links or devices.
    pub fn table(&self, which: &str) -> crate::error::Result<Vec<(&'static str, Column<'_>)>> {
        use Column::*;
        let t = &self.transfers;
        let l = &self.links;
        let d = &self.summary.devices;
        Ok(match which {
            "transfers" => vec![
                ("name", Str(&t.name)),
                ("src", Names(&t.src)),
                ("dst", Names(&t.dst)),
                ("size_bytes", U64(&t.size_bytes)),
                ("start_s", F64(&t.start_s)),
                ("finish_s", F64(&t.finish_s)),
                ("duration_s", F64(&t.duration_s)),
                ("bandwidth_bps", F64(&t.bandwidth_bps)),
            ],
            "links" => vec![
                ("name", Str(&l.name)),
                ("capacity_bps", F64(&l.capacity_bps)),
                ("bytes", F64(&l.bytes)),
                ("busy_s", F64(&l.busy_s)),
                ("peak_utilisation", F64(&l.peak_utilisation)),
            ],
            "devices" => vec![("name", Str(&d.name)), ("sent_bytes", U128(&d.sent_bytes)), ("received_bytes", U128(&d.received_bytes))],
            _ => return Err(crate::error::Error::input("table", which, format!("is not a report table; use one of {}", TABLES.join(", ")))),
        })
    }

    /// A table as CSV text, a header then one line per row, written in one pass: numbers in
    /// the shortest form that reads back exactly, text quoted where CSV needs it.
    pub fn csv(&self, which: &str) -> crate::error::Result<String> {
        use std::fmt::Write;
        let cols = self.table(which)?;
        let rows = cols.first().map(|(_, c)| c.len()).unwrap_or(0);
        let mut out = String::with_capacity(64 * (rows + 1));
        out.push_str(&cols.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(","));
        out.push('\n');
        for r in 0..rows {
            for (k, (_, c)) in cols.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                match c {
                    Column::F64(v) => write!(out, "{:?}", v[r]).unwrap(),
                    Column::U64(v) => write!(out, "{}", v[r]).unwrap(),
                    Column::U128(v) => write!(out, "{}", v[r]).unwrap(),
                    Column::Str(v) => csv_text(&mut out, &v[r]),
                    Column::Names(v) => csv_text(&mut out, v.get(r)),
                }
            }
            out.push('\n');
        }
        Ok(out)
    }
}

/// Text in a CSV cell: quoted where CSV needs it.
fn csv_text(out: &mut String, text: &str) {
    if text.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

impl Column<'_> {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::U128(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Names(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
