package io.actionstate.flinkjob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ActionJob#main} as a cluster runs it, here in a local environment (Flink starts one for
 * {@code execute} outside a cluster): a bounded run of 30 actions from the datagen source ends
 * by itself, each with one effect and one completion record.
 */
class MainTest {
  @Test
  @Timeout(300)
  void mainPerformsEveryActionOfABoundedRunOnceAndEnds() throws Exception {
    String state = Kafka.unique("main");
    String effects = state + "-effects";
    Kafka.createActionStateTopic(state, 2);
    Kafka.createTopic(effects, 1);
    ActionJob.main(
        new String[] {
          "--bootstrap-servers", Kafka.bootstrap(), "--action-state-topic", state,
          "--effects-topic", effects, "--control-topic", state + "-control", "--actions", "30",
          "--actions-per-second", "200"
        });
    Effects read = Effects.read(effects);
    assertNull(read.exactlyOnceViolation(30));
    assertEquals(
        Map.of(0, 30L, 1, 30L), Kafka.committedEnds(state), "a record and a commit marker each");
    Harness.counts("main", "actions", 30, "effects", read.records(), "stateEnds", Kafka.committedEnds(state));
  }
}
