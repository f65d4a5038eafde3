package io.skiffmq.codec.amqp10;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.testing.Amqp;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fast performatives against proton-j in both directions (proton encodes, we decode; we encode, proton
 * decodes), over seeded random field values; the other performatives and SASL frames through proton-j.
 */
class PerformativeCodecTest {
    private final PerformativeCodec codec = new PerformativeCodec();

    static LongStream seeds() {
        return LongStream.range(0, 300);
    }

    private static ByteBuf protonEncode(Object performative) {
        ByteBuf buf = Unpooled.buffer();
        ProtonCodec.current().encode(performative, buf);
        return buf;
    }

    private static Object protonDecode(ByteBuf buf) throws AmqpDecodeException {
        return ProtonCodec.current().decode(buf, buf.readerIndex(), buf.writerIndex());
    }

    private static DeliveryState randomState(Random r) {
        return switch (r.nextInt(6)) {
            case 0 -> Accepted.getInstance();
            case 1 -> Released.getInstance();
            case 2 -> {
                Rejected rejected = new Rejected();
                rejected.setError(new ErrorCondition(AmqpError.DECODE_ERROR.symbol(), "bad " + r.nextInt(9)));
                yield rejected;
            }
            case 3 -> {
                Modified modified = new Modified();
                modified.setDeliveryFailed(true);
                modified.setUndeliverableHere(r.nextBoolean());
                yield modified;
            }
            default -> null;
        };
    }

    private static UnsignedInteger randomUInt(Random r) {
        return switch (r.nextInt(4)) {
            case 0 -> UnsignedInteger.ZERO;
            case 1 -> UnsignedInteger.valueOf(r.nextInt(256));
            case 2 -> UnsignedInteger.valueOf(0xffffffffL - r.nextInt(10));
            default -> UnsignedInteger.valueOf(r.nextInt() & 0xffffffffL);
        };
    }

