package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType;
import io.actionstate.cleanup.internal.AbiType.Handle;
import io.actionstate.cleanup.internal.AbiType.ListOf;
import io.actionstate.cleanup.internal.AbiType.Prim;
import io.actionstate.cleanup.internal.AbiType.Record;
import io.actionstate.cleanup.internal.AbiType.Variant;
import io.actionstate.cleanup.internal.HostImport;
import java.util.ArrayList;
import java.util.List;

/**
 * The layouts of the {@code cleanup} and {@code conformance} worlds beyond {@code plans}: the
 * capability imports and the {@code coordinator}, {@code recovery} and {@code suite} exports, in
 * WIT declaration order. {@code WitLayoutTest} checks each against the parsed WIT files and the
 * core modules' import and export signatures.
 */
final class CleanupWit {
  private CleanupWit() {}

  static final AbiType STRING = Wit.STRING;
  static final AbiType OPTION_STRING = Variant.option(STRING);
  static final AbiType U32_LIST = new ListOf(Prim.U32);
  static final AbiType STRING_LIST = new ListOf(STRING);
  static final AbiType KAFKA_ERROR = Wit.KAFKA_ERROR;

  // --- kafka-admin -----------------------------------------------------------------------------
  static final AbiType CONFIG_ENTRY = new Record(List.of(STRING, OPTION_STRING));
  static final AbiType ADMIN_PARTITION_RANGE = new Record(List.of(Prim.U32, Prim.U64, Prim.U64));
  static final AbiType TOPIC_METADATA =
      new Record(
          List.of(
              STRING,
              STRING,
              U32_LIST,
              new ListOf(CONFIG_ENTRY),
              new ListOf(ADMIN_PARTITION_RANGE),
              Prim.U16));
  static final AbiType CLUSTER_DESCRIPTION =
      new Record(List.of(U32_LIST, new ListOf(CONFIG_ENTRY)));
  static final AbiType OFFSET_SPEC = Variant.enumOf(2);

  // --- kafka-consumer --------------------------------------------------------------------------
  static final AbiType POLLED_BATCH =
      new Record(
          List.of(
              U32_LIST,
              new ListOf(Prim.U64),
              new ListOf(Prim.U8),
              new ListOf(OPTION_STRING),
              new ListOf(OPTION_STRING),
              new ListOf(Prim.S64)));

  // --- operator-events -------------------------------------------------------------------------
  static final AbiType PARTITION_PREVIEW =
      new Record(List.of(Prim.U32, Prim.U64, Prim.U64, Prim.U64, Prim.U64));
  static final AbiType NEW_CONTROL_TOPIC =
      new Record(List.of(STRING, Prim.U32, Prim.U16, Prim.U16));
  static final AbiType REVIEW = Variant.enumOf(2);

  // --- snapshot-store --------------------------------------------------------------------------
  /** {@code store-error}: not-found, denied, unreachable, unsupported, too-large(u64), failed. */
  static final AbiType STORE_ERROR =
      new Variant(List.of(STRING, STRING, STRING, STRING, Prim.U64, STRING));

  // --- snapshots -------------------------------------------------------------------------------
  /** {@code operator-ref}: case 0 {@code uid}, case 1 {@code uid-hash}. */
  static final AbiType OPERATOR_REF = new Variant(List.of(STRING, STRING));
  static final AbiType READS = new Record(List.of(Prim.U32, Prim.U64));
  static final AbiType SNAPSHOT_PLAN = new Record(List.of(Wit.PLAN, Prim.U32, READS, STRING));
  static final AbiType STORE_FAILURE = new Record(List.of(STRING, STORE_ERROR, STRING));
  static final AbiType SNAPSHOT_FAILURE = new Variant(List.of(Wit.CLEANUP_ERROR, STORE_FAILURE));
  static final AbiType RETAINED_POINT = new Record(List.of(STRING, Wit.OFFSETS));
  static final AbiType PARTITION_BOUND =
      new Record(List.of(Prim.U32, Prim.U64, new ListOf(Prim.U32)));
  static final AbiType RETAINED_PLAN =
      new Record(
          List.of(
              Wit.PLAN,
              new ListOf(RETAINED_POINT),
              new ListOf(PARTITION_BOUND),
              Prim.U32,
              Prim.BOOL,
              STRING_LIST,
              STRING_LIST,
              STRING_LIST,
              READS,
              STRING));
  static final AbiType POINT_FAILURE = new Record(List.of(STRING, SNAPSHOT_FAILURE));
  static final AbiType RETAINED_FAILURE =
      new Variant(List.of(Wit.CLEANUP_ERROR, STORE_FAILURE, POINT_FAILURE));

