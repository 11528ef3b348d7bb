package io.actionstate.flinkjob;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The independent reader of the effects topic: a plain read_committed consumer (not the job, not
 * the component) counts how often each action id appears. Exactly once means every id below the
 * number of actions released appears once and no other id appears.
 */
record Effects(Map<Long, Integer> perAction, int records) {

  static Effects read(String topic) throws Exception {
    Map<Long, Integer> perAction = new TreeMap<>();
    List<ConsumerRecord<String, String>> records = Kafka.readCommitted(topic);
    for (ConsumerRecord<String, String> r : records) {
      perAction.merge(Long.parseLong(r.key()), 1, Integer::sum);
    }
    return new Effects(perAction, records.size());
  }

  /** How many distinct actions have an effect. */
  int actions() {
    return perAction.size();
  }

  /** Null when ids 0 .. actions-1 each appear exactly once and nothing else; else what is wrong. */
  String exactlyOnceViolation(long actions) {
    List<String> wrong = new ArrayList<>();
    for (long id = 0; id < actions; id++) {
      int n = perAction.getOrDefault(id, 0);
      if (n != 1) {
        wrong.add("action " + id + " has " + n + " effects");
      }
    }
    perAction.keySet().stream()
        .filter(id -> id < 0 || id >= actions)
        .forEach(id -> wrong.add("action " + id + " was never released but has an effect"));
    if (wrong.isEmpty() && records == actions) {
      return null;
    }
    return records + " effect records for " + actions + " actions: "
        + String.join("; ", wrong.subList(0, Math.min(wrong.size(), 10)))
        + (wrong.size() > 10 ? "; …" : "");
  }
}
