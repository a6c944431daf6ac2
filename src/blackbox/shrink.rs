//! Delta debugging over a list: drop chunks while a predicate (the same finding class still
//! shows) keeps holding, with a bound on the number of trials.

/// Shrinks `items` to a smaller list for which `fails` still holds (1-minimal when the trial
/// budget allows). `fails` is never called on the input itself.
pub fn ddmin<T: Clone>(
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
