//! Taking many consumed messages per call from librdkafka (`rd_kafka_consume_batch_queue`),
//! which rdkafka's safe API lacks: its poll hands out one message per call, and each call reads
//! the clock and takes the queue's lock, which costs as much as the record's own handling when a
//! replay drains thousands of buffered records per poll.
//!
//! A message is read only while it is alive: `take` passes each one to the caller as borrowed
//! slices and destroys it right after.

use std::ffi::CStr;
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::consumer::{BaseConsumer, Consumer as _};

use super::errors::{KafkaError, from_code, invalid};

/// One message of a batch: a record, or an error event the client delivered in its place.
pub enum Taken<'a> {
    Record {
        partition: i32,
        offset: i64,
        key: Option<&'a [u8]>,
        payload: Option<&'a [u8]>,
        /// Milliseconds since the Unix epoch; -1 when the record has none.
        timestamp: i64,
    },
    Error(KafkaError),
}

/// A reference to a consumer's queue: the one its messages and error events arrive on, and
/// the buffer `take` hands to librdkafka (kept, so a poll allocates nothing for it).
pub struct ConsumerQueue {
    queue: *mut rd::rd_kafka_queue_t,
    messages: Vec<*mut rd::rd_kafka_message_t>,
}

// SAFETY: librdkafka queue handles may be used and destroyed from any thread.
unsafe impl Send for ConsumerQueue {}

impl Drop for ConsumerQueue {
    fn drop(&mut self) {
        // SAFETY: obtained from rd_kafka_queue_get_consumer and destroyed once; the consumer it
        // belongs to outlives it (`Consumer` declares its queue before its client).
        unsafe { rd::rd_kafka_queue_destroy(self.queue) }
    }
}

impl ConsumerQueue {
    pub fn of(consumer: &BaseConsumer) -> Result<Self, KafkaError> {
        // SAFETY: the client pointer is valid while `consumer` lives; the queue reference keeps
        // itself alive until dropped.
        let queue = unsafe { rd::rd_kafka_queue_get_consumer(consumer.client().native_ptr()) };
        if queue.is_null() {
            return Err(invalid("the consumer has no consumer queue (no group.id)"));
        }
        Ok(ConsumerQueue {
            queue,
            messages: Vec::new(),
        })
    }

    /// Takes up to `max` messages, waiting at most `timeout` for them (librdkafka returns early
    /// only when `max` arrived, so callers wait for one and then take what is buffered with a
    /// zero timeout). Each message goes to `each` in delivery order; returns how many there were.
    pub fn take(
        &mut self,
        max: usize,
        timeout: Duration,
        mut each: impl FnMut(Taken<'_>),
    ) -> usize {
        self.messages.resize(max, std::ptr::null_mut());
        let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: `messages` has room for `max` pointers; librdkafka fills the first `n`.
        let n = unsafe {
            rd::rd_kafka_consume_batch_queue(
                self.queue,
                timeout_ms,
                self.messages.as_mut_ptr(),
                max,
            )
        };
        let n = usize::try_from(n).unwrap_or(0).min(max);
        for &message in &self.messages[..n] {
            // SAFETY: each of the first `n` pointers is a live message until destroyed below.
            each(unsafe { taken(&*message) });
            // SAFETY: destroyed exactly once, after its last use.
            unsafe { rd::rd_kafka_message_destroy(message) };
        }
        n
    }
}

/// # Safety
/// `message` must be a live message; the slices borrow its buffers.
unsafe fn taken(message: &rd::rd_kafka_message_t) -> Taken<'_> {
    if message.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
        // SAFETY: librdkafka returns a NUL-terminated description for an error message.
        let detail = unsafe { CStr::from_ptr(rd::rd_kafka_message_errstr(message)) };
        let code = message.err.into();
        return Taken::Error(from_code(
            code,
            format!(
                "Message consumption error: {code:?} ({})",
                detail.to_string_lossy()
            ),
        ));
    }
    // SAFETY: a non-null pointer addresses `len` bytes owned by the message.
    let bytes = |ptr: *mut std::ffi::c_void, len: usize| {
        (!ptr.is_null()).then(|| unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
    };
    Taken::Record {
        partition: message.partition,
        offset: message.offset,
        key: bytes(message.key, message.key_len),
        payload: bytes(message.payload, message.len),
        // SAFETY: a live message; a null type pointer is allowed (the type is not needed).
        timestamp: unsafe { rd::rd_kafka_message_timestamp(message, std::ptr::null_mut()) },
    }
}
