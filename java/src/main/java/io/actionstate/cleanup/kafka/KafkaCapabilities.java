package io.actionstate.cleanup.kafka;

import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.capability.Capabilities.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The capabilities over kafka-clients 4.x: one {@link ClientAdmin} shared by every call, a
 * producer per writer and a consumer per consumer the component opens. {@code client} holds the
 * connection properties (bootstrap.servers, security.protocol, sasl.*, ssl.*) exactly as
 * Kafka's Java clients take them; the settings the WIT fixes (timeouts, acks, isolation,
 * retries) are set here over them.
 */
public final class KafkaCapabilities {
  private KafkaCapabilities() {}

  /**
   * The bound of one request: a third of the operation timeout, at least one second, never more
   * than the operation timeout itself (WIT {@code clock.operation-timeout-ms}).
   */
  public static int requestBoundMs(int operationTimeoutMs) {
    return Math.min(operationTimeoutMs, Math.max(1000, operationTimeoutMs / 3));
  }

  /** The system's monotonic clock with this operation timeout. */
  public static Clock systemClock(Duration operationTimeout) {
    long ms = operationTimeout.toMillis();
    if (ms < 1 || ms > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("the operation timeout must be 1 ms .. 2^31-1 ms");
    }
    int timeout = (int) ms;
    return new Clock() {
      @Override
      public long nowMs() {
        return System.nanoTime() / 1_000_000L;
      }

      @Override
      public void sleepMs(int sleep) {
        if (sleep <= 0) {
          return;
        }
        try {
          Thread.sleep(sleep);
        } catch (InterruptedException e) {
          // The component measures its own deadlines; keep the interrupt for the caller.
          Thread.currentThread().interrupt();
        }
      }

      @Override
      public int operationTimeoutMs() {
        return timeout;
      }
    };
  }

  /**
   * Capabilities over kafka-clients. The admin client is created now (it connects lazily);
   * close it with {@link Capabilities#admin()}{@code .close()} when done.
   */
  public static Capabilities connect(Map<String, Object> client, Duration operationTimeout) {
    Clock clock = systemClock(operationTimeout);
    int timeout = clock.operationTimeoutMs();
    int bound = requestBoundMs(timeout);
    Map<String, Object> settings = Map.copyOf(client);
    return new Capabilities(
        clock,
        new ClientAdmin(settings, bound),
        (Optional<String> transactionalId) -> ClientWriter.open(settings, timeout, bound, transactionalId),
        topic -> new ClientConsumer(settings, bound, topic));
  }

}
