package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The published test vectors: the SPEC §2 plan (ID and the Java tool's pretty JSON, byte for
 * byte) and the reference plan IDs of the Java tool's documented behaviour
 * ({@code shared/reference/java-tool-behaviour.md} §2.3).
 */
class SpecVectorsTest {
  static final String SPEC_ID = "99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d";

  static final String SPEC_PLAN =
      "{\n"
          + "  \"schemaVersion\" : 1,\n"
          + "  \"planId\" : \"" + SPEC_ID + "\",\n"
          + "  \"sourceRecoveryPoint\" : \"checkpoint-42\",\n"
          + "  \"topic\" : \"action-state\",\n"
          + "  \"topicId\" : \"topic-id\",\n"
          + "  \"offsets\" : {\n"
          + "    \"0\" : 10,\n"
          + "    \"1\" : 20\n"
          + "  }\n"
          + "}\n";

  @Test
  void theSpecPlanVerifiesWithItsIdAndRendersToTheSameBytes() throws CleanupException {
    Plans plans = Components.plans();
    Plan plan = plans.verify(SPEC_PLAN);
    assertEquals(
        new Plan(
            1,
            SPEC_ID,
            "checkpoint-42",
            "action-state",
            "topic-id",
            List.of(new PartitionOffset(0, 10), new PartitionOffset(1, 20))),
        plan);
    assertEquals(SPEC_PLAN, plans.render(plan));
  }

  @Test
  void renderingWritesOffsetsInAscendingPartitionOrderWhateverTheirOrder() {
    Plan shuffled =
        new Plan(
            1,
            SPEC_ID,
            "checkpoint-42",
            "action-state",
            "topic-id",
            List.of(new PartitionOffset(1, 20), new PartitionOffset(0, 10)));
    assertEquals(SPEC_PLAN, Components.plans().render(shuffled));
  }

  @Test
  void theSpecMarkersGiveTheSpecPlan() throws CleanupException {
    Plans plans = Components.plans();
    Plan plan =
        plans.fromMarkers(
            "checkpoint-42",
            List.of(
                "{\"schemaVersion\":1,\"topic\":\"action-state\",\"topicId\":\"topic-id\","
                    + "\"offsets\":{\"0\":10,\"1\":25}}",
                "{\"schemaVersion\":1,\"topic\":\"action-state\",\"topicId\":\"topic-id\","
                    + "\"offsets\":{\"0\":12,\"1\":20}}"));
    assertEquals(SPEC_ID, plan.planId());
    assertEquals(SPEC_PLAN, plans.render(plan));
  }

  @ParameterizedTest(name = "{0} {1} {2} {3} -> {4}")
  @CsvSource(
      delimiter = '|',
      value = {
        "checkpoint-42|action-state|topic-id|0:10,1:20|99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d",
        "checkpoint-42|action-state|topic-id|0:10,1:30|d9e4a7af5055ce900c537ef2f32b7ccbee307dbf27419c33656014741f79fd1c",
        "s3://checkpoints/savepoint-1|action-state|topic-id|0:10,1:20|5b507907f0ab34e51462145dd807e8b7639b0b94d31fcd705e6d27c25a485601",
        "checkpoint-41|action-state|topic-id|0:10,1:20|d2a4f0f800dc942e26e54d4755dd4ea259107d4280d3f53d7cc7fa2706f40257",
        "checkpoint-42|action-state|topic-id|0:15,1:25|6d8a51b583f931075dfcad6179506cc0cfd08d4bf3215b7068ee927af7781ed4",
        "checkpoint-42|test-action-state|test-topic-id:test-action-state|0:5,1:0|d6365de47cb846cf4510700af36261ca941c723b86d1669b9a75fe150bb40d0e",
        "checkpoint-42|action-state|topic-id|10:3,2:1,9:4|843b84eca69aba32575c91ccb7213b6c28020ef2b33d6780c595bcc31c042b20",
      })
  void theJavaToolsReferencePlanIdsAreReproduced(
      String source, String topic, String topicId, String offsets, String id)
      throws CleanupException {
    List<PartitionOffset> parsed =
        java.util.Arrays.stream(offsets.split(","))
            .map(
                pair -> {
                  String[] kv = pair.split(":");
                  return new PartitionOffset(Integer.parseInt(kv[0]), Long.parseLong(kv[1]));
                })
            .toList();
    Plan plan = Components.plans().seal(source, topic, topicId, parsed);
    assertEquals(id, plan.planId());
    // The sealed plan survives its own file form.
    assertEquals(plan, Components.plans().verify(Components.plans().render(plan)));
  }
}
