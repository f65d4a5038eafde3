package io.skiffmq.codec.amqp091;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Valid properties with random bytes changed: each decode succeeds or fails with the typed exception, no other. */
class MutatedInputTest {

    @Test
    void mutatedPropertiesDecodeOrFailTyped() {
        ByteBuf encoded = Unpooled.buffer();
        BasicPropertiesTest.all().encode(encoded);
        byte[] valid = ByteBufUtil.getBytes(encoded);
        Random random = new Random(20261122);
        int typed = 0;
        for (int round = 0; round < 20_000; round++) {
            byte[] bytes = valid.clone();
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
                bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
            }
            ByteBuf in = Unpooled.wrappedBuffer(bytes);
            try {
                BasicProperties.summarize(in);
                BasicProperties.decode(in);
            } catch (Amqp091DecodeException e) {
                typed++;
            }
            assertThat(in.readerIndex()).isZero();
        }
        assertThat(typed).as("most mutations break something").isGreaterThan(1000);
    }
}
