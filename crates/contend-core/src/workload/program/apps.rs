//! Application skeletons as program generators: seed 003's six applications and the patterns
//! of the other seeds. Every parameter has a default (docs/workloads.md says why each).

use super::{Collective, Message, Op, Program};
use crate::error::{Error, Result};
use crate::params::{self, At, Kind, Param};
use crate::units::{Bytes, Time};
use std::collections::BTreeMap;

pub struct App {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [Param],
    build: fn(u32, &Values) -> Program,
}

/// A skeleton's message size, compute time, and its own count (AMG's levels, Kripke's sets).
const fn size(default: &'static str, help: &'static str) -> Param {
    Param::new("size", Kind::Bytes { min: 0 }, default, help)
}

const fn compute(default: &'static str, help: &'static str) -> Param {
    Param::new("compute", Kind::Time, default, help)
}

const fn iterations(default: &'static str, help: &'static str) -> Param {
    Param::new("iterations", Kind::Count { min: 1, max: 100_000 }, default, help)
}

const ITER: Param = iterations("10", "outer iterations (time steps)");

pub const APPS: &[App] = &[
    App {
        name: "stencil4d",
        summary: "TraceR's stencil4d: periodic 4D grid; per iteration compute, 8 irecv, 8 blocking sends to the ±x,±y,±z,±t neighbours, waitall, barrier",
        params: &[ITER, size("64000B", "bytes per neighbour message (eager, as MPI sends it at the default limit)"), compute("20us", "compute per iteration")],
        build: stencil4d,
    },
    App {
        name: "subcomm3d",
        summary: "3D grid; per iteration compute, then an alltoall (all messages posted at once) inside the rank's x line, y line and z line sub-communicators",
        params: &[ITER, size("256KiB", "bytes to each peer of an alltoall"), compute("50us", "compute per iteration")],
        build: subcomm3d,
    },
    App {
        name: "kripke",
        summary: "Kripke-like Sn sweep: 3D grid, per iteration 8 octant wavefronts, each cut into direction sets that pipeline (per set: receive the 3 upwind faces, compute, send the 3 downwind faces), each rank taking octants in the order their fronts reach it",
        params: &[
            iterations("3", "outer iterations (each sweeps all 8 octants: 16 ms of compute)"),
            size("64KiB", "bytes per face message of one octant (split over its sets)"),
            compute("2ms", "compute per octant (split over its sets)"),
            Param::new("sets", Kind::Count { min: 1, max: 256 }, "16", "direction sets per octant, which pipeline"),
        ],
        build: kripke,
    },
    App {
        name: "laghos",
        summary: "Laghos-like: 3D grid, per iteration compute, face exchange with the 6 neighbours, allreduce of the time step (8 B)",
        params: &[ITER, size("128KiB", "bytes per face message"), compute("20ms", "compute per iteration")],
        build: laghos,
    },
    App {
        name: "amg",
        summary: "AMG-like V-cycle: 3D grid, per level down and up a 6-neighbour exchange and compute shrinking 8x per level, allreduce per level",
        params: &[ITER, size("512KiB", "bytes per face message on the finest level"), compute("2ms", "compute on the finest level"), Param::new("levels", Kind::Count { min: 1, max: 12 }, "4", "multigrid levels")],
        build: amg,
    },
    App {
        name: "sw4lite",
        summary: "SW4lite-like: 3D grid, per time step compute and a 6-neighbour halo exchange (two ghost layers)",
        params: &[ITER, size("1MiB", "bytes per face message"), compute("3ms", "compute per time step")],
        build: sw4lite,
    },
    App {
        name: "ring",
        summary: "Seed 004's 1D ring exchange: per iteration compute, then send to both ring neighbours",
        params: &[ITER, size("1MiB", "bytes per message"), compute("100us", "compute per iteration")],
        build: ring,
    },
    App {
        name: "jacobi2d",
        summary: "2D Jacobi: non-periodic 2D grid, per iteration compute, 4-neighbour halo exchange, allreduce of the residual (8 B)",
        params: &[ITER, size("32KiB", "bytes per halo message"), compute("200us", "compute per iteration")],
        build: jacobi2d,
    },
    App {
        name: "cosmo",
        summary: "Seed 000's COSMO-style 2D halo: non-periodic 2D grid, per iteration compute and an exchange with the 8 neighbours (faces and corners)",
        params: &[ITER, size("256KiB", "bytes per face message (corners: 1/16 of it)"), compute("500us", "compute per iteration")],
        build: cosmo,
    },
];

