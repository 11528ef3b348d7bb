package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.dylibso.chicory.wasm.WasmModule;
import com.dylibso.chicory.wasm.types.ExternalType;
import com.dylibso.chicory.wasm.types.FunctionImport;
import com.dylibso.chicory.wasm.types.FunctionType;
import io.actionstate.cleanup.internal.AbiType;
import io.actionstate.cleanup.internal.AbiType.CoreType;
import io.actionstate.cleanup.internal.CanonicalAbi;
import io.actionstate.cleanup.internal.HostImport;
import io.actionstate.cleanup.internal.aot.CleanupModule;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The cleanup world's hand-written layouts ({@link CleanupWit}) against the WIT and the core
 * module: every import and export this library binds has exactly the declared layout, its core
 * signature matches the module's import or export, and the Java enums follow the WIT cases.
 */
class CleanupWitLayoutTest {
  @Test
  void everyBoundImportAndExportHasExactlyTheLayoutTheWitDeclares() {
    for (CleanupWit.Function f : CleanupWit.all()) {
      if (f.name().startsWith("[resource-drop]")) {
        String resource = f.name().substring("[resource-drop]".length());
        assertEquals(List.of(new AbiType.Handle(resource, true)), f.params(), f.name());
        assertNotNull(WitLayoutTest.WIT.type(f.iface(), resource), resource);
        continue;
      }
      List<AbiType> expected = new ArrayList<>(f.params());
      expected.add(f.result());
      assertEquals(WitLayoutTest.declared(f.iface(), f.name()), expected, f.iface() + "#" + f.name());
    }
  }

  @Test
  void everyImportOfTheCleanupModuleHasTheCoreSignatureItsLayoutImplies() {
    WasmModule module = CleanupModule.load();
    var imports = module.importSection();
    int checked = 0;
    for (CleanupWit.Function f : CleanupWit.IMPORTS) {
      HostImport imp = f.asImport();
      for (int i = 0; i < imports.importCount(); i++) {
        var candidate = imports.getImport(i);
        if (candidate.importType() == ExternalType.FUNCTION
            && candidate.module().equals(imp.module())
            && candidate.name().equals(imp.name())) {
          FunctionType actual =
              module.typeSection().getType(((FunctionImport) candidate).typeIndex());
          assertEquals(imp.coreParams(), WitLayoutTest.core(actual.params()), f.name());
          assertEquals(imp.coreResults(), WitLayoutTest.core(actual.returns()), f.name());
          checked++;
        }
      }
    }
    assertEquals(CleanupWit.IMPORTS.size(), checked, "the cleanup module imports every binding");
  }

  @Test
  void everyCalledExportOfTheCleanupModuleHasTheCoreSignatureItsLayoutImplies() {
    WasmModule module = CleanupModule.load();
    for (CleanupWit.Function f : CleanupWit.EXPORTS) {
      if (f.iface().equals("suite")) {
        continue; // the conformance component's export: ConformanceTest checks it
      }
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
      FunctionType actual = WitLayoutTest.exportType(module, f.export());
      assertEquals(params, WitLayoutTest.core(actual.params()), f.name() + " parameters");
      assertEquals(results, WitLayoutTest.core(actual.returns()), f.name() + " results");
    }
  }

  @Test
  void javaEnumsAreTheWitCasesInOrder() {
    List<String> outcomes = new ArrayList<>();
    for (ApplyReport.Outcome o : ApplyReport.Outcome.values()) {
      outcomes.add(o.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }
    assertEquals(WitLayoutTest.WIT.type("coordinator", "apply-outcome").members(), outcomes);
    List<String> reviews = new ArrayList<>();
    for (OperatorEvents.Review r : OperatorEvents.Review.values()) {
      reviews.add(r.name().toLowerCase(Locale.ROOT));
    }
    assertEquals(WitLayoutTest.WIT.type("operator-events", "review").members(), reviews);
    List<String> specs = new ArrayList<>();
    for (var s : io.actionstate.cleanup.capability.Capabilities.OffsetSpec.values()) {
      specs.add(s.name().toLowerCase(Locale.ROOT));
    }
    assertEquals(WitLayoutTest.WIT.type("kafka-admin", "offset-spec").members(), specs);
  }
}
