//! What a runtime is visibly doing between its frames: the requests it makes to the kit's model
//! stub. A wait that runs out while the runtime keeps asking its model is not a hang. The release
//! retries an empty or failed reply with back-off (requests 0.5, 1, 2, 4 and 7.5 s apart, ≈ 15 s
//! in all), each gap about twice the one before (observed: 0.48, 0.91, 2.13, 4.06, 8.45 s, the
//! jitter taking a gap past twice); so after each model request a wait holds for three times the
//! gap before it, plus its own window. Without a stub this work is invisible, and the
//! fixed retry allowance of [`super::super::gen`] stands in for it.

use crate::model_stub::ModelStub;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far past its ceiling model requests may stretch one wait.
pub(super) const STRETCH: Duration = Duration::from_secs(60);

/// The model stub a run's runtime talks to, and where the run's requests begin in its log.
#[derive(Debug, Clone)]
pub(super) struct ModelWatch {
    stub: Arc<ModelStub>,
    from: usize,
}

impl ModelWatch {
    /// Watches `stub` from its next request on.
    pub(super) fn new(stub: Arc<ModelStub>) -> ModelWatch {
        let from = stub.request_count();
        ModelWatch { stub, from }
    }

    /// When the run's model requests arrived: those naming a session `mine` holds, and those
    /// naming none (a runtime that does not say; other runs sharing the stub may then stretch
    /// a wait, never shorten one).
    pub(super) fn arrivals(&self, mine: impl Fn(&str) -> bool) -> Vec<Instant> {
        let all = self.stub.arrivals(self.from);
        let ours = all
            .into_iter()
            .filter(|(_, s)| s.as_deref().is_none_or(&mine));
        ours.map(|(at, _)| at).collect()
    }
}

/// Until when a wait of window `w` holds after the model requests that arrived at `arrivals` (in
/// order): the last one plus three times the gap before it, plus `w`; `None` with no request.
pub(super) fn held_until(arrivals: &[Instant], w: Duration) -> Option<Instant> {
    let (&last, before) = arrivals.split_last()?;
    let gap = before.last().map_or(Duration::ZERO, |&p| last - p);
    Some(last + 3 * gap + w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_back_off_is_held_through_each_doubling_gap() {
        let t0 = Instant::now();
        let w = Duration::from_millis(2300);
        // The release's retries of one empty reply, as observed (its jitter included).
        let mut at = vec![t0];
        for gap in [480, 910, 2130, 4060, 8450] {
            let next = *at.last().unwrap() + Duration::from_millis(gap);
            let held = held_until(&at, w).unwrap();
            assert!(
                held > next,
                "the retry {gap} ms later comes before the hold ends"
            );
            at.push(next);
        }
        assert_eq!(held_until(&[], w), None);
        assert_eq!(held_until(&[t0], w), Some(t0 + w));
    }
}