pub fn app(name: &str) -> Option<&'static App> {
    APPS.iter().find(|a| a.name == name)
}

/// Parameter values of one app, checked.
pub struct Values {
    iterations: u32,
    size: u64,
    compute: f64,
    /// The skeleton's own count: AMG's levels, Kripke's direction sets per octant.
    count: u32,
}

impl App {
    /// The program of `ranks` ranks with `given` parameters (others at their defaults).
    pub fn program(&self, ranks: u32, given: &BTreeMap<String, String>, origin: &str, field: &str) -> Result<Program> {
        let v = params::Values::parse(self.name, self.params, given.iter().map(|(k, v)| (k.as_str(), v.as_str())), At::File { origin, field })?;
        let has = |name: &str| self.params.iter().any(|p| p.name == name);
        let iterations = v.count("iterations") as u32;
        let size = v.bytes("size");
        let compute = v.secs("compute");
        let count = ["sets", "levels"].into_iter().find(|n| has(n)).map_or(1, |n| v.count(n) as u32);
        if ranks == 0 {
            return Err(Error::input(origin, field, "has 0 ranks; give a job at least one rank"));
        }
        Ok((self.build)(ranks, &Values { iterations, size, compute, count }))
    }
}

/// The most even factorisation of n into k dimensions (largest factors first).
pub fn grid(n: u32, k: usize) -> Vec<u32> {
    let mut dims = vec![1u32; k];
    let mut m = n;
    let mut factors = Vec::new();
    let mut f = 2;
    while m > 1 {
        while m.is_multiple_of(f) {
            factors.push(f);
            m /= f;
        }
        f += 1;
    }
    for f in factors.into_iter().rev() {
        let i = (0..k).min_by_key(|&i| dims[i]).unwrap();
        dims[i] *= f;
    }
    dims
}

fn coords(mut r: u32, dims: &[u32]) -> Vec<u32> {
    dims.iter()
        .map(|&d| {
            let c = r % d;
            r /= d;
            c
        })
        .collect()
}

fn rank_of(c: &[u32], dims: &[u32]) -> u32 {
    c.iter().zip(dims).rev().fold(0, |acc, (&x, &d)| acc * d + x)
}

/// The neighbour of r one step along dimension `d` in direction `dir` (±1), if any.
fn neighbour(r: u32, dims: &[u32], d: usize, dir: i32, periodic: bool) -> Option<u32> {
    let mut c = coords(r, dims);
    let n = dims[d] as i64;
    let x = c[d] as i64 + dir as i64;
    if n < 2 || (!periodic && !(0..n).contains(&x)) {
        return None;
    }
    c[d] = x.rem_euclid(n) as u32;
    let to = rank_of(&c, dims);
    (to != r).then_some(to)
}

fn msg(peer: u32, size: u64, tag: u32) -> Message {
    Message { peer, size: Bytes(size), tag, req: None }
}

