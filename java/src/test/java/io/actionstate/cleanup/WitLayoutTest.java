package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.dylibso.chicory.wasm.WasmModule;
import com.dylibso.chicory.wasm.types.FunctionType;
import com.dylibso.chicory.wasm.types.ValType;
import io.actionstate.cleanup.internal.AbiType;
import io.actionstate.cleanup.internal.AbiType.CoreType;
import io.actionstate.cleanup.internal.CanonicalAbi;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The hand-written WIT layouts agree with the WIT and with the component: every function this
 * library calls has exactly the layout that {@code types.wit} and {@code plans.wit} declare
 * (parsed by {@link WitText}, so a changed field, case or type anywhere in a signature fails),
 * the core signature the canonical ABI derives from it equals the module's export, and the Java
 * records map to the WIT cases by name (so a WIT change that this library has not followed fails
 * here, not at a customer).
 */
class WitLayoutTest {
  /** Every interface file of the package (world.wit holds only worlds and the package line). */
  static final WitText WIT =
      WitText.parse(
          Wit.witText("types.wit"),
          Wit.witText("plans.wit"),
          Wit.witText("clock.wit"),
          Wit.witText("kafka-admin.wit"),
          Wit.witText("kafka-writer.wit"),
          Wit.witText("kafka-consumer.wit"),
          Wit.witText("operator-events.wit"),
          Wit.witText("marker-planning.wit"),
          Wit.witText("coordinator.wit"),
          Wit.witText("recovery.wit"),
          Wit.witText("snapshots.wit"),
          Wit.witText("suite.wit"));

  /** The layout the WIT declares for {@code iface#name}: parameters, then the result. */
  static List<AbiType> declared(String iface, String name) {
    WitText.Function declared = WIT.function(iface + "#" + name);
    assertNotNull(declared, iface + ".wit declares no function " + name);
    List<AbiType> layout = new ArrayList<>();
    for (String t : declared.paramTypes()) {
      layout.add(WIT.layout(iface, t));
    }
    layout.add(WIT.layout(iface, declared.resultType()));
    return layout;
  }

  @Test
  void everyCalledFunctionHasExactlyTheLayoutTheWitDeclares() {
    for (Plans.WitFunction f : Plans.FUNCTIONS) {
      List<AbiType> expected = new ArrayList<>(f.params());
      expected.add(f.result());
      assertEquals(declared("plans", f.name()), expected, f.name());
    }
  }

  /**
   * Only the functions this library binds are checked: an interface that gains functions (the
   * lead adds snapshot planning to {@code plans}) fails nothing here until it changes one of
   * them.
   */
  @Test
  void theComponentExportsEveryBoundPlansFunctionUnderTheBundledPackageVersion() {
    assertTrue(Wit.PACKAGE.startsWith("action-state:cleanup@"), Wit.PACKAGE);
    WasmModule module = Components.plans().module();
    for (Plans.WitFunction f : Plans.FUNCTIONS) {
      exportType(module, Wit.plansExport(f.name()));
    }
  }

  @Test
  void cleanupErrorRecordsMapToTheWitCasesByName() {
    List<String> cases = WIT.type("types", "cleanup-error").members();
    Set<String> seen = new HashSet<>();
    for (CleanupError e : everyCleanupErrorCase()) {
      assertEquals(cases.indexOf(e.kind()), Wit.cleanupError(e).index(), e.kind());
      seen.add(e.kind());
    }
    assertEquals(Set.copyOf(cases), seen, "one Java record per WIT case");
  }

  @Test
  void kafkaErrorKindsAndStatusesAreTheWitCasesInOrder() {
    List<String> kinds = new ArrayList<>();
    for (CleanupError.KafkaErrorKind k : CleanupError.KafkaErrorKind.values()) {
      kinds.add(k.witName());
    }
    assertEquals(WIT.type("types", "kafka-error").members(), kinds);
    List<String> statuses = new ArrayList<>();
    for (Status s : Status.values()) {
      statuses.add(s.name().toLowerCase(java.util.Locale.ROOT));
    }
    assertEquals(WIT.type("types", "status").members(), statuses);
  }

  @Test
  void everyCleanupErrorSurvivesLoweringAndLiftingUnchanged() {
    for (CleanupError e : everyCleanupErrorCase()) {
      assertEquals(e, Wit.cleanupError(Wit.cleanupError(e)), e.kind());
    }
  }

