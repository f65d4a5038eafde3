package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.TransferPerformative;
import java.util.Arrays;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;

/**
 * How a publisher link answers a message that cannot go where it is addressed, as RabbitMQ 4.0.3 and later do
 * ({@code rabbit_amqp_session}, {@code lookup_target}):
 *
 * <ul>
 *   <li>on the anonymous relay, by the anonymous terminus extension's routing errors [anonterm 2.2.2]: an unsettled
 *       delivery is rejected with the error and the link goes on; a settled one cannot be answered, so the link is
 *       detached, the error's info naming the {@code delivery-tag};</li>
 *   <li>on a link with a fixed target whose exchange no longer exists: an unsettled delivery is released, and the
 *       link detached with the error.</li>
 * </ul>
 *
 * <p>Keeps the delivery-tag of the anonymous relay's settled deliveries in a buffer reused from one delivery to the
 * next, so publishing allocates nothing for it. Owned by the link's connection event loop.
 */
final class RoutingErrors {
    private static final Symbol DELIVERY_TAG = Symbol.valueOf("delivery-tag");

    private final AmqpSession session;
    private final long handle;
    /** The current delivery's tag, when it is settled and on the anonymous relay. */
    private byte[] tag = new byte[32];
    private int tagLength;

    RoutingErrors(AmqpSession session, long handle) {
        this.session = session;
        this.handle = handle;
    }

    /** An exchange or queue named as RabbitMQ's errors name it ({@code rabbit_misc:rs/1}). */
    static String resource(String kind, String name, String vhost) {
        return kind + " '" + name + "' in vhost '" + vhost + "'";
    }

    /** The first transfer of a settled delivery on the anonymous relay: its tag is kept, for a detach's info. */
    void keepTag(TransferPerformative first) {
        tagLength = Math.max(0, first.deliveryTagLength());
        if (tagLength > tag.length) {
            tag = new byte[tagLength];
        }
        if (tagLength > 0) {
            first.copyDeliveryTag(tag);
        }
    }

    /** A routing error on the anonymous relay: the delivery is rejected, or, when settled, the link detached. */
    void anonymous(long deliveryId, boolean settled, AmqpError condition, String description) {
        ErrorCondition error = new ErrorCondition(condition.symbol(), description);
        if (!settled) {
            Rejected rejected = new Rejected();
            rejected.setError(error);
            session.settleIncoming(deliveryId, rejected);
        } else {
            error.setInfo(Map.of(DELIVERY_TAG, new Binary(Arrays.copyOf(tag, tagLength))));
            session.detachWithError(handle, error);
        }
    }

    /** A fixed target's exchange is gone: the delivery is released (when unsettled) and the link detached. */
    void targetGone(long deliveryId, boolean settled, AmqpError condition, String description) {
        if (!settled) {
            session.settleIncoming(deliveryId, Released.getInstance());
        }
        session.detachWithError(handle, new ErrorCondition(condition.symbol(), description));
    }
}
