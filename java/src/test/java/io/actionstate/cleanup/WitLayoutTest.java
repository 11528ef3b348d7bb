package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.dylibso.chicory.wasm.WasmModule;
import com.dylibso.chicory.wasm.types.FunctionType;
import com.dylibso.chicory.wasm.types.ValType;
import io.actionstate.cleanup.internal.AbiType;
import io.actionstate.cleanup.internal.AbiType.CoreType;
import io.actionstate.cleanup.internal.CanonicalAbi;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The hand-written WIT layouts agree with the component: for every function this library calls,
 * the core signature the canonical ABI derives from the layouts equals the signature of the
 * module's export (so a WIT change that this library has not followed fails here, not at a
 * customer).
 */
class WitLayoutTest {
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

  private static FunctionType exportType(WasmModule module, String name) {
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

  private static List<CoreType> core(List<ValType> types) {
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
