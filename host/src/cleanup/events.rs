//! What the component tells the operator (`operator-events`): a host concern, not a Kafka
//! capability, so it stays beside the seam.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use super::{NewControlTopic, PartitionPreview, Plan, Review};
use crate::kafka::capabilities::Waiting;

/// Receives what the component tells the operator (`operator-events`).
pub trait OperatorEvents {
    /// The plan an apply verified, before any Kafka request (not for a document that is no plan).
    fn verified(&mut self, _plan: &Plan) {}

    /// `created`: the control topic this apply created (a new cleanup history). The answer is
    /// the operator's: `Review::Decline` and the component commits nothing.
    fn before_commit(
        &mut self,
        plan_id: &str,
        preview: &[PartitionPreview],
        created: Option<&NewControlTopic>,
    ) -> Review;

    /// The plan is COMMITTED (written by this apply or found so).
    fn committed(&mut self, _plan_id: &str) {}

    /// A Kafka step is being retried until its deadline, `remaining_ms` from now.
    fn retrying(&mut self, _message: &str, _remaining_ms: u64) {}

    /// One Kafka request is still waiting for its answer after `elapsed` (reported about every
    /// second): `what` says which, e.g. the DeleteRecords of a wide plan, which waits for every
    /// replica. The host's own progress report; it decides nothing.
    fn waiting(&mut self, _what: &str, _elapsed: Duration) {}
}

/// Shows nothing and never asks: every review proceeds.
pub struct NoEvents;

impl OperatorEvents for NoEvents {
    fn before_commit(
        &mut self,
        _plan_id: &str,
        _preview: &[PartitionPreview],
        _created: Option<&NewControlTopic>,
    ) -> Review {
        Review::Proceed
    }
}

/// The operator's events, shared by the store (the component's `operator-events` imports) and
/// the Kafka capabilities (a request still `waiting`). Never borrowed across a guest call, so a
/// borrow cannot collide.
#[derive(Clone)]
pub(super) struct SharedEvents(Rc<RefCell<Box<dyn OperatorEvents>>>);

impl SharedEvents {
    pub fn new(events: Box<dyn OperatorEvents>) -> Self {
        SharedEvents(Rc::new(RefCell::new(events)))
    }

    pub fn with<T>(&self, tell: impl FnOnce(&mut dyn OperatorEvents) -> T) -> T {
        tell(&mut **self.0.borrow_mut())
    }

    /// `OperatorEvents::waiting` for the Kafka capabilities.
    pub fn waiting(&self) -> Waiting {
        let events = self.clone();
        Box::new(move |what, elapsed| {
            if let Ok(mut events) = events.0.try_borrow_mut() {
                events.waiting(what, elapsed);
            }
        })
    }
}
