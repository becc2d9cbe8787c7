use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let t = Instant::now();
    let r = contend_core::api::run(&text, &path, false).unwrap();
    println!("{:.3}s makespan {:.4} ops {}", t.elapsed().as_secs_f64(), r.summary.makespan_s, r.summary.operations);
}