  // --- coordinator -----------------------------------------------------------------------------
  static final AbiType APPLY_OPTIONS =
      new Record(List.of(STRING, Variant.option(Prim.U16), Prim.BOOL, Prim.BOOL));
  static final AbiType CONTROL_TOPIC_REPLICATION =
      new Record(
          List.of(
              STRING, Prim.U16, Prim.U16, Prim.U16, Prim.U32, Prim.U16, STRING, STRING));
  static final AbiType APPLY_WARNING = new Variant(List.of(CONTROL_TOPIC_REPLICATION, STRING));
  static final AbiType APPLY_OUTCOME = Variant.enumOf(5);
  static final AbiType APPLY_REPORT =
      new Record(
          List.of(
              STRING,
              APPLY_OUTCOME,
              Variant.option(Wit.STATUS),
              new ListOf(PARTITION_PREVIEW),
              Wit.OFFSETS,
              Wit.OFFSETS,
              STRING_LIST,
              Variant.option(NEW_CONTROL_TOPIC),
              new ListOf(APPLY_WARNING)));
  static final AbiType FAILURE_CLASS = Variant.enumOf(4);
  static final AbiType APPLY_FAILURE =
      new Record(
          List.of(
              Wit.CLEANUP_ERROR,
              Variant.option(Wit.STATUS),
              Prim.BOOL,
              Variant.option(Wit.PLAN),
              STRING,
              FAILURE_CLASS));
  static final AbiType LIVE_PARTITION =
      new Record(List.of(Prim.U32, Prim.U64, Prim.U64, Prim.U64));
  static final AbiType OPTION_S64 = Variant.option(Prim.S64);
  static final AbiType PLAN_TIMES = new Record(List.of(OPTION_S64, OPTION_S64));
  static final AbiType BOUNDARY_ORIGIN = new Record(List.of(Prim.U32, STRING));
  static final AbiType STATUS_REPORT =
      new Record(
          List.of(
              STRING,
              new ListOf(Wit.CONTROL_RECORD),
              new ListOf(PLAN_TIMES),
              Wit.OFFSETS,
              new ListOf(BOUNDARY_ORIGIN),
              OPTION_STRING,
              OPTION_STRING,
              OPTION_STRING,
              new ListOf(LIVE_PARTITION),
              OPTION_STRING));