/// Exchange with the neighbours along every dimension: irecv all, isend all, waitall. The
/// tag is the direction of the send (2d for +, 2d + 1 for -), so opposite messages never mix.
fn exchange(ops: &mut Vec<Op>, r: u32, dims: &[u32], periodic: bool, size: u64, blocking_sends: bool) {
    for d in 0..dims.len() {
        for (dir, tag) in [(-1, 2 * d as u32), (1, 2 * d as u32 + 1)] {
            if let Some(from) = neighbour(r, dims, d, dir, periodic) {
                ops.push(Op::Irecv(msg(from, size, tag)));
            }
        }
    }
    for d in 0..dims.len() {
        for (dir, tag) in [(1, 2 * d as u32), (-1, 2 * d as u32 + 1)] {
            if let Some(to) = neighbour(r, dims, d, dir, periodic) {
                ops.push(if blocking_sends { Op::Send(msg(to, size, tag)) } else { Op::Isend(msg(to, size, tag)) });
            }
        }
    }
    ops.push(Op::Waitall);
}

fn allreduce8() -> Op {
    Op::Allreduce(Collective { size: Bytes(8), algorithm: None, root: None, group: Vec::new() })
}

fn per_rank(n: u32, f: impl Fn(u32) -> Vec<Op>) -> Program {
    Program { ranks: (0..n).map(f).collect() }
}

fn stencil4d(n: u32, v: &Values) -> Program {
    let dims = grid(n, 4);
    per_rank(n, |r| {
        let mut ops = Vec::new();
        for _ in 0..v.iterations {
            ops.push(Op::Compute(Time::from_secs(v.compute)));
            exchange(&mut ops, r, &dims, true, v.size, true);
            ops.push(Op::Barrier);
        }
        ops
    })
}

fn subcomm3d(n: u32, v: &Values) -> Program {
    let dims = grid(n, 3);
    per_rank(n, |r| {
        let c = coords(r, &dims);
        let lines: Vec<Vec<u32>> = (0..3)
            .map(|d| {
                (0..dims[d])
                    .map(|x| {
                        let mut e = c.clone();
                        e[d] = x;
                        rank_of(&e, &dims)
                    })
                    .collect()
            })
            .collect();
        let mut ops = Vec::new();
        for _ in 0..v.iterations {
            ops.push(Op::Compute(Time::from_secs(v.compute)));
            for line in lines.iter().filter(|l| l.len() > 1) {
                let algorithm = Some(super::Algorithm::Scattered);
                ops.push(Op::Alltoall(Collective { size: Bytes(v.size), algorithm, root: None, group: line.clone() }));
            }
        }
        ops
    })
}

fn kripke(n: u32, v: &Values) -> Program {
    let dims = grid(n, 3);
    per_rank(n, |r| {
        let c = coords(r, &dims);
        let dirs_of = |octant: u32| -> Vec<i32> { (0..3).map(|d| if octant >> d & 1 == 0 { 1 } else { -1 }).collect() };
        // Kripke sweeps all octants at once from a ready queue: a rank takes first the octants
        // whose wavefront reaches it soonest (fewest upwind ranks).
        let depth = |octant: u32| -> u32 { dirs_of(octant).iter().enumerate().map(|(d, &s)| if s > 0 { c[d] } else { dims[d] - 1 - c[d] }).sum() };
        let mut order: Vec<u32> = (0..8).collect();
        order.sort_by_key(|&o| (depth(o), o));
        let mut ops = Vec::new();
        let sets = v.count.max(1);
        let (size, compute) = ((v.size / sets as u64).max(8), v.compute / sets as f64);
        for _ in 0..v.iterations {
            for &octant in &order {
                for _ in 0..sets {
                    let dirs = dirs_of(octant);
                    for (d, &s) in dirs.iter().enumerate() {
                        if let Some(up) = neighbour(r, &dims, d, -s, false) {
                            ops.push(Op::Recv(msg(up, size, octant * 3 + d as u32)));
                        }
                    }
                    ops.push(Op::Compute(Time::from_secs(compute)));
                    for (d, &s) in dirs.iter().enumerate() {
                        if let Some(down) = neighbour(r, &dims, d, s, false) {
                            ops.push(Op::Isend(msg(down, size, octant * 3 + d as u32)));
                        }
                    }
                }
            }
            ops.push(Op::Waitall);
        }
        ops
    })
}