    static Transfer randomTransfer(Random r) {
        Transfer t = new Transfer();
        t.setHandle(randomUInt(r));
        if (r.nextBoolean()) {
            t.setDeliveryId(randomUInt(r));
            byte[] tag = new byte[r.nextInt(33)];
            r.nextBytes(tag);
            t.setDeliveryTag(new Binary(tag));
            t.setMessageFormat(UnsignedInteger.ZERO);
        }
        if (r.nextBoolean()) {
            t.setSettled(r.nextBoolean());
        }
        t.setMore(r.nextBoolean());
        if (r.nextInt(4) == 0) {
            t.setRcvSettleMode(r.nextBoolean() ? ReceiverSettleMode.FIRST : ReceiverSettleMode.SECOND);
        }
        if (r.nextInt(4) == 0) {
            t.setState(randomState(r));
        }
        t.setAborted(r.nextInt(5) == 0);
        t.setBatchable(r.nextInt(5) == 0);
        return t;
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void transferMatchesProtonBothWays(long seed) throws AmqpDecodeException {
        Random r = new Random(seed);
        Transfer original = randomTransfer(r);
        byte[] payload = {1, 2, 3};
        ByteBuf body = protonEncode(original).writeBytes(payload);

        TransferPerformative fast = (TransferPerformative) codec.decode(body);
        assertThat(fast.handle()).isEqualTo(original.getHandle().longValue());
        assertThat(fast.deliveryId()).isEqualTo(original.getDeliveryId() == null ? -1 : original.getDeliveryId().longValue());
        if (original.getDeliveryTag() != null) {
            byte[] tag = new byte[fast.deliveryTagLength()];
            fast.copyDeliveryTag(tag);
            assertThat(new Binary(tag)).isEqualTo(original.getDeliveryTag());
        }
        assertThat(fast.settled()).isEqualTo(Boolean.TRUE.equals(original.getSettled()));
        assertThat(fast.settledSet()).isEqualTo(original.getSettled() != null);
        assertThat(fast.more()).isEqualTo(original.getMore());
        assertThat(fast.aborted()).isEqualTo(original.getAborted());
        assertThat(fast.batchable()).isEqualTo(original.getBatchable());
        assertThat(String.valueOf(fast.state())).isEqualTo(String.valueOf(original.getState()));
        assertThat(body.readableBytes()).as("payload left readable").isEqualTo(payload.length);

        ByteBuf ours = Unpooled.buffer();
        fast.encode(ours);
        assertThat(protonDecode(ours).toString()).isEqualTo(original.toString());
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void flowMatchesProtonBothWays(long seed) throws AmqpDecodeException {
        Random r = new Random(seed);
        Flow original = new Flow();
        if (r.nextBoolean()) {
            original.setNextIncomingId(randomUInt(r));
        }
        original.setIncomingWindow(randomUInt(r));
        original.setNextOutgoingId(randomUInt(r));
        original.setOutgoingWindow(randomUInt(r));
        if (r.nextBoolean()) {
            original.setHandle(randomUInt(r));
            original.setDeliveryCount(randomUInt(r));
            original.setLinkCredit(randomUInt(r));
            if (r.nextBoolean()) {
                original.setAvailable(randomUInt(r));
            }
            original.setDrain(r.nextBoolean());
        }
        original.setEcho(r.nextInt(4) == 0);
        if (r.nextInt(5) == 0) {
            original.setProperties(Map.of(Symbol.valueOf("x-opt"), "v"));
        }
        FlowPerformative fast = (FlowPerformative) codec.decode(protonEncode(original));
        assertThat(fast.incomingWindow()).isEqualTo(original.getIncomingWindow().longValue());
        assertThat(fast.nextOutgoingId()).isEqualTo(original.getNextOutgoingId().longValue());
        assertThat(fast.linkCredit()).isEqualTo(original.getLinkCredit() == null ? -1 : original.getLinkCredit().longValue());
        assertThat(fast.drain()).isEqualTo(original.getDrain());
        assertThat(fast.echo()).isEqualTo(original.getEcho());
        assertThat(fast.properties()).isEqualTo(original.getProperties());

        ByteBuf ours = Unpooled.buffer();
        fast.encode(ours);
        assertThat(protonDecode(ours).toString()).isEqualTo(original.toString());
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void dispositionMatchesProtonBothWays(long seed) throws AmqpDecodeException {
        Random r = new Random(seed);
        Disposition original = new Disposition();
        original.setRole(r.nextBoolean() ? Role.RECEIVER : Role.SENDER);
        original.setFirst(randomUInt(r));
        if (r.nextBoolean()) {
            original.setLast(randomUInt(r));
        }
        original.setSettled(r.nextBoolean());
        original.setState(randomState(r));
        original.setBatchable(r.nextInt(5) == 0);

        DispositionPerformative fast = (DispositionPerformative) codec.decode(protonEncode(original));
        assertThat(fast.receiverRole()).isEqualTo(original.getRole() == Role.RECEIVER);
        assertThat(fast.first()).isEqualTo(original.getFirst().longValue());
        assertThat(fast.settled()).isEqualTo(original.getSettled());
        assertThat(String.valueOf(fast.state())).isEqualTo(String.valueOf(original.getState()));

        ByteBuf ours = Unpooled.buffer();
        fast.encode(ours);
        assertThat(protonDecode(ours).toString()).isEqualTo(original.toString());
    }

    @Test
    void fastPathReadsSymbolicDescriptors() throws AmqpDecodeException {
        ByteBuf body = Unpooled.wrappedBuffer(Amqp.describedSymbol("amqp:disposition:list", Amqp.list8(
            Amqp.bool1(true), Amqp.uint(5), Amqp.nul(), Amqp.bool1(true),
            Amqp.describedSymbol("amqp:accepted:list", Amqp.list0()))));
        DispositionPerformative d = (DispositionPerformative) codec.decode(body);
        assertThat(d.first()).isEqualTo(5);
        assertThat(d.settled()).isTrue();
        assertThat(d.stateCode()).isEqualTo(PerformativeCode.ACCEPTED);
    }

    static Stream<Object> otherPerformatives() {
        Open open = new Open();
        open.setContainerId("client-1");
        open.setHostname("vhost:/");
        open.setMaxFrameSize(UnsignedInteger.valueOf(131072));
        open.setOfferedCapabilities(Symbol.valueOf("ANONYMOUS-RELAY"));
        open.setProperties(Map.of(Symbol.valueOf("product"), "test"));
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ONE);
        begin.setIncomingWindow(UnsignedInteger.valueOf(5000));
        begin.setOutgoingWindow(UnsignedInteger.MAX_VALUE);
        Attach attach = new Attach();
        attach.setName("sender-link");
        attach.setHandle(UnsignedInteger.ZERO);
        attach.setRole(Role.SENDER);
        Source source = new Source();
        source.setAddress("/queues/q1");
        attach.setSource(source);
        Target target = new Target();
        target.setAddress("/exchanges/amq.direct/k");
        target.setCapabilities(Symbol.valueOf("queue"));
        attach.setTarget(target);
        Detach detach = new Detach();
        detach.setHandle(UnsignedInteger.valueOf(3));
        detach.setClosed(true);
        detach.setError(new ErrorCondition(AmqpError.NOT_FOUND.symbol(), "no queue 'q1'"));
        Close close = new Close();
        close.setError(new ErrorCondition(AmqpError.DECODE_ERROR.symbol(), "bad frame"));
        return Stream.of(open, begin, attach, detach, new End(), close);
    }

    @ParameterizedTest
    @MethodSource("otherPerformatives")
    void otherPerformativesGoThroughProton(Object performative) throws AmqpDecodeException {
        ByteBuf out = PooledByteBufAllocator.DEFAULT.buffer();
        try {
            int written = PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_AMQP, 3, performative, 0);
            assertThat(out.getInt(0)).isEqualTo(written);
            out.skipBytes(8);
            assertThat(codec.decode(out).toString()).isEqualTo(performative.toString());
        } finally {
            out.release();
        }
    }

    @Test
    void saslFramesGoThroughProton() throws AmqpDecodeException {
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("PLAIN"));
        init.setInitialResponse(new Binary("\0guest\0guest".getBytes()));
        SaslOutcome outcome = new SaslOutcome();
        outcome.setCode(org.apache.qpid.proton.amqp.security.SaslCode.AUTH);
        for (Object sasl : List.of(init, outcome)) {
            assertThat(codec.decodeSasl(protonEncode(sasl)).toString()).isEqualTo(sasl.toString());
        }
    }

