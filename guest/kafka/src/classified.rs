//! The capabilities as the policy uses them: every error a host answers passes through the
//! core's table of protocol codes (`kafka_codes`) before any rule looks at its case, so a
//! broker's answer means the same in every host whatever the host's own table says.

use crate::capabilities::{AnswerOf, CallOn, Capabilities};

/// Capabilities whose errors are `kafka_codes::classified`.
pub struct Classified<C>(pub C);

impl<C: Capabilities> Capabilities for Classified<C> {
    type Writer = C::Writer;
    type Consumer = C::Consumer;

    fn call(&mut self, call: CallOn<'_, C>) -> AnswerOf<C> {
        self.0.call(call).map_err(crate::kafka_codes::classified)
    }
}
