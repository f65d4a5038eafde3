package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.codec.amqp10.TypeReader;
import java.util.Arrays;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.transaction.Coordinator;
import org.apache.qpid.proton.amqp.transaction.Declare;
import org.apache.qpid.proton.amqp.transaction.Declared;
import org.apache.qpid.proton.amqp.transaction.Discharge;
import org.apache.qpid.proton.amqp.transaction.TxnCapability;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;

/**
 * A transaction controller's link to our coordinator [4.2]: its target is a {@code coordinator}, and its messages
 * are control messages, never routed: {@code declare} (answered {@code declared} with a new txn-id) and
 * {@code discharge} (answered {@code accepted}, or {@code rejected} with a {@code amqp:transaction:*} condition),
 * each an {@code amqp-value} body [4.5.2, 4.5.3]. The transactions themselves are the session's
 * ({@link SessionTransactions}); those declared here roll back when this link ends.
 *
 * <p>Only local transactions [4.5.7]: a controller asking only for distributed or promotable ones is refused at
 * attach with {@code amqp:not-implemented}, and a {@code declare} with a {@code global-id} is rejected so. Our attach
 * states what we do: {@code amqp:local-transactions} and {@code amqp:multi-txns-per-ssn}.
 *
 * <p>Credit is granted as to a publisher: {@code publisher-credit} at a time, topped up at half.
 *
 * <p>Owned by the connection's event loop.
 */
final class CoordinatorLink implements Link {
    private static final Symbol[] CAPABILITIES = {TxnCapability.LOCAL_TXN, TxnCapability.MULTI_TXNS_PER_SSN};

    private final AmqpSession session;
    private final long handle;
    private final long maxMessageSize;
    private final ReceiverCredit credit;
    private boolean closed;

    // the control message being received, when it spans several transfer frames
    private boolean inDelivery;
    private long deliveryId;
    private boolean deliverySettled;
    private byte[] body = new byte[0];

    private CoordinatorLink(AmqpSession session, long handle, long deliveryCount) {
        this.session = session;
        this.handle = handle;
        this.credit = new ReceiverCredit(session, handle, deliveryCount, session.config().publisherCredit());
        this.maxMessageSize = session.config().maxMessageSize();
    }

