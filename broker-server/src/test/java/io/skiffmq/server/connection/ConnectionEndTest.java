package io.skiffmq.server.connection;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.ssl.NotSslRecordException;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.DecodeFailure;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.ClosedChannelException;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Each exception that can reach a connection handler, and each end: how it is classified and logged. */
class ConnectionEndTest {
    static Stream<Arguments> exceptions() {
        return Stream.of(
            Arguments.of(new IOException("Connection reset by peer"), ConnectionEnd.RESET),
            Arguments.of(new IOException("Broken pipe"), ConnectionEnd.RESET),
            Arguments.of(new ClosedChannelException(), ConnectionEnd.WRITE_AFTER_CLOSE),
            Arguments.of(new DecoderException(new AmqpDecodeException(DecodeFailure.FRAME_SIZE, "frame size 9")),
                ConnectionEnd.PROTOCOL_ERROR),
            Arguments.of(new AmqpDecodeException(DecodeFailure.MISSING_FIELD, "open without container-id"),
                ConnectionEnd.PROTOCOL_ERROR),
            Arguments.of(new DecoderException(new Amqp091DecodeException("frame end 0x00")),
                ConnectionEnd.PROTOCOL_ERROR),
            Arguments.of(new DecoderException(new NotSslRecordException("not an SSL/TLS record")),
                ConnectionEnd.TLS_ERROR),
            Arguments.of(new SSLHandshakeException("no cipher suites in common"), ConnectionEnd.TLS_ERROR),
            Arguments.of(new TooLongFrameException("frame too long"), ConnectionEnd.RESOURCE_LIMIT),
            Arguments.of(new NullPointerException("l is null"), ConnectionEnd.INTERNAL_ERROR),
            Arguments.of(new IllegalStateException("a bug"), ConnectionEnd.INTERNAL_ERROR),
            Arguments.of(new DecoderException(new ClassCastException("a bug in a decoder")),
                ConnectionEnd.INTERNAL_ERROR),
            Arguments.of(new OutOfMemoryError("Direct buffer memory"), ConnectionEnd.INTERNAL_ERROR));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("exceptions")
    void classifiesWhatReachesAConnection(Throwable cause, ConnectionEnd expected) {
        assertThat(ConnectionEnd.of(cause)).isEqualTo(expected);
    }

    @ParameterizedTest
    @EnumSource(ConnectionEnd.class)
    void onlyABrokerBugIsAnErrorAndOnlyPlainDisconnectsAreDebug(ConnectionEnd end) {
        Level expected = switch (end) {
            case INTERNAL_ERROR -> Level.ERROR;
            case CLIENT_CLOSE, EOF, WRITE_AFTER_CLOSE -> Level.DEBUG;
            default -> Level.INFO;
        };
        assertThat(end.level()).isEqualTo(expected);
        assertThat(end.limited()).as("rate-limited").isEqualTo(end != ConnectionEnd.INTERNAL_ERROR);
        assertThat(end.label()).isEqualTo(end.name().toLowerCase(java.util.Locale.ROOT));
    }
}
