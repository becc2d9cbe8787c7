use super::*;

fn check_text(text: &str) -> Result<()> {
    check(&ScenarioSpec::from_text(text, "s.yaml")?, "s.yaml", &Session::default())
}

fn message(text: &str) -> String {
    check_text(text).unwrap_err().to_string()
}

const JOBS: &str = "workload:\n  jobs:\n    - {app: kripke, ranks: 32}\n";

#[test]
fn a_good_scenario_passes_the_check_without_running() {
    check_text(&format!("cluster: fat-tree-512x4\nbandwidth_scale: 0.0625\nnic_scheduling: rr-4\nmodel: packet\n{JOBS}")).unwrap();
    check_text("cluster: dragonfly-256x8\nworkload: {mix: {seed: 3}}\n").unwrap();
}

#[test]
fn the_check_names_the_field_of_each_mistake() {
    assert!(message(&format!("cluster: fat-tree-512x4\nnic_scheduling: rr-x\n{JOBS}")).contains("s.yaml: nic_scheduling:"));
    assert!(message(&format!("cluster: fat-tree-512x4\nbandwidth_scale: 0\n{JOBS}")).contains("s.yaml: bandwidth_scale:"));
    // x/16 .. 16x, as the README says: 400 (the round-17 tester's) and just past either end.
    for scale in ["400", "16.5", "0.06"] {
        let e = message(&format!("cluster: fat-tree-512x4\nbandwidth_scale: {scale}\n{JOBS}"));
        assert!(e.contains("s.yaml: bandwidth_scale:") && e.contains("[0.0625, 16]") && !e.contains('\n'), "{e}");
    }
    check_text(&format!("cluster: fat-tree-512x4\nbandwidth_scale: 16\n{JOBS}")).unwrap();
    assert!(message(&format!("cluster: fat-tree-512x4\nmodel: fluid\n{JOBS}")).contains("s.yaml: model: \"fluid\" is not a model"));
    assert!(message(&format!("cluster: fat-tree-512x4\nparams: {{quantom: 1us}}\n{JOBS}")).contains("s.yaml: params.quantom: is not a parameter of maxmin"));
    assert!(message("cluster: fat-tree-512x4\nworkload:\n  jobs:\n    - {app: kripke, ranks: 4096}\n").contains("needs 4096 ranks"));
    assert!(message(&format!("cluster: no-such-cluster\n{JOBS}")).contains("no-such-cluster"));
}

#[test]
fn a_mix_on_a_machine_smaller_than_seed_003s_smallest_job_is_refused_by_the_check() {
    // dgx-a100 has 8 GPUs; seed 003's jobs have 32 to 512 ranks, so the mix drew no job and the
    // check passed a scenario whose run then failed ("no job has an operation").
    for mix in ["{seed: 1}", "{seed: 1, index: 3}"] {
        let e = message(&format!("cluster: dgx-a100\nworkload: {{mix: {mix}}}\n"));
        assert!(e.contains("s.yaml: workload.mix: dgx-a100 has 8 GPUs") && e.contains("32 ranks") && !e.contains('\n'), "{e}");
    }
}