  // --- recovery --------------------------------------------------------------------------------
  static final AbiType RECOVERY_POLICY =
      new Record(List.of(OPTION_STRING, OPTION_STRING, Prim.BOOL));
  static final AbiType RECOVERY_PARTITION_RANGE =
      new Record(List.of(Prim.U32, Prim.U64, Prim.U64, Prim.U64));
  static final AbiType RECOVERY_VERDICT =
      new Record(
          List.of(
              STRING,
              Variant.option(Wit.OFFSETS),
              Prim.BOOL,
              new ListOf(RECOVERY_PARTITION_RANGE)));
  static final AbiType RECOVERY_REFUSAL =
      new Record(
          List.of(
              Wit.CLEANUP_ERROR,
              new ListOf(Wit.BOUNDARY_VIOLATION),
              OPTION_STRING,
              STRING,
              FAILURE_CLASS,
              Variant.option(STORE_FAILURE),
              OPTION_STRING));
  /** {@code restore-source}: texts, marker files, a snapshot's bytes, or a stored snapshot. */
  static final AbiType RESTORE_SOURCE =
      new Variant(
          List.of(
              STRING_LIST,
              new ListOf(Plans.MARKER_FILE),
              new Record(
                  List.of(Plans.BYTES, Plans.OPERATOR_REF, new ListOf(Plans.SNAPSHOT_FILE))),
              new Record(List.of(STRING, Plans.OPERATOR_REF))));
  static final AbiType REPLAY_OPTIONS = new Record(List.of(Prim.U32, Prim.U32));
  static final AbiType PARTITION_PROGRESS = new Record(List.of(Prim.U32, Prim.U64, Prim.U64));
  static final AbiType REPLAY_BATCH =
      new Record(List.of(U32_LIST, Prim.BOOL, new ListOf(PARTITION_PROGRESS)));

  // --- suite -----------------------------------------------------------------------------------
  static final AbiType SUITE_TARGET = Variant.enumOf(5);
  static final AbiType SUITE_INPUTS = new Record(List.of(SUITE_TARGET, STRING, OPTION_STRING));
  static final AbiType SUITE_CHECK = new Record(List.of(STRING, Prim.BOOL, STRING));
  static final AbiType SUITE_REPORT = new Record(List.of(new ListOf(SUITE_CHECK)));

  /** One function of an interface: the WIT key ({@code name}, {@code [method]r.f}, ...). */
  record Function(String iface, String name, List<AbiType> params, AbiType result) {
    /** The core name: {@code action-state:cleanup/<iface>@<version>}. */
    String module() {
      return Wit.interfaceName(iface);
    }

    /** The core export name of an exported function. */
    String export() {
      return module() + "#" + name;
    }

    HostImport asImport() {
      return new HostImport(module(), name, params, result);
    }
  }

  private static Function f(String iface, String name, AbiType result, AbiType... params) {
    return new Function(iface, name, List.of(params), result);
  }

  private static Handle own(String resource) {
    return new Handle(resource, true);
  }

  private static Handle borrow(String resource) {
    return new Handle(resource, false);
  }

