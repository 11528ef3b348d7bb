package io.actionstate.cleanup;

import com.dylibso.chicory.runtime.HostFunction;
import com.dylibso.chicory.runtime.ImportValues;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.wasm.WasmModule;
import com.dylibso.chicory.wasm.types.ExternalType;
import com.dylibso.chicory.wasm.types.FunctionImport;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import com.dylibso.chicory.wasm.types.ValType;
import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.internal.AbiType.Case;
import io.actionstate.cleanup.internal.CanonicalAbi;
import io.actionstate.cleanup.internal.FlatMemory;
import io.actionstate.cleanup.internal.GuestFault;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * One core module of the {@code cleanup} or {@code conformance} world inside Chicory, with the
 * capability imports bound to a {@link Capabilities} and the handle tables the component model
 * keeps for resources: the host's writers and consumers, and the representations of the
 * resources the component exports ({@code recovery-session}).
 *
 * <p>Not thread-safe: its owner serializes calls. A trap (an exception out of the guest or out of
 * an import, a bad handle, an ABI violation) discards the instance with every resource it held;
 * the next call instantiates afresh and {@link #generation()} changes, so resources of the old
 * instance are known to be gone.
 */
final class ComponentHost implements AutoCloseable {
  /** The guest's memory ceiling, as in the Rust host: 512 MiB. */
  static final int MEMORY_LIMIT_PAGES = 8192;

  private final WasmModule module;
  private final Function<Instance, Machine> machine;
  private final Set<String> exports = new HashSet<>();
  final Capabilities capabilities;
  /** Where {@code operator-events} go (the owner sets them per call). */
  OperatorEvents events = OperatorEvents.NONE;
  /** Where {@code snapshot-store} reads. */
  SnapshotStore snapshotStore = new LocalSnapshotStore();

  private CanonicalAbi guest;
  private int generation;
  private final Handles<Capabilities.Writer> writers = new Handles<>();
  private final Handles<Capabilities.Consumer> consumers = new Handles<>();
  private final Map<String, Handles<Integer>> exported = new HashMap<>();
  /** The consumer handle of the latest {@code poll} (for {@code next-batch} indices). */
  int lastPolled;

  ComponentHost(WasmModule module, Function<Instance, Machine> machine, Capabilities capabilities) {
    this.module = module;
    this.machine = machine;
    this.capabilities = capabilities;
    var section = module.exportSection();
    for (int i = 0; i < section.exportCount(); i++) {
      if (section.getExport(i).exportType() == ExternalType.FUNCTION) {
        exports.add(section.getExport(i).name());
      }
    }
  }

  /** The parsed core module (for layout checks). */
  WasmModule module() {
    return module;
  }

  boolean exports(String name) {
    return exports.contains(name);
  }

  int generation() {
    return generation;
  }

  /** A handle table: small positive integers, never reused within one instance. */
  static final class Handles<T> {
    private final Map<Integer, T> items = new HashMap<>();
    private int next = 1;

    int add(T item) {
      items.put(next, item);
      return next++;
    }

    T get(long handle, String what) {
      T item = items.get((int) handle);
      if (handle <= 0 || handle > Integer.MAX_VALUE || item == null) {
        throw new IllegalStateException("the component used " + what + " handle " + handle
            + ", which it does not hold");
      }
      return item;
    }

    T remove(long handle, String what) {
      T item = get(handle, what);
      items.remove((int) handle);
      return item;
    }

    List<T> clear() {
      List<T> all = new ArrayList<>(items.values());
      items.clear();
      return all;
    }
  }

  private CanonicalAbi guest() {
    if (guest == null) {
      instantiate();
    }
    return guest;
  }

  private void instantiate() {
    var memory = module.memorySection().orElseThrow().getMemory(0).limits();
    var limits =
        new MemoryLimits(
            memory.initialPages(), Math.min(memory.maximumPages(), MEMORY_LIMIT_PAGES));
    Instance.Builder builder =
        Instance.builder(module)
            .withMemoryLimits(limits)
            .withMemoryFactory(FlatMemory::new)
            .withImportValues(ImportValues.builder().withFunctions(bindImports()).build());
    if (machine != null) {
      builder = builder.withMachineFactory(machine);
    }
    guest = new CanonicalAbi(builder.build(), exports);
  }

  private List<com.dylibso.chicory.runtime.ImportFunction> bindImports() {
    Map<String, HostFunction> known = new HashMap<>();
    HostBindings bindings = new HostBindings(this);
    for (CleanupWit.Function f : CleanupWit.IMPORTS) {
      known.put(f.module() + " " + f.name(), f.asImport().bind(this::guest, bindings.body(f)));
    }
    List<com.dylibso.chicory.runtime.ImportFunction> bound = new ArrayList<>();
    var imports = module.importSection();
    for (int i = 0; i < imports.importCount(); i++) {
      if (imports.getImport(i).importType() != ExternalType.FUNCTION) {
        throw new IllegalArgumentException(
            "the core module imports " + imports.getImport(i).importType() + " "
                + imports.getImport(i).name() + ", which no host supplies");
      }
      FunctionImport imp = (FunctionImport) imports.getImport(i);
      HostFunction f = known.get(imp.module() + " " + imp.name());
      if (f == null) {
        f = resourceIntrinsic(imp.module(), imp.name());
      }
      if (f == null) {
        throw new IllegalArgumentException(
            "the core module imports " + imp.module() + "#" + imp.name()
                + ", which this library does not implement");
      }
      bound.add(f);
    }
    return bound;
  }

  /**
   * {@code [resource-new]r} and {@code [resource-drop]r} of a resource the component exports:
   * the handle table maps the host's handles to the component's representations.
   */
  private HostFunction resourceIntrinsic(String module, String name) {
    if (!module.startsWith("[export]")) {
      return null;
    }
    String iface = module.substring("[export]".length());
    if (name.startsWith("[resource-new]")) {
      String resource = name.substring("[resource-new]".length());
      return new HostFunction(
          module,
          name,
          com.dylibso.chicory.wasm.types.FunctionType.of(List.of(ValType.I32), List.of(ValType.I32)),
          (instance, args) ->
              new long[] {table(resource).add((int) args[0])});
    }
    if (name.startsWith("[resource-drop]")) {
      String resource = name.substring("[resource-drop]".length());
      return new HostFunction(
          module,
          name,
          com.dylibso.chicory.wasm.types.FunctionType.of(List.of(ValType.I32), List.of()),
          (instance, args) -> {
            int rep = table(resource).remove(args[0] & 0xFFFF_FFFFL, resource);
            String dtor = iface + "#[dtor]" + resource;
            if (exports.contains(dtor)) {
              guest().call(dtor, List.of(io.actionstate.cleanup.internal.AbiType.Prim.U32), null,
                  (long) rep);
            }
            return null;
          });
    }
    return null;
  }

  private Handles<Integer> table(String resource) {
    return exported.computeIfAbsent(resource, r -> new Handles<>());
  }

  Handles<Capabilities.Writer> writers() {
    return writers;
  }

  Handles<Capabilities.Consumer> consumers() {
    return consumers;
  }

  /**
   * Calls an export. A trap discards the instance (and closes the writers and consumers it held)
   * and throws {@link GuestFault}.
   */
  Object call(CleanupWit.Function function, Object... args) {
    CanonicalAbi abi = guest();
    try {
      return abi.call(function.export(), function.params(), function.result(), args);
    } catch (CanonicalAbi.UnencodableStringException e) {
      discard();
      throw e;
    } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
      discard();
      throw new GuestFault("the component failed in " + function.name() + ": " + e, e);
    }
  }

  /** The component's representation of the exported resource {@code handle} (an own handle). */
  int representation(String resource, long handle) {
    return table(resource).get(handle, resource);
  }

  /** Drops the host's own handle of an exported resource: the component's destructor runs. */
  void dropExported(String iface, String resource, long handle, int generationOfHandle) {
    if (guest == null || generationOfHandle != generation) {
      return;
    }
    int rep = table(resource).remove(handle, resource);
    String dtor = Wit.interfaceName(iface) + "#[dtor]" + resource;
    if (exports.contains(dtor)) {
      try {
        guest.call(dtor, List.of(io.actionstate.cleanup.internal.AbiType.Prim.U32), null,
            (long) rep);
      } catch (RuntimeException | StackOverflowError e) {
        discard();
        throw new GuestFault("the component failed dropping a " + resource + ": " + e, e);
      }
    }
  }

  /** Throws away the instance and every resource it held. */
  void discard() {
    // Resources of the discarded instance are gone from this moment: a session holding one
    // compares generations and refuses.
    generation++;
    guest = null;
    exported.clear();
    for (Capabilities.Writer w : writers.clear()) {
      closeQuietly(w);
    }
    for (Capabilities.Consumer c : consumers.clear()) {
      closeQuietly(c);
    }
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // Closing a client that failed is best effort; the instance is gone either way.
    }
  }

  /** Unwraps a {@code result<T, cleanup-error>} value. */
  <T> T result(Object value, Function<Object, T> ok, Function<CleanupError, String> message)
      throws CleanupException {
    Case c = (Case) value;
    if (c.index() == 0) {
      return ok.apply(c.payload());
    }
    CleanupError error = Wit.cleanupError(c.payload());
    throw new CleanupException(error, message.apply(error));
  }

  @Override
  public void close() {
    discard();
  }
}
