package io.skiffmq.codec.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.BrokerAnnotations;
import io.skiffmq.codec.amqp10.DeliveryEncoder;
import io.skiffmq.codec.amqp10.DecodeFailure;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.ProtocolHeader;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.codec.amqp10.TypeReader;
import io.skiffmq.codec.amqp10.ValueDecoder;
import java.util.EnumSet;

/**
 * Runs untrusted bytes through each decoder the way the broker uses it, for the hostile-input corpora and the
 * fuzz targets. Each method returns null for a clean decode or the {@link DecodeFailure} that stopped it, and
 * lets anything else (an unchecked exception, an error) escape, which is the bug those tests look for. Every
 * buffer is released, so the leak detector can judge.
 */
public final class DecoderHarness {
    private DecoderHarness() {
    }

    /**
     * A whole connection from the broker's side: protocol header (SASL or plain AMQP), frames, every
     * performative decoded, and every transfer's payload indexed and read as a message.
     */
    public static DecodeFailure connection(byte[] input) {
        EmbeddedChannel channel = new EmbeddedChannel(
            new Amqp10FrameDecoder(EnumSet.of(ProtocolHeader.SASL, ProtocolHeader.AMQP),
                Amqp10FrameDecoder.DEFAULT_INITIAL_MAX_FRAME_SIZE),
            new FrameReader());
        FrameReader reader = channel.pipeline().get(FrameReader.class);
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer(input.length).writeBytes(input);
        try {
            channel.writeInbound(buf);
            return reader.failure;
        } catch (DecoderException e) {
            if (e.getCause() instanceof AmqpDecodeException decode) {
                return decode.failure();
            }
            throw e;
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    /** A sequence of encoded values, each decoded (and, for compound values, validated in full). */
    public static DecodeFailure values(byte[] input) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer(input.length).writeBytes(input);
        try {
            int position = 0;
            while (position < input.length) {
                TypeReader.validate(buf, position, input.length);
                ValueDecoder.decode(buf, position, input.length);
                position = TypeReader.valueEnd(buf, position, input.length);
            }
            return null;
        } catch (AmqpDecodeException e) {
            return e.failure();
        } finally {
            buf.release();
        }
    }

    /** An encoded message: indexed, every field read, and re-emitted for delivery. */
    public static DecodeFailure message(byte[] input) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer(input.length).writeBytes(input);
        try {
            readMessage(buf);
            return null;
        } catch (AmqpDecodeException e) {
            return e.failure();
        } finally {
            buf.release();
        }
    }

    private static final BrokerAnnotations ADDED = new BrokerAnnotations().put("x-exchange", "amq.topic");

    static void readMessage(ByteBuf payload) throws AmqpDecodeException {
        MessageSections m = MessageSections.scan(payload);
        m.durable();
        m.to();
        m.subject();
        m.messageId();
        m.correlationId();
        m.userId();
        m.contentType();
        m.groupSequence();
        m.creationTime();
        m.applicationProperty("key");
        m.messageAnnotation("x-opt-key");
        m.applicationProperties();
        m.messageAnnotations();
        m.deliveryAnnotations();
        m.footer();
        ByteBuf delivered = DeliveryEncoder.encode(PooledByteBufAllocator.DEFAULT, m, m.durable(), m.priority(),
            m.ttl(), m.firstAcquirer(), m.deliveryCount() + 1, ADDED);
        delivered.release();
    }

    /** What the connection handler would do with each frame, short of acting on it. */
    private static final class FrameReader extends ChannelInboundHandlerAdapter {
        private final PerformativeCodec codec = new PerformativeCodec();
        DecodeFailure failure;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof AmqpFrame frame)) {
                return;
            }
            try {
                if (failure != null || frame.isEmpty()) {
                    return;
                }
                if (frame.type() == AmqpFrame.TYPE_SASL) {
                    codec.decodeSasl(frame.content());
                    return;
                }
                Object performative = codec.decode(frame.content());
                if (performative instanceof TransferPerformative transfer) {
                    transfer.state();
                    readMessage(frame.content());
                } else if (performative instanceof FlowPerformative flow) {
                    flow.properties();
                }
            } catch (AmqpDecodeException e) {
                // the broker closes the connection here
                failure = e.failure();
                ctx.close();
            } finally {
                frame.release();
            }
        }
    }
}
