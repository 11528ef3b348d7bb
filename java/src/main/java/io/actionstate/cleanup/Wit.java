package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType;
import io.actionstate.cleanup.internal.AbiType.Case;
import io.actionstate.cleanup.internal.AbiType.ListOf;
import io.actionstate.cleanup.internal.AbiType.Prim;
import io.actionstate.cleanup.internal.AbiType.Record;
import io.actionstate.cleanup.internal.AbiType.Str;
import io.actionstate.cleanup.internal.AbiType.Variant;
import io.actionstate.cleanup.internal.CanonicalAbi;
import io.actionstate.cleanup.internal.GuestFault;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The WIT types of {@code wit/types.wit} and {@code wit/plans.wit} as canonical-ABI layouts, and
 * the conversions between their generic values and this package's records. Field and case
 * order follow the WIT declarations exactly; {@code WitLayoutTest} checks the resulting core
 * signatures against the component's own exports.
 */
final class Wit {
  private Wit() {}

  static final Str STRING = new Str();
  static final AbiType PARTITION_OFFSET = new Record(List.of(Prim.U32, Prim.U64));
  static final AbiType OFFSETS = new ListOf(PARTITION_OFFSET);
  static final AbiType PLAN =
      new Record(List.of(Prim.U32, STRING, STRING, STRING, STRING, OFFSETS));
  static final AbiType STATUS = Variant.enumOf(2);
  static final AbiType CONTROL_RECORD = new Record(List.of(STATUS, PLAN));
  static final AbiType CONTROL_ENTRY =
      new Record(List.of(Prim.U64, Variant.option(STRING), Variant.option(STRING)));
  static final AbiType BOUNDARY_VIOLATION =
      new Record(List.of(STRING, Prim.U32, Prim.U64, Prim.U64));
  static final AbiType BOUNDARY_REGRESSION =
      new Record(List.of(STRING, Prim.U32, Prim.U64, Prim.U64));
  static final AbiType TOPIC_CHANGE =
      new Record(
          List.of(
              STRING, STRING, STRING, STRING, new ListOf(Prim.U32), new ListOf(Prim.U32)));
  static final AbiType RANGE_VIOLATION =
      new Record(
          List.of(
              STRING, Prim.U32, Prim.U64, Variant.option(Prim.U64), Variant.option(Prim.U64)));
  static final AbiType KAFKA_DETAIL = new Record(List.of(Prim.S32, STRING, STRING));

  /** {@code kafka-error}: ten cases, each carrying a {@code kafka-detail}. */
  static final Variant KAFKA_ERROR =
      new Variant(Collections.nCopies(CleanupError.KafkaErrorKind.values().length, KAFKA_DETAIL));

  static final AbiType KAFKA_FAILURE =
      new Record(List.of(STRING, STRING, Prim.BOOL, Variant.option(KAFKA_ERROR)));

  /** {@code cleanup-error}, cases in declaration order. */
  static final Variant CLEANUP_ERROR =
      new Variant(
          List.of(
              STRING, // 0 invalid-plan
              STRING, // 1 invalid-marker
              STRING, // 2 invalid-argument
              BOUNDARY_VIOLATION, // 3
              BOUNDARY_REGRESSION, // 4
              TOPIC_CHANGE, // 5 topic-changed
              STRING, // 6 unsafe-topic-config
              STRING, // 7 invalid-control-topic
              RANGE_VIOLATION, // 8 offsets-unavailable
              RANGE_VIOLATION, // 9 delete-unverified
              STRING, // 10 control-topic-corrupt
              STRING, // 11 recovery-refused
              STRING, // 12 conflicting-policies
              STRING, // 13 fenced
              STRING, // 14 replay-stalled
              STRING, // 15 replay-record-invalid
              KAFKA_FAILURE, // 16 kafka
              STRING // 17 invalid-snapshot
              ));

  static final AbiType PLAN_RESULT = Variant.result(PLAN, CLEANUP_ERROR);
  static final AbiType CONTROL_RECORDS_RESULT =
      Variant.result(new ListOf(CONTROL_RECORD), CLEANUP_ERROR);
  static final AbiType OFFSETS_RESULT = Variant.result(OFFSETS, CLEANUP_ERROR);

