package io.actionstate.cleanup;

import com.dylibso.chicory.compiler.MachineFactoryCompiler;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.wasm.Parser;
import com.dylibso.chicory.wasm.WasmModule;
import com.dylibso.chicory.wasm.types.ExternalType;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import io.actionstate.cleanup.internal.AbiType;
import io.actionstate.cleanup.internal.AbiType.Case;
import io.actionstate.cleanup.internal.AbiType.ListOf;
import io.actionstate.cleanup.internal.CanonicalAbi;
import io.actionstate.cleanup.internal.ComponentBinary;
import io.actionstate.cleanup.internal.FlatMemory;
import io.actionstate.cleanup.internal.GuestFault;
import io.actionstate.cleanup.internal.aot.ValidatorModule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The {@code plans} interface of the validator component ({@code validator.wasm}) inside the
 * JVM: the component's core module runs on Chicory, a pure-Java WebAssembly runtime, and this
 * class lifts and lowers the WIT types with the canonical ABI. Every verdict, plan ID, rendered
 * byte and error sentence is the component's own, identical to the Rust, Python and browser
 * hosts.
 *
 * <p>One {@code Plans} holds one guest instance; its methods are synchronized. If the guest ever
 * traps (a bug, never a verdict about input), the call throws {@link GuestFault} and the next
 * call runs in a fresh instance.
 */
public final class Plans {
  /** How the guest's code runs. */
  public enum Engine {
    /** Chicory's bytecode interpreter: no class generation, slowest. */
    INTERPRETER,
    /**
     * Chicory's runtime compiler: the module is translated to JVM bytecode once, at load (seconds).
     * {@link #load()} needs no compilation at all: its module was compiled when this jar was built.
     */
    COMPILER
  }

  /** The guest's memory ceiling, as in the Rust host: 512 MiB (8192 pages of 64 KiB). */
  static final int MEMORY_LIMIT_PAGES = 8192;

  /** One exported function of the {@code plans} interface: its WIT signature as layouts. */
  record WitFunction(String name, List<AbiType> params, AbiType result) {
    String export() {
      return Wit.plansExport(name);
    }
  }

  static final WitFunction VERIFY_PLAN =
      new WitFunction("verify-plan", List.of(Wit.STRING), Wit.PLAN_RESULT);
  static final WitFunction RENDER_PLAN = new WitFunction("render-plan", List.of(Wit.PLAN), Wit.STRING);
  static final WitFunction PLAN_FROM_MARKERS =
      new WitFunction(
          "plan-from-markers", List.of(Wit.STRING, new ListOf(Wit.STRING)), Wit.PLAN_RESULT);
  static final WitFunction SEAL_PLAN =
      new WitFunction(
          "seal-plan", List.of(Wit.STRING, Wit.STRING, Wit.STRING, Wit.OFFSETS), Wit.PLAN_RESULT);
  static final WitFunction REPLAY_CONTROL_LOG =
      new WitFunction(
          "replay-control-log",
          List.of(new ListOf(Wit.CONTROL_ENTRY)),
          Wit.CONTROL_RECORDS_RESULT);
  static final WitFunction EFFECTIVE_BOUNDARY =
      new WitFunction("effective-boundary", List.of(new ListOf(Wit.PLAN)), Wit.OFFSETS_RESULT);
  static final WitFunction MESSAGE =
      new WitFunction("message", List.of(Wit.CLEANUP_ERROR), Wit.STRING);

  /** {@code operator-ref}: case 0 {@code uid}, case 1 {@code uid-hash}. */
  static final AbiType OPERATOR_REF = new AbiType.Variant(List.of(Wit.STRING, Wit.STRING));

  static final AbiType BYTES = new ListOf(AbiType.Prim.U8);
  static final AbiType SNAPSHOT_FILE = new AbiType.Record(List.of(Wit.STRING, BYTES));
  static final AbiType SNAPSHOT_FILE_REF = new AbiType.Record(List.of(Wit.STRING, Wit.STRING));
  static final AbiType MARKER_FILE = new AbiType.Record(List.of(Wit.STRING, Wit.STRING));

