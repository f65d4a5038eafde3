package io.skiffmq.server;

import java.nio.ByteBuffer;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;

/**
 * Names what a broker did with a hostile connection from the bytes it sent before closing it: the condition of its
 * AMQP 1.0 {@code close}, its SASL outcome, the reply code of its 0-9-1 {@code connection.close}, or that it just
 * closed the socket. Stateless; the AMQP 1.0 decoder is one per thread.
 */
final class ReplayOutcomes {
    /** An AMQP 1.0 {@code close} with {@code amqp:internal-error}, as {@link #amqp10} names it. */
    static final String INTERNAL_ERROR = "close amqp:internal-error";

    private static final ThreadLocal<DecoderImpl> DECODER = ThreadLocal.withInitial(() -> {
        DecoderImpl decoder = new DecoderImpl();
        AMQPDefinedTypes.registerAllTypes(decoder, new EncoderImpl(decoder));
        return decoder;
    });

    private ReplayOutcomes() {
    }

    /** What an AMQP 1.0 broker sent: headers, SASL frames, AMQP frames; the first {@code close} decides. */
    static String amqp10(byte[] bytes) {
        if (bytes.length == 0) {
            return "closed, no bytes";
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        String last = "closed after";
        String sasl = null;
        while (in.remaining() >= 8) {
            int at = in.position();
            if (bytes[at] == 'A' && bytes[at + 1] == 'M' && bytes[at + 2] == 'Q' && bytes[at + 3] == 'P') {
                last = bytes[at + 4] == 0 && bytes[at + 5] == 0 && bytes[at + 6] == 9
                    ? "the 0-9-1 protocol header" : "a protocol header";
                in.position(at + 8);
                continue;
            }
            long size = in.getInt(at) & 0xffffffffL;
            int doff = bytes[at + 4] & 0xff;
            int type = bytes[at + 5] & 0xff;
            if (size < 8 || size > in.remaining() || doff < 2 || doff * 4L > size) {
                return "undecodable bytes from the broker";
            }
            if (size > doff * 4L) {
                DecoderImpl decoder = DECODER.get();
                decoder.setByteBuffer(ByteBuffer.wrap(bytes, at + doff * 4, (int) size - doff * 4));
                Object performative = decoder.readObject();
                if (performative instanceof Close close) {
                    return close.getError() == null ? "close without an error"
                        : "close " + close.getError().getCondition();
                }
                if (performative instanceof SaslOutcome outcome) {
                    sasl = "sasl-outcome " + outcome.getCode();
                }
                last = type == 1 ? "a SASL frame" : "a frame";
            } else {
                last = "an empty frame";
            }
            in.position(at + (int) size);
        }
        return sasl != null ? sasl + ", then closed" : "closed after " + last;
    }

    /** What an AMQP 0-9-1 broker sent: its {@code connection.close} reply code, or how it ended without one. */
    static String amqp091(byte[] bytes) {
        if (bytes.length == 0) {
            return "closed, no bytes";
        }
        if (bytes.length >= 8 && bytes[0] == 'A' && bytes[1] == 'M' && bytes[2] == 'Q' && bytes[3] == 'P') {
            return "the 0-9-1 protocol header, then closed";
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        String channelClose = null;
        String last = "nothing";
        while (in.remaining() >= 8) {
            int at = in.position();
            int type = bytes[at] & 0xff;
            long size = in.getInt(at + 3) & 0xffffffffL;
            if (size + 8 > in.remaining()) {
                return "undecodable bytes from the broker";
            }
            if (type == 1 && size >= 4) {
                int classId = in.getShort(at + 7) & 0xffff;
                int methodId = in.getShort(at + 9) & 0xffff;
                int code = size >= 6 ? in.getShort(at + 11) & 0xffff : -1;
                if (classId == 10 && methodId == 50) {
                    return "connection.close " + code;
                }
                if (classId == 20 && methodId == 40 && channelClose == null) {
                    channelClose = "channel.close " + code;
                }
                last = "method " + classId + "." + methodId;
            }
            in.position(at + 8 + (int) size);
        }
        return channelClose != null ? channelClose + ", then closed without connection.close"
            : "closed without connection.close after " + last;
    }

    /**
     * What a stream protocol broker sent: the code of its {@code close} request, or how it ended without one (the
     * last response or command it sent).
     */
    static String stream(byte[] bytes) {
        if (bytes.length == 0) {
            return "closed, no bytes";
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        String last = "nothing";
        while (in.remaining() >= 8) {
            int at = in.position();
            long size = in.getInt(at) & 0xffffffffL;
            if (size < 4 || size + 4 > in.remaining()) {
                return "closed after a partial frame";
            }
            int key = in.getShort(at + 4) & 0xffff;
            if (key == 0x16 && size >= 10) {
                return String.format("close 0x%02x", in.getShort(at + 12) & 0xffff);
            }
            last = String.format("0x%04x", key) + (key >= 0x8000 && size >= 10
                ? String.format(" code 0x%02x", in.getShort(at + 12) & 0xffff) : "");
            in.position(at + 4 + (int) size);
        }
        return "closed without close after " + last;
    }
}
