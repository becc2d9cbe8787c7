//! Machine presets ship as data files compiled into the engine.

const PRESETS: &[(&str, &str)] = &[
    ("cs-storm-socket", include_str!("../../presets/cs-storm-socket.yaml")),
    ("cs-storm", include_str!("../../presets/cs-storm.yaml")),
    ("typical-8gpu", include_str!("../../presets/typical-8gpu.yaml")),
    ("gb5470-2ib", include_str!("../../presets/gb5470-2ib.yaml")),
    ("gb5470-1ib", include_str!("../../presets/gb5470-1ib.yaml")),
    ("dgx1-p100", include_str!("../../presets/dgx1-p100.yaml")),
    ("nvlink-cpu-quad", include_str!("../../presets/nvlink-cpu-quad.yaml")),
    ("dgx-a100", include_str!("../../presets/dgx-a100.yaml")),
    ("hgx-h100", include_str!("../../presets/hgx-h100.yaml")),
    ("hgx-h200", include_str!("../../presets/hgx-h200.yaml")),
    ("hgx-b200", include_str!("../../presets/hgx-b200.yaml")),
    ("pcie-8gpu-ws", include_str!("../../presets/pcie-8gpu-ws.yaml")),
    ("pcie-8gpu-ws-acs", include_str!("../../presets/pcie-8gpu-ws-acs.yaml")),
    ("fat-tree-2048x1", include_str!("../../presets/fat-tree-2048x1.yaml")),
    ("fat-tree-1024x2", include_str!("../../presets/fat-tree-1024x2.yaml")),
    ("fat-tree-512x4", include_str!("../../presets/fat-tree-512x4.yaml")),
    ("fat-tree-256x8", include_str!("../../presets/fat-tree-256x8.yaml")),
    ("dragonfly-2048x1", include_str!("../../presets/dragonfly-2048x1.yaml")),
    ("dragonfly-1024x2", include_str!("../../presets/dragonfly-1024x2.yaml")),
    ("dragonfly-512x4", include_str!("../../presets/dragonfly-512x4.yaml")),
    ("dragonfly-256x8", include_str!("../../presets/dragonfly-256x8.yaml")),
    ("quartz", include_str!("../../presets/quartz.yaml")),
    ("superpod-h100-su", include_str!("../../presets/superpod-h100-su.yaml")),
];

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

pub fn preset_text(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