  /** {@code marker-source}: texts, files, or a snapshot ({@code snapshot-source}). */
  static final AbiType MARKER_SOURCE =
      new AbiType.Variant(
          List.of(
              new ListOf(Wit.STRING),
              new ListOf(MARKER_FILE),
              new AbiType.Record(List.of(BYTES, OPERATOR_REF, new ListOf(SNAPSHOT_FILE)))));

  static final WitFunction COMPUTE_PLAN =
      new WitFunction(
          "compute-plan",
          List.of(Wit.STRING, MARKER_SOURCE),
          AbiType.Variant.result(
              new AbiType.Record(List.of(Wit.PLAN, AbiType.Prim.U32)), Wit.CLEANUP_ERROR));
  static final WitFunction SNAPSHOT_FILES =
      new WitFunction(
          "snapshot-files",
          List.of(Wit.STRING, BYTES, AbiType.Variant.option(OPERATOR_REF)),
          AbiType.Variant.result(new ListOf(SNAPSHOT_FILE_REF), Wit.CLEANUP_ERROR));

  /** Every function this class calls. */
  static final List<WitFunction> FUNCTIONS =
      List.of(
          VERIFY_PLAN,
          RENDER_PLAN,
          PLAN_FROM_MARKERS,
          SEAL_PLAN,
          REPLAY_CONTROL_LOG,
          EFFECTIVE_BOUNDARY,
          MESSAGE,
          COMPUTE_PLAN,
          SNAPSHOT_FILES);

  private final WasmModule module;
  private final Set<String> exports;
  private final java.util.function.Function<Instance, Machine> machine;
  private CanonicalAbi guest;

