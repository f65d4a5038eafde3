package io.skiffmq.codec.amqp10;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.junit.jupiter.api.Test;

/**
 * Valid performatives and SASL frames with one byte changed (to null, to another format code, to a random value)
 * or one field cut off, many thousand times: each decodes or fails with an {@link AmqpDecodeException}. Any other
 * exception (a {@code NullPointerException} or {@code ClassCastException} out of proton-j) escapes and fails the
 * test: no decoding may rely on one. Seeded, so a failure repeats.
 */
class MutatedPerformativesTest {
    private static final int[] CODES = {0x40, 0x41, 0x43, 0x45, 0x50, 0x52, 0x53, 0x60, 0x70, 0x80, 0x83, 0x98,
        0xa0, 0xa1, 0xa3, 0xc0, 0xc1, 0xe0, 0x00};

    @Test
    void mutatedFramesDecodeOrFailTyped() {
        Random random = new Random(17);
        List<byte[]> frames = validFrames();
        int failures = 0;
        int mutations = 0;
        for (byte[] frame : frames) {
            for (int i = 0; i < 1500; i++) {
                byte[] mutated = frame.clone();
                int at = 3 + random.nextInt(mutated.length - 3); // the descriptor stays
                mutated[at] = (byte) switch (random.nextInt(3)) {
                    case 0 -> 0x40;
                    case 1 -> CODES[random.nextInt(CODES.length)];
                    default -> random.nextInt(256);
                };
                mutations++;
                if (decode(mutated, isSasl(frame)) != null) {
                    failures++;
                }
            }
        }
        assertThat(failures).as("mutations rejected, of %d", mutations).isPositive().isLessThan(mutations);
    }

    private static boolean isSasl(byte[] frame) {
        return (frame[2] & 0xff) >= 0x40;
    }

    /** The failure, or null for a clean decode; anything but a decode failure escapes. */
    private static DecodeFailure decode(byte[] bytes, boolean sasl) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes);
        try {
            PerformativeCodec codec = new PerformativeCodec();
            if (sasl) {
                codec.decodeSasl(buf);
            } else {
                codec.decode(buf);
            }
            return null;
        } catch (AmqpDecodeException e) {
            return e.failure();
        }
    }

    private static List<byte[]> validFrames() {
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("PLAIN"));
        init.setInitialResponse(new Binary("\0guest\0guest".getBytes()));
        init.setHostname("localhost");
        SaslMechanisms mechanisms = new SaslMechanisms();
        mechanisms.setSaslServerMechanisms(Symbol.valueOf("PLAIN"), Symbol.valueOf("ANONYMOUS"));
        SaslOutcome outcome = new SaslOutcome();
        outcome.setCode(SaslCode.OK);
        outcome.setAdditionalData(new Binary(new byte[] {1, 2}));
        Open open = new Open();
        open.setContainerId("container");
        open.setHostname("vhost:/");
        open.setMaxFrameSize(UnsignedInteger.valueOf(65536));
        open.setChannelMax(UnsignedShort.valueOf((short) 255));
        open.setOfferedCapabilities(Symbol.valueOf("ANONYMOUS-RELAY"));
        open.setProperties(Map.of(Symbol.valueOf("product"), "test"));
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ZERO);
        begin.setIncomingWindow(UnsignedInteger.valueOf(100));
        begin.setOutgoingWindow(UnsignedInteger.valueOf(100));
        Source source = new Source();
        source.setAddress("/queues/q");
        source.setDefaultOutcome(new Modified());
        source.setOutcomes(Symbol.valueOf("amqp:accepted:list"));
        source.setFilter(Map.of(Symbol.valueOf("f"), "x"));
        Target target = new Target();
        target.setAddress("/queues/q");
        target.setCapabilities(Symbol.valueOf("queue"));
        Attach attach = new Attach();
        attach.setName("link");
        attach.setHandle(UnsignedInteger.ONE);
        attach.setRole(Role.RECEIVER);
        attach.setSndSettleMode(SenderSettleMode.MIXED);
        attach.setSource(source);
        attach.setTarget(target);
        attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
        Detach detach = new Detach();
        detach.setHandle(UnsignedInteger.ONE);
        detach.setClosed(true);
        detach.setError(new ErrorCondition(Symbol.valueOf("amqp:not-found"), "no queue"));
        Close close = new Close();
        ErrorCondition error = new ErrorCondition(Symbol.valueOf("amqp:decode-error"), "bad");
        error.setInfo(Map.of(Symbol.valueOf("k"), "v"));
        close.setError(error);
        return List.of(encode(attach), encode(open), encode(begin), encode(detach), encode(close), encode(init),
            encode(mechanisms), encode(outcome));
    }

    private static byte[] encode(Object performative) {
        ByteBuf buf = Unpooled.buffer();
        ProtonCodec.current().encode(performative, buf);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }
}
