//! Counting and tracing as one layer of the capabilities: every call the guest makes is counted
//! (`RequestCounts`: what a run cost in Kafka requests) and, with `ASC_TRACE` or
//! `ASC_TRACE_KAFKA`, reported on the process's timeline (`crate::trace`): where the wall clock
//! goes when a cluster misbehaves, or when an apply is slower than its Kafka requests.

use std::time::Instant;

use action_state_kafka::capabilities::{Answer, AnswerOf, Call, CallOn, Capabilities, KafkaResult};

use crate::kafka::RequestCounts;

/// `inner`, its calls counted and traced.
pub struct Observed<C> {
    pub inner: C,
    pub counts: RequestCounts,
}

impl<C> Observed<C> {
    pub fn new(inner: C) -> Self {
        Observed {
            inner,
            counts: RequestCounts::default(),
        }
    }
}

impl<C: Capabilities> Capabilities for Observed<C> {
    type Writer = C::Writer;
    type Consumer = C::Consumer;

    fn call(&mut self, call: CallOn<'_, C>) -> AnswerOf<C> {
        count(&mut self.counts, &call);
        if !crate::trace::kafka_calls() && !crate::trace::on() {
            return self.inner.call(call);
        }
        let started = Instant::now();
        let step = Step::of(&call);
        let answer = self.inner.call(call);
        step.report(started, &answer);
        answer
    }
}

fn count<W, K>(counts: &mut RequestCounts, call: &Call<'_, W, K>) {
    match call {
        Call::Describe { .. }
        | Call::DescribeCluster { .. }
        | Call::CreateTopic { .. }
        | Call::ListOffsets { .. }
        | Call::DeleteRecords { .. } => counts.admin += 1,
        Call::Append { .. } => counts.control_writes += 1,
        Call::Poll {
            with_data: true, ..
        } => counts.control_reads += 1,
        Call::Poll { .. } => counts.consumer_polls += 1,
        _ => {}
    }
}

/// A call as the timeline names it, taken before the call is made.
enum Step {
    /// A Kafka request: its name and arguments.
    Kafka(String),
    /// A poll, whose line also counts the records it answered.
    Poll(u32),
    /// A back-off or pause of the component.
    Wait(u32),
    /// The clock and the operator's progress line: not on the timeline.
    Unseen,
}

impl Step {
    fn of<W, K>(call: &Call<'_, W, K>) -> Step {
        let named = match call {
            Call::Now | Call::OperationTimeout | Call::Retrying { .. } => return Step::Unseen,
            Call::Sleep { ms } => return Step::Wait(*ms),
            Call::Poll { timeout_ms, .. } => return Step::Poll(*timeout_ms),
            Call::Describe { topics, .. } => format!("describe {topics:?}"),
            Call::CreateTopic { topic, .. } => format!("create-topic {topic}"),
            Call::ListOffsets { topic, spec, .. } => format!("list-offsets {topic} {spec:?}"),
            Call::DeleteRecords { topic, .. } => format!("delete-records {topic}"),
            Call::OpenWriter { transactional_id } => format!("writer.open {transactional_id:?}"),
            Call::Append { topic, .. } => format!("writer.append {topic}"),
            Call::OpenConsumer { topic } => format!("consumer.open {topic}"),
            Call::DescribeCluster { .. } | Call::Assign { .. } | Call::Position { .. } => {
                call.name().to_owned()
            }
        };
        Step::Kafka(named)
    }

    fn report<W, K>(self, started: Instant, answer: &KafkaResult<Answer<W, K>>) {
        let call = match self {
            Step::Unseen => return,
            Step::Wait(ms) => {
                crate::trace::step("wait", started, || {
                    format!("the component waits {ms} ms (back-off or pause)")
                });
                return;
            }
            Step::Kafka(call) => call,
            Step::Poll(timeout_ms) => {
                let records = match answer {
                    Ok(Answer::Polled(batch)) => batch.len(),
                    _ => 0,
                };
                format!("consumer.poll (up to {timeout_ms} ms): {records} records,")
            }
        };
        let outcome = match answer {
            Ok(_) => "ok".to_owned(),
            Err(error) => format!("{error:?}"),
        };
        if crate::trace::kafka_calls() {
            eprintln!(
                "kafka: {call} {} ms: {outcome}",
                started.elapsed().as_millis()
            );
        }
        crate::trace::step("kafka", started, || format!("{call}: {outcome}"));
    }
}
