package io.skiffmq.server.stream;

import io.skiffmq.codec.stream.CommandKey;
import io.skiffmq.codec.stream.ConsumerCommand;
import io.skiffmq.codec.stream.ConsumerCommand.ConsumerUpdateResponse;
import io.skiffmq.codec.stream.ConsumerCommand.QueryOffset;
import io.skiffmq.codec.stream.ConsumerCommand.ResolveOffsetSpec;
import io.skiffmq.codec.stream.ConsumerCommand.Subscribe;
import io.skiffmq.codec.stream.ConsumerCommand.Unsubscribe;
import io.skiffmq.codec.stream.CreditFrame;
import io.skiffmq.codec.stream.OffsetSpec;
import io.skiffmq.codec.stream.PublisherCommand;
import io.skiffmq.codec.stream.Response;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.codec.stream.StoreOffsetFrame;
import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.core.stream.SuperStreams;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.store.stream.StreamFilter;
import io.skiffmq.store.stream.StreamLog;
import io.skiffmq.store.stream.StreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A connection's subscriptions (ids 0 to 255) and what goes with consuming: subscribe (offset specification,
 * {@code filter.N} and {@code match-unfiltered}, single active consumer), credit, unsubscribe, stored offsets and
 * resolving an offset specification. Codes as RabbitMQ's reader answers: 0x10 without read permission, 0x02 for a
 * stream that does not exist, 0x03 for an id in use, 0x11 for a single active consumer without a name or a name
 * over 255 bytes; credit for an unknown subscription gets a credit response 0x04, for an inactive single active
 * consumer 0x11 (the credit is kept). Owned by the connection's event loop.
 */
final class Subscriptions {
    private final StreamConnectionHandler connection;
    private final Subscription[] byId = new Subscription[256];
    /** Written on the loop only; volatile for the metrics, which read it from their thread. */
    private volatile int count;
    /** Consumer updates sent and not answered yet: correlation id → the subscription's member then. */
    private final Map<Long, Pending> updates = new HashMap<>();

    /** A consumer update in flight: to activate (the answer says where to read from) or to step down. */
    private record Pending(Subscription subscription, ConsumerGroups.Member member, boolean active) {
    }

    Subscriptions(StreamConnectionHandler connection) {
        this.connection = connection;
    }

    int count() {
        return count;
    }

    /** What listings show of each subscription ({@link StreamActivity}). */
    List<StreamActivity.Consumer> snapshot() {
        List<StreamActivity.Consumer> list = new ArrayList<>(count);
        for (Subscription s : all()) {
            boolean sac = "true".equals(s.properties().get("single-active-consumer"));
            boolean active = !sac || s.active();
            long offset = Math.max(0, s.lastOffset());
            long committed = s.use().log().committedOffset();
            // rabbit_stream_utils:offset_lag/4: nothing to lag behind in an empty stream, or before a first delivery
            long lag = committed < 0 || s.messagesSent() == 0 ? 0 : committed - offset;
            list.add(new StreamActivity.Consumer(s.id(), s.use().name(), s.messagesSent(), offset, lag, s.credit(),
                active, !sac ? "up" : active ? "single_active" : "waiting", Map.copyOf(s.properties())));
        }
        return list;
    }

    List<Subscription> all() {
        List<Subscription> all = new ArrayList<>(count);
        for (Subscription s : byId) {
            if (s != null) {
                all.add(s);
            }
        }
        return all;
    }

    void subscribe(Subscribe subscribe) {
        long corr = subscribe.correlationId();
        String stream = subscribe.stream();
        Map<String, String> properties = subscribe.properties();
        boolean sac = "true".equals(properties.get("single-active-consumer"));
        String name = properties.get("name");
        ResponseCode refused = connection.permission(Permission.READ, stream);
        if (refused == null && name != null
                && name.getBytes(StandardCharsets.UTF_8).length > PublisherCommand.MAX_REFERENCE_LENGTH) {
            refused = ResponseCode.PRECONDITION_FAILED;
        }
        StreamQueue queue = refused == null ? connection.stream(stream) : null;
        if (refused == null && queue == null) {
            refused = ResponseCode.STREAM_DOES_NOT_EXIST;
        }
        if (refused == null && byId[subscribe.subscriptionId()] != null) {
            refused = ResponseCode.SUBSCRIPTION_ID_ALREADY_EXISTS;
        }
        if (refused == null && sac && name == null) {
            refused = ResponseCode.PRECONDITION_FAILED;
        }
        if (refused != null) {
            connection.respond(new Response(CommandKey.SUBSCRIBE, corr, refused));
            return;
        }
        StreamUse use = connection.uses().use(stream, queue);
        Subscription subscription = new Subscription(subscribe.subscriptionId(), use, offset(subscribe.offset()),
            filter(properties), subscribe.credit(), properties, connection);
        if (!sac) {
            try {
                subscription.open(subscription.offset());
            } catch (IllegalStateException e) {
                // its log closed: the stream is being deleted
                connection.uses().releaseIfUnused(use);
                connection.respond(new Response(CommandKey.SUBSCRIBE, corr, ResponseCode.STREAM_DOES_NOT_EXIST));
                return;
            }
        }
        byId[subscription.id()] = subscription;
        count++;
        use.subscriptions().add(subscription);
        connection.respond(new Response(CommandKey.SUBSCRIBE, corr, ResponseCode.OK));
        if (sac) {
            subscription.member = connection.groups().join(connection.vhost().name(), stream, name,
                partitionIndex(properties.get("super-stream"), stream), connection, subscription.id());
        } else {
            subscription.pump();
        }
    }

