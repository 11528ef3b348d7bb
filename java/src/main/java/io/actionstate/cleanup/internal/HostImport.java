package io.actionstate.cleanup.internal;

import com.dylibso.chicory.runtime.HostFunction;
import com.dylibso.chicory.wasm.types.FunctionType;
import com.dylibso.chicory.wasm.types.ValType;
import io.actionstate.cleanup.internal.AbiType.CoreType;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * One function a component imports, with its WIT signature as layouts, turned into a Chicory
 * {@link HostFunction} that lifts the guest's arguments, runs a Java body and lowers the result
 * by the canonical ABI (results wider than one core value go to the return area the guest passes
 * as the last argument).
 *
 * <p>A body never throws for a Kafka failure (that is a {@code result} value). Any exception it
 * throws is a broken host invariant (a bad handle, say) and traps the guest: the instance is then
 * discarded by whoever called into it.
 */
public record HostImport(String module, String name, List<AbiType> params, AbiType result) {
  /** The Java side of an import: the lifted arguments in, the result value (or null) out. */
  public interface Body {
    Object apply(Object[] args);
  }

  /** The core parameter types the canonical ABI gives this import. */
  public List<CoreType> coreParams() {
    List<CoreType> flat = new ArrayList<>();
    for (AbiType p : params) {
      flat.addAll(p.flat());
    }
    if (flat.size() > CanonicalAbi.MAX_FLAT_PARAMS) {
      flat = new ArrayList<>(List.of(CoreType.I32));
    }
    if (result != null && result.flat().size() > CanonicalAbi.MAX_FLAT_RESULTS) {
      flat.add(CoreType.I32);
    }
    return flat;
  }

  /** The core result types the canonical ABI gives this import. */
  public List<CoreType> coreResults() {
    if (result == null || result.flat().size() > CanonicalAbi.MAX_FLAT_RESULTS) {
      return List.of();
    }
    return result.flat();
  }

  /** Binds {@code body}; {@code abi} gives the ABI of the instance being called. */
  public HostFunction bind(Supplier<CanonicalAbi> abi, Body body) {
    FunctionType type = FunctionType.of(valTypes(coreParams()), valTypes(coreResults()));
    boolean returnArea = result != null && result.flat().size() > CanonicalAbi.MAX_FLAT_RESULTS;
    int argCount = coreParams().size() - (returnArea ? 1 : 0);
    return new HostFunction(
        module,
        name,
        type,
        (instance, core) -> {
          CanonicalAbi guest = abi.get();
          long[] args = core;
          if (returnArea) {
            args = java.util.Arrays.copyOf(core, argCount);
          }
          Object value = body.apply(guest.liftParams(params, args));
          if (result == null) {
            return null;
          }
          if (returnArea) {
            guest.storeResult(result, value, core[core.length - 1] & 0xFFFF_FFFFL);
            return null;
          }
          return guest.lowerResult(result, value);
        });
  }

  private static List<ValType> valTypes(List<CoreType> types) {
    List<ValType> out = new ArrayList<>();
    for (CoreType t : types) {
      out.add(t == CoreType.I32 ? ValType.I32 : ValType.I64);
    }
    return out;
  }
}
