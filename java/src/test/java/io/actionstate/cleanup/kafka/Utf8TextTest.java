package io.actionstate.cleanup.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The consumer's deserializer decodes only the buffer's remaining bytes, wherever they lie in
 * the backing array (kafka-clients hands out slices of the fetched buffer) or in a direct buffer,
 * strictly: bytes that are not UTF-8 are {@link Utf8Text#UNDECODABLE}, a genuine U+FFFD is text.
 */
class Utf8TextTest {
  private final Utf8Text text = new Utf8Text();

  @Test
  void decodesOnlyTheSliceOfAnArray() {
    byte[] fetched = "xx{\"a\":\"ü ✓ 𝄞\"}yy".getBytes(StandardCharsets.UTF_8);
    ByteBuffer slice = ByteBuffer.wrap(fetched, 2, fetched.length - 4).slice();
    assertEquals("{\"a\":\"ü ✓ 𝄞\"}", text.deserialize("t", null, slice));
    ByteBuffer positioned = ByteBuffer.wrap(fetched, 2, fetched.length - 4);
    assertEquals("{\"a\":\"ü ✓ 𝄞\"}", text.deserialize("t", null, positioned));
    assertEquals(2, positioned.position(), "the buffer is read, not consumed");
  }

  @Test
  void decodesADirectBuffer() {
    byte[] bytes = "direct ✓".getBytes(StandardCharsets.UTF_8);
    ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
    assertEquals("direct ✓", text.deserialize("t", null, direct));
  }

  @Test
  void bytesThatAreNotUtf8AreUndecodableAndAGenuineReplacementIsText() {
    byte[] broken = {'o', 'k', (byte) 0xC3, 0x28};
    assertSame(Utf8Text.UNDECODABLE, text.deserialize("t", null, ByteBuffer.wrap(broken)));
    assertSame(Utf8Text.UNDECODABLE, text.deserialize("t", broken));
    byte[] encodedSurrogate = {(byte) 0xED, (byte) 0xA0, (byte) 0x80};
    assertSame(Utf8Text.UNDECODABLE, text.deserialize("t", encodedSurrogate));
    String genuine = "a \uFFFD written as one";
    assertEquals(genuine, text.deserialize("t", genuine.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void absentBytesAreNull() {
    assertNull(text.deserialize("t", null, (ByteBuffer) null));
    assertNull(text.deserialize("t", (byte[]) null));
  }
}
