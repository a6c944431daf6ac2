//! Delta debugging over a list: drop chunks while a predicate (the same finding class still
//! shows) keeps holding, with a bound on the number of trials. [`ddmin_par`] tries several
//! chunks at once and gives the result of trying them one at a time (the tests keep that
//! one-at-a-time `ddmin` as their oracle).

/// Shrinks `items` to a smaller list for which `fails` still holds (1-minimal when the trial
/// budget allows; `fails` is never called on the input itself), trying up to `width` candidates
/// of a round at once (`fails` is then called from several threads). Of a batch it keeps the
/// first candidate in one-at-a-time order for which `fails` holds and counts the trials that
/// order would have made, dropping the candidates tried after it as speculative: for a
/// deterministic `fails`, any `width` gives the same list and count.
pub fn ddmin_par<T: Clone + Send + Sync>(
    items: Vec<T>,
    max_trials: usize,
    width: usize,
    fails: impl Fn(&[T]) -> bool + Sync,
) -> (Vec<T>, usize) {
    let width = width.max(1);
    let mut cur = items;
    let mut n = 2usize;
    let mut trials = 0;
    while cur.len() >= 2 && trials < max_trials {
        let chunk = cur.len().div_ceil(n);
        let mut reduced = false;
        let mut start = 0;
        while start < cur.len() && trials < max_trials {
            let starts: Vec<usize> = (0..)
                .map(|k| start + k * chunk)
                .take_while(|s| *s < cur.len())
                .take(width.min(max_trials - trials))
                .collect();
            let mut candidates: Vec<Vec<T>> =
                starts.iter().map(|&s| without(&cur, s, chunk)).collect();
            match try_all(&candidates, &fails).iter().position(|f| *f) {
                Some(k) => {
                    trials += k + 1;
                    cur = candidates.swap_remove(k);
                    n = (n - 1).max(2);
                    reduced = true;
                    // Retry the same position: what follows moved into it.
                    start = starts[k];
                }
                None => {
                    trials += starts.len();
                    start = starts[starts.len() - 1] + chunk;
                }
            }
        }
        if !reduced {
            if n >= cur.len() {
                break;
            }
            n = (n * 2).min(cur.len());
        }
    }
    if cur.len() == 1 && trials < max_trials && fails(&[]) {
        cur.clear();
        trials += 1;
    }
    (cur, trials)
}

/// `items` without the chunk of `len` at `start`.
fn without<T: Clone>(items: &[T], start: usize, len: usize) -> Vec<T> {
    let end = (start + len).min(items.len());
    items[..start]
        .iter()
        .chain(&items[end..])
        .cloned()
        .collect()
}

/// `fails` of every candidate, each in a thread of its own when there are several.
fn try_all<T: Sync>(candidates: &[Vec<T>], fails: &(impl Fn(&[T]) -> bool + Sync)) -> Vec<bool> {
    if let [one] = candidates {
        return vec![fails(one)];
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = candidates
            .iter()
            .map(|c| s.spawn(move || fails(c)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-at-a-time delta debugging [`ddmin_par`] must equal: the oracle of these tests.
    /// Shrinks `items` to a smaller list for which `fails` still holds (1-minimal when the trial
    /// budget allows). `fails` is never called on the input itself.
    fn ddmin<T: Clone>(
        items: Vec<T>,
        max_trials: usize,
        mut fails: impl FnMut(&[T]) -> bool,
    ) -> (Vec<T>, usize) {
        let mut cur = items;
        let mut n = 2usize;
        let mut trials = 0;
        while cur.len() >= 2 && trials < max_trials {
            let chunk = cur.len().div_ceil(n);
            let mut reduced = false;
            let mut start = 0;
            while start < cur.len() && trials < max_trials {
                let end = (start + chunk).min(cur.len());
                let candidate: Vec<T> = cur[..start].iter().chain(&cur[end..]).cloned().collect();
                trials += 1;
                if fails(&candidate) {
                    cur = candidate;
                    n = (n - 1).max(2);
                    reduced = true;
                    // Retry the same position: what follows moved into it.
                } else {
                    start = end;
                }
            }
            if !reduced {
                if n >= cur.len() {
                    break;
                }
                n = (n * 2).min(cur.len());
            }
        }
        if cur.len() == 1 && trials < max_trials && fails(&[]) {
            cur.clear();
            trials += 1;
        }
        (cur, trials)
    }

    #[test]
    fn shrinking_keeps_exactly_the_items_the_failure_needs() {
        let items: Vec<u32> = (0..40).collect();
        let (min, _) = ddmin(items, 1000, |v| v.contains(&7) && v.contains(&31));
        assert_eq!(min, vec![7, 31]);
        let (min, _) = ddmin((0..10).collect::<Vec<u32>>(), 1000, |_| true);
        assert!(min.is_empty());
    }

    #[test]
    fn shrinking_stops_at_its_trial_budget() {
        let mut calls = 0;
        let (min, trials) = ddmin((0..100).collect::<Vec<u32>>(), 5, |v| {
            calls += 1;
            v.contains(&50)
        });
        assert_eq!(calls, 5);
        assert_eq!(trials, 5);
        assert!(min.contains(&50));
    }

    /// A small deterministic generator (the tests need no crate for it).
    fn next(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    #[test]
    fn parallel_shrinking_gives_the_sequential_result_and_trial_count() {
        let mut rng = 7u64;
        for _ in 0..200 {
            let len = (next(&mut rng) % 30) as u32;
            let needed: Vec<u32> = (0..next(&mut rng) % 4)
                .map(|_| (next(&mut rng) % 30) as u32)
                .collect();
            let budget = (next(&mut rng) % 40) as usize;
            let fails = |v: &[u32]| needed.iter().all(|n| v.contains(n) || *n >= len);
            let items: Vec<u32> = (0..len).collect();
            let sequential = ddmin(items.clone(), budget, fails);
            for width in 1..=4 {
                let parallel = ddmin_par(items.clone(), budget, width, fails);
                assert_eq!(
                    parallel, sequential,
                    "width {width}, needed {needed:?}, budget {budget}"
                );
            }
        }
    }

    #[test]
    fn parallel_shrinking_runs_at_most_width_trials_at_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let (min, _) = ddmin_par((0..64).collect::<Vec<u32>>(), 1000, 3, |v| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::yield_now();
            running.fetch_sub(1, Ordering::SeqCst);
            v.contains(&40)
        });
        assert_eq!(min, vec![40]);
        assert!((1..=3).contains(&most.load(Ordering::SeqCst)));
    }
}
