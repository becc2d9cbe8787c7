//! A datatype's canonical flattened form: its (offset, length) blocks in type-map order,
//! adjacent blocks merged, with its lower and upper bound (extent = ub - lb) as MPI defines them.

use super::spec::{Order, TypeSpec};

/// Most child blocks one flattening may place (about 1 GiB of blocks); beyond it the type is
/// refused instead of exhausting memory.
pub const MAX_WORK: u64 = 1 << 26;

#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    /// (byte offset, bytes), adjacent blocks merged.
    pub blocks: Vec<(i64, u64)>,
    pub lb: i64,
    pub ub: i64,
    /// Bytes of data.
    pub size: u64,
}

impl Flat {
    pub fn extent(&self) -> i64 {
        self.ub - self.lb
    }

    /// One block covering the whole extent from lb: copies side by side merge into one.
    fn dense(&self) -> bool {
        self.blocks.len() == 1 && self.blocks[0] == (self.lb, self.extent() as u64)
    }
}

/// A flattening mistake: the field path and what is wrong with it.
pub type FlatError = (String, String);

struct Builder {
    blocks: Vec<(i64, u64)>,
    lb: i64,
    ub: i64,
    size: u64,
    any: bool,
    work: u64,
}

impl Builder {
    fn new() -> Builder {
        Builder { blocks: Vec::new(), lb: 0, ub: 0, size: 0, any: false, work: 0 }
    }

    fn push(&mut self, off: i64, len: u64, path: &str) -> Result<(), FlatError> {
        if len == 0 {
            return Ok(());
        }
        self.size = self.size.checked_add(len).ok_or_else(|| too_big(path))?;
        if let Some(last) = self.blocks.last_mut() {
            if last.0 + last.1 as i64 == off {
                last.1 += len;
                return Ok(());
            }
        }
        self.blocks.push((off, len));
        Ok(())
    }

    /// `n` copies of `child`, the first at byte `base`, each one extent after the other.
    fn run(&mut self, child: &Flat, base: i64, n: u64, path: &str) -> Result<(), FlatError> {
        if n == 0 {
            return Ok(());
        }
        let ext = child.extent();
        // Bounds in checked arithmetic: a wrapped i64 would give a negative extent and one block.
        let lo = base.checked_add(child.lb).ok_or_else(|| too_big(path))?;
        let hi = i64::try_from(n - 1)
            .ok()
            .and_then(|m| m.checked_mul(ext))
            .and_then(|x| x.checked_add(base))
            .and_then(|x| x.checked_add(child.ub))
            .ok_or_else(|| too_big(path))?;
        if self.any {
            self.lb = self.lb.min(lo);
            self.ub = self.ub.max(hi);
        } else {
            (self.lb, self.ub, self.any) = (lo, hi, true);
        }
        if child.dense() {
            self.work += 1;
            self.push(lo, n.checked_mul(ext as u64).ok_or_else(|| too_big(path))?, path)?;
        } else {
            self.work += n * child.blocks.len() as u64;
            if self.work > MAX_WORK {
                return Err((path.into(), format!("places more than {MAX_WORK} blocks; describe a smaller type (or fewer repetitions)")));
            }
            for k in 0..n as i64 {
                for &(o, l) in &child.blocks {
                    self.push(base + k * ext + o, l, path)?;
                }
            }
        }
        if self.work > MAX_WORK {
            return Err((path.into(), format!("places more than {MAX_WORK} blocks; describe a smaller type (or fewer repetitions)")));
        }
        Ok(())
    }

    fn done(self) -> Flat {
        Flat { blocks: self.blocks, lb: self.lb, ub: self.ub, size: self.size }
    }
}

/// A type whose bytes or bounds do not fit in 63 bits: refused where it is described, never wrapped.
fn too_big(path: &str) -> FlatError {
    (path.into(), "spans 2^63 bytes or more; describe a smaller type (or fewer repetitions)".into())
}

/// `a * b` bytes, or the error of a type too big for them.
fn times(a: i64, b: i64, path: &str) -> Result<i64, FlatError> {
    a.checked_mul(b).ok_or_else(|| too_big(path))
}

fn mismatch(path: &str, what: &str, n: usize, m: usize) -> FlatError {
    (path.into(), format!("{what} ({n} against {m}); give one entry per block"))
}

/// Check that no two blocks share a byte: a receive would write it twice (MPI forbids it).
fn no_overlap(f: &Flat, path: &str) -> Result<(), FlatError> {
    let mut sorted = f.blocks.clone();
    sorted.sort_unstable();
    for w in sorted.windows(2) {
        if w[0].0 + w[0].1 as i64 > w[1].0 {
            return Err((path.into(), format!("places two blocks on byte {}; a receive would write it twice: make the blocks disjoint", w[1].0)));
        }
    }
    Ok(())
}

/// Flatten `t`, whose field path is `path` (e.g. "type").
pub fn flatten(t: &TypeSpec, path: &str) -> Result<Flat, FlatError> {
    let f = flat(t, path)?;
    no_overlap(&f, &format!("{path}.{}", t.key()))?;
    Ok(f)
}

