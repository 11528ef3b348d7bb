//! Operator tools outside the capability contract: the demo creates a data topic and writes
//! action states with them (the tests reuse them). Nothing here is reachable from the component.

use std::time::{Duration, Instant};

use rdkafka::error::{KafkaError as RdError, RDKafkaErrorCode};
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord};

use crate::kafka::errors::{from_rd, invalid};
use crate::kafka::{KafkaClients, KafkaResult};

impl KafkaClients {
    /// Creates a topic (or finds it) and waits until metadata shows all its partitions.
    pub fn create_topic_and_wait(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[(String, String)],
    ) -> KafkaResult<bool> {
        let created = self
            .admin()?
            .create_topic(topic, partitions, replication_factor, configs)?;
        let deadline = Instant::now() + self.settings().timeout;
        let names = [topic.to_owned()];
        while Instant::now() < deadline {
            let found = self.admin()?.describe(&names, &[], false)?;
            if found[0]
                .as_ref()
                .is_some_and(|t| t.partitions.len() == partitions as usize)
            {
                return Ok(created);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(invalid(format!("topic {topic} did not appear in metadata")))
    }

    /// Produces many records (partition, key, value) with acks=all and waits for all of them.
    pub fn produce_batch(
        &mut self,
        topic: &str,
        records: &[(u32, String, String)],
    ) -> KafkaResult<()> {
        let mut config = self.client_config();
        config
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "5")
            .set(
                "message.timeout.ms",
                self.settings().timeout.as_millis().to_string(),
            );
        let producer: FutureProducer = config.create().map_err(|e| from_rd(&e))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        // `send_result` enqueues at once; a full local queue is drained by waiting for the
        // oldest record.
        let mut pending = std::collections::VecDeque::with_capacity(records.len());
        for (partition, key, value) in records {
            let p = i32::try_from(*partition).map_err(|_| invalid("partition out of range"))?;
            let mut record: FutureRecord<'_, str, str> = FutureRecord::to(topic)
                .partition(p)
                .key(key.as_str())
                .payload(value.as_str());
            loop {
                match producer.send_result(record) {
                    Ok(delivery) => {
                        pending.push_back(delivery);
                        break;
                    }
                    Err((RdError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                        record = back;
                        match pending.pop_front() {
                            Some(oldest) => delivered(&runtime, oldest)?,
                            None => std::thread::sleep(Duration::from_millis(10)),
                        }
                    }
                    Err((error, _)) => return Err(from_rd(&error)),
                }
            }
        }
        for delivery in pending {
            delivered(&runtime, delivery)?;
        }
        Ok(())
    }
}

fn delivered(runtime: &tokio::runtime::Runtime, delivery: DeliveryFuture) -> KafkaResult<()> {
    match runtime.block_on(delivery) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err((error, _))) => Err(from_rd(&error)),
        Err(_) => Err(invalid("the producer was closed before delivery")),
    }
}