/// Compute, then a halo exchange with the neighbours of a `k`-dimensional grid, then (with
/// `reduce`) an allreduce of 8 B: laghos, sw4lite, jacobi2d and the ring share this shape.
fn halo(n: u32, v: &Values, k: usize, periodic: bool, reduce: bool) -> Program {
    let dims = grid(n, k);
    per_rank(n, |r| {
        let mut ops = Vec::new();
        for _ in 0..v.iterations {
            ops.push(Op::Compute(Time::from_secs(v.compute)));
            exchange(&mut ops, r, &dims, periodic, v.size, false);
            if reduce {
                ops.push(allreduce8());
            }
        }
        ops
    })
}

fn laghos(n: u32, v: &Values) -> Program {
    halo(n, v, 3, false, true)
}

fn sw4lite(n: u32, v: &Values) -> Program {
    halo(n, v, 3, false, false)
}

fn ring(n: u32, v: &Values) -> Program {
    halo(n, v, 1, true, false)
}

fn jacobi2d(n: u32, v: &Values) -> Program {
    halo(n, v, 2, false, true)
}

fn amg(n: u32, v: &Values) -> Program {
    let dims = grid(n, 3);
    per_rank(n, |r| {
        let mut ops = Vec::new();
        for _ in 0..v.iterations {
            let levels: Vec<u32> = (0..v.count).chain((0..v.count).rev()).collect();
            for l in levels {
                let shrink = 8f64.powi(l as i32);
                ops.push(Op::Compute(Time::from_secs(v.compute / shrink)));
                exchange(&mut ops, r, &dims, false, ((v.size as f64 / 4f64.powi(l as i32)) as u64).max(8), false);
                ops.push(allreduce8());
            }
        }
        ops
    })
}

fn cosmo(n: u32, v: &Values) -> Program {
    let dims = grid(n, 2);
    per_rank(n, |r| {
        let c = coords(r, &dims);
        let mut ops = Vec::new();
        // Faces and corners: offsets in both dimensions; corners carry 1/16 of a face.
        let offsets: Vec<(i32, i32)> = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)].into();
        let at = |dx: i32, dy: i32| -> Option<u32> {
            let (x, y) = (c[0] as i32 + dx, c[1] as i32 + dy);
            ((0..dims[0] as i32).contains(&x) && (0..dims[1] as i32).contains(&y)).then(|| rank_of(&[x as u32, y as u32], &dims))
        };
        for _ in 0..v.iterations {
            ops.push(Op::Compute(Time::from_secs(v.compute)));
            for (k, &(dx, dy)) in offsets.iter().enumerate() {
                let size = if dx != 0 && dy != 0 { (v.size / 16).max(8) } else { v.size };
                if let Some(from) = at(-dx, -dy) {
                    ops.push(Op::Irecv(msg(from, size, k as u32)));
                }
            }
            for (k, &(dx, dy)) in offsets.iter().enumerate() {
                let size = if dx != 0 && dy != 0 { (v.size / 16).max(8) } else { v.size };
                if let Some(to) = at(dx, dy) {
                    ops.push(Op::Isend(msg(to, size, k as u32)));
                }
            }
            ops.push(Op::Waitall);
        }
        ops
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_even() {
        assert_eq!(grid(32, 4), vec![4, 2, 2, 2]);
        assert_eq!(grid(512, 3), vec![8, 8, 8]);
        assert_eq!(grid(64, 2), vec![8, 8]);
        assert_eq!(grid(7, 3), vec![7, 1, 1]);
    }

    #[test]
    fn stencil4d_talks_to_eight_neighbours() {
        let p = app("stencil4d").unwrap().program(81, &BTreeMap::new(), "t", "jobs[0]").unwrap();
        let sends = p.ranks[40].iter().filter(|o| matches!(o, Op::Send(_))).count();
        assert_eq!(sends, 8 * 10);
    }
}