  // --- imports ---------------------------------------------------------------------------------
  static final Function NOW_MS = f("clock", "now-ms", Prim.U64);
  static final Function SLEEP_MS = f("clock", "sleep-ms", null, Prim.U32);
  static final Function OPERATION_TIMEOUT_MS = f("clock", "operation-timeout-ms", Prim.U32);
  static final Function DESCRIBE =
      f(
          "kafka-admin",
          "describe",
          Variant.result(new ListOf(Variant.option(TOPIC_METADATA)), KAFKA_ERROR),
          STRING_LIST,
          STRING_LIST,
          Prim.BOOL);
  static final Function DESCRIBE_CLUSTER =
      f(
          "kafka-admin",
          "describe-cluster",
          Variant.result(CLUSTER_DESCRIPTION, KAFKA_ERROR),
          STRING_LIST);
  static final Function CREATE_TOPIC =
      f(
          "kafka-admin",
          "create-topic",
          Variant.result(Prim.BOOL, KAFKA_ERROR),
          STRING,
          Prim.U32,
          Prim.U16,
          new ListOf(CONFIG_ENTRY));
  static final Function LIST_OFFSETS =
      f(
          "kafka-admin",
          "list-offsets",
          Variant.result(Wit.OFFSETS, KAFKA_ERROR),
          STRING,
          U32_LIST,
          OFFSET_SPEC);
  static final Function DELETE_RECORDS =
      f(
          "kafka-admin",
          "delete-records",
          Variant.result(Wit.OFFSETS, KAFKA_ERROR),
          STRING,
          Wit.OFFSETS);
  static final Function WRITER_OPEN =
      f(
          "kafka-writer",
          "[static]writer.open",
          Variant.result(own("writer"), KAFKA_ERROR),
          OPTION_STRING);
  static final Function WRITER_APPEND =
      f(
          "kafka-writer",
          "[method]writer.append",
          Variant.result(Prim.U64, KAFKA_ERROR),
          borrow("writer"),
          STRING,
          Prim.U32,
          STRING,
          STRING);
  static final Function WRITER_DROP =
      f("kafka-writer", "[resource-drop]writer", null, own("writer"));
  static final Function CONSUMER_OPEN =
      f(
          "kafka-consumer",
          "[static]consumer.open",
          Variant.result(own("consumer"), KAFKA_ERROR),
          STRING);
  static final Function CONSUMER_ASSIGN =
      f(
          "kafka-consumer",
          "[method]consumer.assign",
          Variant.result(null, KAFKA_ERROR),
          borrow("consumer"),
          Wit.OFFSETS);
  static final Function CONSUMER_POSITION =
      f(
          "kafka-consumer",
          "[method]consumer.position",
          Variant.result(Wit.OFFSETS, KAFKA_ERROR),
          borrow("consumer"));
  static final Function CONSUMER_POLL =
      f(
          "kafka-consumer",
          "[method]consumer.poll",
          Variant.result(POLLED_BATCH, KAFKA_ERROR),
          borrow("consumer"),
          Prim.U32,
          Prim.U32,
          Prim.BOOL);
  static final Function CONSUMER_DROP =
      f("kafka-consumer", "[resource-drop]consumer", null, own("consumer"));
  static final Function BEFORE_COMMIT =
      f(
          "operator-events",
          "before-commit",
          REVIEW,
          STRING,
          new ListOf(PARTITION_PREVIEW),
          Variant.option(NEW_CONTROL_TOPIC));
  static final Function VERIFIED = f("operator-events", "verified", null, Wit.PLAN);
  static final Function COMMITTED = f("operator-events", "committed", null, STRING);
  static final Function RETRYING = f("operator-events", "retrying", null, STRING, Prim.U64);
  static final Function STORE_READ =
      f(
          "snapshot-store",
          "read",
          Variant.result(new ListOf(Prim.U8), STORE_ERROR),
          STRING,
          Prim.U64);
  static final Function STORE_LIST_FOLDER =
      f("snapshot-store", "list-folder", Variant.result(STRING_LIST, STORE_ERROR), STRING);

  /** The capability imports (both worlds), then {@code operator-events} (cleanup only). */
  static final List<Function> IMPORTS =
      List.of(
          NOW_MS,
          SLEEP_MS,
          OPERATION_TIMEOUT_MS,
          DESCRIBE,
          DESCRIBE_CLUSTER,
          CREATE_TOPIC,
          LIST_OFFSETS,
          DELETE_RECORDS,
          WRITER_OPEN,
          WRITER_APPEND,
          WRITER_DROP,
          CONSUMER_OPEN,
          CONSUMER_ASSIGN,
          CONSUMER_POSITION,
          CONSUMER_POLL,
          CONSUMER_DROP,
          VERIFIED,
          BEFORE_COMMIT,
          COMMITTED,
          RETRYING,
          STORE_READ,
          STORE_LIST_FOLDER);

