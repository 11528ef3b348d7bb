package io.actionstate.cleanup.kafka;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * The consumer's key and value deserializer: the text of the bytes when they are strictly UTF-8,
 * {@link #UNDECODABLE} when they are not, {@code null} when absent.
 *
 * <p>It decodes straight from the fetched buffer, as kafka-clients' own {@code StringDeserializer}
 * does: no intermediate {@code byte[]} per key and value (nothing in this host needs the bytes).
 * The JDK's decoder (vectorised for ASCII) replaces what is not UTF-8 with U+FFFD; only a text
 * holding U+FFFD, rare and possibly genuine, is decoded again strictly.
 */
final class Utf8Text implements Deserializer<Object> {
  /** Stands for bytes that are not UTF-8. */
  static final Object UNDECODABLE = new Object();

  @Override
  public Object deserialize(String topic, byte[] data) {
    return data == null ? null : decode(ByteBuffer.wrap(data));
  }

  @Override
  public Object deserialize(String topic, Headers headers, ByteBuffer data) {
    return data == null ? null : decode(data);
  }

  private static Object decode(ByteBuffer data) {
    String text;
    if (data.hasArray()) {
      text =
          new String(
              data.array(), data.arrayOffset() + data.position(), data.remaining(),
              StandardCharsets.UTF_8);
    } else {
      text = StandardCharsets.UTF_8.decode(data.duplicate()).toString();
    }
    if (text.indexOf('\uFFFD') < 0) {
      return text;
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(data.duplicate())
          .toString();
    } catch (CharacterCodingException e) {
      return UNDECODABLE;
    }
  }
}