    @Test
    void missingMandatoryFieldsAreRejected() {
        assertFailure("00 53 14 45", DecodeFailure.MISSING_FIELD);                 // transfer without handle
        assertFailure("00 53 13 c0 02 01 40", DecodeFailure.MISSING_FIELD);        // flow without incoming-window
        assertFailure("00 53 15 c0 03 02 40 43", DecodeFailure.MISSING_FIELD);     // disposition without role
        assertFailure("00 53 10 45", DecodeFailure.MISSING_FIELD);                 // open without container-id
    }

    @Test
    void malformedPerformativesAreRejected() {
        assertFailure("00 53 14 c0 02 01 a1", DecodeFailure.TRUNCATED);            // handle runs past the list
        assertFailure("00 53 14 c0 03 01 a1 00", DecodeFailure.UNEXPECTED_TYPE);   // handle that is a string
        assertFailure("00 53 14 c0 10 01 43", DecodeFailure.BAD_SIZE);             // list larger than the frame
        assertFailure("00 53 18 45 00", DecodeFailure.TRAILING_BYTES);             // close with a payload
        assertFailure("00 53 24 45", DecodeFailure.UNKNOWN_DESCRIPTOR);            // accepted is no performative
        assertFailure("40", DecodeFailure.UNEXPECTED_TYPE);                        // not described at all
    }

    private void assertFailure(String hex, DecodeFailure failure) {
        assertThatThrownBy(() -> codec.decode(Unpooled.wrappedBuffer(hex(hex))))
            .isInstanceOfSatisfying(AmqpDecodeException.class, e -> assertThat(e.failure()).isEqualTo(failure));
    }
}