  private Plans(WasmModule module, java.util.function.Function<Instance, Machine> machine) {
    this.module = module;
    this.exports = new HashSet<>();
    var section = module.exportSection();
    for (int i = 0; i < section.exportCount(); i++) {
      if (section.getExport(i).exportType() == ExternalType.FUNCTION) {
        exports.add(section.getExport(i).name());
      }
    }
    List<String> missing = new ArrayList<>();
    for (WitFunction f : FUNCTIONS) {
      if (!exports.contains(f.export())) {
        missing.add(f.export());
      }
    }
    if (!exports.contains("cabi_realloc")) {
      missing.add("cabi_realloc");
    }
    if (module.importSection().importCount() > 0) {
      throw new IllegalArgumentException(
          "the component's core module imports "
              + module.importSection().importCount()
              + " functions (e.g. "
              + module.importSection().getImport(0).module()
              + "): load validator.wasm, which imports nothing");
    }
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(
          "the component does not export the plans interface this library calls: missing "
              + missing);
    }
    this.machine = machine;
    this.guest = instantiate();
  }

  /**
   * The validator component this jar was built with, compiled to JVM classes ahead of time: no
   * file to read and nothing to compile, so loading costs class loading and one instantiation.
   */
  public static Plans load() {
    return new Plans(ValidatorModule.load(), ValidatorModule::create);
  }

  /**
   * Loads a {@code validator.wasm} file and compiles it at load (seconds; {@link #load()} is the
   * fast way to the component this jar carries). ({@code cleanup.wasm} also exports
   * {@code plans}, but its core module imports the Kafka capabilities, which this class does not
   * supply.)
   */
  public static Plans load(Path component) throws IOException {
    return load(component, Engine.COMPILER);
  }

  /** Loads a component file and runs its core module with {@code engine}. */
  public static Plans load(Path component, Engine engine) throws IOException {
    return load(Files.readAllBytes(component), engine);
  }

  /**
   * Loads a component binary: its core module exporting the {@code plans} interface.
   *
   * @throws IllegalArgumentException when the bytes are not such a component
   */
  public static Plans load(byte[] component, Engine engine) {
    Objects.requireNonNull(engine, "engine");
    List<byte[]> modules = ComponentBinary.coreModules(component);
    String wanted = Wit.plansExport(VERIFY_PLAN.name());
    for (byte[] bytes : modules) {
      WasmModule module = Parser.parse(bytes);
      var section = module.exportSection();
      for (int i = 0; i < section.exportCount(); i++) {
        if (section.getExport(i).name().equals(wanted)) {
          return new Plans(
              module, engine == Engine.COMPILER ? MachineFactoryCompiler.compile(module) : null);
        }
      }
    }
    throw new IllegalArgumentException(
        "none of the component's " + modules.size() + " core modules exports " + wanted);
  }

  /** The parsed core module (for layout checks). */
  WasmModule module() {
    return module;
  }

  private CanonicalAbi instantiate() {
    var memory = module.memorySection().orElseThrow().getMemory(0).limits();
    var limits =
        new MemoryLimits(memory.initialPages(), Math.min(memory.maximumPages(), MEMORY_LIMIT_PAGES));
    Instance.Builder builder =
        Instance.builder(module).withMemoryLimits(limits).withMemoryFactory(FlatMemory::new);
    if (machine != null) {
      builder = builder.withMachineFactory(machine);
    }
    return new CanonicalAbi(builder.build(), exports);
  }

  private Object call(WitFunction function, Object... args) {
    if (guest == null) {
      guest = instantiate();
    }
    try {
      return guest.call(function.export(), function.params(), function.result(), args);
    } catch (CanonicalAbi.UnencodableStringException e) {
      // Arguments lowered before the refused string were never handed to the guest: start
      // afresh rather than leak them.
      guest = null;
      throw e;
    } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
      // A trap or an ABI violation leaves the instance in an unknown state: never reuse it.
      guest = null;
      throw new GuestFault(
          "the component failed in " + function.name() + ": " + e, e);
    }
  }

  /** Unwraps a {@code result<T, cleanup-error>}. */
  private <T> T result(Object value, java.util.function.Function<Object, T> ok)
      throws CleanupException {
    Case c = (Case) value;
    if (c.index() == 0) {
      return ok.apply(c.payload());
    }
    CleanupError error = Wit.cleanupError(c.payload());
    throw new CleanupException(error, message(error));
  }

  /** A Java string without a UTF-8 form, refused as {@code invalid-argument}. */
  private CleanupException unencodable(String what, CanonicalAbi.UnencodableStringException e) {
    CleanupError error = new CleanupError.InvalidArgument(what + ": " + e.getMessage());
    return new CleanupException(error, message(error));
  }

  /**
   * Parses one plan document strictly and verifies that its ID matches its contents
   * ({@code verify-plan}).
   *
   * @throws CleanupException {@code invalid-plan} naming the field and value
   */
  public synchronized Plan verify(String planJson) throws CleanupException {
    Objects.requireNonNull(planJson, "planJson");
    try {
      return result(call(VERIFY_PLAN, planJson), Wit::plan);
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The plan document", e);
    }
  }

  /**
   * The plan file form: the Java tool's pretty JSON with one trailing LF ({@code render-plan}).
   * Rendering does not validate; {@link #verify} and {@link #seal} do.
   */
  public synchronized String render(Plan plan) {
    Objects.requireNonNull(plan, "plan");
    return (String) call(RENDER_PLAN, (Object) Wit.plan(plan));
  }

  /**
   * The plan of one recovery point from its subtask markers (JSON texts): per partition the
   * minimum offset ({@code plan-from-markers}).
   *
   * @throws CleanupException {@code invalid-marker} or {@code invalid-plan}
   */
  public synchronized Plan fromMarkers(String recoveryPoint, List<String> markers)
      throws CleanupException {
    Objects.requireNonNull(recoveryPoint, "recoveryPoint");
    List<Object> texts = new ArrayList<>(markers.size());
    for (String m : markers) {
      texts.add(Objects.requireNonNull(m, "marker"));
    }
    try {
      return result(call(PLAN_FROM_MARKERS, recoveryPoint, texts), Wit::plan);
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The recovery point or a marker", e);
    }
  }

  /**
   * The plan of a Flink checkpoint or savepoint, read straight from its files: the Flink Agents
   * Java tool's {@code plan --checkpoint PATH --operator-uid UID}, without running Flink. The
   * component reads {@code _metadata} and names the state files it needs; this method only reads
   * their bytes. {@code snapshot} is the snapshot directory or its {@code _metadata} file and
   * becomes the plan's {@code sourceRecoveryPoint} exactly as given ({@code toString()}).
   *
   * @param operatorUid the uid the job gave the Flink Agents action operator, or {@code null}
   * @param operatorUidHash the operator's OperatorID (32 hex digits) when it has no uid, or
   *     {@code null}; exactly one of the two
   * @throws CleanupException {@code invalid-snapshot} for a file that cannot be read (naming file
   *     and byte offset), {@code invalid-marker} with the Java tool's facts, {@code
   *     invalid-argument} for an operator that is not there (naming those that are)
   * @throws IOException when {@code _metadata} or a state file cannot be read
   */
  @SuppressWarnings("unchecked")
  public synchronized Plan fromSnapshot(Path snapshot, String operatorUid, String operatorUidHash)
      throws CleanupException, IOException {
    Objects.requireNonNull(snapshot, "snapshot");
    if ((operatorUid == null) == (operatorUidHash == null)) {
      throw new IllegalArgumentException("give exactly one of operatorUid and operatorUidHash");
    }
    Case operator = operatorUid != null ? new Case(0, operatorUid) : new Case(1, operatorUidHash);
    String location = snapshot.toString();
    Path directory;
    Path metadataFile;
    if (Files.isDirectory(snapshot)) {
      directory = snapshot;
      metadataFile = snapshot.resolve("_metadata");
    } else {
      directory = snapshot.toAbsolutePath().getParent();
      metadataFile = snapshot;
    }
    byte[] metadata = Files.readAllBytes(metadataFile);
    try {
      List<Object> needed =
          result(
              call(SNAPSHOT_FILES, location, metadata, new Case(1, operator)),
              value -> (List<Object>) value);
      List<Object> files = new ArrayList<>(needed.size());
      for (Object item : needed) {
        String path = (String) ((Object[]) item)[0];
        Path file = path.startsWith("/") ? Path.of(path) : directory.resolve(path).normalize();
        files.add(new Object[] {path, Files.readAllBytes(file)});
      }
      Case source = new Case(2, new Object[] {metadata, operator, files});
      return result(
          call(COMPUTE_PLAN, location, source), value -> Wit.plan(((Object[]) value)[0]));
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("The snapshot path or operator", e);
    }
  }

  /**
   * Validates plan fields and returns the plan with its ID computed ({@code seal-plan}).
   *
   * @throws CleanupException {@code invalid-plan}
   */
  public synchronized Plan seal(
      String sourceRecoveryPoint, String topic, String topicId, List<PartitionOffset> offsets)
      throws CleanupException {
    Objects.requireNonNull(sourceRecoveryPoint, "sourceRecoveryPoint");
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(topicId, "topicId");
    try {
      return result(
          call(SEAL_PLAN, sourceRecoveryPoint, topic, topicId, Wit.offsets(offsets)), Wit::plan);
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("A plan field", e);
    }
  }

  /**
   * Replays a whole control-topic log with every integrity rule of SPEC §7 and returns the
   * known plans with their latest status, in first-seen order ({@code replay-control-log}).
   *
   * @throws CleanupException {@code control-topic-corrupt} naming the offset
   */
  public synchronized List<ControlRecord> replayControlLog(List<ControlEntry> entries)
      throws CleanupException {
    List<Object> items = new ArrayList<>(entries.size());
    for (ControlEntry entry : entries) {
      items.add(Wit.controlEntry(entry));
    }
    try {
      return result(
          call(REPLAY_CONTROL_LOG, items),
          value -> {
            List<ControlRecord> records = new ArrayList<>();
            for (Object item : (List<?>) value) {
              records.add(Wit.controlRecord(item));
            }
            return List.copyOf(records);
          });
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("A control-topic record", e);
    }
  }

  /**
   * The effective boundary of a set of plans: the per-partition maximum
   * ({@code effective-boundary}).
   *
   * @throws CleanupException {@code invalid-plan} when a plan lists a partition twice or holds
   *     an offset or partition the parser would refuse, naming the plan by its position
   */
  public synchronized List<PartitionOffset> effectiveBoundary(List<Plan> plans)
      throws CleanupException {
    List<Object> items = new ArrayList<>(plans.size());
    for (Plan plan : plans) {
      items.add(Wit.plan(plan));
    }
    try {
      return result(call(EFFECTIVE_BOUNDARY, items), value -> List.copyOf(Wit.offsets(value)));
    } catch (CanonicalAbi.UnencodableStringException e) {
      throw unencodable("A plan field", e);
    }
  }

  /** The one-sentence message for an error, identical in every host ({@code message}). */
  public synchronized String message(CleanupError error) {
    Objects.requireNonNull(error, "error");
    return (String) call(MESSAGE, Wit.cleanupError(error));
  }

}
