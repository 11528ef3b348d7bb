package io.actionstate.cleanup.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.actionstate.cleanup.CleanupError.KafkaError;
import io.actionstate.cleanup.CleanupError.KafkaErrorKind;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/**
 * The Java host's errors against {@code wit/types.wit}, the one document every host's tables
 * follow (the core and the Rust host check theirs in host/tests/error_tables.rs, Python in
 * test_error_tables.py): the protocol codes are the component's to classify, so the host answers
 * every protocol error kafka-clients knows with its code and name as they came, and a case that
 * is {@code other} or the one the WIT lists for the code (never another).
 */
class KafkaErrorsTableTest {
  /** NAME (code) in a doc comment: capitals, digits and _, then a parenthesis on a number. */
  private static final Pattern LISTED_CODE =
      Pattern.compile("\\b(_?[A-Z][A-Z0-9_]*) \\((-?\\d+)");

  /** A listed code: its name and the case whose doc comment lists it. */
  record Listed(String name, String kafkaCase) {}

  private static String typesWit() throws IOException {
    try (InputStream in =
        KafkaErrors.class.getResourceAsStream("/io/actionstate/cleanup/wit/types.wit")) {
      assertNotNull(in, "types.wit travels in the jar");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** Every code the doc comments of {@code variant kafka-error} list, by code. */
  static Map<Integer, Listed> witKafkaCodes(String wit) {
    int start = wit.indexOf("variant kafka-error {");
    assertTrue(start >= 0, "variant kafka-error in types.wit");
    String body = wit.substring(wit.indexOf('{', start) + 1, wit.indexOf("\n  }", start));
    Map<Integer, Listed> codes = new TreeMap<>();
    StringBuilder doc = new StringBuilder();
    for (String raw : body.split("\n")) {
      String line = raw.strip();
      if (line.startsWith("///")) {
        doc.append(line.substring(3)).append(' ');
      } else if (!line.isEmpty()) {
        String kafkaCase = line.substring(0, line.indexOf('(')).strip();
        Matcher m = LISTED_CODE.matcher(doc);
        while (m.find()) {
          Listed listed = new Listed(m.group(1), kafkaCase);
          Listed before = codes.put(Integer.parseInt(m.group(2)), listed);
          assertNull(before, "code " + m.group(2) + " is listed twice");
        }
        doc.setLength(0);
      }
    }
    return codes;
  }

  @Test
  void theDocParserReadsNamesAndCodesAndSkipsProse() throws IOException {
    Map<Integer, Listed> codes = witKafkaCodes(typesWit());
    assertEquals(new Listed("UNKNOWN_TOPIC_OR_PARTITION", "unknown-topic"), codes.get(3));
    assertEquals(new Listed("_AUTO_OFFSET_RESET", "offset-out-of-range"), codes.get(-140));
    assertTrue(
        codes.values().stream().noneMatch(l -> l.name().equals("TOPIC_ALREADY_EXISTS")),
        "prose is not a listed code");
  }

  @Test
  void everyProtocolErrorOfTheClientKeepsItsCodeAndNameAndNeverAnotherCase() throws IOException {
    Map<Integer, Listed> listed = witKafkaCodes(typesWit());
    List<String> wrong = new ArrayList<>();
    for (Errors e : Errors.values()) {
      ApiException exception = e.exception();
      if (e.code() <= 0 || exception == null) {
        continue;
      }
      KafkaError mapped = KafkaErrors.map(exception);
      Listed expected = listed.get((int) e.code());
      String mappedCase = mapped.kind().witName();
      boolean caseFits =
          mapped.kind() == KafkaErrorKind.OTHER
              || (expected != null && mappedCase.equals(expected.kafkaCase()));
      if (mapped.code() != e.code() || !mapped.name().equals(e.name()) || !caseFits) {
        wrong.add(
            e.name() + " (" + e.code() + "): host " + mappedCase + " " + mapped.code() + " "
                + mapped.name());
      }
    }
    assertEquals(List.of(), wrong, "KafkaErrors.map against wit/types.wit");
  }

  @Test
  void theHostListsNoProtocolCodeButKnowsWhatOnlyTheClientKnows() {
    KafkaError fenced = KafkaErrors.map(Errors.PRODUCER_FENCED.exception());
    assertEquals(KafkaErrorKind.OTHER, fenced.kind(), "the component classifies code 90");
    assertTrue(KafkaErrors.fenced(Errors.PRODUCER_FENCED.exception()));
    assertTrue(KafkaErrors.mayBeStale(KafkaErrors.map(Errors.NOT_LEADER_OR_FOLLOWER.exception())));
    assertEquals(
        KafkaErrorKind.AUTHENTICATION,
        KafkaErrors.map(Errors.SASL_AUTHENTICATION_FAILED.exception()).kind());
  }
}
