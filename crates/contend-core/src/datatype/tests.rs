use super::*;

fn flat(yaml: &str) -> Flat {
    Datatype::from_text(&format!("type: {yaml}"), "t.yaml").unwrap().flat
}

fn err(yaml: &str) -> String {
    Datatype::from_text(&format!("type: {yaml}"), "t.yaml").unwrap_err().to_string()
}

#[test]
fn contiguous_is_one_block() {
    let f = flat("{contiguous: {count: 10, of: double}}");
    assert_eq!(f.blocks, vec![(0, 80)]);
    assert_eq!((f.lb, f.ub, f.size), (0, 80, 80));
}

#[test]
fn vector_by_hand() {
    // 3 blocks of 2 ints, stride 5 ints: bytes 0-7, 20-27, 40-47; extent 48.
    let f = flat("{vector: {count: 3, blocklength: 2, stride: 5, of: int}}");
    assert_eq!(f.blocks, vec![(0, 8), (20, 8), (40, 8)]);
    assert_eq!((f.lb, f.ub), (0, 48));
    // A stride equal to the block length is contiguous: one merged block.
    assert_eq!(flat("{vector: {count: 4, blocklength: 2, stride: 2, of: int}}").blocks, vec![(0, 32)]);
}

#[test]
fn negative_strides_that_do_not_overlap_go_backwards() {
    let f = flat("{hvector: {count: 3, blocklength: 1, stride_bytes: -16, of: double}}");
    assert_eq!(f.blocks, vec![(0, 8), (-16, 8), (-32, 8)]);
    assert_eq!((f.lb, f.ub), (-32, 8));
}

#[test]
fn indexed_and_indexed_block_by_hand() {
    let f = flat("{indexed: {blocklengths: [1, 3], displacements: [4, 0], of: int}}");
    assert_eq!(f.blocks, vec![(16, 4), (0, 12)]);
    assert_eq!((f.lb, f.ub), (0, 20));
    let f = flat("{indexed_block: {blocklength: 2, displacements: [0, 2, 6], of: double}}");
    assert_eq!(f.blocks, vec![(0, 32), (48, 16)]);
}

#[test]
fn subarray_by_hand_in_both_orders() {
    // 4 x 5 ints, rows 1-2, columns 1-3 (C order): rows of 12 bytes at 24 and 44; extent 80.
    let f = flat("{subarray: {sizes: [4, 5], subsizes: [2, 3], starts: [1, 1], of: int}}");
    assert_eq!(f.blocks, vec![(24, 12), (44, 12)]);
    assert_eq!((f.lb, f.ub), (0, 80));
    // Fortran order: the first dimension is fastest; columns of 2 at 20 and 36 and 52.
    let f = flat("{subarray: {sizes: [4, 5], subsizes: [2, 3], starts: [1, 1], order: fortran, of: int}}");
    assert_eq!(f.blocks, vec![(20, 8), (36, 8), (52, 8)]);
}

#[test]
fn struct_and_nesting_by_hand() {
    let f = flat("{struct: {blocklengths: [2, 1], displacements_bytes: [0, 16], types: [int, {vector: {count: 2, blocklength: 1, stride: 2, of: int}}]}}");
    assert_eq!(f.blocks, vec![(0, 8), (16, 4), (24, 4)]);
    assert_eq!((f.lb, f.ub), (0, 28));
}

#[test]
fn presets_have_the_digests_shapes() {
    let milc = Datatype::load("milc-zdown").unwrap().stats;
    assert_eq!((milc.size_bytes, milc.blocks, milc.min_block_bytes, milc.max_block_bytes), (98_304, 32, 3_072, 3_072));
    let col = Datatype::load("jacobi-column").unwrap().stats;
    assert_eq!((col.size_bytes, col.blocks, col.max_block_bytes), (4096 * 8, 4096, 8));
    let row = Datatype::load("jacobi-row").unwrap().stats;
    assert_eq!((row.blocks, row.size_bytes), (1, 32_768));
    let ew = Datatype::load("cosmo-halo-ew").unwrap().stats;
    assert_eq!((ew.size_bytes, ew.blocks, ew.max_block_bytes), (245_760, 20_480, 12));
    let ns = Datatype::load("cosmo-halo-ns").unwrap().stats;
    assert_eq!((ns.size_bytes, ns.blocks, ns.max_block_bytes), (245_760, 240, 1_024));
    let wrf = Datatype::load("wrf-halo").unwrap().stats;
    assert_eq!((wrf.size_bytes, wrf.blocks), ((64 * 32 * 3 + 64 * 3) * 4, 64 * 32 + 64));
}

