package io.skiffmq.codec.amqp091;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * The decoder's frames are pooled ({@link io.skiffmq.codec.PooledFrame}): a released frame is the next one decoded,
 * so decoding allocates no frame per frame on an event loop's thread, and a frame counts its own references apart
 * from its payload's (a message keeps the payload of its content frames).
 */
class Amqp091FrameTest {
    private static final int ROUNDS = 20_000;

    @Test
    void decodedFramesAreReusedOnceReleased() throws Exception {
        AtomicReference<Object> result = new AtomicReference<>();
        // Netty pools on threads that clean up their fast thread-locals, as its event loops do
        Thread loop = new FastThreadLocalThread(() -> {
            try {
                result.set(decodeOnLoop());
            } catch (Throwable e) {
                result.set(e);
            }
        });
        loop.start();
        loop.join();
        assertThat(result.get()).isEqualTo(0L);
    }

    /** Bytes allocated per decoded and released frame, after a warm-up. */
    private static long decodeOnLoop() throws Exception {
        ByteBuf frame = Unpooled.buffer();
        Amqp091FrameWriter.writeMethod(frame, 1, new BasicMethod.Ack(7, true));
        EmbeddedChannel channel = new EmbeddedChannel(new Amqp091FrameDecoder());
        Amqp091Frame first = decodeOne(channel, frame);
        first.release();
        assertThat(decodeOne(channel, frame)).as("the released frame, reused").isSameAs(first);
        first.release();
        long allocated = Allocations.perCall(ROUNDS,
            () -> Amqp091Frame.pooled(Amqp091Frame.TYPE_METHOD, 1, Unpooled.EMPTY_BUFFER).release());
        channel.finishAndReleaseAll();
        frame.release();
        return allocated;
    }

    private static Amqp091Frame decodeOne(EmbeddedChannel channel, ByteBuf frame) {
        channel.writeInbound(frame.retainedDuplicate());
        Amqp091Frame decoded = channel.readInbound();
        assertThat(decoded.type()).isEqualTo(Amqp091Frame.TYPE_METHOD);
        assertThat(decoded.channel()).isEqualTo(1);
        return decoded;
    }

    @Test
    void aFrameCountsItsOwnReferences() {
        ByteBuf payload = Unpooled.buffer(4).writeInt(42);
        Amqp091Frame frame = Amqp091Frame.pooled(Amqp091Frame.TYPE_BODY, 3, payload);
        payload.retain(); // kept by a message, as a content frame's payload is
        frame.retain();
        assertThat(frame.refCnt()).isEqualTo(2);
        assertThat(payload.refCnt()).isEqualTo(3);
        assertThat(frame.release()).isFalse();
        assertThat(frame.payload().getInt(0)).isEqualTo(42);
        assertThat(frame.release()).isTrue();
        assertThat(payload.refCnt()).as("the message's reference").isEqualTo(1);
        assertThatThrownBy(frame::payload).isInstanceOf(IllegalReferenceCountException.class);
        assertThatThrownBy(frame::release).isInstanceOf(IllegalReferenceCountException.class);
        assertThat(frame.toString()).contains("released");
        payload.release();
    }
}
