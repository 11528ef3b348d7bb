//! The fake cluster's writer and consumer.

use super::{Shared, error};
use crate::capabilities::{ErrorKind, KafkaError, KafkaResult, PolledBatch, PolledRecord};
use action_state_format::offsets::PartitionOffsets;

pub struct FakeWriter {
    pub(super) cluster: Shared,
    pub(super) id: Option<String>,
    pub(super) epoch: u32,
}

pub struct FakeConsumer {
    pub(super) cluster: Shared,
    pub(super) topic: String,
    pub(super) positions: PartitionOffsets,
}

const COMMITTED: &str = "\"status\":\"COMMITTED\"";

impl FakeWriter {
    pub(super) fn append(
        &mut self,
        topic: &str,
        partition: u32,
        key: &str,
        value: &str,
    ) -> KafkaResult<u64> {
        let mut c = self.cluster.borrow_mut();
        c.enter("append")?;
        if let Some(id) = &self.id {
            if let Some((key, value)) = c.concurrent_commit.take() {
                // Another apply fenced this writer and committed its own plan first.
                c.append_to(topic, partition, &key, &value);
                *c.epochs.entry(id.clone()).or_insert(0) += 1;
            }
            if c.epochs.get(id) != Some(&self.epoch) {
                return Err(error(ErrorKind::Fenced));
            }
        } else if value.contains(COMMITTED) {
            // The protocol's rule, checked here: only the fenced writer commits.
            return Err(KafkaError::new(
                ErrorKind::Other,
                "a COMMITTED record must be written by the fenced writer",
            ));
        }
        let offset = c.append_to(topic, partition, key, value);
        let status = if value.contains(COMMITTED) {
            "COMMITTED"
        } else {
            "APPLIED"
        };
        c.events.push(format!("append:{status}"));
        if (self.id.is_some() || c.lag_idempotent) && c.stable_lag > 0 {
            c.lagging_end = Some(offset);
        }
        if c.answer_lost("append") {
            return Err(KafkaError::new(
                ErrorKind::Timeout,
                "simulated lost answer of an append",
            ));
        }
        Ok(offset)
    }
}

impl Drop for FakeWriter {
    fn drop(&mut self) {
        if let Ok(mut c) = self.cluster.try_borrow_mut() {
            c.dropped.push(self.id.clone());
        }
    }
}

impl FakeConsumer {
    pub(super) fn assign(&mut self, start: &PartitionOffsets) -> KafkaResult<()> {
        let mut c = self.cluster.borrow_mut();
        c.enter("assign")?;
        c.assignments.push(start.clone());
        self.positions = start.clone();
        Ok(())
    }

    pub(super) fn position(&mut self) -> KafkaResult<PartitionOffsets> {
        let c = self.cluster.borrow();
        match &c.scripted {
            Some(s) if s.polls.is_empty() => Ok(s.ends.clone()),
            Some(_) => Ok(PartitionOffsets::new()),
            None => Ok(self.positions.clone()),
        }
    }

    pub(super) fn poll(
        &mut self,
        max: u32,
        _timeout: u32,
        with_data: bool,
    ) -> KafkaResult<PolledBatch> {
        let mut c = self.cluster.borrow_mut();
        c.enter("poll")?;
        if let Some(scripted) = c.scripted.as_mut() {
            let records = scripted.polls.pop_front().unwrap_or_default();
            return Ok(PolledBatch::from_records(records.into_iter().map(
                |(partition, offset)| PolledRecord {
                    partition,
                    offset,
                    has_key: true,
                    has_value: true,
                    utf8: true,
                    key: None,
                    value: None,
                    timestamp: None,
                },
            )));
        }
        if c.stalled {
            return Ok(PolledBatch::default());
        }
        if c.empty_polls > 0 {
            c.empty_polls -= 1;
            return Ok(PolledBatch::default());
        }
        let mut out = Vec::new();
        for (partition, position) in self.positions.clone().iter() {
            for mut record in c.records_from(&self.topic, partition, position) {
                if out.len() >= max as usize {
                    break;
                }
                self.positions.insert(partition, record.offset + 1);
                if !with_data {
                    record.key = None;
                    record.value = None;
                    record.timestamp = None;
                }
                out.push(record);
            }
            // Past the delivered records lie only markers: the position reaches the end.
            if out.len() < max as usize
                && let Some(end) = c
                    .topics
                    .get(&self.topic)
                    .and_then(|t| t.ends.get(partition))
            {
                self.positions.insert(
                    partition,
                    end.max(self.positions.get(partition).unwrap_or(0)),
                );
            }
        }
        Ok(PolledBatch::from_records(out))
    }
}