fn flat(t: &TypeSpec, path: &str) -> Result<Flat, FlatError> {
    if let Some(size) = t.basic_size() {
        return Ok(Flat { blocks: vec![(0, size)], lb: 0, ub: size as i64, size });
    }
    let here = format!("{path}.{}", t.key());
    let child = |of: &TypeSpec| flat(of, &format!("{here}.of"));
    let mut b = Builder::new();
    match t {
        TypeSpec::Contiguous { count, of } => {
            let c = child(of)?;
            b.run(&c, 0, *count, &here)?;
        }
        TypeSpec::Vector { count, blocklength, stride, of } => {
            let c = child(of)?;
            let field = format!("{here}.stride");
            strided(&mut b, &c, *count, *blocklength, times(*stride, c.extent(), &field)?, &field, *stride)?;
        }
        TypeSpec::Hvector { count, blocklength, stride_bytes, of } => {
            let c = child(of)?;
            strided(&mut b, &c, *count, *blocklength, *stride_bytes, &format!("{here}.stride_bytes"), *stride_bytes)?;
        }
        TypeSpec::Indexed { blocklengths, displacements, of } => {
            if blocklengths.len() != displacements.len() {
                return Err(mismatch(&here, "blocklengths and displacements differ in length", blocklengths.len(), displacements.len()));
            }
            let c = child(of)?;
            for (&n, &d) in blocklengths.iter().zip(displacements) {
                b.run(&c, times(d, c.extent(), &here)?, n, &here)?;
            }
        }
        TypeSpec::IndexedBlock { blocklength, displacements, of } => {
            let c = child(of)?;
            for &d in displacements {
                b.run(&c, times(d, c.extent(), &here)?, *blocklength, &here)?;
            }
        }
        TypeSpec::Subarray { sizes, subsizes, starts, order, of } => {
            let c = child(of)?;
            subarray(&mut b, &c, sizes, subsizes, starts, *order, &here)?;
        }
        TypeSpec::Struct { blocklengths, displacements_bytes, types } => {
            if blocklengths.len() != displacements_bytes.len() || blocklengths.len() != types.len() {
                let n = displacements_bytes.len().max(types.len());
                return Err(mismatch(&here, "blocklengths, displacements_bytes and types differ in length", blocklengths.len(), n));
            }
            for (k, ((&n, &d), ty)) in blocklengths.iter().zip(displacements_bytes).zip(types).enumerate() {
                let c = flat(ty, &format!("{here}.types[{k}]"))?;
                b.run(&c, d, n, &here)?;
            }
        }
        _ => unreachable!("basic types returned above"),
    }
    Ok(b.done())
}

/// `count` blocks of `bl` copies, block starts `stride` bytes apart (vector, hvector). A
/// stride shorter than a block, either way, lays blocks over each other.
fn strided(b: &mut Builder, c: &Flat, count: u64, bl: u64, stride: i64, field: &str, written: i64) -> Result<(), FlatError> {
    let span = i64::try_from(bl).ok().and_then(|bl| bl.checked_mul(c.extent())).ok_or_else(|| too_big(field))?;
    if count > 1 && bl > 0 && c.size > 0 && stride.abs() < span {
        let dir = if stride < 0 { "negative stride" } else { "stride" };
        return Err((field.into(), format!("{dir} {written} overlaps the blocks it separates ({span} bytes each); give |stride| of at least one block")));
    }
    for i in 0..count {
        let at = i64::try_from(i).ok().and_then(|i| i.checked_mul(stride)).ok_or_else(|| too_big(field))?;
        b.run(c, at, bl, field)?;
    }
    Ok(())
}

fn subarray(b: &mut Builder, c: &Flat, sizes: &[u64], subsizes: &[u64], starts: &[u64], order: Order, here: &str) -> Result<(), FlatError> {
    let nd = sizes.len();
    if nd == 0 || subsizes.len() != nd || starts.len() != nd {
        return Err((here.into(), format!("sizes, subsizes and starts need one entry per dimension (got {}, {}, {})", nd, subsizes.len(), starts.len())));
    }
    for d in 0..nd {
        if subsizes[d] == 0 || starts[d] + subsizes[d] > sizes[d] {
            return Err((
                format!("{here}.subsizes[{d}]"),
                format!(
                    "starts {} + subsizes {} is outside the array's {} in dimension {d}; keep 0 < subsize and start + subsize <= size",
                    starts[d], subsizes[d], sizes[d]
                ),
            ));
        }
    }
    // Dimensions from slowest to fastest.
    let dims: Vec<usize> = match order {
        Order::C => (0..nd).collect(),
        Order::Fortran => (0..nd).rev().collect(),
    };
    let ext = c.extent();
    let mut pitch = vec![0i64; nd];
    let mut p = ext;
    for &d in dims.iter().rev() {
        pitch[d] = p;
        p = i64::try_from(sizes[d]).ok().and_then(|n| p.checked_mul(n)).ok_or_else(|| too_big(here))?;
    }
    let fast = *dims.last().unwrap();
    let slow = &dims[..nd - 1];
    let mut idx = vec![0u64; slow.len()];
    loop {
        let mut base = starts[fast] as i64 * pitch[fast];
        for (k, &d) in slow.iter().enumerate() {
            base += (starts[d] + idx[k]) as i64 * pitch[d];
        }
        b.run(c, base, subsizes[fast], here)?;
        // Odometer over the slow dimensions, fastest of them first.
        let mut k = slow.len();
        loop {
            if k == 0 {
                // MPI: a subarray's extent is the whole array's, from 0.
                b.lb = 0;
                b.ub = p;
                return Ok(());
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < subsizes[slow[k]] {
                break;
            }
            idx[k] = 0;
        }
    }
}