  /** One value of every case, with extreme numbers and every kafka-error kind. */
  static List<CleanupError> everyCleanupErrorCase() {
    CleanupError.RangeViolation range =
        new CleanupError.RangeViolation(
            "t", Integer.MAX_VALUE, Long.MAX_VALUE, OptionalLong.of(0), OptionalLong.empty());
    List<CleanupError> all =
        new ArrayList<>(
            List.of(
                new CleanupError.InvalidPlan("a"),
                new CleanupError.InvalidMarker("b"),
                new CleanupError.InvalidArgument("c"),
                new CleanupError.BoundaryViolation("t", 1, 2, Long.MAX_VALUE),
                new CleanupError.BoundaryRegression("p", Integer.MAX_VALUE, 3, 4),
                new CleanupError.TopicChanged("t", "ctx", "A", "B", List.of(0, 1), List.of(2)),
                new CleanupError.UnsafeTopicConfig("d"),
                new CleanupError.InvalidControlTopic("e"),
                new CleanupError.OffsetsUnavailable(range),
                new CleanupError.DeleteUnverified(range),
                new CleanupError.ControlTopicCorrupt("f"),
                new CleanupError.RecoveryRefused("g"),
                new CleanupError.ConflictingPolicies("h"),
                new CleanupError.Fenced("i"),
                new CleanupError.ReplayStalled("j"),
                new CleanupError.ReplayRecordInvalid("k"),
                new CleanupError.Kafka("delete-records", "m", true),
                new CleanupError.InvalidSnapshot("l")));
    int code = Integer.MIN_VALUE;
    for (CleanupError.KafkaErrorKind kind : CleanupError.KafkaErrorKind.values()) {
      all.add(
          new CleanupError.Kafka(
              "op-" + kind.witName(),
              "sentence",
              false,
              Optional.of(new CleanupError.KafkaError(kind, code, "NAME", "client says"))));
      code = code == Integer.MIN_VALUE ? -185 : code + 100_000_000;
    }
    return all;
  }
  @Test
  void everyCalledFunctionHasTheCoreSignatureItsWitLayoutImplies() {
    Plans plans = Components.plans();
    WasmModule module = plans.module();
    for (Plans.WitFunction f : Plans.FUNCTIONS) {
      List<CoreType> params = new ArrayList<>();
      for (AbiType p : f.params()) {
        params.addAll(p.flat());
      }
      if (params.size() > CanonicalAbi.MAX_FLAT_PARAMS) {
        params = List.of(CoreType.I32);
      }
      List<CoreType> results = f.result() == null ? List.of() : f.result().flat();
      if (results.size() > CanonicalAbi.MAX_FLAT_RESULTS) {
        results = List.of(CoreType.I32);
      }
      FunctionType actual = exportType(module, f.export());
      assertEquals(params, core(actual.params()), f.name() + " parameters");
      assertEquals(results, core(actual.returns()), f.name() + " results");
    }
  }

  @Test
  void aComponentWhoseCoreModuleNeedsImportsIsRefusedClearly() throws Exception {
    java.nio.file.Path cleanup = Components.validatorPath().resolveSibling("cleanup.wasm");
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class,
            () -> Plans.load(cleanup, Plans.Engine.INTERPRETER));
    org.junit.jupiter.api.Assertions.assertTrue(
        e.getMessage().contains("load validator.wasm"), e.getMessage());
  }

  @Test
  void aFileThatIsNotAComponentIsRefusedClearly() {
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class,
            () -> Plans.load("{}".getBytes(java.nio.charset.StandardCharsets.UTF_8), Plans.Engine.INTERPRETER));
    org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("preamble"), e.getMessage());
  }

  static FunctionType exportType(WasmModule module, String name) {
    var exports = module.exportSection();
    for (int i = 0; i < exports.exportCount(); i++) {
      if (exports.getExport(i).name().equals(name)) {
        int index = exports.getExport(i).index();
        int imported = module.importSection().count(com.dylibso.chicory.wasm.types.ExternalType.FUNCTION);
        int typeIndex = module.functionSection().getFunctionType(index - imported);
        return module.typeSection().getType(typeIndex);
      }
    }
    throw new AssertionError("the module does not export " + name);
  }

  static List<CoreType> core(List<ValType> types) {
    List<CoreType> out = new ArrayList<>();
    for (ValType t : types) {
      if (t.equals(ValType.I32)) {
        out.add(CoreType.I32);
      } else if (t.equals(ValType.I64)) {
        out.add(CoreType.I64);
      } else {
        throw new AssertionError("unexpected core type " + t);
      }
    }
    return out;
  }
}
