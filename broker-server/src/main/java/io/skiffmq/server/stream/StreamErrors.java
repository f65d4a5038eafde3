package io.skiffmq.server.stream;

import io.skiffmq.codec.stream.Command;
import io.skiffmq.codec.stream.ConnectionCommand;
import io.skiffmq.codec.stream.ConsumerCommand;
import io.skiffmq.codec.stream.ManagementCommand;
import io.skiffmq.codec.stream.PublisherCommand;
import io.skiffmq.codec.stream.Response;
import io.skiffmq.codec.stream.ResponseCode;
import java.util.concurrent.atomic.LongAdder;

/**
 * The stream protocol's errors on the node, by response code: RabbitMQ's {@code rabbitmq_global_stream_error_*_total}
 * counters. Every answer with an error code is counted once (requests refused, publish errors one per message, a
 * server's {@code close} with an error code); an OK and a SASL challenge are no errors. Counted where an error is
 * answered, never on a message's way through. Thread-safe: every stream connection's loop counts here.
 */
public final class StreamErrors {
    private final LongAdder[] counts = new LongAdder[ResponseCode.values().length];

    public StreamErrors() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    /** Counts {@code code} unless it is OK or a SASL challenge (or null: no code). */
    void add(ResponseCode code) {
        if (code != null && code != ResponseCode.OK && code != ResponseCode.SASL_CHALLENGE) {
            counts[code.ordinal()].increment();
        }
    }

    /** Counts the code {@code answer} carries, when it carries one. */
    void answered(Command answer) {
        add(codeOf(answer));
    }

    /** How many answers carried {@code code}. */
    public long count(ResponseCode code) {
        return counts[code.ordinal()].sum();
    }

    /** The response code of a server's answer, or null for a command that carries none (a delivery, a tune). */
    private static ResponseCode codeOf(Command answer) {
        if (answer instanceof Response r) {
            return r.code();
        } else if (answer instanceof ConnectionCommand.Close close) {
            return ResponseCode.of(close.closingCode());
        } else if (answer instanceof ConnectionCommand.PeerPropertiesResponse r) {
            return r.code();
        } else if (answer instanceof ConnectionCommand.SaslHandshakeResponse r) {
            return r.code();
        } else if (answer instanceof ConnectionCommand.SaslAuthenticateResponse r) {
            return r.code();
        } else if (answer instanceof ConnectionCommand.OpenResponse r) {
            return r.code();
        } else if (answer instanceof ConnectionCommand.ExchangeCommandVersionsResponse r) {
            return r.code();
        } else if (answer instanceof PublisherCommand.QueryPublisherSequenceResponse r) {
            return r.code();
        } else if (answer instanceof ConsumerCommand.CreditResponse r) {
            return r.code();
        } else if (answer instanceof ConsumerCommand.QueryOffsetResponse r) {
            return r.code();
        } else if (answer instanceof ConsumerCommand.ResolveOffsetSpecResponse r) {
            return r.code();
        } else if (answer instanceof ManagementCommand.StreamStatsResponse r) {
            return r.code();
        } else if (answer instanceof ManagementCommand.StreamsResponse r) {
            return r.code();
        }
        return null; // metadata (a code per stream) and its updates are news, not answers to a request
    }
}