    private int partitionIndex(String superStream, String stream) {
        return superStream == null ? -1 : SuperStreams.partitionIndex(connection.vhost(), superStream, stream);
    }

    /** The core's offset specification for the protocol's; an offset past 2^63 is read as the end of the stream. */
    static StreamOffset offset(OffsetSpec spec) {
        return switch (spec.type()) {
            case FIRST -> StreamOffset.first();
            case LAST -> StreamOffset.last();
            case OFFSET -> StreamOffset.offset(spec.value() < 0 ? Long.MAX_VALUE : spec.value());
            case TIMESTAMP -> StreamOffset.timestamp(spec.value());
            case NEXT, NONE -> StreamOffset.next();
        };
    }

    /** The subscription's filter ({@code filter.N} values, {@code match-unfiltered}), or null for none. */
    static StreamFilter filter(Map<String, String> properties) {
        List<String> values = new ArrayList<>();
        properties.forEach((key, value) -> {
            if (key.startsWith("filter.")) {
                values.add(value);
            }
        });
        return values.isEmpty() ? null
            : StreamFilter.of(values, "true".equals(properties.get("match-unfiltered")));
    }

    void credit(CreditFrame credit) {
        Subscription subscription = byId[credit.subscriptionId()];
        if (subscription == null) {
            connection.respond(new ConsumerCommand.CreditResponse(ResponseCode.SUBSCRIPTION_ID_DOES_NOT_EXIST,
                credit.subscriptionId()));
            return;
        }
        subscription.addCredit(credit.credit());
        if (!subscription.active()) {
            // leftovers for a consumer that is not (or no longer) active: kept, and said
            connection.respond(new ConsumerCommand.CreditResponse(ResponseCode.PRECONDITION_FAILED,
                credit.subscriptionId()));
            return;
        }
        subscription.pump();
    }

    void unsubscribe(Unsubscribe unsubscribe) {
        Subscription subscription = byId[unsubscribe.subscriptionId()];
        if (subscription == null) {
            connection.respond(new Response(CommandKey.UNSUBSCRIBE, unsubscribe.correlationId(),
                ResponseCode.SUBSCRIPTION_ID_DOES_NOT_EXIST));
            return;
        }
        remove(subscription);
        connection.respond(new Response(CommandKey.UNSUBSCRIBE, unsubscribe.correlationId(), ResponseCode.OK));
    }

    /** Ends a subscription: its reader closes, its group (if any) goes on without it. */
    void remove(Subscription subscription) {
        if (byId[subscription.id()] != subscription) {
            return;
        }
        byId[subscription.id()] = null;
        count--;
        subscription.close();
        if (subscription.member != null) {
            connection.groups().leave(subscription.member);
        }
        subscription.use().subscriptions().remove(subscription);
        connection.uses().releaseIfUnused(subscription.use());
    }

    /** Ends the subscriptions to {@code use}'s stream (deleted); true when there were any. */
    boolean removeAll(StreamUse use) {
        boolean any = false;
        for (Subscription s : byId) {
            if (s != null && s.use() == use) {
                remove(s);
                any = true;
            }
        }
        return any;
    }

    /** The connection ends: every subscription goes. */
    void clear() {
        for (Subscription s : byId) {
            if (s != null) {
                remove(s);
            }
        }
        updates.clear();
    }

    /** Each subscription sends what it has credit for (the socket drained). */
    void pumpAll() {
        for (Subscription s : byId) {
            if (s != null && connection.writable()) {
                s.pump();
            }
        }
    }

    // ---- single active consumer ----------------------------------------------------------------------------

    /** Its group made {@code member} active or inactive: the client hears it in a {@code consumer_update}. */
    void groupChanged(ConsumerGroups.Member member, boolean active) {
        Subscription subscription = byId[member.subscriptionId];
        if (subscription == null || subscription.member != member) {
            if (!active) {
                connection.groups().steppedDown(member); // gone meanwhile: nothing to wait for
            }
            return;
        }
        if (!active) {
            subscription.close();
        }
        long corr = connection.nextCorrelationId();
        updates.put(corr, new Pending(subscription, member, active));
        connection.respond(new ConsumerCommand.ConsumerUpdate(corr, subscription.id(), active));
    }

