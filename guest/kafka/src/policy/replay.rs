//! The consumer a recovery session replays a data topic with: explicit assignment, polls
//! without data, positions. Its errors mean what every other capability's do (`failure`), and a
//! refused lookup of the consumer group it never uses is told apart here, once.

use super::{Policy, bare_failure};
use crate::capabilities::{Capabilities, Kafka, PolledBatch};
use crate::classified::Classified;
use crate::kafka_types::PolicyResult;
use action_state_format::offsets::PartitionOffsets;

/// What one replay poll answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayPoll {
    Records(PolledBatch),
    /// The client reported a refused lookup of the consumer group this reader never uses
    /// (`KafkaError::is_unused_group_refusal`): nothing about the records. The policy waited the
    /// poll's timeout, as a poll that found nothing would have.
    GroupRefused,
}

impl<C: Capabilities> Policy<C> {
    /// Opens the replay consumer of `topic` unless it is open already: one open per session,
    /// not retried (a restore that cannot open it fails, and the next restore opens again).
    pub fn open_replay(&mut self, topic: &str) -> PolicyResult<()> {
        if self.replay_reader.as_ref().is_none_or(|(t, _)| t != topic) {
            let consumer = self
                .caps
                .open_consumer(topic)
                .map_err(|e| bare_failure("consumer-open", e))?;
            self.replay_reader = Some((topic.to_owned(), consumer));
        }
        Ok(())
    }

    /// The replay consumer, when `open_replay` opened one: a host hands the records of the
    /// latest poll to its runtime from it (the policy polls without data).
    pub fn replay_consumer(&mut self) -> Option<&mut C::Consumer> {
        self.replay_reader.as_mut().map(|(_, consumer)| consumer)
    }

    /// The capabilities and the replay consumer, for one call on it.
    fn replay_reader(
        &mut self,
        operation: &str,
    ) -> PolicyResult<(&mut Classified<C>, &mut C::Consumer)> {
        match self.replay_reader.as_mut() {
            Some((_, consumer)) => Ok((&mut self.caps, consumer)),
            None => Err(action_state_format::error::KafkaFailure::new(
                operation,
                "no replay consumer is open",
                false,
            )),
        }
    }

    /// Assigns the replay consumer to read from `start`.
    pub fn replay_assign(&mut self, start: &PartitionOffsets) -> PolicyResult<()> {
        let (caps, consumer) = self.replay_reader("consumer-assign")?;
        caps.assign(consumer, start)
            .map_err(|e| bare_failure("consumer-assign", e))
    }

    /// The replay consumer's next offset per assigned partition.
    pub fn replay_position(&mut self) -> PolicyResult<PartitionOffsets> {
        let (caps, consumer) = self.replay_reader("consumer-position")?;
        caps.position(consumer)
            .map_err(|e| bare_failure("consumer-position", e))
    }

    /// One poll of the replay consumer, without the records' data.
    pub fn replay_poll(&mut self, max_records: u32, timeout_ms: u32) -> PolicyResult<ReplayPoll> {
        let (caps, consumer) = self.replay_reader("consumer-poll")?;
        let answer = caps.poll(consumer, max_records, timeout_ms, false);
        match answer {
            Ok(batch) => Ok(ReplayPoll::Records(batch)),
            Err(e) if e.is_unused_group_refusal() => {
                self.caps.sleep_ms(timeout_ms);
                Ok(ReplayPoll::GroupRefused)
            }
            Err(e) => Err(bare_failure("consumer-poll", e)),
        }
    }
}