    static CoordinatorLink attach(AmqpSession session, Attach attach) {
        long handle = attach.getHandle().longValue();
        Coordinator asked = (Coordinator) attach.getTarget();
        Symbol[] capabilities = asked.getCapabilities();
        if (capabilities != null && capabilities.length > 0
                && !Arrays.asList(capabilities).contains(TxnCapability.LOCAL_TXN)) {
            throw AmqpException.linkError(handle, AmqpError.NOT_IMPLEMENTED,
                "only local transactions (%s) are supported, not %s", TxnCapability.LOCAL_TXN,
                Arrays.toString(capabilities));
        }
        long initialCount = attach.getInitialDeliveryCount() == null ? 0 : attach.getInitialDeliveryCount().longValue();
        CoordinatorLink link = new CoordinatorLink(session, handle, initialCount);
        Attach reply = Link.reply(attach, attach.getSndSettleMode());
        Coordinator coordinator = new Coordinator();
        coordinator.setCapabilities(CAPABILITIES);
        reply.setTarget(coordinator);
        session.writeFrame(reply);
        link.grantCredit();
        return link;
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void onFlow(FlowPerformative flow) {
        if (flow.echo()) {
            credit.echo();
        }
    }

    void onTransfer(TransferPerformative transfer, ByteBuf payload) {
        if (!inDelivery) {
            credit.firstTransfer(transfer);
            inDelivery = true;
            deliveryId = transfer.deliveryId();
            deliverySettled = transfer.settled();
            body = new byte[0];
        }
        if (transfer.aborted()) {
            inDelivery = false; // [2.6.12] discarded, needs no settlement
            return;
        }
        if ((long) body.length + payload.readableBytes() > maxMessageSize) {
            inDelivery = false;
            throw AmqpException.linkError(handle, AmqpError.MESSAGE_SIZE_EXCEEDED,
                "control message of more than %d bytes (max-message-size)", maxMessageSize);
        }
        int at = body.length;
        body = Arrays.copyOf(body, at + payload.readableBytes());
        payload.getBytes(payload.readerIndex(), body, at, payload.readableBytes());
        if (transfer.more()) {
            return;
        }
        inDelivery = false;
        control(deliveryId, deliverySettled, body);
        grantCredit();
    }

    /** Acts on one whole control message. */
    private void control(long id, boolean settled, byte[] message) {
        if (declaresGlobalId(message)) {
            // looked for in the bytes: proton-j has no type for a global-id and cannot decode one
            reply(id, settled, globalIdRefused());
            return;
        }
        Object value;
        try {
            value = amqpValue(message);
        } catch (AmqpDecodeException e) {
            reply(id, settled, rejected(AmqpError.DECODE_ERROR, "control message: " + e.getMessage()));
            return;
        }
        SessionTransactions transactions = session.transactions();
        if (value instanceof Declare declare) {
            if (declare.getGlobalId() != null) {
                reply(id, settled, globalIdRefused());
                return;
            }
            Declared declared = new Declared();
            declared.setTxnId(transactions.declare(this));
            reply(id, settled, declared);
        } else if (value instanceof Discharge discharge) {
            Binary txnId = discharge.getTxnId();
            if (txnId == null) {
                reply(id, settled, rejected(AmqpError.INVALID_FIELD, "discharge without txn-id"));
                return;
            }
            transactions.discharge(txnId, Boolean.TRUE.equals(discharge.getFail()),
                state -> reply(id, settled, state));
        } else {
            reply(id, settled, rejected(AmqpError.NOT_ALLOWED,
                "a coordinator takes declare and discharge (amqp-value bodies) only, not " + describe(value)));
        }
    }

    private static Rejected globalIdRefused() {
        return rejected(AmqpError.NOT_IMPLEMENTED, "global transactions (declare with a global-id) are not supported");
    }

    /**
     * True when the message has an {@code amqp-value} section (0x77) holding a {@code declare} (0x31) whose first
     * field, the global-id, is there and not null.
     */
    private static boolean declaresGlobalId(byte[] message) {
        ByteBuf buf = Unpooled.wrappedBuffer(message);
        int index = 0;
        try {
            while (index + 6 <= message.length) {
                if (smallDescriptor(message, index, 0x77) && smallDescriptor(message, index + 3, 0x31)) {
                    int list = index + 6;
                    int code = list < message.length ? message[list] & 0xff : -1;
                    // list8: size, count, fields; list32 the same in 4 bytes each; list0 has no fields
                    int first = code == 0xc0 ? list + 3 : code == 0xd0 ? list + 9 : -1;
                    if (first < 0 || first >= message.length) {
                        return false;
                    }
                    long count = code == 0xc0 ? buf.getUnsignedByte(list + 2) : buf.getUnsignedInt(list + 5);
                    return count > 0 && message[first] != 0x40; // 0x40: null
                }
                index = TypeReader.valueEnd(buf, index, message.length);
            }
        } catch (AmqpDecodeException e) {
            return false;
        }
        return false;
    }

    /** A described value's constructor with the small-ulong descriptor {@code code} at {@code index}. */
    private static boolean smallDescriptor(byte[] bytes, int index, int code) {
        return bytes[index] == 0x00 && bytes[index + 1] == 0x53 && (bytes[index + 2] & 0xff) == code;
    }

    private static String describe(Object value) {
        return value == null ? "a message without an amqp-value" : value.getClass().getSimpleName();
    }

    /** The value of the message's {@code amqp-value} section; null when it has none. */
    private static Object amqpValue(byte[] message) throws AmqpDecodeException {
        ByteBuf buf = Unpooled.wrappedBuffer(message);
        int index = 0;
        while (index < message.length) {
            int end = TypeReader.valueEnd(buf, index, message.length);
            Object section = ProtonCodec.current().decode(buf, index, end);
            if (section instanceof AmqpValue value) {
                return value.getValue();
            }
            index = end;
        }
        return null;
    }

    private void reply(long id, boolean settled, DeliveryState state) {
        if (!settled && !closed && session.state() == SessionState.MAPPED) {
            session.settleIncoming(id, state);
            session.flushLater();
        }
    }

    private static Rejected rejected(AmqpError condition, String description) {
        Rejected rejected = new Rejected();
        rejected.setError(new ErrorCondition(condition.symbol(), description));
        return rejected;
    }

    private void grantCredit() {
        if (!closed && credit.low()) {
            credit.grant();
        }
    }

    @Override
    public void close(boolean detachClosed) {
        if (closed) {
            return;
        }
        closed = true;
        session.transactions().coordinatorClosed(this);
    }
}