    /** The client's answer to a consumer update: an active one starts reading where it says. */
    void updated(ConsumerUpdateResponse response) {
        Pending pending = updates.remove(response.correlationId());
        if (pending == null) {
            return;
        }
        Subscription subscription = pending.subscription();
        if (!pending.active()) {
            connection.groups().steppedDown(pending.member());
            return;
        }
        if (byId[subscription.id()] != subscription || !connection.groups().isActive(pending.member())) {
            return; // gone, or deactivated since
        }
        StreamOffset from = response.offset().type() == OffsetSpec.Type.NONE ? subscription.offset()
            : offset(response.offset());
        try {
            subscription.open(from);
        } catch (IllegalStateException e) {
            return; // the stream is being deleted: its deletion ends the subscription
        }
        subscription.pump();
    }

    // ---- offsets ---------------------------------------------------------------------------------------------

    /**
     * {@code store_offset}, which has no answer: written by the stream's writer (a tracking chunk). Without a
     * subscription to the stream on this connection, read permission is needed; a reference over 255 bytes, a
     * missing stream or a refusal is only logged, as RabbitMQ does.
     */
    void storeOffset(StoreOffsetFrame frame) {
        String stream = frame.stream();
        String reference = frame.reference();
        long offset = frame.offset();
        boolean subscribed = false;
        for (Subscription s : byId) {
            subscribed |= s != null && s.use().name().equals(stream);
        }
        if (!subscribed && connection.permission(Permission.READ, stream) != null) {
            connection.log("not authorized to store offset on stream '" + stream + "'");
            return;
        }
        StreamQueue queue = connection.stream(stream);
        if (queue == null || reference.isEmpty() || offset < 0
                || frame.referenceLength() > PublisherCommand.MAX_REFERENCE_LENGTH) {
            connection.log("cannot store offset " + offset + " for '" + reference + "' on stream '" + stream + "'");
            return;
        }
        StreamLog log = StreamConnectionHandler.log(queue);
        queue.executor().run(() -> {
            if (queue.writable()) {
                log.storeOffset(reference, offset);
            }
        });
    }

    void queryOffset(QueryOffset query) {
        long corr = query.correlationId();
        ResponseCode refused = connection.permission(Permission.READ, query.stream());
        StreamQueue queue = refused == null ? connection.stream(query.stream()) : null;
        if (refused == null && queue == null) {
            refused = ResponseCode.STREAM_DOES_NOT_EXIST;
        }
        if (refused != null) {
            connection.respond(new ConsumerCommand.QueryOffsetResponse(corr, refused, 0));
            return;
        }
        String reference = query.reference();
        StreamLog log = StreamConnectionHandler.log(queue);
        // on the writer's thread, after this connection's stored offsets before it
        connection.onStream(queue, () -> reference.isEmpty() ? StreamLog.NO_OFFSET : log.storedOffset(reference),
            stored -> connection.respond(stored == StreamLog.NO_OFFSET
                ? new ConsumerCommand.QueryOffsetResponse(corr, ResponseCode.NO_OFFSET, 0)
                : new ConsumerCommand.QueryOffsetResponse(corr, ResponseCode.OK, stored)));
    }

    /**
     * {@code resolve_offset_spec}: the offset a subscription with this specification (and filter) would start at,
     * as an offset. "No offset" (0x13) when the stream has no message to start at: first, last or a timestamp on
     * an empty stream; next and an offset always resolve.
     */
    void resolve(ResolveOffsetSpec resolve) {
        long corr = resolve.correlationId();
        ResponseCode refused = connection.permission(Permission.READ, resolve.stream());
        StreamQueue queue = refused == null ? connection.stream(resolve.stream()) : null;
        if (refused == null && queue == null) {
            refused = ResponseCode.STREAM_DOES_NOT_EXIST;
        }
        if (refused != null) {
            connection.respond(new ConsumerCommand.ResolveOffsetSpecResponse(corr, refused, OffsetSpec.Type.OFFSET,
                0));
            return;
        }
        StreamLog log = StreamConnectionHandler.log(queue);
        StreamOffset spec = offset(resolve.offset());
        long resolved;
        ResponseCode code = ResponseCode.OK;
        try (StreamReader reader = log.reader(spec, filter(resolve.properties()))) {
            long next = log.committedOffset() + 1;
            if (spec.kind() == StreamOffset.Kind.OFFSET) {
                resolved = Math.min(Math.max(spec.value(), log.firstOffset()), Math.max(next, log.firstOffset()));
            } else if (spec.kind() == StreamOffset.Kind.NEXT) {
                resolved = Math.max(next, log.firstOffset());
            } else {
                resolved = reader.position();
                if (log.committedOffset() < 0 || resolved >= next) {
                    code = ResponseCode.NO_OFFSET;
                    resolved = 0;
                }
            }
        } catch (IllegalStateException e) {
            code = ResponseCode.STREAM_DOES_NOT_EXIST;
            resolved = 0;
        }
        connection.respond(new ConsumerCommand.ResolveOffsetSpecResponse(corr, code, OffsetSpec.Type.OFFSET,
            resolved));
    }
}