  // --- exports ---------------------------------------------------------------------------------
  static final Function APPLY =
      f(
          "coordinator",
          "apply",
          Variant.result(APPLY_REPORT, APPLY_FAILURE),
          STRING,
          APPLY_OPTIONS);
  static final Function PREVIEW_PLAN =
      f(
          "coordinator",
          "preview-plan",
          Variant.result(new ListOf(PARTITION_PREVIEW), Wit.CLEANUP_ERROR),
          STRING);
  static final Function CONTROL_STATUS =
      f("coordinator", "control-status", Variant.result(STATUS_REPORT, Wit.CLEANUP_ERROR), STRING);
  static final Function CHECK_RECOVERY =
      f(
          "recovery",
          "check-recovery",
          Variant.result(RECOVERY_VERDICT, RECOVERY_REFUSAL),
          RESTORE_SOURCE,
          RECOVERY_POLICY);
  static final Function SESSION_START =
      f(
          "recovery",
          "[static]recovery-session.start",
          Variant.result(own("recovery-session"), Wit.CLEANUP_ERROR),
          STRING,
          RECOVERY_POLICY);
  static final Function SESSION_RESTORE =
      f(
          "recovery",
          "[method]recovery-session.restore",
          Variant.result(RECOVERY_VERDICT, RECOVERY_REFUSAL),
          borrow("recovery-session"),
          RESTORE_SOURCE,
          REPLAY_OPTIONS);
  static final Function SESSION_NEXT_BATCH =
      f(
          "recovery",
          "[method]recovery-session.next-batch",
          Variant.result(REPLAY_BATCH, Wit.CLEANUP_ERROR),
          borrow("recovery-session"),
          Prim.U32);
  static final Function SESSION_SNAPSHOT_MARKER =
      f(
          "recovery",
          "[method]recovery-session.snapshot-marker",
          Variant.result(STRING, Wit.CLEANUP_ERROR),
          borrow("recovery-session"));
  static final Function SNAPSHOT_MARKER =
      f("recovery", "snapshot-marker", Variant.result(STRING, Wit.CLEANUP_ERROR), STRING);
  static final Function SUITE_RUN = f("suite", "run", SUITE_REPORT, SUITE_INPUTS);

  // --- marker-planning -------------------------------------------------------------------------
  static final AbiType MARKER_FILES_PLAN = new Record(List.of(Wit.PLAN, Prim.U32));
  static final Function PLANNER_NEW =
      f(
          "marker-planning",
          "[constructor]marker-files-planner",
          own("marker-files-planner"),
          STRING);
  static final Function PLANNER_ADD_FILE =
      f(
          "marker-planning",
          "[method]marker-files-planner.add-file",
          Variant.result(null, Wit.CLEANUP_ERROR),
          borrow("marker-files-planner"),
          STRING,
          STRING);
  static final Function PLANNER_FINISH =
      f(
          "marker-planning",
          "[method]marker-files-planner.finish",
          Variant.result(MARKER_FILES_PLAN, Wit.CLEANUP_ERROR),
          borrow("marker-files-planner"));

  static final Function PLAN_SNAPSHOT =
      f(
          "snapshots",
          "plan-snapshot",
          Variant.result(SNAPSHOT_PLAN, SNAPSHOT_FAILURE),
          STRING,
          OPTION_STRING,
          OPERATOR_REF);

  static final Function PLAN_RETAINED =
      f(
          "snapshots",
          "plan-retained",
          Variant.result(RETAINED_PLAN, RETAINED_FAILURE),
          STRING_LIST,
          STRING_LIST,
          OPERATOR_REF);

  /** Every export this library calls. */
  static final List<Function> EXPORTS =
      List.of(
          APPLY,
          PREVIEW_PLAN,
          CONTROL_STATUS,
          CHECK_RECOVERY,
          SESSION_START,
          SESSION_RESTORE,
          SESSION_NEXT_BATCH,
          SESSION_SNAPSHOT_MARKER,
          SNAPSHOT_MARKER,
          SUITE_RUN,
          PLANNER_NEW,
          PLANNER_ADD_FILE,
          PLANNER_FINISH,
          PLAN_SNAPSHOT,
          PLAN_RETAINED);

  /** Every import and export, for the layout checks. */
  static List<Function> all() {
    List<Function> all = new ArrayList<>(IMPORTS);
    all.addAll(EXPORTS);
    return all;
  }
}