#[test]
fn a_count_of_instances_merges_where_they_touch() {
    let s = Datatype::load("jacobi-row").unwrap().stats;
    assert_eq!(s.message(3).blocks, 1);
    // zdown's last block ends at its upper bound and its first starts at its lower bound, so
    // consecutive instances touch: 3 x 32 blocks less 2 joins.
    let s = Datatype::load("milc-zdown").unwrap().stats;
    assert_eq!(s.message(3).blocks, 94);
    assert_eq!(s.message(3).bytes, 3 * 98_304);
}

#[test]
fn histogram_counts_every_block() {
    let s = Datatype::from_text("type: {indexed: {blocklengths: [1, 3, 8], displacements: [0, 2, 10], of: byte}}", "t").unwrap().stats;
    let blocks: u64 = s.histogram.iter().map(|b| b.blocks).sum();
    let bytes: u64 = s.histogram.iter().map(|b| b.bytes).sum();
    assert_eq!((blocks, bytes), (3, 12));
    assert_eq!(s.histogram.iter().map(|b| b.from_bytes).collect::<Vec<_>>(), vec![1, 2, 8]);
}

#[test]
fn mistakes_get_one_line_naming_the_field() {
    let cases = [
        ("{hvector: {count: 3, blocklength: 2, stride_bytes: -8, of: double}}", "type.hvector.stride_bytes: negative stride -8 overlaps"),
        ("{vector: {count: 3, blocklength: 2, stride: 1, of: double}}", "type.vector.stride: stride 1 overlaps"),
        ("{subarray: {sizes: [4, 5], subsizes: [2, 3], starts: [3, 1], of: int}}", "type.subarray.subsizes[0]: starts 3 + subsizes 2 is outside"),
        ("{struct: {blocklengths: [1, 1], displacements_bytes: [0], types: [int, int]}}", "type.struct: blocklengths, displacements_bytes and types differ"),
        ("{indexed: {blocklengths: [2, 2], displacements: [0, 1], of: int}}", "type.indexed: places two blocks on byte 4"),
        ("{contiguous: {count: 0, of: int}}", "holds no bytes"),
        ("{vector: {count: 2, of: int}}", "missing field"),
        ("{colour: red}", "unknown variant"),
    ];
    for (yaml, needle) in cases {
        let e = err(yaml);
        assert!(e.starts_with("t.yaml: "), "{e}");
        assert!(e.contains(needle), "{needle}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn more_blocks_of_the_same_bytes_never_pack_faster() {
    let k = KernelParams::default();
    let mut last = 0.0;
    for blocks in [1u64, 16, 256, 4096, 65536, 1 << 20] {
        let m = Message { count: 1, bytes: 1 << 20, blocks, mean_block_bytes: (1 << 20) as f64 / blocks as f64 };
        let (p, u) = (k.pack_s(&m), k.unpack_s(&m));
        assert!(p + u >= last, "{blocks}");
        last = p + u;
        let zc = k.load_store_bps(&m, PathClass::Nvlink, 50e9);
        assert!(zc <= 0.8 * 50e9 + 1e-3);
    }
}

#[test]
fn types_past_2_to_63_bytes_are_refused_not_wrapped() {
    // 2^40 copies of 2^40 doubles: 2^83 bytes. Wrapped, this was a negative extent in "1 blocks".
    let e = err("{contiguous: {count: 1099511627776, of: {contiguous: {count: 1099511627776, of: double}}}}");
    assert!(e.contains("type.contiguous") && e.contains("2^63"), "{e}");
    let e = err("{vector: {count: 2, blocklength: 1, stride: 4611686018427387904, of: double}}");
    assert!(e.contains("stride") && e.contains("2^63"), "{e}");
    let e = err("{indexed_block: {blocklength: 1, displacements: [0, 4611686018427387904], of: double}}");
    assert!(e.contains("2^63"), "{e}");
    let e = err("{subarray: {sizes: [4294967296, 4294967296], subsizes: [1, 1], starts: [0, 0], of: double}}");
    assert!(e.contains("2^63"), "{e}");
    // Just inside the bound (2^30 × 2^29 doubles: 2^62 bytes), the extent is right and the type one block.
    let f = flat("{contiguous: {count: 1073741824, of: {contiguous: {count: 536870912, of: double}}}}");
    assert_eq!((f.lb, f.ub, f.size, f.blocks.len()), (0, 1 << 62, 1 << 62, 1));
}
