//! A ring LL/LL128 all-reduce's chunk grain under NCCL 2.18.5 and 2.19.3, checked by hand from the
//! kernel's definition (device/all_reduce.h `runRing`, v2.19.3): a partial loop's chunk is rounded
//! up to `minChunkSize` (threads x the protocol's grain / sizeof(T), LL128's halved), chunk j of
//! channel `bid` sits at (j x channels + bid) x chunk, and what runs past the call's end is empty.

use super::*;

/// Bytes an LL128 transfer of `data` bytes carries: its wire format over LL128's default share of
/// the links (`nccl_eff_ll128`, docs/nccl.md "LL128's rate").
fn ll128_wire(data: u64) -> u64 {
    let e = constants::Constants::default().efficiency[Proto::Ll128 as usize];
    (lower::wire(data, Proto::Ll128) as f64 / e).ceil() as u64
}

/// dgx-a100 as one communicator under `version`.
fn a100(version: versions::Version) -> Comm {
    let m = crate::topology::Machine::load("dgx-a100").unwrap();
    let mut c = Comm::new(&m, &[m.gpus()], None).unwrap();
    c.set_constants(constants::Constants { version, ..Default::default() }).unwrap();
    c
}

#[test]
fn the_grain_is_the_threads_times_the_protocols_grain() {
    use versions::Version::*;
    let c = a100(V2_19);
    // LL: 512 threads x 8 bytes; LL128: 640 threads x 60 bytes (8 words x 120 / 128 data) / 2.
    assert_eq!(tuning::ring_grain(&c.tuning, Coll::AllReduce, Algo::Ring, Proto::Ll, 1 << 20, 24), 4096);
    assert_eq!(tuning::ring_grain(&c.tuning, Coll::AllReduce, Algo::Ring, Proto::Ll128, 1 << 22, 24), 19200);
    // Not restated, so split evenly: ring Simple and trees (2.18/2.19 round them too, by grains of
    // their own: `runRing`'s (threads - 32) x 8 B, `runTreeSplit`'s `minChunkSize`), other
    // collectives, and 2.20/2.21, whose host aligns each channel's count and the last chunk
    // (enqueue.cc `computeCollAlignCount`); 2.30.7 does split evenly (`runRing` aligns to 16 B).
    assert_eq!(tuning::ring_grain(&c.tuning, Coll::AllReduce, Algo::Ring, Proto::Simple, 1 << 22, 24), 0);
    assert_eq!(tuning::ring_grain(&c.tuning, Coll::AllReduce, Algo::Tree, Proto::Ll128, 1 << 22, 24), 0);
    assert_eq!(tuning::ring_grain(&c.tuning, Coll::AllGather, Algo::Ring, Proto::Ll128, 1 << 22, 24), 0);
    for v in [V2_20, V2_21, V2_30] {
        assert_eq!(tuning::ring_grain(&a100(v).tuning, Coll::AllReduce, Algo::Ring, Proto::Ll128, 1 << 22, 24), 0, "{v:?}");
    }
    assert_eq!(tuning::ring_grain(&a100(V2_18).tuning, Coll::AllReduce, Algo::Ring, Proto::Ll128, 1 << 22, 24), 19200);
    // One channel left with under 8 bytes a thread: NCCL halves the threads while they are a
    // multiple of 128 (640 -> 320, which is not).
    assert_eq!(tuning::threads_for(&c.tuning, Algo::Ring, Proto::Ll128, 2048, 1), 320);
    assert_eq!(tuning::threads_for(&c.tuning, Algo::Ring, Proto::Ll128, 2048, 2), 640);
    // LL: 512 -> 256 -> 128 -> 64, then NCCL's floor of three warps (enqueue.cc, after the loop).
    assert_eq!(tuning::threads_for(&c.tuning, Algo::Ring, Proto::Ll, 8, 1), 96);
    assert_eq!(tuning::ring_grain(&c.tuning, Coll::AllReduce, Algo::Ring, Proto::Ll, 8, 1), 96 * 8);
}

/// 4 MiB of LL128 on 24 channels of 8 ranks: 4194304 / (24 x 8 x 19200) = 1.14, so the chunk is
/// 2 x 19200 = 38400 bytes (even: 21845). 4194304 / 38400 = 109.2: slots 0-108 whole, slot 109
/// holds 4194304 - 109 x 38400 = 8704 bytes, the rest nothing. Slot j x 24 + bid: chunks 0-3
/// whole on every channel, chunk 4 whole on channels 0-12, 8704 bytes on channel 13, empty on
/// 14-23; chunks 5-7 empty. A ring all-reduce step k of rank p carries chunk p - k - 1 mod 8, so
/// over 14 steps each chunk index is carried 14 times a channel.
#[test]
fn a_small_ll128_all_reduce_fills_the_first_chunks_whole() {
    let c = a100(versions::Version::V2_19);
    let call = c.call(Coll::AllReduce, Algo::Ring, Proto::Ll128, 1 << 22, 0);
    assert_eq!((call.ring_grain, call.channels()), (19200, 24));
    // Its channels differ, so none merge.
    assert_eq!(call.clone().merged().copies, 1);
    let (t, ch) = lower::lower(&call);
    assert_eq!(t.len(), 24 * 8 * 14);
    let count = |data: u64| t.iter().filter(|x| x.size == ll128_wire(data)).count();
    assert_eq!(count(38400), 14 * (24 * 4 + 13));
    assert_eq!(count(8704), 14);
    // An empty step still runs (its handshake): a transfer of one byte.
    assert_eq!(t.iter().filter(|x| x.size == 1).count(), 14 * (24 * 3 + 10));
    assert!(t.iter().zip(&ch).filter(|(x, _)| x.size == ll128_wire(8704)).all(|(_, &k)| k == 13));
    // 2.30.7: every step carries the even share, 4194304 / 192 rounded up.
    let even = a100(versions::Version::V2_30).call(Coll::AllReduce, Algo::Ring, Proto::Ll128, 1 << 22, 0);
    assert_eq!(even.ring_grain, 0);
    let (t, _) = lower::lower(&even);
    assert!(t.iter().all(|x| x.size == ll128_wire(21846)), "{:?}", t[0].size);
}

/// More than one loop (LL128: 24 x 8 x 576000 bytes = 105.5 MiB a loop) keeps the even split: its
/// full loops are NCCL's whole chunks, and only its last loop would be rounded (not restated).
#[test]
fn a_call_of_several_loops_keeps_the_even_split() {
    let c = a100(versions::Version::V2_19);
    let call = c.call(Coll::AllReduce, Algo::Ring, Proto::Ll128, 1 << 27, 0);
    let (t, _) = lower::lower(&call);
    assert!(t.iter().all(|x| x.size > 1));
}
