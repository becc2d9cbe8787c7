use contend_core::api::{self, GenerateRequest};
use contend_core::report::Detail;
use contend_core::topology::Machine;
fn main() {
    let text =
        contend_core::topology::preset_text("dragonfly-2048x1").unwrap().replace("routing: par, nic_scheduling: fcfs", "routing: ecmp, nic_scheduling: rr");
    let m = Machine::from_text(&text, "x").unwrap();
    let w = api::generate(
        &m,
        &GenerateRequest { pattern: "random".into(), size: "64KiB".into(), count: 4000, seed: 1, gap: Some("5ns".into()), ..Default::default() },
    )
    .unwrap();
    let t = std::time::Instant::now();
    let r = api::simulate(&m, &w, "x", "maxmin", &[], Detail::default()).unwrap();
    println!("{:.2}s makespan {}", t.elapsed().as_secs_f64(), r.summary.makespan_s);
}