  /** Where the WIT files this library was built against lie on the class path. */
  static final String WIT_RESOURCES = "/io/actionstate/cleanup/wit/";

  /**
   * The WIT package and version, e.g. {@code action-state:cleanup@0.3.0}: read from the package
   * line of {@code world.wit}, which the build copies into the jar.
   */
  static final String PACKAGE = readPackage();

  private static String readPackage() {
    String text = witText("world.wit");
    Matcher m =
        Pattern.compile("(?m)^package\\s+([a-z0-9-]+:[a-z0-9-]+@[0-9A-Za-z.+-]+)\\s*;")
            .matcher(text);
    if (!m.find()) {
      throw new IllegalStateException("world.wit in this jar has no package line");
    }
    return m.group(1);
  }

  /** The text of a WIT file bundled in this jar ({@code world.wit}, {@code types.wit}, ...). */
  static String witText(String file) {
    try (InputStream in = Wit.class.getResourceAsStream(WIT_RESOURCES + file)) {
      if (in == null) {
        throw new IllegalStateException(
            "this jar lacks " + WIT_RESOURCES + file + ": build it with Maven from the repository");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The core export name of a function of the {@code plans} interface, e.g.
   * {@code action-state:cleanup/plans@0.3.0#verify-plan}.
   */
  static String plansExport(String function) {
    return interfaceName("plans") + "#" + function;
  }

  /** The versioned name of an interface, e.g. {@code action-state:cleanup/clock@0.3.0}. */
  static String interfaceName(String iface) {
    int at = PACKAGE.indexOf('@');
    return PACKAGE.substring(0, at) + "/" + iface + PACKAGE.substring(at);
  }

  // --- to Java -------------------------------------------------------------------------------

  static int u32AsInt(Object value, String what) {
    return u32AsInt((long) (Long) value, what);
  }

  private static int u32AsInt(long v, String what) {
    if (v > Integer.MAX_VALUE) {
      throw new GuestFault("the component returned " + what + " " + v + ", beyond 2^31-1");
    }
    return (int) v;
  }

  static long u64AsLong(Object value, String what) {
    return u64AsLong((long) (Long) value, what);
  }

  private static long u64AsLong(long v, String what) {
    if (v < 0) {
      throw new GuestFault(
          "the component returned " + what + " " + Long.toUnsignedString(v) + ", beyond 2^63-1");
    }
    return v;
  }

  static PartitionOffset partitionOffset(Object value) {
    Object[] f = (Object[]) value;
    return new PartitionOffset(u32AsInt(f[0], "partition"), u64AsLong(f[1], "offset"));
  }

  static List<PartitionOffset> offsets(Object value) {
    if (value instanceof CanonicalAbi.PlainRecords rows && rows.record().equals(PARTITION_OFFSET)) {
      // Straight from the guest's bytes: no boxed fields per partition.
      List<PartitionOffset> offsets = new ArrayList<>(rows.size());
      for (int i = 0; i < rows.size(); i++) {
        offsets.add(
            new PartitionOffset(
                u32AsInt(rows.u32(i, 0), "partition"), u64AsLong(rows.u64(i, 1), "offset")));
      }
      return offsets;
    }
    List<PartitionOffset> offsets = new ArrayList<>();
    for (Object item : (List<?>) value) {
      offsets.add(partitionOffset(item));
    }
    return offsets;
  }

  static Plan plan(Object value) {
    Object[] f = (Object[]) value;
    return new Plan(
        u32AsInt(f[0], "schema version"),
        (String) f[1],
        (String) f[2],
        (String) f[3],
        (String) f[4],
        offsets(f[5]));
  }

  static ControlRecord controlRecord(Object value) {
    Object[] f = (Object[]) value;
    Status status = ((Case) f[0]).index() == 0 ? Status.COMMITTED : Status.APPLIED;
    return new ControlRecord(status, plan(f[1]));
  }

  private static OptionalLong optionalU64(Object value, String what) {
    Case c = (Case) value;
    return c.index() == 0 ? OptionalLong.empty() : OptionalLong.of(u64AsLong(c.payload(), what));
  }

  private static List<Integer> partitions(Object value) {
    List<Integer> partitions = new ArrayList<>();
    for (Object item : (List<?>) value) {
      partitions.add(u32AsInt(item, "partition"));
    }
    return partitions;
  }

  private static CleanupError.RangeViolation rangeViolation(Object value) {
    Object[] f = (Object[]) value;
    return new CleanupError.RangeViolation(
        (String) f[0],
        u32AsInt(f[1], "partition"),
        u64AsLong(f[2], "offset"),
        optionalU64(f[3], "beginning"),
        optionalU64(f[4], "end"));
  }

  static CleanupError.BoundaryViolation boundaryViolation(Object value) {
    Object[] f = (Object[]) value;
    return new CleanupError.BoundaryViolation(
        (String) f[0],
        u32AsInt(f[1], "partition"),
        u64AsLong(f[2], "offset"),
        u64AsLong(f[3], "boundary"));
  }

  static CleanupError cleanupError(Object value) {
    Case c = (Case) value;
    Object p = c.payload();
    return switch (c.index()) {
      case 0 -> new CleanupError.InvalidPlan((String) p);
      case 1 -> new CleanupError.InvalidMarker((String) p);
      case 2 -> new CleanupError.InvalidArgument((String) p);
      case 3 -> boundaryViolation(p);
      case 4 -> {
        Object[] f = (Object[]) p;
        yield new CleanupError.BoundaryRegression(
            (String) f[0],
            u32AsInt(f[1], "partition"),
            u64AsLong(f[2], "offset"),
            u64AsLong(f[3], "boundary"));
      }
      case 5 -> {
        Object[] f = (Object[]) p;
        yield new CleanupError.TopicChanged(
            (String) f[0],
            (String) f[1],
            (String) f[2],
            (String) f[3],
            partitions(f[4]),
            partitions(f[5]));
      }
      case 6 -> new CleanupError.UnsafeTopicConfig((String) p);
      case 7 -> new CleanupError.InvalidControlTopic((String) p);
      case 8 -> new CleanupError.OffsetsUnavailable(rangeViolation(p));
      case 9 -> new CleanupError.DeleteUnverified(rangeViolation(p));
      case 10 -> new CleanupError.ControlTopicCorrupt((String) p);
      case 11 -> new CleanupError.RecoveryRefused((String) p);
      case 12 -> new CleanupError.ConflictingPolicies((String) p);
      case 13 -> new CleanupError.Fenced((String) p);
      case 14 -> new CleanupError.ReplayStalled((String) p);
      case 15 -> new CleanupError.ReplayRecordInvalid((String) p);
      case 16 -> {
        Object[] f = (Object[]) p;
        Case cause = (Case) f[3];
        yield new CleanupError.Kafka(
            (String) f[0],
            (String) f[1],
            (Boolean) f[2],
            cause.index() == 0 ? Optional.empty() : Optional.of(kafkaError(cause.payload())));
      }
      case 17 -> new CleanupError.InvalidSnapshot((String) p);
      default -> throw new GuestFault("cleanup-error has no case " + c.index());
    };
  }

  static CleanupError.KafkaError kafkaError(Object value) {
    Case c = (Case) value;
    CleanupError.KafkaErrorKind[] kinds = CleanupError.KafkaErrorKind.values();
    if (c.index() < 0 || c.index() >= kinds.length) {
      throw new GuestFault("kafka-error has no case " + c.index());
    }
    Object[] f = (Object[]) c.payload();
    return new CleanupError.KafkaError(
        kinds[c.index()], (int) (long) (Long) f[0], (String) f[1], (String) f[2]);
  }

  // --- from Java -----------------------------------------------------------------------------

  static Object[] partitionOffset(PartitionOffset po) {
    return new Object[] {(long) po.partition(), po.offset()};
  }

  static List<Object> offsets(List<PartitionOffset> offsets) {
    List<Object> items = new ArrayList<>(offsets.size());
    for (PartitionOffset po : offsets) {
      items.add(partitionOffset(po));
    }
    return items;
  }

  static Object[] plan(Plan plan) {
    if (plan.schemaVersion() < 0) {
      throw new IllegalArgumentException("schema version " + plan.schemaVersion() + " is negative");
    }
    return new Object[] {
      (long) plan.schemaVersion(),
      plan.planId(),
      plan.sourceRecoveryPoint(),
      plan.topic(),
      plan.topicId(),
      offsets(plan.offsets())
    };
  }

  static Object[] controlEntry(ControlEntry entry) {
    return new Object[] {entry.offset(), option(entry.key()), option(entry.value())};
  }

  private static Case option(Object value) {
    return value == null ? new Case(0, null) : new Case(1, value);
  }

  private static Object[] rangeViolation(CleanupError.RangeViolation r) {
    return new Object[] {
      r.topic(),
      (long) r.partition(),
      r.requested(),
      r.beginning().isPresent() ? new Case(1, r.beginning().getAsLong()) : new Case(0, null),
      r.end().isPresent() ? new Case(1, r.end().getAsLong()) : new Case(0, null)
    };
  }

  private static List<Object> partitions(List<Integer> partitions) {
    List<Object> items = new ArrayList<>();
    for (int p : partitions) {
      items.add((long) p);
    }
    return items;
  }

  static Case cleanupError(CleanupError error) {
    if (error instanceof CleanupError.InvalidPlan e) {
      return new Case(0, e.detail());
    } else if (error instanceof CleanupError.InvalidMarker e) {
      return new Case(1, e.detail());
    } else if (error instanceof CleanupError.InvalidArgument e) {
      return new Case(2, e.detail());
    } else if (error instanceof CleanupError.BoundaryViolation e) {
      return new Case(
          3, new Object[] {e.topic(), (long) e.partition(), e.requested(), e.boundary()});
    } else if (error instanceof CleanupError.BoundaryRegression e) {
      return new Case(
          4, new Object[] {e.planId(), (long) e.partition(), e.planned(), e.boundary()});
    } else if (error instanceof CleanupError.TopicChanged e) {
      return new Case(
          5,
          new Object[] {
            e.topic(),
            e.context(),
            e.expectedTopicId(),
            e.foundTopicId(),
            partitions(e.expectedPartitions()),
            partitions(e.foundPartitions())
          });
    } else if (error instanceof CleanupError.UnsafeTopicConfig e) {
      return new Case(6, e.detail());
    } else if (error instanceof CleanupError.InvalidControlTopic e) {
      return new Case(7, e.detail());
    } else if (error instanceof CleanupError.OffsetsUnavailable e) {
      return new Case(8, rangeViolation(e.range()));
    } else if (error instanceof CleanupError.DeleteUnverified e) {
      return new Case(9, rangeViolation(e.range()));
    } else if (error instanceof CleanupError.ControlTopicCorrupt e) {
      return new Case(10, e.detail());
    } else if (error instanceof CleanupError.RecoveryRefused e) {
      return new Case(11, e.detail());
    } else if (error instanceof CleanupError.ConflictingPolicies e) {
      return new Case(12, e.detail());
    } else if (error instanceof CleanupError.Fenced e) {
      return new Case(13, e.detail());
    } else if (error instanceof CleanupError.ReplayStalled e) {
      return new Case(14, e.detail());
    } else if (error instanceof CleanupError.ReplayRecordInvalid e) {
      return new Case(15, e.detail());
    } else if (error instanceof CleanupError.InvalidSnapshot e) {
      return new Case(17, e.detail());
    }
    CleanupError.Kafka e = (CleanupError.Kafka) error;
    return new Case(
        16,
        new Object[] {
          e.operation(),
          e.message(),
          e.retriable(),
          e.cause().isPresent() ? new Case(1, kafkaError(e.cause().get())) : new Case(0, null)
        });
  }

  static Case kafkaError(CleanupError.KafkaError error) {
    return new Case(
        error.kind().ordinal(),
        new Object[] {(long) error.code(), error.name(), error.message()});
  }
}
