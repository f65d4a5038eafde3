package io.skiffmq.server;

import com.rabbitmq.client.Channel;
import java.util.Set;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A 0-9-1 channel's publishes with confirms, by publish sequence number, for checkers that count what the broker
 * confirmed: each one acked goes to {@code confirmed}, each one nacked is forgotten (or recorded, when asked), and
 * those never answered stay unconfirmed. Used by the publishing thread and the client's connection thread:
 * concurrent map.
 *
 * @param <T> what identifies a message to the checker
 */
final class ConfirmTracking<T> {
    private final ConcurrentNavigableMap<Long, T> outstanding = new ConcurrentSkipListMap<>();

    /** Puts {@code channel} in confirm mode and listens to its confirms. */
    ConfirmTracking(Channel channel, Set<T> confirmed) throws java.io.IOException {
        this(channel, confirmed, null);
    }

    /** As above, and records each message nacked in {@code nacked} (when not null). */
    ConfirmTracking(Channel channel, Set<T> confirmed, Set<T> nacked) throws java.io.IOException {
        channel.confirmSelect();
        channel.addConfirmListener((seq, multiple) -> {
            var acked = answered(seq, multiple);
            confirmed.addAll(acked.values());
            acked.clear();
        }, (seq, multiple) -> {
            var refused = answered(seq, multiple);
            if (nacked != null) {
                nacked.addAll(refused.values());
            }
            refused.clear();
        });
    }

    private ConcurrentNavigableMap<Long, T> answered(long seq, boolean multiple) {
        return multiple ? outstanding.headMap(seq, true) : outstanding.subMap(seq, true, seq, true);
    }

    /** Call before publishing {@code message} with {@code channel.getNextPublishSeqNo()}. */
    void publishing(long seq, T message) {
        outstanding.put(seq, message);
    }

    /** Publishes sent and not answered yet. */
    int outstanding() {
        return outstanding.size();
    }
}
