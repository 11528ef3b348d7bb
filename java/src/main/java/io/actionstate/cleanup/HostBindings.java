package io.actionstate.cleanup;

import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.capability.Capabilities.ConfigEntry;
import io.actionstate.cleanup.capability.Capabilities.OffsetSpec;
import io.actionstate.cleanup.capability.Capabilities.PartitionRange;
import io.actionstate.cleanup.capability.Capabilities.PolledBatch;
import io.actionstate.cleanup.capability.Capabilities.TopicMetadata;
import io.actionstate.cleanup.capability.KafkaFailure;
import io.actionstate.cleanup.internal.AbiType.Case;
import io.actionstate.cleanup.internal.HostImport;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The bodies of the capability imports: each lifts the component's values into the
 * {@link Capabilities} call, and lowers the answer (or the {@link KafkaFailure}) into the WIT
 * {@code result}. Values from the component are untrusted: a partition beyond 2^31-1 or an
 * offset beyond 2^63-1 is a broken invariant and traps; a handle the component does not hold
 * traps.
 */
final class HostBindings {
  private final ComponentHost host;
  private final Capabilities caps;

  HostBindings(ComponentHost host) {
    this.host = host;
    this.caps = host.capabilities;
  }

  interface StoreCall {
    Object run() throws SnapshotStoreException;
  }

  /** A store call as the WIT's {@code result<_, store-error>}. */
  private static Case store(StoreCall call) {
    try {
      return new Case(0, call.run());
    } catch (SnapshotStoreException e) {
      int kind = e.kind().ordinal();
      Object payload = e.kind() == SnapshotStoreException.Kind.TOO_LARGE ? (Object) e.size() : e.getMessage();
      return new Case(1, new Case(kind, payload));
    } catch (RuntimeException e) {
      return new Case(1, new Case(SnapshotStoreException.Kind.FAILED.ordinal(), String.valueOf(e)));
    }
  }

  interface Call {
    Object run() throws KafkaFailure;
  }

  /** {@code result<T, kafka-error>}: ok with the call's value, or err with the failure's case. */
  private static Case kafka(Call call) {
    try {
      return new Case(0, call.run());
    } catch (KafkaFailure e) {
      return new Case(1, Wit.kafkaError(e.error()));
    }
  }

  private static int u32(Object value, String what) {
    long v = (Long) value;
    if (v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("the component passed " + what + " " + v
          + ", beyond 2^31-1");
    }
    return (int) v;
  }

  private static List<String> strings(Object value) {
    List<String> out = new ArrayList<>();
    for (Object item : (List<?>) value) {
      out.add((String) item);
    }
    return out;
  }

  private static List<Integer> partitions(Object value) {
    List<Integer> out = new ArrayList<>();
    for (Object item : (List<?>) value) {
      out.add(u32(item, "partition"));
    }
    return out;
  }

  private static List<PartitionOffset> offsets(Object value) {
    List<PartitionOffset> out = new ArrayList<>();
    for (Object item : (List<?>) value) {
      Object[] f = (Object[]) item;
      long offset = (Long) f[1];
      if (offset < 0) {
        throw new IllegalArgumentException("the component passed offset "
            + Long.toUnsignedString(offset) + ", beyond 2^63-1");
      }
      out.add(new PartitionOffset(u32(f[0], "partition"), offset));
    }
    return out;
  }

  private static Case option(Object value) {
    return value == null ? new Case(0, null) : new Case(1, value);
  }

  private static Object[] metadata(TopicMetadata m) {
    List<Object> configs = new ArrayList<>();
    for (ConfigEntry e : m.configs()) {
      configs.add(new Object[] {e.name(), option(e.value().orElse(null))});
    }
    List<Object> ranges = new ArrayList<>();
    for (PartitionRange r : m.offsets()) {
      ranges.add(new Object[] {(long) r.partition(), r.beginning(), r.end()});
    }
    List<Object> partitions = new ArrayList<>();
    for (int p : m.partitions()) {
      partitions.add((long) p);
    }
    return new Object[] {
      m.topic(), m.topicId(), partitions, configs, ranges, (long) m.replicationFactor()
    };
  }

  private static Object[] cluster(Capabilities.ClusterDescription c) {
    List<Object> brokers = new ArrayList<>();
    for (int b : c.brokers()) {
      brokers.add((long) b);
    }
    List<Object> configs = new ArrayList<>();
    for (ConfigEntry e : c.configs()) {
      configs.add(new Object[] {e.name(), option(e.value().orElse(null))});
    }
    return new Object[] {brokers, configs};
  }

