//! Symmetries of a halo exchange on a PCIe tree, used to search one order of every orbit.
//!
//! A permutation pi of the ranks is a symmetry when (1) it preserves the depth of every rank's
//! device and the depth of the lowest common ancestor of every pair, which makes it the
//! restriction of an automorphism of the tree spanned by the root and the ranks' devices, so
//! that routes map link for link, root crossings to root crossings and ingress ports to ingress
//! ports; and (2) it maps the messages onto themselves, sizes included. sc16 then gives an order
//! and its image the same factors in every phase and so the same makespan (to float rounding of
//! sums taken in another order, far below the 1e-9 at which two times count as equal).
//!
//! The search tasks are the vectors of first messages of all ranks. The orders starting with c
//! map one to one onto those starting with pi(c), so only the smallest vector of each orbit is
//! searched, its results counted orbit-size times. The optimum cannot change: every orbit keeps
//! a representative.

use super::halo::Halo;
use super::problem::Problem;
use crate::topology::PcieTree;

/// Beyond this many symmetries the search does without (they only speed it up).
const MAX_GROUP: usize = 4096;

/// First messages of all ranks, numbered mixed-radix with rank 0 varying fastest.
pub(crate) struct Firsts {
    stride: Vec<u64>,
    pub count: u64,
}

impl Firsts {
    pub fn new(p: &Problem) -> Option<Firsts> {
        let mut stride = Vec::with_capacity(p.ranks);
        let mut count = 1u64;
        for &d in &p.deg {
            stride.push(count);
            count = count.checked_mul(d as u64)?;
        }
        Some(Firsts { stride, count })
    }

    pub fn decode(&self, p: &Problem, idx: u64, out: &mut [u8]) {
        for (g, o) in out.iter_mut().enumerate() {
            *o = ((idx / self.stride[g]) % p.deg[g] as u64) as u8;
        }
    }
}

pub(crate) struct Symmetry {
    /// For every symmetry (the identity included): the image of each message id.
    maps: Vec<Vec<usize>>,
}

impl Symmetry {
    pub fn trivial(p: &Problem) -> Symmetry {
        Symmetry { maps: vec![(0..p.messages()).collect()] }
    }

    /// The tree's symmetries, for a model whose rates depend on the tree's shape alone (its
    /// registry entry says so); other models get only the identity.
    pub fn find(p: &Problem, halo: &Halo) -> Symmetry {
        let m = p.machine();
        // sc16 scales each copy by its route's slowest link: the shape's symmetries hold where every
        // link of the tree has one B.
        let tree = match PcieTree::containing(m, &halo.device, "sc16") {
            Ok(t) if p.model.tree_symmetric && crate::model::sc16::links_alike(m, &t) => t,
            _ => return Symmetry::trivial(p),
        };
        let n = p.ranks;
        let node: Vec<usize> = halo.device.iter().map(|&d| tree.node(d)).collect();
        let depth: Vec<u32> = node.iter().map(|&v| tree.depth[v]).collect();
        let lca = |a: usize, b: usize| depth[a] as usize - tree.route(halo.device[a], halo.device[b]).n_up;
        let lca: Vec<Vec<usize>> = (0..n).map(|a| (0..n).map(|b| if a == b { usize::MAX } else { lca(a, b) }).collect()).collect();
        let mut sizes = vec![vec![Vec::new(); n]; n];
        for (a, msgs) in halo.messages.iter().enumerate() {
            for msg in msgs {
                sizes[a][msg.dst].push(msg.bytes);
            }
        }
        sizes.iter_mut().flatten().for_each(|v| v.sort_unstable());
        let fits = |i: usize, j: usize, pi: &[usize]| {
            depth[i] == depth[j]
                && p.deg[i] == p.deg[j]
                && pi.iter().enumerate().all(|(k, &pk)| lca[i][k] == lca[j][pk] && sizes[i][k] == sizes[j][pk] && sizes[k][i] == sizes[pk][j])
        };
        let mut perms = Vec::new();
        if !search(n, &fits, &mut Vec::with_capacity(n), &mut vec![false; n], &mut perms) {
            return Symmetry::trivial(p);
        }
        let maps = perms.iter().map(|pi| message_map(p, halo, pi)).collect();
        Symmetry { maps }
    }

    pub fn len(&self) -> usize {
        self.maps.len()
    }

    /// None when a symmetric image of first-message vector `idx` has a smaller index, else the
    /// size of its orbit. `c` is scratch of one entry per rank.
    pub fn orbit(&self, p: &Problem, firsts: &Firsts, idx: u64, c: &mut [u8], images: &mut Vec<u64>) -> Option<u64> {
        firsts.decode(p, idx, c);
        images.clear();
        for map in &self.maps {
            let mut image = 0u64;
            for g in 0..p.ranks {
                let to = map[p.first[g] + c[g] as usize];
                let h = p.owner[to];
                image += (to - p.first[h]) as u64 * firsts.stride[h];
            }
            if image < idx {
                return None;
            }
            images.push(image);
        }
        images.sort_unstable();
        images.dedup();
        Some(images.len() as u64)
    }
}

/// Every rank permutation extending `pi` that `fits` allows; false when there are too many.
fn search(n: usize, fits: &dyn Fn(usize, usize, &[usize]) -> bool, pi: &mut Vec<usize>, used: &mut [bool], out: &mut Vec<Vec<usize>>) -> bool {
    let i = pi.len();
    if i == n {
        out.push(pi.clone());
        return out.len() <= MAX_GROUP;
    }
    for j in 0..n {
        if !used[j] && fits(i, j, pi) {
            used[j] = true;
            pi.push(j);
            let ok = search(n, fits, pi, used, out);
            pi.pop();
            used[j] = false;
            if !ok {
                return false;
            }
        }
    }
    true
}

/// Message ids under rank permutation pi; messages equal in route and size (the two faces of a
/// periodic dimension of 2 ranks) map in slot order.
fn message_map(p: &Problem, halo: &Halo, pi: &[usize]) -> Vec<usize> {
    let mut map = vec![0; p.messages()];
    for (a, msgs) in halo.messages.iter().enumerate() {
        for (i, msg) in msgs.iter().enumerate() {
            let same = |x: &super::halo::HaloMessage| (x.dst, x.bytes);
            let nth = msgs[..i].iter().filter(|x| same(x) == same(msg)).count();
            let target = (pi[msg.dst], msg.bytes);
            let j = halo.messages[pi[a]].iter().enumerate().filter(|(_, x)| same(x) == target).nth(nth).map(|(j, _)| j);
            map[p.first[a] + i] = p.first[pi[a]] + j.expect("a symmetry maps messages onto messages");
        }
    }
    map
}
