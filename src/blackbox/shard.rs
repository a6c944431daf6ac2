//! `--shard K/N`: one share of a seed's cases.

/// Shard `K` of `N` (`--shard K/N`, 1-based on the command line): runs cases `K-1`, `K-1+N`,
/// `K-1+2N`, … of the seed's sequence, so that `N` jobs of a CI matrix, each with the same seed,
/// together run exactly the cases one unsharded run would (`--cases` bounds the case numbers,
/// not the count per shard).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based index of this shard.
    pub index: u64,
    /// Number of shards (at least 1).
    pub count: u64,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl Shard {
    /// The `i`-th case (0-based) this shard runs.
    pub fn case(self, i: u64) -> u64 {
        self.index + i * self.count.max(1)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("{s:?}: expected K/N with 1 <= K <= N (shard K of N)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u64, u64) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard {
            index: k - 1,
            count: n,
        })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}