  HostImport.Body body(CleanupWit.Function f) {
    return switch (f.iface() + " " + f.name()) {
      case "clock now-ms" -> args -> caps.clock().nowMs();
      case "clock sleep-ms" -> args -> {
        caps.clock().sleepMs((int) Math.min((Long) args[0], Integer.MAX_VALUE));
        return null;
      };
      case "clock operation-timeout-ms" -> args -> (long) caps.clock().operationTimeoutMs();
      case "kafka-admin describe" -> args -> kafka(() -> {
        List<Object> out = new ArrayList<>();
        for (Optional<TopicMetadata> m :
            caps.admin().describe(strings(args[0]), strings(args[1]), (Boolean) args[2])) {
          out.add(option(m.map(HostBindings::metadata).orElse(null)));
        }
        return out;
      });
      case "kafka-admin describe-cluster" -> args -> kafka(() ->
          cluster(caps.admin().describeCluster(strings(args[0]))));
      case "kafka-admin create-topic" -> args -> kafka(() -> {
        List<ConfigEntry> configs = new ArrayList<>();
        for (Object item : (List<?>) args[3]) {
          Object[] e = (Object[]) item;
          Case value = (Case) e[1];
          configs.add(new ConfigEntry((String) e[0],
              value.index() == 0 ? Optional.empty() : Optional.of((String) value.payload())));
        }
        return caps.admin().createTopic((String) args[0], u32(args[1], "partition count"),
            (short) (long) (Long) args[2], configs);
      });
      case "kafka-admin list-offsets" -> args -> kafka(() -> Wit.offsets(
          caps.admin().listOffsets((String) args[0], partitions(args[1]),
              ((Case) args[2]).index() == 0 ? OffsetSpec.EARLIEST : OffsetSpec.LATEST)));
      case "kafka-admin delete-records" -> args -> kafka(() -> Wit.offsets(
          caps.admin().deleteRecords((String) args[0], offsets(args[1]))));
      case "kafka-writer [static]writer.open" -> args -> kafka(() -> {
        Case id = (Case) args[0];
        Capabilities.Writer w = caps.writers().open(
            id.index() == 0 ? Optional.empty() : Optional.of((String) id.payload()));
        return (long) host.writers().add(w);
      });
      case "kafka-writer [method]writer.append" -> args -> kafka(() ->
          host.writers().get((Long) args[0], "writer").append(
              (String) args[1], u32(args[2], "partition"), (String) args[3], (String) args[4]));
      case "kafka-writer [resource-drop]writer" -> args -> {
        host.writers().remove((Long) args[0], "writer").close();
        return null;
      };
      case "kafka-consumer [static]consumer.open" -> args -> kafka(() ->
          (long) host.consumers().add(caps.consumers().open((String) args[0])));
      case "kafka-consumer [method]consumer.assign" -> args -> kafka(() -> {
        host.consumers().get((Long) args[0], "consumer").assign(offsets(args[1]));
        return null;
      });
      case "kafka-consumer [method]consumer.position" -> args -> kafka(() ->
          Wit.offsets(host.consumers().get((Long) args[0], "consumer").position()));
      case "kafka-consumer [method]consumer.poll" -> args -> kafka(() -> {
        long handle = (Long) args[0];
        Capabilities.Consumer c = host.consumers().get(handle, "consumer");
        host.lastPolled = (int) handle;
        PolledBatch b = c.poll(
            (int) Math.min((Long) args[1], Integer.MAX_VALUE),
            (int) Math.min((Long) args[2], Integer.MAX_VALUE),
            (Boolean) args[3]);
        List<Object> keys = new ArrayList<>(b.keys().size());
        for (String k : b.keys()) {
          keys.add(option(k));
        }
        List<Object> values = new ArrayList<>(b.values().size());
        for (String v : b.values()) {
          values.add(option(v));
        }
        return new Object[] {b.partitions(), b.offsets(), b.flags(), keys, values, b.timestamps()};
      });
      case "kafka-consumer [resource-drop]consumer" -> args -> {
        host.consumers().remove((Long) args[0], "consumer").close();
        return null;
      };
      case "operator-events before-commit" -> args -> {
        List<ApplyReport.PartitionPreview> preview = new ArrayList<>();
        for (Object item : (List<?>) args[1]) {
          preview.add(ApplyReport.preview(item));
        }
        Case created = (Case) args[2];
        OperatorEvents.Review review = host.events.beforeCommit((String) args[0],
            List.copyOf(preview),
            created.index() == 0 ? Optional.empty()
                : Optional.of(ApplyReport.newControlTopic(created.payload())));
        return new Case(review == OperatorEvents.Review.DECLINE ? 1 : 0, null);
      };
      case "operator-events verified" -> args -> {
        host.events.verified(Wit.plan(args[0]));
        return null;
      };
      case "operator-events committed" -> args -> {
        host.events.committed((String) args[0]);
        return null;
      };
      case "operator-events retrying" -> args -> {
        host.events.retrying((String) args[0], (Long) args[1]);
        return null;
      };
      case "snapshot-store read" -> args -> store(() -> host.snapshotStore.read((String) args[0], (Long) args[1]));
      case "snapshot-store list-folder" -> args -> store(() -> new ArrayList<Object>(host.snapshotStore.list((String) args[0])));
      default -> throw new IllegalStateException("no binding for " + f.iface() + " " + f.name());
    };
  }
}
